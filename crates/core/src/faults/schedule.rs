//! Starting and ending faults on sim time, mission progress or zone entry.
//!
//! Once built, the schedule allocates nothing: its event log is reserved for
//! one start and one end per fault.

use nalgebra::Vector3;

use super::effects::{FaultEffects, MAX_FAULT_CHANNELS};
use super::spec::{FaultKind, FaultSpec};
use crate::time::SimTime;

/// A fault starting or ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultTransition {
    /// The fault began.
    Start,
    /// The fault ended (its duration ran out).
    End,
}

impl FaultTransition {
    /// `start` or `end`.
    pub fn name(self) -> &'static str {
        match self {
            FaultTransition::Start => "start",
            FaultTransition::End => "end",
        }
    }
}

/// One transition, for `fault_events.csv` and the logs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FaultEvent {
    /// When (the start of the first tick the change applies to).
    pub time: SimTime,
    /// The vehicle's index.
    pub vehicle: usize,
    /// The fault's index in the schedule.
    pub fault: usize,
    /// Its kind.
    pub kind: FaultKind,
    /// Started or ended.
    pub transition: FaultTransition,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Pending,
    Active { since: SimTime },
    Ended,
}

/// How a fault is started.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Trigger {
    At(SimTime),
    Item(u32),
    Zone(usize),
}

#[derive(Debug, Clone)]
struct Scheduled {
    spec: FaultSpec,
    /// Horizontal unit vector the fault acts along (spoof, gust), NED.
    dir: Vector3<f64>,
    vehicle: usize,
    trigger: Trigger,
    state: State,
}

/// The faults of a run.
#[derive(Debug, Clone, Default)]
pub struct FaultSchedule {
    faults: Vec<Scheduled>,
    events: Vec<FaultEvent>,
}

impl FaultSchedule {
    /// A schedule of `faults`, each with the index of its vehicle and, for a
    /// zone trigger, of its zone (the caller has resolved the names).
    pub fn new(faults: Vec<(FaultSpec, usize, Option<usize>)>) -> Self {
        let faults: Vec<Scheduled> = faults
            .into_iter()
            .map(|(spec, vehicle, zone)| {
                let trigger = match (spec.at_s, spec.at_item, zone) {
                    (_, _, Some(z)) => Trigger::Zone(z),
                    (_, Some(i), None) => Trigger::Item(i),
                    (t, None, None) => Trigger::At(SimTime::from_secs_f64(t.unwrap_or(0.0))),
                };
                let dir = match spec.kind {
                    FaultKind::GpsSpoof => towards(spec.bearing_deg.unwrap_or(0.0)),
                    FaultKind::WindGust => towards(spec.from_deg.unwrap_or(0.0) + 180.0),
                    _ => Vector3::zeros(),
                };
                Scheduled {
                    spec,
                    dir,
                    vehicle,
                    trigger,
                    state: State::Pending,
                }
            })
            .collect();
        let events = Vec::with_capacity(2 * faults.len());
        FaultSchedule { faults, events }
    }

    /// No faults at all.
    pub fn is_empty(&self) -> bool {
        self.faults.is_empty()
    }

    /// The faults, in order, with their vehicle index.
    pub fn specs(&self) -> impl Iterator<Item = (&FaultSpec, usize)> {
        self.faults.iter().map(|f| (&f.spec, f.vehicle))
    }

    /// Every transition so far.
    pub fn events(&self) -> &[FaultEvent] {
        &self.events
    }

    /// Whether fault `index` is active.
    pub fn is_active(&self, index: usize) -> bool {
        self.faults
            .get(index)
            .is_some_and(|f| matches!(f.state, State::Active { .. }))
    }

