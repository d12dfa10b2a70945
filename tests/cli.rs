//! The `mavsitl` binary as a user runs it: help, every shipped scenario,
//! recordings, determinism, and the exact error lines for bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mavsitl"));
    c.env_remove("PX4_HOME_LAT")
        .env_remove("PX4_HOME_LON")
        .env_remove("PX4_HOME_ALT")
        .env_remove("RUST_LOG");
    c
}

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("run mavsitl")
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).expect("write scenario");
    p
}

#[test]
fn help_is_complete() {
    let out = run(bin().arg("--help"));
    let (stdout, _) = text(&out);
    assert!(out.status.success());
    assert!(
        stdout.contains("sim") && stdout.contains("--verbose"),
        "{stdout}"
    );
    let out = run(bin().args(["sim", "--help"]));
    let (stdout, _) = text(&out);
    for flag in [
        "--duration",
        "--seed",
        "--home",
        "--record",
        "--frame",
        "ned",
        "enu",
        "iso8855",
        "PX4_HOME_LAT",
    ] {
        assert!(stdout.contains(flag), "sim --help lacks {flag}:\n{stdout}");
    }
}

#[test]
fn default_run_needs_no_arguments() {
    let out = run(bin().arg("sim"));
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.starts_with("mavsitl sim <built-in scenarios/quad_hover.json> (seed 1)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("sim time          60.000 s (60000 ticks at 1000 Hz)"),
        "{stdout}"
    );
    // The built-in hover command keeps the quad within a metre of its 10 m start.
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("quad"))
        .expect("vehicle line");
    let d: f64 = line
        .split(" D ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .expect("D");
    assert!((d + 10.08).abs() < 1.0, "{line}");
}

#[test]
fn every_shipped_scenario_runs() {
    let mut n = 0;
    for entry in std::fs::read_dir(repo("scenarios")).expect("scenarios/") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let out = run(bin().arg("sim").arg(&path).args(["--duration", "5"]));
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{}: {stderr}", path.display());
        assert!(stdout.contains("sim time          5.000 s"), "{stdout}");
        n += 1;
    }
    assert!(n >= 4, "only {n} scenarios found");
}

fn record(scenario: &Path, dir: &Path, extra: &[&str]) -> Vec<u8> {
    let out = run(bin()
        .arg("sim")
        .arg(scenario)
        .arg("--record")
        .arg(dir)
        .args(extra));
    let (_, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    std::fs::read(dir.join("ground_truth.csv")).expect("ground_truth.csv")
}

#[test]
fn recordings_are_complete_and_deterministic() {
    let tmp = tempfile::tempdir().expect("tmp");
    let scenario = repo("scenarios/windy_zones.json");
    let a = record(&scenario, &tmp.path().join("a"), &["--duration", "10"]);
    let b = record(&scenario, &tmp.path().join("b"), &["--duration", "10"]);
    assert_eq!(a, b, "same seed must give byte-identical recordings");
    let c = record(
        &scenario,
        &tmp.path().join("c"),
        &["--duration", "10", "--seed", "43"],
    );
    assert_ne!(a, c, "another seed gives other turbulence");

    let csv = String::from_utf8(a).expect("utf8");
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some(mavsitl::record::ground_truth_header()));
    let rows: Vec<Vec<f64>> = lines
        .map(|l| {
            l.split(',')
                .map(|x| x.trim().parse().expect("number"))
                .collect()
        })
        .collect();
    // 10 s at 200 Hz plus the row at t = 0.
    assert_eq!(rows.len(), 2001);
    assert_eq!(rows[0][0], 0.0);
    assert_eq!(rows[1][0], 5e6);
    assert_eq!(rows[2000][0], 1e10);
    for r in &rows {
        assert_eq!(r.len(), 14);
        let qn = (r[4] * r[4] + r[5] * r[5] + r[6] * r[6] + r[7] * r[7]).sqrt();
        assert!((qn - 1.0).abs() < 1e-12);
    }
    // Starts 20 m above its gear height at 5 m/s north (NED: z negative up).
    assert!((rows[0][3] + 20.08).abs() < 1e-9 && rows[0][8] == 5.0);

    let meta: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("a/meta.json")).expect("meta"),
    )
    .expect("json");
    assert_eq!(meta["seed"], 42);
    assert_eq!(meta["completed"], true);
    assert_eq!(meta["sim_time_end_s"], 10.0);
    assert!(meta["frames"]["world"]
        .as_str()
        .unwrap_or("")
        .starts_with("NED"));
    assert_eq!(
        meta["scenario"]["environment"]["zones"][0]["name"],
        "gust_front"
    );
    let events = std::fs::read_to_string(tmp.path().join("a/zone_events.csv")).expect("events");
    assert!(
        events
            .lines()
            .nth(1)
            .unwrap_or("")
            .ends_with(",quad,gust_front,enter,"),
        "{events}"
    );
}

