//! mavsitl's AirSim API handling whatever a client sends: bytes cut into
//! messages by the server's bounded framing (never more than its message
//! limit held), decoded as msgpack, parsed as msgpack-rpc requests and
//! dispatched to a served SimpleFlight quad, which then runs a few ticks.

use std::cell::RefCell;
use std::path::PathBuf;

use mavsitl::airsim::{rpc, AirSimApi};
use mavsitl::mission::Mission;
use mavsitl::scenario::{Scenario, ScenarioSource};
use mavsitl::setup;

fn api() -> AirSimApi {
    let src = ScenarioSource {
        name: "fuzz".into(),
        base_dir: PathBuf::from("."),
    };
    let scenario = Scenario::from_json(r#"{"vehicles":[{"kind":"multirotor"}]}"#, &src).unwrap();
    let build = move || setup::flight(&Mission::default(), "none", &scenario, &src, None, false);
    let flight = build().unwrap();
    AirSimApi::single(flight, Box::new(build))
}

thread_local! {
    static API: RefCell<Option<AirSimApi>> = const { RefCell::new(None) };
}

/// Feeds one input.
pub fn run(data: &[u8]) {
    API.with(|cell| {
        let mut guard = cell.borrow_mut();
        let api = guard.get_or_insert_with(api);
        let mut bytes = data;
        let mut replies = Vec::new();
        let mut buf = Vec::new();
        for _ in 0..16 {
            // The server's own framing: whole messages within its bounds.
            if rpc::frame(&mut bytes, &mut buf).is_err() {
                break;
            }
            assert!(buf.len() <= rpc::MAX_MESSAGE_BYTES);
            let Ok(value) = rmpv::decode::read_value(&mut buf.as_slice()) else {
                break;
            };
            if let Ok(Some(call)) = rpc::parse(1, value) {
                api.handle(call, &mut replies);
            }
        }
        for _ in 0..4 {
            if api.running() {
                let _ = api.tick(&mut ());
            }
        }
    });
}
