//! `mavsitl compare` and `mavsitl plot`, run as a user runs them: the
//! comparison finds a deliberately worse tuning worse on the metric the tuning
//! affects, writes its files, and its report renders in a real browser.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn mavsitl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mavsitl"))
        .args(args)
        .env_remove("PX4_BUILD_DIR")
        .env_remove("ARDUPILOT_HOME")
        .output()
        .expect("run mavsitl")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Median of `metric` for `controller` from metrics.json.
fn median(doc: &serde_json::Value, controller: &str, metric: &str) -> f64 {
    doc["summary"][controller][metric]["median"]
        .as_f64()
        .unwrap_or_else(|| panic!("{controller}.{metric} in {doc}"))
}

/// Runs the comparison once for the tests that read it.
fn compared() -> &'static (tempfile::TempDir, PathBuf) {
    static DONE: std::sync::OnceLock<(tempfile::TempDir, PathBuf)> = std::sync::OnceLock::new();
    DONE.get_or_init(|| {
        let tmp = tempfile::tempdir().expect("tmp");
        // Softer position and velocity gains: the vehicle lags its target
        // through the corners and strays further from the legs.
        let worse = tmp.path().join("soft.parm");
        std::fs::write(&worse, "MPC_XY_P 0.2\nMPC_XY_VEL_P_ACC 0.6\n").expect("parm");
        let out = tmp.path().join("cmp");
        let with = format!("simpleflight,simpleflight:{}", worse.display());
        let o = mavsitl(&[
            "compare",
            "missions/quad_square.plan",
            "--with",
            &with,
            "--seeds",
            "0..2",
            "-j",
            "2",
            "--out",
            out.to_str().expect("utf-8"),
        ]);
        assert!(o.status.success(), "{}", text(&o));
        (tmp, out)
    })
}

/// One comparison of two tunings (six flights), measured, written and
/// rendered: one test, so that the flights fly once (each test runs in a
/// process of its own).
#[test]
fn one_comparison_is_measured_written_and_rendered() {
    a_softer_tuning_is_found_worse_where_the_tuning_acts();
    the_comparison_writes_its_table_files_and_pictures();
    the_report_renders_in_a_headless_browser();
}

fn a_softer_tuning_is_found_worse_where_the_tuning_acts() {
    let (_, out) = compared();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("metrics.json")).expect("json"))
            .expect("parse");
    // (Not xtrack_max: both tunings' largest distance from the legs is now
    // where the S-curve blends a corner, inside it, by design.)
    for metric in ["xtrack_rms", "corner_overshoot_max"] {
        let good = median(&doc, "simpleflight", metric);
        let soft = median(&doc, "simpleflight:soft", metric);
        assert!(soft > 1.3 * good, "{metric}: soft {soft} against {good}");
    }
    // Both complete; the mission's length and duration hardly change.
    for c in ["simpleflight", "simpleflight:soft"] {
        assert_eq!(median(&doc, c, "completed"), 1.0);
    }
    let (a, b) = (
        median(&doc, "simpleflight", "time"),
        median(&doc, "simpleflight:soft", "time"),
    );
    assert!((a - b).abs() < 5.0, "time {a} against {b}");
    assert_eq!(doc["flights"].as_array().map(Vec::len), Some(6));
}

fn the_comparison_writes_its_table_files_and_pictures() {
    let (_, out) = compared();
    let csv = std::fs::read_to_string(out.join("metrics.csv")).expect("csv");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 7, "{csv}");
    assert!(lines[0].starts_with("controller,seed,completed,time [s],path [m],xtrack_rms [m]"));
    for name in ["track", "cross_track", "speed_altitude", "legs", "seeds"] {
        let png = std::fs::read(out.join("plots").join(format!("{name}.png"))).expect("png");
        assert!(
            png.starts_with(b"\x89PNG") && png.len() > 10_000,
            "{name}.png"
        );
        let svg =
            std::fs::read_to_string(out.join("plots").join(format!("{name}.svg"))).expect("svg");
        assert!(
            svg.contains("<svg") && svg.contains("simpleflight"),
            "{name}.svg"
        );
    }
    let html = std::fs::read_to_string(out.join("report.html")).expect("html");
    assert_eq!(html.matches("<svg").count(), 5);
    let id = format!(
        "simpleflight: SimpleFlight, mavsitl {}",
        env!("CARGO_PKG_VERSION")
    );
    assert!(html.contains(&id), "the controllers' identification");
    // Self-contained: nothing fetched from anywhere.
    for fetch in ["src=", "<link", "<script", "url("] {
        assert!(!html.contains(fetch), "{fetch} in report.html");
    }
    for seed in ["seed-0", "seed-1", "seed-2"] {
        assert!(out
            .join("simpleflight")
            .join(seed)
            .join("ground_truth.csv")
            .is_file());
        assert!(out
            .join("simpleflight_soft")
            .join(seed)
            .join("run.log")
            .is_file());
    }
}

