//! Which sensors deliver: SimpleFlight's view of its sensors' health, for the
//! pre-arm checks and SYS_STATUS.

use mavsitl_core::time::SimTime;

/// One of the sensors SimpleFlight reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sensor {
    /// The IMU (gyro and accelerometer).
    Imu,
    /// The GPS receiver.
    Gps,
    /// The barometer.
    Baro,
    /// The magnetometer.
    Mag,
}

impl Sensor {
    /// Every sensor, in the order the pre-arm checks name them.
    pub const ALL: [Sensor; 4] = [Sensor::Imu, Sensor::Gps, Sensor::Baro, Sensor::Mag];

    /// Its name in operator messages.
    pub fn name(self) -> &'static str {
        match self {
            Sensor::Imu => "IMU",
            Sensor::Gps => "GPS",
            Sensor::Baro => "barometer",
            Sensor::Mag => "magnetometer",
        }
    }

    /// How long it may stay silent and still count as alive, s (GPS reports
    /// at 5–10 Hz, the others at tens of Hz or more).
    pub fn alive_within_s(self) -> f64 {
        match self {
            Sensor::Gps => 1.5,
            Sensor::Imu | Sensor::Baro | Sensor::Mag => 0.5,
        }
    }
}

/// Which sensors are alive: their samples keep coming.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SensorsAlive {
    /// The IMU.
    pub imu: bool,
    /// The GPS.
    pub gps: bool,
    /// The barometer.
    pub baro: bool,
    /// The magnetometer.
    pub mag: bool,
}

/// When each sensor last delivered a sample.
#[derive(Debug, Clone, Copy, Default)]
pub struct SensorWatch {
    last: [Option<SimTime>; 4],
}

impl SensorWatch {
    /// `s` delivered at `now`.
    pub fn heard(&mut self, s: Sensor, now: SimTime) {
        self.last[s as usize] = Some(now);
    }

    /// The first sensor (in [`Sensor::ALL`] order) never heard from.
    pub fn first_silent(&self) -> Option<Sensor> {
        Sensor::ALL
            .into_iter()
            .find(|s| self.last[*s as usize].is_none())
    }

    /// Which sensors are alive at `now`.
    pub fn alive(&self, now: SimTime) -> SensorsAlive {
        let alive = |s: Sensor| {
            self.last[s as usize].is_some_and(|t| now.secs_since(t) <= s.alive_within_s())
        };
        SensorsAlive {
            imu: alive(Sensor::Imu),
            gps: alive(Sensor::Gps),
            baro: alive(Sensor::Baro),
            mag: alive(Sensor::Mag),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sensor_is_alive_while_it_keeps_reporting() {
        let mut w = SensorWatch::default();
        assert_eq!(w.first_silent(), Some(Sensor::Imu));
        let t0 = SimTime::from_micros(1_000_000);
        for s in Sensor::ALL {
            w.heard(s, t0);
        }
        assert_eq!(w.first_silent(), None);
        let all = SensorsAlive {
            imu: true,
            gps: true,
            baro: true,
            mag: true,
        };
        assert_eq!(w.alive(t0), all);
        // 1 s later only the GPS (1.5 s allowed) still counts.
        let t1 = SimTime::from_micros(2_000_000);
        assert_eq!(
            w.alive(t1),
            SensorsAlive {
                gps: true,
                ..SensorsAlive::default()
            }
        );
        w.heard(Sensor::Baro, t1);
        assert!(w.alive(t1).baro);
        assert!(!w.alive(SimTime::from_micros(3_600_000)).gps);
    }
}
