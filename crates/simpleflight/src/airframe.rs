//! What SimpleFlight is told about the vehicle it flies: the numbers a PX4
//! airframe file gives its control allocation and hover estimate (`CA_ROTOR*`,
//! mass, rotor thrust), or a boat's or a rover's output channels (PX4 `CA_*` /
//! ArduPilot `SERVOn_FUNCTION`).
//!
//! This is configuration, not state: SimpleFlight never sees the simulated
//! body. `autopilot::setup` fills it from the scenario's airframe, so by default
//! the autopilot is tuned for the vehicle it flies, as a user's parameter file
//! would be; nothing stops it being told something else.

use mavsitl_guidance::MotorOutputs;
use nalgebra::Vector2;

/// Most motors a multicopter configuration carries.
pub const MAX_MOTORS: usize = 8;

/// The vehicle SimpleFlight flies.
#[derive(Debug, Clone, PartialEq)]
pub enum VehicleConfig {
    /// A multicopter.
    Multirotor(MulticopterAirframe),
    /// A boat.
    Boat(UgvOutputs),
    /// A ground rover on wheels.
    Rover(UgvOutputs),
}

/// One motor of a multicopter, in PX4 motor order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MotorConfig {
    /// Position of the rotor relative to the CG, FRD x/y, m.
    pub pos_frd_m: Vector2<f64>,
    /// Sign of the yaw torque its thrust makes: +1 for a counter-clockwise
    /// rotor (seen from above), −1 for a clockwise one.
    pub yaw_sign: f64,
}

/// A multicopter as its autopilot knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct MulticopterAirframe {
    /// Take-off mass, kg.
    pub mass_kg: f64,
    /// Principal moments of inertia about FRD x, y, z, kg·m².
    pub inertia_kg_m2: [f64; 3],
    /// The motors (at most [`MAX_MOTORS`] are used).
    pub motors: Vec<MotorConfig>,
    /// Rotor drag torque per newton of thrust, m.
    pub torque_per_thrust_m: f64,
    /// Thrust of one motor at full command in sea-level standard air, N.
    pub max_thrust_per_motor_n: f64,
}

/// Which output channel drives what on a boat or a ground rover (ArduPilot's
/// `AP_MotorsUGV`: both are unmanned ground vehicles to Rover).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UgvOutputs {
    /// Skid steering: differential twin thrusters (PX4 boat) or left and
    /// right wheel motors, commands −1..1, with an optional rudder channel.
    Differential {
        /// Left thruster channel.
        left: usize,
        /// Right thruster channel.
        right: usize,
        /// Rudder channel, if the hull has one.
        rudder: Option<usize>,
    },
    /// One thruster and a rudder (ArduPilot Rover motorboat), or a throttle
    /// and steered wheels, commands −1..1.
    ThrottleRudder {
        /// Throttle channel.
        throttle: usize,
        /// Rudder channel.
        steering: usize,
    },
}

impl UgvOutputs {
    /// Whether the boat can turn on the spot: differential thrust, which
    /// ArduPilot calls skid steering.
    pub fn can_pivot(self) -> bool {
        matches!(self, UgvOutputs::Differential { .. })
    }

    /// Writes the mixer's outputs (each −1..1) to the channels of `controls`:
    /// the skid-steering left and right motors to the twin thrusters (and
    /// the steering servo to a rudder, if fitted), or the throttle and
    /// steering servo to a rudder boat. Channels beyond `controls` are
    /// ignored.
    pub fn mix(self, out: &MotorOutputs, controls: &mut [f64]) {
        let mut set = |ch: usize, v: f64| {
            if let Some(c) = controls.get_mut(ch) {
                *c = v.clamp(-1.0, 1.0);
            }
        };
        match self {
            UgvOutputs::Differential {
                left,
                right,
                rudder,
            } => {
                set(left, out.left);
                set(right, out.right);
                if let Some(r) = rudder {
                    set(r, out.steering);
                }
            }
            UgvOutputs::ThrottleRudder { throttle, steering } => {
                set(throttle, out.throttle);
                set(steering, out.steering);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mixer_outputs_reach_their_channels() {
        let mut c = [0.0; 4];
        let m = MotorOutputs {
            steering: 0.25,
            throttle: 0.5,
            left: 0.75,
            right: -0.5,
        };
        let out = UgvOutputs::Differential {
            left: 1,
            right: 0,
            rudder: Some(2),
        };
        out.mix(&m, &mut c);
        assert_eq!(c, [-0.5, 0.75, 0.25, 0.0]);
        out.mix(&MotorOutputs { left: 3.0, ..m }, &mut c);
        assert_eq!(c[1], 1.0, "clamped to full");
        // A channel outside the output array is ignored, not a panic.
        UgvOutputs::ThrottleRudder {
            throttle: 9,
            steering: 3,
        }
        .mix(&m, &mut c);
        assert_eq!(c[3], 0.25);
    }
}