#[test]
fn enu_export_swaps_axes() {
    let tmp = tempfile::tempdir().expect("tmp");
    let scenario = repo("scenarios/windy_zones.json");
    let ned = String::from_utf8(record(
        &scenario,
        &tmp.path().join("n"),
        &["--duration", "1"],
    ))
    .expect("utf8");
    let enu = String::from_utf8(record(
        &scenario,
        &tmp.path().join("e"),
        &["--duration", "1", "--frame", "enu"],
    ))
    .expect("utf8");
    let row = |s: &str| -> Vec<f64> {
        s.lines()
            .nth(1)
            .expect("row")
            .split(',')
            .map(|x| x.trim().parse().expect("num"))
            .collect()
    };
    let (n, e) = (row(&ned), row(&enu));
    assert_eq!(
        (e[1], e[2], e[3]),
        (n[2], n[1], -n[3]),
        "ENU position = (E, N, -D)"
    );
    assert_eq!((e[8], e[9]), (n[9], n[8]));
}

#[test]
fn home_from_flag_and_px4_env() {
    let tmp = tempfile::tempdir().expect("tmp");
    let scenario = repo("scenarios/quad_hover.json");
    let meta = |dir: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).expect("meta"))
            .expect("json")
    };
    let d1 = tmp.path().join("flag");
    let out = run(bin()
        .arg("sim")
        .arg(&scenario)
        .args([
            "--duration",
            "1",
            "--home",
            "-35.363261,149.165230,584,90",
            "--record",
        ])
        .arg(&d1));
    assert!(out.status.success(), "{}", text(&out).1);
    let m = meta(&d1);
    assert_eq!(m["scenario"]["home"]["lat_deg"], -35.363261);
    assert_eq!(m["scenario"]["home"]["heading_deg"], 90.0);
    let d2 = tmp.path().join("env");
    let out = run(bin()
        .arg("sim")
        .arg(&scenario)
        .args(["--duration", "1", "--record"])
        .arg(&d2)
        .env("PX4_HOME_LAT", "10.25")
        .env("PX4_HOME_ALT", "5"));
    assert!(out.status.success(), "{}", text(&out).1);
    let m = meta(&d2);
    assert_eq!(m["scenario"]["home"]["lat_deg"], 10.25);
    assert_eq!(m["scenario"]["home"]["lon_deg"], 8.545594);
    assert_eq!(m["scenario"]["home"]["alt_m"], 5.0);
}

/// Runs `sim` on a scenario body and returns (exit code, stderr).
fn bad(body: &str) -> (i32, String, PathBuf, tempfile::TempDir) {
    let tmp = tempfile::tempdir().expect("tmp");
    let p = write(tmp.path(), "s.json", body);
    let out = run(bin().arg("sim").arg(&p));
    (out.status.code().unwrap_or(-1), text(&out).1, p, tmp)
}

