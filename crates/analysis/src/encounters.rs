//! A fleet's `encounters.csv` read back: every pair of vehicles that came
//! within the proximity range, how close, and whether they collided; and a
//! live world's collisions told in words.

use std::path::Path;

use mavsitl_sim::encounter::Collision;
use mavsitl_sim::sim::Simulation;

use super::track::TrackError;

/// One pair's passage within range.
#[derive(Debug, Clone, PartialEq)]
pub struct PairEncounter {
    /// The two vehicles' names.
    pub vehicles: (String, String),
    /// Their closest separation, centre to centre, m.
    pub min_separation_m: f64,
    /// When they were closest, s.
    pub closest_s: f64,
    /// When they collided, s, if they did.
    pub collision_s: Option<f64>,
}

/// `encounters.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct Encounters {
    /// Pairs closer than this were measured, m.
    pub proximity_m: f64,
    /// The encounters, in the order they began.
    pub pairs: Vec<PairEncounter>,
}

impl Encounters {
    /// The recording's `encounters.csv` (None: a one-vehicle recording).
    ///
    /// # Errors
    /// [`TrackError`] naming the file and line of what cannot be read.
    pub fn load(dir: &Path) -> Result<Option<Encounters>, TrackError> {
        let path = dir.join("encounters.csv");
        if !path.is_file() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&path).map_err(|source| TrackError::Io {
            path: path.clone(),
            source,
        })?;
        let bad = |line: usize, what: &str| TrackError::Format {
            path: path.clone(),
            line,
            what: what.to_string(),
        };
        let mut proximity_m = None;
        let mut pairs = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if let Some(rest) = line.strip_prefix("# proximity range ") {
                proximity_m = rest.split_whitespace().next().and_then(|x| x.parse().ok());
                continue;
            }
            if line.starts_with('#') || line.starts_with("vehicle_a") || line.trim().is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            let num = |k: usize| f.get(k).and_then(|x| x.parse::<f64>().ok());
            let (Some(a), Some(b), Some(sep), Some(closest)) =
                (f.first(), f.get(1), num(5), num(4))
            else {
                return Err(bad(i + 1, "not a row of encounters.csv"));
            };
            pairs.push(PairEncounter {
                vehicles: (a.to_string(), b.to_string()),
                min_separation_m: sep,
                closest_s: closest * 1e-9,
                collision_s: num(12).map(|ns| ns * 1e-9),
            });
        }
        let proximity_m = proximity_m.ok_or_else(|| bad(1, "no '# proximity range' line"))?;
        Ok(Some(Encounters { proximity_m, pairs }))
    }

    /// The closest pair, if any came within range.
    pub fn closest(&self) -> Option<&PairEncounter> {
        self.pairs
            .iter()
            .min_by(|a, b| a.min_separation_m.total_cmp(&b.min_separation_m))
    }
}

/// "collision with 'b' at 12.3 s, …": vehicle `i`'s collision, as its
/// flight's failure.
pub fn collision_text(sim: &Simulation, i: usize) -> String {
    let c: Option<&Collision> = sim
        .encounters()
        .and_then(|m| m.collisions().iter().find(|c| c.a == i || c.b == i));
    let Some(c) = c else {
        return "collision".into();
    };
    let other = if c.a == i { c.b } else { c.a };
    let name = sim.vehicles().get(other).map_or("?", |v| v.name());
    format!("collision with '{name}' {}", collision_where(c))
}

/// "'a' and 'b' at 12.3 s, N 1.0 …": a collision of `sim`'s vehicles.
pub fn collision_line(sim: &Simulation, c: &Collision) -> String {
    let name = |i: usize| sim.vehicles().get(i).map_or("?", |v| v.name());
    format!("'{}' and '{}' {}", name(c.a), name(c.b), collision_where(c))
}

