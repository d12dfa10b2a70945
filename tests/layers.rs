//! The crate graph is the architecture: each layer's manifest names exactly
//! the mavsitl crates below it, and none above (an upward `use` then fails to
//! compile: the compile_fail examples in the crates' docs show it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers, each with the mavsitl crates it may depend on.
const GRAPH: &[(&str, &[&str])] = &[
    ("mavsitl-core", &[]),
    ("mavsitl-guidance", &[]),
    ("mavsitl-mavlink", &["mavsitl-core"]),
    ("mavsitl-sim", &["mavsitl-core"]),
    (
        "mavsitl-simpleflight",
        &["mavsitl-core", "mavsitl-guidance", "mavsitl-mavlink"],
    ),
    ("mavsitl-bridges", &["mavsitl-core", "mavsitl-mavlink"]),
    (
        "mavsitl-analysis",
        &["mavsitl-core", "mavsitl-mavlink", "mavsitl-sim"],
    ),
    (
        "mavsitl-suite",
        &[
            "mavsitl-core",
            "mavsitl-mavlink",
            "mavsitl-simpleflight",
            "mavsitl-analysis",
        ],
    ),
    (
        "mavsitl-run",
        &[
            "mavsitl-core",
            "mavsitl-mavlink",
            "mavsitl-sim",
            "mavsitl-simpleflight",
        ],
    ),
    (
        "mavsitl-airsim",
        &[
            "mavsitl-core",
            "mavsitl-mavlink",
            "mavsitl-sim",
            "mavsitl-simpleflight",
            "mavsitl-run",
        ],
    ),
    (
        "mavsitl",
        &[
            "mavsitl-core",
            "mavsitl-guidance",
            "mavsitl-mavlink",
            "mavsitl-sim",
            "mavsitl-simpleflight",
            "mavsitl-bridges",
            "mavsitl-analysis",
            "mavsitl-suite",
            "mavsitl-run",
            "mavsitl-airsim",
        ],
    ),
];

/// (package name, mavsitl dependencies, mavsitl dev-dependencies) of a manifest.
fn manifest(path: &Path) -> (String, BTreeSet<String>, BTreeSet<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    let doc: toml::Table = toml::from_str(&text).unwrap();
    let name = doc["package"]["name"].as_str().unwrap().to_string();
    let ours = |key: &str| -> BTreeSet<String> {
        doc.get(key)
            .and_then(|t| t.as_table())
            .map(|t| {
                t.keys()
                    .filter(|k| k.starts_with("mavsitl"))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    };
    (name, ours("dependencies"), ours("dev-dependencies"))
}

#[test]
fn every_crate_depends_only_on_the_layers_below_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = BTreeMap::new();
    let (name, deps, dev) = manifest(&root.join("Cargo.toml"));
    found.insert(name, (deps, dev));
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let (name, deps, dev) = manifest(&entry.unwrap().path().join("Cargo.toml"));
        found.insert(name, (deps, dev));
    }
    let want: BTreeMap<String, BTreeSet<String>> = GRAPH
        .iter()
        .map(|(c, d)| (c.to_string(), d.iter().map(|s| s.to_string()).collect()))
        .collect();
    assert_eq!(
        found.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "the workspace's crates"
    );
    for (name, (deps, dev)) in &found {
        assert_eq!(deps, &want[name], "{name}'s mavsitl dependencies");
        assert!(
            dev.is_empty(),
            "{name} reaches {dev:?} in its tests: a dev-dependency may not go round the layers"
        );
    }
    // Listed in order, every crate depends only on crates listed before it:
    // the graph has no cycle and no upward edge.
    for (i, (name, deps)) in GRAPH.iter().enumerate() {
        let below: Vec<&str> = GRAPH.iter().take(i).map(|(c, _)| *c).collect();
        for d in *deps {
            assert!(below.contains(d), "{name} → {d} points up");
        }
    }
}

#[test]
fn no_source_file_of_a_layer_names_a_crate_it_does_not_depend_on() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (name, deps) in GRAPH.iter().filter(|(c, _)| *c != "mavsitl") {
        let dir = root
            .join("crates")
            .join(name.trim_start_matches("mavsitl-"));
        let allowed: BTreeSet<String> = deps.iter().map(|d| d.replace('-', "_")).collect();
        let mut stack = vec![dir.join("src")];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                    continue;
                }
                let text = std::fs::read_to_string(&p).unwrap();
                for (other, _) in GRAPH.iter().filter(|(c, _)| c != name) {
                    let ident = other.replace('-', "_");
                    // Text in a compile_fail example is the one allowed mention.
                    let uses = text
                        .lines()
                        .filter(|l| !l.trim_start().starts_with("//!"))
                        .any(|l| l.contains(&format!("{ident}::")));
                    assert!(
                        !uses || allowed.contains(&ident),
                        "{} names {ident}, which {name} does not depend on",
                        p.display()
                    );
                }
            }
        }
    }
}
