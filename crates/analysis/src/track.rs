//! A flight as a recording holds it: ground truth (and the battery's energy)
//! read back from `ground_truth.csv`, `battery.csv` and `meta.json`, turned to
//! NED whatever frame it was written in.

use std::path::{Path, PathBuf};

use nalgebra::Vector3;

use mavsitl_core::geo::GeoPoint;

/// One ground-truth sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Sim time, s.
    pub t_s: f64,
    /// Position, NED m from home.
    pub pos_ned_m: Vector3<f64>,
    /// Velocity, NED m/s.
    pub vel_ned_m_s: Vector3<f64>,
    /// Tilt: the angle between the body's vertical axis and the world's, rad
    /// (0 level, π upside down).
    pub tilt_rad: f64,
}

/// A recorded flight.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Track {
    /// Ground truth, in time order.
    pub samples: Vec<Sample>,
    /// Energy drawn from the battery over the recording, J (None: no
    /// `battery.csv`).
    pub energy_j: Option<f64>,
    /// The least charge left during the recording, 0..1 (None: no
    /// `battery.csv`).
    pub battery_min_remaining: Option<f64>,
    /// `mission_events.csv`: (sim time s, event, detail), in order (empty
    /// when the file is missing).
    pub events: Vec<(f64, String, String)>,
    /// `statustext.csv`: (sim time s, text), in order (empty when missing).
    pub statustext: Vec<(f64, String)>,
    /// What the run said of the mission (None: the recording does not say).
    pub completed: Option<bool>,
    /// Home (the NED origin), from `meta.json`.
    pub home: Option<GeoPoint>,
}

/// Why a recording cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum TrackError {
    /// A file is missing or unreadable.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A file's content is wrong.
    #[error("{path}:{line}: {what}")]
    Format {
        /// The file.
        path: PathBuf,
        /// Line, from 1 (0: the whole file).
        line: usize,
        /// What is wrong.
        what: String,
    },
}

/// The world frame a recording was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WorldAxes {
    Ned,
    Enu,
    Nwu,
}

impl WorldAxes {
    fn to_ned(self, v: Vector3<f64>) -> Vector3<f64> {
        match self {
            WorldAxes::Ned => v,
            WorldAxes::Enu => Vector3::new(v.y, v.x, -v.z),
            WorldAxes::Nwu => Vector3::new(v.x, -v.y, -v.z),
        }
    }
}

