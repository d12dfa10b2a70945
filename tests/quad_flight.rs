//! SimpleFlight's quad measured as `compare` measures it (ground truth
//! against the planned route): the jerk stays within twice the S-curve's
//! limit, the cruise is flat, corners blend as ArduPilot's S-curve blends them
//! (and stop where the plan holds), and a return climbs only as PX4's return
//! cone asks.

use std::path::{Path, PathBuf};
use std::process::Command;

use mavsitl::analysis::route::Route;
use mavsitl::analysis::{MissionMetrics, Track};
use mavsitl::geo::{GeoPoint, LocalFrame};
use mavsitl::mission::Mission;
use nalgebra::Vector3;

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// The quad square's home.
const HOME: (f64, f64) = (47.397742, 8.545594);

/// A flight: the recording, the route and what `compare` would measure.
struct Flight {
    track: Track,
    route: Route,
    metrics: MissionMetrics,
    /// MPC_JERK_AUTO in force, m/s³.
    jerk_limit: f64,
}

/// Flies `plan` with `fly --record` (extra arguments `extra`, parameters
/// `params` as `NAME VALUE` lines) and measures it.
fn fly(plan: &Path, extra: &[&str], params: &str) -> Flight {
    let dir = tempfile::tempdir().expect("tmp");
    let rec = dir.path().join("rec");
    let parm = dir.path().join("p.parm");
    std::fs::write(&parm, params).expect("params");
    let out = Command::new(env!("CARGO_BIN_EXE_mavsitl"))
        .arg("fly")
        .arg(plan)
        .args(["--record", rec.to_str().expect("path")])
        .args(["--params", parm.to_str().expect("path")])
        .args(extra)
        .env_remove("PX4_HOME_LAT")
        .env_remove("PX4_HOME_LON")
        .env_remove("PX4_HOME_ALT")
        .output()
        .expect("run mavsitl");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("mission completed"),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let track = Track::load(&rec).expect("recording");
    let mission = Mission::load(plan).expect("plan");
    let home = track
        .home
        .unwrap_or(GeoPoint::from_deg(HOME.0, HOME.1, 0.0));
    let route = Route::new(&mission, &LocalFrame::new(home), 2.0);
    let metrics = MissionMetrics::measure(&track, &route);
    let jerk_limit = params
        .lines()
        .find_map(|l| l.strip_prefix("MPC_JERK_AUTO ")?.trim().parse().ok())
        .unwrap_or(4.0);
    Flight {
        track,
        route,
        metrics,
        jerk_limit,
    }
}

/// A mission item: command, params 1–4, and (north, east) m from home at
/// 20 m for a positioned one.
type Item = (u16, [f64; 4], Option<(f64, f64)>);

/// A QGroundControl plan at the quad square's home: take-off to 20 m, then
/// `items`.
fn plan(dir: &Path, name: &str, items: &[Item]) -> PathBuf {
    let frame = LocalFrame::new(GeoPoint::from_deg(HOME.0, HOME.1, 488.0));
    let mut list = vec![serde_json::json!({
        "autoContinue": true, "command": 22, "doJumpId": 1, "frame": 3,
        "params": [0, 0, 0, null, HOME.0, HOME.1, 20], "type": "SimpleItem"
    })];
    for (k, (command, p, ne)) in items.iter().enumerate() {
        let (lat, lon) = match ne {
            Some((n, e)) => {
                let g = frame.to_geodetic(&Vector3::new(*n, *e, 0.0));
                (g.lat_deg(), g.lon_deg())
            }
            None => (0.0, 0.0),
        };
        let alt = if ne.is_some() { 20.0 } else { 0.0 };
        list.push(serde_json::json!({
            "autoContinue": true, "command": command, "doJumpId": k + 2, "frame": 3,
            "params": [p[0], p[1], p[2], p[3], lat, lon, alt], "type": "SimpleItem"
        }));
    }
    let doc = serde_json::json!({
        "fileType": "Plan", "groundStation": "QGroundControl", "version": 1,
        "geoFence": {"circles": [], "polygons": [], "version": 2},
        "rallyPoints": {"points": [], "version": 2},
        "mission": {
            "cruiseSpeed": 5, "firmwareType": 12, "globalPlanAltitudeMode": 1,
            "hoverSpeed": 5, "items": list, "plannedHomePosition": [HOME.0, HOME.1, 488],
            "vehicleType": 2, "version": 2
        }
    });
    let path = dir.join(name);
    std::fs::write(&path, doc.to_string()).expect("plan");
    path
}

