//! `mavsitl test` run as CI runs it: the shipped SimpleFlight suite passes
//! with a JUnit report valid against the JUnit schema; an impossible bound
//! fails naming both numbers; shards partition the pairs; a hanging firmware
//! is stopped at its timeout and Ctrl-C leaves nothing running.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn mavsitl() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mavsitl"));
    c.current_dir(root())
        .env_remove("PX4_BUILD_DIR")
        .env_remove("ARDUPILOT_HOME");
    c
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn python() -> PathBuf {
    if let Ok(p) = std::env::var("MAVSITL_PYTHON") {
        return PathBuf::from(p);
    }
    let p = root().join(".venv/bin/python");
    assert!(
        p.exists(),
        "{} is missing: run tests/python/setup.sh first",
        p.display()
    );
    p
}

/// Validates `xml` against the JUnit schema; Err with the validator's words.
fn junit_valid(xml: &Path) -> Result<(), String> {
    let o = Command::new(python())
        .args([
            "-c",
            "import sys, xmlschema; xmlschema.XMLSchema(sys.argv[1]).validate(sys.argv[2])",
        ])
        .arg(root().join("tests/data/junit/junit.xsd"))
        .arg(xml)
        .output()
        .map_err(|e| e.to_string())?;
    if o.status.success() {
        Ok(())
    } else {
        Err(text(&o))
    }
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("json")).expect("parse")
}

#[test]
fn the_simpleflight_suite_passes_with_a_junit_report_valid_against_the_schema() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (junit, summary) = (
        tmp.path().join("junit.xml"),
        tmp.path().join("summary.json"),
    );
    let o = mavsitl()
        .args(["test", "suites/simpleflight.toml", "-j", "2", "--out"])
        .arg(tmp.path().join("out"))
        .arg("--junit")
        .arg(&junit)
        .arg("--json")
        .arg(&summary)
        .output()
        .expect("run");
    assert!(o.status.success(), "{}", text(&o));
    junit_valid(&junit).unwrap_or_else(|e| panic!("JUnit report invalid: {e}"));
    let doc = json(&summary);
    let pairs = doc["pairs"].as_u64().expect("pairs");
    assert_eq!(pairs, 30, "10 cases × 3 seeds");
    assert_eq!(doc["failed"], 0);
    let xml = std::fs::read_to_string(&junit).expect("xml");
    assert_eq!(xml.matches("<testcase ").count(), 30);
    assert!(xml.contains("classname=\"simpleflight.quad_square_gps_loss\""));
    // Passed pairs leave no recording behind.
    assert!(!tmp
        .path()
        .join("out/simpleflight/quad_square/seed-0")
        .exists());
}

#[test]
fn the_schema_check_rejects_a_malformed_report() {
    let tmp = tempfile::tempdir().expect("tmp");
    let bad = [
        r#"<testsuites><testsuite name="s" tests="1"><testcase classname="c"/></testsuite></testsuites>"#,
        r#"<testsuites><testsuite name="s" tests="1"><testcase name="t" time="-1"/></testsuite></testsuites>"#,
        r#"<testsuites><testsuite name="s" tests="1"><testcase name="t" verdict="ok"/></testsuite></testsuites>"#,
        r#"<testsuites><testsuite tests="1"/></testsuites>"#,
    ];
    for (i, x) in bad.iter().enumerate() {
        let p = tmp.path().join(format!("bad{i}.xml"));
        std::fs::write(&p, x).expect("write");
        assert!(junit_valid(&p).is_err(), "accepted: {x}");
    }
}

fn write_suite(dir: &Path, body: &str) -> PathBuf {
    let p = dir.join("mine.toml");
    std::fs::write(
        &p,
        body.replace("MISSIONS", &root().join("missions").display().to_string()),
    )
    .expect("suite");
    p
}

#[test]
fn an_impossible_bound_fails_and_names_both_numbers() {
    let tmp = tempfile::tempdir().expect("tmp");
    let suite = write_suite(
        tmp.path(),
        "[[case]]\nname = \"tight\"\nmission = \"MISSIONS/quad_square.plan\"\n\
         [case.expect]\nmission_completed = true\nmax_cross_track_rms_m = 0.01\n",
    );
    let junit = tmp.path().join("junit.xml");
    let out = tmp.path().join("out");
    let o = mavsitl()
        .arg("test")
        .arg(&suite)
        .arg("--out")
        .arg(&out)
        .arg("--junit")
        .arg(&junit)
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let said = text(&o);
    assert!(said.contains("FAIL mine/tight seed 0"), "{said}");
    assert!(
        said.contains("max_cross_track_rms_m: expected ≤ 0.01 m, measured 0."),
        "{said}"
    );
    junit_valid(&junit).unwrap_or_else(|e| panic!("{e}"));
    let xml = std::fs::read_to_string(&junit).expect("xml");
    assert!(xml.contains("failures=\"1\""), "{xml}");
    assert!(
        xml.contains("<failure message=\"max_cross_track_rms_m: expected ≤ 0.01 m"),
        "{xml}"
    );
    assert!(
        xml.contains("<system-out>mavsitl fly"),
        "the run's log tail"
    );
    // The failed pair's recording stays, to replay and plot.
    let rec = out.join("mine/tight/seed-0");
    for f in [
        "ground_truth.csv",
        "mission_events.csv",
        "statustext.csv",
        "meta.json",
        "run.log",
    ] {
        assert!(rec.join(f).is_file(), "{f}");
    }
}

