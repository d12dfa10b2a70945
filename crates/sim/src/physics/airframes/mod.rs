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
//! | `otter_usv` | boat | Maritime Robotics' Otter USV as Fossen models it: 2.0 m, 55 kg hull + 25 kg payload, twin thrusters, 3.1 m/s top speed |
//! | `jackal` | rover, skid-steer | Clearpath's Jackal: 17 kg, four wheels driven two a side, 2.0 m/s |
//! | `f1tenth` | rover, Ackermann | the F1TENTH 1/10-scale race car: 3.47 kg, four-wheel drive, 24° steering |
//!
//! `usv_twin` and `usv_rudder` put their sway resistance 0.5 m aft of the CG
//! (`lateral_resistance_x_m`), as skegs and pontoon sterns do; at the CG the
//! Munk moment of their added masses makes them course-unstable.
//!
//! `otter_usv` takes every hydrodynamic number from T. I. Fossen, *Handbook of
//! Marine Craft Hydrodynamics and Motion Control*, 2nd ed. (Wiley, 2021), as
//! coded in his Python Vehicle Simulator (`vehicles/otter.py`, MIT licence):
//! - mass 55 kg + 25 kg payload; inertia I_g about the CO with the payload
//!   (radii of gyration 0.4·B, 0.25·L, 0.25·L; B = 1.08 m, L = 2.0 m);
//! - added mass X_u̇ = −0.1·m, Y_v̇ = −1.5·m, Z_ẇ = −m, K_ṗ = −0.2·I_x,
//!   M_q̇ = −0.8·I_y, N_ṙ = −1.7·I_z ("best practice" in the source);
//! - surge X_u = 24.4·g/U_max with U_max = 6 kn (the full bollard pull,
//!   24.4 kgf, balances drag at top speed); yaw N_r = M_66/T_yaw with
//!   T_yaw = 1 s, plus the source's nonlinear 10·N_r·|r|·r;
//! - no linear sway damping (Y_v = 0): sway and yaw cross-flow drag by
//!   strip theory over the 2.0 m length of one pontoon (0.25 m beam,
//!   0.195 m draft, Hoerner's C_D = 1.00 for that beam/draft), as the
//!   source's `crossFlowDrag` (`cross_flow`);
//! - the yaw Munk moment neglected, as the source does
//!   (`yaw_munk_moment: false`);
//! - waterplane 2 × 0.75 × 2.0 × 0.25 m², GM_T = 1.23 m, GM_L = 3.11 m,
//!   KG = 0.44 m, heave, roll and pitch damping at 0.3, 0.2 and 0.4 of
//!   critical, from the source's hydrostatics;
//! - thrusters 0.395 m either side, 119.7 N forward and 66.7 N reverse each
//!   (the source's bollard pulls), lag 1 s (its shaft-speed time constant).
//!
//! Not in the source, so estimated here: the windage areas and the hull
//! depth. Hydrostatics are wall-sided, so the draft is m/(ρ·A_wp) = 0.10 m
//! where the pontoons' block coefficient gives Fossen 0.195 m.

