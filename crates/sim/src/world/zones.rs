//! Zones: named regions that change the environment while a vehicle is inside.
//!
//! The idea of CARLA's friction trigger, generalised: a zone is a box or a
//! vertical cylinder in the local NED frame, and while a vehicle's centre of mass
//! is inside it overrides any of wind, water current, ground friction, a drag
//! scale and GPS availability. Leaving restores the values from outside. Where
//! zones overlap, the later one in the scenario wins for each value it sets.
//! Every entry and exit is reported as a [`ZoneEvent`] with its sim time.

use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

use super::wind::{CurrentSpec, WindSpec};
use mavsitl_core::time::SimTime;

/// The most zones a scenario may define (a vehicle's membership is a bit mask).
pub const MAX_ZONES: usize = 64;

/// The region a zone covers, in local NED metres.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ZoneShape {
    /// An axis-aligned box between two NED corners.
    Box {
        /// Corner with the smallest north, east and down, m.
        min_ned_m: [f64; 3],
        /// Corner with the largest north, east and down, m.
        max_ned_m: [f64; 3],
    },
    /// A vertical cylinder.
    Cylinder {
        /// Centre (north, east), m.
        center_ne_m: [f64; 2],
        /// Radius, m.
        radius_m: f64,
        /// Top of the cylinder as NED down (so −100 is 100 m above home), m.
        down_min_m: f64,
        /// Bottom of the cylinder as NED down, m.
        down_max_m: f64,
    },
}

impl ZoneShape {
    /// Whether an NED point (m) is inside (boundaries included).
    pub fn contains(&self, p: &Vector3<f64>) -> bool {
        match self {
            ZoneShape::Box {
                min_ned_m,
                max_ned_m,
            } => (0..3).all(|i| p[i] >= min_ned_m[i] && p[i] <= max_ned_m[i]),
            ZoneShape::Cylinder {
                center_ne_m,
                radius_m,
                down_min_m,
                down_max_m,
            } => {
                let dn = p.x - center_ne_m[0];
                let de = p.y - center_ne_m[1];
                dn * dn + de * de <= radius_m * radius_m && p.z >= *down_min_m && p.z <= *down_max_m
            }
        }
    }
}

/// A zone as written in a scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZoneSpec {
    /// Name used in logs and events.
    pub name: String,
    /// The region.
    pub shape: ZoneShape,
    /// Mean wind inside (replaces the scenario's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wind: Option<WindSpec>,
    /// Water current inside (replaces the scenario's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<CurrentSpec>,
    /// Ground friction coefficient μ inside (replaces the airframe's), 0–2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ground_friction: Option<f64>,
    /// Multiplier on aerodynamic and hydrodynamic drag inside, 0–100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drag_scale: Option<f64>,
    /// GPS unavailable (no fix) inside.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gps_denied: Option<bool>,
}

/// Whether a vehicle entered or left a zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ZoneTransition {
    /// The vehicle is now inside.
    Enter,
    /// The vehicle is now outside.
    Exit,
}

/// One entry or exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ZoneEvent {
    /// When it happened (the first tick with the new membership).
    pub time: SimTime,
    /// Index of the vehicle in the simulation.
    pub vehicle: usize,
    /// Index of the zone in the scenario.
    pub zone: usize,
    /// Enter or exit.
    pub transition: ZoneTransition,
}

/// The set of zones of a world.
#[derive(Debug, Clone, Default)]
pub struct Zones {
    specs: Vec<ZoneSpec>,
}

impl Zones {
    /// Zones from their specs (at most [`MAX_ZONES`]; the scenario checks this).
    pub fn new(specs: Vec<ZoneSpec>) -> Self {
        Zones { specs }
    }

    /// The zone specs, in scenario order.
    pub fn specs(&self) -> &[ZoneSpec] {
        &self.specs
    }

    /// Bit mask of the zones containing `p` (bit i = zone i).
    pub fn membership(&self, p: &Vector3<f64>) -> u64 {
        self.specs
            .iter()
            .take(MAX_ZONES)
            .enumerate()
            .filter(|(_, z)| z.shape.contains(p))
            .fold(0u64, |m, (i, _)| m | (1 << i))
    }