#[test]
fn bad_scenarios_give_one_clear_line() {
    let base = "{\n  \"vehicles\": [\n    {\n      \"kind\": \"multirotor\",\n      \"overrides\": { \"mass_kg\": 1.2, \"mas_kg\": 1 }\n    }\n  ]\n}\n";
    let (code, err, p, _t) = bad(base);
    assert_eq!(code, 2);
    let first = err.lines().next().unwrap_or("");
    assert!(
        first.starts_with(&format!("error: {}:5:", p.display()))
            && first
                .contains("vehicles[0].overrides.mas_kg: unknown field `mas_kg`, expected one of"),
        "{err}"
    );
    assert!(
        err.lines().nth(1).unwrap_or("").starts_with("hint: "),
        "{err}"
    );
    assert_eq!(err.lines().count(), 2, "one line plus a hint:\n{err}");

    let cases: &[(&str, &str)] = &[
        // Unknown key at the top.
        ("{\"vehicles\":[{\"kind\":\"boat\"}],\n\"sead\": 3}", ":2:6: sead: unknown field `sead`"),
        // Wrong type.
        ("{\"seed\": \"one\", \"vehicles\":[{\"kind\":\"boat\"}]}", ":1:14: seed: invalid type: string \"one\", expected u64"),
        // NaN is not JSON.
        ("{\"vehicles\":[{\"kind\":\"multirotor\",\"initial\":{\"north_m\": NaN}}]}", "vehicles[0].initial.north_m: expected value"),
        // Unknown vehicle kind.
        ("{\"vehicles\":[{\"kind\":\"submarine\"}]}", "vehicles[0].kind: unknown variant `submarine`, expected one of `multirotor`, `boat`, `rover`"),
        // Out of range values.
        ("{\"physics_rate_hz\": 3000, \"vehicles\":[{\"kind\":\"boat\"}]}", ": physics_rate_hz: physics rate 3000 Hz does not divide one second into whole microseconds"),
        ("{\"vehicles\":[{\"kind\":\"multirotor\",\"overrides\":{\"mass_kg\":-1}}]}", ": vehicles[0].overrides.mass_kg: -1 is outside 0.05..=100 (airframe generic_quad)"),
        ("{\"vehicles\":[{\"kind\":\"multirotor\",\"airframe\":\"iris\"}]}", ": vehicles[0].airframe: unknown Multirotor airframe 'iris' (shipped: generic_quad, x500; or give a path ending in .json)"),
        ("{\"vehicles\":[]}", ": vehicles: at least one vehicle is needed"),
        ("{\"home\":{\"lat_deg\":95,\"lon_deg\":0,\"alt_m\":0},\"vehicles\":[{\"kind\":\"boat\"}]}", ": home.lat_deg: 95 is outside -90..=90"),
        ("{\"vehicles\":[{\"kind\":\"boat\",\"controller\":{\"kind\":\"passive\",\"rate_hz\":300}}]}", ": vehicles[0].controller.rate_hz: 300 Hz is not an integer divider of the 1000 Hz physics rate"),
        // Truncated file.
        ("{\"vehicles\":[{\"kind\":\"boat\"}", ": vehicles: EOF while parsing a list"),
    ];
    for (body, expect) in cases {
        let (code, err, p, _t) = bad(body);
        assert_eq!(code, 2, "{body}\n{err}");
        let first = err.lines().next().unwrap_or("");
        assert!(
            first.starts_with(&format!("error: {}", p.display())),
            "{first}"
        );
        assert!(
            first.contains(expect),
            "for {body}\nexpected …{expect}…\ngot {first}"
        );
    }
}