/// Debian's chromium, if installed (CI installs it).
fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .filter_map(|n| {
            std::env::var_os("PATH").and_then(|p| {
                std::env::split_paths(&p)
                    .map(|d| d.join(n))
                    .find(|c| c.is_file())
            })
        })
        .next()
}

fn headless(browser: &Path, extra: &[&str], page: &Path) -> Output {
    Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run the browser")
}

fn the_report_renders_in_a_headless_browser() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI installs chromium for this test"
        );
        eprintln!("no chromium on this machine: report not rendered");
        return;
    };
    let (tmp, out) = compared();
    let page = out.join("report.html");
    let profile = tmp.path().join("browser-profile");
    let profile_arg = format!("--user-data-dir={}", profile.display());
    let dom = headless(&browser, &[&profile_arg, "--dump-dom"], &page);
    let dom_text = String::from_utf8_lossy(&dom.stdout);
    assert!(dom.status.success(), "{}", text(&dom));
    assert_eq!(dom_text.matches("<svg").count(), 5, "pictures in the page");
    assert!(dom_text.contains("<td>xtrack_rms [m]</td>"));
    // A screenshot, kept beside the report.
    let shot = out.join("report.png");
    let shot_arg = format!("--screenshot={}", shot.display());
    let o = headless(
        &browser,
        &[
            &profile_arg,
            &shot_arg,
            "--window-size=1200,2400",
            "--hide-scrollbars",
        ],
        &page,
    );
    assert!(o.status.success(), "{}", text(&o));
    let png = std::fs::read(&shot).expect("screenshot");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 50_000,
        "{} bytes",
        png.len()
    );
    if let Some(dir) = std::env::var_os("MAVSITL_TEST_ARTIFACTS") {
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::copy(&shot, Path::new(&dir).join("compare-report.png"));
    }
}

#[test]
fn controllers_and_seeds_are_checked_before_anything_flies() {
    let tmp = tempfile::tempdir().expect("tmp");
    let out = tmp.path().join("x");
    let out = out.to_str().expect("utf-8");
    let plan = "missions/quad_square.plan";
    let o = mavsitl(&["compare", plan, "--with", "simpleflight,inav", "--out", out]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("'inav' is not a controller"),
        "{}",
        text(&o)
    );
    let o = mavsitl(&["compare", plan, "--with", "px4", "--out", out]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("--px4-build"), "{}", text(&o));
    assert!(!Path::new(out).exists(), "nothing flown");
    let o = mavsitl(&["compare", plan, "--seeds", "5..2", "--out", out]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("must run upwards"), "{}", text(&o));
    let o = mavsitl(&["compare", plan, "--with", "sf,simpleflight", "--out", out]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("names simpleflight twice"),
        "{}",
        text(&o)
    );
}

#[test]
fn plot_draws_any_recording_with_the_mission_it_names() {
    let tmp = tempfile::tempdir().expect("tmp");
    let rec = tmp.path().join("rec");
    let o = mavsitl(&[
        "fly",
        "missions/boat_box.plan",
        "--record",
        rec.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = mavsitl(&["plot", rec.to_str().expect("utf-8")]);
    assert!(o.status.success(), "{}", text(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("xtrack_rms [m]"), "{table}");
    assert!(rec.join("plots/track.svg").is_file() && rec.join("report.html").is_file());
    // The boat's route: the box's legs, drawn and measured.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(rec.join("metrics.json")).expect("json"))
            .expect("parse");
    let legs = doc["flights"][0]["metrics"]["legs"]
        .as_array()
        .map_or(0, Vec::len);
    assert!(legs >= 4, "{legs} legs");
    let o = mavsitl(&["plot", tmp.path().join("nothing").to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("meta.json"), "{}", text(&o));
}

#[test]
fn ctrl_c_reports_what_was_flown() {
    let tmp = tempfile::tempdir().expect("tmp");
    let out = tmp.path().join("cmp");
    let child = Command::new(env!("CARGO_BIN_EXE_mavsitl"))
        .args([
            "compare",
            "missions/quad_square.plan",
            "--seeds",
            "0..400",
            "-j",
            "1",
            "--out",
        ])
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    // Until a few flights are done.
    let start = std::time::Instant::now();
    while std::fs::read_dir(out.join("simpleflight")).map_or(0, |d| d.count()) < 4 {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(30),
            "no flight"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let o = child.wait_with_output().expect("wait");
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    assert!(text(&o).contains("interrupted:"), "{}", text(&o));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("metrics.json")).expect("json"))
            .expect("parse");
    let flown = doc["flights"].as_array().map_or(0, Vec::len);
    assert!((3..400).contains(&flown), "{flown} flights reported");
    assert!(out.join("report.html").is_file());
}
