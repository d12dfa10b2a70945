//! A case's assertions evaluated on what its run recorded: each gives its
//! name, what was expected and what was measured, with units, so that a
//! failure reads on its own in a JUnit report.

use mavsitl_analysis::encounters::Encounters;
use mavsitl_analysis::{MissionMetrics, Track};
use mavsitl_core::geo::LocalFrame;
use mavsitl_mavlink::mission::Mission;
use mavsitl_simpleflight::geofence::{Breach, Geofence};

use super::spec::{Expect, NoCrash, DEFAULT_IMPACT_M_S};

/// Tilt beyond which the vehicle counts as flipped, degrees.
pub const FLIPPED_DEG: f64 = 80.0;
/// Height above home below which a flying vehicle counts as down, m (for
/// the impact speed).
pub const GROUND_M: f64 = 0.2;

/// One assertion's outcome.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Check {
    /// The assertion (the suite file's key).
    pub name: &'static str,
    /// What was expected, with its unit.
    pub expected: String,
    /// What was measured, with its unit.
    pub measured: String,
    /// Whether it holds.
    pub passed: bool,
}

impl std::fmt::Display for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: expected {}, measured {}",
            self.name, self.expected, self.measured
        )
    }
}

fn at_most(name: &'static str, bound: f64, value: f64, unit: &str) -> Check {
    Check {
        name,
        expected: format!("≤ {bound} {unit}"),
        measured: format!("{value:.3} {unit}"),
        passed: value <= bound,
    }
}

/// What the run recorded, to check against.
#[derive(Debug, Clone, Copy)]
pub struct Evidence<'a> {
    /// The recording.
    pub track: &'a Track,
    /// Its metrics against the planned route.
    pub metrics: &'a MissionMetrics,
    /// The mission (its fence).
    pub mission: &'a Mission,
    /// The frame around home.
    pub frame: &'a LocalFrame,
    /// A fleet's encounters (None: one vehicle).
    pub encounters: Option<&'a Encounters>,
}

/// Evaluates every assertion `expect` makes.
pub fn evaluate(expect: &Expect, ev: &Evidence<'_>) -> Vec<Check> {
    let (t, m) = (ev.track, ev.metrics);
    let mut out = Vec::new();
    if let Some(want) = expect.mission_completed {
        out.push(Check {
            name: "mission_completed",
            expected: want.to_string(),
            measured: t.completed.map_or("not recorded".into(), |c| c.to_string()),
            passed: t.completed == Some(want),
        });
    }
    if let Some(b) = expect.max_cross_track_rms_m {
        out.push(at_most("max_cross_track_rms_m", b, m.xtrack_rms_m, "m"));
    }
    if let Some(b) = expect.max_cross_track_m {
        out.push(at_most("max_cross_track_m", b, m.xtrack_max_m, "m"));
    }
    if let Some(b) = expect.landed_within_m {
        out.push(at_most("landed_within_m", b, m.rest_from_home_m, "m"));
    }
    if let Some(b) = expect.max_duration_s {
        let end = t.samples.last().map_or(0.0, |s| s.t_s);
        out.push(at_most("max_duration_s", b, end, "s"));
    }
    if let Some(b) = expect.max_altitude_m {
        let top = t.samples.iter().map(|s| -s.pos_ned_m.z).fold(0.0, f64::max);
        out.push(at_most("max_altitude_m", b, top, "m"));
    }
    if let Some(b) = expect.min_battery_remaining {
        out.push(Check {
            name: "min_battery_remaining",
            expected: format!("≥ {b}"),
            measured: t
                .battery_min_remaining
                .map_or("no battery.csv".into(), |r| format!("{r:.3}")),
            passed: t.battery_min_remaining.is_some_and(|r| r >= b),
        });
    }
    if let Some(want) = expect.stays_in_fence {
        out.push(fence(want, ev));
    }
    if let Some(modes) = &expect.mode_seen {
        out.push(modes_seen(modes, t));
    }
    if let Some(texts) = &expect.statustext_contains {
        out.push(texts_check("statustext_contains", texts, t, true));
    }
    if let Some(texts) = &expect.statustext_absent {
        out.push(texts_check("statustext_absent", texts, t, false));
    }
    match expect.no_crash {
        Some(NoCrash::Flag(true)) => out.push(no_crash(DEFAULT_IMPACT_M_S, t)),
        Some(NoCrash::Limit(l)) => out.push(no_crash(l, t)),
        _ => {}
    }
    if let Some(b) = expect.min_separation_m {
        out.push(min_separation(b, ev.encounters));
    }
    out
}

