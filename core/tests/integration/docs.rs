//! The docs against the code: the README's `Config` table names every field of `Config`.

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
