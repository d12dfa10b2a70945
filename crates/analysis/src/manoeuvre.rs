//! The standard manoeuvring tests of a boat airframe, flown open loop on the
//! simulated hull in calm water (after the ITTC's recommended procedures for
//! full-scale manoeuvring trials, 7.5-04-02-01): a speed step, a yaw-rate
//! step, a turning circle and a 10°/10° zig-zag. A twin-thruster hull's
//! differential thrust stands in for the rudder.
//!
//! Every manoeuvre but the speed step starts from a steady straight run at
//! the cruise throttle. Headings are NED (clockwise positive), yaw rates rad/s
//! about body z (positive turning to starboard), positions m from where the
//! manoeuvre starts, along and across the initial heading.

use nalgebra::Vector2;

use mavsitl_core::controller::{Actuators, MAX_ACTUATORS};
use mavsitl_sim::physics::airframes;
use mavsitl_sim::physics::boat::{BoatLayout, BoatParams};
use mavsitl_sim::scenario::{Scenario, ScenarioSource};
use mavsitl_sim::sim::Simulation;

/// The shipped boat airframes as docs/reference/airframes.md tabulates them: (airframe,
/// throttle for about 1.8 m/s, steering of the turns and the zig-zag).
pub const SHIPPED: [(&str, f64, f64); 3] = [
    ("usv_twin", 0.4, 0.5),
    ("usv_rudder", 0.4, 0.5),
    ("otter_usv", 0.58, 0.5),
];

/// The header of the manoeuvring table in docs/reference/airframes.md (two lines).
pub const TABLE_HEADER: &str = "| airframe | speed | speed step t63 / t90 | yaw-rate step (steering 0.1): rate, t63, overshoot | turning circle (steering 0.5): advance / tactical / steady diameter | speed in the turn | zig-zag 10°/10° overshoots | zig-zag period |\n|---|---|---|---|---|---|---|---|";

/// Seconds of straight running at the cruise throttle before a manoeuvre.
const SETTLE_S: f64 = 60.0;
/// Samples per second kept in the traces.
const TRACE_HZ: f64 = 10.0;

/// One sample of a manoeuvre: s from its start, position along and across
/// the initial heading (m), heading change (rad), surge speed (m/s), yaw
/// rate (rad/s).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Time since the manoeuvre began, s.
    pub t_s: f64,
    /// Distance along the initial heading, m.
    pub along_m: f64,
    /// Distance across it, m (positive to starboard).
    pub across_m: f64,
    /// Heading change since the start, rad (unwrapped).
    pub heading_rad: f64,
    /// Speed through the water along the hull, m/s.
    pub surge_m_s: f64,
    /// Yaw rate, rad/s.
    pub yaw_rate_rad_s: f64,
}

/// The figures of the four manoeuvres of one airframe.
#[derive(Debug, Clone, PartialEq)]
pub struct Manoeuvres {
    /// Airframe name.
    pub airframe: String,
    /// Throttle of the straight runs, 0–1.
    pub throttle: f64,
    /// Steering of the turning circle and the zig-zag, −1..1.
    pub steering: f64,
    /// Steady speed at the throttle, m/s.
    pub speed_m_s: f64,
    /// Speed step from rest: time to 63 % and 90 % of the steady speed, s.
    pub speed_t63_s: f64,
    /// See `speed_t63_s`.
    pub speed_t90_s: f64,
    /// Yaw-rate step (steering 0.1 at cruise): steady rate, rad/s.
    pub yaw_rate_rad_s: f64,
    /// Speed over ground in that steady turn, m/s.
    pub yaw_step_speed_m_s: f64,
    /// Time to 63 % of it, s.
    pub yaw_t63_s: f64,
    /// Overshoot of the yaw rate over its steady value, %.
    pub yaw_overshoot_pct: f64,
    /// Turning circle to starboard: advance (along, at 90° of heading), m.
    pub advance_m: f64,
    /// Tactical diameter (across, at 180°), m.
    pub tactical_diameter_m: f64,
    /// Steady turning diameter, 2·V/r once settled, m.
    pub steady_diameter_m: f64,
    /// The steady yaw rate of the turning circle to port, rad/s (negative).
    pub port_yaw_rate_rad_s: f64,
    /// The steady diameter to port, m (a symmetric hull: the same).
    pub steady_diameter_port_m: f64,
    /// Speed over ground in the steady turn as a fraction of the straight
    /// run's.
    pub turn_speed_ratio: f64,
    /// 10°/10° zig-zag: first and second overshoot angles, deg.
    pub zigzag_overshoot_deg: [f64; 2],
    /// Time from the start to the first check (heading 10°), s.
    pub zigzag_first_check_s: f64,
    /// Period of one full zig-zag, s.
    pub zigzag_period_s: f64,
    /// The traces as drawn.
    pub traces: Traces,
}

