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
    ("mavsitl-render", &[]),
    ("mavsitl-sim", &["mavsitl-core", "mavsitl-render"]),
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
            "mavsitl-analysis",
        ],
    ),
    (
        "mavsitl-firmware",
        &[
            "mavsitl-core",
            "mavsitl-mavlink",
            "mavsitl-sim",
            "mavsitl-bridges",
            "mavsitl-analysis",
            "mavsitl-run",
        ],
    ),
    (
        "mavsitl-batch",
        &[
            "mavsitl-core",
            "mavsitl-mavlink",
            "mavsitl-analysis",
            "mavsitl-suite",
            "mavsitl-firmware",
        ],
    ),
    (
        "mavsitl-airsim",
        &[
            "mavsitl-core",
            "mavsitl-mavlink",
            "mavsitl-render",
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
            "mavsitl-render",
            "mavsitl-sim",
            "mavsitl-simpleflight",
            "mavsitl-bridges",
            "mavsitl-analysis",
            "mavsitl-suite",
            "mavsitl-run",
            "mavsitl-airsim",
            "mavsitl-firmware",
            "mavsitl-batch",
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

/// The modules directly in `dir`: each name with its files (`x.rs` and what
/// lies under `x/`, or `x/mod.rs` and the rest of `x/`). A module's own
/// submodules are its parts, not its neighbours.
fn modules_in(dir: &Path) -> BTreeMap<String, Vec<std::path::PathBuf>> {
    fn rs_under(d: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                rs_under(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut mods = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        let mut files = Vec::new();
        if p.is_dir() {
            if !p.join("mod.rs").exists() {
                continue;
            }
            rs_under(&p, &mut files);
        } else if p.extension().is_some_and(|x| x == "rs")
            && !["lib", "main", "mod"].contains(&name.as_str())
        {
            files.push(p.clone());
            rs_under(&dir.join(&name), &mut files);
        } else {
            continue;
        }
        mods.entry(name).or_insert_with(Vec::new).extend(files);
    }
    mods
}

/// The module names a text's code (comments left out) reaches through
/// `prefix` (`super::` or `crate::`): `prefix x::…` and `prefix {x, y::…}`.
fn reached(text: &str, prefix: &str) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices(prefix) {
        let before = code[..i].chars().last();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[i + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(group.split(',').map(|s| ident(s.trim())));
        } else {
            out.insert(ident(rest));
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// Which sibling modules of `dir` each one reaches: through `super::` from
/// its top file, and through `crate::` when `dir` is the crate's root.
fn sibling_graph(dir: &Path, crate_root: bool) -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules_in(dir);
    let mut graph = BTreeMap::new();
    for (name, files) in &mods {
        let mut to = BTreeSet::new();
        for f in files {
            let text = std::fs::read_to_string(f).unwrap();
            let top = f.parent() == Some(dir)
                || (f.file_name().is_some_and(|n| n == "mod.rs")
                    && f.parent().and_then(Path::parent) == Some(dir));
            if top {
                to.extend(reached(&text, "super::"));
            }
            if crate_root {
                to.extend(reached(&text, "crate::"));
            }
        }
        to.retain(|m| m != name && mods.contains_key(m));
        graph.insert(name.clone(), to);
    }
    graph
}

/// A cycle of `graph`, as the path round it, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == n) {
            let mut cycle = path[i..].to_vec();
            cycle.push(n.to_string());
            return Some(cycle);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for m in graph.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

/// Every directory of modules under `src` with whether it is the crate root.
fn module_dirs(src: &Path) -> Vec<(std::path::PathBuf, bool)> {
    let mut out = vec![(src.to_path_buf(), true)];
    let mut i = 0;
    while let Some((d, _)) = out.get(i).cloned() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.path().is_dir() {
                out.push((e.path(), false));
            }
        }
        i += 1;
    }
    out
}

/// No module reaches, through its `use` lines and paths, a sibling that
/// reaches it back — in any crate, and in the binary's CLI. (A module's
/// submodules are its parts and may use it.)
#[test]
fn no_module_cycle_in_any_crate_or_the_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut srcs = vec![root.join("src")];
    for e in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        srcs.push(e.path().join("src"));
    }
    let mut dirs = 0;
    for src in srcs {
        for (dir, crate_root) in module_dirs(&src) {
            dirs += 1;
            if let Some(c) = find_cycle(&sibling_graph(&dir, crate_root)) {
                panic!("{}: modules in a cycle: {}", dir.display(), c.join(" → "));
            }
        }
    }
    assert!(dirs > 20, "only {dirs} module directories found");
}

/// The cycle check sees a cycle through `use super::` and through a path,
/// and none where the uses point one way.
#[test]
fn the_cycle_check_finds_a_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let write = |n: &str, t: &str| std::fs::write(dir.path().join(n), t).unwrap();
    write("mod.rs", "mod a; mod b; mod c;");
    write(
        "a.rs",
        "use super::b::B;\n// super::c::C in a comment is no use\n",
    );
    write("b.rs", "use super::{c::C, d};\n");
    write("c.rs", "pub fn f() { let _ = super::d::D; }");
    assert_eq!(find_cycle(&sibling_graph(dir.path(), false)), None);
    write("c.rs", "pub fn f() { let _ = super::a::A; }");
    assert_eq!(
        find_cycle(&sibling_graph(dir.path(), false)),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}
