//! The upload page (`examples/server/site/upload.html`) in headless Chromium: a real file chosen
//! in its file input (through the DevTools protocol, over a pipe), sent with the vendored
//! official tus client through a proxy that cuts the connection in the middle; the upload
//! resumes, the page shows the asset, and the asset's bytes are the file's.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use assetlib_testkit::tools::{CHROMIUM, TUS_JS_CLIENT};
use serde_json::{Value, json};

use crate::running::Running;
use crate::tus_kit::{CutProxy, big_video, download_digest};

/// The file the page uploads.
const SIZE: u64 = 48 << 20;

/// Headless Chromium driven over `--remote-debugging-pipe`: commands written to its fd 3,
/// answers and events read from its fd 4 (each message JSON ending in a NUL byte).
struct Browser {
    child: Child,
    commands: ChildStdin,
    answers: BufReader<ChildStdout>,
    next: u64,
}

impl Browser {
    fn start(profile: &Path) -> Browser {
        let chromium = CHROMIUM.require();
        // The shell hands our pipes to Chromium as fds 3 and 4, then becomes Chromium (`exec`),
        // so the child's PID is the browser's.
        let script = format!(
            "exec '{}' --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
             --no-first-run --remote-debugging-pipe --user-data-dir='{}' about:blank \
             3<&0 4>&1 0</dev/null 1>/dev/null",
            chromium.display(),
            profile.display()
        );
        let mut child = Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromium");
        let commands = child.stdin.take().expect("stdin");
        let answers = BufReader::new(child.stdout.take().expect("stdout"));
        Browser {
            child,
            commands,
            answers,
            next: 1,
        }
    }