/// What the pictures show of each manoeuvre.
#[derive(Debug, Clone, PartialEq)]
pub struct Traces {
    /// The first 20 s of the speed step.
    pub speed_step: Vec<Sample>,
    /// The first 20 s of the yaw-rate step.
    pub yaw_rate_step: Vec<Sample>,
    /// The first full circle to starboard.
    pub turning_circle: Vec<Sample>,
    /// The first 40 s of the zig-zag.
    pub zigzag: Vec<Sample>,
}

impl Manoeuvres {
    /// This airframe's row of that table.
    pub fn table_row(&self) -> String {
        format!(
            "| `{}` | {:.2} m/s at {:.0} % | {:.1} / {:.1} s | {:.3} rad/s, {:.1} s, {:.0} % | {:.1} / {:.1} / {:.1} m | {:.2} | {:.1}° / {:.1}° | {:.1} s |",
            self.airframe,
            self.speed_m_s,
            self.throttle * 100.0,
            self.speed_t63_s,
            self.speed_t90_s,
            self.yaw_rate_rad_s,
            self.yaw_t63_s,
            self.yaw_overshoot_pct,
            self.advance_m,
            self.tactical_diameter_m,
            self.steady_diameter_m,
            self.turn_speed_ratio,
            self.zigzag_overshoot_deg[0],
            self.zigzag_overshoot_deg[1],
            self.zigzag_period_s,
        )
    }
}

/// Throttle and steering (−1..1) as the airframe's actuator commands.
fn commands(p: &BoatParams, throttle: f64, steering: f64) -> Actuators {
    let mut c = [0.0; MAX_ACTUATORS];
    let mut set = |ch: usize, v: f64| {
        if let Some(x) = c.get_mut(ch) {
            *x = v.clamp(-1.0, 1.0);
        }
    };
    match p.layout {
        BoatLayout::TwinThrusters => {
            set(p.left_channel, throttle + steering);
            set(p.right_channel, throttle - steering);
        }
        BoatLayout::ThrottleRudder => {
            set(p.throttle_channel, throttle);
            set(p.steering_channel, steering);
        }
    }
    Actuators::from_slice(&c)
}

/// A run of one hull under commands that may depend on the last sample.
struct Run {
    sim: Simulation,
    params: BoatParams,
    origin: Option<(Vector2<f64>, f64)>,
    heading: f64,
    last_yaw: f64,
    trace: Vec<Sample>,
}

impl Run {
    fn new(airframe: &str) -> Result<Self, String> {
        let params = airframes::boat(airframe).ok_or(format!("no boat airframe {airframe}"))?;
        let json = serde_json::json!({
            "home": {"lat_deg": 47.3544, "lon_deg": 8.5497, "alt_m": 406},
            "vehicles": [{"kind": "boat", "airframe": airframe}],
        })
        .to_string();
        let src = ScenarioSource {
            name: "manoeuvring".into(),
            base_dir: ".".into(),
        };
        let sim = Scenario::from_json(&json, &src)
            .and_then(|s| s.build_simulation(&src))
            .map_err(|e| e.to_string())?;
        Ok(Run {
            sim,
            params,
            origin: None,
            heading: 0.0,
            last_yaw: 0.0,
            trace: Vec::new(),
        })
    }

    fn yaw(&self) -> f64 {
        self.sim.vehicles()[0]
            .body()
            .state
            .att_ned_frd
            .euler_angles()
            .2
    }

    /// Starts the manoeuvre's clock and frame here.
    fn begin(&mut self) {
        let s = self.sim.vehicles()[0].body().state;
        self.origin = Some((s.pos_ned_m.xy(), self.yaw()));
        self.last_yaw = self.yaw();
        self.heading = 0.0;
        self.trace.clear();
    }

