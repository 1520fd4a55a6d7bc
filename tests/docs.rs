//! README's Features section against the manifest and the dependency tree: the table names
//! every feature of the facade and nothing else; each row's crate count and C or assembly
//! build are what `cargo tree` finds; the lean set and the defaults stay within what DESIGN.md
//! §6 allows (150 and 200 crates) and build no C. The counts are distinct name and version
//! pairs of `cargo tree -p assetlib -e normal`, besides assetlib's own crates, over this
//! workspace's lockfile.

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// The crates whose build runs a C compiler or an assembler.
const NATIVE: [&str; 6] = [
    "cc",
    "nasm-rs",
    "ring",
    "libwebp-sys",
    "mozjpeg-sys",
    "aws-lc-sys",
];

/// The features of the lean set every row's count is measured against.
const LEAN: &str = "axum,sled";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The distinct crates (`name vX.Y.Z`) of the facade's normal dependency tree with
/// `features` (and no defaults unless `defaults`), besides assetlib's own.
fn tree(features: &str, defaults: bool) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(root())
        .args(["tree", "--quiet", "--locked", "-p", "assetlib"])
        .args(["-e", "normal", "--prefix", "none"]);
    if !defaults {
        command.arg("--no-default-features");
    }
    if !features.is_empty() {
        command.args(["--features", features]);
    }
    let out = command.output().expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree --features {features}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("cargo tree prints UTF-8")
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let (name, version) = (words.next()?, words.next()?);
            (!name.starts_with("assetlib")).then(|| format!("{name} {version}"))
        })
        .collect()
}

/// The native builds among `crates`.
fn native(crates: &BTreeSet<String>) -> BTreeSet<&'static str> {
    NATIVE
        .into_iter()
        .filter(|n| crates.iter().any(|c| c.split(' ').next() == Some(*n)))
        .collect()
}

/// A row of README's Features table.
#[derive(Debug)]
struct Row {
    /// The number in the "crates it adds to the lean set" column; `None` for a feature of
    /// the lean set itself.
    adds: Option<usize>,
    /// The crates named in the "C or assembly build" column.
    native: BTreeSet<String>,
}

/// README's Features table, by feature.
fn readme_rows() -> BTreeMap<String, Row> {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("read README.md");
    let section = readme
        .split("\n## Features\n")
        .nth(1)
        .expect("README has a Features section");
    let section = section.split("\n## ").next().unwrap_or(section);
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            assert_eq!(cells.len(), 5, "a Features row has five cells: {line}");
            let name = cells[0].trim_matches('`').to_owned();
            let adds = if cells[3] == "(in the lean set)" {
                None
            } else {
                Some(
                    cells[3]
                        .parse()
                        .unwrap_or_else(|_| panic!("a count: {line}")),
                )
            };
            let native = cells[4]
                .split('`')
                .skip(1)
                .step_by(2)
                .filter(|n| NATIVE.contains(n))
                .map(str::to_owned)
                .collect();
            assert_eq!(
                cells[4].starts_with("yes"),
                !BTreeSet::<String>::is_empty(&native) || name == "full",
                "the C column says yes exactly when it names a native crate: {line}"
            );
            (name, Row { adds, native })
        })
        .collect()
}

/// The facade's features, from `Cargo.toml`.
fn manifest_features() -> BTreeSet<String> {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).expect("read Cargo.toml");
    let section = manifest
        .split("\n[features]\n")
        .nth(1)
        .expect("Cargo.toml has features");
    let section = section.split("\n[").next().unwrap_or(section);
    section
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains(" = "))
        .filter_map(|l| l.split(" = ").next())
        .filter(|name| *name != "default")
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_features_table_names_every_feature() {
    let rows: BTreeSet<String> = readme_rows().into_keys().collect();
    assert_eq!(rows, manifest_features());
}

#[test]
fn each_feature_adds_the_crates_and_native_builds_the_readme_says() {
    let lean = tree(LEAN, false);
    for (feature, row) in readme_rows() {
        let with = tree(&format!("{LEAN},{feature}"), false);
        if let Some(adds) = row.adds {
            assert_eq!(
                with.len() - lean.len(),
                adds,
                "README says `{feature}` adds {adds} crates to the lean set"
            );
        }
        if feature != "full" {
            let found: BTreeSet<String> = native(&with).into_iter().map(str::to_owned).collect();
            assert_eq!(found, row.native, "native builds with `{feature}`");
        }
    }
}

#[test]
fn the_lean_set_and_the_defaults_are_small_and_build_no_c() {
    let lean = tree(LEAN, false);
    let defaults = tree("", true);
    assert!(lean.len() <= 150, "the lean set is {} crates", lean.len());
    assert!(
        defaults.len() <= 200,
        "the defaults are {} crates",
        defaults.len()
    );
    assert_eq!(
        native(&lean),
        BTreeSet::new(),
        "native builds in the lean set"
    );
    assert_eq!(
        native(&defaults),
        BTreeSet::new(),
        "native builds by default"
    );
    let readme = std::fs::read_to_string(root().join("README.md")).expect("read README.md");
    let full = tree("full", false);
    for (what, count) in [
        ("The lean set is", lean.len()),
        ("the defaults are", defaults.len()),
        ("`full` is", full.len()),
    ] {
        let said = format!("{what} {count}");
        assert!(
            readme.replace('\n', " ").contains(&said),
            "README should say \"{said}\""
        );
    }
    assert!(
        readme.contains(&format!(
            "That is {} crates besides assetlib's own",
            lean.len()
        )),
        "README's lean recipe states the lean set's count"
    );
}
