//! AC_PID, AC_PID_2D, AC_P_2D and the SMAX slew limiter against what
//! ArduPilot's own, unmodified code computes (`tests/data/pid/`, see its
//! README): step and sine targets through first-order plants, the
//! integrator held by `limit` and clamped at IMAX, SMAX engaged by an
//! oscillation, resets mid-sequence, and time steps of zero and below
//! `FLT_EPSILON`.
//!
//! The slew limiter computes in single precision, as ArduPilot's, and must
//! agree bit for bit. The PIDs compute in double where ArduPilot computes
//! in float: each value is checked to a relative 2·10⁻⁵ of the output's
//! scale (|P| + |I| + |D|, at least 10⁻³). Cases that use what the port
//! does not have (PDMX, D_FF, `pd_scale`, `set_error_max`, a board clock
//! that does not start with the controller) are skipped by name.

use std::collections::HashMap;

use mavsitl_guidance::pid::{AcP2D, AcPid, AcPid2D, PidGains};
use mavsitl_guidance::slew_limiter::SlewLimiter;
use nalgebra::Vector2;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/pid");

/// One CSV row by column name; text fields (case, op) kept apart.
struct Row {
    case: String,
    op: String,
    values: HashMap<String, String>,
}

impl Row {
    fn get(&self, key: &str) -> f64 {
        self.text(key)
            .parse()
            .unwrap_or_else(|_| panic!("{}: {key}", self.case))
    }

    fn get32(&self, key: &str) -> f32 {
        self.text(key)
            .parse()
            .unwrap_or_else(|_| panic!("{}: {key}", self.case))
    }

    fn text(&self, key: &str) -> &str {
        self.values
            .get(key)
            .unwrap_or_else(|| panic!("{}: no column {key}", self.case))
    }

    fn xy(&self, key: &str) -> Vector2<f64> {
        Vector2::new(self.get(&format!("{key}_x")), self.get(&format!("{key}_y")))
    }
}

/// The rows of `name.csv`. Case descriptions (the last column of the
/// `_cases` files) are quoted and may hold commas: only the leading
/// columns are split.
fn rows(name: &str) -> Vec<Row> {
    let text = std::fs::read_to_string(format!("{DATA}/{name}.csv")).expect(name);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    lines
        .map(|line| {
            let f: Vec<&str> = line.splitn(header.len(), ',').collect();
            assert_eq!(f.len(), header.len(), "{name}: {line}");
            let values: HashMap<String, String> = header
                .iter()
                .zip(&f)
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Row {
                case: f[0].to_string(),
                op: values.get("op").cloned().unwrap_or_default(),
                values,
            }
        })
        .collect()
}

/// Each case's parameters, by name.
fn cases(name: &str) -> HashMap<String, Row> {
    rows(&format!("{name}_cases"))
        .into_iter()
        .map(|r| (r.case.clone(), r))
        .collect()
}

#[track_caller]
fn agree(ours: f64, want: f64, scale: f64, what: &str) {
    assert!(
        (ours - want).abs() <= 2e-5 * scale.max(1e-3),
        "{what}: {ours:.9e} but ArduPilot {want:.9e}"
    );
}

#[test]
fn the_slew_limiter_matches_ardupilot_bit_for_bit() {
    let params = cases("slew_limiter");
    let mut checked = 0;
    let mut limiters: HashMap<String, SlewLimiter> = HashMap::new();
    for r in rows("slew_limiter") {
        let c = &params[&r.case];
        // The port's clock starts with the limiter; ArduPilot's board
        // clock may not.
        if c.get("clock0_s") != 0.0 {
            continue;
        }
        let l = limiters.entry(r.case.clone()).or_default();
        let m = l.modifier(
            r.get32("sample"),
            r.get32("dt"),
            c.get32("slew_rate_max"),
            c.get32("slew_rate_tau"),
        );
        let what = format!("{} row {}", r.case, r.text("i"));
        assert_eq!(
            m.to_bits(),
            r.get32("modifier").to_bits(),
            "{what}: modifier {m}"
        );
        let s = l.get_slew_rate();
        assert_eq!(
            s.to_bits(),
            r.get32("slew_rate").to_bits(),
            "{what}: slew rate {s}"
        );
        checked += 1;
    }
    assert!(checked >= 1_500, "{checked} rows");
    assert!(limiters.len() >= 12);
}

