//! The other vehicles of a world, as ADS-B traffic for one of them: sent
//! to each firmware of a fleet, and to the ground stations of served
//! vehicles.

use mavlink::dialects::common::MavMessage;

use mavsitl_mavlink::traffic::adsb_vehicle;
use mavsitl_sim::sim::Simulation;

/// The traffic vehicle `me` sees: every other vehicle of `sim`, as
/// ADSB_VEHICLE.
pub fn traffic_for(me: usize, sim: &Simulation) -> Vec<MavMessage> {
    let frame = sim.world().frame();
    sim.vehicles()
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != me)
        .map(|(i, v)| adsb_vehicle(i, v.name(), &v.ground_truth(), frame))
        .collect()
}
