//! The class of a vehicle: what every layer above the physics decides by —
//! the MAVLink type a ground station sees, the guidance that flies it, the
//! firmware that can, the acceptance radius a route is judged with.

use serde::{Deserialize, Serialize};

/// What kind of vehicle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VehicleKind {
    /// A multirotor (quad, hexa, octo).
    Multirotor,
    /// A surface boat.
    Boat,
    /// A ground rover on wheels (skid-steer or Ackermann).
    Rover,
}

impl VehicleKind {
    /// Whether it flies (a multirotor) rather than drives on a surface.
    pub fn is_multirotor(self) -> bool {
        matches!(self, VehicleKind::Multirotor)
    }

    /// Lower-case name, as in scenarios and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            VehicleKind::Multirotor => "multirotor",
            VehicleKind::Boat => "boat",
            VehicleKind::Rover => "rover",
        }
    }

    /// The everyday word, as `--vehicle` takes it and summaries' titles
    /// say it: "quad", "boat" or "rover".
    pub fn word(self) -> &'static str {
        match self {
            VehicleKind::Multirotor => "quad",
            VehicleKind::Boat => "boat",
            VehicleKind::Rover => "rover",
        }
    }
}

/// Why firmware parameters name a frame that is not a vehicle of `kind`'s,
/// if they do: ArduPilot Rover's `FRAME_CLASS` (1 a rover, 2 a boat; a
/// multirotor's is Copter's, not checked here) and PX4's `SYS_AUTOSTART`
/// (a ground vehicle, rover or boat, flies one of PX4's rover airframes,
/// 50000–59999 or the Gazebo rovers 4009, 4011 and 4012; a multirotor
/// none of them). `params` are (name, value) pairs, names in any case.
pub fn frame_problem<'a>(
    params: impl IntoIterator<Item = (&'a str, &'a str)>,
    kind: VehicleKind,
) -> Option<String> {
    for (name, value) in params {
        let Ok(v) = value.trim().parse::<f64>() else {
            continue;
        };
        match name.to_ascii_uppercase().as_str() {
            "FRAME_CLASS" => {
                let want = match kind {
                    VehicleKind::Rover => 1.0,
                    VehicleKind::Boat => 2.0,
                    VehicleKind::Multirotor => continue,
                };
                if v != want {
                    return Some(format!(
                        "FRAME_CLASS {v} is not a {}'s: ArduPilot Rover's frame class is {want} for a {} (1 rover, 2 boat)",
                        kind.word(),
                        kind.word()
                    ));
                }
            }
            "SYS_AUTOSTART" => {
                let rover_airframe =
                    (50_000.0..60_000.0).contains(&v) || [4009.0, 4011.0, 4012.0].contains(&v);
                if rover_airframe == kind.is_multirotor() {
                    let wanted = if kind.is_multirotor() {
                        "a multirotor airframe"
                    } else {
                        "one of PX4's rover airframes (50000-59999, 4009, 4011, 4012)"
                    };
                    return Some(format!(
                        "SYS_AUTOSTART {v} is not a {}'s airframe: a {} needs {wanted}",
                        kind.word(),
                        kind.word()
                    ));
                }
            }
            _ => {}
        }
    }
    None
}

/// The vehicles a flight without a scenario can be (`--vehicle`, a suite
/// case's `vehicle`): each class's shipped airframe, and a rover of either
/// drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BuiltinVehicle {
    /// The generic quad (AirSim's SimpleFlight "Generic").
    Quad,
    /// The twin-thruster USV.
    Boat,
    /// The skid-steer rover (Clearpath's Jackal).
    RoverSkid,
    /// The Ackermann rover (the F1TENTH car).
    RoverAckermann,
}

impl BuiltinVehicle {
    /// Every one, in the order `--vehicle` lists them.
    pub const ALL: [BuiltinVehicle; 4] = [
        BuiltinVehicle::Quad,
        BuiltinVehicle::Boat,
        BuiltinVehicle::RoverSkid,
        BuiltinVehicle::RoverAckermann,
    ];

    /// Its class.
    pub fn kind(self) -> VehicleKind {
        match self {
            BuiltinVehicle::Quad => VehicleKind::Multirotor,
            BuiltinVehicle::Boat => VehicleKind::Boat,
            BuiltinVehicle::RoverSkid | BuiltinVehicle::RoverAckermann => VehicleKind::Rover,
        }
    }

