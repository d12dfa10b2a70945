//! Many vehicles in one world: the cost of a lockstep tick against the
//! number of SimpleFlight quads, N = 1, 10, 100, 300, 1 000, stepped on one
//! thread and on two, each with its estimator,
//! four sensors and the physics at SimpleFlight's 250 Hz as `fly` steps
//! it, flying in a grid 30 m apart (take-off to
//! 10 m, then holding), with the encounter sweep running. One sample is 1 s
//! of sim time from 10 s on (in the air); the real-time factor is 1 s over
//! the measured time, the cost per vehicle the time over N. Beside it, the
//! encounter sweep alone for N = 100 to 10 000 in a line and a grid.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use mavsitl::mission::Mission;
use mavsitl::scenario::{Scenario, ScenarioSource};
use mavsitl::setup::{fleet, PilotPlan};
use mavsitl::sim::Lockstep;
use mavsitl::time::SimTime;

const TAKEOFF: &str = "QGC WPL 110\n0\t1\t0\t16\t0\t0\t0\t0\t47.397742\t8.545594\t488\t1\n1\t0\t3\t22\t0\t0\t0\t0\t0\t0\t10\t1\n";

/// N quads in a square grid 30 m apart, in the air after 10 s (flown there
/// on `threads` threads).
fn airborne(n: usize, threads: usize) -> Lockstep {
    let side = (n as f64).sqrt().ceil() as usize;
    let vehicles: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            serde_json::json!({
                "name": format!("q{i}"), "kind": "multirotor",
                "initial": {"north_m": 30.0 * (i / side) as f64, "east_m": 30.0 * (i % side) as f64},
                "controller": {"kind": "simpleflight"}
            })
        })
        .collect();
    let src = ScenarioSource {
        name: "fleet".into(),
        base_dir: ".".into(),
    };
    let mut scenario = Scenario::from_json(
        &serde_json::json!({ "vehicles": vehicles }).to_string(),
        &src,
    )
    .expect("scenario");
    // As `mavsitl fly` steps it.
    assert!(
        scenario.fit_physics_rate_to_simpleflight(),
        "SimpleFlight's 250 Hz"
    );
    let mission = Mission::parse(TAKEOFF, "takeoff").expect("mission");
    let plan = PilotPlan {
        mission: &mission,
        mission_name: "takeoff",
        param_file: None,
        auto_arm: true,
    };
    let mut ls = if n == 1 {
        // One vehicle: `fly`'s own set-up (no fleet, no sweep).
        mavsitl::setup::flight(&mission, "takeoff", &scenario, &src, None, true)
            .expect("flight")
            .lockstep
    } else {
        fleet(&scenario, &src, &plan).expect("fleet").lockstep
    };
    ls.set_threads(threads).expect("threads");
    ls.run_until(SimTime::from_secs(10), &mut ())
        .expect("climb");
    ls
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("fleet");
    group.sample_size(10);
    for threads in [1usize, 2] {
        for n in [1usize, 10, 100, 300, 1000] {
            let id = BenchmarkId::new(format!("one_sim_second_{threads}_threads"), n);
            group.bench_with_input(id, &n, |b, &n| {
                b.iter_batched(
                    || {
                        let mut ls = airborne(n, threads);
                        // Measured on exactly `threads`, whatever the default.
                        ls.set_threads(threads).expect("threads");
                        ls
                    },
                    |mut ls| {
                        let end = ls.sim().time() + 1_000_000;
                        ls.run_until(end, &mut ()).expect("run");
                        ls
                    },
                    criterion::BatchSize::LargeInput,
                )
            });
        }
    }
    group.finish();
}

/// The encounter sweep alone, one tick, N vehicles in `--count`'s layout
/// (a line 5 m apart east to west, proximity 20 m: each has up to 8
/// neighbours in range) and in a 30 m grid.
fn sweep(c: &mut Criterion) {
    use mavsitl::encounter::{EncounterMonitor, Placed};
    use nalgebra::Vector3;
    let mut group = c.benchmark_group("encounter_sweep");
    for n in [100usize, 1000, 10_000] {
        let line: Vec<Placed> = (0..n)
            .map(|i| Placed {
                pos_ned_m: Vector3::new(0.0, 5.0 * i as f64, -10.0),
                vel_ned_m_s: Vector3::zeros(),
            })
            .collect();
        let side = (n as f64).sqrt().ceil() as usize;
        let grid: Vec<Placed> = (0..n)
            .map(|i| Placed {
                pos_ned_m: Vector3::new(30.0 * (i / side) as f64, 30.0 * (i % side) as f64, -10.0),
                vel_ned_m_s: Vector3::zeros(),
            })
            .collect();
        for (name, placed) in [("line_5m", &line), ("grid_30m", &grid)] {
            let mut m = EncounterMonitor::new(vec![0.3; n], 20.0);
            let mut t = 0u64;
            m.update(SimTime::from_micros(t), placed);
            group.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
                b.iter(|| {
                    t += 1000;
                    m.update(SimTime::from_micros(t), placed)
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench, sweep);
criterion_main!(benches);
