//! QGroundControl plans and `QGC WPL 110` files, as `fly`, `serve` and the
//! firmware flights load them, then compiled for SimpleFlight.

use mavsitl::mission::Mission;

/// Feeds one input.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(m) = Mission::parse(text, "fuzz.plan") {
        let frame =
            mavsitl::geo::LocalFrame::new(mavsitl::geo::GeoPoint::from_deg(47.0, 8.0, 400.0));
        let _ = mavsitl::autopilot::mission_plan::compile(
            &m,
            &frame,
            400.0,
            mavsitl::scenario::VehicleKind::Multirotor,
            2.0,
        );
        let _ = mavsitl::autopilot::mission_plan::compile(
            &m,
            &frame,
            400.0,
            mavsitl::scenario::VehicleKind::Boat,
            2.0,
        );
    }
}
