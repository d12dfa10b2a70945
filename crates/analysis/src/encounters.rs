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
