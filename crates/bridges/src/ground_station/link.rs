//! The ground station on a socket, in a thread of its own, so the lockstep
//! loop never waits for it: PX4's MAVLink on UDP (mavsitl sends from a port
//! of its own to PX4's onboard link on 14580 + N, which answers whoever talks
//! to it; or, [`FirmwareAddr::Udp`], binds a port a vehicle sends to),
//! ArduPilot's on TCP (mavsitl connects to 5760 + 10 N, retrying while
//! ArduPilot starts; the connection is what releases ArduPilot's wait at
//! boot).
//!
//! The loop reads the sim time the lockstep loop publishes, drives
//! [`GroundStation`], and publishes its phase and events. With a forward
//! address every frame from the firmware is relayed there and whatever comes
//! back is relayed to the firmware, so QGroundControl can watch the flight.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mavlink::dialects::common::MavMessage;
use mavlink::MAVLinkMessageRaw;

use super::{GroundStation, GroundStationConfig, GsEvent, Phase, GCS_COMPONENT_ID, GCS_SYSTEM_ID};
use mavsitl_core::time::SimTime;
use mavsitl_mavlink::wire::{self, Encoder, Incoming, Outgoing};

/// How long one read waits before the machine is polled again.
const READ_SLICE: Duration = Duration::from_millis(2);
/// Time between TCP connection attempts while the firmware starts.
const CONNECT_RETRY: Duration = Duration::from_millis(200);

/// Where the firmware's MAVLink is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirmwareAddr {
    /// Bind this UDP address; the firmware sends to it.
    Udp(SocketAddr),
    /// Send to the firmware's own UDP port from a port of our own; the
    /// firmware answers to where it was last heard from (PX4's MAVLink
    /// instances do), so no well-known port is taken from other clients.
    UdpTo(SocketAddr),
    /// Connect to this TCP address (ArduPilot).
    Tcp(SocketAddr),
}

