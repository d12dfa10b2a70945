//! Cost of `compare`'s work after the flights, for a 10-minute flight:
//! measuring it against its route, and drawing the five pictures (SVG and
//! PNG). The flight is a 600 s lap of a 200 m × 100 m box at 5 m/s with a
//! wobble, at the recordings' 200 rows/s (120 000 samples).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use mavsitl::analysis::plot::{draw_all, Flown};
use mavsitl::analysis::track::{Sample, Track};
use mavsitl::analysis::{MissionMetrics, Route};
use mavsitl::geo::{GeoPoint, LocalFrame};
use mavsitl::mission::{Mission, MissionItem};
use nalgebra::Vector3;

const CORNERS: [(f64, f64); 5] = [
    (0.0, 0.0),
    (200.0, 0.0),
    (200.0, 100.0),
    (0.0, 100.0),
    (0.0, 0.0),
];

fn mission(frame: &LocalFrame) -> Mission {
    let items = CORNERS
        .iter()
        .skip(1)
        .map(|(n, e)| {
            let g = frame.to_geodetic(&Vector3::new(*n, *e, 0.0));
            MissionItem::waypoint(g.lat_deg(), g.lon_deg(), 20.0)
        })
        .collect();
    Mission {
        items,
        ..Mission::default()
    }
}

/// Position along the box at distance `s` (m), looping.
fn along(s: f64) -> Vector3<f64> {
    let mut s = s % 600.0;
    for w in CORNERS.windows(2) {
        let (a, b) = (
            Vector3::new(w[0].0, w[0].1, -20.0),
            Vector3::new(w[1].0, w[1].1, -20.0),
        );
        let len = (b - a).norm();
        if s <= len {
            return a + (b - a) * (s / len);
        }
        s -= len;
    }
    Vector3::new(0.0, 0.0, -20.0)
}

fn flight(seed: u64) -> Track {
    let samples = (0..120_000)
        .map(|i| {
            let t = i as f64 / 200.0;
            let wobble = Vector3::new(
                (t * 0.7 + seed as f64).sin(),
                (t * 0.5).cos(),
                0.1 * t.sin(),
            );
            let p = along(5.0 * t) + wobble;
            let v = (along(5.0 * t + 0.025) - along(5.0 * t - 0.025)) * 100.0;
            Sample {
                t_s: t,
                pos_ned_m: p,
                vel_ned_m_s: v,
                tilt_rad: 0.0,
            }
        })
        .collect();
    Track {
        samples,
        energy_j: Some(30_000.0),
        completed: Some(true),
        battery_min_remaining: Some(0.5),
        events: Vec::new(),
        statustext: Vec::new(),
        home: Some(GeoPoint::from_deg(47.0, 8.0, 400.0)),
    }
}

fn bench(c: &mut Criterion) {
    let frame = LocalFrame::new(GeoPoint::from_deg(47.0, 8.0, 400.0));
    let route = Route::new(&mission(&frame), &frame, 2.0);
    let tracks: Vec<Track> = (0..2).map(flight).collect();
    c.bench_function("measure_10_min_flight", |b| {
        b.iter(|| MissionMetrics::measure(black_box(&tracks[0]), black_box(&route)))
    });
    let flown: Vec<Flown> = tracks
        .iter()
        .enumerate()
        .map(|(i, t)| Flown {
            controller: format!("controller {i}"),
            seed: 0,
            track: t.clone(),
            metrics: MissionMetrics::measure(t, &route),
        })
        .collect();
    let dir = std::env::temp_dir().join(format!("mavsitl-bench-plots-{}", std::process::id()));
    let mut g = c.benchmark_group("plots");
    g.sample_size(10);
    g.bench_function("draw_all_two_10_min_flights", |b| {
        b.iter(|| draw_all(black_box(&dir), &route, &flown).map(|v| v.len()))
    });
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