#[test]
fn ac_pid_matches_ardupilot() {
    let params = cases("ac_pid");
    let unported =
        |c: &Row| c.get("kDFF") != 0.0 || c.get("kPDMX") != 0.0 || c.get("slew_rate_tau") != 1.0;
    let mut pids: HashMap<String, AcPid> = HashMap::new();
    let mut checked = 0;
    for r in rows("ac_pid") {
        let c = &params[&r.case];
        if unported(c) || r.case == "pd_scale" {
            continue;
        }
        let pid = pids.entry(r.case.clone()).or_insert_with(|| {
            AcPid::new(PidGains {
                p: c.get("kP"),
                i: c.get("kI"),
                d: c.get("kD"),
                ff: c.get("kFF"),
                imax: c.get("kIMAX"),
                filt_t_hz: c.get("filt_T_hz"),
                filt_e_hz: c.get("filt_E_hz"),
                filt_d_hz: c.get("filt_D_hz"),
                smax: c.get("slew_rate_max"),
            })
        });
        if r.op.contains("reset_I") {
            pid.reset_i();
        }
        if r.op.contains("reset_filter") {
            pid.reset_filter();
        }
        let out = pid.update_all(
            r.get("target"),
            r.get("measurement"),
            r.get("dt"),
            r.get("limit") != 0.0,
        );
        let scale = r.get("P").abs() + r.get("I").abs() + r.get("D").abs();
        let what = |k: &str| format!("{} row {}: {k}", r.case, r.text("i"));
        agree(out, r.get("out"), scale, &what("output"));
        agree(pid.integrator(), r.get("I"), scale, &what("I"));
        agree(
            pid.get_ff(),
            r.get("get_ff"),
            r.get("get_ff").abs(),
            &what("FF"),
        );
        agree(pid.d_mod(), r.get("Dmod"), 1.0, &what("Dmod"));
        checked += 1;
    }
    assert!(checked >= 1_300, "{checked} rows");
    assert!(pids.len() >= 9, "{} cases", pids.len());
}

#[test]
fn ac_pid_2d_matches_ardupilot() {
    let params = cases("ac_pid_2d");
    let mut pids: HashMap<String, AcPid2D> = HashMap::new();
    let mut checked = 0;
    for r in rows("ac_pid_2d") {
        let c = &params[&r.case];
        let pid = pids.entry(r.case.clone()).or_insert_with(|| {
            AcPid2D::new(PidGains {
                p: c.get("kP"),
                i: c.get("kI"),
                d: c.get("kD"),
                ff: c.get("kFF"),
                imax: c.get("kIMAX"),
                filt_t_hz: 0.0,
                filt_e_hz: c.get("filt_E_hz"),
                filt_d_hz: c.get("filt_D_hz"),
                smax: 0.0,
            })
        });
        if r.op == "set_integrator" {
            pid.set_integrator(r.xy("set_i"));
        }
        if r.op.contains("reset_I") {
            pid.reset_i();
        }
        if r.op.contains("reset_filter") {
            pid.reset_filter();
        }
        // ArduPilot's update_all includes the feed-forward; the port's
        // caller adds it.
        let out = pid.update_all(&r.xy("target"), &r.xy("meas"), r.get("dt"), &r.xy("limit"))
            + pid.get_ff();
        let (want, i_want) = (r.xy("out"), r.xy("i"));
        let scale = want.norm() + i_want.norm();
        let what = |k: &str| format!("{} row {}: {k}", r.case, r.text("i"));
        agree(out.x, want.x, scale, &what("out_x"));
        agree(out.y, want.y, scale, &what("out_y"));
        let i = pid.integrator();
        agree(i.x, i_want.x, scale, &what("i_x"));
        agree(i.y, i_want.y, scale, &what("i_y"));
        checked += 1;
    }
    assert!(checked >= 500, "{checked} rows");
}

#[test]
fn ac_p_2d_matches_ardupilot() {
    let params = cases("ac_p_2d");
    let mut checked = 0;
    for r in rows("ac_p_2d") {
        let c = &params[&r.case];
        if c.get("set_error_max") > 0.0 {
            continue;
        }
        let mut p = AcP2D::new(c.get("kP"));
        p.set_limits(c.get("output_max"), c.get("D_Out_max"), c.get("D2_Out_max"));
        let mut target = r.xy("target_in");
        let meas = r.xy("meas");
        let out = p.update_all(&mut target, &meas);
        let want = r.xy("out");
        let what = |k: &str| format!("{} row {}: {k}", r.case, r.text("i"));
        agree(out.x, want.x, want.norm(), &what("out_x"));
        agree(out.y, want.y, want.norm(), &what("out_y"));
        // The target, moved onto the error limit: compared as the move.
        let moved = target - r.xy("target_in");
        let want_moved = r.xy("target_out") - r.xy("target_in");
        let error = (r.xy("target_in") - meas).norm();
        agree(moved.x, want_moved.x, error, &what("target_x"));
        agree(moved.y, want_moved.y, error, &what("target_y"));
        checked += 1;
    }
    assert!(checked >= 200, "{checked} rows");
}