/// What the thread publishes.
#[derive(Debug, Clone)]
struct Shared {
    /// Parameters to set on the firmware (name, value), oldest first.
    params: Vec<(&'static str, f32)>,
    phase: Phase,
    events: Vec<(SimTime, GsEvent)>,
    reached: usize,
    nav_items: usize,
    frames_in: u64,
    /// Messages to send the firmware as they are (traffic), oldest first;
    /// at most [`OUTBOX_MAX`] wait.
    outbox: Vec<MavMessage>,
}

/// The most messages waiting to go out (a firmware not yet connected).
const OUTBOX_MAX: usize = 256;

enum Conn {
    Udp {
        socket: UdpSocket,
        peer: Option<SocketAddr>,
    },
    Tcp {
        addr: SocketAddr,
        stream: Option<TcpStream>,
        last_try: Option<Instant>,
        buf: Vec<u8>,
    },
}

fn raw_bytes(raw: &MAVLinkMessageRaw) -> &[u8] {
    match raw {
        MAVLinkMessageRaw::V1(m) => m.raw_bytes(),
        MAVLinkMessageRaw::V2(m) => m.raw_bytes(),
    }
}

impl Conn {
    /// Waits up to [`READ_SLICE`] for bytes and hands every frame to `each`.
    fn read(&mut self, each: &mut dyn FnMut(&MAVLinkMessageRaw)) {
        let mut chunk = [0u8; 4096];
        match self {
            Conn::Udp { socket, peer } => match socket.recv_from(&mut chunk) {
                Ok((n, from)) => {
                    if peer.is_none() {
                        *peer = Some(from);
                    }
                    wire::frames(chunk.get(..n).unwrap_or(&[]), None, |raw| each(raw));
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                    ) => {}
                Err(e) => tracing::debug!("ground station: udp receive: {e}"),
            },
            Conn::Tcp {
                addr,
                stream,
                last_try,
                buf,
            } => {
                let Some(s) = stream.as_mut() else {
                    if last_try.is_none_or(|t| t.elapsed() >= CONNECT_RETRY) {
                        *last_try = Some(Instant::now());
                        if let Ok(s) = TcpStream::connect_timeout(addr, CONNECT_RETRY) {
                            let _ = s.set_nodelay(true);
                            let _ = s.set_read_timeout(Some(READ_SLICE));
                            tracing::info!("ground station: connected to {addr}");
                            *stream = Some(s);
                        }
                    } else {
                        std::thread::sleep(READ_SLICE);
                    }
                    return;
                };
                match s.read(&mut chunk) {
                    Ok(0) => {
                        tracing::info!("ground station: {addr} closed the connection");
                        *stream = None;
                        buf.clear();
                    }
                    Ok(n) => {
                        buf.extend_from_slice(chunk.get(..n).unwrap_or(&[]));
                        wire::stream_frames(buf, |raw| each(raw));
                    }
                    Err(e)
                        if matches!(
                            e.kind(),
                            ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                        ) => {}
                    Err(e) => {
                        tracing::info!("ground station: {addr}: {e}");
                        *stream = None;
                        buf.clear();
                    }
                }
            }
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        match self {
            Conn::Udp {
                socket,
                peer: Some(p),
            } => {
                let _ = socket.send_to(bytes, *p);
            }
            Conn::Udp { peer: None, .. } => {}
            Conn::Tcp {
                stream: Some(s), ..
            } => {
                if s.write_all(bytes).is_err() {
                    // Seen as closed on the next read.
                }
            }
            Conn::Tcp { stream: None, .. } => {}
        }
    }
}

/// The running ground station.
#[derive(Debug)]
pub struct GroundStationHandle {
    shared: Arc<Mutex<Shared>>,
    quit: Arc<AtomicBool>,
    cut: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    local: Option<SocketAddr>,
}

/// What [`GroundStationHandle::spawn`] needs besides the configuration.
#[derive(Debug, Clone)]
pub struct LinkOptions {
    /// The firmware's MAVLink.
    pub firmware: FirmwareAddr,
    /// Relay the firmware's MAVLink to this address (and back).
    pub forward: Option<SocketAddr>,
    /// The sim time, µs, as the lockstep loop publishes it.
    pub sim_clock: Arc<AtomicU64>,
    /// Set when the flight failed, so a lockstep wait stops at once.
    pub stop_run: Option<&'static AtomicBool>,
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|p| p.into_inner())
}

impl GroundStationHandle {
    /// Binds (UDP) and starts the ground station's thread.
    ///
    /// # Errors
    /// The UDP port cannot be bound (another ground station or MAVSDK holds
    /// it), or the forward socket cannot be opened.
    pub fn spawn(cfg: GroundStationConfig, opts: LinkOptions) -> std::io::Result<Self> {
        let (conn, local) = match opts.firmware {
            FirmwareAddr::Udp(bind) => {
                let socket = UdpSocket::bind(bind)?;
                socket.set_read_timeout(Some(READ_SLICE))?;
                let local = socket.local_addr().ok();
                (Conn::Udp { socket, peer: None }, local)
            }
            FirmwareAddr::UdpTo(firmware) => {
                let socket = UdpSocket::bind(SocketAddr::new(firmware.ip(), 0))?;
                socket.set_read_timeout(Some(READ_SLICE))?;
                let local = socket.local_addr().ok();
                (
                    Conn::Udp {
                        socket,
                        peer: Some(firmware),
                    },
                    local,
                )
            }
            FirmwareAddr::Tcp(addr) => (
                Conn::Tcp {
                    addr,
                    stream: None,
                    last_try: None,
                    buf: Vec::new(),
                },
                None,
            ),
        };
        let forward = match opts.forward {
            Some(to) => {
                let s = UdpSocket::bind(("0.0.0.0", 0))?;
                s.set_nonblocking(true)?;
                Some((s, to))
            }
            None => None,
        };
        let gs = GroundStation::new(cfg);
        let shared = Arc::new(Mutex::new(Shared {
            params: Vec::new(),
            phase: gs.phase().clone(),
            events: Vec::new(),
            reached: 0,
            nav_items: gs.nav_items(),
            frames_in: 0,
            outbox: Vec::new(),
        }));
        let quit = Arc::new(AtomicBool::new(false));
        let cut = Arc::new(AtomicBool::new(false));
        let thread = {
            let (shared, quit, cut) = (shared.clone(), quit.clone(), cut.clone());
            std::thread::Builder::new()
                .name("ground-station".into())
                .spawn(move || run(gs, conn, forward, &opts, &shared, (&quit, &cut)))?
        };
        Ok(GroundStationHandle {
            shared,
            quit,
            cut,
            thread: Some(thread),
            local,
        })
    }

    /// Cuts or restores the link to the firmware (a `gcs_link_loss` fault):
    /// while cut, what the firmware sends is dropped and nothing is sent to
    /// it, forwarded ground stations included.
    pub fn set_cut(&self, cut: bool) {
        self.cut.store(cut, Ordering::Relaxed);
    }

