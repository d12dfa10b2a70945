//! Rangefinder: the distance along the sensor's beam to the ground (or water)
//! plane z = 0 through home, plus white noise.
//!
//! The beam is the sensor's +x axis; the default mount pitches it 90° down, so
//! a level vehicle at height h reads h (at a tilt θ, h / cos θ). A beam that
//! points at or above the horizon, or meets the plane beyond `max_m`, is out of
//! range high; closer than `min_m`, out of range low. The noise is added to
//! readings in range only, as a time-of-flight sensor's spread is.

use nalgebra::{UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

use super::mount::Mount;
use super::noise::noisy;
use mavsitl_core::param::ParamError;
use mavsitl_core::rng::NoiseRng;
pub use mavsitl_core::samples::{Range, RangeSample};
use mavsitl_core::time::SimTime;

/// Rangefinder parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RangefinderParams {
    /// Whether the vehicle has this sensor (default: no).
    pub enabled: bool,
    /// Output rate, Hz (divides the physics rate).
    pub rate_hz: u32,
    /// Shortest distance measured, m.
    pub min_m: f64,
    /// Longest distance measured, m.
    pub max_m: f64,
    /// White noise on a reading in range, m.
    pub noise_sigma_m: f64,
    /// Mount; the beam is the sensor's +x axis (default: pointing down).
    pub mount: Mount,
}

impl Default for RangefinderParams {
    fn default() -> Self {
        RangefinderParams {
            enabled: false,
            rate_hz: 50,
            min_m: 0.2,
            max_m: 40.0,
            noise_sigma_m: 0.02,
            mount: Mount {
                pitch_deg: -90.0,
                ..Mount::default()
            },
        }
    }
}

impl RangefinderParams {
    /// Checks values.
    ///
    /// # Errors
    /// [`ParamError`] naming the field.
    pub fn validate(&self) -> Result<(), ParamError> {
        use mavsitl_core::param::check_range;
        check_range("min_m", self.min_m, 0.0, 1e4)?;
        check_range("max_m", self.max_m, self.min_m, 1e5)?;
        check_range("noise_sigma_m", self.noise_sigma_m, 0.0, 100.0)?;
        self.mount.validate()
    }
}

/// Whether a beam with this NED z component (of a unit vector) points below
/// the horizon; one within 1e-9 of it would meet the plane beyond any range.
fn points_down(beam_z: f64) -> bool {
    beam_z > 1e-9
}

/// A rangefinder with its noise state.
#[derive(Debug, Clone)]
pub struct Rangefinder {
    params: RangefinderParams,
    body_from_sensor: UnitQuaternion<f64>,
    rng: NoiseRng,
}

impl Rangefinder {
    /// A rangefinder with its own RNG.
    pub fn new(params: RangefinderParams, rng: NoiseRng) -> Self {
        Rangefinder {
            body_from_sensor: params.mount.sensor_from_body().inverse(),
            params,
            rng,
        }
    }

    /// The parameters.
    pub fn params(&self) -> &RangefinderParams {
        &self.params
    }

    /// The true distance along the beam to the plane z = 0 (NED, m) for a
    /// vehicle at `pos_ned_m` with attitude `att_ned_frd`, or `None` when the
    /// beam does not meet it. Over a heightmap the caller gives the position
    /// from the ground under the vehicle, taken as level there.
    pub fn true_distance_m(
        &self,
        pos_ned_m: &Vector3<f64>,
        att_ned_frd: &UnitQuaternion<f64>,
    ) -> Option<f64> {
        let origin = pos_ned_m + att_ned_frd * self.params.mount.offset_frd_m();
        let beam = att_ned_frd * (self.body_from_sensor * Vector3::x());
        // Above the plane, origin.z < 0: the beam must point down (z > 0).
        let d = -origin.z / beam.z;
        (points_down(beam.z) && d.is_finite()).then_some(d.max(0.0))
    }

