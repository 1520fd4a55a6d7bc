//! A Python client generated from the document by openapi-python-client (PyPI, pinned, in its
//! venv under `target/tools/`: `cargo xtask setup` installs it), then compiled and imported
//! by `openapi_client.py`, which says what it checks: every operation has its module (the three
//! tus ones too), error answers share one class per status, and the document's types reach
//! the client. The generator must not warn: a warning is a part of the API it left out.
//!
//! openapi-python-client reads only `application/octet-stream` as bytes; the configuration
//! maps the media types of downloads, image variants, the zip and tus bodies onto it, as a
//! user of the client would, so that those answers and bodies are generated too.

use std::path::Path;
use std::process::{Command, Output};

use assetlib_testkit::tools::OPENAPI_PYTHON_CLIENT;

/// The generator's configuration: no post-hooks (ruff formats, which the test does not need),
/// and the raw media types read as bytes.
const CONFIG: &str = r#"{
  "post_hooks": [],
  "content_type_overrides": {
    "*/*": "application/octet-stream",
    "image/jpeg": "application/octet-stream",
    "image/png": "application/octet-stream",
    "image/webp": "application/octet-stream",
    "application/zip": "application/octet-stream",
    "application/offset+octet-stream": "application/octet-stream"
  }
}"#;

/// The package the client is generated as.
const PACKAGE: &str = "assetlib_client";

/// What a command printed, both streams.
fn printed(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn a_generated_python_client_has_every_operation_and_imports() {
    let generator = OPENAPI_PYTHON_CLIENT.require();
    let python = generator.with_file_name("python");
    let work = tempfile::tempdir().expect("a temporary directory");
    let document = work.path().join("openapi.json");
    std::fs::write(&document, assetlib_core::openapi::to_json()).expect("write the document");
    let config = work.path().join("config.json");
    std::fs::write(&config, CONFIG).expect("write the configuration");

    let generated = Command::new(&generator)
        .current_dir(work.path())
        .args(["generate", "--meta", "none", "--path"])
        .arg(&document)
        .arg("--config")
        .arg(&config)
        .arg("--output-path")
        .arg(work.path().join(PACKAGE))
        .output()
        .expect("run openapi-python-client");
    let said = printed(&generated);
    assert!(
        generated.status.success(),
        "openapi-python-client failed:\n{said}"
    );
    assert!(
        !said.to_ascii_lowercase().contains("warning"),
        "openapi-python-client left parts of the API out:\n{said}"
    );

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/openapi_client.py");
    let checked = Command::new(&python)
        .arg(&script)
        .arg(work.path())
        .arg(PACKAGE)
        .arg(&document)
        .output()
        .expect("run the client's checks");
    assert!(
        checked.status.success(),
        "the generated client:\n{}",
        printed(&checked)
    );
}
