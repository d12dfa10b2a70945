//! Seeded random streams.
//!
//! Every noise source owns its own RNG, derived from (scenario seed, vehicle id,
//! source id): a ChaCha8 generator keyed by the seed, on the stream
//! `vehicle_id << 32 | source_id`. Distinct (vehicle, source) pairs therefore draw
//! from non-overlapping streams, and the sequence depends on nothing else — not on
//! thread timing, not on other sources, not on the wall clock. There is no global
//! RNG in the crate.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The generator type every noise source owns.
pub type NoiseRng = ChaCha8Rng;

/// Identifies a noise source within one vehicle. Never reuse a number for a new
/// meaning: recorded runs name their streams by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum NoiseSource {
    /// Dryden turbulence of the wind the vehicle flies through.
    Turbulence = 1,
    /// Inertial measurement unit.
    Imu = 2,
    /// GNSS receiver.
    Gps = 3,
    /// Barometer.
    Baro = 4,
    /// Magnetometer.
    Mag = 5,
    /// Rangefinder.
    Rangefinder = 6,
}

/// The stream number of a (vehicle, source) pair.
pub fn stream_id(vehicle_id: u32, source: NoiseSource) -> u64 {
    (u64::from(vehicle_id) << 32) | source as u64
}

/// A fresh RNG for one noise source of one vehicle.
pub fn noise_rng(seed: u64, vehicle_id: u32, source: NoiseSource) -> NoiseRng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream_id(vehicle_id, source));
    rng
}

/// A fresh RNG for the `index`th LiDAR of a vehicle: streams 256 + index,
/// apart from every [`NoiseSource`].
pub fn lidar_rng(seed: u64, vehicle_id: u32, index: u8) -> NoiseRng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream((u64::from(vehicle_id) << 32) | (256 + u64::from(index)));
    rng
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let draw = |seed, v, s| {
            let mut r = noise_rng(seed, v, s);
            (0..8).map(|_| r.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(draw(7, 0, NoiseSource::Imu), draw(7, 0, NoiseSource::Imu));
        assert_ne!(draw(7, 0, NoiseSource::Imu), draw(7, 0, NoiseSource::Gps));
        assert_ne!(draw(7, 0, NoiseSource::Imu), draw(7, 1, NoiseSource::Imu));
        assert_ne!(draw(7, 0, NoiseSource::Imu), draw(8, 0, NoiseSource::Imu));
    }

    /// A LiDAR's stream is ChaCha8's stream (vehicle << 32) | (256 + index):
    /// the same draws as a generator set to that stream by hand, apart from
    /// every other source's, vehicle's and LiDAR's.
    #[test]
    fn lidar_streams_sit_above_the_sources_per_vehicle_and_index() {
        let take = |mut r: NoiseRng| (0..4).map(|_| r.next_u64()).collect::<Vec<_>>();
        let mut by_hand = ChaCha8Rng::seed_from_u64(5);
        by_hand.set_stream((3u64 << 32) | 258);
        assert_eq!(take(lidar_rng(5, 3, 2)), take(by_hand));
        assert_eq!(lidar_rng(5, 3, 2).get_stream(), (3u64 << 32) | 258);
        assert_eq!(lidar_rng(5, 0, 0).get_stream(), 256);
        assert_ne!(take(lidar_rng(5, 3, 2)), take(lidar_rng(5, 3, 1)));
        assert_ne!(take(lidar_rng(5, 3, 2)), take(lidar_rng(5, 2, 2)));
        assert_ne!(take(lidar_rng(5, 3, 2)), take(lidar_rng(6, 3, 2)));
        for source in [
            NoiseSource::Imu,
            NoiseSource::Rangefinder,
            NoiseSource::Turbulence,
        ] {
            assert_ne!(
                lidar_rng(5, 3, 0).get_stream(),
                noise_rng(5, 3, source).get_stream()
            );
        }
    }
}
