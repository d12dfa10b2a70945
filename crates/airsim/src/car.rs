//! AirSim's car API on a mavsitl Ackermann rover: `setCarControls` drives it
//! by throttle, steering, brake and handbrake (AirSim's `CarControls`), and
//! `getCarState` answers with its speed, gear, wheel speed and kinematics
//! (AirSim's `CarState`), as AirSim's `CarClient` sends and reads them.
//!
//! The controls reach the rover through [`CarDriver`], the vehicle's
//! controller in the lockstep loop: each interval it hands the latest
//! controls over as the rover's actuator channels. Throttle is 0..1 forward;
//! with a manual gear below 0 (AirSim's reverse, `manual_gear = -1`) the
//! car drives backwards at its magnitude. Steering is −1..1 of the steering
//! lock, positive to the right, as AirSim's.

use mavsitl_core::shared::Shared;

use rmpv::Value;

use super::types::{f64_of, field};
use mavsitl_core::controller::{Actuators, ControllerError, FlightController, SensorFrame};
use mavsitl_core::time::SimTime;
use mavsitl_sim::physics::RoverParams;

/// AirSim's `CarControls`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CarControls {
    /// 0..1 (negative values drive only in a reverse manual gear).
    pub throttle: f64,
    /// −1..1 of the steering lock, positive to the right.
    pub steering: f64,
    /// 0..1 of the brakes.
    pub brake: f64,
    /// The handbrake (the rear wheels' full brake).
    pub handbrake: bool,
    /// Whether `manual_gear` is used.
    pub is_manual_gear: bool,
    /// The gear: −1 reverse, 0 neutral, above 0 forward.
    pub manual_gear: i64,
    /// AirSim's gear_immediate (a gearbox's shift time; the rover has none).
    pub gear_immediate: bool,
}

/// The controls shared between the API, which sets them, and the
/// [`CarDriver`], which hands them to the rover.
pub type CarLink = Shared<CarControls>;

impl CarControls {
    /// The controls of a `CarControls` map; a missing field keeps its
    /// default, a field of the wrong type is an error naming it.
    ///
    /// # Errors
    /// The field that is not a number or a flag, and the value given.
    pub fn from_value(v: &Value) -> Result<Self, String> {
        if !v.is_map() {
            return Err(format!(
                "setCarControls: controls are a CarControls map, not {v}"
            ));
        }
        let num = |name: &str, default: f64| match field(v, name) {
            None => Ok(default),
            Some(x) => f64_of(x)
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("setCarControls: {name} is not a number: {x}")),
        };
        let flag = |name: &str, default: bool| match field(v, name) {
            None => Ok(default),
            Some(x) => x
                .as_bool()
                .ok_or_else(|| format!("setCarControls: {name} is not true or false: {x}")),
        };
        let gear = match field(v, "manual_gear") {
            None => 0,
            Some(x) => x
                .as_i64()
                .filter(|g| (-1..=10).contains(g))
                .ok_or_else(|| format!("setCarControls: manual_gear is not a gear -1..10: {x}"))?,
        };
        Ok(CarControls {
            throttle: num("throttle", 0.0)?.clamp(-1.0, 1.0),
            steering: num("steering", 0.0)?.clamp(-1.0, 1.0),
            brake: num("brake", 0.0)?.clamp(0.0, 1.0),
            handbrake: flag("handbrake", false)?,
            is_manual_gear: flag("is_manual_gear", false)?,
            manual_gear: gear,
            gear_immediate: flag("gear_immediate", true)?,
        })
    }

    /// As AirSim's client reads a `CarControls`.
    pub fn to_value(self) -> Value {
        super::types::map(vec![
            ("throttle", Value::from(self.throttle)),
            ("steering", Value::from(self.steering)),
            ("brake", Value::from(self.brake)),
            ("handbrake", Value::from(self.handbrake)),
            ("is_manual_gear", Value::from(self.is_manual_gear)),
            ("manual_gear", Value::from(self.manual_gear)),
            ("gear_immediate", Value::from(self.gear_immediate)),
        ])
    }

    /// Whether the car is in reverse (a manual gear below 0).
    pub fn reverse(&self) -> bool {
        self.is_manual_gear && self.manual_gear < 0
    }

    /// The motor's command, −1..1: the throttle forward, its magnitude
    /// backwards in reverse; none in neutral.
    pub fn drive(&self) -> f64 {
        if self.is_manual_gear && self.manual_gear == 0 {
            0.0
        } else if self.reverse() {
            -self.throttle.abs()
        } else {
            self.throttle.max(0.0)
        }
    }
}

/// The rover's channels the controls go to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CarChannels {
    throttle: usize,
    steering: usize,
    brake: Option<usize>,
    handbrake: Option<usize>,
}

impl CarChannels {
    /// An Ackermann rover's throttle, steering and brake channels.
    pub fn of(p: &RoverParams) -> Self {
        CarChannels {
            throttle: p.throttle_channel,
            steering: p.steering_channel,
            brake: p.brake_channel,
            handbrake: p.handbrake_channel,
        }
    }
}