    /// Runs `secs` with `cmd(sample)` giving (throttle, steering).
    fn run(&mut self, secs: f64, mut cmd: impl FnMut(&Sample) -> (f64, f64)) -> Result<(), String> {
        let dt = self.sim.rate().dt_s();
        let steps = (secs / dt).round() as u64;
        let every = ((1.0 / TRACE_HZ) / dt).round().max(1.0) as u64;
        let mut sample = self.sample();
        for k in 0..steps {
            let (t, st) = cmd(&sample);
            let a = commands(&self.params, t, st);
            self.sim.set_actuators(0, a);
            self.sim.step().map_err(|e| e.to_string())?;
            sample = self.sample();
            if self.origin.is_some() && k % every == 0 {
                self.trace.push(sample);
            }
        }
        Ok(())
    }

    fn sample(&mut self) -> Sample {
        let s = self.sim.vehicles()[0].body().state;
        let yaw = self.yaw();
        self.heading += wrap_pi(yaw - self.last_yaw);
        self.last_yaw = yaw;
        let (o, psi0) = self.origin.unwrap_or((s.pos_ned_m.xy(), yaw));
        let (along_m, across_m) = along_across(&(s.pos_ned_m.xy() - o), psi0);
        let body_v = s.att_ned_frd.inverse() * s.vel_ned_m_s;
        Sample {
            t_s: 0.0, // set by `trace`
            along_m,
            across_m,
            heading_rad: self.heading,
            surge_m_s: body_v.x,
            yaw_rate_rad_s: s.rate_frd_rad_s.z,
        }
    }

    fn trace(&self) -> Vec<Sample> {
        let dt = 1.0 / TRACE_HZ;
        self.trace
            .iter()
            .enumerate()
            .map(|(i, s)| Sample {
                t_s: i as f64 * dt,
                ..*s
            })
            .collect()
    }
}

