//! Real-time factors, single thread:
//!
//! - `quad_hover_600s`: `mavsitl sim` on the shipped hover scenario for 10
//!   minutes of sim time (factor = 600 s / measured time);
//! - `fly_quad_square`: `mavsitl fly missions/quad_square.plan` — SimpleFlight
//!   with its estimator, all four sensors, the physics at SimpleFlight's
//!   250 Hz as `fly` steps it — from power-up to landed and disarmed (about
//!   95 s of sim time; the factor is printed).

use criterion::{criterion_group, criterion_main, Criterion};
use mavsitl::scenario::{Scenario, ScenarioSource};
use mavsitl::time::SimTime;

fn bench(c: &mut Criterion) {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/quad_hover.json");
    let scenario = Scenario::load(&path).expect("scenario");
    let src = ScenarioSource {
        name: path.display().to_string(),
        base_dir: path.parent().map(|p| p.to_path_buf()).unwrap_or_default(),
    };
    let mut group = c.benchmark_group("sim_realtime");
    group.sample_size(10);
    group.bench_function("quad_hover_600s", |b| {
        b.iter(|| {
            let mut ls = scenario.build(&src).expect("build");
            ls.run_until(SimTime::from_secs(600), &mut ()).expect("run");
            ls.sim().time()
        })
    });
    let plan =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../missions/quad_square.plan");
    let mission = mavsitl::mission::Mission::load(&plan).expect("mission");
    let quad_src = ScenarioSource {
        name: "quad".into(),
        base_dir: ".".into(),
    };
    let mut quad = Scenario::from_json(
        r#"{"vehicles":[{"kind":"multirotor","airframe":"generic_quad"}]}"#,
        &quad_src,
    )
    .expect("quad");
    // As `mavsitl fly` steps it.
    assert!(
        quad.fit_physics_rate_to_simpleflight(),
        "SimpleFlight's 250 Hz"
    );
    if let Some(h) = mission.home {
        quad.home.lat_deg = h.lat_deg;
        quad.home.lon_deg = h.lon_deg;
        quad.home.alt_m = h.alt_m;
    }
    let fly = || {
        let f = mavsitl::setup::flight(&mission, "quad_square", &quad, &quad_src, None, true)
            .expect("flight");
        let mut ls = f.lockstep;
        while ls.sim().time() < SimTime::from_secs(400) {
            ls.tick(&mut ()).expect("tick");
            let st = f.status.borrow();
            if st.landed || st.failure.is_some() {
                break;
            }
        }
        assert!(f.status.borrow().landed, "the mission must end landed");
        ls.sim().time()
    };
    let start = std::time::Instant::now();
    let sim_time = fly();
    println!(
        "fly_quad_square: {:.1} s of sim time in {:.3} s wall: {:.0}x real time",
        sim_time.as_secs_f64(),
        start.elapsed().as_secs_f64(),
        sim_time.as_secs_f64() / start.elapsed().as_secs_f64()
    );
    group.bench_function("fly_quad_square", |b| b.iter(fly));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
