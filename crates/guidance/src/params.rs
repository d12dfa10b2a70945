//! ArduPilot parameter names for the guidance parameters, so values from a
//! Rover parameter file (`NAME VALUE` lines, or MAVProxy/QGC `.param` files)
//! carry over unchanged.

use super::attitude_control::AttitudeParams;
use super::driver::RoverParams;
use super::motors::MotorsParams;
use super::pos_control::PosControlParams;
use super::wpnav::WpNavParams;

/// All guidance parameters together.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GuidanceParams {
    /// `WP_*`.
    pub wp: WpNavParams,
    /// `PSC_*`.
    pub psc: PosControlParams,
    /// `ATC_*`.
    pub atc: AttitudeParams,
    /// `CRUISE_*`, `TURN_RADIUS`, `LOIT_*`, `GUID_OPTIONS`.
    pub rover: RoverParams,
    /// `MOT_*`.
    pub mot: MotorsParams,
}

/// Why a parameter was not applied.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParamSetError {
    /// Not a guidance parameter.
    #[error("unknown parameter {0}")]
    Unknown(String),
    /// Not a finite number.
    #[error("{name}: {value} is not a finite number")]
    NotFinite {
        /// Parameter.
        name: String,
        /// Value given.
        value: f64,
    },
}

macro_rules! table {
    ($($name:literal => |$p:ident, $v:ident| $set:expr, |$q:ident| $get:expr;)*) => {
        /// Every parameter name this module knows, in ArduPilot spelling.
        pub const NAMES: &[&str] = &[$($name),*];

        impl GuidanceParams {
            /// Sets parameter `name` (ArduPilot spelling, case-insensitive) to `value`.
            ///
            /// # Errors
            /// [`ParamSetError`] for an unknown name or a non-finite value.
            pub fn set(&mut self, name: &str, value: f64) -> Result<(), ParamSetError> {
                if !value.is_finite() {
                    return Err(ParamSetError::NotFinite { name: name.to_string(), value });
                }
                let upper = name.to_ascii_uppercase();
                match upper.as_str() {
                    $($name => { let $p = &mut *self; let $v = value; $set; Ok(()) })*
                    _ => Err(ParamSetError::Unknown(name.to_string())),
                }
            }

            /// The value of parameter `name`, if known.
            pub fn get(&self, name: &str) -> Option<f64> {
                // (Compared without upper-casing a copy: called every cycle.)
                $(if name.eq_ignore_ascii_case($name) {
                    let $q = self;
                    return Some($get);
                })*
                None
            }
        }
    };
}

