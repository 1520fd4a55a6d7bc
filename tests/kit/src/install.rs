//! Installing what is missing: Debian packages with apt-get (as root), pinned PyPI packages in
//! venvs under the workspace.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::tools::{is_root, on_path};

/// Why Debian packages could not be installed.
#[derive(Debug)]
pub enum AptError {
    /// No `apt-get` on this system.
    NoAptGet,
    /// Not root.
    NotRoot,
    /// `apt-get` failed; its output was printed.
    Failed,
}

impl AptError {
    /// What to do instead, for the package `package`.
    pub fn how(&self, package: &str) -> String {
        match self {
            AptError::NoAptGet => format!(
                "install Debian's `{package}` package or its equivalent (there is no apt-get here)"
            ),
            AptError::NotRoot => format!("run `sudo apt-get install {package}`"),
            AptError::Failed => {
                format!("`apt-get install {package}` failed (its output is above); fix that")
            }
        }
    }
}

/// Whether `python3 -m venv` can make a venv with pip (Debian puts `ensurepip` in
/// `python3-venv`).
pub fn venv_works() -> bool {
    Command::new("python3")
        .args(["-c", "import ensurepip, venv"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Runs a command with this process's stdin, stdout and stderr; `Err` with its exit code
/// (`None` when it could not start or was killed by a signal) when it fails.
pub fn run(command: &mut Command) -> Result<(), Option<i32>> {
    match command.status() {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(status.code()),
        Err(error) => {
            eprintln!("xtask: cannot run {command:?}: {error}");
            Err(None)
        }
    }
}

/// Installs `requirement` (`NAME==VERSION`) into the venv `venv` (relative to `root`), making
/// the venv first if needed.
pub fn pip_install(root: &Path, venv: &str, requirement: &str) -> Result<(), String> {
    let dir = root.join(venv);
    let python = dir.join("bin").join("python");
    if !python.is_file() {
        println!("xtask: making the venv {venv} (python3 -m venv)");
        let existed = dir.exists();
        if run(Command::new("python3").arg("-m").arg("venv").arg(&dir)).is_err() {
            if !existed {
                let _ = fs::remove_dir_all(&dir);
            }
            return Err(format!(
                "`python3 -m venv {venv}` failed (its output is above)"
            ));
        }
    }
    println!("xtask: installing {requirement} into {venv} (pip)");
    run(Command::new(&python).args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        requirement,
    ]))
    .map_err(|_| {
        format!(
            "`{venv}/bin/pip install {requirement}` failed (its output is above); deleting \
             {venv} makes the next run start over"
        )
    })
}

/// Installs Debian packages: `apt-get update`, then one `apt-get install` of them all.
pub fn apt_install(packages: &[&str]) -> Result<(), AptError> {
    if on_path("apt-get").is_none() {
        return Err(AptError::NoAptGet);
    }
    if !is_root() {
        return Err(AptError::NotRoot);
    }
    println!(
        "xtask: installing Debian packages with apt-get: {}",
        packages.join(" ")
    );
    quiet(Command::new("apt-get").args(["update", "-qq"]))?;
    quiet(
        Command::new("apt-get")
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args(["install", "-y", "-qq"])
            .args(packages),
    )
}

/// Runs `command` with its stdout kept, printed only when it fails.
pub fn quiet(command: &mut Command) -> Result<(), AptError> {
    match command.stderr(Stdio::inherit()).output() {
        Ok(output) if output.status.success() => Ok(()),
        Ok(output) => {
            eprint!("{}", String::from_utf8_lossy(&output.stdout));
            eprintln!("xtask: {command:?} failed ({})", output.status);
            Err(AptError::Failed)
        }
        Err(error) => {
            eprintln!("xtask: cannot run {command:?}: {error}");
            Err(AptError::Failed)
        }
    }
}

/// Installs `spec` (`NAME@VERSION`) with `npm` into the directory `dir` (relative to `root`):
/// its `node_modules/`, exactly that version and its dependencies, no audit, no funding notes.
pub fn npm_install(npm: &Path, root: &Path, dir: &str, spec: &str) -> Result<(), String> {
    let prefix = root.join(dir);
    fs::create_dir_all(&prefix).map_err(|e| format!("cannot make {dir}: {e}"))?;
    println!("xtask: installing {spec} into {dir} (npm)");
    run(Command::new(npm)
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--save-exact",
            "--prefix",
        ])
        .arg(&prefix)
        .arg(spec))
    .map_err(|_| format!("`npm install {spec}` into {dir} failed (its output is above)"))
}