const WAYPOINT: u16 = 16;
const RETURN: u16 = 20;

/// The square of quad_square.plan (50 m), each corner held `hold_s`.
fn square(dir: &Path, hold_s: f64) -> PathBuf {
    let wp = |n, e| (WAYPOINT, [hold_s, 0.0, 0.0, 0.0], Some((n, e)));
    plan(
        dir,
        &format!("square_{hold_s}.plan"),
        &[
            wp(50.0, 0.0),
            wp(50.0, 50.0),
            wp(0.0, 50.0),
            wp(0.0, 0.0),
            (RETURN, [0.0; 4], None),
        ],
    )
}

/// Jerk within twice MPC_JERK_AUTO, with noisy sensors and on perfect
/// state, and an RMS near the S-curve's own (its legs and blended corners
/// alone have 1.9 m/s³ RMS along the path at MPC_JERK_AUTO 4).
#[test]
fn the_jerk_stays_within_twice_the_scurve_limit() {
    for extra in [&[][..], &["--ground-truth"][..]] {
        let f = fly(&repo("missions/quad_square.plan"), extra, "");
        let m = &f.metrics;
        assert!(
            m.jerk_max_m_s3 <= 2.0 * f.jerk_limit,
            "{extra:?}: jerk max {:.2} m/s³ over 2 × {}",
            m.jerk_max_m_s3,
            f.jerk_limit
        );
        assert!(
            m.jerk_rms_m_s3 <= 2.4,
            "{extra:?}: jerk RMS {:.2} m/s³",
            m.jerk_rms_m_s3
        );
    }
    // A jerk limit of 50 lets the S-curve (and the vehicle) jerk far harder:
    // the bound is the limit's, not a constant.
    let f = fly(
        &repo("missions/quad_square.plan"),
        &["--ground-truth"],
        "MPC_JERK_AUTO 50\n",
    );
    assert!(
        f.metrics.jerk_max_m_s3 > 2.0 * 4.0,
        "jerk max {:.2} with MPC_JERK_AUTO 50",
        f.metrics.jerk_max_m_s3
    );
}

/// The middle fifth of each 50 m leg (after the S-curve reached cruise and
/// before it slows): the horizontal speed (min, max), m/s.
fn cruise_speeds(f: &Flight) -> Vec<(f64, f64)> {
    f.route
        .legs
        .iter()
        .filter(|l| l.length_m() > 40.0)
        .map(|leg| {
            let v: Vec<f64> = f
                .track
                .samples
                .iter()
                .filter(|s| {
                    let (t, d) = leg.project(&s.pos_ned_m.xy());
                    (0.4..0.6).contains(&t) && d < 3.0 && (s.pos_ned_m.z - leg.to.z).abs() < 3.0
                })
                .map(|s| s.vel_ned_m_s.xy().norm())
                .collect();
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (lo, hi)
        })
        .collect()
}

/// On perfect state the cruise holds MPC_XY_CRUISE (5 m/s) within ±0.15
/// m/s on every leg; with noisy sensors it follows the GPS error's drift,
/// within ±0.35 m/s.
#[test]
fn the_cruise_is_flat() {
    for (extra, tol) in [(&["--ground-truth"][..], 0.15), (&[][..], 0.35)] {
        let f = fly(&repo("missions/quad_square.plan"), extra, "");
        let legs = cruise_speeds(&f);
        assert_eq!(legs.len(), 4, "{extra:?}: {legs:?}");
        for (lo, hi) in legs {
            assert!(
                lo >= 5.0 - tol && hi <= 5.0 + tol,
                "{extra:?}: cruise {lo:.2}–{hi:.2} m/s"
            );
        }
    }
}

