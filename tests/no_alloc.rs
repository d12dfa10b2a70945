//! A warm physics tick and a warm lockstep tick allocate nothing, nor does
//! splitting a datagram of garbage into frames: counted by a global allocator
//! wrapped around the system one.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use mavsitl::scenario::{Scenario, ScenarioSource};
use mavsitl::time::SimTime;

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
  "zones":[{"name":"z","shape":{"box":{"min_ned_m":[3,-50,-100],"max_ned_m":[6,50,0]}},"wind":{"speed_m_s":9,"from_deg":0}}]},
  "vehicles":[
    {"name":"quad","kind":"multirotor","initial":{"height_m":20,"velocity_ned_m_s":[2,0,0],"rotor_commands":[0.62,0.62,0.62,0.62]},
     "controller":{"kind":"passive","controls":[0.62,0.62,0.62,0.62]}},
    {"name":"ground","kind":"multirotor","airframe":"x500","controller":{"kind":"passive","controls":[0.1,0.1,0.1,0.1]}},
    {"name":"boat","kind":"boat","controller":{"kind":"passive","rate_hz":50,"controls":[0.5,0.9]}}],
  "faults":[{"kind":"gps_spoof","at_s":2},{"kind":"wind_gust","at_s":1.5,"duration_s":2,"peak_m_s":3},
    {"kind":"motor_failure","at_s":3,"duration_s":1,"motor":1,"vehicle":"ground"},
    {"kind":"imu_stuck","at_s":4,"vehicle":"boat"}]}"#;

#[test]
fn warm_ticks_allocate_nothing() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _counting = CountThisThread::start();
    let src = ScenarioSource {
        name: "no_alloc".into(),
        base_dir: ".".into(),
    };
    let scenario = Scenario::from_json(SCENARIO, &src).expect("scenario");
    let mut ls = scenario.build(&src).expect("build");
    ls.run_until(SimTime::from_secs(1), &mut ())
        .expect("warm-up");
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    assert!(
        before > 0,
        "the counter sees the allocations of building the scenario"
    );
    // Five seconds through the loop: controller exchanges, turbulence, contact,
    // the boat, and the quad crossing the zone (enter and exit events).
    ls.run_until(SimTime::from_secs(6), &mut ()).expect("run");
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    assert!(
        ls.sim().zone_events().len() >= 2,
        "the quad entered and left the zone"
    );
    assert_eq!(ls.sim().fault_events().len(), 6, "faults started and ended");
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
    mavsitl::wire::frames(&garbage, None, |_| frames += 1);
    mavsitl::wire::stream_frames(&mut stream, |_| frames += 1);
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
    let plan = include_str!("../missions/quad_square.plan");
    let mission = mavsitl::mission::Mission::parse(plan, "square").expect("plan");
    let mut f = mavsitl::autopilot::setup::flight(&mission, "square", &scenario, &src, None, true)
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
