//! Soak: `mavsitl airsim` serving ten clients for an hour of sim time. Nine
//! make AirSim's everyday calls in a loop (state, IMU, GPS, barometer, pose,
//! ground truth, wind, API control) and time each answer; the tenth
//! pipelines requests and never reads an answer. Run on demand:
//! `cargo test --release --test integration airsim_soak -- --ignored --nocapture`
//! (about two minutes: the clock runs at 60× real time).
//!
//! Checks: the server's resident memory stays within 10 MB of where it
//! stood after the first minutes of sim time, and the reading clients' p99
//! latency stays under 10 ms, while the one that never reads is held off.

use std::io::{BufReader, BufWriter, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmpv::Value;

use crate::common::airsim_server::Server;

/// Sim time to serve, s.
const SOAK_S: f64 = 3600.0;
/// The clock speed: an hour of sim time in a minute of wall time.
const CLOCK_SPEED: &str = "60";

/// The server's resident set, KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/statm"))
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4)
}

fn request(id: u32, method: &str, params: Vec<Value>) -> Vec<u8> {
    let v = Value::Array(vec![
        Value::from(0),
        Value::from(id),
        Value::from(method),
        Value::Array(params),
    ]);
    let mut b = Vec::new();
    rmpv::encode::write_value(&mut b, &v).expect("encode");
    b
}

fn vector3(x: f64, y: f64, z: f64) -> Value {
    Value::Map(vec![
        (Value::from("x_val"), Value::from(x)),
        (Value::from("y_val"), Value::from(y)),
        (Value::from("z_val"), Value::from(z)),
    ])
}

/// One msgpack-rpc connection that waits for each answer.
struct Client {
    w: BufWriter<TcpStream>,
    r: BufReader<TcpStream>,
    next_id: u32,
}

impl Client {
    fn connect(port: u16) -> Self {
        let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_nodelay(true).expect("nodelay");
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        Client {
            w: BufWriter::new(s.try_clone().expect("clone")),
            r: BufReader::new(s),
            next_id: 0,
        }
    }

    /// Calls `method`: its result, or the error the server answered.
    fn call(&mut self, method: &str, params: Vec<Value>) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        self.w
            .write_all(&request(id, method, params))
            .and_then(|()| self.w.flush())
            .map_err(|e| format!("{method}: send: {e}"))?;
        let answer = rmpv::decode::read_value(&mut self.r)
            .map_err(|e| format!("{method}: no answer: {e}"))?;
        let parts = answer.as_array().cloned().unwrap_or_default();
        match parts.as_slice() {
            [kind, got, err, result]
                if kind.as_u64() == Some(1) && got.as_u64() == Some(u64::from(id)) =>
            {
                if err.is_nil() {
                    Ok(result.clone())
                } else {
                    Err(format!("{method}: {err}"))
                }
            }
            _ => Err(format!("{method}: not an answer to {id}: {answer}")),
        }
    }
}

/// Sim time from a getMultirotorState answer, s.
fn sim_time_s(state: &Value) -> f64 {
    state
        .as_map()
        .and_then(|m| m.iter().find(|(k, _)| k.as_str() == Some("timestamp")))
        .and_then(|(_, v)| v.as_u64())
        .map_or(0.0, |ns| ns as f64 * 1e-9)
}