    /// The zones in `mask`, in scenario order.
    pub fn active<'a>(&'a self, mask: u64) -> impl Iterator<Item = &'a ZoneSpec> + 'a {
        self.specs
            .iter()
            .take(MAX_ZONES)
            .enumerate()
            .filter(move |(i, _)| mask & (1 << i) != 0)
            .map(|(_, z)| z)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_contain_what_they_should() {
        let b = ZoneShape::Box {
            min_ned_m: [0.0, 0.0, -50.0],
            max_ned_m: [10.0, 20.0, 0.0],
        };
        assert!(b.contains(&Vector3::new(5.0, 5.0, -10.0)));
        assert!(b.contains(&Vector3::new(0.0, 20.0, 0.0)));
        assert!(!b.contains(&Vector3::new(5.0, 5.0, 1.0)));
        assert!(!b.contains(&Vector3::new(-0.1, 5.0, -1.0)));
        let c = ZoneShape::Cylinder {
            center_ne_m: [100.0, 0.0],
            radius_m: 10.0,
            down_min_m: -30.0,
            down_max_m: 0.0,
        };
        assert!(c.contains(&Vector3::new(107.0, 7.0, -5.0)));
        assert!(!c.contains(&Vector3::new(108.0, 7.0, -5.0)));
        assert!(!c.contains(&Vector3::new(100.0, 0.0, -31.0)));
    }

    /// Boundaries are inside, for every face of a box and the rim, top and
    /// bottom of a cylinder off the axes; a hair beyond each is outside.
    #[test]
    fn every_boundary_is_inside_and_a_hair_beyond_is_not() {
        let b = ZoneShape::Box {
            min_ned_m: [-4.0, 3.0, -50.0],
            max_ned_m: [10.0, 20.0, -2.0],
        };
        let mid = [3.0, 11.0, -20.0];
        let (lo, hi) = ([-4.0, 3.0, -50.0], [10.0, 20.0, -2.0]);
        for i in 0..3 {
            for (edge, out) in [(lo[i], lo[i] - 1e-9), (hi[i], hi[i] + 1e-9)] {
                let mut p = Vector3::from(mid);
                p[i] = edge;
                assert!(b.contains(&p), "{p} on a face");
                p[i] = out;
                assert!(!b.contains(&p), "{p} beyond a face");
            }
        }
        let c = ZoneShape::Cylinder {
            center_ne_m: [100.0, -40.0],
            radius_m: 10.0,
            down_min_m: -30.0,
            down_max_m: -5.0,
        };
        // On the rim: 6-8-10, on either side of the centre.
        for (n, e) in [(106.0, -32.0), (94.0, -48.0), (108.0, -34.0)] {
            assert!(c.contains(&Vector3::new(n, e, -10.0)), "{n} {e}");
        }
        assert!(!c.contains(&Vector3::new(106.0, -31.999, -10.0)));
        assert!(!c.contains(&Vector3::new(93.999, -48.0, -10.0)));
        for (z, inside) in [
            (-30.0, true),
            (-5.0, true),
            (-30.001, false),
            (-4.999, false),
        ] {
            assert_eq!(c.contains(&Vector3::new(100.0, -40.0, z)), inside, "{z}");
        }
    }

    #[test]
    fn membership_mask() {
        let z = |n: &str, x0: f64| ZoneSpec {
            name: n.into(),
            shape: ZoneShape::Box {
                min_ned_m: [x0, -1.0, -1.0],
                max_ned_m: [x0 + 2.0, 1.0, 1.0],
            },
            wind: None,
            current: None,
            ground_friction: None,
            drag_scale: None,
            gps_denied: None,
        };
        let zones = Zones::new(vec![z("a", 0.0), z("b", 1.0)]);
        assert_eq!(zones.membership(&Vector3::new(0.5, 0.0, 0.0)), 0b01);
        assert_eq!(zones.membership(&Vector3::new(1.5, 0.0, 0.0)), 0b11);
        assert_eq!(zones.membership(&Vector3::new(2.5, 0.0, 0.0)), 0b10);
        assert_eq!(
            zones
                .active(0b10)
                .map(|z| z.name.as_str())
                .collect::<Vec<_>>(),
            ["b"]
        );
    }
}
