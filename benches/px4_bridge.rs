//! Harness CPU per PX4 lockstep step: everything but PX4. A minimal peer
//! thread answers every HIL_SENSOR at once over loopback TCP; the figure is the
//! simulation thread's own CPU time (Linux `/proc/thread-self/schedstat`) per
//! step — physics, sensors, encoding, decoding and socket calls, without the
//! time spent blocked waiting for the peer.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};

#[path = "common/cpu.rs"]
mod cpu;
use cpu::thread_cpu;
use mavlink::dialects::common::{
    HilActuatorControlsFlags, MavMessage, MavModeFlag, HIL_ACTUATOR_CONTROLS_DATA,
};
use mavsitl::bridge::px4::{Px4Bridge, Px4Options, Px4Socket};
use mavsitl::scenario::{Scenario, ScenarioSource};
use mavsitl::sim::Lockstep;
use mavsitl::wire::{self, Encoder, Outgoing};

/// (user, system) CPU time of this thread, from /proc/thread-self/stat (clock ticks).
fn user_system_ticks() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses).
    let rest = text.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|v| v.parse().unwrap_or(0))
        .collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 here.
    (
        f.get(11).copied().unwrap_or(0),
        f.get(12).copied().unwrap_or(0),
    )
}

fn peer(addr: std::net::SocketAddr) {
    let mut s = loop {
        if let Ok(s) = TcpStream::connect(addr) {
            break s;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let _ = s.set_nodelay(true);
    let mut enc = Encoder::new(1, 1, None);
    let mut rx = Vec::new();
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        rx.extend_from_slice(&buf[..n]);
        let mut times = Vec::new();
        wire::stream_frames(&mut rx, |raw| {
            if let Ok(wire::Incoming::Msg(MavMessage::HIL_SENSOR(h))) = wire::decode(raw) {
                times.push(h.time_usec);
            }
        });
        for t in times {
            enc.encode(
                &Outgoing::Msg(MavMessage::HIL_ACTUATOR_CONTROLS(
                    HIL_ACTUATOR_CONTROLS_DATA {
                        time_usec: t,
                        flags: HilActuatorControlsFlags::HIL_ACTUATOR_CONTROLS_FLAGS_LOCKSTEP,
                        controls: [0.58; 16],
                        mode: MavModeFlag::MAV_MODE_FLAG_CUSTOM_MODE_ENABLED
                            | MavModeFlag::MAV_MODE_FLAG_SAFETY_ARMED,
                    },
                )),
                &mut out,
            );
        }
        if !out.is_empty() {
            if s.write_all(&out).is_err() {
                return;
            }
            out.clear();
        }
    }
}

fn bench(c: &mut Criterion) {
    let src = ScenarioSource {
        name: "bench".into(),
        base_dir: PathBuf::from("."),
    };
    let scenario =
        Scenario::from_json(r#"{"vehicles":[{"kind":"multirotor"}]}"#, &src).expect("scenario");
    let sim = scenario.build_simulation(&src).expect("simulation");
    let frame = *sim.world().frame();
    let port = Px4Socket::listen("127.0.0.1:0".parse().expect("addr")).expect("listen");
    let addr = port.borrow().local_addr().expect("addr");
    let bridge = Px4Bridge::new(Px4Options::new(addr.ip(), 0), port.clone(), frame);
    std::thread::spawn(move || peer(addr));
    let mut ls = Lockstep::new(sim);
    ls.attach(0, Box::new(bridge)).expect("attach");
    // Through the real-time free-wheel until the peer's first answer.
    while port.borrow().stats().answered == 0 {
        ls.tick(&mut ()).expect("tick");
    }
    let (u0, s0) = user_system_ticks();
    c.bench_function(
        "px4 lockstep step, harness CPU (4 physics ticks + bridge)",
        |b| {
            b.iter_custom(|iters| {
                let t0 = thread_cpu();
                for _ in 0..iters {
                    for _ in 0..4 {
                        ls.tick(&mut ()).expect("tick");
                    }
                }
                thread_cpu() - t0
            })
        },
    );
    let (u1, s1) = user_system_ticks();
    let (u, sy) = (u1 - u0, s1 - s0);
    println!(
        "CPU split over the benchmark: {:.0} % user (harness code), {:.0} % system (socket calls)",
        100.0 * u as f64 / (u + sy).max(1) as f64,
        100.0 * sy as f64 / (u + sy).max(1) as f64
    );
    let st = port.borrow().stats();
    println!(
        "steps {} answered {} missed {} wall wait {:.1} us/step",
        st.steps,
        st.answered,
        st.missed,
        st.wait_us as f64 / st.steps.max(1) as f64
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
