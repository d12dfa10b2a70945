//! Cost of the guidance port per tick: one S-curve `advance_target_along_track`
//! on its own, and one full `AR_WPNav::update` (S-curve advance, time scaling,
//! position controller, speed and turn rate) on a leg with a corner ahead.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use mavsitl::guidance::{
    ArAttitudeControl, ArPosControl, ArWpNav, AttitudeParams, NavState, PosControlParams, SCurve,
    WpNavParams,
};
use nalgebra::{Vector2, Vector3};

fn bench(c: &mut Criterion) {
    let mut this = SCurve::new();
    this.calculate_track(
        &Vector3::zeros(),
        &Vector3::new(1.0e6, 5.0e5, 0.0),
        5.0,
        5.0,
        5.0,
        2.0,
        2.0,
        8.0,
        4.0,
    );
    let mut prev = SCurve::new();
    let mut next = SCurve::new();
    next.calculate_track(
        &Vector3::new(1.0e6, 5.0e5, 0.0),
        &Vector3::new(2.0e6, 0.0, 0.0),
        5.0,
        5.0,
        5.0,
        2.0,
        2.0,
        8.0,
        4.0,
    );
    c.bench_function("scurve_advance_target_along_track", |b| {
        b.iter(|| {
            let (mut p, mut v, mut a) = (Vector3::zeros(), Vector3::zeros(), Vector3::zeros());
            let done = this.advance_target_along_track(
                &mut prev,
                &mut next,
                2.0,
                2.0,
                true,
                black_box(1e-6),
                &mut p,
                &mut v,
                &mut a,
            );
            black_box((done, p, v, a))
        })
    });

    let atc = ArAttitudeControl::new(AttitudeParams::default());
    let mut w = ArWpNav::new(
        WpNavParams::default(),
        ArPosControl::new(PosControlParams::default()),
    );
    let mut s = NavState {
        armed: true,
        vel_ne_m_s: Vector2::new(1.0, 0.0),
        ..Default::default()
    };
    w.set_desired_location(
        Vector2::new(5.0e5, 0.0),
        Some(Vector2::new(5.0e5, 5.0e5)),
        &s,
        &atc,
    );
    let mut t = 0.0;
    c.bench_function("wpnav_update", |b| {
        b.iter(|| {
            t += 1e-4;
            s.now_s = t;
            s.pos_ne_m.x = t;
            w.update(0.02, black_box(&s), &atc);
            black_box(w.get_speed())
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
