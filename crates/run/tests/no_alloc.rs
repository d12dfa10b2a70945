//! A warm physics tick and a warm lockstep tick allocate nothing, nor does
//! splitting a datagram of garbage into frames: counted by a global allocator
//! wrapped around the system one.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use mavsitl_core::time::SimTime;
use mavsitl_sim::scenario::{Scenario, ScenarioSource};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Only the test's own thread is counted (the harness allocates on others
    /// while a test runs).
    static COUNTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Counts this thread's allocations while alive. Declared after the turn's
/// lock guard it is dropped first, so a finished test's thread (which goes on
/// to report its result to the harness, allocating) is no longer counted when
/// the next test starts measuring.
struct CountThisThread;

impl CountThisThread {
    fn start() -> Self {
        COUNTED.with(|c| c.set(true));
        CountThisThread
    }
}

impl Drop for CountThisThread {
    fn drop(&mut self) {
        COUNTED.with(|c| c.set(false));
    }
}

fn note() {
    if COUNTED.try_with(|c| c.get()).unwrap_or(false) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The count is global: the tests here take turns.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

const SCENARIO: &str = r#"{"environment":{"wind":{"speed_m_s":5,"from_deg":270},"turbulence":{},
  "current":{"speed_m_s":0.3,"towards_deg":10},
  "zones":[{"name":"z","shape":{"box":{"min_ned_m":[3,-50,-100],"max_ned_m":[6,50,0]}},"wind":{"speed_m_s":9,"from_deg":0},
    "ground_friction":0.3}]},
  "vehicles":[
    {"name":"quad","kind":"multirotor","initial":{"height_m":20,"velocity_ned_m_s":[2,0,0],"rotor_commands":[0.62,0.62,0.62,0.62]},
     "controller":{"kind":"passive","controls":[0.62,0.62,0.62,0.62]}},
    {"name":"ground","kind":"multirotor","airframe":"x500","controller":{"kind":"passive","controls":[0.1,0.1,0.1,0.1]}},
    {"name":"boat","kind":"boat","controller":{"kind":"passive","rate_hz":50,"controls":[0.5,0.9]}},
    {"name":"jackal","kind":"rover","airframe":"jackal","initial":{"east_m":10},"controller":{"kind":"passive","controls":[0.9,0.9]}},
    {"name":"car","kind":"rover","airframe":"f1tenth","initial":{"east_m":-10},"controller":{"kind":"passive","controls":[0.2,0,0.4,0,0]}}],
  "faults":[{"kind":"gps_spoof","at_s":2},{"kind":"wind_gust","at_s":1.5,"duration_s":2,"peak_m_s":3},
    {"kind":"motor_failure","at_s":3,"duration_s":1,"motor":1,"vehicle":"ground"},
    {"kind":"imu_stuck","at_s":4,"vehicle":"boat"},
    {"kind":"wheel_motor_failure","at_s":2,"duration_s":1,"motor":0,"torque_scale":0.5,"vehicle":"jackal"},
    {"kind":"tyre_grip","at_s":2.5,"duration_s":1,"grip_scale":0.5,"vehicle":"car"}]}"#;

#[test]
fn warm_ticks_allocate_nothing() {
    warm_ticks(1);
}

/// Stepped on two threads, the loop's thread allocates nothing either:
/// handing each stage of a tick to the team and taking it back (the
/// vehicles' own steps are the same code as on one thread).
#[test]
fn warm_ticks_on_two_threads_allocate_nothing_on_the_loops_thread() {
    warm_ticks(2);
}

