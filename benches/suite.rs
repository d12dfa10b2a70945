//! Throughput of `mavsitl test`: the shipped SimpleFlight suite (10 cases ×
//! 3 seeds = 30 pairs, each a `fly` flown in the test's own process, on its
//! slot's thread, with its recording checked) at -j 1 and -j 2. Pairs per
//! minute = 30 × 60 / the time per iteration.
//! It runs the `mavsitl` program of the same profile: `cargo build
//! --release` first.

use std::process::Command;

use criterion::{criterion_group, criterion_main, Criterion};

/// The `mavsitl` program beside this benchmark's profile directory
/// (`target/release/deps/suite-…` → `target/release/mavsitl`).
fn mavsitl() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("own path");
    let bin = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(|dir| dir.join("mavsitl"))
        .expect("target directory");
    assert!(
        bin.exists(),
        "{}: build it first (cargo build --release)",
        bin.display()
    );
    bin
}

fn run_suite(jobs: &str, out: &std::path::Path) {
    let status = Command::new(mavsitl())
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .args(["test", "suites/simpleflight.toml", "-j", jobs, "--out"])
        .arg(out)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("run mavsitl test");
    assert!(status.success());
}

fn bench(c: &mut Criterion) {
    let out = std::env::temp_dir().join(format!("mavsitl-bench-suite-{}", std::process::id()));
    let mut g = c.benchmark_group("simpleflight_suite_30_pairs");
    g.sample_size(10);
    for jobs in ["1", "2"] {
        g.bench_function(format!("j{jobs}"), |b| b.iter(|| run_suite(jobs, &out)));
    }
    g.finish();
    let _ = std::fs::remove_dir_all(&out);
}

criterion_group!(benches, bench);
criterion_main!(benches);
