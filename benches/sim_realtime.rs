//! Real-time factor of `mavsitl sim`: 10 minutes of sim time of the shipped
//! hover scenario through the whole lockstep loop (controller exchanges
//! included), single thread. Real-time factor = 600 s / measured time.

use criterion::{criterion_group, criterion_main, Criterion};
use mavsitl::scenario::{Scenario, ScenarioSource};
use mavsitl::time::SimTime;

fn bench(c: &mut Criterion) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/quad_hover.json");
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
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
