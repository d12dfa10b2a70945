//! Round trips of mavsitl's AirSim API over TCP on loopback, one client
//! issuing calls back to back as AirSim's Python client does: a pose query,
//! `getImuData`, `getMultirotorState`, and `simContinueForTime(0.005)` (five
//! physics ticks of SimpleFlight and the sensors, then the answer).
//! AirSim itself manages about 1000 pose queries and 300 `getMultirotorState`
//! calls a second.

use std::io::Write;
use std::net::TcpStream;
use std::sync::mpsc;

use criterion::{criterion_group, criterion_main, Criterion};
use mavsitl::airsim::{AirSimApi, Incoming, Server};
use mavsitl::scenario::{Scenario, ScenarioSource};
use rmpv::Value;

/// Serves on a free port in a thread of its own (the flight is not `Send`),
/// paused; returns the port.
fn serve() -> u16 {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let src = ScenarioSource {
            name: "quad".into(),
            base_dir: ".".into(),
        };
        let quad = Scenario::from_json(
            r#"{"vehicles":[{"kind":"multirotor","airframe":"generic_quad"}]}"#,
            &src,
        )
        .expect("quad");
        let build = move || {
            mavsitl::setup::flight(
                &mavsitl::mission::Mission::default(),
                "none",
                &quad,
                &src,
                None,
                false,
            )
        };
        let flight = build().expect("flight");
        let mut api = AirSimApi::single(flight, Box::new(build));
        api.set_paused(true);
        let server = Server::bind("127.0.0.1:0".parse().expect("addr")).expect("bind");
        tx.send(server.local_addr().port()).expect("port");
        let mut replies = Vec::new();
        loop {
            while let Some(m) = server.try_recv() {
                if let Incoming::Call(c) = m {
                    api.handle(c, &mut replies);
                }
            }
            for (conn, id, a) in replies.drain(..) {
                server.respond(conn, id, a);
            }
            if api.running() {
                replies.extend(api.tick(&mut ()).expect("tick"));
            } else if let Some(Incoming::Call(c)) =
                server.recv_timeout(std::time::Duration::from_millis(5))
            {
                api.handle(c, &mut replies);
            }
        }
    });
    rx.recv().expect("server up")
}

fn call(s: &mut TcpStream, id: u32, method: &str, params: Vec<Value>) -> Value {
    let msg = Value::Array(vec![
        Value::from(0),
        Value::from(id),
        Value::from(method),
        Value::Array(params),
    ]);
    let mut b = Vec::new();
    rmpv::encode::write_value(&mut b, &msg).expect("encode");
    s.write_all(&b).expect("send");
    rmpv::decode::read_value(s).expect("answer")
}

fn bench(c: &mut Criterion) {
    let port = serve();
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_nodelay(true).expect("nodelay");
    let mut id = 0;
    let mut g = c.benchmark_group("airsim_rpc");
    for (name, method, params) in [
        (
            "simGetVehiclePose",
            "simGetVehiclePose",
            vec![Value::from("")],
        ),
        (
            "getImuData",
            "getImuData",
            vec![Value::from(""), Value::from("")],
        ),
        (
            "getMultirotorState",
            "getMultirotorState",
            vec![Value::from("")],
        ),
        (
            "simContinueForTime_5ms",
            "simContinueForTime",
            vec![Value::from(0.005)],
        ),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                id += 1;
                call(&mut s, id, method, params.clone())
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
