//! The airframe files shipped with mavsitl, embedded at build time.
//!
//! Each airframe is a JSON file beside this module holding every number of its
//! params struct; a scenario picks one by name (or gives a path to its own file)
//! and overrides any field. Shipped:
//!
//! | name | kind | what |
//! |---|---|---|
//! | `generic_quad` | multirotor | AirSim's SimpleFlight "Generic" quad: 1 kg, 0.2275 m arms, GWS 9×5 props |
//! | `x500` | multirotor | PX4's x500 (Holybro X500 v2) as in PX4's Gazebo model: 2.064 kg, CA_ROTORn geometry |
//! | `usv_twin` | boat | 1.5 m, 25 kg USV with twin thrusters (PX4 boat layout), ~3 m/s top speed |
//! | `usv_rudder` | boat | the same hull with one thruster and a rudder (ArduPilot Rover motorboat layout) |

use super::boat::BoatParams;
use super::multirotor::MultirotorParams;

const GENERIC_QUAD: &str = include_str!("generic_quad.json");
const X500: &str = include_str!("x500.json");
const USV_TWIN: &str = include_str!("usv_twin.json");
const USV_RUDDER: &str = include_str!("usv_rudder.json");

/// Names of the shipped multirotor airframes.
pub const MULTIROTORS: &[&str] = &["generic_quad", "x500"];
/// Names of the shipped boat airframes.
pub const BOATS: &[&str] = &["usv_twin", "usv_rudder"];

/// The JSON text of a shipped airframe.
pub fn source(name: &str) -> Option<&'static str> {
    match name {
        "generic_quad" => Some(GENERIC_QUAD),
        "x500" => Some(X500),
        "usv_twin" => Some(USV_TWIN),
        "usv_rudder" => Some(USV_RUDDER),
        _ => None,
    }
}

/// A shipped multirotor airframe's params, or `None` for an unknown name.
pub fn multirotor(name: &str) -> Option<MultirotorParams> {
    MULTIROTORS
        .contains(&name)
        .then(|| source(name).and_then(|s| serde_json::from_str(s).ok()))
        .flatten()
}

/// A shipped boat airframe's params, or `None` for an unknown name.
pub fn boat(name: &str) -> Option<BoatParams> {
    BOATS
        .contains(&name)
        .then(|| source(name).and_then(|s| serde_json::from_str(s).ok()))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_airframe_parses_and_validates() {
        for name in MULTIROTORS {
            let text = source(name).unwrap();
            let p: MultirotorParams =
                serde_json::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            p.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        for name in BOATS {
            let text = source(name).unwrap();
            let p: BoatParams =
                serde_json::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            p.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        assert!(multirotor("usv_twin").is_none());
        assert!(boat("x500").is_none());
    }
}