#[test]
fn missing_file_and_bad_flags() {
    let out = run(bin().args(["sim", "/nonexistent/scenario.json"]));
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err.starts_with("error: /nonexistent/scenario.json: cannot read: No such file"),
        "{err}"
    );

    let scenario = repo("scenarios/quad_hover.json");
    let out = run(bin().arg("sim").arg(&scenario).args(["--home", "47,8"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("expected LAT,LON,ALT[,HEADING]"));
    let out = run(bin().arg("sim").arg(&scenario).env("PX4_HOME_LAT", "north"));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out)
            .1
            .contains("error: home: PX4_HOME_LAT='north' is not a number"),
        "{}",
        text(&out).1
    );
    let out = run(bin().arg("sim").arg(&scenario).args(["--duration", "-3"]));
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn airframe_file_with_error_points_into_that_file() {
    let tmp = tempfile::tempdir().expect("tmp");
    let af = mavsitl::physics::airframes::source("generic_quad")
        .expect("shipped")
        .replace("\"mass_kg\": 1.0", "\"mass_kg\": \"heavy\"");
    write(tmp.path(), "my_quad.json", &af);
    let p = write(
        tmp.path(),
        "s.json",
        r#"{"vehicles":[{"kind":"multirotor","airframe":"my_quad.json"}]}"#,
    );
    let out = run(bin().arg("sim").arg(&p));
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(2));
    let line = af.lines().position(|l| l.contains("heavy")).expect("line") + 1;
    assert!(
        err.contains(&format!("my_quad.json:{line}:"))
            && err.contains("mass_kg: invalid type: string"),
        "{err}"
    );
}

#[test]
fn ctrl_c_sigterm_and_sighup_flush_recordings_and_exit_130() {
    for signal in ["-INT", "-TERM", "-HUP"] {
        stop_a_recording_sim_with(signal);
    }
}

fn stop_a_recording_sim_with(signal: &str) {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("rec");
    let child = bin()
        .arg("sim")
        .arg(repo("scenarios/x500_on_ground.json"))
        .args(["--duration", "10000000", "--record"])
        .arg(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    // Wait (bounded) until the run has started writing, then interrupt it.
    for _ in 0..200 {
        if dir.join("meta.json").exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let status = Command::new("kill")
        .arg(signal)
        .arg(child.id().to_string())
        .status()
        .expect("kill");
    assert!(status.success());
    let out = child.wait_with_output().expect("wait");
    assert_eq!(
        out.status.code(),
        Some(130),
        "{signal}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted at"));
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).expect("meta"))
            .expect("json");
    assert_eq!(meta["completed"], false);
    let end_ns = (meta["sim_time_end_s"].as_f64().expect("end") * 1e9).round() as u64;
    // Every file ends with a complete row no later than the end time.
    for f in ["ground_truth.csv", "imu.csv", "baro.csv", "mag.csv"] {
        let text = std::fs::read_to_string(dir.join(f)).expect("file");
        assert!(text.ends_with('\n'), "{f} ends mid-row");
        let last = text.lines().last().expect("rows");
        let t: u64 = last
            .split(',')
            .next()
            .and_then(|x| x.parse().ok())
            .expect("timestamp");
        assert!(
            t <= end_ns && end_ns - t < 20_000_000,
            "{f}: last row at {t}, end {end_ns}"
        );
    }
}