table! {
    "WP_SPEED" => |p, v| p.wp.speed = v, |q| q.wp.speed;
    "WP_RADIUS" => |p, v| p.wp.radius = v, |q| q.wp.radius;
    "WP_ACCEL" => |p, v| p.wp.accel = v, |q| q.wp.accel;
    "WP_JERK" => |p, v| p.wp.jerk = v, |q| q.wp.jerk;
    "WP_PIVOT_ANGLE" => |p, v| p.wp.pivot_angle = v, |q| q.wp.pivot_angle;
    "WP_PIVOT_RATE" => |p, v| p.wp.pivot_rate = v, |q| q.wp.pivot_rate;
    "WP_PIVOT_DELAY" => |p, v| p.wp.pivot_delay = v, |q| q.wp.pivot_delay;
    "PSC_POS_P" => |p, v| p.psc.pos_p = v, |q| q.psc.pos_p;
    "PSC_VEL_P" => |p, v| p.psc.vel_p = v, |q| q.psc.vel_p;
    "PSC_VEL_I" => |p, v| p.psc.vel_i = v, |q| q.psc.vel_i;
    "PSC_VEL_D" => |p, v| p.psc.vel_d = v, |q| q.psc.vel_d;
    "PSC_VEL_FF" => |p, v| p.psc.vel_ff = v, |q| q.psc.vel_ff;
    "PSC_VEL_IMAX" => |p, v| p.psc.vel_imax = v, |q| q.psc.vel_imax;
    "PSC_VEL_FLTE" => |p, v| p.psc.vel_flte = v, |q| q.psc.vel_flte;
    "PSC_VEL_FLTD" => |p, v| p.psc.vel_fltd = v, |q| q.psc.vel_fltd;
    "ATC_STR_RAT_P" => |p, v| p.atc.str_rat_p = v, |q| q.atc.str_rat_p;
    "ATC_STR_RAT_I" => |p, v| p.atc.str_rat_i = v, |q| q.atc.str_rat_i;
    "ATC_STR_RAT_D" => |p, v| p.atc.str_rat_d = v, |q| q.atc.str_rat_d;
    "ATC_STR_RAT_FF" => |p, v| p.atc.str_rat_ff = v, |q| q.atc.str_rat_ff;
    "ATC_STR_RAT_IMAX" => |p, v| p.atc.str_rat_imax = v, |q| q.atc.str_rat_imax;
    "ATC_STR_RAT_FLTT" => |p, v| p.atc.str_rat_fltt = v, |q| q.atc.str_rat_fltt;
    "ATC_STR_RAT_FLTE" => |p, v| p.atc.str_rat_flte = v, |q| q.atc.str_rat_flte;
    "ATC_STR_RAT_FLTD" => |p, v| p.atc.str_rat_fltd = v, |q| q.atc.str_rat_fltd;
    "ATC_STR_RAT_SMAX" => |p, v| p.atc.str_rat_smax = v.abs(), |q| q.atc.str_rat_smax;
    "ATC_STR_ANG_P" => |p, v| p.atc.str_ang_p = v, |q| q.atc.str_ang_p;
    "ATC_STR_ACC_MAX" => |p, v| p.atc.str_acc_max = v, |q| q.atc.str_acc_max;
    "ATC_STR_DEC_MAX" => |p, v| p.atc.str_dec_max = v, |q| q.atc.str_dec_max;
    "ATC_STR_RAT_MAX" => |p, v| p.atc.str_rat_max = v, |q| q.atc.str_rat_max;
    "ATC_SPEED_P" => |p, v| p.atc.speed_p = v, |q| q.atc.speed_p;
    "ATC_SPEED_I" => |p, v| p.atc.speed_i = v, |q| q.atc.speed_i;
    "ATC_SPEED_D" => |p, v| p.atc.speed_d = v, |q| q.atc.speed_d;
    "ATC_SPEED_FF" => |p, v| p.atc.speed_ff = v, |q| q.atc.speed_ff;
    "ATC_SPEED_IMAX" => |p, v| p.atc.speed_imax = v, |q| q.atc.speed_imax;
    "ATC_SPEED_FLTE" => |p, v| p.atc.speed_flte = v, |q| q.atc.speed_flte;
    "ATC_SPEED_SMAX" => |p, v| p.atc.speed_smax = v.abs(), |q| q.atc.speed_smax;
    "ATC_ACCEL_MAX" => |p, v| p.atc.accel_max = v, |q| q.atc.accel_max;
    "ATC_DECEL_MAX" => |p, v| p.atc.decel_max = v, |q| q.atc.decel_max;
    "ATC_BRAKE" => |p, v| p.atc.brake = v != 0.0, |q| if q.atc.brake { 1.0 } else { 0.0 };
    "ATC_STOP_SPEED" => |p, v| p.atc.stop_speed = v, |q| q.atc.stop_speed;
    "ATC_TURN_MAX_G" => |p, v| p.atc.turn_max_g = v, |q| q.atc.turn_max_g;
    "CRUISE_SPEED" => |p, v| p.rover.cruise_speed = v, |q| q.rover.cruise_speed;
    "CRUISE_THROTTLE" => |p, v| p.rover.cruise_throttle = v / 100.0, |q| q.rover.cruise_throttle * 100.0;
    "TURN_RADIUS" => |p, v| p.rover.turn_radius = v, |q| q.rover.turn_radius;
    "LOIT_RADIUS" => |p, v| p.rover.loit_radius = v, |q| q.rover.loit_radius;
    "LOIT_TYPE" => |p, v| p.rover.loit_type = v.clamp(0.0, 2.0) as u8, |q| f64::from(q.rover.loit_type);
    "LOIT_SPEED_GAIN" => |p, v| p.rover.loit_speed_gain = v, |q| q.rover.loit_speed_gain;
    "GUID_OPTIONS" => |p, v| p.rover.guid_options = v.max(0.0) as u32, |q| f64::from(q.rover.guid_options);
    "MOT_THR_MIN" => |p, v| p.mot.thr_min = v.clamp(0.0, 20.0), |q| q.mot.thr_min;
    "MOT_THR_MAX" => |p, v| p.mot.thr_max = v.clamp(30.0, 100.0), |q| q.mot.thr_max;
    "MOT_SLEWRATE" => |p, v| p.mot.slew_rate = v.clamp(0.0, 1000.0), |q| q.mot.slew_rate;
    "MOT_SPD_SCA_BASE" => |p, v| p.mot.spd_sca_base = v.clamp(0.0, 10.0), |q| q.mot.spd_sca_base;
    "MOT_STR_THR_MIX" => |p, v| p.mot.str_thr_mix = v.clamp(0.2, 1.0), |q| q.mot.str_thr_mix;
    "MOT_THST_ASYM" => |p, v| p.mot.thst_asym = v.clamp(1.0, 10.0), |q| q.mot.thst_asym;
    "MOT_THST_EXPO" => |p, v| p.mot.thst_expo = v.clamp(-1.0, 1.0), |q| q.mot.thst_expo;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rover_parm_values_carry_over() {
        // Lines of ArduPilot's Tools/autotest/default_params/rover.parm style.
        let file = "WP_RADIUS 3\nATC_STR_RAT_FF 0.75\nATC_SPEED_P 0.1\nCRUISE_SPEED 5\nCRUISE_THROTTLE 30\n";
        let mut p = GuidanceParams::default();
        for line in file.lines() {
            let mut it = line.split_whitespace();
            let (name, value) = (it.next().unwrap(), it.next().unwrap().parse().unwrap());
            p.set(name, value).unwrap();
        }
        assert_eq!(p.wp.radius, 3.0);
        assert_eq!(p.atc.str_rat_ff, 0.75);
        assert_eq!(p.rover.cruise_throttle, 0.3);
        assert_eq!(p.get("cruise_throttle"), Some(30.0));
        assert_eq!(
            p.set("WP_SPED", 1.0),
            Err(ParamSetError::Unknown("WP_SPED".into()))
        );
        assert!(p.set("WP_SPEED", f64::NAN).is_err());
        assert!(NAMES.iter().all(|n| p.get(n).is_some() && n.len() <= 16));
    }
}