    /// Samples at `time`.
    pub fn sample(
        &mut self,
        time: SimTime,
        pos_ned_m: &Vector3<f64>,
        att_ned_frd: &UnitQuaternion<f64>,
    ) -> RangeSample {
        let range = match self.true_distance_m(pos_ned_m, att_ned_frd) {
            Some(d) if d > self.params.max_m => Range::TooFar,
            None => Range::TooFar,
            Some(d) if d < self.params.min_m => Range::TooClose,
            Some(d) => Range::Distance(noisy(d, self.params.noise_sigma_m, &mut self.rng)),
        };
        RangeSample { time, range }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mavsitl_core::rng::{noise_rng, NoiseSource};

    fn sensor(noise: f64) -> Rangefinder {
        Rangefinder::new(
            RangefinderParams {
                enabled: true,
                noise_sigma_m: noise,
                ..RangefinderParams::default()
            },
            noise_rng(1, 0, NoiseSource::Rangefinder),
        )
    }

    #[test]
    fn reads_height_over_cosine_of_tilt() {
        let r = sensor(0.0);
        let level = UnitQuaternion::identity();
        let at = Vector3::new(3.0, -2.0, -10.0);
        let d = r.true_distance_m(&at, &level).unwrap_or(f64::NAN);
        assert!((d - 10.0).abs() < 1e-12, "{d}");
        let tilt = 0.3_f64;
        let rolled = UnitQuaternion::from_euler_angles(tilt, 0.0, 0.7);
        let d = r.true_distance_m(&at, &rolled).unwrap_or(f64::NAN);
        assert!((d - 10.0 / tilt.cos()).abs() < 1e-9, "{d}");
    }

    #[test]
    fn out_of_range_both_ways() {
        let mut r = sensor(0.0);
        let level = UnitQuaternion::identity();
        let t = SimTime::ZERO;
        assert_eq!(
            r.sample(t, &Vector3::new(0.0, 0.0, -50.0), &level).range,
            Range::TooFar
        );
        assert_eq!(
            r.sample(t, &Vector3::new(0.0, 0.0, -0.1), &level).range,
            Range::TooClose
        );
        // Upside down, the beam points at the sky.
        let inverted = UnitQuaternion::from_euler_angles(std::f64::consts::PI, 0.0, 0.0);
        assert_eq!(
            r.sample(t, &Vector3::new(0.0, 0.0, -5.0), &inverted).range,
            Range::TooFar
        );
        assert_eq!(
            r.sample(t, &Vector3::new(0.0, 0.0, -5.0), &level).range,
            Range::Distance(5.0)
        );
    }

    #[test]
    fn the_beam_starts_at_the_mount_and_its_range_ends_are_in_range() {
        let mut r = Rangefinder::new(
            RangefinderParams {
                enabled: true,
                noise_sigma_m: 0.0,
                min_m: 0.5,
                max_m: 8.0,
                mount: Mount {
                    x_m: 1.0,
                    z_m: 0.25,
                    pitch_deg: -90.0,
                    ..Mount::default()
                },
                ..RangefinderParams::default()
            },
            noise_rng(1, 0, NoiseSource::Rangefinder),
        );
        assert_eq!(r.params().max_m, 8.0);
        // Mounted 1 m forward and 0.25 m below the CG: level at 6 m, it reads
        // 5.75 m; pitched up 30°, its origin rises by sin 30° and the beam
        // slants: (6 + 0.5 − 0.25·cos 30°)/cos 30°.
        let t = SimTime::ZERO;
        let at = Vector3::new(0.0, 0.0, -6.0);
        let level = UnitQuaternion::identity();
        assert_eq!(r.sample(t, &at, &level).range, Range::Distance(5.75));
        let up = UnitQuaternion::from_euler_angles(0.0, 30f64.to_radians(), 0.0);
        let (s, c) = 30f64.to_radians().sin_cos();
        let expect = (6.0 + s - 0.25 * c) / c;
        let d = r.true_distance_m(&at, &up).unwrap_or(f64::NAN);
        assert!((d - expect).abs() < 1e-12, "{d} vs {expect}");
        // Exactly at either end: a reading.
        let far = Vector3::new(0.0, 0.0, -8.25);
        assert_eq!(r.sample(t, &far, &level).range, Range::Distance(8.0));
        let near = Vector3::new(0.0, 0.0, -0.75);
        assert_eq!(r.sample(t, &near, &level).range, Range::Distance(0.5));
        // The mount below the surface: no distance left, too close.
        let sunk = Vector3::new(0.0, 0.0, 0.1);
        assert_eq!(r.true_distance_m(&sunk, &level), Some(0.0));
        assert_eq!(r.sample(t, &sunk, &level).range, Range::TooClose);
        // Pitched up 90°, the beam lies along the horizon and never meets
        // the plane.
        let nose_up = UnitQuaternion::from_euler_angles(0.0, 90f64.to_radians(), 0.0);
        assert_eq!(r.true_distance_m(&at, &nose_up), None);
    }

    #[test]
    fn validate_names_the_bad_range() {
        let d = RangefinderParams::default;
        assert!(d().validate().is_ok());
        let field = |p: RangefinderParams| p.validate().unwrap_err().field;
        assert_eq!(field(RangefinderParams { min_m: -1.0, ..d() }), "min_m");
        assert_eq!(field(RangefinderParams { max_m: 0.1, ..d() }), "max_m");
        assert_eq!(
            field(RangefinderParams {
                noise_sigma_m: 101.0,
                ..d()
            }),
            "noise_sigma_m"
        );
        let bad_mount = Mount {
            z_m: f64::INFINITY,
            ..Mount::default()
        };
        assert_eq!(
            field(RangefinderParams {
                mount: bad_mount,
                ..d()
            }),
            "mount"
        );
    }

    #[test]
    fn noise_has_the_configured_spread() {
        let mut r = sensor(0.05);
        let level = UnitQuaternion::identity();
        let n = 20_000;
        let (mut sum, mut sq) = (0.0, 0.0);
        for _ in 0..n {
            let Range::Distance(d) = r
                .sample(SimTime::ZERO, &Vector3::new(0.0, 0.0, -5.0), &level)
                .range
            else {
                panic!("out of range at 5 m");
            };
            sum += d - 5.0;
            sq += (d - 5.0) * (d - 5.0);
        }
        let mean = sum / n as f64;
        let sd = (sq / n as f64 - mean * mean).sqrt();
        assert!(mean.abs() < 0.002, "mean {mean}");
        assert!((sd - 0.05).abs() < 0.002, "sd {sd}");
    }
}
