//! Export-edge frame conversions: NED/FRD → ENU/FLU (ROS REP-103) and ISO 8855.
//!
//! Inside the simulation the world frame is NED and the body frame FRD. These
//! functions exist only for writing recordings in the frame a user's tools want:
//!
//! | export | world axes (x, y, z) | body axes (x, y, z) |
//! |---|---|---|
//! | `ned` | north, east, down | forward, right, down |
//! | `enu` (ROS REP-103) | east, north, up | forward, left, up (FLU) |
//! | `iso8855` | north, west, up | forward, left, up |
//!
//! Quaternions are body → world, scalar first.

use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

/// The frame a recording is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExportFrame {
    /// World north-east-down, body forward-right-down (the simulation's own).
    #[default]
    Ned,
    /// World east-north-up, body forward-left-up (ROS REP-103).
    Enu,
    /// World north-west-up, body forward-left-up (ISO 8855 vehicle axes).
    Iso8855,
}

impl ExportFrame {
    /// Name of the world axes, for file headers.
    pub fn world_axes(self) -> &'static str {
        match self {
            ExportFrame::Ned => "NED (x north, y east, z down)",
            ExportFrame::Enu => "ENU (x east, y north, z up)",
            ExportFrame::Iso8855 => "NWU (x north, y west, z up)",
        }
    }

    /// Name of the body axes, for file headers.
    pub fn body_axes(self) -> &'static str {
        match self {
            ExportFrame::Ned => "FRD (x forward, y right, z down)",
            ExportFrame::Enu | ExportFrame::Iso8855 => "FLU (x forward, y left, z up)",
        }
    }

    /// A world-frame vector (position, velocity) from NED into this frame.
    pub fn world_vector(self, v_ned: &Vector3<f64>) -> Vector3<f64> {
        match self {
            ExportFrame::Ned => *v_ned,
            ExportFrame::Enu => ned_to_enu(v_ned),
            ExportFrame::Iso8855 => Vector3::new(v_ned.x, -v_ned.y, -v_ned.z),
        }
    }

    /// A body-frame vector (rates, specific force) from FRD into this frame's body axes.
    pub fn body_vector(self, v_frd: &Vector3<f64>) -> Vector3<f64> {
        match self {
            ExportFrame::Ned => *v_frd,
            ExportFrame::Enu | ExportFrame::Iso8855 => frd_to_flu(v_frd),
        }
    }

    /// An attitude (FRD body → NED world) as this frame's body → world quaternion.
    pub fn attitude(self, q_ned_frd: &UnitQuaternion<f64>) -> UnitQuaternion<f64> {
        match self {
            ExportFrame::Ned => *q_ned_frd,
            ExportFrame::Enu => q_enu_flu(q_ned_frd),
            ExportFrame::Iso8855 => {
                // NWU ← NED is a rotation of π about x; FRD → FLU likewise.
                // Written with its inverse on the right, a level attitude
                // comes out as +1, not as −1 (the same rotation).
                let rx = x_pi();
                rx * q_ned_frd * rx.inverse()
            }
        }
    }
}

/// π about x: maps NED ↔ NWU and FRD ↔ FLU.
fn x_pi() -> UnitQuaternion<f64> {
    UnitQuaternion::new_unchecked(Quaternion::new(0.0, 1.0, 0.0, 0.0))
}

/// NED vector → ENU vector.
pub fn ned_to_enu(v: &Vector3<f64>) -> Vector3<f64> {
    Vector3::new(v.y, v.x, -v.z)
}

/// ENU vector → NED vector.
pub fn enu_to_ned(v: &Vector3<f64>) -> Vector3<f64> {
    Vector3::new(v.y, v.x, -v.z)
}

/// FRD body vector → FLU body vector.
pub fn frd_to_flu(v: &Vector3<f64>) -> Vector3<f64> {
    Vector3::new(v.x, -v.y, -v.z)
}

/// Attitude FRD→NED to attitude FLU→ENU: q_ENU_FLU = q_ENU_NED ⊗ q_NED_FRD ⊗ q_FRD_FLU.
pub fn q_enu_flu(q_ned_frd: &UnitQuaternion<f64>) -> UnitQuaternion<f64> {
    // ENU ← NED: swap x/y and negate z, a rotation of π about (1,1,0)/√2.
    let s = std::f64::consts::FRAC_1_SQRT_2;
    let q_enu_ned = UnitQuaternion::new_unchecked(Quaternion::new(0.0, s, s, 0.0));
    // FLU → FRD is π about x; as its inverse, a level attitude comes out
    // with a positive scalar part.
    q_enu_ned * q_ned_frd * x_pi().inverse()
}