    /// As `--vehicle` takes it: quad, boat, rover_skid or rover_ackermann.
    pub fn word(self) -> &'static str {
        match self {
            BuiltinVehicle::Quad => "quad",
            BuiltinVehicle::Boat => "boat",
            BuiltinVehicle::RoverSkid => "rover_skid",
            BuiltinVehicle::RoverAckermann => "rover_ackermann",
        }
    }

    /// Its shipped airframe.
    pub fn airframe(self) -> &'static str {
        match self {
            BuiltinVehicle::Quad => "generic_quad",
            BuiltinVehicle::Boat => "usv_twin",
            BuiltinVehicle::RoverSkid => "jackal",
            BuiltinVehicle::RoverAckermann => "f1tenth",
        }
    }

    /// The one a plan's vehicle type (MAVLink's MAV_TYPE, as QGroundControl
    /// saves it) asks for: 10 (ground rover) the skid-steer rover, 11 and
    /// 12 (surface boat, submarine) the boat, anything else the quad.
    pub fn of_plan(vehicle_type: Option<u8>) -> Self {
        match vehicle_type {
            Some(10) => BuiltinVehicle::RoverSkid,
            Some(11 | 12) => BuiltinVehicle::Boat,
            _ => BuiltinVehicle::Quad,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_the_command_lines() {
        assert_eq!(VehicleKind::Multirotor.word(), "quad");
        assert_eq!(VehicleKind::Boat.word(), "boat");
        assert_eq!(VehicleKind::Rover.word(), "rover");
    }

    #[test]
    fn names_are_the_scenario_spelling() {
        for k in [
            VehicleKind::Multirotor,
            VehicleKind::Boat,
            VehicleKind::Rover,
        ] {
            let json = serde_json::to_string(&k).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", k.name()));
            assert_eq!(serde_json::from_str::<VehicleKind>(&json).ok(), Some(k));
        }
        assert!(VehicleKind::Multirotor.is_multirotor());
        assert!(!VehicleKind::Boat.is_multirotor());
        assert!(!VehicleKind::Rover.is_multirotor());
    }

    /// Each built-in vehicle by its word, of its class; a plan's vehicle
    /// type picks the rover, the boat or the quad.
    #[test]
    fn builtin_vehicles_are_their_words_and_classes() {
        let words: Vec<&str> = BuiltinVehicle::ALL.iter().map(|v| v.word()).collect();
        assert_eq!(words, ["quad", "boat", "rover_skid", "rover_ackermann"]);
        for v in BuiltinVehicle::ALL {
            let json = serde_json::to_string(&v).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", v.word()));
        }
        let kinds: Vec<VehicleKind> = BuiltinVehicle::ALL.iter().map(|v| v.kind()).collect();
        use VehicleKind::*;
        assert_eq!(kinds, [Multirotor, Boat, Rover, Rover]);
        let airframes: Vec<&str> = BuiltinVehicle::ALL.iter().map(|v| v.airframe()).collect();
        assert_eq!(airframes, ["generic_quad", "usv_twin", "jackal", "f1tenth"]);
        let plan = |t| BuiltinVehicle::of_plan(t);
        assert_eq!(plan(Some(10)), BuiltinVehicle::RoverSkid);
        assert_eq!(
            (plan(Some(11)), plan(Some(12))),
            (BuiltinVehicle::Boat, BuiltinVehicle::Boat)
        );
        assert_eq!(
            (plan(Some(2)), plan(Some(9)), plan(Some(13)), plan(None)),
            (
                BuiltinVehicle::Quad,
                BuiltinVehicle::Quad,
                BuiltinVehicle::Quad,
                BuiltinVehicle::Quad
            )
        );
    }

    /// A rover's FRAME_CLASS is 1 and a boat's 2; a ground vehicle's
    /// SYS_AUTOSTART one of PX4's rover airframes, a multirotor's none of
    /// them; other parameters and values that are not numbers pass.
    #[test]
    fn a_firmware_frame_must_be_the_vehicles() {
        use VehicleKind::*;
        let p = |n: &'static str, v: &'static str| vec![(n, v)];
        assert_eq!(frame_problem(p("FRAME_CLASS", "1"), Rover), None);
        assert_eq!(frame_problem(p("frame_class", "2"), Boat), None);
        assert_eq!(frame_problem(p("FRAME_CLASS", "2"), Multirotor), None);
        let e = frame_problem(p("FRAME_CLASS", "2"), Rover).expect("a boat's");
        assert!(
            e.starts_with("FRAME_CLASS 2 is not a rover's") && e.contains("is 1 for a rover"),
            "{e}"
        );
        assert!(frame_problem(p("FRAME_CLASS", "1"), Boat).is_some());
        for (v, ok_for_rover) in [
            ("50000", true),
            ("59999", true),
            ("4012", true),
            ("4009", true),
            ("4011", true),
            ("60000", false),
            ("4001", false),
            ("10016", false),
            ("49999", false),
            ("4010", false),
        ] {
            assert_eq!(
                frame_problem(p("SYS_AUTOSTART", v), Rover).is_none(),
                ok_for_rover,
                "{v}"
            );
            assert_eq!(
                frame_problem(p("SYS_AUTOSTART", v), Boat).is_none(),
                ok_for_rover,
                "{v}"
            );
            assert_eq!(
                frame_problem(p("SYS_AUTOSTART", v), Multirotor).is_none(),
                !ok_for_rover,
                "{v}"
            );
        }
        let e = frame_problem(p("SYS_AUTOSTART", "4001"), Rover).expect("a quad's");
        assert!(
            e.contains("a rover needs one of PX4's rover airframes"),
            "{e}"
        );
        assert_eq!(
            frame_problem(vec![("FRAME_CLASS", "x"), ("WP_SPEED", "2")], Rover),
            None
        );
    }
}