/// The fleet's closest approach against a bound. Pairs never within the
/// proximity range were not measured: the bound must lie within it.
pub fn min_separation(bound: f64, e: Option<&Encounters>) -> Check {
    let (measured, passed) = match e {
        None => ("one vehicle: no encounters.csv".to_string(), false),
        Some(e) => match e.closest() {
            Some(c) => (
                format!(
                    "{:.3} m ('{}' and '{}' at {:.1} s{})",
                    c.min_separation_m,
                    c.vehicles.0,
                    c.vehicles.1,
                    c.closest_s,
                    if c.collision_s.is_some() { ", collided" } else { "" }
                ),
                c.min_separation_m >= bound,
            ),
            None if bound <= e.proximity_m => (
                format!("no pair within the proximity range of {} m", e.proximity_m),
                true,
            ),
            None => (
                format!(
                    "no pair within {} m; separations beyond the scenario's proximity_m are not measured",
                    e.proximity_m
                ),
                false,
            ),
        },
    };
    Check {
        name: "min_separation_m",
        expected: format!("≥ {bound} m"),
        measured,
        passed,
    }
}

fn fence(want: bool, ev: &Evidence<'_>) -> Check {
    let f = Geofence::from_items(&ev.mission.fence, ev.frame);
    let home = nalgebra::Vector3::zeros();
    let outside: Vec<(f64, Breach)> = ev
        .track
        .samples
        .iter()
        .filter_map(|s| Some((s.t_s, f.check(&s.pos_ned_m, &home)?)))
        .collect();
    let measured = match (f.is_active(), outside.first()) {
        (false, _) => "the mission has no fence".to_string(),
        (true, None) => "inside throughout".to_string(),
        (true, Some((at, why))) => format!(
            "{} samples outside, first at {at:.1} s ({})",
            outside.len(),
            why.describe()
        ),
    };
    Check {
        name: "stays_in_fence",
        expected: if want {
            "inside throughout"
        } else {
            "a breach"
        }
        .into(),
        measured,
        passed: f.is_active() && outside.is_empty() == want,
    }
}

fn modes_seen(modes: &[String], t: &Track) -> Check {
    let seen: Vec<&str> = t
        .events
        .iter()
        .filter(|(_, kind, _)| kind == "mode")
        .map(|(_, _, d)| d.as_str())
        .collect();
    let missing: Vec<&String> = modes
        .iter()
        .filter(|m| !seen.iter().any(|s| s.eq_ignore_ascii_case(m)))
        .collect();
    let mut distinct: Vec<&str> = Vec::new();
    for s in &seen {
        if !distinct.contains(s) {
            distinct.push(s);
        }
    }
    Check {
        name: "mode_seen",
        expected: modes.join(", "),
        measured: if distinct.is_empty() {
            "no mode change recorded".into()
        } else {
            distinct.join(", ")
        },
        passed: missing.is_empty(),
    }
}

fn texts_check(name: &'static str, texts: &[String], t: &Track, present: bool) -> Check {
    let has = |needle: &str| {
        let n = needle.to_lowercase();
        t.statustext
            .iter()
            .find(|(_, s)| s.to_lowercase().contains(&n))
    };
    let wrong: Vec<String> = texts
        .iter()
        .filter_map(|x| match (has(x), present) {
            (None, true) => Some(format!("no '{x}'")),
            (Some((at, s)), false) => Some(format!("'{s}' at {at:.1} s")),
            _ => None,
        })
        .collect();
    Check {
        name,
        expected: texts
            .iter()
            .map(|x| format!("'{x}'"))
            .collect::<Vec<_>>()
            .join(", "),
        measured: if wrong.is_empty() {
            format!("as expected in {} STATUSTEXT", t.statustext.len())
        } else {
            wrong.join("; ")
        },
        passed: wrong.is_empty(),
    }
}

fn no_crash(limit_m_s: f64, t: &Track) -> Check {
    let tilt = t
        .samples
        .iter()
        .map(|s| s.tilt_rad.to_degrees())
        .fold(0.0, f64::max);
    let flies = t.samples.iter().any(|s| -s.pos_ned_m.z > 2.0 * GROUND_M);
    let impact = if flies {
        t.samples
            .windows(2)
            .filter_map(|w| match w {
                [a, b] if -a.pos_ned_m.z > GROUND_M && -b.pos_ned_m.z <= GROUND_M => {
                    Some(b.vel_ned_m_s.norm().max(a.vel_ned_m_s.norm()))
                }
                _ => None,
            })
            .fold(0.0, f64::max)
    } else {
        0.0
    };
    Check {
        name: "no_crash",
        expected: format!("tilt ≤ {FLIPPED_DEG}°, impact ≤ {limit_m_s} m/s"),
        measured: format!("tilt {tilt:.1}°, impact {impact:.2} m/s"),
        passed: tilt <= FLIPPED_DEG && impact <= limit_m_s,
    }
}