/// An angle wrapped to [−π, π), rad.
fn wrap_pi(a: f64) -> f64 {
    (a + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI
}

/// A displacement `rel` (NE, m) along and across (positive to starboard) a
/// heading `psi` (rad, clockwise from north).
fn along_across(rel: &Vector2<f64>, psi: f64) -> (f64, f64) {
    let (c, s) = (psi.cos(), psi.sin());
    (rel.x * c + rel.y * s, -rel.x * s + rel.y * c)
}

/// First time `f` holds in `trace`, s.
fn first(trace: &[Sample], f: impl Fn(&Sample) -> bool) -> f64 {
    trace.iter().find(|s| f(s)).map_or(f64::NAN, |s| s.t_s)
}

/// The samples of `trace` while `f` holds.
fn upto(trace: &[Sample], f: impl Fn(&Sample) -> bool) -> Vec<Sample> {
    trace.iter().take_while(|s| f(s)).copied().collect()
}

/// Runs the four manoeuvres of `airframe` at `throttle`, turning and
/// zig-zagging with `steering` (positive: to starboard).
///
/// # Errors
/// An unknown airframe, a simulation that fails, or a hull that turns the
/// wrong way.
pub fn measure(airframe: &str, throttle: f64, steering: f64) -> Result<Manoeuvres, String> {
    let speed = speed_step(airframe, throttle)?;
    let yaw = yaw_rate_step(airframe, throttle)?;
    let starboard = turning_circle(airframe, throttle, steering)?;
    let port = turning_circle(airframe, throttle, -steering)?;
    turns_the_way_it_is_steered(airframe, yaw.rate, starboard.rate, port.rate)?;
    let (zigzag, overshoots, checks) = zigzag(airframe, throttle, steering)?;
    let at_heading = |deg: f64| {
        starboard
            .trace
            .iter()
            .find(|s| s.heading_rad >= deg.to_radians())
            .copied()
    };
    Ok(Manoeuvres {
        airframe: airframe.to_string(),
        throttle,
        steering,
        speed_m_s: speed.speed,
        speed_t63_s: first(&speed.trace, |s| s.surge_m_s >= 0.632 * speed.speed),
        speed_t90_s: first(&speed.trace, |s| s.surge_m_s >= 0.9 * speed.speed),
        yaw_rate_rad_s: yaw.rate,
        yaw_step_speed_m_s: yaw.speed,
        yaw_t63_s: first(&yaw.trace, |s| s.yaw_rate_rad_s >= 0.632 * yaw.rate),
        yaw_overshoot_pct: (yaw.peak / yaw.rate - 1.0) * 100.0,
        advance_m: at_heading(90.0).map_or(f64::NAN, |s| s.along_m),
        tactical_diameter_m: at_heading(180.0).map_or(f64::NAN, |s| s.across_m),
        steady_diameter_m: 2.0 * starboard.speed / starboard.rate,
        port_yaw_rate_rad_s: port.rate,
        steady_diameter_port_m: 2.0 * port.speed / -port.rate,
        turn_speed_ratio: starboard.speed / speed.speed,
        zigzag_overshoot_deg: overshoots,
        zigzag_first_check_s: checks.first().copied().unwrap_or(f64::NAN),
        zigzag_period_s: match checks.as_slice() {
            [c0, _, c2, ..] => c2 - c0,
            _ => f64::NAN,
        },
        traces: Traces {
            speed_step: upto(&speed.trace, |s| s.t_s <= 20.0),
            yaw_rate_step: upto(&yaw.trace, |s| s.t_s <= 20.0),
            turning_circle: upto(&starboard.trace, |s| s.heading_rad <= std::f64::consts::TAU),
            zigzag: upto(&zigzag, |s| s.t_s <= 40.0),
        },
    })
}

/// A steady state reached by a manoeuvre: its trace, the speed over ground
/// at its end (m/s), the yaw rate there and the largest on the way (rad/s).
struct Steady {
    trace: Vec<Sample>,
    speed: f64,
    rate: f64,
    peak: f64,
}

/// Runs `secs` of `cmd` after a straight run (unless `from_rest`) and
/// reads the steady state at the end.
fn steady(
    airframe: &str,
    from_rest: bool,
    secs: f64,
    cmd: impl FnMut(&Sample) -> (f64, f64),
    throttle: f64,
) -> Result<Steady, String> {
    let mut r = Run::new(airframe)?;
    if !from_rest {
        r.run(SETTLE_S, |_| (throttle, 0.0))?;
    }
    r.begin();
    r.run(secs, cmd)?;
    let trace = r.trace();
    let end = trace.last().copied().ok_or("no samples")?;
    let speed = r.sim.vehicles()[0].body().state.vel_ned_m_s.xy().norm();
    let peak = trace.iter().fold(0.0f64, |m, s| m.max(s.yaw_rate_rad_s));
    Ok(Steady {
        trace,
        speed,
        rate: end.yaw_rate_rad_s,
        peak,
    })
}

/// Checks the steady yaw rates (rad/s) of the yaw-rate step and the
/// starboard circle are positive and the port circle's negative.
fn turns_the_way_it_is_steered(
    airframe: &str,
    step: f64,
    starboard: f64,
    port: f64,
) -> Result<(), String> {
    if step > 0.0 && starboard > 0.0 && port < 0.0 {
        Ok(())
    } else {
        Err(format!(
            "{airframe} turns the wrong way: yaw rates {step} (step), {starboard} (starboard circle), {port} (port circle) rad/s"
        ))
    }
}

/// The speed step from rest.
fn speed_step(airframe: &str, throttle: f64) -> Result<Steady, String> {
    steady(airframe, true, SETTLE_S, |_| (throttle, 0.0), throttle)
}

/// The yaw-rate step: steering 0.1 at cruise.
fn yaw_rate_step(airframe: &str, throttle: f64) -> Result<Steady, String> {
    steady(airframe, false, 60.0, |_| (throttle, 0.1), throttle)
}

/// A turning circle with `steering` at cruise, 240 s.
fn turning_circle(airframe: &str, throttle: f64, steering: f64) -> Result<Steady, String> {
    steady(airframe, false, 240.0, |_| (throttle, steering), throttle)
}

/// A zig-zag's trace, its first two overshoot angles (deg) and the times
/// the heading passed each check (s).
type ZigZag = (Vec<Sample>, [f64; 2], Vec<f64>);

/// The 10°/10° zig-zag.
fn zigzag(airframe: &str, throttle: f64, steering: f64) -> Result<ZigZag, String> {
    let check = 10f64.to_radians();
    let mut side = 1.0;
    let run = steady(
        airframe,
        false,
        120.0,
        |s| {
            if side > 0.0 && s.heading_rad >= check {
                side = -1.0;
            } else if side < 0.0 && s.heading_rad <= -check {
                side = 1.0;
            }
            (throttle, side * steering)
        },
        throttle,
    )?;
    let (overshoots, checks) = zigzag_figures(&run.trace, check);
    Ok((run.trace, overshoots, checks))
}

/// The zig-zag's first two overshoot angles (deg) and the times the heading
/// crossed each check (s).
fn zigzag_figures(trace: &[Sample], check: f64) -> ([f64; 2], Vec<f64>) {
    let mut checks = Vec::new();
    let mut side = 1.0;
    for s in trace {
        if side * s.heading_rad >= check {
            checks.push(s.t_s);
            side = -side;
        }
    }
    let mut overshoots = [f64::NAN; 2];
    for (k, o) in overshoots.iter_mut().enumerate() {
        let (Some(t0), Some(t1)) = (checks.get(k), checks.get(k + 1)) else {
            continue;
        };
        let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
        let peak = trace
            .iter()
            .filter(|s| s.t_s >= *t0 && s.t_s <= *t1)
            .map(|s| sign * s.heading_rad)
            .fold(f64::NEG_INFINITY, f64::max);
        *o = (peak - check).to_degrees();
    }
    (overshoots, checks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t_s: f64, heading_deg: f64) -> Sample {
        Sample {
            t_s,
            along_m: 0.0,
            across_m: 0.0,
            heading_rad: heading_deg.to_radians(),
            surge_m_s: 0.0,
            yaw_rate_rad_s: 0.0,
        }
    }

    /// A heading of 15°·sin(2πt/20) sampled at 10 Hz: it crosses ±10° at
    /// t = (20/2π)·asin(2/3) + k·10 s alternately, overshooting by 5°.
    #[test]
    fn zigzag_figures_find_the_checks_and_the_overshoots() {
        let trace: Vec<Sample> = (0..600)
            .map(|i| {
                let t = i as f64 * 0.1;
                at(t, 15.0 * (std::f64::consts::TAU * t / 20.0).sin())
            })
            .collect();
        let (overshoots, checks) = zigzag_figures(&trace, 10f64.to_radians());
        let t0 = 20.0 / std::f64::consts::TAU * (2.0f64 / 3.0).asin();
        assert_eq!(checks.len(), 6, "{checks:?}");
        for (k, c) in checks.iter().enumerate() {
            let expect = t0 + k as f64 * 10.0;
            assert!(
                *c >= expect && *c < expect + 0.1 + 1e-9,
                "check {k} at {c}, expected {expect}"
            );
        }
        for o in overshoots {
            assert!((o - 5.0).abs() < 0.01, "{overshoots:?}");
        }
        // A heading that never reaches the second check has one overshoot
        // at most, and none without a check.
        let once: Vec<Sample> = (0..100)
            .map(|i| at(i as f64 * 0.1, i as f64 * 0.2))
            .collect();
        let (o, c) = zigzag_figures(&once, 10f64.to_radians());
        assert_eq!(c.len(), 1);
        assert!(o.iter().all(|x| x.is_nan()));
    }

    #[test]
    fn positions_are_along_and_across_the_initial_heading() {
        // Heading 30° (north-north-east): 2 m along it and 1 m to starboard.
        let psi = 30f64.to_radians();
        let (s, c) = psi.sin_cos();
        let rel = 2.0 * Vector2::new(c, s) + Vector2::new(-s, c);
        let (along, across) = along_across(&rel, psi);
        assert!((along - 2.0).abs() < 1e-12 && (across - 1.0).abs() < 1e-12);
        // Heading west: 3 m north is 3 m to starboard.
        let (along, across) = along_across(&Vector2::new(3.0, 0.0), -std::f64::consts::FRAC_PI_2);
        assert!(along.abs() < 1e-12 && (across - 3.0).abs() < 1e-12);
        // A heading step across ±180° unwraps to the short way round.
        assert!((wrap_pi(350f64.to_radians()) - -10f64.to_radians()).abs() < 1e-12);
        assert!((wrap_pi(-350f64.to_radians()) - 10f64.to_radians()).abs() < 1e-12);
        assert!((wrap_pi(0.5) - 0.5).abs() < 1e-15);
    }

    /// A hull that does not turn, or turns the wrong way, on any of the three
    /// is refused, naming the rates.
    #[test]
    fn a_hull_must_turn_the_way_it_is_steered() {
        assert!(turns_the_way_it_is_steered("h", 0.1, 0.2, -0.2).is_ok());
        for (step, starboard, port) in [
            (0.0, 0.2, -0.2),
            (0.1, 0.0, -0.2),
            (0.1, 0.2, 0.0),
            (-0.1, 0.2, -0.2),
            (0.1, -0.2, -0.2),
            (0.1, 0.2, 0.2),
        ] {
            let e = turns_the_way_it_is_steered("h", step, starboard, port).unwrap_err();
            assert!(e.starts_with("h turns the wrong way"), "{e}");
            assert!(e.contains(&format!("{port} (port circle)")), "{e}");
        }
    }

    #[test]
    fn first_and_upto_read_a_trace_in_order() {
        let trace: Vec<Sample> = (0..10).map(|i| at(i as f64, i as f64 * 3.0)).collect();
        assert_eq!(first(&trace, |s| s.heading_rad >= 10f64.to_radians()), 4.0);
        assert!(first(&trace, |s| s.heading_rad > 1.0).is_nan());
        let head = upto(&trace, |s| s.t_s <= 2.5);
        assert_eq!(head.len(), 3);
        assert_eq!(head[2], trace[2]);
    }

    #[test]
    fn commands_mix_twin_thrusters_and_set_throttle_and_rudder() {
        let twin = airframes::boat("usv_twin").expect("usv_twin");
        let a = commands(&twin, 0.4, 0.5);
        assert_eq!(a.controls[twin.left_channel], 0.9);
        assert!((a.controls[twin.right_channel] - -0.1).abs() < 1e-15);
        // Clamped to ±1 per thruster.
        let a = commands(&twin, 0.8, -0.5);
        assert_eq!(a.controls[twin.left_channel], 0.30000000000000004);
        assert_eq!(a.controls[twin.right_channel], 1.0);
        let rudder = airframes::boat("usv_rudder").expect("usv_rudder");
        let a = commands(&rudder, 0.4, -0.3);
        assert_eq!(a.controls[rudder.throttle_channel], 0.4);
        assert_eq!(a.controls[rudder.steering_channel], -0.3);
        let a = commands(&rudder, 1.5, -2.0);
        assert_eq!(a.controls[rudder.throttle_channel], 1.0);
        assert_eq!(a.controls[rudder.steering_channel], -1.0);
    }

    #[test]
    fn a_table_row_prints_every_figure_in_its_column() {
        let empty = Traces {
            speed_step: Vec::new(),
            yaw_rate_step: Vec::new(),
            turning_circle: Vec::new(),
            zigzag: Vec::new(),
        };
        let m = Manoeuvres {
            airframe: "hull".into(),
            throttle: 0.4,
            steering: 0.5,
            speed_m_s: 1.834,
            speed_t63_s: 3.21,
            speed_t90_s: 7.66,
            yaw_rate_rad_s: 0.1234,
            yaw_step_speed_m_s: 1.7,
            yaw_t63_s: 2.04,
            yaw_overshoot_pct: 12.4,
            advance_m: 10.26,
            tactical_diameter_m: 12.34,
            steady_diameter_m: 9.87,
            port_yaw_rate_rad_s: -0.12,
            steady_diameter_port_m: 9.9,
            turn_speed_ratio: 0.876,
            zigzag_overshoot_deg: [4.26, 5.04],
            zigzag_first_check_s: 3.0,
            zigzag_period_s: 21.26,
            traces: empty,
        };
        assert_eq!(
            m.table_row(),
            "| `hull` | 1.83 m/s at 40 % | 3.2 / 7.7 s | 0.123 rad/s, 2.0 s, 12 % | 10.3 / 12.3 / 9.9 m | 0.88 | 4.3° / 5.0° | 21.3 s |"
        );
        assert!(measure("no_such_boat", 0.4, 0.5)
            .unwrap_err()
            .contains("no_such_boat"));
    }
}
