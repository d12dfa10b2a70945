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
        matches!(
            self.frame,
            FRAME_GLOBAL | FRAME_GLOBAL_RELATIVE_ALT | FRAME_GLOBAL_TERRAIN_ALT | 5 | 6 | 11
        )
    }
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
