//! Providing every tool the tests need: found where it is, else installed (pinned PyPI packages
//! into venvs under `target/tools/`, Debian packages with `apt-get` when root), one line
//! printed per tool. `cargo xtask setup` and `cargo xtask test` run it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::install::{apt_install, npm_install, pip_install, venv_works};
use crate::tools::{How, Install, State, TOOLS, Tool};

/// The tools `setup` could neither find nor install: one message per tool, saying why and what
/// to do.
#[derive(Debug)]
pub struct NotProvided(pub Vec<String>);

/// Finds or installs every tool, prints one line per tool found, and returns where each one
/// is; or fails with a message per tool it could not provide.
pub fn setup(root: &Path) -> Result<Vec<(&'static Tool, PathBuf)>, NotProvided> {
    let mut states: Vec<State> = TOOLS.iter().map(|tool| tool.locate(root)).collect();
    let missing: Vec<&Tool> = TOOLS
        .iter()
        .zip(&states)
        .filter(|(_, state)| matches!(state, State::Missing))
        .map(|(tool, _)| *tool)
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
                    Install::PyPi { .. } | Install::Npm { .. } => {}
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
                ..
            },
        ) = (&*state, &tool.install)
            && let Err(why) = pip_install(root, venv, &format!("{package}=={version}"))
        {
            *state = State::Problem(format!("{} not installed: {why}", tool.label()));
        }
    }

    // npm packages, each in its directory, with the npm found or installed above.
    let npm = crate::tools::NPM.locate(root);
    for (tool, state) in TOOLS.iter().zip(&mut states) {
        if let (
            State::Missing,
            Install::Npm {
                dir,
                package,
                version,
            },
        ) = (&*state, &tool.install)
        {
            let outcome = match &npm {
                State::Found(npm, _) => {
                    npm_install(npm, root, dir, &format!("{package}@{version}"))
                }
                _ => Err("it needs npm, which is missing (see the npm line)".to_owned()),
            };
            if let Err(why) = outcome {
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
                found.push((*tool, path));
            }
            State::Problem(message) => problems.push(message),
            State::Missing => unreachable!("located again above"),
        }
    }
    if problems.is_empty() {
        Ok(found)
    } else {
        Err(NotProvided(problems))
    }
}
