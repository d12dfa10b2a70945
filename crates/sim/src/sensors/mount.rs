//! Where a sensor sits on the body and how it is turned.

use nalgebra::{UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

use mavsitl_core::param::ParamError;

/// A sensor's mount in the body frame (AirSim's X, Y, Z, Roll, Pitch, Yaw).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mount {
    /// Offset from the CG along FRD x, m.
    #[serde(default, alias = "X")]
    pub x_m: f64,
    /// Offset along FRD y, m.
    #[serde(default, alias = "Y")]
    pub y_m: f64,
    /// Offset along FRD z, m.
    #[serde(default, alias = "Z")]
    pub z_m: f64,
    /// Roll of the sensor axes relative to the body, deg.
    #[serde(default, alias = "Roll")]
    pub roll_deg: f64,
    /// Pitch of the sensor axes relative to the body, deg.
    #[serde(default, alias = "Pitch")]
    pub pitch_deg: f64,
    /// Yaw of the sensor axes relative to the body, deg.
    #[serde(default, alias = "Yaw")]
    pub yaw_deg: f64,
}

impl Mount {
    /// Offset from the CG, FRD, m.
    pub fn offset_frd_m(&self) -> Vector3<f64> {
        Vector3::new(self.x_m, self.y_m, self.z_m)
    }

    /// Rotation taking body (FRD) vectors into the sensor's axes.
    pub fn sensor_from_body(&self) -> UnitQuaternion<f64> {
        UnitQuaternion::from_euler_angles(
            self.roll_deg.to_radians(),
            self.pitch_deg.to_radians(),
            self.yaw_deg.to_radians(),
        )
        .inverse()
    }

    /// Checks that every value is finite.
    ///
    /// # Errors
    /// [`ParamError`] naming the field `mount`.
    pub fn validate(&self) -> Result<(), ParamError> {
        let finite = [
            self.x_m,
            self.y_m,
            self.z_m,
            self.roll_deg,
            self.pitch_deg,
            self.yaw_deg,
        ]
        .iter()
        .all(|v| v.is_finite());
        if finite {
            Ok(())
        } else {
            Err(ParamError {
                field: "mount".into(),
                problem: "values must be finite".into(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_rejects_any_non_finite_value() {
        assert!(Mount::default().validate().is_ok());
        let bad = Mount {
            yaw_deg: f64::NAN,
            ..Mount::default()
        };
        assert_eq!(bad.validate().map_err(|e| e.field), Err("mount".into()));
        let bad = Mount {
            x_m: f64::INFINITY,
            ..Mount::default()
        };
        assert!(bad.validate().is_err());
    }
}
