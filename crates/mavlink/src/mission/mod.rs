//! Missions: the item model, the commands SimpleFlight understands, and the file
//! formats users bring — QGroundControl `.plan` ([`plan`]) and `QGC WPL 110`
//! text ([`wpl`]), read and written.
//!
//! Items are kept as MAVLink mission items (command, frame, four parameters,
//! x/y/z, autocontinue): that is what a GCS uploads, what both file formats
//! store, and what the mission executor interprets. Latitude and longitude are
//! degrees as `f64` here; MAVLink's degE7 integers exist only at the protocol
//! edge. Parameters QGC writes as `null` are NaN.

pub mod commands;
pub mod plan;
pub mod wpl;

use serde::Serialize;
use thiserror::Error;

pub use commands::{classify, command_name, Support};

/// One MAVLink mission item.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MissionItem {
    /// MAV_CMD.
    pub command: u16,
    /// MAV_FRAME (0 global AMSL, 3 global relative to home, 10 terrain, 1 local NED …).
    pub frame: u8,
    /// param1–param4 (NaN where unset).
    pub params: [f64; 4],
    /// param5: latitude, deg (global frames) or x.
    pub x: f64,
    /// param6: longitude, deg (global frames) or y.
    pub y: f64,
    /// param7: altitude, m (meaning set by the frame) or z.
    pub z: f64,
    /// Continue to the next item automatically.
    pub autocontinue: bool,
}

impl MissionItem {
    /// A NAV_WAYPOINT at lat/lon (deg), altitude relative to home (m).
    pub fn waypoint(lat_deg: f64, lon_deg: f64, alt_rel_m: f64) -> Self {
        MissionItem {
            command: commands::NAV_WAYPOINT,
            frame: FRAME_GLOBAL_RELATIVE_ALT,
            params: [0.0, 0.0, 0.0, f64::NAN],
            x: lat_deg,
            y: lon_deg,
            z: alt_rel_m,
            autocontinue: true,
        }
    }

    /// Whether x/y are latitude/longitude.
    pub fn is_global(&self) -> bool {
        is_global_frame(self.frame)
    }
}

/// Whether a MAV_FRAME carries latitude/longitude: GLOBAL,
/// GLOBAL_RELATIVE_ALT and GLOBAL_TERRAIN_ALT, and their _INT forms (5, 6,
/// 11).
pub fn is_global_frame(frame: u8) -> bool {
    matches!(
        frame,
        FRAME_GLOBAL | FRAME_GLOBAL_RELATIVE_ALT | FRAME_GLOBAL_TERRAIN_ALT | 5 | 6 | 11
    )
}

/// MAV_FRAME_GLOBAL (altitude AMSL).
pub const FRAME_GLOBAL: u8 = 0;
/// MAV_FRAME_MISSION (no position).
pub const FRAME_MISSION: u8 = 2;
/// MAV_FRAME_GLOBAL_RELATIVE_ALT (altitude above home).
pub const FRAME_GLOBAL_RELATIVE_ALT: u8 = 3;
/// MAV_FRAME_GLOBAL_TERRAIN_ALT (altitude above terrain; flat terrain here).
pub const FRAME_GLOBAL_TERRAIN_ALT: u8 = 10;

/// A home position: latitude, longitude (deg), altitude AMSL (m).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PlanHome {
    /// Latitude, deg.
    pub lat_deg: f64,
    /// Longitude, deg.
    pub lon_deg: f64,
    /// Altitude AMSL, m.
    pub alt_m: f64,
}

/// A mission with its fence and rally points, as a plan file holds it.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Mission {
    /// The mission items, in order (home not included).
    pub items: Vec<MissionItem>,
    /// The planned home position, if the file gives one.
    pub home: Option<PlanHome>,
    /// Geofence items (MAV_CMD_NAV_FENCE_*), in upload order.
    pub fence: Vec<MissionItem>,
    /// Rally points (MAV_CMD_NAV_RALLY_POINT).
    pub rally: Vec<MissionItem>,
    /// The plan's cruise speed (fixed-wing / rover), m/s.
    pub cruise_speed_m_s: Option<f64>,
    /// The plan's hover speed (multirotor), m/s.
    pub hover_speed_m_s: Option<f64>,
    /// The MAV_TYPE the plan was made for (2 quad, 10 rover, 11 boat …), if given.
    pub vehicle_type: Option<u8>,
}