    /// Starts and ends the faults due at `now`. `zone_mask(v)` is the zones
    /// vehicle `v` is in (bit per zone); `reached(v)` the highest mission item
    /// it has reached, if any.
    pub fn update(
        &mut self,
        now: SimTime,
        zone_mask: impl Fn(usize) -> u64,
        reached: impl Fn(usize) -> Option<u32>,
    ) {
        for (i, f) in self.faults.iter_mut().enumerate() {
            let transition = match f.state {
                State::Pending => {
                    let due = match f.trigger {
                        Trigger::At(t) => now >= t,
                        Trigger::Item(item) => reached(f.vehicle).is_some_and(|r| r >= item),
                        Trigger::Zone(z) => z < 64 && zone_mask(f.vehicle) & (1u64 << z) != 0,
                    };
                    if !due {
                        continue;
                    }
                    f.state = State::Active { since: now };
                    FaultTransition::Start
                }
                State::Active { since } => {
                    let over = f
                        .spec
                        .duration_s
                        .is_some_and(|d| now.secs_since(since) >= d - 1e-9);
                    if !over {
                        continue;
                    }
                    f.state = State::Ended;
                    FaultTransition::End
                }
                State::Ended => continue,
            };
            tracing::info!(time = %now, fault = f.spec.kind.name(), vehicle = f.vehicle, transition = transition.name(), "fault");
            self.events.push(FaultEvent {
                time: now,
                vehicle: f.vehicle,
                fault: i,
                kind: f.spec.kind,
                transition,
            });
        }
    }

    /// What the active faults do to vehicle `vehicle` at `now`.
    pub fn effects(&self, vehicle: usize, now: SimTime) -> FaultEffects {
        let mut fx = FaultEffects::default();
        for f in self.faults.iter().filter(|f| f.vehicle == vehicle) {
            if let State::Active { since } = f.state {
                apply(&f.spec, &f.dir, now.secs_since(since), &mut fx);
            }
        }
        fx
    }
}

/// Unit horizontal vector towards `bearing_deg` (clockwise from north), NED.
fn towards(bearing_deg: f64) -> Vector3<f64> {
    let b = bearing_deg.to_radians();
    Vector3::new(b.cos(), b.sin(), 0.0)
}

fn channel(i: Option<u32>) -> Option<usize> {
    let i = i.unwrap_or(0) as usize;
    (i < MAX_FAULT_CHANNELS).then_some(i)
}

