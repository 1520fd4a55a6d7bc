//! What both servers do with their processes: free ports, random names, signals by PID, and
//! the watchdog that stops a server once the test process is gone.

use std::net::TcpListener;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
#[cfg(feature = "postgres")]
use std::time::{Duration, Instant};

/// `n` ports that were free on 127.0.0.1 a moment ago, all different.
///
/// # Panics
/// When the system has no free port.
pub(crate) fn free_ports(n: usize) -> Vec<u16> {
    // Every listener is held until all are found, so no port is handed out twice.
    let listeners: Vec<TcpListener> = (0..n)
        .map(|_| {
            TcpListener::bind("127.0.0.1:0")
                .unwrap_or_else(|e| panic!("cannot find a free port on 127.0.0.1: {e}"))
        })
        .collect();
    listeners
        .iter()
        .map(|l| {
            l.local_addr()
                .map(|a| a.port())
                .unwrap_or_else(|e| panic!("cannot read a port: {e}"))
        })
        .collect()
}

/// `bytes` random bytes, in hex.
#[cfg(feature = "s3")]
pub(crate) fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).unwrap_or_else(|e| panic!("no randomness: {e}"));
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

/// Sends `sig` (`INT`, `KILL`, `0` to probe) to `pid`; whether it was delivered.
pub(crate) fn signal(pid: u32, sig: &str) -> bool {
    Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Stops process `pid` with `first` (a fast shutdown for PostgreSQL's `INT`), and kills it if
/// it is still there after `grace`; returns once it is gone.
#[cfg(feature = "postgres")]
pub(crate) fn stop_pid(pid: u32, first: &str, grace: Duration) {
    if !signal(pid, first) {
        return;
    }
    let deadline = Instant::now() + grace;
    while signal(pid, "0") {
        if Instant::now() > deadline {
            signal(pid, "KILL");
            std::thread::sleep(Duration::from_millis(100));
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What the watchdog of one server does once the test process is gone.
pub(crate) struct Watch<'a> {
    /// Its name in the process list (`assetlib-pg-watchdog`, ...).
    pub(crate) name: &'a str,
    /// The server's PID.
    pub(crate) server: u32,
    /// A path among the server's arguments: the PID is only signalled while it still runs
    /// that server, never another process that got its number.
    pub(crate) marker: &'a Path,
    /// The signal that stops it (`INT`, `KILL`); `KILL` follows 10 s later if need be.
    pub(crate) signal: &'a str,
    /// What to remove once it is stopped: its directory, its sockets.
    pub(crate) remove: &'a [&'a Path],
}

impl Watch<'_> {
    /// Starts the watchdog: a shell, in a process group of its own (so a Ctrl-C to the tests
    /// does not stop it before it cleans up), that waits for this process to exit, then stops
    /// the server and removes its files.
    ///
    /// # Panics
    /// When it cannot start; the server is killed first.
    pub(crate) fn spawn(&self) -> Child {
        const SCRIPT: &str = r#"
            parent=$1; server=$2; marker=$3; sig=$4; shift 4
            while kill -0 "$parent" 2>/dev/null; do sleep 0.2; done
            if tr '\0' '\n' < "/proc/$server/cmdline" 2>/dev/null | grep -q -F -e "$marker"; then
                kill "-$sig" "$server" 2>/dev/null
                i=0
                while kill -0 "$server" 2>/dev/null && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
                kill -KILL "$server" 2>/dev/null
            fi
            for path in "$@"; do [ -n "$path" ] && rm -rf "$path"; done
        "#;
        let child = Command::new("sh")
            .arg("-c")
            .arg(SCRIPT)
            .arg(self.name)
            .arg(std::process::id().to_string())
            .arg(self.server.to_string())
            .arg(self.marker)
            .arg(self.signal)
            .args(self.remove)
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        match child {
            Ok(c) => c,
            Err(e) => {
                signal(self.server, "KILL");
                panic!("cannot start {}: {e}", self.name);
            }
        }
    }
}

/// Runs `future` to its end on a runtime of its own, in a thread of its own (the caller may be
/// inside another runtime, which cannot block on a future, or in `Drop`).
pub(crate) fn block_on<F>(future: F) -> Result<F::Output, String>
where
    F: std::future::Future + Send,
    F::Output: Send,
{
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map(|rt| rt.block_on(future))
                    .map_err(|e| format!("cannot start a runtime: {e}"))
            })
            .join()
            .unwrap_or_else(|_| Err("the thread panicked".to_owned()))
    })
}
