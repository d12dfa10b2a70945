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
}
