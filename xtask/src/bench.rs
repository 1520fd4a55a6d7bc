//! The benches' regression gate and comparisons: `instructions` (instruction counts against
//! the numbers committed in `benches/instructions.json`) and `bench` (criterion's saved
//! baselines).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use serde_json::{Value, json};

use crate::{cargo, run, stage};

/// Where the committed instruction counts live, relative to the workspace root.
pub(crate) const COUNTS: &str = "benches/instructions.json";

/// How far a count may rise over the committed one before the gate fails, in percent.
pub(crate) const LIMIT_PCT: u64 = 5;

/// Where `gungraun-runner` is installed, relative to the workspace root.
const RUNNER_ROOT: &str = "target/tools/gungraun";

/// `instructions [--update]`: runs the instruction-count bench under callgrind and compares
/// each count with the committed one (fails past +[`LIMIT_PCT`]%), or writes them.
pub(crate) fn instructions(root: &Path, args: &[String]) -> ExitCode {
    let update = match args {
        [] => false,
        [flag] if flag == "--update" => true,
        _ => {
            eprintln!("xtask: `instructions` takes only `--update`");
            return ExitCode::from(2);
        }
    };
    stage("instruction counts: valgrind and gungraun-runner");
    let runner = match provide_runner(root) {
        Ok(runner) => runner,
        Err(problem) => {
            eprintln!("xtask: {problem}");
            return ExitCode::FAILURE;
        }
    };
    stage("cargo bench --bench instructions (callgrind)");
    let counts = match measure(root, &runner) {
        Ok(counts) => counts,
        Err(problem) => {
            eprintln!("xtask: {problem}");
            return ExitCode::FAILURE;
        }
    };
    let path = root.join(COUNTS);
    if update {
        let file = json!({
            "about": "Instruction counts of benches/instructions.rs; `cargo xtask instructions` fails when one rises more than limit_pct over these. `--update` rewrites them.",
            "limit_pct": LIMIT_PCT,
            "rustc": tool_version("rustc", &["--version"]),
            "valgrind": tool_version("valgrind", &["--version"]),
            "counts": counts,
        });
        let text = serde_json::to_string_pretty(&file).unwrap_or_default() + "\n";
        if let Err(e) = fs::write(&path, text) {
            eprintln!("xtask: writing {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("{} benches written to {COUNTS}", counts.len());
        return ExitCode::SUCCESS;
    }
    let committed = match read_counts(&path) {
        Ok(committed) => committed,
        Err(problem) => {
            eprintln!("xtask: {problem}");
            return ExitCode::FAILURE;
        }
    };
    let verdict = compare(&committed, &counts, LIMIT_PCT);
    print!("{}", verdict.table);
    if verdict.failures.is_empty() {
        println!(
            "instruction counts: {} benches within +{LIMIT_PCT}% of {COUNTS}",
            counts.len()
        );
        ExitCode::SUCCESS
    } else {
        for failure in &verdict.failures {
            eprintln!("xtask: {failure}");
        }
        eprintln!(
            "xtask: instruction counts: {} of {} benches fail the gate; a slowdown meant to stay \
             is recorded with `cargo xtask instructions --update`",
            verdict.failures.len(),
            counts.len()
        );
        ExitCode::FAILURE
    }
}

/// The outcome of comparing a run's counts with the committed ones.
#[derive(Debug)]
pub(crate) struct Verdict {
    /// One line per bench: committed, now, change.
    pub(crate) table: String,
    /// What fails the gate: a rise past the limit, a bench not committed, a committed bench
    /// that no longer runs.
    pub(crate) failures: Vec<String>,
}

/// Compares `now` with `committed`: a count more than `limit_pct` over its committed value
/// fails, as does a bench on one side only.
pub(crate) fn compare(
    committed: &BTreeMap<String, u64>,
    now: &BTreeMap<String, u64>,
    limit_pct: u64,
) -> Verdict {
    let mut table = format!(
        "{:<52} {:>14} {:>14} {:>9}\n",
        "bench", "committed", "now", "change"
    );
    let mut failures = Vec::new();
    for (name, &count) in now {
        let Some(&was) = committed.get(name) else {
            table.push_str(&format!(
                "{name:<52} {:>14} {count:>14} {:>9}\n",
                "-", "new"
            ));
            failures.push(format!("{name}: not in {COUNTS} (record it with --update)"));
            continue;
        };
        let change = if was == 0 {
            0.0
        } else {
            (count as f64 / was as f64 - 1.0) * 100.0
        };
        table.push_str(&format!(
            "{name:<52} {was:>14} {count:>14} {change:>+8.2}%\n"
        ));
        // In whole numbers: a count exactly at the limit passes.
        if u128::from(count) * 100 > u128::from(was) * u128::from(100 + limit_pct) {
            failures.push(format!(
                "{name}: {count} instructions, {change:+.2}% over the committed {was} (limit +{limit_pct}%)"
            ));
        }
    }
    for name in committed.keys().filter(|name| !now.contains_key(*name)) {
        failures.push(format!("{name}: committed in {COUNTS} but no longer run"));
    }
    Verdict { table, failures }
}

/// The committed counts.
fn read_counts(path: &Path) -> Result<BTreeMap<String, u64>, String> {
    let text = fs::read_to_string(path)
        .map_err(|e| format!("{}: {e} (write it with --update)", path.display()))?;
    let file: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let counts = file["counts"]
        .as_object()
        .ok_or_else(|| format!("{}: no `counts` object", path.display()))?;
    counts
        .iter()
        .map(|(name, count)| {
            count
                .as_u64()
                .map(|count| (name.clone(), count))
                .ok_or_else(|| format!("{}: `{name}` is not a count", path.display()))
        })
        .collect()
}

/// Runs the bench with gungraun's JSON output and reads each bench's instruction count.
fn measure(root: &Path, runner: &Path) -> Result<BTreeMap<String, u64>, String> {
    let mut path = runner
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
        .into_os_string();
    if let Some(rest) = std::env::var_os("PATH") {
        path.push(":");
        path.push(rest);
    }
    let output = Command::new(cargo())
        .current_dir(root)
        .env("PATH", path)
        .args([
            "bench",
            "-p",
            "assetlib",
            "--bench",
            "instructions",
            "--features",
            "sled",
            "--",
            "--output-format=json",
        ])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cargo bench: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "cargo bench --bench instructions failed ({}):\n{stdout}",
            output.status
        ));
    }
    parse_counts(&stdout)
}