/// Every subcommand that runs until stopped exits 130 on SIGTERM (CI systems
/// stop jobs with it): `serve`, which used to exit 0, and `fly --gcs`, which
/// used to exit 1.
#[test]
fn sigterm_ends_serve_and_fly_with_130() {
    let runs: [&[&str]; 2] = [
        &[
            "serve",
            "--gcs-bind",
            "127.0.0.1:0",
            "--gcs-out",
            "127.0.0.1:9",
        ],
        &[
            "fly",
            "--gcs",
            "--gcs-bind",
            "127.0.0.1:0",
            "--gcs-out",
            "127.0.0.1:9",
        ],
    ];
    for args in runs {
        let child = bin()
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn");
        std::thread::sleep(std::time::Duration::from_millis(700));
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status()
            .expect("kill");
        assert!(status.success());
        let out = child.wait_with_output().expect("wait");
        assert_eq!(
            out.status.code(),
            Some(130),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// `sim --duration` is held to the scenario file's own limit (1e7 s).
#[test]
fn an_absurd_duration_is_refused() {
    let out = run(bin().args(["sim", "--duration", "1e18"]));
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--duration 1e18: give a positive number of seconds up to 1e7"),
        "{stderr}"
    );
}

/// `serve --fault gcs_link_loss@4s+4s`: the vehicle goes silent for those
/// four seconds of sim time and speaks again afterwards.
#[test]
fn a_gcs_link_loss_silences_serve_for_its_duration() {
    use mavlink::dialects::common::MavMessage;
    let gcs = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
    gcs.set_read_timeout(Some(std::time::Duration::from_millis(200)))
        .expect("timeout");
    let port = gcs.local_addr().expect("addr").port();
    let mut child = bin()
        .args([
            "serve",
            "--gcs-bind",
            "127.0.0.1:0",
            "--gcs-out",
            &format!("127.0.0.1:{port}"),
            "--speedup",
            "4",
            "--duration",
            "12",
            "--fault",
            "gcs_link_loss@4s+4s",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stamps = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::time::Instant::now() < deadline {
        if let Ok(n) = gcs.recv(&mut buf) {
            mavsitl::wire::frames(&buf[..n], None, |raw| {
                if let Ok(mavsitl::wire::Incoming::Msg(MavMessage::ATTITUDE(a))) =
                    mavsitl::wire::decode(raw)
                {
                    stamps.push(a.time_boot_ms);
                }
            });
        }
        if child.try_wait().ok().flatten().is_some() {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(stamps.iter().any(|t| *t < 4000), "heard before the cut");
    assert!(stamps.iter().any(|t| *t > 8100), "heard after the cut");
    let during: Vec<_> = stamps
        .iter()
        .filter(|t| (4010..8000).contains(*t))
        .collect();
    assert!(during.is_empty(), "heard during the cut: {during:?}");
}

/// Killed outright (SIGKILL: nothing runs on the way out), a recording
/// still holds only whole rows, and the rows of the last seconds before the
/// kill.
#[test]
fn sigkill_leaves_only_whole_rows() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("rec");
    let mut child = bin()
        .args(["sim", "--duration", "1e6", "--record"])
        .arg(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let _ = child.kill();
    let _ = child.wait();
    let mut rows = 0;
    for name in [
        "ground_truth.csv",
        "imu.csv",
        "gps.csv",
        "baro.csv",
        "mag.csv",
    ] {
        let text = std::fs::read_to_string(dir.join(name)).expect(name);
        assert!(text.ends_with('\n'), "{name} ends in a torn row");
        let mut lines = text.lines();
        let columns = lines.next().expect("header").split(',').count();
        for l in lines {
            assert_eq!(l.split(',').count(), columns, "{name}: torn row {l:?}");
            rows += 1;
        }
    }
    assert!(
        rows > 10_000,
        "only {rows} rows survived 1.5 s of recording"
    );
}

/// GitHub's anchor for a heading: lower case, spaces to hyphens, other
/// punctuation dropped.
fn heading_anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The markdown links of `text` outside fenced code blocks, and its
/// headings' anchors.
fn links_and_anchors(text: &str) -> (Vec<String>, Vec<String>) {
    let mut links = Vec::new();
    let mut anchors = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if let Some(h) = line.strip_prefix('#') {
            anchors.push(heading_anchor(h.trim_start_matches('#')));
        }
        for (i, _) in line.match_indices("](") {
            if let Some(end) = line.get(i + 2..).and_then(|rest| rest.find(')')) {
                if let Some(link) = line.get(i + 2..i + 2 + end) {
                    links.push(link.to_string());
                }
            }
        }
    }
    (links, anchors)
}

/// Every relative link of the README and of docs/ resolves: the file
/// exists and a `#section` names a heading of the file it points into.
#[test]
fn documentation_links_resolve() {
    let mut pages = vec![repo("README.md")];
    let mut dirs = vec![repo("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("docs/") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    let anchors_of = |page: &Path| {
        let text =
            std::fs::read_to_string(page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        links_and_anchors(&text).1
    };
    let mut checked = 0;
    let mut broken = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).expect("page");
        for link in links_and_anchors(&text).0 {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, anchor) = link.split_once('#').unwrap_or((link.as_str(), ""));
            let target = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap_or(Path::new(".")).join(file)
            };
            if !target.exists() {
                broken.push(format!("{}: {link}: no such file", page.display()));
            } else if !anchor.is_empty()
                && target.extension().is_some_and(|e| e == "md")
                && !anchors_of(&target).iter().any(|a| a == anchor)
            {
                broken.push(format!("{}: {link}: no such heading", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
    assert!(checked > 20, "only {checked} links found");
}

#[test]
fn heading_anchors_are_githubs() {
    assert_eq!(
        heading_anchor(" Flying missions: `mavsitl fly`"),
        "flying-missions-mavsitl-fly"
    );
    assert_eq!(
        heading_anchor("AirSim's API (`mavsitl airsim`)"),
        "airsims-api-mavsitl-airsim"
    );
    let (links, anchors) =
        links_and_anchors("## A b\n[x](#a-b) and ![y](docs/p.png)\n```\n[z](q)\n```\n");
    assert_eq!(links, ["#a-b", "docs/p.png"]);
    assert_eq!(anchors, ["a-b"]);
}

/// A firmware's parameter file for another frame is refused before
/// anything starts, naming the file and the parameter: PX4's quadcopter
/// airframe for a rover, ArduPilot Rover's boat frame class for the car.
#[test]
fn firmware_parameters_for_another_frame_are_refused() {
    let tmp = tempfile::tempdir().expect("tmp");
    let px4 = write(tmp.path(), "quad.params", "SYS_AUTOSTART 4001\n");
    let out = run(bin()
        .args(["px4", "--vehicle", "rover_skid", "--px4-build"])
        .arg(tmp.path().join("no-px4"))
        .arg("--params")
        .arg(&px4));
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("quad.params: SYS_AUTOSTART 4001 is not a rover's airframe"),
        "{stderr}"
    );
    let out = run(bin()
        .args(["ardupilot", "--vehicle", "rover_ackermann", "--ardupilot"])
        .arg(tmp.path().join("no-ardupilot"))
        .arg("--params")
        .arg(repo("firmware_configs/ardupilot/boat.parm")));
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("boat.parm: FRAME_CLASS 2 is not a rover's"),
        "{stderr}"
    );
}

/// A scenario without a home flies from PX4's default home, 4.8 km north of
/// the lake the boat box is laid out on: `fly` says so, naming both homes;
/// with the plan's home on the command line it says nothing.
#[test]
fn a_plan_far_from_the_flights_home_is_a_warning() {
    let tmp = tempfile::tempdir().expect("tmp");
    let scen = write(tmp.path(), "boat.json", r#"{"vehicles":[{"kind":"boat"}]}"#);
    let plan = repo("missions/boat_box.plan");
    let warned = |extra: &[&str]| {
        let out = run(bin()
            .arg("fly")
            .arg(&plan)
            .arg("--scenario")
            .arg(&scen)
            .args(["--timeout", "2"])
            .args(extra));
        let (_, err) = text(&out);
        err.lines()
            .find(|l| l.starts_with("warning: ") && l.contains("the plan's home"))
            .map(str::to_string)
    };
    let w = warned(&[]).expect("a warning");
    assert!(
        w.contains("boat_box.plan: the plan's home (47.354400, 8.549700) is 4.8 km from the flight's (47.397742, 8.545594)"),
        "{w}"
    );
    assert_eq!(warned(&["--home", "47.3544,8.5497,406"]), None);
}

/// `serve` steps SimpleFlight's quads at its 250 Hz, one or `--count` of
/// them, and a boat at 1 kHz, as `fly` does: the recording says which.
#[test]
fn serve_steps_a_quad_at_simpleflights_rate_and_a_boat_at_1_khz() {
    let tmp = tempfile::tempdir().expect("tmp");
    for (name, extra, physics) in [
        ("quad", &[][..], 250),
        ("three", &["--count", "3"][..], 250),
        ("boat", &["--vehicle", "boat"][..], 1000),
    ] {
        let dir = tmp.path().join(name);
        let out = bin()
            .args(["serve", "--gcs-bind", "127.0.0.1:0", "--speedup", "max"])
            .args(["--duration", "1", "--record"])
            .arg(&dir)
            .args(extra)
            .output()
            .expect("run");
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).expect("meta"))
                .expect("json");
        assert_eq!(meta["physics_rate_hz"], physics, "{name}");
    }
}