fn warm_ticks(threads: usize) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _counting = CountThisThread::start();
    let src = ScenarioSource {
        name: "no_alloc".into(),
        base_dir: ".".into(),
    };
    let scenario = Scenario::from_json(SCENARIO, &src).expect("scenario");
    let mut ls = scenario.build(&src).expect("build");
    ls.set_threads(threads).expect("threads");
    assert_eq!(ls.threads(), threads);
    ls.run_until(SimTime::from_secs(1), &mut ())
        .expect("warm-up");
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    assert!(
        before > 0,
        "the counter sees the allocations of building the scenario"
    );
    // Five seconds through the loop: controller exchanges, turbulence, contact,
    // the boat, the rovers on their tyres (one into the zone's friction), and
    // the quad crossing the zone (enter and exit events).
    ls.run_until(SimTime::from_secs(6), &mut ()).expect("run");
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    assert!(
        ls.sim().zone_events().len() >= 2,
        "the quad entered and left the zone"
    );
    assert!(
        ls.sim().zone_events().iter().any(|e| e.vehicle == 3),
        "the skid-steer rover drove into the zone's friction: {:?} {:?}",
        ls.sim().vehicles()[3].ground_truth().pos_ned_m,
        ls.sim().zone_events()
    );
    assert_eq!(
        ls.sim().fault_events().len(),
        10,
        "faults started and ended"
    );
    assert_eq!(after - before, 0, "allocations during 5000 warm ticks");
}

/// A datagram of 0xFD bytes (a false frame start at every byte) used to cost
/// one 16 KiB reader allocation per byte.
#[test]
fn splitting_garbage_into_frames_allocates_nothing() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _counting = CountThisThread::start();
    let garbage = vec![0xFDu8; 4096];
    let mut stream = garbage.clone();
    stream.truncate(4000);
    let mut frames = 0;
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    mavsitl_mavlink::wire::frames(&garbage, None, |_| frames += 1);
    mavsitl_mavlink::wire::stream_frames(&mut stream, |_| frames += 1);
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    assert_eq!(frames, 0);
    assert_eq!(after - before, 0, "allocations while splitting garbage");
}

/// SimpleFlight flying a leg of the square — estimator, failsafe checks,
/// S-curve guidance, the multicopter cascade and its allocation — allocates
/// nothing per control cycle (parameters used to be upper-cased copies, and
/// the mixer built its vectors on the heap, every cycle).
#[test]
fn simpleflight_flying_a_leg_allocates_nothing() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let src = ScenarioSource {
        name: "no_alloc".into(),
        base_dir: ".".into(),
    };
    let scenario =
        Scenario::from_json(r#"{"vehicles":[{"kind":"multirotor"}]}"#, &src).expect("scenario");
    let plan = include_str!("../../../missions/quad_square.plan");
    let mission = mavsitl_mavlink::mission::Mission::parse(plan, "square").expect("plan");
    let mut f = mavsitl_run::setup::flight(&mission, "square", &scenario, &src, None, true)
        .expect("flight");
    // Take-off done, flying north on the first leg from 31 s to 42 s.
    f.lockstep
        .run_until(SimTime::from_secs(32), &mut ())
        .expect("take-off");
    let reached = f.status.borrow().reached.len();
    let _counting = CountThisThread::start();
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    f.lockstep
        .run_until(SimTime::from_secs(41), &mut ())
        .expect("leg");
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    assert_eq!(f.status.borrow().reached.len(), reached, "still on the leg");
    assert!(f.status.borrow().armed);
    assert_eq!(after - before, 0, "allocations during 9 s of a leg");
}

/// A ground station's datagram, each 4 ms: a heartbeat, a parameter read and a
/// REQUEST_MESSAGE (answered with an ACK and the message).
fn client_datagram() -> Vec<u8> {
    use mavlink::dialects::common::*;
    let header = mavlink::MavHeader {
        system_id: 255,
        component_id: 190,
        sequence: 0,
    };
    let msgs = [
        MavMessage::HEARTBEAT(HEARTBEAT_DATA {
            custom_mode: 0,
            mavtype: MavType::MAV_TYPE_GCS,
            autopilot: MavAutopilot::MAV_AUTOPILOT_INVALID,
            base_mode: MavModeFlag::empty(),
            system_status: MavState::MAV_STATE_ACTIVE,
            mavlink_version: 3,
        }),
        MavMessage::PARAM_REQUEST_READ(PARAM_REQUEST_READ_DATA {
            param_index: -1,
            target_system: 1,
            target_component: 1,
            param_id: "MPC_XY_CRUISE".into(),
        }),
        MavMessage::COMMAND_LONG(COMMAND_LONG_DATA {
            param1: 148.0, // AUTOPILOT_VERSION
            command: MavCmd::MAV_CMD_REQUEST_MESSAGE,
            target_system: 1,
            target_component: 1,
            ..Default::default()
        }),
    ];
    let mut datagram = Vec::new();
    for m in &msgs {
        mavlink::write_v2_msg(&mut datagram, header, m).expect("encode");
    }
    datagram
}

