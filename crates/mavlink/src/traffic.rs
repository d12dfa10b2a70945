//! The other vehicles of a world as ADS-B traffic: one ADSB_VEHICLE per
//! vehicle from its ground truth, so that a firmware's own traffic avoidance
//! (PX4's NAV_TRAFF_AVOID, ArduPilot's AVD_*) and a ground station's traffic
//! map see them. Each vehicle's ICAO address is derived from its index; the
//! SIMULATED flag is set.

use mavlink::dialects::common::{
    AdsbAltitudeType, AdsbEmitterType, AdsbFlags, MavMessage, ADSB_VEHICLE_DATA,
};

use crate::wire::deg_e7;
use mavsitl_core::controller::GroundTruth;
use mavsitl_core::geo::LocalFrame;

/// ICAO addresses of simulated vehicles: this block, the low 12 bits the
/// vehicle's index.
pub const ICAO_BASE: u32 = 0x00C0_F000;

/// How often traffic is reported, sim time µs (2 Hz, as ADS-B receivers
/// report).
pub const TRAFFIC_PERIOD_US: u64 = 500_000;

/// ADSB_VEHICLE for vehicle `index` named `name` (callsign, at most 8
/// characters), at `truth` in `frame`: position, geometric altitude, course,
/// speeds.
pub fn adsb_vehicle(
    index: usize,
    name: &str,
    truth: &GroundTruth,
    frame: &LocalFrame,
) -> MavMessage {
    let g = frame.to_geodetic(&truth.pos_ned_m);
    let v = &truth.vel_ned_m_s;
    let course_deg = v.y.atan2(v.x).to_degrees().rem_euclid(360.0);
    let mut callsign = [0u8; 9];
    for (c, b) in callsign
        .iter_mut()
        .zip(name.bytes().filter(u8::is_ascii_graphic).take(8))
    {
        *c = b.to_ascii_uppercase();
    }
    MavMessage::ADSB_VEHICLE(ADSB_VEHICLE_DATA {
        ICAO_address: ICAO_BASE | (index as u32 & 0xFFF),
        lat: deg_e7(g.lat_rad),
        lon: deg_e7(g.lon_rad),
        altitude: (g.alt_m * 1000.0)
            .round()
            .clamp(i32::MIN as f64, i32::MAX as f64) as i32,
        heading: (course_deg * 100.0).round().clamp(0.0, 35_999.0) as u16,
        hor_velocity: (v.xy().norm() * 100.0).round().clamp(0.0, u16::MAX as f64) as u16,
        ver_velocity: (-v.z * 100.0)
            .round()
            .clamp(i16::MIN as f64, i16::MAX as f64) as i16,
        flags: AdsbFlags::ADSB_FLAGS_VALID_COORDS
            | AdsbFlags::ADSB_FLAGS_VALID_ALTITUDE
            | AdsbFlags::ADSB_FLAGS_VALID_HEADING
            | AdsbFlags::ADSB_FLAGS_VALID_VELOCITY
            | AdsbFlags::ADSB_FLAGS_VALID_CALLSIGN
            | AdsbFlags::ADSB_FLAGS_VERTICAL_VELOCITY_VALID
            | AdsbFlags::ADSB_FLAGS_SIMULATED,
        squawk: 1200,
        altitude_type: AdsbAltitudeType::ADSB_ALTITUDE_TYPE_GEOMETRIC,
        callsign: callsign.into(),
        emitter_type: AdsbEmitterType::ADSB_EMITTER_TYPE_UAV,
        tslc: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mavsitl_core::geo::GeoPoint;
    use nalgebra::{UnitQuaternion, Vector3};

    #[test]
    fn a_vehicle_flying_north_east_and_climbing_reads_as_adsb_does() {
        let frame = LocalFrame::new(GeoPoint::from_deg(47.0, 8.0, 500.0));
        let zero = Vector3::zeros();
        let truth = GroundTruth {
            pos_ned_m: Vector3::new(0.0, 0.0, -20.0),
            vel_ned_m_s: Vector3::new(3.0, 3.0, -1.0),
            att_ned_frd: UnitQuaternion::identity(),
            rate_frd_rad_s: zero,
            accel_ned_m_s2: zero,
            specific_force_frd_m_s2: zero,
            ang_accel_frd_rad_s2: zero,
            landed: false,
            wind_ned_m_s: zero,
        };
        let MavMessage::ADSB_VEHICLE(a) = adsb_vehicle(3, "quad1", &truth, &frame) else {
            panic!("not ADSB_VEHICLE");
        };
        assert_eq!(a.ICAO_address, 0x00C0_F003);
        assert_eq!((a.lat, a.lon), (470_000_000, 80_000_000));
        assert_eq!(a.altitude, 520_000);
        assert_eq!(a.heading, 4500);
        assert_eq!(a.hor_velocity, 424);
        assert_eq!(a.ver_velocity, 100);
        assert_eq!(&a.callsign[..6], b"QUAD1\0");
        for flag in [
            AdsbFlags::ADSB_FLAGS_VALID_COORDS,
            AdsbFlags::ADSB_FLAGS_VALID_ALTITUDE,
            AdsbFlags::ADSB_FLAGS_VALID_HEADING,
            AdsbFlags::ADSB_FLAGS_VALID_VELOCITY,
            AdsbFlags::ADSB_FLAGS_VALID_CALLSIGN,
            AdsbFlags::ADSB_FLAGS_VERTICAL_VELOCITY_VALID,
            AdsbFlags::ADSB_FLAGS_SIMULATED,
        ] {
            assert!(
                a.flags.contains(flag),
                "{flag:?} missing from {:?}",
                a.flags
            );
        }
    }
}
