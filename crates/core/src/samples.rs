//! What sensors deliver: the samples that cross the
//! [`FlightController`](crate::controller::FlightController) seam, in the
//! sensor's axes and SI units, stamped with sim time.

use nalgebra::Vector3;
use serde::Serialize;

use crate::geo::GeoPoint;
use crate::time::SimTime;

/// One IMU sample, in the sensor's axes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImuSample {
    /// Sample time.
    pub time: SimTime,
    /// Angular rate, rad/s.
    pub gyro_rad_s: Vector3<f64>,
    /// Specific force, m/s² ((0, 0, −g) level at rest in FRD axes).
    pub accel_m_s2: Vector3<f64>,
}

/// One barometer sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BaroSample {
    /// Sample time.
    pub time: SimTime,
    /// Static pressure, Pa.
    pub pressure_pa: f64,
    /// Temperature, °C.
    pub temperature_degc: f64,
    /// ISA altitude of the measured pressure, m AMSL.
    pub pressure_altitude_m: f64,
}

/// One magnetometer sample, sensor axes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MagSample {
    /// Sample time.
    pub time: SimTime,
    /// Field, gauss.
    pub field_gauss: Vector3<f64>,
}

/// MAVLink-style fix types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[repr(u8)]
pub enum FixType {
    /// No fix (GPS_FIX_TYPE_NO_FIX).
    NoFix = 1,
    /// 2-D fix.
    Fix2d = 2,
    /// 3-D fix.
    Fix3d = 3,
}

/// One GPS report.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpsSample {
    /// When the measurement was taken.
    pub measured: SimTime,
    /// When it is delivered (measured + latency).
    pub delivered: SimTime,
    /// Fix type.
    pub fix: FixType,
    /// Satellites used.
    pub satellites: u8,
    /// Position, WGS-84.
    pub position: GeoPoint,
    /// Position in the local NED frame, m (the same measurement).
    pub pos_ned_m: Vector3<f64>,
    /// Velocity over ground, NED, m/s.
    pub vel_ned_m_s: Vector3<f64>,
    /// Reported horizontal accuracy (1σ), m.
    pub eph_m: f64,
    /// Reported vertical accuracy (1σ), m.
    pub epv_m: f64,
}

impl GpsSample {
    /// Horizontal ground speed, m/s.
    pub fn ground_speed_m_s(&self) -> f64 {
        self.vel_ned_m_s.xy().norm()
    }

    /// Course over ground, deg in [0, 360).
    pub fn course_deg(&self) -> f64 {
        self.vel_ned_m_s
            .y
            .atan2(self.vel_ned_m_s.x)
            .to_degrees()
            .rem_euclid(360.0)
    }
}

/// What a rangefinder reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    /// A distance in range, m (noise included).
    Distance(f64),
    /// Nearer than the sensor's minimum.
    TooClose,
    /// Nothing within the sensor's maximum (or the beam misses the ground).
    TooFar,
}

/// One rangefinder sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RangeSample {
    /// Sample time.
    pub time: SimTime,
    /// The reading.
    pub range: Range,
}

/// The samples produced in one physics tick (most ticks produce few or none).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TickSamples {
    /// An IMU sample, if one was due.
    pub imu: Option<ImuSample>,
    /// A GPS report delivered this tick (measured `latency` earlier), if any.
    pub gps: Option<GpsSample>,
    /// A barometer sample, if one was due.
    pub baro: Option<BaroSample>,
    /// A magnetometer sample, if one was due.
    pub mag: Option<MagSample>,
    /// A rangefinder sample, if one was due.
    pub range: Option<RangeSample>,
}

/// A fixed-capacity list of samples (no allocation); when full, the oldest
/// sample makes room for the newest and is counted as dropped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleBuf<T: Copy, const N: usize> {
    items: [Option<T>; N],
    len: usize,
    dropped: usize,
}

impl<T: Copy, const N: usize> Default for SampleBuf<T, N> {
    fn default() -> Self {
        SampleBuf {
            items: [None; N],
            len: 0,
            dropped: 0,
        }
    }
}

impl<T: Copy, const N: usize> SampleBuf<T, N> {
    /// Appends a sample. When full the oldest is dropped (and counted), so
    /// [`SampleBuf::last`] is always the newest: a bridge that sends only the
    /// latest sample never hands the firmware stale data.
    pub fn push(&mut self, item: T) {
        if N == 0 {
            self.dropped += 1;
            return;
        }
        if self.len < N {
            self.items[self.len] = Some(item);
            self.len += 1;
        } else {
            self.items.rotate_left(1);
            self.items[N - 1] = Some(item);
            self.dropped += 1;
        }
    }

    /// Empties the buffer.
    pub fn clear(&mut self) {
        self.len = 0;
        self.dropped = 0;
    }

    /// The samples in order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.items[..self.len].iter().flatten()
    }

    /// The newest sample.
    pub fn last(&self) -> Option<&T> {
        self.len.checked_sub(1).and_then(|i| self.items[i].as_ref())
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Samples that did not fit.
    pub fn dropped(&self) -> usize {
        self.dropped
    }
}

#[cfg(test)]
mod sample_buf_tests {
    use super::SampleBuf;

    #[test]
    fn a_full_buffer_keeps_the_newest_samples() {
        let mut b = SampleBuf::<u32, 3>::default();
        for i in 0..5 {
            b.push(i);
        }
        assert_eq!(b.iter().copied().collect::<Vec<_>>(), [2, 3, 4]);
        assert_eq!(b.last(), Some(&4));
        assert_eq!((b.dropped(), b.len(), b.is_empty()), (2, 3, false));
        b.clear();
        assert_eq!((b.last(), b.is_empty()), (None, true));
        assert_eq!((b.len(), b.dropped()), (0, 0));
        // A buffer of no room drops and counts every sample.
        let mut none = SampleBuf::<u32, 0>::default();
        none.push(1);
        none.push(2);
        assert_eq!((none.len(), none.dropped(), none.last()), (0, 2, None));
    }

    /// Ground speed is horizontal; the course runs clockwise from north.
    #[test]
    fn gps_speed_and_course_are_over_ground() {
        use super::{FixType, GpsSample};
        use crate::geo::GeoPoint;
        use crate::time::SimTime;
        use nalgebra::Vector3;
        let gps = |n: f64, e: f64| GpsSample {
            measured: SimTime::ZERO,
            delivered: SimTime::ZERO,
            fix: FixType::Fix3d,
            satellites: 10,
            position: GeoPoint::from_deg(47.0, 8.0, 400.0),
            pos_ned_m: Vector3::zeros(),
            vel_ned_m_s: Vector3::new(n, e, 12.0),
            eph_m: 1.0,
            epv_m: 1.5,
        };
        assert_eq!(gps(3.0, 4.0).ground_speed_m_s(), 5.0);
        let course = |n: f64, e: f64| gps(n, e).course_deg();
        assert_eq!(course(1.0, 0.0), 0.0);
        assert!((course(1.0, 1.0) - 45.0).abs() < 1e-12);
        assert!((course(-1.0, 0.0) - 180.0).abs() < 1e-12);
        assert!((course(0.0, -2.0) - 270.0).abs() < 1e-12);
    }
}