/// "at 12.3 s, N 1.0 E 2.0 D -10.0 m, closing at 4.1 m/s": when, where and
/// how fast a collision happened.
fn collision_where(c: &Collision) -> String {
    format!(
        "at {}, N {:.1} E {:.1} D {:.1} m, closing at {:.1} m/s",
        c.time, c.point_ned_m.x, c.point_ned_m.y, c.point_ned_m.z, c.closing_speed_m_s
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use mavsitl_core::time::SimTime;
    use mavsitl_sim::physics::BodyState;
    use mavsitl_sim::scenario::{Scenario, ScenarioSource};
    use nalgebra::{UnitQuaternion, Vector3};

    /// A folder of its own holding `encounters.csv` with `text`.
    fn folder(name: &str, text: Option<&str>) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("mavsitl-enc-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        if let Some(text) = text {
            std::fs::write(dir.join("encounters.csv"), text).expect("write");
        }
        dir
    }

    const HEADER: &str = "# proximity range 20 m; NED m; separation centre to centre\n\
        vehicle_a,vehicle_b,start [ns],end [ns],closest [ns],min_separation [m],a_N [m],a_E [m],a_D [m],b_N [m],b_E [m],b_D [m],collision [ns]\n";

    #[test]
    fn encounters_csv_reads_back_pairs_times_and_collisions() {
        let text = format!(
            "{HEADER}# a comment\n\n\
             c,d,2000000000,3000000000,2500000000,12.5000,0,0,-10,0,12.5,-10,\n\
             a,b,1171000000,,3718000000,1.9800,-0.7,0,-10,0,-0.7,-10,3719000000\n"
        );
        let dir = folder("ok", Some(&text));
        let e = Encounters::load(&dir);
        let _ = std::fs::remove_dir_all(&dir);
        let e = e.expect("readable").expect("a fleet's file");
        assert_eq!(e.proximity_m, 20.0);
        assert_eq!(e.pairs.len(), 2);
        let ab = &e.pairs[1];
        assert_eq!(ab.vehicles, ("a".to_string(), "b".to_string()));
        assert_eq!(ab.min_separation_m, 1.98);
        assert!((ab.closest_s - 3.718).abs() < 1e-12, "{ab:?}");
        assert!((ab.collision_s.expect("collided") - 3.719).abs() < 1e-12);
        assert_eq!(e.pairs[0].collision_s, None);
        assert!((e.pairs[0].closest_s - 2.5).abs() < 1e-12);
        assert_eq!(e.closest().map(|p| &p.vehicles.0[..]), Some("a"));
        let none = Encounters {
            proximity_m: 20.0,
            pairs: Vec::new(),
        };
        assert_eq!(none.closest(), None);
    }

    #[test]
    fn a_one_vehicle_recording_has_no_encounters() {
        let dir = folder("none", None);
        let e = Encounters::load(&dir);
        let _ = std::fs::remove_dir_all(&dir);
        assert!(matches!(e, Ok(None)), "{e:?}");
    }

    /// A short row names its line; a file without the range names line 1.
    #[test]
    fn a_malformed_file_names_the_line() {
        let dir = folder("bad", Some(&format!("{HEADER}a,b,1,2,3\n")));
        let e = Encounters::load(&dir);
        let _ = std::fs::remove_dir_all(&dir);
        let e = e.expect_err("a short row");
        assert!(
            e.to_string()
                .ends_with("encounters.csv:3: not a row of encounters.csv"),
            "{e}"
        );
        let dir = folder("norange", Some("vehicle_a,vehicle_b\n"));
        let e = Encounters::load(&dir);
        let _ = std::fs::remove_dir_all(&dir);
        let e = e.expect_err("no range");
        assert!(
            e.to_string()
                .ends_with("encounters.csv:1: no '# proximity range' line"),
            "{e}"
        );
    }

    /// Three quads; 'b' from the south and 'c' from the west cross at
    /// 5 m/s and collide (1 m spheres) when (20 − 5t)·√2 falls below 2 m,
    /// at t = 3.718 s, midway at N −0.7 E −0.7 m, closing at 5√2 m/s.
    #[test]
    fn a_collision_is_told_with_the_other_vehicle_when_and_where() {
        let source = ScenarioSource {
            name: "test".into(),
            base_dir: ".".into(),
        };
        let s = Scenario::from_json(
            r#"{"physics_rate_hz": 1000, "vehicles": [
                {"name": "a", "kind": "multirotor", "collision_radius_m": 1.0, "initial": {"north_m": 100, "east_m": 100}},
                {"name": "b", "kind": "multirotor", "collision_radius_m": 1.0},
                {"name": "c", "kind": "multirotor", "collision_radius_m": 1.0}]}"#,
            &source,
        )
        .expect("scenario");
        let mut sim = s.build_simulation(&source).expect("sim");
        let on_path = |t: f64, north: bool| {
            let d = 20.0 - 5.0 * t;
            let (pos, vel) = if north {
                (Vector3::new(-d, 0.0, -10.0), Vector3::new(5.0, 0.0, 0.0))
            } else {
                (Vector3::new(0.0, -d, -10.0), Vector3::new(0.0, 5.0, 0.0))
            };
            BodyState {
                pos_ned_m: pos,
                vel_ned_m_s: vel,
                att_ned_frd: UnitQuaternion::identity(),
                rate_frd_rad_s: Vector3::zeros(),
            }
        };
        while sim.time() < SimTime::from_secs_f64(5.0) && !sim.is_wrecked(1) {
            let t = sim.time().as_secs_f64();
            sim.set_vehicle_state(1, on_path(t, true));
            sim.set_vehicle_state(2, on_path(t, false));
            sim.step().expect("step");
        }
        let at = "at 3.718000 s, N -0.7 E -0.7 D -10.0 m, closing at 7.1 m/s";
        assert_eq!(collision_text(&sim, 2), format!("collision with 'b' {at}"));
        assert_eq!(collision_text(&sim, 1), format!("collision with 'c' {at}"));
        assert_eq!(collision_text(&sim, 0), "collision");
        let c = sim.encounters().expect("monitor").collisions()[0];
        assert_eq!(collision_line(&sim, &c), format!("'b' and 'c' {at}"));
    }
}