/// A served flight and its ground station, on loopback.
struct Served {
    flight: mavsitl_run::setup::Flight,
    endpoint: mavsitl_simpleflight::gcs::Endpoint,
    link: mavsitl_simpleflight::gcs::UdpLink,
    client: std::net::UdpSocket,
    datagram: Vec<u8>,
    out: Vec<mavsitl_mavlink::wire::Outgoing>,
    /// Bytes the client has received.
    received: usize,
}

impl Served {
    /// Flies to `until`, the ground station talking every 4 ms and the
    /// endpoint serviced as `serve` does.
    fn run(&mut self, until: SimTime) {
        let vehicle = self.link.local_addr().expect("link addr");
        let mut inbox = [0u8; 2048];
        while self.flight.lockstep.sim().time() < until {
            for _ in 0..4 {
                self.flight.lockstep.tick(&mut ()).expect("tick");
            }
            let now = self.flight.lockstep.sim().time();
            let link_now = std::time::Duration::from_micros(now.as_micros());
            self.client
                .send_to(&self.datagram, vehicle)
                .expect("client send");
            let (endpoint, out) = (&mut self.endpoint, &mut self.out);
            self.link.receive(link_now, now.as_micros(), |from, msg| {
                endpoint.handle(now, link_now, from, msg, out);
            });
            self.endpoint.poll(now, link_now, &mut self.out);
            self.link.send(&self.out, now.as_micros());
            self.out.clear();
            while let Ok((n, _)) = self.client.recv_from(&mut inbox) {
                self.received += n;
            }
        }
    }
}

/// The ground-station endpoint serving a flying SimpleFlight under a client's
/// steady traffic — datagrams read and decoded, commands and parameter reads
/// answered, telemetry streamed, frames packed into datagrams and sent —
/// allocates nothing per service cycle once warm.
#[test]
fn endpoint_under_load_allocates_nothing() {
    use mavsitl_simpleflight::gcs::{LinkConfig, UdpLink};
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let src = ScenarioSource {
        name: "no_alloc".into(),
        base_dir: ".".into(),
    };
    let scenario =
        Scenario::from_json(r#"{"vehicles":[{"kind":"multirotor"}]}"#, &src).expect("scenario");
    let mission = mavsitl_mavlink::mission::Mission::parse(
        include_str!("../../../missions/quad_square.plan"),
        "square",
    )
    .expect("plan");
    let flight = mavsitl_run::setup::flight(&mission, "square", &scenario, &src, None, true)
        .expect("flight");
    let endpoint = flight.endpoint(Some(&mission));
    let client = std::net::UdpSocket::bind("127.0.0.1:0").expect("client");
    client.set_nonblocking(true).expect("nonblocking");
    let link = UdpLink::bind(&LinkConfig {
        bind: "127.0.0.1:0".parse().expect("addr"),
        targets: vec![client.local_addr().expect("client addr")],
        system_id: 1,
        component_id: 1,
        signing_key: None,
    })
    .expect("link");
    let mut s = Served {
        flight,
        endpoint,
        link,
        client,
        datagram: client_datagram(),
        out: Vec::with_capacity(256),
        received: 0,
    };
    // Take-off, with the client talking all along; then the first leg.
    s.run(SimTime::from_secs(32));
    let reached = s.flight.status.borrow().reached.len();
    let (frames_in, received) = (s.link.stats().frames_in, s.received);
    let counting = CountThisThread::start();
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    s.run(SimTime::from_secs(41));
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    drop(counting);
    assert_eq!(
        s.flight.status.borrow().reached.len(),
        reached,
        "still on the leg"
    );
    // 9 s at 250 cycles/s, three frames each.
    let stats = s.link.stats();
    assert!(stats.frames_in - frames_in >= 6000, "{stats:?}");
    assert!(s.received - received > 100_000, "telemetry flowed");
    assert_eq!(after - before, 0, "allocations serving 9 s of traffic");
}