#[cfg(test)]
mod tests {
    /// In ISO 8855 axes (z up) a level vehicle is the identity, with a
    /// positive scalar part; one headed 30° east of north is yawed −30°
    /// about z-up.
    #[test]
    fn iso8855_attitudes_turn_the_other_way_about_z_up() {
        let level = ExportFrame::Iso8855.attitude(&UnitQuaternion::identity());
        assert_eq!(level.coords, UnitQuaternion::<f64>::identity().coords);
        let east = UnitQuaternion::from_euler_angles(0.0, 0.0, 30f64.to_radians());
        let q = ExportFrame::Iso8855.attitude(&east);
        let want = UnitQuaternion::from_euler_angles(0.0, 0.0, -30f64.to_radians());
        assert!((q.coords - want.coords).norm() < 1e-12, "{q:?}");
    }

    /// The axes' names head every recording, and readers tell the frame
    /// by their first word.
    #[test]
    fn each_frame_names_its_axes() {
        let names = |f: ExportFrame| (f.world_axes(), f.body_axes());
        assert_eq!(
            names(ExportFrame::Ned),
            (
                "NED (x north, y east, z down)",
                "FRD (x forward, y right, z down)"
            )
        );
        assert_eq!(
            names(ExportFrame::Enu),
            (
                "ENU (x east, y north, z up)",
                "FLU (x forward, y left, z up)"
            )
        );
        assert_eq!(
            names(ExportFrame::Iso8855),
            (
                "NWU (x north, y west, z up)",
                "FLU (x forward, y left, z up)"
            )
        );
    }

    use super::*;

    fn check_consistent(frame: ExportFrame) {
        // For any attitude and body vector, rotating in our frames then exporting
        // equals exporting then rotating in the exported frames.
        let q = UnitQuaternion::from_euler_angles(0.3, -0.2, 1.1);
        let v_frd = Vector3::new(1.0, 2.0, -3.0);
        let lhs = frame.world_vector(&(q * v_frd));
        let rhs = frame.attitude(&q) * frame.body_vector(&v_frd);
        assert!((lhs - rhs).norm() < 1e-12, "{frame:?}: {lhs} vs {rhs}");
    }

    #[test]
    fn exports_are_consistent_rotations() {
        check_consistent(ExportFrame::Ned);
        check_consistent(ExportFrame::Enu);
        check_consistent(ExportFrame::Iso8855);
    }

    #[test]
    fn rep103_heading_convention() {
        // Facing north in NED (yaw 0) is yaw +90° in ENU (x east, counter-clockwise).
        let q = ExportFrame::Enu.attitude(&UnitQuaternion::identity());
        let (_, _, yaw) = q.euler_angles();
        assert!((yaw - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
        // As a quaternion, cos 45° + sin 45° k: its scalar part positive.
        let s = std::f64::consts::FRAC_1_SQRT_2;
        assert!(
            (q.coords - nalgebra::Vector4::new(0.0, 0.0, s, s)).norm() < 1e-12,
            "{q:?}"
        );
        // Facing east in NED (yaw +90°) is yaw 0 in ENU.
        let q = ExportFrame::Enu.attitude(&UnitQuaternion::from_euler_angles(
            0.0,
            0.0,
            std::f64::consts::FRAC_PI_2,
        ));
        assert!(q.euler_angles().2.abs() < 1e-12);
        assert_eq!(
            ned_to_enu(&Vector3::new(1.0, 2.0, 3.0)),
            Vector3::new(2.0, 1.0, -3.0)
        );
        assert_eq!(
            enu_to_ned(&ned_to_enu(&Vector3::new(1.0, 2.0, 3.0))),
            Vector3::new(1.0, 2.0, 3.0)
        );
    }

    #[test]
    fn level_attitude_maps_gravity_up() {
        // The specific force at rest, (0,0,-g) FRD, is +g along FLU z.
        let f = ExportFrame::Enu.body_vector(&Vector3::new(0.0, 0.0, -9.81));
        assert_eq!(f, Vector3::new(0.0, 0.0, 9.81));
    }
}
