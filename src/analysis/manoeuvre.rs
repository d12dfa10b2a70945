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

use crate::controller::Actuators;
use crate::physics::airframes;
use crate::physics::boat::{BoatLayout, BoatParams};
use crate::scenario::{Scenario, ScenarioSource};
use crate::sim::Simulation;

/// The shipped boat airframes as the README tabulates them: (airframe,
/// throttle for about 1.8 m/s, steering of the turns and the zig-zag).
pub const BOATS: [(&str, f64, f64); 3] = [
    ("usv_twin", 0.4, 0.5),
    ("usv_rudder", 0.4, 0.5),
    ("otter_usv", 0.58, 0.5),
];

/// The header of the README's manoeuvring table (two lines).
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
    /// The same to port, m (a symmetric hull: the same).
    pub steady_diameter_port_m: f64,
    /// Speed in the steady turn as a fraction of the straight run.
    pub turn_speed_ratio: f64,
    /// 10°/10° zig-zag: first and second overshoot angles, deg.
    pub zigzag_overshoot_deg: [f64; 2],
    /// Time from the start to the first check (heading 10°), s.
    pub zigzag_first_check_s: f64,
    /// Period of one full zig-zag, s.
    pub zigzag_period_s: f64,
    /// Traces as drawn: the first 20 s of the speed and yaw-rate steps, the
    /// first full turning circle, the first 40 s of the zig-zag.
    pub traces: [Vec<Sample>; 4],
}

