//! The shape of every crate of the workspace: no import circles among a crate's modules, and
//! no source file above the size a reader takes in at once.
//!
//! A module is a file or folder directly under a crate's `src/` (a `*_test.rs` or
//! `*_tests.rs` file belongs to the module it tests); it depends on another when its code
//! (comments aside) names `crate::other`. Inside every folder of every crate the sibling
//! modules are checked the same way (`super::sibling`, or the sibling's `crate::` path). A
//! circle is a set of modules each reachable from the others.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Longest source file in lines.
const MAX_LINES: usize = 600;

/// The `src/` of every crate of the workspace, core's first.
const CRATES: [&str; 8] = [
    "core",
    "adapters/axum",
    "adapters/warp",
    "storage/sled",
    "storage/postgres",
    ".",
    "tests/kit",
    "xtask",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The `src/` of each crate of [`CRATES`].
fn every_src() -> Vec<PathBuf> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace");
    CRATES
        .iter()
        .map(|c| workspace.join(c).join("src"))
        .collect()
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The identifiers named right after each `prefix` (`crate::` or `super::`), including each
/// top-level name of a group such as `crate::{a, b::c}`.
fn named_after(text: &str, prefix: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = BTreeSet::new();
    for (at, _) in text.match_indices(prefix) {
        let rest = &text[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0usize;
            let mut start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if c.is_whitespace() => {}
                    _ if start && depth == 0 => {
                        names.insert(ident(&group[i..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            names.insert(ident(rest));
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

/// The module a file under `root` belongs to: its first path component, without `.rs` and
/// without a `_test` suffix.
fn module_of(root: &Path, file: &Path) -> String {
    let first = file
        .strip_prefix(root)
        .expect("file under root")
        .components()
        .next()
        .expect("a component")
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    let name = first.strip_suffix(".rs").unwrap_or(&first);
    let name = name.strip_suffix("_tests").unwrap_or(name);
    name.strip_suffix("_test").unwrap_or(name).to_owned()
}

/// The dependency graph of the modules under `root`, by the names after `prefix`.
fn graph(root: &Path, files: &[PathBuf], prefix: &str) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(root, f)).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let from = module_of(root, file);
        let source = fs::read_to_string(file).expect("read source");
        // Comments (doc links included) name modules without importing them.
        let text: String = source
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let to: Vec<String> = named_after(&text, prefix)
            .into_iter()
            .filter(|n| modules.contains(n) && *n != from)
            .collect();
        edges.entry(from).or_default().extend(to);
    }
    edges
}

/// The circles of a graph: its strongly connected sets of more than one module.
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let reach = |start: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![start.clone()];
        while let Some(m) = todo.pop() {
            for next in edges.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&String, BTreeSet<String>> =
        edges.keys().map(|m| (m, reach(m))).collect();
    let mut found: Vec<BTreeSet<String>> = Vec::new();
    for (m, from_m) in &reachable {
        let circle: BTreeSet<String> = from_m
            .iter()
            .filter(|other| reachable.get(other).is_some_and(|r| r.contains(*m)))
            .cloned()
            .collect();
        if !circle.is_empty() && !found.contains(&circle) {
            found.push(circle);
        }
    }
    found
}

#[test]
fn the_module_graph_has_no_circles() {
    let root = src();
    let files: Vec<PathBuf> = rust_files(&root)
        .into_iter()
        .filter(|f| module_of(&root, f) != "lib")
        .collect();
    let crate_level = graph(&root, &files, "crate::");
    assert!(
        crate_level
            .get("service")
            .is_some_and(|d| d.contains("routes")),
        "the graph is read: {crate_level:?}"
    );
    for other in &every_src()[1..] {
        let files: Vec<PathBuf> = rust_files(other)
            .into_iter()
            .filter(|f| !matches!(module_of(other, f).as_str(), "lib" | "main"))
            .collect();
        let level = graph(other, &files, "crate::");
        assert_eq!(
            circles(&level),
            Vec::<BTreeSet<String>>::new(),
            "{}",
            other.display()
        );
    }
    assert_eq!(circles(&crate_level), Vec::<BTreeSet<String>>::new());

    let extract = root.join("extract");
    let siblings: Vec<PathBuf> = rust_files(&extract)
        .into_iter()
        .filter(|f| !matches!(module_of(&extract, f).as_str(), "mod" | "tests"))
        .collect();
    let extract_level = graph(&extract, &siblings, "super::");
    assert!(
        extract_level
            .get("sniff")
            .is_some_and(|d| d.contains("svg")),
        "the extract graph is read: {extract_level:?}"
    );
}

/// Every folder under each crate's `src/`, nested ones too.
fn folders(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            out.push(path.clone());
            out.extend(folders(&path));
        }
    }
    out.sort();
    out
}

/// Whether `file` holds tests only (`*_test.rs`, `*_tests.rs`, `tests.rs`, or a file under a
/// `tests` folder): a test may compare a module with its siblings, so its names are no
/// dependency of the module it tests.
fn is_test_file(file: &Path) -> bool {
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    stem == "tests"
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || file.components().any(|c| c.as_os_str() == "tests")
}

/// The graph of the modules in `folder` (a folder module under `src`): a file there names a
/// sibling as `crate::path::to::folder::sibling`, or with one `super::` more than the folders
/// it sits below `folder` (`super::sibling` from `folder/a.rs`, `super::super::sibling` from
/// `folder/a/b.rs`). Test files are left out ([`is_test_file`]).
fn folder_graph(src: &Path, folder: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files: Vec<PathBuf> = rust_files(folder)
        .into_iter()
        .filter(|f| {
            module_of(folder, f) != "mod" && !is_test_file(f.strip_prefix(src).unwrap_or(f))
        })
        .collect();
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(folder, f)).collect();
    let path: Vec<String> = folder
        .strip_prefix(src)
        .expect("folder under src")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let absolute = format!("crate::{}::", path.join("::"));
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let from = module_of(folder, file);
        let depth = file
            .strip_prefix(folder)
            .expect("file under folder")
            .components()
            .count();
        let source = fs::read_to_string(file).expect("read source");
        let text: String = source
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut named = named_after(&text, &"super::".repeat(depth));
        named.extend(named_after(&text, &absolute));
        // `super::super::x` also reads as `super::` followed by `super`: only names count.
        let to: Vec<String> = named
            .into_iter()
            .filter(|n| modules.contains(n) && *n != from)
            .collect();
        edges.entry(from).or_default().extend(to);
    }
    edges
}

#[test]
fn no_folder_of_any_crate_has_circles() {
    let mut checked = 0;
    let mut found = Vec::new();
    for src in every_src() {
        for folder in folders(&src) {
            let level = folder_graph(&src, &folder);
            checked += level.len();
            for circle in circles(&level) {
                found.push((folder.display().to_string(), circle));
            }
        }
    }
    let openapi = folder_graph(&src(), &src().join("openapi"));
    assert!(
        openapi.get("operations").is_some_and(|d| !d.is_empty()),
        "the openapi folder is read: {openapi:?}"
    );
    assert!(checked > 50, "only {checked} modules in folders were read");
    assert_eq!(found, Vec::new(), "circles among the modules of a folder");
}

#[test]
fn every_crate_of_the_workspace_is_checked() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace");
    let manifest = fs::read_to_string(workspace.join("Cargo.toml")).expect("read Cargo.toml");
    let members = manifest
        .lines()
        .find_map(|l| l.strip_prefix("members = "))
        .expect("the workspace's members");
    let members: BTreeSet<&str> = members
        .trim_matches(['[', ']'])
        .split(',')
        .map(|m| m.trim().trim_matches('"'))
        .chain(["."])
        .collect();
    assert_eq!(members, CRATES.into_iter().collect::<BTreeSet<_>>());
}

#[test]
fn circles_are_found() {
    let edges: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(m, to)| (m.to_owned(), to.into_iter().map(str::to_owned).collect()))
    .collect();
    let want: BTreeSet<String> = ["a", "b", "c"].into_iter().map(str::to_owned).collect();
    assert_eq!(circles(&edges), vec![want]);
    assert_eq!(
        named_after("use crate::{a, b::{c, d}, e};", "crate::"),
        ["a", "b", "e"].into_iter().map(str::to_owned).collect()
    );
}

#[test]
fn no_source_file_is_too_long() {
    let long: Vec<(String, usize)> = every_src()
        .iter()
        .flat_map(|root| rust_files(root))
        .map(|f| {
            let lines = fs::read_to_string(&f).expect("read source").lines().count();
            (f.display().to_string(), lines)
        })
        .filter(|(_, lines)| *lines > MAX_LINES)
        .collect();
    assert!(long.is_empty(), "files over {MAX_LINES} lines: {long:?}");
}
