//! A rover's drive over a patch of lower friction, from a recording: the
//! ground track beside its rear axle's slip angle, drawn to
//! `docs/rover_ice.svg` and `.png`.
//!
//! ```text
//! mavsitl fly missions/rover_ackermann_course.plan --scenario scenarios/rover_ice.json \
//!     --ground-truth --record /tmp/ice
//! cargo run --release --example rover_ice -- /tmp/ice [OUT_DIR]
//! ```

use std::path::PathBuf;

use mavsitl::analysis::plot::{self, Patch, SlidePoint};
use mavsitl::analysis::route::{default_radius_m, Route};
use mavsitl::geo::{GeoPoint, LocalFrame};
use mavsitl::mission::Mission;
use mavsitl::physics::airframes;
use mavsitl::scenario::VehicleKind;
use serde_json::Value;

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let rec = PathBuf::from(args.next().ok_or("give the recording's directory")?);
    let out = args.next().map_or(PathBuf::from("docs"), PathBuf::from);
    let read = |f: &str| {
        let p = rec.join(f);
        std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))
    };
    let meta: Value = serde_json::from_str(&read("meta.json")?).map_err(|e| e.to_string())?;
    let scenario = &meta["scenario"];
    let num = |v: &Value| v.as_f64().ok_or_else(|| format!("not a number: {v}"));
    let home = &scenario["home"];
    let frame = LocalFrame::new(GeoPoint::from_deg(
        num(&home["lat_deg"])?,
        num(&home["lon_deg"])?,
        num(&home["alt_m"])?,
    ));
    let airframe = scenario["vehicles"][0]["airframe"].as_str().unwrap_or("");
    let p = airframes::rover(airframe).ok_or(format!("'{airframe}' is not a shipped rover"))?;
    let lr = p.wheelbase_m - p.cg_to_front_axle_m;
    let mission = Mission::load(&rec.join("mission.plan")).map_err(|e| e.to_string())?;
    let route = Route::new(&mission, &frame, default_radius_m(VehicleKind::Rover));
    let zone = scenario["environment"]["zones"]
        .as_array()
        .and_then(|z| z.iter().find(|z| z["ground_friction"].is_number()))
        .ok_or("the scenario has no zone of its own friction")?;
    let (lo, hi) = (
        &zone["shape"]["box"]["min_ned_m"],
        &zone["shape"]["box"]["max_ned_m"],
    );
    let on_s = entered_and_left(&read("zone_events.csv")?)?;
    let patch = Patch {
        north_m: (num(&lo[0])?, num(&hi[0])?),
        east_m: (num(&lo[1])?, num(&hi[1])?),
        on_s,
        mu: num(&zone["ground_friction"])?,
    };
    let trace = trace(&read("ground_truth.csv")?, lr)?;
    for f in plot::slide(&out, "rover_ice", &route, &trace, &patch)? {
        eprintln!("wrote {}", f.display());
    }
    let most = |from: f64, to: f64| {
        trace
            .iter()
            .filter(|p| p.t_s >= from && p.t_s < to)
            .map(|p| p.slip_deg.abs())
            .fold(0.0, f64::max)
    };
    println!(
        "on the patch {:.1}–{:.1} s; largest slip angle before {:.1}°, on it {:.1}°, from 3 s after {:.1}°",
        on_s.0,
        on_s.1,
        most(0.0, on_s.0),
        most(on_s.0, on_s.1),
        most(on_s.1 + 3.0, f64::MAX)
    );
    Ok(())
}

/// When the vehicle entered and left its first zone, s.
fn entered_and_left(events: &str) -> Result<(f64, f64), String> {
    let times: Vec<f64> = events
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').next()?.trim().parse::<f64>().ok())
        .map(|ns| ns * 1e-9)
        .collect();
    match times[..] {
        [on, off, ..] => Ok((on, off)),
        [on] => Ok((on, f64::MAX)),
        [] => Err("the vehicle never entered the zone".into()),
    }
}

/// Position and rear-axle slip angle of the ground-truth rows 20 ms or more
/// apart (NED, the rear axle `lr` m behind the CG).
fn trace(csv: &str, lr: f64) -> Result<Vec<SlidePoint>, String> {
    let mut all = every_row(csv, lr)?;
    let mut last = f64::NEG_INFINITY;
    all.retain(|p| {
        let keep = p.t_s >= last + 0.02 - 1e-9;
        if keep {
            last = p.t_s;
        }
        keep
    });
    Ok(all)
}

fn every_row(csv: &str, lr: f64) -> Result<Vec<SlidePoint>, String> {
    csv.lines()
        .skip(1)
        .map(|l| {
            let c = l
                .split(',')
                .map(|x| x.trim().parse::<f64>().map_err(|e| format!("{l}: {e}")))
                .collect::<Result<Vec<f64>, String>>()?;
            let [t, n, e, _, qw, qx, qy, qz, vn, ve, _, _, _, r] = c[..] else {
                return Err(format!("not a ground-truth row: {l}"));
            };
            let yaw = (2.0 * (qw * qz + qx * qy)).atan2(1.0 - 2.0 * (qy * qy + qz * qz));
            let u = yaw.cos() * vn + yaw.sin() * ve;
            let v = -yaw.sin() * vn + yaw.cos() * ve - lr * r;
            let slip_deg = if vn.hypot(ve) > 0.5 {
                v.atan2(u.abs()).to_degrees()
            } else {
                0.0
            };
            Ok(SlidePoint {
                t_s: t * 1e-9,
                north_m: n,
                east_m: e,
                slip_deg,
            })
        })
        .collect()
}
