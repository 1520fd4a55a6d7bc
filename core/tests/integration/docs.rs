//! The docs against the code: the README's `Config` table names every field of `Config`, and
//! the crate docs' table of public modules names every public module of core.

use std::collections::BTreeSet;
use std::path::Path;

/// The fields of `pub struct Config` in `core/src/config.rs`.
fn config_fields() -> BTreeSet<String> {
    let source =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/config.rs"))
            .expect("read config.rs");
    let body = source
        .split_once("pub struct Config {")
        .and_then(|(_, rest)| rest.split_once("\n}"))
        .map(|(body, _)| body)
        .expect("the Config struct");
    body.lines()
        .filter_map(|l| l.trim().strip_prefix("pub "))
        .filter_map(|l| l.split_once(':'))
        .map(|(name, _)| name.trim().to_owned())
        .collect()
}

/// The first column of the `Config` table: the first table under the README's
/// `## Configuration`, whose header is `| field | default | meaning |`.
fn readme_fields() -> BTreeSet<String> {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let text = std::fs::read_to_string(readme).expect("read README.md");
    let table = text
        .split_once("\n## Configuration\n")
        .and_then(|(_, rest)| rest.split_once("| field | default | meaning |\n"))
        .map(|(_, rest)| rest)
        .expect("the Config table");
    table
        .lines()
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once('`'))
        .map(|(name, _)| name.to_owned())
        .collect()
}

#[test]
fn the_readme_config_table_names_every_field() {
    let fields = config_fields();
    assert!(
        fields.contains("max_json_body"),
        "the struct is read: {fields:?}"
    );
    let table = readme_fields();
    let missing: Vec<&String> = fields.difference(&table).collect();
    assert!(
        missing.is_empty(),
        "README's Config table lacks {missing:?}"
    );
    let unknown: Vec<&String> = table.difference(&fields).collect();
    assert!(
        unknown.is_empty(),
        "README's Config table names no field {unknown:?}"
    );
}

/// The `pub mod` names of core's `lib.rs`, and the first column of its docs' module table
/// (the rows after `| module | what it does |`).
fn public_modules() -> (BTreeSet<String>, BTreeSet<String>) {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
        .expect("read lib.rs");
    let declared = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|l| l.trim_end_matches(';').to_owned())
        .collect();
    let table = lib
        .split_once("//! | module | what it does |")
        .map(|(_, rest)| rest)
        .expect("the module table");
    let listed = table
        .lines()
        .skip(2)
        .map_while(|l| l.strip_prefix("//! | "))
        .filter_map(|row| row.split(" | ").next())
        .map(|cell| cell.trim_matches(['[', ']', '`']).to_owned())
        .collect();
    (declared, listed)
}

#[test]
fn the_crate_docs_list_every_public_module() {
    let (declared, listed) = public_modules();
    assert!(
        declared.contains("extract"),
        "the declarations are read: {declared:?}"
    );
    assert_eq!(listed, declared);
}
