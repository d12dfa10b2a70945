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
        }
    }

    /// The everyday word, as `--vehicle` takes it and summaries' titles
    /// say it: "quad" or "boat".
    pub fn word(self) -> &'static str {
        match self {
            VehicleKind::Multirotor => "quad",
            VehicleKind::Boat => "boat",
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
    }

    #[test]
    fn names_are_the_scenario_spelling() {
        for k in [VehicleKind::Multirotor, VehicleKind::Boat] {
            let json = serde_json::to_string(&k).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", k.name()));
            assert_eq!(serde_json::from_str::<VehicleKind>(&json).ok(), Some(k));
        }
        assert!(VehicleKind::Multirotor.is_multirotor());
        assert!(!VehicleKind::Boat.is_multirotor());
    }
}