fn read(path: &Path) -> Result<String, TrackError> {
    std::fs::read_to_string(path).map_err(|source| TrackError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn format_error(path: &Path, line: usize, what: impl Into<String>) -> TrackError {
    TrackError::Format {
        path: path.to_path_buf(),
        line,
        what: what.into(),
    }
}

impl Track {
    /// Reads the recording in `dir` (one vehicle's: `dir` holds its
    /// `ground_truth.csv`; `meta.json` is there or one level up).
    ///
    /// # Errors
    /// A missing or malformed file, named with the line.
    pub fn load(dir: &Path) -> Result<Track, TrackError> {
        let meta_path = [dir.join("meta.json"), dir.join("../meta.json")]
            .into_iter()
            .find(|p| p.is_file())
            .unwrap_or_else(|| dir.join("meta.json"));
        let meta: serde_json::Value = serde_json::from_str(&read(&meta_path)?)
            .map_err(|e| format_error(&meta_path, e.line(), e.to_string()))?;
        let axes = match meta.pointer("/frames/world").and_then(|v| v.as_str()) {
            Some(s) if s.starts_with("NED") => WorldAxes::Ned,
            Some(s) if s.starts_with("ENU") => WorldAxes::Enu,
            Some(s) if s.starts_with("NWU") => WorldAxes::Nwu,
            other => {
                return Err(format_error(
                    &meta_path,
                    0,
                    format!("frames.world is {other:?}, not NED, ENU or NWU"),
                ))
            }
        };
        let home = meta.pointer("/frames/origin").and_then(|o| {
            Some(GeoPoint::from_deg(
                o.get("lat_deg")?.as_f64()?,
                o.get("lon_deg")?.as_f64()?,
                o.get("alt_m")?.as_f64()?,
            ))
        });
        let gt = dir.join("ground_truth.csv");
        let samples = parse_ground_truth(&read(&gt)?, &gt, axes)?;
        let battery = dir.join("battery.csv");
        let (energy_j, battery_min_remaining) = if battery.is_file() {
            parse_battery(&read(&battery)?, &battery)?
        } else {
            (None, None)
        };
        let events = optional_rows(&dir.join("mission_events.csv"), 3)?
            .into_iter()
            .map(|(t, f)| {
                let kind = f.first().cloned().unwrap_or_default();
                let detail = f.get(2).cloned().unwrap_or_default();
                (t, kind, detail)
            })
            .collect();
        let statustext = optional_rows(&dir.join("statustext.csv"), 2)?
            .into_iter()
            .map(|(t, f)| (t, f.get(1).cloned().unwrap_or_default()))
            .collect();
        Ok(Track {
            samples,
            energy_j,
            battery_min_remaining,
            events,
            statustext,
            completed: meta.get("completed").and_then(|c| c.as_bool()),
            home,
        })
    }
}

/// Numbers of a CSV row (after the `#` header).
fn numbers(row: &str, path: &Path, line: usize, want: usize) -> Result<Vec<f64>, TrackError> {
    let v: Vec<f64> = row
        .split(',')
        .map(|f| f.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|e| format_error(path, line, format!("not a number: {e}")))?;
    if v.len() < want {
        return Err(format_error(
            path,
            line,
            format!("{} columns, {want} expected", v.len()),
        ));
    }
    Ok(v)
}

fn rows(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

fn parse_ground_truth(text: &str, path: &Path, axes: WorldAxes) -> Result<Vec<Sample>, TrackError> {
    let mut out = Vec::new();
    for (line, row) in rows(text) {
        let v = numbers(row, path, line, 11)?;
        let (Some(t), Some(p), Some(q), Some(vel)) =
            (v.first(), v.get(1..4), v.get(4..8), v.get(8..11))
        else {
            continue;
        };
        // The (3, 3) element of the attitude's rotation matrix: the same for
        // NED/FRD and ENU/FLU, as both flip their vertical axes together.
        let (qx, qy) = (
            q.get(1).copied().unwrap_or(0.0),
            q.get(2).copied().unwrap_or(0.0),
        );
        let norm = q.iter().map(|x| x * x).sum::<f64>().max(f64::MIN_POSITIVE);
        let sample = Sample {
            t_s: t * 1e-9,
            pos_ned_m: axes.to_ned(Vector3::from_column_slice(p)),
            vel_ned_m_s: axes.to_ned(Vector3::from_column_slice(vel)),
            tilt_rad: (1.0 - 2.0 * (qx * qx + qy * qy) / norm)
                .clamp(-1.0, 1.0)
                .acos(),
        };
        if out.last().is_some_and(|s: &Sample| s.t_s >= sample.t_s) {
            return Err(format_error(path, line, "time does not increase"));
        }
        out.push(sample);
    }
    Ok(out)
}

/// (energy drawn over the file, J; the least charge left, 0..1).
type Battery = (Option<f64>, Option<f64>);

fn parse_battery(text: &str, path: &Path) -> Result<Battery, TrackError> {
    let mut first = None;
    let mut last = None;
    let mut least: Option<f64> = None;
    for (line, row) in rows(text) {
        let v = numbers(row, path, line, 6)?;
        let e = v.get(4).copied();
        first = first.or(e);
        last = e.or(last);
        if let Some(r) = v.get(5) {
            least = Some(least.map_or(*r, |l| l.min(*r)));
        }
    }
    Ok((first.zip(last).map(|(a, b)| b - a), least))
}

/// The rows of an event file, `#timestamp [ns],field,...` with at most
/// `fields` fields after the time (the last takes the rest of the line):
/// (time s, the fields). A missing file has none.
fn optional_rows(path: &Path, fields: usize) -> Result<Vec<(f64, Vec<String>)>, TrackError> {
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let text = read(path)?;
    let mut out = Vec::new();
    for (line, row) in rows(&text) {
        let mut parts = row.splitn(fields + 1, ',');
        let t: f64 = parts
            .next()
            .and_then(|t| t.trim().parse().ok())
            .ok_or_else(|| format_error(path, line, "no timestamp"))?;
        out.push((t * 1e-9, parts.map(str::to_string).collect()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_enu_recording_reads_back_as_ned() {
        let dir = std::env::temp_dir().join(format!("mavsitl-track-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(
            dir.join("meta.json"),
            r#"{"frames":{"world":"ENU (x east, y north, z up)","origin":{"lat_deg":47,"lon_deg":8,"alt_m":400}},"completed":true}"#,
        )
        .expect("meta");
        std::fs::write(
            dir.join("ground_truth.csv"),
            "#header\n0,1,2,3,1,0,0,0,4,5,6,0,0,0\n1000000000,1,2,3,1,0,0,0,4,5,6,0,0,0\n",
        )
        .expect("gt");
        std::fs::write(
            dir.join("battery.csv"),
            "#h\n0,16,1,0,100,1\n1,16,1,0,3700,0.9\n",
        )
        .expect("battery");
        let t = Track::load(&dir).expect("load");
        assert_eq!(t.samples.len(), 2);
        assert_eq!(t.samples[1].t_s, 1.0);
        assert_eq!(t.samples[0].pos_ned_m, Vector3::new(2.0, 1.0, -3.0));
        assert_eq!(t.samples[0].vel_ned_m_s, Vector3::new(5.0, 4.0, -6.0));
        assert_eq!(t.energy_j, Some(3600.0));
        assert_eq!(t.battery_min_remaining, Some(0.9));
        assert_eq!(t.samples[0].tilt_rad, 0.0);
        assert_eq!(t.completed, Some(true));
        std::fs::write(dir.join("ground_truth.csv"), "#h\n0,1,2\n").expect("gt");
        let e = Track::load(&dir).expect_err("short row").to_string();
        assert!(
            e.ends_with("ground_truth.csv:2: 3 columns, 11 expected"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A vehicle's folder in a fleet's recording, `meta.json` one level up.
    fn fleet(name: &str, world: &str) -> std::path::PathBuf {
        let top = std::env::temp_dir().join(format!("mavsitl-track-{name}-{}", std::process::id()));
        let dir = top.join("quad1");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(
            top.join("meta.json"),
            format!(r#"{{"frames":{{"world":"{world}","origin":{{"lat_deg":47.5,"lon_deg":8.25,"alt_m":400}}}}}}"#),
        )
        .expect("meta");
        dir
    }

    /// NED as written, NWU with y and z turned; the tilt from the
    /// attitude's quaternion, normalised (turned 60° about the level axis
    /// halfway between forward and right, so that both its x and y parts
    /// count, given at twice unit length); events and status texts with the rest of the line in the
    /// last field; the battery's least charge over its rows.
    #[test]
    fn a_fleet_members_recording_reads_whole() {
        let (s, c) = (30f64.to_radians().sin(), 30f64.to_radians().cos());
        let s = s * std::f64::consts::FRAC_1_SQRT_2;
        for (world, pos) in [
            ("NED", Vector3::new(1.0, 2.0, 3.0)),
            ("NWU (x north, y west, z up)", Vector3::new(1.0, -2.0, -3.0)),
        ] {
            let dir = fleet(&world[..3], world);
            std::fs::write(
                dir.join("ground_truth.csv"),
                format!(
                    "#h\n\n500000000,1,2,3,{},{},{},0,4,5,6\n",
                    2.0 * c,
                    2.0 * s,
                    2.0 * s
                ),
            )
            .expect("gt");
            std::fs::write(
                dir.join("battery.csv"),
                "#h\n0,16,1,0,100,0.9\n1,16,1,0,900,0.8\n2,16,1,0,1900,0.85\n",
            )
            .expect("battery");
            std::fs::write(
                dir.join("mission_events.csv"),
                "#t,event,seq,detail\n2000000000,reached,3,at 1.0, 2.0\n",
            )
            .expect("events");
            std::fs::write(
                dir.join("statustext.csv"),
                "#t,severity,text\n3000000000,6,Mission: 1, done\n",
            )
            .expect("statustext");
            let t = Track::load(&dir);
            let _ = std::fs::remove_dir_all(dir.parent().expect("top"));
            let t = t.expect("load");
            let v = Vector3::new(4.0, 5.0, 6.0);
            let v = if world == "NED" {
                v
            } else {
                Vector3::new(4.0, -5.0, -6.0)
            };
            assert_eq!((t.samples[0].pos_ned_m, t.samples[0].vel_ned_m_s), (pos, v));
            assert_eq!(t.samples[0].t_s, 0.5);
            assert!(
                (t.samples[0].tilt_rad - 60f64.to_radians()).abs() < 1e-12,
                "{}",
                t.samples[0].tilt_rad
            );
            assert_eq!(
                (t.energy_j, t.battery_min_remaining),
                (Some(1800.0), Some(0.8))
            );
            assert_eq!(
                t.events,
                [(2.0, "reached".to_string(), "at 1.0, 2.0".to_string())]
            );
            assert_eq!(t.statustext, [(3.0, "Mission: 1, done".to_string())]);
            assert_eq!(t.home, Some(GeoPoint::from_deg(47.5, 8.25, 400.0)));
            assert_eq!(t.completed, None);
        }
    }

    /// Each malformed file names itself and the line; files that may be
    /// missing are.
    #[test]
    fn a_malformed_recording_names_the_file_and_line() {
        let dir = fleet("bad", "NED");
        let load = |file: &str, text: &str| {
            std::fs::write(dir.join(file), text).expect("write");
            Track::load(&dir).map_err(|e| e.to_string())
        };
        let row = "0,0,0,0,1,0,0,0,0,0,0\n";
        let only = load("ground_truth.csv", &format!("#h\n{row}")).expect("one row");
        assert_eq!(only.samples.len(), 1);
        assert!(only.events.is_empty() && only.statustext.is_empty() && only.energy_j.is_none());
        let e = load("ground_truth.csv", &format!("#h\n{row}{row}")).expect_err("same time");
        assert!(
            e.ends_with("ground_truth.csv:3: time does not increase"),
            "{e}"
        );
        let e = load("ground_truth.csv", "#h\n0,x,0\n").expect_err("not a number");
        assert!(e.contains("ground_truth.csv:2: not a number"), "{e}");
        load("ground_truth.csv", &format!("#h\n{row}")).expect("one row");
        let e = load("mission_events.csv", "#h\nsoon,reached,1,x\n").expect_err("no time");
        assert!(e.ends_with("mission_events.csv:2: no timestamp"), "{e}");
        std::fs::remove_file(dir.join("mission_events.csv")).expect("rm");
        let e = load("battery.csv", "#h\n0,16,1\n").expect_err("short");
        assert!(e.ends_with("battery.csv:2: 3 columns, 6 expected"), "{e}");
        std::fs::remove_file(dir.join("battery.csv")).expect("rm");
        let top = dir.parent().expect("top").to_path_buf();
        std::fs::write(top.join("meta.json"), r#"{"frames":{"world":"XYZ"}}"#).expect("meta");
        let e = Track::load(&dir).expect_err("axes").to_string();
        std::fs::write(top.join("meta.json"), "{").expect("meta");
        let json = Track::load(&dir).expect_err("json").to_string();
        let _ = std::fs::remove_dir_all(&top);
        let missing = Track::load(&top).expect_err("no meta").to_string();
        assert!(
            e.ends_with(r#"meta.json:0: frames.world is Some("XYZ"), not NED, ENU or NWU"#),
            "{e}"
        );
        assert!(json.contains("meta.json:1: "), "{json}");
        assert!(missing.contains("meta.json: "), "{missing}");
    }
}