/// Each bench's instruction count from gungraun's JSON lines (summary schema v7): its
/// `group::function id` and the total `Ir` of its callgrind profile.
pub(crate) fn parse_counts(lines: &str) -> Result<BTreeMap<String, u64>, String> {
    let mut counts = BTreeMap::new();
    for line in lines.lines().filter(|l| l.trim_start().starts_with('{')) {
        let summary: Value =
            serde_json::from_str(line).map_err(|e| format!("gungraun output: {e}: {line}"))?;
        let name = format!(
            "{}::{} {}",
            summary["group"].as_str().unwrap_or("?"),
            summary["function_name"].as_str().unwrap_or("?"),
            summary["id"].as_str().unwrap_or("")
        );
        let ir = summary["profiles"]
            .as_array()
            .and_then(|profiles| profiles.iter().find(|p| p["tool"] == "Callgrind"))
            .and_then(|p| p["data"]["total"]["metrics"]["Ir"]["values"]["new"].as_u64())
            .ok_or_else(|| format!("gungraun output: no callgrind Ir for {name}"))?;
        counts.insert(name, ir);
    }
    if counts.is_empty() {
        return Err("gungraun printed no benchmark summary".to_owned());
    }
    Ok(counts)
}

/// valgrind (Debian's package, installed with apt-get when root) and `gungraun-runner` at
/// the version of the `gungraun` in Cargo.lock (installed with `cargo install --locked` into
/// `target/tools/gungraun`); the path of the runner.
fn provide_runner(root: &Path) -> Result<PathBuf, String> {
    if assetlib_testkit::tools::on_path("valgrind").is_none() {
        println!("installing valgrind (Debian package) ...");
        assetlib_testkit::install::apt_install(&["valgrind"])
            .map_err(|e| format!("valgrind is not installed: {}", e.how("valgrind")))?;
    }
    let version = locked_version(root, "gungraun")?;
    let runner = root.join(RUNNER_ROOT).join("bin/gungraun-runner");
    let installed = Command::new(&runner)
        .arg("--version")
        .output()
        .ok()
        .map(|out| String::from_utf8_lossy(&out.stdout).contains(&version))
        .unwrap_or(false);
    if !installed {
        println!("installing gungraun-runner {version} into {RUNNER_ROOT} ...");
        let mut install = Command::new(cargo());
        install.current_dir(root).args([
            "install",
            "--locked",
            "--quiet",
            "--version",
            &version,
            "--root",
            RUNNER_ROOT,
            "gungraun-runner",
        ]);
        run(&mut install).map_err(|_| format!("cargo install gungraun-runner {version} failed"))?;
    }
    println!("gungraun-runner {version}: {}", runner.display());
    Ok(runner)
}

/// The version of `package` in Cargo.lock.
fn locked_version(root: &Path, package: &str) -> Result<String, String> {
    let lock =
        fs::read_to_string(root.join("Cargo.lock")).map_err(|e| format!("Cargo.lock: {e}"))?;
    let wanted = format!("name = \"{package}\"");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == wanted
            && let Some(version) = lines
                .next()
                .and_then(|l| l.strip_prefix("version = \""))
                .and_then(|l| l.strip_suffix('"'))
        {
            return Ok(version.to_owned());
        }
    }
    Err(format!("Cargo.lock has no `{package}`"))
}