/// Waypoints without a hold blend through the S-curve's fast-waypoint path
/// (ArduCopter takes this square's corners at 2.9 m/s); a hold stops there.
#[test]
fn corners_blend_without_holds_and_stop_with_them() {
    let dir = tempfile::tempdir().expect("tmp");
    let blended = fly(&square(dir.path(), 0.0), &["--ground-truth"], "");
    let held = fly(&square(dir.path(), 1.0), &["--ground-truth"], "");
    // The slowest horizontal speed within 3 m of each corner (the closest
    // approach alone can be a pass through a stop point at 0.9 m/s).
    let speeds = |f: &Flight| -> Vec<f64> {
        f.route.points[2..5]
            .iter()
            .map(|p| {
                f.track
                    .samples
                    .iter()
                    .filter(|s| (s.pos_ned_m.xy() - p.ned_m.xy()).norm() < 3.0)
                    .map(|s| s.vel_ned_m_s.xy().norm())
                    .fold(f64::INFINITY, f64::min)
            })
            .collect()
    };
    let (b, h) = (speeds(&blended), speeds(&held));
    assert_eq!((b.len(), h.len()), (3, 3), "{b:?} {h:?}");
    assert!(b.iter().all(|v| *v > 2.5), "blended corners: {b:?} m/s");
    assert!(h.iter().all(|v| *v < 0.3), "held corners: {h:?} m/s");
    // Blending is also faster: at least a second a corner.
    assert!(
        blended.metrics.time_s + 3.0 < held.metrics.time_s - 3.0,
        "{} s blended, {} s held",
        blended.metrics.time_s,
        held.metrics.time_s
    );
}

/// Highest point of a flight above home, m.
fn ceiling(f: &Flight) -> f64 {
    f.track
        .samples
        .iter()
        .map(|s| -s.pos_ned_m.z)
        .fold(f64::NEG_INFINITY, f64::max)
}

/// Near home (6 m away, inside RTL_MIN_DIST) a return lands from where it is;
/// 300 m away it climbs to RTL_RETURN_ALT (60 m) first, and no higher.
#[test]
fn a_return_climbs_only_as_the_cone_asks() {
    let dir = tempfile::tempdir().expect("tmp");
    let near = plan(
        dir.path(),
        "near.plan",
        &[
            (WAYPOINT, [0.0; 4], Some((6.0, 0.0))),
            (RETURN, [0.0; 4], None),
        ],
    );
    let f = fly(&near, &["--ground-truth"], "");
    assert!(ceiling(&f) < 20.5, "near home: up to {:.2} m", ceiling(&f));
    let far = plan(
        dir.path(),
        "far.plan",
        &[
            (WAYPOINT, [0.0; 4], Some((300.0, 0.0))),
            (RETURN, [0.0; 4], None),
        ],
    );
    let f = fly(&far, &["--ground-truth"], "");
    assert!(
        (ceiling(&f) - 60.0).abs() < 1.0,
        "300 m out: up to {:.2} m",
        ceiling(&f)
    );
    // RTL_LAND_DELAY: down to RTL_DESCEND_ALT (10 m) first, hover there
    // 3 s, then land; with the default 0 the descent does not stop there.
    let hover_at_10 = |f: &Flight| {
        let dt = match f.track.samples.as_slice() {
            [a, b, ..] => b.t_s - a.t_s,
            _ => 0.0,
        };
        f.track
            .samples
            .iter()
            .filter(|s| (-s.pos_ned_m.z - 10.0).abs() < 0.3 && s.vel_ned_m_s.z.abs() < 0.1)
            .count() as f64
            * dt
    };
    let delayed = fly(
        &near,
        &["--ground-truth"],
        "RTL_LAND_DELAY 3\nRTL_DESCEND_ALT 10\n",
    );
    let straight = fly(&near, &["--ground-truth"], "RTL_DESCEND_ALT 10\n");
    assert!(
        (2.9..4.5).contains(&hover_at_10(&delayed)) && hover_at_10(&straight) < 0.5,
        "at 10 m: {} s delayed, {} s without a delay",
        hover_at_10(&delayed),
        hover_at_10(&straight)
    );
    // With no cone the near return climbs to RTL_RETURN_ALT as well.
    let f = fly(
        &near,
        &["--ground-truth"],
        "RTL_CONE_ANG 0\nRTL_RETURN_ALT 30\n",
    );
    assert!(
        (ceiling(&f) - 30.0).abs() < 1.0,
        "no cone: up to {:.2} m",
        ceiling(&f)
    );
}