/// A mission file that could not be read.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum MissionError {
    /// Unreadable file.
    #[error("{file}: cannot read: {message}")]
    Read {
        /// The file.
        file: String,
        /// The OS's reason.
        message: String,
    },
    /// Malformed content at a JSON path (plan files).
    #[error("{file}: {path}: {message}")]
    Json {
        /// The file.
        file: String,
        /// JSON path, e.g. `mission.items[3].params`.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// Malformed content at a line (plan syntax errors, WPL files).
    #[error("{file}:{line}: {message}")]
    Line {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A file format we do not know.
    #[error("{file}: {message}")]
    Format {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
}

impl Mission {
    /// The same plan moved `by` metres (north, east) in `frame`: every item,
    /// fence vertex and rally point with a position, and the planned home,
    /// each at its own altitude (one of several vehicles flying the plan
    /// from its own start).
    pub fn translated(
        &self,
        frame: &mavsitl_core::geo::LocalFrame,
        by: nalgebra::Vector2<f64>,
    ) -> Mission {
        let alt = frame.origin().alt_m;
        let shift = |lat: f64, lon: f64| {
            let ned = frame.to_ned(&mavsitl_core::geo::GeoPoint::from_deg(lat, lon, alt));
            let g = frame.to_geodetic(&nalgebra::Vector3::new(ned.x + by.x, ned.y + by.y, ned.z));
            (g.lat_deg(), g.lon_deg())
        };
        let move_item = |it: &MissionItem| {
            let mut it = *it;
            if it.is_global() && (it.x != 0.0 || it.y != 0.0) {
                (it.x, it.y) = shift(it.x, it.y);
            }
            it
        };
        Mission {
            items: self.items.iter().map(move_item).collect(),
            fence: self.fence.iter().map(move_item).collect(),
            rally: self.rally.iter().map(move_item).collect(),
            home: self.home.map(|h| {
                let (lat_deg, lon_deg) = shift(h.lat_deg, h.lon_deg);
                PlanHome {
                    lat_deg,
                    lon_deg,
                    alt_m: h.alt_m,
                }
            }),
            ..self.clone()
        }
    }

    /// Reads a `.plan` (JSON) or `QGC WPL` file, chosen by its content.
    ///
    /// # Errors
    /// [`MissionError`] naming the file and the JSON path or line.
    pub fn load(path: &std::path::Path) -> Result<Mission, MissionError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| MissionError::Read {
            file: file.clone(),
            message: e.to_string(),
        })?;
        Mission::parse(&text, &file)
    }

    /// Parses plan or WPL text; `file` names it in errors.
    ///
    /// # Errors
    /// [`MissionError`].
    pub fn parse(text: &str, file: &str) -> Result<Mission, MissionError> {
        // Editors may start a file with a UTF-8 byte-order mark.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let first = text.trim_start();
        let m = if first.starts_with('{') {
            plan::parse(text, file)
        } else if first.starts_with("QGC WPL") {
            wpl::parse(text, file)
        } else {
            Err(MissionError::Format {
                file: file.to_string(),
                message: "not a QGroundControl .plan (JSON) or 'QGC WPL 110' file".into(),
            })
        }?;
        m.check_positions(file)?;
        Ok(m)
    }

    /// Refuses positions no vehicle can fly to: a latitude outside ±90°, a
    /// longitude outside ±180°, an altitude beyond [`MAX_ALTITUDE_M`] (what a
    /// vehicle would refuse over MAVLink too).
    fn check_positions(&self, file: &str) -> Result<(), MissionError> {
        let bad = |what: String| MissionError::Format {
            file: file.to_string(),
            message: what,
        };
        if let Some(h) = self.home {
            let why = position_problem(h.lat_deg, h.lon_deg, h.alt_m)
                .or_else(|| mavsitl_core::geo::home_alt_problem(h.alt_m));
            if let Some(why) = why {
                return Err(bad(format!("planned home: {why}")));
            }
        }
        let lists = [
            ("mission item", &self.items),
            ("geofence item", &self.fence),
            ("rally point", &self.rally),
        ];
        for (name, list) in lists {
            for (i, it) in list.iter().enumerate() {
                // No position ("here", for take-off and land): 0/0 or NaN/NaN.
                let zero = (it.x == 0.0 && it.y == 0.0) || (it.x.is_nan() && it.y.is_nan());
                if !it.is_global() || zero {
                    continue;
                }
                if let Some(why) = position_problem(it.x, it.y, it.z) {
                    return Err(bad(format!(
                        "{name} {i} ({}): {why}",
                        commands::command_name(it.command)
                    )));
                }
            }
        }
        Ok(())
    }
}

