//! Simulation time and rates.
//!
//! Owns the one clock of the simulation: [`SimTime`], an integer count of
//! microseconds that only the lockstep loop advances, and [`Rate`], an integer
//! divider of the physics tick. The simulation (`mavsitl-sim`) and SimpleFlight
//! never read the wall clock; real-time pacing is a layer on top of the loop
//! (the CLI), and the firmware bridges and ground-station links read it only
//! for their sockets' timeouts (how long to wait for a firmware, never what
//! time the simulation is at).

use std::fmt;
use std::ops::{Add, Sub};

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Simulation time in whole microseconds since the start of the run.
///
/// Monotonic, starts at zero, advanced only by the lockstep loop in whole physics
/// ticks, so there is no floating-point accumulation of time.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
pub struct SimTime(u64);

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0);

    /// A time from whole microseconds.
    pub const fn from_micros(us: u64) -> Self {
        SimTime(us)
    }

    /// A time from whole seconds.
    pub const fn from_secs(s: u64) -> Self {
        SimTime(s * 1_000_000)
    }

    /// A time from seconds, rounded to the nearest microsecond (negative and
    /// non-finite inputs give zero).
    pub fn from_secs_f64(s: f64) -> Self {
        if s.is_finite() {
            // `as` saturates: a negative time gives 0.
            SimTime((s * 1e6).round() as u64)
        } else {
            SimTime(0)
        }
    }

    /// Whole microseconds.
    pub const fn as_micros(self) -> u64 {
        self.0
    }

    /// Whole nanoseconds (the EuRoC timestamp unit).
    pub const fn as_nanos(self) -> u128 {
        self.0 as u128 * 1000
    }

    /// Seconds as `f64` (exact below 2^53 µs, about 285 years).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-6
    }

    /// Seconds elapsed since `earlier` (0 if `earlier` is later).
    pub fn secs_since(self, earlier: SimTime) -> f64 {
        (self - earlier) as f64 * 1e-6
    }
}

impl Add<u64> for SimTime {
    type Output = SimTime;
    /// Adds microseconds.
    fn add(self, us: u64) -> SimTime {
        SimTime(self.0 + us)
    }
}

impl Sub for SimTime {
    type Output = u64;
    /// Microseconds between two times (saturating at zero).
    fn sub(self, rhs: SimTime) -> u64 {
        self.0.saturating_sub(rhs.0)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:06} s", self.0 / 1_000_000, self.0 % 1_000_000)
    }
}

/// Errors in choosing rates.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum RateError {
    /// The physics rate is outside 250–4000 Hz.
    #[error("physics rate {hz} Hz is outside {min}–{max} Hz")]
    PhysicsOutOfRange {
        /// The rejected rate.
        hz: u32,
        /// Lowest accepted rate.
        min: u32,
        /// Highest accepted rate.
        max: u32,
    },
    /// The physics period would not be a whole number of microseconds.
    #[error("physics rate {hz} Hz does not divide one second into whole microseconds (try 250, 400, 500, 1000, 2000 or 4000)")]
    PhysicsNotWholeMicros {
        /// The rejected rate.
        hz: u32,
    },
    /// A rate is not an integer divider of the physics rate.
    #[error("{hz} Hz is not an integer divider of the {physics_hz} Hz physics rate")]
    NotADivider {
        /// The rejected rate.
        hz: u32,
        /// The physics rate it must divide.
        physics_hz: u32,
    },
}

/// The physics tick rate, 250–4000 Hz, with a whole-microsecond period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhysicsRate {
    hz: u32,
    /// 1 s / hz, µs: kept, as the loop reads it every tick.
    period_us: u64,
}

impl PhysicsRate {
    /// Lowest accepted physics rate, Hz.
    pub const MIN_HZ: u32 = 250;
    /// Highest accepted physics rate, Hz.
    pub const MAX_HZ: u32 = 4000;
    /// The default, 1 kHz.
    pub const DEFAULT: PhysicsRate = PhysicsRate {
        hz: 1000,
        period_us: 1000,
    };

    /// Checks and builds a physics rate.
    ///
    /// # Errors
    /// [`RateError`] when outside 250–4000 Hz or when 1 s / hz is not whole µs.
    pub fn new(hz: u32) -> Result<Self, RateError> {
        if !(Self::MIN_HZ..=Self::MAX_HZ).contains(&hz) {
            return Err(RateError::PhysicsOutOfRange {
                hz,
                min: Self::MIN_HZ,
                max: Self::MAX_HZ,
            });
        }
        if 1_000_000 % hz != 0 {
            return Err(RateError::PhysicsNotWholeMicros { hz });
        }
        Ok(PhysicsRate {
            hz,
            period_us: 1_000_000 / u64::from(hz),
        })
    }

