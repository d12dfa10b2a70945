//! The GCS endpoint of a served SimpleFlight handling whatever a hostile
//! ground station sends (any decodable MAVLink, commands and mission
//! protocol included), then polled.

use std::cell::RefCell;
use std::path::PathBuf;
use std::time::Duration;

use mavsitl::autopilot::gcs::Endpoint;
use mavsitl::mission::Mission;
use mavsitl::scenario::{Scenario, ScenarioSource};
use mavsitl::setup::{self, Flight};
use mavsitl::time::SimTime;
use mavsitl::wire;

struct Served {
    flight: Flight,
    endpoint: Endpoint,
    now: u64,
}

fn served() -> Served {
    let src = ScenarioSource {
        name: "fuzz".into(),
        base_dir: PathBuf::from("."),
    };
    let scenario = Scenario::from_json(r#"{"vehicles":[{"kind":"multirotor"}]}"#, &src).unwrap();
    let mission = Mission::parse(include_str!("../../../missions/quad_square.plan"), "m").unwrap();
    let flight = setup::flight(&mission, "m", &scenario, &src, None, false).unwrap();
    let endpoint = flight.endpoint(Some(&mission));
    Served {
        flight,
        endpoint,
        now: 0,
    }
}

thread_local! {
    static SERVED: RefCell<Option<Served>> = const { RefCell::new(None) };
}

/// Feeds one input.
pub fn run(data: &[u8]) {
    SERVED.with(|cell| {
        let mut guard = cell.borrow_mut();
        let s = guard.get_or_insert_with(served);
        let mut out = Vec::new();
        let now = SimTime::from_micros(s.now);
        let link = Duration::from_micros(s.now);
        wire::frames(data, None, |raw| {
            if let Ok(m) = wire::decode(raw) {
                let from = (raw.system_id() as u8, raw.component_id());
                s.endpoint.handle(now, link, from, m, &mut out);
            }
        });
        // Let SimpleFlight apply what was asked, a control cycle's worth.
        for _ in 0..4 {
            let _ = s.flight.lockstep.tick(&mut ());
        }
        s.now = s.flight.lockstep.sim().time().as_micros();
        s.endpoint.poll(
            s.flight.lockstep.sim().time(),
            Duration::from_micros(s.now),
            &mut out,
        );
        if s.endpoint.take_reset() || s.now > 600_000_000 {
            *guard = None;
        }
    });
}