//! `jackal` takes its geometry and mass properties from Clearpath's
//! `jackal_description` URDF (BSD licence) and its weight and top speed
//! from Clearpath's specification sheet:
//! - mass 17 kg, top speed 2.0 m/s (specification sheet);
//! - wheelbase 0.262 m, track 0.37559 m, wheel radius 0.098 m (URDF);
//! - the chassis' inertia (0.3136, 0.3922, 0.4485 kg·m², URDF) with its four
//!   0.477 kg wheels as point masses at their hubs; its CG 0.012 m ahead
//!   of the axles' middle and 0.067 m above `base_link`, which stands
//!   0.0655 m above the ground (URDF): 0.119 m behind the front axle,
//!   0.1325 m up.
//!
//! Not published, so estimated: μ 0.8 (rubber on pavement), cornering
//! stiffness 5 /rad and slip stiffness 10 per unit load, relaxation length
//! 0.1 m (about the wheel's radius), C_rr 0.03 (lugged tyres), a motor's
//! stall torque of 12 N·m per side (enough to spin its wheels on dry
//! pavement), its lag of 0.05 s, and the wheel's spin inertia with its
//! share of the drivetrain, 0.004 kg·m². The no-load rim speed, 2.05 m/s,
//! leaves the 2.0 m/s of the specification under rolling resistance. No
//! mechanical brake: the motors brake on their back-EMF.
//!
//! `f1tenth` takes every vehicle-dynamics number from the F1TENTH
//! simulator's vehicle parameters (`f1tenth_simulator`'s `params.yaml`)
//! and `f1tenth_gym`, both of the University of Pennsylvania:
//! - mass 3.47 kg, yaw inertia 0.04712 kg·m², wheelbase 0.3302 m, CG
//!   0.15875 m behind the front axle and 0.074 m up, wheel radius 0.0508 m;
//! - cornering stiffness 4.718 and 5.4562 per rad per unit load, front and
//!   rear, and μ 1.0489 (`f1tenth_gym`, after CommonRoad's single-track
//!   model);
//! - steering within ±0.4189 rad (24°) at up to 3.2 rad/s;
//! - top speed 7 m/s, the simulator's `max_speed`; the stall torque, 1.324
//!   N·m at the wheels, gives its `max_accel` of 7.51 m/s²; the brakes, 0.364
//!   N·m a wheel, its `max_decel` of 8.26 m/s²;
//! - the track is the simulator's car `width`, 0.2032 m.
//!
//! Four-wheel drive as the Traxxas 4×4 chassis the car is built on.
//! Estimated: roll and pitch inertia (a 0.5 × 0.2 × 0.1 m box; the body is
//! held level, so they do not act), slip stiffness 10 per unit load,
//! relaxation length 0.05 m, C_rr 0.015, the motor's lag 0.05 s and a
//! wheel's spin inertia with its share of the drivetrain, 2·10⁻⁴ kg·m².

use super::boat::BoatParams;
use super::multirotor::MultirotorParams;
use super::rover::RoverParams;

const GENERIC_QUAD: &str = include_str!("generic_quad.json");
const X500: &str = include_str!("x500.json");
const USV_TWIN: &str = include_str!("usv_twin.json");
const USV_RUDDER: &str = include_str!("usv_rudder.json");
const OTTER_USV: &str = include_str!("otter_usv.json");
const JACKAL: &str = include_str!("jackal.json");
const F1TENTH: &str = include_str!("f1tenth.json");

/// Names of the shipped multirotor airframes.
pub const MULTIROTORS: &[&str] = &["generic_quad", "x500"];
/// Names of the shipped boat airframes.
pub const BOATS: &[&str] = &["usv_twin", "usv_rudder", "otter_usv"];
/// Names of the shipped ground rover airframes.
pub const ROVERS: &[&str] = &["jackal", "f1tenth"];

/// The JSON text of a shipped airframe.
pub fn source(name: &str) -> Option<&'static str> {
    match name {
        "generic_quad" => Some(GENERIC_QUAD),
        "x500" => Some(X500),
        "usv_twin" => Some(USV_TWIN),
        "usv_rudder" => Some(USV_RUDDER),
        "otter_usv" => Some(OTTER_USV),
        "jackal" => Some(JACKAL),
        "f1tenth" => Some(F1TENTH),
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

/// A shipped rover airframe's params, or `None` for an unknown name.
pub fn rover(name: &str) -> Option<RoverParams> {
    ROVERS
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
        for name in ROVERS {
            let text = source(name).unwrap();
            let p: RoverParams =
                serde_json::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            p.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        assert!(multirotor("usv_twin").is_none());
        assert!(boat("x500").is_none());
        assert!(rover("usv_twin").is_none());
        assert!(rover("jackal").is_some() && rover("f1tenth").is_some());
    }
}
