//! The ArduPilot JSON bridge at its default 1000 frames a second (one physics
//! tick per frame), two figures:
//!
//! - **harness CPU per frame**: a peer keeps up to 32 servo packets queued
//!   ahead (reading the replies on another thread), so the bridge never waits
//!   and the simulation thread's CPU time (Linux
//!   `/proc/thread-self/schedstat`) is all its own: receive, physics, sensors,
//!   the JSON reply and the send.
//! - **lockstep round trip per frame**: a peer that answers the way ArduPilot
//!   does, sending the next packet only when the reply is in. This is wall
//!   time, kernel wake-ups included; it bounds how fast any firmware can be
//!   driven on the machine.

use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};

#[path = "common/cpu.rs"]
mod cpu;
use cpu::thread_cpu;
use mavsitl::bridge::ardupilot::{ArduPilotBridge, ArduPilotOptions, ChannelMap, MAGIC_16};
use mavsitl::scenario::{Scenario, ScenarioSource};
use mavsitl::sim::Lockstep;

const FRAME_RATE_HZ: u16 = 1000;

fn servo_packet(count: u32) -> Vec<u8> {
    let mut b = Vec::with_capacity(40);
    b.extend_from_slice(&MAGIC_16.to_le_bytes());
    b.extend_from_slice(&FRAME_RATE_HZ.to_le_bytes());
    b.extend_from_slice(&count.to_le_bytes());
    for _ in 0..16 {
        b.extend_from_slice(&1590u16.to_le_bytes());
    }
    b
}

fn lockstep() -> (Lockstep, SocketAddr) {
    let src = ScenarioSource {
        name: "bench".into(),
        base_dir: PathBuf::from("."),
    };
    let scenario = Scenario::from_json(
        r#"{"physics_rate_hz":1000,"vehicles":[{"kind":"multirotor"}]}"#,
        &src,
    )
    .expect("scenario");
    let sim = scenario.build_simulation(&src).expect("simulation");
    let bridge = ArduPilotBridge::bind(ArduPilotOptions {
        bind: "127.0.0.1:0".parse().expect("addr"),
        frame_rate_hz: FRAME_RATE_HZ.into(),
        map: ChannelMap::quad_x(),
        give_up_after: Duration::from_secs(5),
        stop: None,
        launched: false,
    })
    .expect("bind");
    let addr = bridge.local_addr().expect("addr");
    let mut ls = Lockstep::new(sim);
    ls.attach(0, Box::new(bridge)).expect("attach");
    (ls, addr)
}

/// A peer that keeps `ahead` packets outstanding; returns its stop flag.
fn queued_peer(addr: SocketAddr, ahead: u64) -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let replies = Arc::new(AtomicU64::new(0));
    let tx = UdpSocket::bind("127.0.0.1:0").expect("peer");
    let rx = tx.try_clone().expect("clone");
    rx.set_read_timeout(Some(Duration::from_millis(100)))
        .expect("timeout");
    {
        let (stop, replies) = (stop.clone(), replies.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 2048];
            while !stop.load(Ordering::Relaxed) {
                if rx.recv(&mut buf).is_ok() {
                    replies.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
    }
    {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut sent = 0u64;
            while !stop.load(Ordering::Relaxed) {
                if sent - replies.load(Ordering::Relaxed) >= ahead {
                    std::thread::yield_now();
                    continue;
                }
                if tx.send_to(&servo_packet(sent as u32), addr).is_err() {
                    return;
                }
                sent += 1;
            }
        });
    }
    stop
}

/// A peer that sends the next packet when the reply is in, as ArduPilot does.
fn lockstep_peer(addr: SocketAddr) {
    std::thread::spawn(move || {
        let s = UdpSocket::bind("127.0.0.1:0").expect("peer");
        let mut buf = [0u8; 2048];
        let mut count = 0u32;
        loop {
            if s.send_to(&servo_packet(count), addr).is_err() || s.recv(&mut buf).is_err() {
                return;
            }
            count += 1;
        }
    });
}

fn bench(c: &mut Criterion) {
    let (mut ls, addr) = lockstep();
    let stop = queued_peer(addr, 32);
    c.bench_function(
        "ardupilot JSON frame, harness CPU (1 physics tick + bridge)",
        |b| {
            b.iter_custom(|iters| {
                let t0 = thread_cpu();
                for _ in 0..iters {
                    ls.tick(&mut ()).expect("tick");
                }
                thread_cpu() - t0
            })
        },
    );
    stop.store(true, Ordering::Relaxed);

    let (mut ls, addr) = lockstep();
    lockstep_peer(addr);
    c.bench_function("ardupilot JSON frame, lockstep round trip (wall)", |b| {
        b.iter(|| ls.tick(&mut ()).expect("tick"))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