impl Manoeuvres {
    /// This airframe's row of the README's table.
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
    let mut c = [0.0; 16];
    match p.layout {
        BoatLayout::TwinThrusters => {
            c[p.left_channel] = (throttle + steering).clamp(-1.0, 1.0);
            c[p.right_channel] = (throttle - steering).clamp(-1.0, 1.0);
        }
        BoatLayout::ThrottleRudder => {
            c[p.throttle_channel] = throttle;
            c[p.steering_channel] = steering;
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
        let json = format!(
            r#"{{"home":{{"lat_deg":47.3544,"lon_deg":8.5497,"alt_m":406}},
                "vehicles":[{{"kind":"boat","airframe":"{airframe}"}}]}}"#
        );
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
        let d = yaw - self.last_yaw;
        self.heading +=
            (d + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI;
        self.last_yaw = yaw;
        let (o, psi0) = self.origin.unwrap_or((s.pos_ned_m.xy(), yaw));
        let rel = s.pos_ned_m.xy() - o;
        let (c, sn) = (psi0.cos(), psi0.sin());
        let body_v = s.att_ned_frd.inverse() * s.vel_ned_m_s;
        Sample {
            t_s: 0.0, // set by `trace`
            along_m: rel.x * c + rel.y * sn,
            across_m: -rel.x * sn + rel.y * c,
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

/// First time `f` holds in `trace`, s.
fn first(trace: &[Sample], f: impl Fn(&Sample) -> bool) -> f64 {
    trace.iter().find(|s| f(s)).map_or(f64::NAN, |s| s.t_s)
}

/// Runs the four manoeuvres of `airframe` at `throttle`, turning and
/// zig-zagging with `steering`.
///
/// # Errors
/// An unknown airframe, or a simulation that fails.
pub fn measure(airframe: &str, throttle: f64, steering: f64) -> Result<Manoeuvres, String> {
    // Speed step from rest.
    let mut r = Run::new(airframe)?;
    r.begin();
    r.run(SETTLE_S, |_| (throttle, 0.0))?;
    let speed_trace = r.trace();
    let speed = speed_trace.last().map_or(f64::NAN, |s| s.surge_m_s);
    let speed_t63 = first(&speed_trace, |s| s.surge_m_s >= 0.632 * speed);
    let speed_t90 = first(&speed_trace, |s| s.surge_m_s >= 0.9 * speed);

    // Yaw-rate step at cruise.
    let mut r = Run::new(airframe)?;
    r.run(SETTLE_S, |_| (throttle, 0.0))?;
    r.begin();
    r.run(60.0, |_| (throttle, 0.1))?;
    let yaw_trace = r.trace();
    let r_ss = yaw_trace.last().map_or(f64::NAN, |s| s.yaw_rate_rad_s);
    let yaw_t63 = first(&yaw_trace, |s| s.yaw_rate_rad_s >= 0.632 * r_ss);
    let r_max = yaw_trace
        .iter()
        .fold(0.0f64, |m, s| m.max(s.yaw_rate_rad_s));

    // Turning circles, starboard then port.
    let (turn_trace, steady_d, turn_speed) = turning_circle(airframe, throttle, steering)?;
    let (_, steady_port, _) = turning_circle(airframe, throttle, -steering)?;
    let at_heading = |deg: f64| {
        turn_trace
            .iter()
            .find(|s| s.heading_rad >= deg.to_radians())
            .copied()
    };
    let advance = at_heading(90.0).map_or(f64::NAN, |s| s.along_m);
    let tactical = at_heading(180.0).map_or(f64::NAN, |s| s.across_m);

    // 10°/10° zig-zag.
    let mut r = Run::new(airframe)?;
    r.run(SETTLE_S, |_| (throttle, 0.0))?;
    r.begin();
    let check = 10f64.to_radians();
    let mut side = 1.0;
    r.run(120.0, |s| {
        if side > 0.0 && s.heading_rad >= check {
            side = -1.0;
        } else if side < 0.0 && s.heading_rad <= -check {
            side = 1.0;
        }
        (throttle, side * steering)
    })?;
    let zz = r.trace();
    let (overshoots, checks) = zigzag_figures(&zz, check);
    // What the pictures show: the first 20 s of the steps, 40 s of the
    // zig-zag, the first full circle.
    let upto = |t: &[Sample], f: &dyn Fn(&Sample) -> bool| -> Vec<Sample> {
        t.iter().take_while(|s| f(s)).copied().collect()
    };
    let shown = [
        upto(&speed_trace, &|s| s.t_s <= 20.0),
        upto(&yaw_trace, &|s| s.t_s <= 20.0),
        upto(&turn_trace, &|s| s.heading_rad <= std::f64::consts::TAU),
        upto(&zz, &|s| s.t_s <= 40.0),
    ];
    Ok(Manoeuvres {
        airframe: airframe.to_string(),
        throttle,
        steering,
        speed_m_s: speed,
        speed_t63_s: speed_t63,
        speed_t90_s: speed_t90,
        yaw_rate_rad_s: r_ss,
        yaw_t63_s: yaw_t63,
        yaw_overshoot_pct: (r_max / r_ss - 1.0) * 100.0,
        advance_m: advance,
        tactical_diameter_m: tactical,
        steady_diameter_m: steady_d,
        steady_diameter_port_m: steady_port,
        turn_speed_ratio: turn_speed / speed,
        zigzag_overshoot_deg: overshoots,
        zigzag_first_check_s: checks.first().copied().unwrap_or(f64::NAN),
        zigzag_period_s: match checks.as_slice() {
            [_, _, c, ..] => c - checks[0],
            _ => f64::NAN,
        },
        traces: shown,
    })
}

/// A turning circle: the trace, the steady diameter 2·V/|r| (m) and the
/// steady speed (m/s).
fn turning_circle(
    airframe: &str,
    throttle: f64,
    steering: f64,
) -> Result<(Vec<Sample>, f64, f64), String> {
    let mut r = Run::new(airframe)?;
    r.run(SETTLE_S, |_| (throttle, 0.0))?;
    r.begin();
    r.run(240.0, |_| (throttle, steering))?;
    let trace = r.trace();
    let end = trace.last().copied().ok_or("no samples")?;
    let s = r.sim.vehicles()[0].body().state;
    let v = s.vel_ned_m_s.xy().norm();
    Ok((trace, 2.0 * v / end.yaw_rate_rad_s.abs(), v))
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