/// The first line a tool prints for `args`, or `unknown`.
fn tool_version(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .and_then(|out| {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .next()
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "unknown".to_owned())
}

/// The criterion benches `bench` saves and compares: the in-process ones that need no
/// server, tool or data beyond what they make.
const CRITERION_BENCHES: &[&str] = &["tree", "reads"];

/// `bench save [NAME]` / `bench compare [NAME]`: runs the criterion benches saving their
/// results as baseline NAME (default `main`), or runs them against it and prints each
/// bench's mean time then and now.
pub(crate) fn criterion(root: &Path, args: &[String]) -> ExitCode {
    let (save, name) = match args {
        [verb] => (verb.as_str(), "main"),
        [verb, name] => (verb.as_str(), name.as_str()),
        _ => ("", ""),
    };
    let flag = match save {
        "save" => "--save-baseline",
        "compare" => "--baseline",
        _ => {
            eprintln!("xtask: usage: cargo xtask bench save|compare [NAME]");
            return ExitCode::from(2);
        }
    };
    let mut words = vec!["bench", "-p", "assetlib", "--features", "sled"];
    for bench in CRITERION_BENCHES {
        words.extend(["--bench", bench]);
    }
    words.extend(["--", flag, name]);
    stage(&format!("cargo {}", words.join(" ")));
    let mut bench = Command::new(cargo());
    bench.current_dir(root).args(&words);
    if let Err(code) = run(&mut bench) {
        return code;
    }
    if save == "compare" {
        let rows = criterion_changes(&root.join("target/criterion"), name);
        println!(
            "\n{:<44} {:>12} {:>12} {:>9}",
            "bench", name, "now", "change"
        );
        for (bench, then, now) in &rows {
            println!(
                "{bench:<44} {:>12} {:>12} {:>+8.2}%",
                human_ns(*then),
                human_ns(*now),
                (now / then - 1.0) * 100.0
            );
        }
    }
    ExitCode::SUCCESS
}

/// Every bench under criterion's directory with both baseline `name` and a new run: its id
/// and mean times in ns (then, now).
fn criterion_changes(dir: &Path, name: &str) -> Vec<(String, f64, f64)> {
    let mut rows = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        let Ok(entries) = fs::read_dir(&at) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if !path.is_dir() {
                continue;
            }
            let mean = |run: &str| -> Option<f64> {
                let text = fs::read_to_string(path.join(run).join("estimates.json")).ok()?;
                serde_json::from_str::<Value>(&text).ok()?["mean"]["point_estimate"].as_f64()
            };
            match (mean(name), mean("new")) {
                (Some(then), Some(now)) if then > 0.0 => {
                    let id = path
                        .strip_prefix(dir)
                        .map(|p| p.display().to_string())
                        .unwrap_or_default();
                    rows.push((id, then, now));
                }
                _ => stack.push(path),
            }
        }
    }
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows
}

/// A time in ns in the unit that suits it.
fn human_ns(ns: f64) -> String {
    match ns {
        ns if ns >= 1e6 => format!("{:.2} ms", ns / 1e6),
        ns if ns >= 1e3 => format!("{:.2} µs", ns / 1e3),
        ns => format!("{ns:.1} ns"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
        pairs.iter().map(|(n, c)| ((*n).to_owned(), *c)).collect()
    }

    #[test]
    fn a_rise_past_the_limit_fails_and_one_within_passes() {
        let committed = counts(&[("a", 1000), ("b", 1000)]);
        let verdict = compare(&committed, &counts(&[("a", 1050), ("b", 990)]), 5);
        assert!(verdict.failures.is_empty(), "{:?}", verdict.failures);
        let verdict = compare(&committed, &counts(&[("a", 1051), ("b", 900)]), 5);
        assert_eq!(verdict.failures.len(), 1, "{:?}", verdict.failures);
        assert!(verdict.failures[0].starts_with("a: 1051"));
    }

    #[test]
    fn a_bench_on_one_side_only_fails() {
        let verdict = compare(&counts(&[("a", 10)]), &counts(&[("b", 10)]), 5);
        assert_eq!(verdict.failures.len(), 2, "{:?}", verdict.failures);
    }

    #[test]
    fn counts_are_read_from_gungraun_json_lines() {
        let line = r#"{"group":"g","function_name":"f","id":"x","profiles":[{"tool":"Callgrind","data":{"total":{"metrics":{"Ir":{"values":{"new":42,"old":40}}}}}}]}"#;
        let parsed = parse_counts(&format!("noise\n{line}\n")).expect("parsed");
        assert_eq!(parsed, counts(&[("g::f x", 42)]));
        assert!(parse_counts("nothing").is_err());
    }
}