/// Largest altitude a mission may name, m (AMSL or above home): above any
/// mountain and any airspace a drone may use.
pub const MAX_ALTITUDE_M: f64 = 100_000.0;

/// A number as a person wrote it: 91, 1e300 (not 300 digits).
fn short(x: f64) -> String {
    if x.is_finite() && x.abs() >= 1e6 {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

fn position_problem(lat: f64, lon: f64, alt: f64) -> Option<String> {
    if !(-90.0..=90.0).contains(&lat) {
        return Some(format!("latitude {} is outside -90..90", short(lat)));
    }
    if !(-180.0..=180.0).contains(&lon) {
        return Some(format!("longitude {} is outside -180..180", short(lon)));
    }
    if !(alt.is_finite() && alt.abs() <= MAX_ALTITUDE_M) {
        return Some(format!(
            "altitude {} m is beyond ±{MAX_ALTITUDE_M} m",
            short(alt)
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use mavsitl_core::geo::{GeoPoint, LocalFrame};
    use nalgebra::{Vector2, Vector3};

    /// The global frames (MAV_FRAME 0, 3, 10 and their _INT forms 5, 6,
    /// 11) carry latitude and longitude; the local and mission ones do not.
    #[test]
    fn global_frames_are_the_latitude_longitude_ones() {
        let with = |frame: u8| MissionItem {
            frame,
            ..MissionItem::waypoint(0.0, 0.0, 0.0)
        };
        for f in [0, 3, 10, 5, 6, 11] {
            assert!(with(f).is_global(), "frame {f}");
        }
        for f in [1, 2, 4, 7, 8, 9, 12] {
            assert!(!with(f).is_global(), "frame {f}");
        }
    }

    /// Positions are checked in the global frames unless they are "here"
    /// (0/0 or NaN/NaN): a latitude of 0 with a longitude of 200 is not
    /// "here", nor a latitude of 95 with a longitude of 0.
    #[test]
    fn positions_are_checked_unless_they_say_here() {
        let check = |frame: u8, x: f64, y: f64| {
            let plan = Mission {
                items: vec![MissionItem {
                    frame,
                    ..MissionItem::waypoint(x, y, 10.0)
                }],
                ..Default::default()
            };
            plan.check_positions("p.plan").map_err(|e| e.to_string())
        };
        assert_eq!(check(3, 0.0, 0.0), Ok(()));
        assert_eq!(check(3, f64::NAN, f64::NAN), Ok(()));
        assert_eq!(check(2, 95.0, 0.0), Ok(()));
        assert_eq!(check(3, 47.0, 8.0), Ok(()));
        assert_eq!(
            check(3, 0.0, 200.0),
            Err(
                "p.plan: mission item 0 (MAV_CMD_NAV_WAYPOINT): longitude 200 is outside -180..180"
                    .into()
            )
        );
        assert_eq!(
            check(3, 95.0, 0.0),
            Err(
                "p.plan: mission item 0 (MAV_CMD_NAV_WAYPOINT): latitude 95 is outside -90..90"
                    .into()
            )
        );
        assert!(check(3, f64::NAN, 8.0).is_err());
        assert!(check(3, 47.0, f64::NAN).is_err());
    }

    /// A file is read and parsed, and one that cannot be read is named.
    #[test]
    fn a_plan_file_loads_or_names_itself() {
        let dir = std::env::temp_dir().join(format!("mavsitl-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("m.waypoints");
        std::fs::write(
            &path,
            "QGC WPL 110\n0\t1\t0\t16\t0\t0\t0\t0\t47.3977\t8.5456\t488\t1\n\
             1\t0\t3\t16\t0\t0\t0\t0\t47.3986\t8.5456\t10\t1\n",
        )
        .expect("write");
        let m = Mission::load(&path);
        let missing = Mission::load(&dir.join("none.plan"));
        let _ = std::fs::remove_dir_all(&dir);
        let m = m.expect("a WPL file");
        assert_eq!(m.items.len(), 1);
        assert_eq!((m.items[0].x, m.items[0].z), (47.3986, 10.0));
        let e = missing.expect_err("no file").to_string();
        assert!(e.contains("none.plan: cannot read: "), "{e}");
    }

    /// Every positioned item, fence vertex, rally point and the home move
    /// by (10, −20) m; items without a position and the plan's other
    /// figures stay.
    #[test]
    fn a_translated_plan_moves_every_position_and_nothing_else() {
        let home = GeoPoint::from_deg(47.3977, 8.5456, 488.0);
        let frame = LocalFrame::new(home);
        let at = |n: f64, e: f64, cmd: u16| {
            let g = frame.to_geodetic(&Vector3::new(n, e, -10.0));
            MissionItem {
                command: cmd,
                ..MissionItem::waypoint(g.lat_deg(), g.lon_deg(), 10.0)
            }
        };
        let speed = MissionItem {
            command: commands::DO_CHANGE_SPEED,
            frame: FRAME_MISSION,
            x: 3.0,
            y: 4.0,
            params: [1.0, 2.0, 3.0, 4.0],
            ..MissionItem::waypoint(0.0, 0.0, 0.0)
        };
        let rtl = MissionItem {
            command: commands::NAV_RETURN_TO_LAUNCH,
            params: [0.0; 4],
            ..MissionItem::waypoint(0.0, 0.0, 0.0)
        };
        // On the prime meridian: a longitude of 0 is still a position.
        let meridian = MissionItem::waypoint(47.3977, 0.0, 10.0);
        let plan = Mission {
            items: vec![at(100.0, 0.0, commands::NAV_WAYPOINT), speed, rtl, meridian],
            home: Some(PlanHome {
                lat_deg: home.lat_deg(),
                lon_deg: home.lon_deg(),
                alt_m: 488.0,
            }),
            fence: vec![at(
                -50.0,
                50.0,
                commands::NAV_FENCE_POLYGON_VERTEX_INCLUSION,
            )],
            rally: vec![at(30.0, 40.0, commands::NAV_RALLY_POINT)],
            cruise_speed_m_s: Some(4.5),
            hover_speed_m_s: Some(5.5),
            vehicle_type: Some(2),
        };
        let moved = plan.translated(&frame, Vector2::new(10.0, -20.0));
        let ned = |it: &MissionItem| frame.to_ned(&GeoPoint::from_deg(it.x, it.y, 488.0));
        let shift = |a: &MissionItem, b: &MissionItem| ned(b) - ned(a);
        for (a, b) in [
            (&plan.items[0], &moved.items[0]),
            (&plan.fence[0], &moved.fence[0]),
            (&plan.rally[0], &moved.rally[0]),
        ] {
            let d = shift(a, b);
            assert!((d.xy() - Vector2::new(10.0, -20.0)).norm() < 1e-3, "{d}");
            assert_eq!((b.z, b.command), (a.z, a.command));
        }
        let (a, b) = (&plan.items[3], &moved.items[3]);
        assert!(
            (b.y - a.y).abs() > 1e-5 && (b.x - a.x).abs() > 5e-5,
            "{b:?}"
        );
        assert_eq!(moved.items[1], speed);
        assert_eq!(moved.items[2], rtl);
        let h = moved.home.expect("home");
        let d = frame.to_ned(&GeoPoint::from_deg(h.lat_deg, h.lon_deg, 488.0));
        assert!((d.xy() - Vector2::new(10.0, -20.0)).norm() < 1e-3, "{d}");
        assert_eq!(h.alt_m, 488.0);
        assert_eq!(
            (
                moved.cruise_speed_m_s,
                moved.hover_speed_m_s,
                moved.vehicle_type
            ),
            (Some(4.5), Some(5.5), Some(2))
        );
    }
}