/// A method and its parameters for the `i`th call.
type Call = (&'static str, fn(usize) -> Vec<Value>);

/// A reading client's loop until `done`: its call latencies, µs.
fn reader(port: u16, k: usize, done: &AtomicBool) -> Vec<u32> {
    let mut c = Client::connect(port);
    let mut lat = Vec::with_capacity(1 << 20);
    let calls: [Call; 8] = [
        ("getMultirotorState", |_| vec![Value::from("")]),
        ("getImuData", |_| vec![Value::from(""), Value::from("")]),
        ("getGpsData", |_| vec![Value::from(""), Value::from("")]),
        ("getBarometerData", |_| {
            vec![Value::from(""), Value::from("")]
        }),
        ("simGetVehiclePose", |_| vec![Value::from("")]),
        ("simGetGroundTruthKinematics", |_| vec![Value::from("")]),
        ("simSetWind", |i| vec![vector3((i % 7) as f64, 1.0, 0.0)]),
        ("isApiControlEnabled", |_| vec![Value::from("")]),
    ];
    let mut i = k;
    while !done.load(Ordering::Relaxed) {
        let (method, params) = calls[i % calls.len()];
        let t = Instant::now();
        if let Err(e) = c.call(method, params(i)) {
            panic!("client {k}: {e}");
        }
        lat.push(t.elapsed().as_micros().min(u128::from(u32::MAX)) as u32);
        i += 1;
        // A script's pace, not a flood: a few hundred calls a second.
        std::thread::sleep(Duration::from_millis(2));
    }
    lat
}

/// The client that pipelines requests and never reads one answer, until
/// `done`. How many requests it got out.
fn never_reads(port: u16, done: &AtomicBool) -> u64 {
    let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_write_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    let mut w = &s;
    let mut sent = 0u64;
    let mut id = 0u32;
    while !done.load(Ordering::Relaxed) {
        id = id.wrapping_add(1);
        match w.write_all(&request(id, "getMultirotorState", vec![Value::from("")])) {
            Ok(()) => sent += 1,
            // Held off (the server stopped reading it), or dropped.
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    sent
}

#[test]
#[ignore = "an hour of sim time with ten clients: run on demand"]
fn an_hour_of_ten_clients_one_never_reading() {
    let server = Server::start(&["--seed", "3", "--clock-speed", CLOCK_SPEED]);
    let (pid, port) = (server.pid(), server.port);
    let done = Arc::new(AtomicBool::new(false));
    let hog = {
        let done = done.clone();
        std::thread::spawn(move || never_reads(port, &done))
    };
    let readers: Vec<_> = (0..9)
        .map(|k| {
            let done = done.clone();
            std::thread::spawn(move || reader(port, k, &done))
        })
        .collect();
    let mut clock = Client::connect(port);
    let wall = Instant::now();
    let mut rss = Vec::new();
    let mut baseline = None;
    loop {
        std::thread::sleep(Duration::from_secs(2));
        let state = clock
            .call("getMultirotorState", vec![Value::from("")])
            .expect("state");
        let t = sim_time_s(&state);
        let kib = rss_kib(pid);
        rss.push((t, kib));
        // After the first five minutes of sim time: buffers and logs have
        // reached their working size.
        if baseline.is_none() && t >= 300.0 {
            baseline = Some(kib);
        }
        if t >= SOAK_S || wall.elapsed() > Duration::from_secs(600) {
            break;
        }
    }
    done.store(true, Ordering::Relaxed);
    let mut lat: Vec<u32> = readers
        .into_iter()
        .flat_map(|h| h.join().expect("a reading client failed"))
        .collect();
    let sent = hog.join().expect("the hog");
    lat.sort_unstable();
    let pct = |p: f64| lat[((lat.len() - 1) as f64 * p) as usize];
    let (t_end, rss_end) = *rss.last().expect("samples");
    let base = baseline.expect("five minutes of sim time were reached");
    let peak = rss.iter().map(|&(_, k)| k).max().unwrap_or(0);
    println!(
        "sim {t_end:.0} s in {:.0} s of wall time; {} calls: p50 {} µs, p99 {} µs, max {} µs; \
         the never-reading client got {sent} requests out; RSS {} KiB at 300 s, {rss_end} KiB at the end, peak {peak} KiB",
        wall.elapsed().as_secs_f64(),
        lat.len(),
        pct(0.5),
        pct(0.99),
        lat.last().copied().unwrap_or(0),
        base
    );
    assert!(t_end >= SOAK_S, "only {t_end} s of sim time");
    assert!(lat.len() > 10_000, "{} calls", lat.len());
    assert!(pct(0.99) < 10_000, "p99 {} µs", pct(0.99));
    assert!(
        peak.saturating_sub(base) < 10 * 1024,
        "RSS grew from {base} KiB to {peak} KiB"
    );
}