/// The rover's controller under AirSim's car API: the latest controls the
/// client set, as actuator channels, every physics tick (AirSim's car takes
/// a control set whenever the client sends one).
pub struct CarDriver {
    link: CarLink,
    channels: CarChannels,
    rate_hz: u32,
}

impl CarDriver {
    /// A driver handing `link`'s controls to `channels` at `rate_hz`, the
    /// physics rate.
    pub fn new(link: CarLink, channels: CarChannels, rate_hz: u32) -> Self {
        CarDriver {
            link,
            channels,
            rate_hz,
        }
    }
}

impl FlightController for CarDriver {
    fn name(&self) -> &str {
        "AirSim car controls"
    }

    fn rate_hz(&self) -> u32 {
        self.rate_hz
    }

    fn actuators(&mut self, _now: SimTime) -> Result<Actuators, ControllerError> {
        let c = *self.link.borrow();
        let mut out = Actuators::default();
        let mut set = |ch: usize, v: f64| {
            if let Some(x) = out.controls.get_mut(ch) {
                *x = v;
            }
        };
        set(self.channels.throttle, c.drive());
        set(self.channels.steering, c.steering);
        if let Some(ch) = self.channels.brake {
            set(ch, c.brake);
        }
        if let Some(ch) = self.channels.handbrake {
            set(ch, if c.handbrake { 1.0 } else { 0.0 });
        }
        Ok(out)
    }

    fn receive(&mut self, _frame: &SensorFrame) -> Result<(), ControllerError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::types::map;
    use super::*;

    fn controls(fields: Vec<(&str, Value)>) -> Result<CarControls, String> {
        CarControls::from_value(&map(fields))
    }

    /// A client's CarControls read field by field, missing ones at their
    /// defaults, out-of-range ones clamped; a field of the wrong type or a
    /// gear that is none is refused by name.
    #[test]
    fn car_controls_are_read_as_airsims_client_sends_them() {
        let c = controls(vec![
            ("throttle", Value::from(0.5)),
            ("steering", Value::from(-2.0)),
            ("brake", Value::from(0.25)),
            ("handbrake", Value::from(true)),
        ])
        .expect("controls");
        assert_eq!(
            c,
            CarControls {
                throttle: 0.5,
                steering: -1.0,
                brake: 0.25,
                handbrake: true,
                is_manual_gear: false,
                manual_gear: 0,
                gear_immediate: true,
            }
        );
        assert_eq!(CarControls::from_value(&c.to_value()), Ok(c));
        let e = controls(vec![("throttle", Value::from("full"))]).expect_err("a string");
        assert!(e.contains("throttle is not a number"), "{e}");
        let e = controls(vec![("manual_gear", Value::from(-2))]).expect_err("no such gear");
        assert!(e.contains("manual_gear"), "{e}");
        let e = controls(vec![("handbrake", Value::from(1))]).expect_err("not a flag");
        assert!(e.contains("handbrake is not true or false"), "{e}");
        assert!(CarControls::from_value(&Value::from(3)).is_err());
    }

    /// Forward the throttle (never below 0), in reverse its magnitude
    /// backwards (AirSim's hello_car: throttle −0.5 in manual gear −1), in
    /// neutral nothing; each control on the rover's own channel.
    #[test]
    fn the_driver_hands_the_controls_to_the_rovers_channels() {
        let link: CarLink = Shared::new(CarControls {
            throttle: 0.6,
            steering: 0.3,
            brake: 0.2,
            handbrake: true,
            ..CarControls::default()
        });
        let p = mavsitl_sim::physics::airframes::rover("f1tenth").expect("shipped");
        let mut d = CarDriver::new(link.clone(), CarChannels::of(&p), 1000);
        assert_eq!(d.rate_hz(), 1000);
        assert_eq!(d.name(), "AirSim car controls");
        let a = d.actuators(SimTime::ZERO).expect("controls");
        assert_eq!(a.controls[..5], [0.3, 0.0, 0.6, 0.2, 1.0]);
        link.borrow_mut().throttle = -0.4;
        assert_eq!(
            d.actuators(SimTime::ZERO).expect("controls").controls[2],
            0.0
        );
        (
            link.borrow_mut().is_manual_gear,
            link.borrow_mut().manual_gear,
        ) = (true, -1);
        assert_eq!(
            d.actuators(SimTime::ZERO).expect("controls").controls[2],
            -0.4
        );
        link.borrow_mut().throttle = 0.7;
        assert_eq!(
            d.actuators(SimTime::ZERO).expect("controls").controls[2],
            -0.7
        );
        link.borrow_mut().manual_gear = 0;
        assert!(!link.borrow().reverse(), "neutral is not reverse");
        assert_eq!(
            d.actuators(SimTime::ZERO).expect("controls").controls[2],
            0.0
        );
        link.borrow_mut().manual_gear = 2;
        assert_eq!(
            d.actuators(SimTime::ZERO).expect("controls").controls[2],
            0.7
        );
        link.borrow_mut().handbrake = false;
        assert_eq!(
            d.actuators(SimTime::ZERO).expect("controls").controls[4],
            0.0
        );
    }
}