    /// Sends `method` (to the page `session`, if any) and answers its `result`.
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.try_call(session, method, params)
            .unwrap_or_else(|error| panic!("{method}: {error}"))
    }

    /// Sends `method` and answers its `result`, or the error the browser answered.
    fn try_call(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, Value> {
        let id = self.next;
        self.next += 1;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        self.commands.write_all(&bytes).expect("write to chromium");
        loop {
            let mut raw = Vec::new();
            let n = self
                .answers
                .read_until(0, &mut raw)
                .expect("read from chromium");
            assert!(n > 0, "chromium closed its pipe");
            raw.pop();
            let answer: Value = serde_json::from_slice(&raw).expect("a JSON message");
            if answer["id"] == json!(id) {
                return match answer.get("error") {
                    Some(error) => Err(error.clone()),
                    None => Ok(answer["result"].clone()),
                };
            }
        }
    }

    /// The value of `expression` in the page.
    fn eval(&mut self, session: &str, expression: &str) -> Value {
        let result = self.call(
            Some(session),
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        result["result"]["value"].clone()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut rest = Vec::new();
        let _ = self.answers.read_to_end(&mut rest);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_upload_page_resumes_through_a_dropped_connection() {
    // The page's client is the pinned npm package's browser build, byte for byte.
    let vendored = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/server/site/vendor/tus.min.js"
    ))
    .expect("the vendored client");
    let official = TUS_JS_CLIENT
        .require()
        .join("node_modules/tus-js-client/dist/tus.min.js");
    assert!(
        std::fs::read(&official).expect("the npm package's build") == vendored,
        "examples/server/site/vendor/tus.min.js is not {}",
        official.display()
    );

    let dir = tempfile::tempdir().expect("dir");
    let (data, logs) = (dir.path().join("data"), dir.path().join("logs"));
    std::fs::create_dir_all(&logs).expect("logs");
    let server = Running::start("server", &data, &logs, &[]).await;
    let key = server
        .stdout()
        .split_whitespace()
        .find(|w| w.starts_with("alk_") && w.len() == 47)
        .expect("the printed key")
        .to_owned();
    let backend = server
        .base
        .trim_start_matches("http://")
        .parse()
        .expect("addr");
    // One cut, a third of the way through the file.
    let proxy = CutProxy::start(vec![backend], vec![SIZE / 3]).await;
    let file = dir.path().join("launch film.mp4");
    let digest = big_video(&file, SIZE, 0xf11e);

    let page = format!("{}/site/upload.html?key={key}", proxy.base);
    let file_path = file.to_str().expect("a UTF-8 path").to_owned();
    let profile = dir.path().join("profile");
    let state = tokio::task::spawn_blocking(move || {
        let mut browser = Browser::start(&profile);
        let target = browser.call(None, "Target.createTarget", json!({"url": page}));
        let session = browser.call(
            None,
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
        )["sessionId"]
            .as_str()
            .expect("a session")
            .to_owned();
        let deadline = Instant::now() + Duration::from_secs(120);
        // Until the upload page's own document is loaded, there is nothing to evaluate in (an
        // error) or only the blank document the target opened with: tried again.
        let ready = json!({
            "expression": "document.readyState === 'complete' \
                && location.pathname.endsWith('/upload.html') \
                && document.getElementById('file') !== null",
            "returnByValue": true,
        });
        while browser
            .try_call(Some(&session), "Runtime.evaluate", ready.clone())
            .map(|r| r["result"]["value"].clone())
            != Ok(json!(true))
        {
            assert!(Instant::now() < deadline, "the page never loaded");
            std::thread::sleep(Duration::from_millis(50));
        }
        // The file into the page's input, by the input's node in the document as it is now; a
        // node id the browser no longer knows (the document changed under it) is looked up
        // again.
        let set_file = |browser: &mut Browser| -> Result<(), Value> {
            let root =
                browser.try_call(Some(&session), "DOM.getDocument", json!({}))?["root"]["nodeId"]
                    .clone();
            let input = browser.try_call(
                Some(&session),
                "DOM.querySelector",
                json!({"nodeId": root, "selector": "#file"}),
            )?["nodeId"]
                .clone();
            browser
                .try_call(
                    Some(&session),
                    "DOM.setFileInputFiles",
                    json!({"files": [file_path.clone()], "nodeId": input}),
                )
                .map(drop)
        };
        while let Err(error) = set_file(&mut browser) {
            assert!(Instant::now() < deadline, "the file was never set: {error}");
            std::thread::sleep(Duration::from_millis(100));
        }
        browser.eval(
            &session,
            "document.getElementById('title').value = 'Launch film'",
        );
        browser.eval(&session, "document.getElementById('start').click()");
        let mut seen = Vec::new();
        loop {
            let now = browser.eval(
                &session,
                "JSON.stringify({state: document.getElementById('status').dataset.state, \
                 text: document.getElementById('status').textContent, \
                 retries: Number(document.getElementById('status').dataset.retries || 0), \
                 asset: (document.getElementById('asset') || {dataset: {}}).dataset.assetId \
                   || null, \
                 shown: (document.getElementById('asset') || {}).textContent || null})",
            );
            let now: Value = serde_json::from_str(now.as_str().expect("a string")).unwrap();
            let state = now["state"].as_str().unwrap_or("").to_owned();
            if seen.last() != Some(&state) {
                seen.push(state.clone());
            }
            if state == "done" || state == "error" {
                return (now, seen);
            }
            if Instant::now() > deadline {
                return (now, seen);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    })
    .await
    .expect("the browser task");
    let (last, seen) = state;
    assert_eq!(
        last["state"],
        json!("done"),
        "{last} after {seen:?}; the server's log: {}",
        server.stderr()
    );
    assert!(
        last["retries"].as_u64().is_some_and(|n| n >= 1),
        "it retried: {last}"
    );
    assert_eq!(proxy.cuts(), 1);
    assert!(
        last["shown"]
            .as_str()
            .is_some_and(|s| s.starts_with("Launch film — video")),
        "{last}"
    );
    let id = last["asset"].as_str().expect("the asset's id");
    let (got, size) = download_digest(
        &format!("{}/api/v1/assets/{id}/download", server.base),
        &key,
    )
    .await;
    assert_eq!(size, SIZE);
    assert!(got == digest, "the asset's bytes are the file's");
}