    /// Sets a parameter of the firmware (PARAM_SET, sent once the firmware
    /// is known).
    pub fn set_firmware_param(&self, name: &'static str, value: f32) {
        lock(&self.shared).params.push((name, value));
    }

    /// Sends `msgs` to the firmware as they are (e.g. ADSB_VEHICLE traffic);
    /// beyond a backlog of 256 unsent, the oldest are dropped.
    pub fn send(&self, msgs: impl IntoIterator<Item = MavMessage>) {
        let mut s = lock(&self.shared);
        s.outbox.extend(msgs);
        let over = s.outbox.len().saturating_sub(OUTBOX_MAX);
        s.outbox.drain(..over);
    }

    /// The bound UDP address (PX4), if any.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.local
    }

    /// Where the flight stands.
    pub fn phase(&self) -> Phase {
        lock(&self.shared).phase.clone()
    }

    /// The events since the last call, with the sim time they were seen at.
    pub fn take_events(&self) -> Vec<(SimTime, GsEvent)> {
        std::mem::take(&mut lock(&self.shared).events)
    }

    /// (navigation items reached, navigation items in the plan).
    pub fn progress(&self) -> (usize, usize) {
        let s = lock(&self.shared);
        (s.reached, s.nav_items)
    }

    /// Frames received from the firmware.
    pub fn frames_in(&self) -> u64 {
        lock(&self.shared).frames_in
    }

    /// Stops the thread (also on drop).
    pub fn stop(&mut self) {
        self.quit.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for GroundStationHandle {
    fn drop(&mut self) {
        self.stop();
    }
}

fn run(
    mut gs: GroundStation,
    mut conn: Conn,
    forward: Option<(UdpSocket, SocketAddr)>,
    opts: &LinkOptions,
    shared: &Mutex<Shared>,
    (quit, cut): (&AtomicBool, &AtomicBool),
) {
    let start = Instant::now();
    let mut enc = Encoder::new(GCS_SYSTEM_ID, GCS_COMPONENT_ID, None);
    let mut out: Vec<MavMessage> = Vec::new();
    let mut bytes = Vec::with_capacity(512);
    let mut relay = Vec::new();
    let mut frames = 0u64;
    while !quit.load(Ordering::Relaxed) {
        let sim = SimTime::from_micros(opts.sim_clock.load(Ordering::Relaxed));
        let now = start.elapsed();
        relay.clear();
        let silent = cut.load(Ordering::Relaxed);
        conn.read(&mut |raw| {
            frames += 1;
            if silent {
                return;
            }
            if forward.is_some() {
                relay.extend_from_slice(raw_bytes(raw));
            }
            if let Ok(Incoming::Msg(m)) = wire::decode(raw) {
                let from = (raw.system_id() as u8, raw.component_id());
                gs.handle(now, sim, from, &m, &mut out);
            }
        });
        if let Some((sock, to)) = &forward {
            if !relay.is_empty() {
                let _ = sock.send_to(&relay, to);
            }
            let mut buf = [0u8; 2048];
            while let Ok((n, _)) = sock.recv_from(&mut buf) {
                if !silent {
                    conn.send(buf.get(..n).unwrap_or(&[]));
                }
            }
        }
        gs.poll(now, sim, &mut out);
        {
            let mut s = lock(shared);
            let mut kept = Vec::new();
            for (name, value) in s.params.drain(..) {
                match gs.param_set(name, value) {
                    Some(m) => out.push(m),
                    None => kept.push((name, value)),
                }
            }
            s.params = kept;
            out.append(&mut s.outbox);
        }
        if silent {
            out.clear();
        }
        for m in out.drain(..) {
            bytes.clear();
            enc.encode(&Outgoing::Msg(m), &mut bytes);
            conn.send(&bytes);
        }
        let events = gs.take_events();
        let phase = gs.phase().clone();
        let failed = matches!(phase, Phase::Failed(_));
        {
            let mut s = lock(shared);
            s.events.extend(events.into_iter().map(|e| (sim, e)));
            s.phase = phase;
            s.reached = gs.nav_items_reached();
            s.frames_in = frames;
        }
        if failed {
            if let Some(f) = opts.stop_run {
                f.store(true, Ordering::SeqCst);
            }
        }
    }
}