    /// Rate in Hz.
    pub fn hz(self) -> u32 {
        self.hz
    }

    /// The rate, Hz, that divides this physics rate and lies nearest `hz`
    /// (the higher of two as near): `hz` itself when it divides. What a
    /// default rate becomes at a physics rate it does not divide: at
    /// 250 Hz, 200 Hz becomes 250 Hz and 20 Hz becomes 25 Hz; at 400 Hz,
    /// 250 Hz becomes 200 Hz.
    pub fn nearest_divider(self, hz: u32) -> u32 {
        if hz != 0 && self.hz.is_multiple_of(hz) {
            return hz;
        }
        (1..=self.hz)
            .filter(|&r| self.hz.is_multiple_of(r))
            .min_by_key(|&r| (r.abs_diff(hz), std::cmp::Reverse(r)))
            .unwrap_or(self.hz)
    }

    /// Tick period in whole microseconds.
    pub fn period_us(self) -> u64 {
        self.period_us
    }

    /// Tick period in seconds.
    pub fn dt_s(self) -> f64 {
        self.period_us() as f64 * 1e-6
    }

    /// A rate `hz` expressed as a divider of this physics rate.
    ///
    /// # Errors
    /// [`RateError::NotADivider`] when `hz` is zero or does not divide the physics rate.
    pub fn divider(self, hz: u32) -> Result<Rate, RateError> {
        // No rate above the physics rate divides it, nor does 0.
        if !self.hz.is_multiple_of(hz) {
            return Err(RateError::NotADivider {
                hz,
                physics_hz: self.hz,
            });
        }
        Ok(Rate::every(self.hz / hz))
    }
}

impl Default for PhysicsRate {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A rate as an integer divider of the physics tick: due on every `divider`-th tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    divider: u32,
    /// The divider as odd × 2^`shift`: the odd factor's inverse modulo
    /// 2⁶⁴, `shift`, and ⌊(2⁶⁴ − 1) / divider⌋, with which
    /// [`Rate::is_due`] tests divisibility by a multiplication instead of
    /// a division (Hacker's Delight, 2nd ed., §10-17).
    inverse: u64,
    shift: u32,
    limit: u64,
}

impl Rate {
    /// Every physics tick.
    pub const EVERY_TICK: Rate = Rate::every(1);

    /// Due on every `divider`-th tick (`divider` ≥ 1).
    const fn every(divider: u32) -> Rate {
        let shift = divider.trailing_zeros();
        let odd = (divider >> shift) as u64;
        // Newton's iteration doubles the correct low bits of an inverse;
        // an odd number is its own inverse to three bits.
        let mut inverse = odd;
        let mut i = 0;
        while i < 5 {
            inverse = inverse.wrapping_mul(2u64.wrapping_sub(odd.wrapping_mul(inverse)));
            i += 1;
        }
        Rate {
            divider,
            inverse,
            shift,
            limit: u64::MAX / divider as u64,
        }
    }

    /// The divider (physics ticks per occurrence).
    pub fn divider(self) -> u32 {
        self.divider
    }

    /// Whether tick number `tick` (counted from 0) is one of this rate's ticks.
    pub fn is_due(self, tick: u64) -> bool {
        // tick = divider · q exactly when tick · odd⁻¹, turned right by
        // `shift`, is at most ⌊(2⁶⁴ − 1) / divider⌋.
        tick.wrapping_mul(self.inverse).rotate_right(self.shift) <= self.limit
    }

    /// The period of this rate in whole microseconds, given the physics rate.
    pub fn period_us(self, physics: PhysicsRate) -> u64 {
        physics.period_us() * u64::from(self.divider)
    }
}

/// Seconds from outside (an argument, a settings file, a client's request)
/// outside the range their use allows. Prints the value in exponent form
/// when plain digits would run long (1e300, not 301 digits).
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{name} {}: give seconds from {} to {}", show(*.value), show(*.min), show(*.max))]
pub struct SecondsError {
    /// What the seconds are (a flag, a key, a call).
    pub name: String,
    /// The value given.
    pub value: f64,
    /// Smallest allowed, s.
    pub min: f64,
    /// Largest allowed, s.
    pub max: f64,
}