/// Adds the effect of `f` (acting along `dir`), active for `elapsed_s`, to
/// `fx`.
fn apply(f: &FaultSpec, dir: &Vector3<f64>, elapsed_s: f64, fx: &mut FaultEffects) {
    match f.kind {
        FaultKind::GpsLoss => fx.gps.lost = true,
        FaultKind::GpsJamming => fx.gps.noise_scale *= f.noise_scale.unwrap_or(10.0),
        FaultKind::GpsSpoof => {
            let v = dir * f.rate_m_s.unwrap_or(1.0);
            fx.gps.offset_ned_m += v * elapsed_s;
            fx.gps.offset_vel_ned_m_s += v;
        }
        FaultKind::ImuBiasStep => {
            fx.imu.gyro_bias_rad_s += Vector3::from(f.gyro_rad_s.unwrap_or_default());
            fx.imu.accel_bias_m_s2 += Vector3::from(f.accel_m_s2.unwrap_or_default());
        }
        FaultKind::ImuStuck => fx.imu.stuck = true,
        FaultKind::ImuNoiseScale => fx.imu.noise_scale *= f.noise_scale.unwrap_or(10.0),
        FaultKind::BaroDriftStep => {
            fx.baro_offset_m += f.offset_m.unwrap_or(0.0) + f.rate_m_s.unwrap_or(0.0) * elapsed_s;
        }
        FaultKind::MagInterference => {
            fx.mag_offset_gauss += Vector3::from(f.offset_gauss.unwrap_or_default());
        }
        FaultKind::MotorFailure => {
            if let Some(i) = channel(f.motor) {
                fx.rotor_thrust_scale[i] *= f.thrust_scale.unwrap_or(0.0);
            }
        }
        FaultKind::ThrusterFailure => {
            if let Some(i) = channel(f.thruster) {
                fx.thruster_thrust_scale[i] *= f.thrust_scale.unwrap_or(0.0);
            }
        }
        FaultKind::WheelMotorFailure => {
            if let Some(i) = channel(f.motor) {
                fx.wheel_motor_torque_scale[i] *= f.torque_scale.unwrap_or(0.0);
            }
        }
        FaultKind::TyreGrip => {
            let k = f.grip_scale.unwrap_or(1.0);
            for (w, g) in fx.tyre_grip_scale.iter_mut().enumerate() {
                if f.wheel.is_none_or(|only| only as usize == w) {
                    *g *= k;
                }
            }
        }
        FaultKind::BatteryCapacityScale => fx.battery.capacity_scale *= f.scale.unwrap_or(1.0),
        FaultKind::BatteryVoltageDrop => fx.battery.voltage_drop_v += f.drop_v.unwrap_or(0.0),
        FaultKind::WindGust => {
            // 1-cosine: 0 → peak at half the length → 0.
            let length = f.duration_s.unwrap_or(1.0).max(1e-3);
            let x = (elapsed_s / length).clamp(0.0, 1.0);
            let speed = 0.5 * f.peak_m_s.unwrap_or(0.0) * (1.0 - (std::f64::consts::TAU * x).cos());
            fx.gust_ned_m_s += dir * speed;
        }
        FaultKind::RcLoss => fx.links.rc_lost = true,
        FaultKind::GcsLinkLoss => fx.links.gcs_lost = true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(kind: FaultKind, t: f64, d: Option<f64>) -> FaultSpec {
        FaultSpec {
            duration_s: d,
            ..FaultSpec::new(kind, t)
        }
    }

    #[test]
    fn a_timed_fault_starts_and_ends_on_the_tick() {
        let mut s = FaultSchedule::new(vec![(at(FaultKind::GpsLoss, 1.0, Some(2.0)), 0, None)]);
        let mut lost = Vec::new();
        for ms in (0..4000).step_by(10) {
            let now = SimTime::from_micros(ms * 1000);
            s.update(now, |_| 0, |_| None);
            lost.push((ms, s.effects(0, now).gps.lost));
        }
        let on: Vec<u64> = lost.iter().filter(|(_, l)| *l).map(|(m, _)| *m).collect();
        assert_eq!(on.first(), Some(&1000));
        assert_eq!(on.last(), Some(&2990));
        assert_eq!(s.events().len(), 2);
        assert!(s.effects(1, SimTime::from_micros(1_500_000)).is_nominal());
    }

    #[test]
    fn item_and_zone_triggers_wait_for_their_condition() {
        let mut item = FaultSpec::new(FaultKind::RcLoss, 0.0);
        item.at_s = None;
        item.at_item = Some(3);
        let mut zone = FaultSpec::new(FaultKind::GcsLinkLoss, 0.0);
        zone.at_s = None;
        zone.zone = Some("z".into());
        let mut s = FaultSchedule::new(vec![(item, 0, None), (zone, 0, Some(2))]);
        let t = SimTime::from_secs(1);
        s.update(t, |_| 0b001, |_| Some(2));
        assert!(s.effects(0, t).is_nominal());
        s.update(t, |_| 0b100, |_| Some(3));
        let fx = s.effects(0, t);
        assert!(fx.links.rc_lost && fx.links.gcs_lost);
    }

    #[test]
    fn a_gust_is_one_minus_cosine() {
        let mut f = at(FaultKind::WindGust, 0.0, Some(4.0));
        f.peak_m_s = Some(10.0);
        f.from_deg = Some(270.0);
        let mut s = FaultSchedule::new(vec![(f, 0, None)]);
        s.update(SimTime::ZERO, |_| 0, |_| None);
        let g = |t: f64| s.effects(0, SimTime::from_secs_f64(t)).gust_ned_m_s;
        assert!(g(0.0).norm() < 1e-12);
        // From the west, so blowing east, peaking at half the length.
        assert!((g(2.0) - Vector3::new(0.0, 10.0, 0.0)).norm() < 1e-9);
        assert!((g(1.0).y - 5.0).abs() < 1e-9);
    }

    /// The schedule tells what it holds and which fault is on; each
    /// transition is logged by name; a zone beyond the 64 a mask holds
    /// never triggers.
    #[test]
    fn a_schedule_reports_its_faults_and_their_state() {
        assert!(FaultSchedule::default().is_empty());
        assert_eq!(FaultSchedule::default().specs().count(), 0);
        let mut far = FaultSpec::new(FaultKind::GcsLinkLoss, 0.0);
        far.at_s = None;
        far.zone = Some("far".into());
        let mut s = FaultSchedule::new(vec![
            (at(FaultKind::GpsLoss, 1.0, Some(1.0)), 2, None),
            (far, 1, Some(64)),
        ]);
        assert!(!s.is_empty());
        let specs: Vec<(FaultKind, usize)> = s.specs().map(|(f, v)| (f.kind, v)).collect();
        assert_eq!(
            specs,
            [(FaultKind::GpsLoss, 2), (FaultKind::GcsLinkLoss, 1)]
        );
        assert!(!s.is_active(0));
        s.update(SimTime::from_secs(1), |_| u64::MAX, |_| None);
        assert!(s.is_active(0) && !s.is_active(1) && !s.is_active(7));
        assert!(!s.effects(2, SimTime::from_secs(1)).is_nominal());
        assert!(s.effects(1, SimTime::from_secs(1)).is_nominal());
        s.update(SimTime::from_secs(2), |_| u64::MAX, |_| None);
        assert!(!s.is_active(0));
        let names: Vec<&str> = s.events().iter().map(|e| e.transition.name()).collect();
        assert_eq!(names, ["start", "end"]);
    }

    /// Every kind of fault, twice on one vehicle, 3 s after both began:
    /// scales multiply, offsets and biases add, a spoof walks at its rate
    /// along its bearing; a motor or thruster beyond the last channel is
    /// ignored.
    #[test]
    fn faults_of_each_kind_compose_on_one_vehicle() {
        let spec = |kind: FaultKind, set: &dyn Fn(&mut FaultSpec)| {
            let mut f = FaultSpec::new(kind, 1.0);
            set(&mut f);
            (f, 0, None)
        };
        let twice = |kind: FaultKind, a: &dyn Fn(&mut FaultSpec), b: &dyn Fn(&mut FaultSpec)| {
            vec![spec(kind, a), spec(kind, b)]
        };
        let last = MAX_FAULT_CHANNELS as u32 - 1;
        let faults: Vec<_> = [
            twice(
                FaultKind::GpsJamming,
                &|f| f.noise_scale = Some(3.0),
                &|f| f.noise_scale = Some(4.0),
            ),
            twice(
                FaultKind::GpsSpoof,
                &|f| {
                    f.rate_m_s = Some(2.0);
                    f.bearing_deg = Some(90.0);
                },
                &|f| f.bearing_deg = Some(0.0),
            ),
            twice(
                FaultKind::ImuBiasStep,
                &|f| f.gyro_rad_s = Some([0.1, 0.2, 0.3]),
                &|f| f.accel_m_s2 = Some([1.0, 2.0, 3.0]),
            ),
            twice(
                FaultKind::ImuNoiseScale,
                &|f| f.noise_scale = Some(2.0),
                &|f| f.noise_scale = Some(5.0),
            ),
            twice(
                FaultKind::BaroDriftStep,
                &|f| {
                    f.offset_m = Some(1.5);
                    f.rate_m_s = Some(0.5);
                },
                &|f| f.offset_m = Some(-0.25),
            ),
            twice(
                FaultKind::MagInterference,
                &|f| f.offset_gauss = Some([0.1, 0.0, -0.2]),
                &|f| f.offset_gauss = Some([0.05, 0.1, 0.0]),
            ),
            twice(
                FaultKind::MotorFailure,
                &|f| {
                    f.motor = Some(last);
                    f.thrust_scale = Some(0.5);
                },
                &|f| {
                    f.motor = Some(last + 1);
                    f.thrust_scale = Some(0.5);
                },
            ),
            twice(
                FaultKind::ThrusterFailure,
                &|f| f.thrust_scale = Some(0.4),
                &|f| {
                    f.thruster = Some(1);
                    f.thrust_scale = Some(0.25);
                },
            ),
            twice(
                FaultKind::WheelMotorFailure,
                &|f| f.torque_scale = Some(0.6),
                &|f| {
                    f.motor = Some(1);
                    f.torque_scale = Some(0.3);
                },
            ),
            twice(FaultKind::TyreGrip, &|f| f.grip_scale = Some(0.5), &|f| {
                f.wheel = Some(2);
                f.grip_scale = Some(0.2);
            }),
            twice(
                FaultKind::BatteryCapacityScale,
                &|f| f.scale = Some(0.8),
                &|f| f.scale = Some(0.5),
            ),
            twice(
                FaultKind::BatteryVoltageDrop,
                &|f| f.drop_v = Some(0.3),
                &|f| f.drop_v = Some(0.2),
            ),
        ]
        .into_iter()
        .flatten()
        .collect();
        let mut s = FaultSchedule::new(faults);
        s.update(SimTime::from_secs(1), |_| 0, |_| None);
        let fx = s.effects(0, SimTime::from_secs(4));
        let close = |a: Vector3<f64>, b: Vector3<f64>| (a - b).norm() < 1e-12;
        assert_eq!(fx.gps.noise_scale, 12.0);
        // 2 m/s east and 1 m/s north (the default rate), for 3 s.
        assert!(
            close(fx.gps.offset_ned_m, Vector3::new(3.0, 6.0, 0.0)),
            "{}",
            fx.gps.offset_ned_m
        );
        assert!(close(
            fx.gps.offset_vel_ned_m_s,
            Vector3::new(1.0, 2.0, 0.0)
        ));
        assert!(close(fx.imu.gyro_bias_rad_s, Vector3::new(0.1, 0.2, 0.3)));
        assert!(close(fx.imu.accel_bias_m_s2, Vector3::new(1.0, 2.0, 3.0)));
        assert_eq!(fx.imu.noise_scale, 10.0);
        // 1.5 + 0.5 m/s × 3 s, and −0.25.
        assert!(
            (fx.baro_offset_m - 2.75).abs() < 1e-12,
            "{}",
            fx.baro_offset_m
        );
        assert!(close(fx.mag_offset_gauss, Vector3::new(0.15, 0.1, -0.2)));
        let mut rotors = [1.0; MAX_FAULT_CHANNELS];
        rotors[MAX_FAULT_CHANNELS - 1] = 0.5;
        assert_eq!(fx.rotor_thrust_scale, rotors);
        let mut thrusters = [1.0; MAX_FAULT_CHANNELS];
        (thrusters[0], thrusters[1]) = (0.4, 0.25);
        assert_eq!(fx.thruster_thrust_scale, thrusters);
        let mut wheel_motors = [1.0; MAX_FAULT_CHANNELS];
        (wheel_motors[0], wheel_motors[1]) = (0.6, 0.3);
        assert_eq!(fx.wheel_motor_torque_scale, wheel_motors);
        // Every wheel at half its grip; the rear left at a fifth of that.
        assert_eq!(fx.tyre_grip_scale, [0.5, 0.5, 0.1, 0.5]);
        assert_eq!(fx.battery.capacity_scale, 0.4);
        assert_eq!(fx.battery.voltage_drop_v, 0.5);
    }

    /// Two gusts on one vehicle add up.
    #[test]
    fn gusts_add_up() {
        let gust = |from: f64| {
            let mut f = at(FaultKind::WindGust, 0.0, Some(4.0));
            f.peak_m_s = Some(10.0);
            f.from_deg = Some(from);
            (f, 0, None)
        };
        let mut s = FaultSchedule::new(vec![gust(270.0), gust(180.0)]);
        s.update(SimTime::ZERO, |_| 0, |_| None);
        let g = s.effects(0, SimTime::from_secs(2)).gust_ned_m_s;
        assert!((g - Vector3::new(10.0, 10.0, 0.0)).norm() < 1e-9, "{g}");
    }
}