#[test]
fn shards_run_every_pair_exactly_once() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut seen: Vec<(String, u64)> = Vec::new();
    for i in 1..=3 {
        let summary = tmp.path().join(format!("s{i}.json"));
        let o = mavsitl()
            .args([
                "test",
                "suites/simpleflight.toml",
                "--filter",
                "quad_square",
                "-j",
                "2",
            ])
            .args(["--shard", &format!("{i}/3"), "--out"])
            .arg(tmp.path().join("out"))
            .arg("--json")
            .arg(&summary)
            .output()
            .expect("run");
        assert!(o.status.success(), "{}", text(&o));
        let doc = json(&summary);
        let results = doc["results"].as_array().expect("results");
        assert_eq!(results.len(), 4, "12 pairs in 3 shards of 4");
        for r in results {
            seen.push((
                r["case"].as_str().expect("case").to_string(),
                r["seed"].as_u64().expect("seed"),
            ));
        }
    }
    let distinct: BTreeSet<_> = seen.iter().cloned().collect();
    assert_eq!(distinct.len(), seen.len(), "a pair ran twice: {seen:?}");
    assert_eq!(distinct.len(), 12, "4 cases × 3 seeds: {distinct:?}");
}

/// Processes whose command line contains `needle` (from /proc).
fn processes_with(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmd).contains(needle) {
            out.push(pid);
        }
    }
    out
}

/// A suite whose PX4 (the stand-in) hangs one second into the flight: alive,
/// answering nothing (run with `STANDIN_CUE=hang_after_s=1`).
fn hanging_px4_suite(dir: &Path, timeout_s: u32) -> PathBuf {
    write_suite(
        dir,
        &format!(
            "[[case]]\nname = \"hangs\"\ncontroller = \"px4\"\nmission = \"MISSIONS/quad_square.plan\"\n\
             timeout_s = {timeout_s}\n[case.expect]\nmission_completed = true\n"
        ),
    )
}

#[test]
fn a_hanging_firmware_is_stopped_at_its_timeout_and_reported() {
    let tmp = tempfile::tempdir().expect("tmp");
    let suite = hanging_px4_suite(tmp.path(), 4);
    let junit = tmp.path().join("junit.xml");
    let start = Instant::now();
    let o = mavsitl()
        .arg("test")
        .arg(&suite)
        .arg("--px4-build")
        .arg(root().join("tests/standins/px4_sitl_default"))
        .arg("--out")
        .arg(tmp.path().join("out"))
        .arg("--junit")
        .arg(&junit)
        .args(["--instance-base", "11"])
        .env("STANDIN_CUE", "hang_after_s=1")
        .output()
        .expect("run");
    let took = start.elapsed();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("stopped at its timeout of 4 s"),
        "{}",
        text(&o)
    );
    assert!(took < Duration::from_secs(15), "took {took:?}");
    junit_valid(&junit).unwrap_or_else(|e| panic!("{e}"));
    let out = tmp.path().join("out");
    assert!(
        processes_with(&out.display().to_string()).is_empty(),
        "a child is left"
    );
}

#[test]
fn ctrl_c_stops_the_run_and_leaves_no_child_behind() {
    let tmp = tempfile::tempdir().expect("tmp");
    let suite = hanging_px4_suite(tmp.path(), 300);
    let out = tmp.path().join("out");
    let mut child = mavsitl()
        .arg("test")
        .arg(&suite)
        .arg("--px4-build")
        .arg(root().join("tests/standins/px4_sitl_default"))
        .arg("--out")
        .arg(&out)
        // Far from the slots of the test above: they run at the same time.
        .args(["--instance-base", "31"])
        .env("STANDIN_CUE", "hang_after_s=1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    // Until the flight and its firmware are up.
    let up = Instant::now();
    while processes_with(&out.display().to_string()).len() < 2
        && up.elapsed() < Duration::from_secs(20)
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        processes_with(&out.display().to_string()).len() >= 2,
        "the flight never started: {:?}; its log: {}",
        child.try_wait(),
        std::fs::read_to_string(out.join("mine/hangs/seed-0/run.log")).unwrap_or_default()
    );
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "still running after Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(130));
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        processes_with(&out.display().to_string()).is_empty(),
        "a child is left"
    );
}

#[test]
fn a_typo_in_a_suite_is_a_clear_error() {
    let tmp = tempfile::tempdir().expect("tmp");
    let suite = write_suite(
        tmp.path(),
        "[[case]]\nname = \"a\"\nmission = \"MISSIONS/quad_square.plan\"\n[case.expect]\nmax_crosstrack_m = 2\n",
    );
    let o = mavsitl().arg("test").arg(&suite).output().expect("run");
    assert_eq!(o.status.code(), Some(2));
    let said = text(&o);
    assert!(
        said.contains("mine.toml:5: unknown field `max_crosstrack_m`"),
        "{said}"
    );
    let o = mavsitl()
        .args(["test", "suites/simpleflight.toml", "--shard", "4/3"])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("not a shard I/N"), "{}", text(&o));
}

#[test]
fn the_firmware_suites_load_and_ask_for_their_firmware() {
    for (suite, flag) in [
        ("suites/px4.toml", "--px4-build"),
        ("suites/px4_regression.toml", "--px4-build"),
        ("suites/ardupilot.toml", "--ardupilot"),
        ("suites/ardupilot_regression.toml", "--ardupilot"),
    ] {
        let o = mavsitl().args(["test", suite]).output().expect("run");
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(flag), "{}", text(&o));
    }
}