/// `x` as a person writes it: plain for everyday magnitudes, exponent form
/// beyond (so a hostile 1e300 stays one short line).
pub fn show(x: f64) -> String {
    let a = x.abs();
    if x.is_finite() && (a == 0.0 || (1e-4..1e7).contains(&a)) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// The one checked way from outside seconds to a [`Duration`]: `secs` must
/// be finite and within `min..=max` (both finite, `min` ≥ 0), else the
/// error names `name` and the range. `Duration::from_secs_f64` panics on
/// negative, non-finite and overflowing inputs; nothing from outside reaches
/// it unchecked.
///
/// [`Duration`]: std::time::Duration
pub fn checked_duration(
    name: &str,
    secs: f64,
    min: f64,
    max: f64,
) -> Result<std::time::Duration, SecondsError> {
    let err = || SecondsError {
        name: name.to_string(),
        value: secs,
        min,
        max,
    };
    if !(secs.is_finite() && secs >= min && secs <= max) {
        return Err(err());
    }
    std::time::Duration::try_from_secs_f64(secs).map_err(|_| err())
}

/// A wall-clock span computed inside the program (a pacing deadline, a
/// measured time), saturating instead of panicking: negative and NaN give
/// zero, too large gives [`std::time::Duration::MAX`].
pub fn saturating_duration(secs: f64) -> std::time::Duration {
    if secs.is_nan() || secs <= 0.0 {
        std::time::Duration::ZERO
    } else {
        std::time::Duration::try_from_secs_f64(secs).unwrap_or(std::time::Duration::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_seconds_are_checked_before_they_become_a_duration() {
        use std::time::Duration;
        assert_eq!(
            checked_duration("--timeout", 2.5, 0.001, 1e7),
            Ok(Duration::from_millis(2500))
        );
        for bad in [0.0, -5.0, f64::NAN, f64::INFINITY, 1e300, 1e7 + 1.0] {
            let e = checked_duration("--timeout", bad, 0.001, 1e7).unwrap_err();
            assert_eq!(e.value.to_bits(), bad.to_bits());
        }
        assert_eq!(
            checked_duration("--timeout", 1e300, 0.001, 1e7)
                .unwrap_err()
                .to_string(),
            "--timeout 1e300: give seconds from 0.001 to 1e7"
        );
        assert_eq!(
            checked_duration("ClockSpeed", f64::NAN, 1e-3, 1e4)
                .unwrap_err()
                .to_string(),
            "ClockSpeed NaN: give seconds from 0.001 to 10000"
        );
        assert_eq!(saturating_duration(-1.0), Duration::ZERO);
        assert_eq!(saturating_duration(f64::NAN), Duration::ZERO);
        assert_eq!(saturating_duration(1e300), Duration::MAX);
        assert_eq!(saturating_duration(0.25), Duration::from_millis(250));
    }

    #[test]
    fn the_nearest_divider_of_a_physics_rate() {
        let at = |physics, hz| PhysicsRate::new(physics).unwrap().nearest_divider(hz);
        // A rate that divides stays.
        assert_eq!(at(1000, 200), 200);
        assert_eq!(at(1000, 250), 250);
        assert_eq!(at(250, 50), 50);
        // 200 at 250 Hz: 250 (50 away) is nearer than 125 (75 away).
        assert_eq!(at(250, 200), 250);
        // 20 at 250 Hz: 25 (5 away) is nearer than 10 (10 away).
        assert_eq!(at(250, 20), 25);
        // 250 at 400 Hz: 200 (50 away) is nearer than 400 (150 away).
        assert_eq!(at(400, 250), 200);
        assert_eq!(at(800, 250), 200);
        // 200 at 625 Hz: 125 (75 away) is nearer than 625.
        assert_eq!(at(625, 200), 125);
        // A tie takes the higher: 300 at 400 Hz lies between 200 and 400.
        assert_eq!(at(400, 300), 400);
        // Above the physics rate: the physics rate; 0: the lowest, 1 Hz.
        assert_eq!(at(250, 4000), 250);
        assert_eq!(at(250, 0), 1);
        for physics in [
            250, 320, 400, 500, 625, 800, 1000, 1250, 1600, 2000, 2500, 3125, 4000,
        ] {
            let rate = PhysicsRate::new(physics).unwrap();
            for hz in [0, 1, 7, 10, 20, 50, 200, 250, 333, 1000, 5000] {
                let r = rate.nearest_divider(hz);
                assert!(rate.divider(r).is_ok(), "{physics} Hz, {hz} Hz: {r}");
                // No divider lies nearer.
                for d in (1..=physics).filter(|d| physics % d == 0) {
                    assert!(
                        d.abs_diff(hz) >= r.abs_diff(hz),
                        "{physics}, {hz}: {d} nearer than {r}"
                    );
                }
            }
        }
    }

    #[test]
    fn physics_rate_bounds_and_whole_micros() {
        assert!(PhysicsRate::new(1000).is_ok());
        assert!(PhysicsRate::new(250).is_ok());
        assert!(PhysicsRate::new(4000).is_ok());
        assert!(matches!(
            PhysicsRate::new(249),
            Err(RateError::PhysicsOutOfRange { .. })
        ));
        assert!(matches!(
            PhysicsRate::new(4001),
            Err(RateError::PhysicsOutOfRange { .. })
        ));
        assert_eq!(
            PhysicsRate::new(3000),
            Err(RateError::PhysicsNotWholeMicros { hz: 3000 })
        );
        assert_eq!(PhysicsRate::new(400).map(|r| r.period_us()), Ok(2500));
        assert_eq!(PhysicsRate::new(3125).map(|r| r.period_us()), Ok(320));
        assert_eq!(PhysicsRate::new(1000), Ok(PhysicsRate::DEFAULT));
        let r = PhysicsRate::new(400).expect("400 Hz");
        assert_eq!((r.hz(), r.dt_s()), (400, 0.0025));
    }

    #[test]
    fn is_due_is_divisibility() {
        let edges = [0, 1, 2, 3, 999, 1000, 1001, u64::MAX - 1, u64::MAX];
        for d in (1..=4_100).chain([65_536, 1_000_000, 999_983, u32::MAX]) {
            let r = Rate::every(d);
            let d64 = u64::from(d);
            let near = |t: u64| t.saturating_sub(2)..=t.saturating_add(2);
            let multiples = [d64, 7 * d64, d64 << 20, u64::MAX / d64 * d64];
            let ticks = (0..3 * d64.min(3_000))
                .chain(edges)
                .chain(multiples.into_iter().flat_map(near));
            for t in ticks {
                assert_eq!(r.is_due(t), t % d64 == 0, "tick {t} of every {d}");
            }
        }
        assert_eq!(Rate::EVERY_TICK, Rate::every(1));
    }

    #[test]
    fn dividers() {
        let p = PhysicsRate::new(1000).unwrap();
        let r = p.divider(250).unwrap();
        assert_eq!(r.divider(), 4);
        assert!(r.is_due(0) && r.is_due(4) && !r.is_due(5));
        assert_eq!(r.period_us(p), 4000);
        assert!(p.divider(300).is_err());
        assert!(p.divider(0).is_err());
        assert!(p.divider(2000).is_err());
        assert_eq!(p.divider(1000).map(Rate::divider), Ok(1));
        assert_eq!(p.divider(1).map(Rate::divider), Ok(1000));
    }

    #[test]
    fn time_arithmetic_is_integer() {
        let mut t = SimTime::ZERO;
        for _ in 0..1_000_000 {
            t = t + 1000;
        }
        assert_eq!(t, SimTime::from_secs(1000));
        assert_eq!(t.as_nanos(), 1_000_000_000_000);
        assert_eq!(SimTime::from_secs_f64(0.0025).as_micros(), 2500);
        assert_eq!(SimTime::from_secs_f64(f64::NAN), SimTime::ZERO);
        assert_eq!(SimTime::from_secs_f64(f64::INFINITY), SimTime::ZERO);
        assert_eq!(SimTime::from_secs_f64(-2.5), SimTime::ZERO);
        assert_eq!(SimTime::from_secs_f64(1.000_000_4).as_micros(), 1_000_000);
        assert_eq!(SimTime::from_micros(2_500_000).as_secs_f64(), 2.5);
        let (a, b) = (
            SimTime::from_micros(1_250_000),
            SimTime::from_micros(4_000_000),
        );
        assert_eq!((b.secs_since(a), a.secs_since(b)), (2.75, 0.0));
        assert_eq!(format!("{}", SimTime::from_micros(1_500_001)), "1.500001 s");
    }
}
