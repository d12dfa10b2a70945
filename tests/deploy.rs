//! `docker/`: the Dockerfiles linted by hadolint, the compose file and the
//! GitHub Actions workflow checked against their published schemas
//! (check-jsonschema's vendored compose-spec and github-workflows), the
//! Kubernetes Job validated against Kubernetes' schema, strictly — all
//! offline, from the venv `tests/python/setup.sh` makes. Each validator is
//! also shown a broken file, so a check that passes everything fails here.
//! (No Docker daemon on this machine: nothing is built or run.)

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A tool of the test venv.
fn tool(name: &str) -> PathBuf {
    let bin = match std::env::var("MAVSITL_PYTHON") {
        Ok(p) => PathBuf::from(p)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
        Err(_) => root().join(".venv/bin"),
    };
    let p = bin.join(name);
    assert!(
        p.exists(),
        "{} is missing: run tests/python/setup.sh first",
        p.display()
    );
    p
}

/// Runs `tool args... file`; Ok when it accepts the file.
fn check(tool_name: &str, args: &[&str], file: &Path) -> Result<(), String> {
    let o = Command::new(tool(tool_name))
        .args(args)
        .arg(file)
        .output()
        .map_err(|e| e.to_string())?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ))
    }
}

fn broken(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tmp");
    let p = dir.path().join(name);
    std::fs::write(&p, text).expect("write");
    (dir, p)
}

#[test]
fn the_dockerfiles_pass_hadolint() {
    for f in ["Dockerfile", "px4.Dockerfile", "ardupilot.Dockerfile"] {
        check("hadolint", &[], &root().join("docker").join(f))
            .unwrap_or_else(|e| panic!("docker/{f}: {e}"));
    }
    let (_d, bad) = broken(
        "Dockerfile",
        "FROM ubuntu\nRUN cd /tmp && apt-get install gcc\n",
    );
    assert!(
        check("hadolint", &[], &bad).is_err(),
        "hadolint passed a bad Dockerfile"
    );
}

#[test]
fn what_the_dockerfiles_copy_exists() {
    let text = std::fs::read_to_string(root().join("docker/Dockerfile")).expect("Dockerfile");
    let sources: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("COPY ") && !l.contains("--from="))
        .flat_map(|l| {
            let words: Vec<&str> = l
                .split_whitespace()
                .filter(|w| !w.starts_with("--"))
                .collect();
            words
                .get(1..words.len().saturating_sub(1))
                .unwrap_or(&[])
                .to_vec()
        })
        .collect();
    assert!(sources.len() >= 8, "{sources:?}");
    for s in &sources {
        assert!(
            root().join(s).exists(),
            "docker/Dockerfile copies {s}, which is not in the repository"
        );
    }
    // Every directory the sources embed files from is in the build stage.
    let build: &str = text.split("FROM debian").next().unwrap_or("");
    // The workspace's layers build with the binary.
    assert!(
        build.contains("COPY crates ./crates"),
        "the build stage lacks crates/, the workspace's layers"
    );
    for dir in embedded_dirs(&root().join("src")) {
        assert!(
            build.contains(&format!("COPY {dir} ./{dir}")),
            "the build stage lacks {dir}/, which src/ embeds"
        );
    }
}

/// Top-level directories of the repository that `include_str!` /
/// `include_bytes!` in `dir` reach (`"../../missions/x.plan"` → missions).
fn embedded_dirs(dir: &Path) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for e in std::fs::read_dir(dir).expect("src").flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(embedded_dirs(&p));
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        for part in text.split("include_").skip(1) {
            let Some(arg) = part.split('"').nth(1) else {
                continue;
            };
            let Ok(rel) = p.parent().unwrap_or(dir).join(arg).canonicalize() else {
                continue;
            };
            if let Ok(inside) = rel.strip_prefix(root().canonicalize().expect("root")) {
                if let Some(top) = inside.components().next() {
                    let top = top.as_os_str().to_string_lossy().into_owned();
                    if top != "src" {
                        out.insert(top);
                    }
                }
            }
        }
    }
    out
}

#[test]
fn the_compose_file_and_the_workflow_match_their_schemas() {
    let compose = root().join("docker/compose.yaml");
    check(
        "check-jsonschema",
        &["--builtin-schema", "vendor.compose-spec"],
        &compose,
    )
    .unwrap_or_else(|e| panic!("compose.yaml: {e}"));
    let flow = root().join("docker/github-actions/suite-shards.yml");
    check(
        "check-jsonschema",
        &["--builtin-schema", "vendor.github-workflows"],
        &flow,
    )
    .unwrap_or_else(|e| panic!("suite-shards.yml: {e}"));
    let (_d, bad) = broken(
        "compose.yaml",
        "services:\n  px4:\n    image: x\n    portz: [\"1:1\"]\n",
    );
    assert!(
        check(
            "check-jsonschema",
            &["--builtin-schema", "vendor.compose-spec"],
            &bad
        )
        .is_err(),
        "a misspelt compose key passed"
    );
    let (_d2, bad) = broken("flow.yml", "on: push\njobs:\n  a:\n    steps: []\n");
    assert!(
        check(
            "check-jsonschema",
            &["--builtin-schema", "vendor.github-workflows"],
            &bad
        )
        .is_err(),
        "a job without runs-on passed"
    );
}

#[test]
fn the_kubernetes_job_is_valid_and_shards_as_the_workflow_does() {
    let job = root().join("docker/kubernetes/suite-job.yaml");
    check("kubernetes-validate", &["--strict", "--quiet"], &job)
        .unwrap_or_else(|e| panic!("suite-job.yaml: {e}"));
    let text = std::fs::read_to_string(&job).expect("job");
    // Indexed, N completions, and --shard INDEX+1/N with the same N.
    assert!(text.contains("completionMode: Indexed"));
    assert!(text.contains("completions: 4") && text.contains("$((JOB_COMPLETION_INDEX + 1))/4"));
    let flow = std::fs::read_to_string(root().join("docker/github-actions/suite-shards.yml"))
        .expect("workflow");
    assert!(flow.contains("shard: [1, 2, 3, 4]") && flow.contains("--shard ${{ matrix.shard }}/4"));
    let (_d, bad) = broken(
        "job.yaml",
        &text.replace(
            "completionMode: Indexed",
            "completionMode: Indexed\n  completionz: 4",
        ),
    );
    assert!(
        check("kubernetes-validate", &["--strict", "--quiet"], &bad).is_err(),
        "an unknown Job field passed"
    );
}
