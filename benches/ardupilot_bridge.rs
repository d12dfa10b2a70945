//! Harness CPU per ArduPilot JSON frame: everything but ArduPilot. A minimal
//! peer thread sends the next servo packet as soon as a reply arrives; the
//! figure is the simulation thread's own CPU time per frame (Linux
//! `/proc/thread-self/schedstat`): physics, sensors, the JSON reply and the
//! socket calls, without the time blocked waiting for the peer.

use std::net::UdpSocket;
use std::path::PathBuf;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};

#[path = "common/cpu.rs"]
mod cpu;
use cpu::thread_cpu;
use mavsitl::bridge::ardupilot::{ArduPilotBridge, ArduPilotOptions, ChannelMap, MAGIC_16};
use mavsitl::scenario::{Scenario, ScenarioSource};
use mavsitl::sim::Lockstep;

fn bench(c: &mut Criterion) {
    let src = ScenarioSource {
        name: "bench".into(),
        base_dir: PathBuf::from("."),
    };
    let scenario = Scenario::from_json(
        r#"{"physics_rate_hz":2000,"vehicles":[{"kind":"multirotor"}]}"#,
        &src,
    )
    .expect("scenario");
    let sim = scenario.build_simulation(&src).expect("simulation");
    let bridge = ArduPilotBridge::bind(ArduPilotOptions {
        bind: "127.0.0.1:0".parse().expect("addr"),
        frame_rate_hz: 400,
        map: ChannelMap::quad_x(),
        give_up_after: Duration::from_secs(5),
        stop: None,
    })
    .expect("bind");
    let addr = bridge.local_addr().expect("addr");
    std::thread::spawn(move || {
        let s = UdpSocket::bind("127.0.0.1:0").expect("peer");
        let mut buf = [0u8; 2048];
        let mut count = 0u32;
        loop {
            let mut b = Vec::with_capacity(40);
            b.extend_from_slice(&MAGIC_16.to_le_bytes());
            b.extend_from_slice(&400u16.to_le_bytes());
            b.extend_from_slice(&count.to_le_bytes());
            for _ in 0..16 {
                b.extend_from_slice(&1590u16.to_le_bytes());
            }
            if s.send_to(&b, addr).is_err() || s.recv(&mut buf).is_err() {
                return;
            }
            count += 1;
        }
    });
    let mut ls = Lockstep::new(sim);
    ls.attach(0, Box::new(bridge)).expect("attach");
    c.bench_function(
        "ardupilot JSON frame, harness CPU (5 physics ticks + bridge)",
        |b| {
            b.iter_custom(|iters| {
                let t0 = thread_cpu();
                for _ in 0..iters {
                    for _ in 0..5 {
                        ls.tick(&mut ()).expect("tick");
                    }
                }
                thread_cpu() - t0
            })
        },
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
