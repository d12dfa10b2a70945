//! PX4 SITL in the loop over PX4's simulator interface (`simulator_mavlink`):
//! mavsitl is the simulator, PX4 the client.
//!
//! - **Transport.** A TCP server on 4560 + instance; PX4 connects (and keeps
//!   retrying until we listen). A new connection replaces the old one (PX4
//!   restarted). MAVLink 2, system 1 component 200 like Gazebo.
//! - **Clock.** The simulation clock is PX4's clock: every control step (4 ms,
//!   250 Hz) ends with a HIL_SENSOR (id 0) whose `time_usec` is sim time.
//! - **Lockstep.** Until PX4's first HIL_ACTUATOR_CONTROLS the simulation
//!   free-wheels at real time (PX4 sends none before its mixers run, and its
//!   start-up blocks on our first HIL_SENSOR). After it, each step waits for the
//!   HIL_ACTUATOR_CONTROLS whose `time_usec` equals the last HIL_SENSOR's (the
//!   rule AirSim uses), when PX4 says it runs lockstep (flags bit 0). A vehicle
//!   whose controller runs slower than the sensors (PX4's rovers publish
//!   outputs at their own rate, not every IMU sample) answers only every few
//!   steps: the wait is then for an answer no older than the longest gap
//!   between PX4's recent answers (at most 100 ms), so the simulation stays
//!   within one controller period of PX4. While armed the wait is bounded by
//!   [`Px4Options::armed_wait`] (10 ms, as Gazebo classic bounds it so arming
//!   cannot deadlock); a step that times out keeps the last controls and is
//!   counted as missed, and PX4 without a new answer for
//!   [`Px4Options::give_up_after`] is an error, whatever else it sends. While disarmed PX4 may send nothing at all (a rover's outputs stop):
//!   each step then waits at most one step of real time, so the simulation
//!   goes on at real-time pace until PX4 answers again; a PX4 that exits closes
//!   the connection.
//! - **Sensors out**, from the same models SimpleFlight uses: HIL_SENSOR with
//!   accel (specific force, FRD, m/s²) and gyro every step, mag (gauss) and baro
//!   (hPa, with pressure altitude and temperature: PX4 needs all three bits)
//!   when a new sample came in the step; HIL_GPS for every GPS report when it
//!   is delivered (the model's latency), eph/epv in cm; HIL_STATE_QUATERNION
//!   ground truth at the interval PX4 asks for (SET_MESSAGE_INTERVAL 115);
//!   RC_CHANNELS from the scenario's stick script, if it has one.
//! - **Actuators in.** `controls[i]` straight to actuator channel i: PX4's motor
//!   order is ours (0 FR CCW, 1 RL CCW, 2 FL CW, 3 RR CW; hexa/octo likewise),
//!   boats take channels 0/1 as thrusters and 2 as rudder, −1..1. All zero
//!   while PX4 reports disarmed.

mod hil;
mod socket;

pub use socket::{Px4Port, Px4Socket};

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mavlink::dialects::common::{
    HilActuatorControlsFlags, MavMessage, MavModeFlag, HIL_STATE_QUATERNION_DATA,
};

use mavlink::MessageData;
use mavsitl_core::controller::{Actuators, ControllerError, FlightController, SensorFrame};
use mavsitl_core::geo::LocalFrame;
use mavsitl_core::time::SimTime;
use mavsitl_mavlink::mission::commands;
use mavsitl_mavlink::transport::{bound_send_buffer, Link};
use mavsitl_mavlink::wire::{self, Encoder, Incoming, Outgoing};

/// The error text of a run ended because PX4 reconnected.
pub const RESTARTED: &str = "PX4 reconnected (restarted)";

/// PX4's HIL_SENSOR rate, Hz (IMU_INTEG_RATE 250 in PX4's SITL start-up).
pub const PX4_SENSOR_RATE_HZ: u32 = 250;

/// Bridge options.
#[derive(Debug, Clone)]
pub struct Px4Options {
    /// Address to listen on (port 4560 + instance).
    pub listen: SocketAddr,
    /// Longest wait for PX4's answer to a step while armed.
    pub armed_wait: Duration,
    /// PX4 without a new answer this long (wall time) after it first
    /// answered: an error. Only a HIL_ACTUATOR_CONTROLS that moves PX4's time
    /// on counts; heartbeats, garbage and answers from the future do not.
    pub give_up_after: Duration,
    /// Longest wait for PX4 to connect (None: forever).
    pub connect_timeout: Option<Duration>,
    /// Unix time of sim time 0, µs: HIL_GPS carries UTC, which PX4 takes as
    /// GPS time.
    pub utc_epoch_us: u64,
    /// RC sticks to send as RC_CHANNELS, if any.
    pub rc: Option<RcSchedule>,
    /// Set (e.g. by Ctrl-C) to stop waiting.
    pub stop: Option<&'static AtomicBool>,
    /// mavsitl started PX4 itself: no "start it in another terminal" advice.
    pub launched: bool,
}

/// RC channel values over sim time, sent as RC_CHANNELS every `every_steps`
/// lockstep steps.
#[derive(Debug, Clone, PartialEq)]
pub struct RcSchedule {
    /// Steps between messages (250 / rate).
    pub every_steps: u64,
    /// (from, channel values in µs), in time order.
    pub points: Vec<(SimTime, Vec<u16>)>,
}

impl RcSchedule {
    /// The channels in force at `t`.
    pub fn at(&self, t: SimTime) -> Option<&[u16]> {
        self.points
            .iter()
            .take_while(|(from, _)| *from <= t)
            .last()
            .map(|(_, c)| c.as_slice())
    }
}

impl Px4Options {
    /// Defaults for `instance` on `host`.
    pub fn new(host: std::net::IpAddr, instance: u8) -> Self {
        Px4Options {
            listen: SocketAddr::new(host, 4560 + instance as u16),
            armed_wait: Duration::from_millis(10),
            give_up_after: Duration::from_secs(10),
            connect_timeout: None,
            utc_epoch_us: 0,
            rc: None,
            stop: None,
            launched: false,
        }
    }
}

/// What the bridge has seen.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Px4Stats {
    /// Connections accepted.
    pub connections: u32,
    /// HIL_SENSOR (id 0) sent.
    pub steps: u64,
    /// Steps answered by a matching HIL_ACTUATOR_CONTROLS.
    pub answered: u64,
    /// Steps that timed out waiting for PX4 (after the first answer).
    pub missed: u64,
    /// HIL_ACTUATOR_CONTROLS with a time that matched no step.
    pub stale: u64,
    /// Bytes skipped as garbage, messages that could not be decoded.
    pub malformed: u64,
    /// Steps whose sending found PX4's socket full and waited for it.
    pub backpressure: u64,
    /// PX4 reports lockstep (flags bit 0).
    pub lockstep: bool,
    /// PX4 reports armed.
    pub armed: bool,
    /// HIL_GPS sent.
    pub gps_sent: u64,
    /// Total wall time spent waiting for PX4, µs.
    pub wait_us: u64,
}

/// The bridge: a [`FlightController`] whose decisions PX4 makes.
pub struct Px4Bridge {
    opts: Px4Options,
    port: Px4Port,
    stream: Option<Link>,
    rx: Vec<u8>,
    tx: Vec<u8>,
    enc: Encoder,
    frame: LocalFrame,
    last_sensor: Option<SimTime>,
    first_answer: bool,
    actuators: Actuators,
    state_interval_us: Option<u64>,
    next_state: SimTime,
    last_heard: Instant,
    /// When the simulation last sent PX4 a step.
    last_asked: Option<Instant>,
    stats: Px4Stats,
    freewheel_start: Option<Instant>,
    freewheel_steps: u64,
    /// The socket's read timeout, once set (it is always blocking then).
    read_timeout: Option<Duration>,
    /// Time of PX4's newest HIL_ACTUATOR_CONTROLS, µs.
    last_answer_us: Option<u64>,
    /// Recent gaps between PX4's answers while armed, µs (ring).
    answer_gaps_us: [u64; ANSWER_GAPS],
    answer_gap_next: usize,
}

/// Answers whose gaps set how far the simulation may lead PX4.
const ANSWER_GAPS: usize = 32;
/// A gap between two steps this long (wall time) is a pause of the
/// simulation, not PX4's silence.
const PAUSE_GAP: Duration = Duration::from_millis(500);
/// The most the simulation leads PX4's newest answer, µs.
const MAX_LEAD_US: u64 = 100_000;
/// One sensor step, µs.
const STEP_US: u64 = 1_000_000 / PX4_SENSOR_RATE_HZ as u64;

impl std::fmt::Debug for Px4Bridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Px4Bridge")
            .field("listen", &self.opts.listen)
            .field("stats", &self.stats)
            .finish()
    }
}

/// How long a read polls before it blocks (see [`Px4Bridge::read`]).
const SPIN_WAIT: Duration = Duration::from_micros(200);
/// Steps between looks for a newer connection (a restarted PX4): the look is
/// a system call, and a restart is rare (the old connection's end is seen at
/// once anyway).
const ACCEPT_EVERY_STEPS: u64 = 64;

impl Px4Bridge {
    /// A bridge on `port` (see [`Px4Socket::listen`]); `frame` is the
    /// scenario's mission frame (for geodetic ground truth). A connection
    /// accepted by a previous bridge is taken over.
    pub fn new(opts: Px4Options, port: Px4Port, frame: LocalFrame) -> Self {
        let stream = port.borrow_mut().pending.take();
        let connections = port.borrow().stats.connections;
        Px4Bridge {
            opts,
            port,
            stream,
            rx: Vec::with_capacity(4096),
            tx: Vec::with_capacity(512),
            enc: Encoder::new(1, 200, None),
            frame,
            last_sensor: None,
            first_answer: false,
            actuators: Actuators::default(),
            state_interval_us: None,
            next_state: SimTime::ZERO,
            last_heard: Instant::now(),
            last_asked: None,
            stats: Px4Stats {
                connections,
                ..Px4Stats::default()
            },
            freewheel_start: None,
            freewheel_steps: 0,
            read_timeout: None,
            last_answer_us: None,
            answer_gaps_us: [0; ANSWER_GAPS],
            answer_gap_next: 0,
        }
    }

    /// How far the newest sensor time may lead PX4's newest answer, µs: the
    /// longest recent gap between its answers, less one step (0 for a PX4
    /// that answers every step).
    fn lead_us(&self) -> u64 {
        let widest = self.answer_gaps_us.iter().copied().max().unwrap_or(0);
        widest.saturating_sub(STEP_US).min(MAX_LEAD_US)
    }

    /// Counters.
    pub fn stats(&self) -> Px4Stats {
        self.stats
    }

    fn publish(&self) {
        self.port.borrow_mut().stats = self.stats;
    }

    /// Takes a pending connection, if any (a newer one replaces the current).
    /// Returns whether a new connection was taken. Without a connection, one
    /// the port accepted meanwhile ([`Px4Socket::wait_for_connection`]) is
    /// taken over.
    fn accept_pending(&mut self) -> std::io::Result<bool> {
        if self.stream.is_none() {
            let waiting = self.port.borrow_mut().pending.take();
            if let Some(link) = waiting {
                // The port counted it.
                self.stats.connections = self.port.borrow().stats.connections;
                self.adopt(link);
                return Ok(true);
            }
        }
        let accepted = match self.port.borrow().listener.as_ref() {
            Some(l) => l.accept(),
            None => return Ok(false),
        };
        match accepted {
            Ok((s, from)) => {
                s.set_nodelay(true)?;
                s.set_nonblocking(false)?;
                if let Err(e) = bound_send_buffer(&s, socket::SEND_BUFFER_BYTES) {
                    tracing::debug!("SO_SNDBUF not set: {e}");
                }
                tracing::info!(%from, "PX4 connected");
                self.adopt(Link::Tcp(s));
                self.stats.connections += 1;
                Ok(true)
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Starts over on a new connection.
    fn adopt(&mut self, mut link: Link) {
        // Blocking with a timeout from the first write on (see
        // [`Link::set_timeout`]).
        let t = Duration::from_secs(1);
        self.read_timeout = link.set_timeout(t).ok().map(|()| t);
        self.stream = Some(link);
        self.rx.clear();
        self.first_answer = false;
        self.last_sensor = None;
        self.freewheel_start = None;
        self.freewheel_steps = 0;
        self.last_answer_us = None;
        self.answer_gaps_us = [0; ANSWER_GAPS];
        self.last_heard = Instant::now();
    }

    /// Blocks until PX4 connects.
    fn wait_for_connection(&mut self) -> Result<(), ControllerError> {
        let start = Instant::now();
        let mut told = false;
        loop {
            if self.accept_pending()? {
                return Ok(());
            }
            if self.opts.stop.is_some_and(|f| f.load(Ordering::Relaxed)) {
                return Err(ControllerError::Interrupted);
            }
            if !told && self.opts.launched {
                tracing::info!("waiting for the PX4 mavsitl started to connect");
                told = true;
            }
            if !told {
                tracing::warn!(
                    "waiting for PX4 on TCP {}: start it in another terminal, e.g. for a quad `cd PX4-Autopilot && PX4_SYS_AUTOSTART=10016 ./build/px4_sitl_default/bin/px4` (firmware_configs/px4/*.env hold the settings)",
                    self.port.borrow().local_addr().map_or_else(|_| self.opts.listen.to_string(), |a| a.to_string())
                );
                told = true;
            }
            if self
                .opts
                .connect_timeout
                .is_some_and(|t| start.elapsed() >= t)
            {
                return Err(ControllerError::Disconnected(format!(
                    "PX4 did not connect to TCP {} within {:.0} s",
                    self.opts.listen,
                    start.elapsed().as_secs_f64()
                )));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn send(&mut self, msg: MavMessage) {
        self.enc.encode(&Outgoing::Msg(msg), &mut self.tx);
    }

    /// Sends what the step queued. A full send buffer is back-pressure (PX4
    /// has not read yet): it waits for PX4, up to [`Px4Options::give_up_after`],
    /// then gives the connection up.
    fn flush(&mut self) -> Result<(), ControllerError> {
        if self.tx.is_empty() {
            return Ok(());
        }
        let Some(s) = self.stream.as_mut() else {
            self.tx.clear();
            return Ok(());
        };
        let mut off = 0;
        let mut blocked: Option<Instant> = None;
        let mut lost = None;
        while let Some(rest) = self.tx.get(off..).filter(|r| !r.is_empty()) {
            match s.write_some(rest) {
                Ok(0) => {
                    lost = Some("PX4 closed the connection".to_string());
                    break;
                }
                // (A trickle through a zero window is no progress: the
                // step's bytes must all go within the timeout.)
                Ok(n) => off += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    let since = *blocked.get_or_insert_with(|| {
                        self.stats.backpressure += 1;
                        Instant::now()
                    });
                    if since.elapsed() >= self.opts.give_up_after {
                        lost = Some(format!(
                            "PX4 stopped reading: {} bytes unsent for {:.0} s",
                            self.tx.len() - off,
                            since.elapsed().as_secs_f64()
                        ));
                        break;
                    }
                    std::thread::sleep(Duration::from_micros(200));
                }
                Err(e) => {
                    lost = Some(format!("PX4 connection lost while sending: {e}"));
                    break;
                }
            }
        }
        self.tx.clear();
        if let Some(why) = lost {
            tracing::warn!(%why, "PX4 connection given up");
            self.stream = None;
            self.publish();
            return Err(ControllerError::Disconnected(format!(
                "{why} (after {} steps)",
                self.stats.steps
            )));
        }
        Ok(())
    }

    /// Reads what PX4 sent, for at most `wait`; returns once an answer for
    /// sim time `step` µs or later (if given) has arrived.
    fn read(&mut self, wait: Duration, step: Option<u64>) -> Result<bool, ControllerError> {
        let deadline = Instant::now() + wait;
        let mut buf = [0u8; 2048];
        loop {
            let Some(s) = self.stream.as_mut() else {
                return Ok(false);
            };
            let left = deadline.saturating_duration_since(Instant::now());
            // PX4 usually answers within tens of µs, less than a sleeping
            // thread's wake-up: poll for up to SPIN_WAIT before blocking.
            let spin_until = Instant::now() + SPIN_WAIT.min(left);
            let got = loop {
                match s.read_now(&mut buf) {
                    Err(e) if e.kind() == ErrorKind::WouldBlock && Instant::now() < spin_until => {
                        std::hint::spin_loop();
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock && !left.is_zero() => {
                        let left = deadline
                            .saturating_duration_since(Instant::now())
                            .max(Duration::from_micros(1));
                        // The socket stays blocking with a timeout; it is set
                        // only when it differs (each change is a system call):
                        // within 20 % of the wanted one is close enough.
                        if !self
                            .read_timeout
                            .is_some_and(|a| a >= left && a <= left + left / 5)
                        {
                            s.set_timeout(left)?;
                            self.read_timeout = Some(left);
                        }
                        break s.read(&mut buf);
                    }
                    other => break other,
                }
            };
            let n = match got {
                Ok(0) => {
                    tracing::warn!("PX4 closed the connection");
                    self.stream = None;
                    return Ok(false);
                }
                Ok(n) => n,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return Ok(false)
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    tracing::warn!(%e, "PX4 connection lost");
                    self.stream = None;
                    return Ok(false);
                }
            };
            self.rx.extend_from_slice(buf.get(..n).unwrap_or(&[]));
            let mut got = false;
            let mut msgs: Vec<Incoming> = Vec::new();
            let skipped = wire::stream_frames(&mut self.rx, |raw| match wire::decode(raw) {
                Ok(m) => msgs.push(m),
                Err(e) => tracing::debug!(%e, "undecodable message from PX4"),
            });
            self.stats.malformed += skipped as u64;
            for m in msgs {
                got |= self.handle(m, step);
            }
            if got {
                return Ok(true);
            }
        }
    }

    /// Handles one message; true when it answers `step` (µs) or a later time.
    fn handle(&mut self, m: Incoming, step: Option<u64>) -> bool {
        match m {
            Incoming::Msg(MavMessage::HIL_ACTUATOR_CONTROLS(a)) => {
                // PX4 answers a step it was sent: a time after the last
                // HIL_SENSOR is no answer (it would satisfy every later wait).
                let sent = self.last_sensor.map_or(0, |t| t.as_micros());
                if a.time_usec > sent {
                    self.stats.malformed += 1;
                    tracing::debug!(
                        time_usec = a.time_usec,
                        sent,
                        "answer from the future refused"
                    );
                    return false;
                }
                if !self.first_answer {
                    tracing::info!(
                        time_usec = a.time_usec,
                        free_wheeled_steps = self.freewheel_steps,
                        "PX4's first answer: lockstep from here"
                    );
                }
                // Only an answer that moves PX4's time on counts as hearing
                // from it: heartbeats, garbage and replays do not keep a
                // peer that stopped answering alive (`give_up_after`).
                if self.last_answer_us.is_none_or(|p| a.time_usec > p) {
                    self.last_heard = Instant::now();
                }
                self.first_answer = true;
                self.stats.lockstep = a
                    .flags
                    .contains(HilActuatorControlsFlags::HIL_ACTUATOR_CONTROLS_FLAGS_LOCKSTEP);
                let was_armed = self.stats.armed;
                self.stats.armed = a.mode.contains(MavModeFlag::MAV_MODE_FLAG_SAFETY_ARMED);
                if let Some(prev) = self.last_answer_us {
                    if was_armed && self.stats.armed && a.time_usec > prev {
                        let slot = self.answer_gap_next % ANSWER_GAPS;
                        if let Some(g) = self.answer_gaps_us.get_mut(slot) {
                            *g = a.time_usec - prev;
                        }
                        self.answer_gap_next = slot + 1;
                    }
                }
                self.last_answer_us = Some(
                    self.last_answer_us
                        .map_or(a.time_usec, |p| p.max(a.time_usec)),
                );
                let mut act = Actuators::default();
                if self.stats.armed {
                    for (c, v) in act.controls.iter_mut().zip(a.controls) {
                        *c = if v.is_finite() { v as f64 } else { 0.0 };
                    }
                }
                self.actuators = act;
                if step.is_some_and(|n| a.time_usec >= n) {
                    self.stats.answered += 1;
                    true
                } else {
                    if step.is_some() {
                        self.stats.stale += 1;
                    }
                    false
                }
            }
            Incoming::Command(c)
                if c.command == commands::SET_MESSAGE_INTERVAL
                    && c.params[0] as u32 == HIL_STATE_QUATERNION_DATA::ID =>
            {
                let interval = c.params[1];
                self.state_interval_us = if interval > 0.0 {
                    Some(interval as u64)
                } else {
                    None
                };
                false
            }
            _ => false,
        }
    }

    /// Silence is counted from when PX4 was last asked: a simulation that
    /// stood still (a paused AirSim client) sent it nothing to answer.
    fn note_asked(&mut self) {
        let now = Instant::now();
        if self
            .last_asked
            .is_some_and(|t| now.duration_since(t) >= PAUSE_GAP)
        {
            self.last_heard = now;
        }
        self.last_asked = Some(now);
    }
}

impl FlightController for Px4Bridge {
    fn name(&self) -> &str {
        "px4"
    }

    fn rate_hz(&self) -> u32 {
        PX4_SENSOR_RATE_HZ
    }

    fn wants_ground_truth(&self) -> bool {
        true
    }

    fn actuators(&mut self, _now: SimTime) -> Result<Actuators, ControllerError> {
        if self.stream.is_none() {
            return Ok(Actuators::default());
        }
        // The oldest answer that will do for this step (see the module docs).
        let need = self
            .last_sensor
            .map(|t| t.as_micros().saturating_sub(self.lead_us()));
        let waiting = self.first_answer && self.stats.lockstep && need.is_some();
        let satisfied = need.is_some_and(|n| self.last_answer_us.is_some_and(|a| a >= n));
        let wait = if !self.first_answer {
            // Free-wheeling through PX4's boot: no faster than real time, so
            // PX4's clock does not race ahead while its modules start.
            let start = *self.freewheel_start.get_or_insert_with(Instant::now);
            self.freewheel_steps += 1;
            let due =
                Duration::from_micros(self.freewheel_steps * 1_000_000 / PX4_SENSOR_RATE_HZ as u64);
            due.saturating_sub(start.elapsed())
        } else if !waiting || satisfied {
            // Only what has already arrived.
            Duration::ZERO
        } else if self.stats.armed {
            self.opts.armed_wait
        } else {
            Duration::from_micros(STEP_US)
        };
        let t0 = Instant::now();
        let answered = if waiting && satisfied {
            // PX4 is within one of its own output periods: drain what is
            // there (newer controls) and go on.
            self.read(wait, None)?;
            self.stats.answered += 1;
            true
        } else {
            self.read(wait, if waiting { need } else { None })?
        };
        self.stats.wait_us += t0.elapsed().as_micros() as u64;
        if waiting && !answered && self.stats.armed {
            self.stats.missed += 1;
            if self.stats.missed.is_power_of_two() {
                tracing::warn!(
                    missed = self.stats.missed,
                    "PX4 did not answer a lockstep step in time"
                );
            }
            if self.stream.is_some() && self.last_heard.elapsed() >= self.opts.give_up_after {
                if let Some(Link::Udp(_)) = self.stream {
                    // The UDP socket serves the next run.
                    self.port.borrow_mut().pending = self.stream.take();
                }
                return Err(ControllerError::Disconnected(format!(
                    "PX4 stopped answering: nothing for {:.0} s after {} steps ({} missed)",
                    self.last_heard.elapsed().as_secs_f64(),
                    self.stats.steps,
                    self.stats.missed
                )));
            }
        }
        self.publish();
        if self.stream.is_none() {
            return Err(ControllerError::Disconnected(format!(
                "PX4 disconnected after {} steps",
                self.stats.steps
            )));
        }
        Ok(self.actuators)
    }

    fn receive(&mut self, f: &SensorFrame) -> Result<(), ControllerError> {
        // A newer connection replaces the current one (PX4 restarted): hand it
        // to the next run.
        let had = self.stream.is_some();
        let look = !had || self.stats.steps.is_multiple_of(ACCEPT_EVERY_STEPS);
        if look && self.accept_pending()? && had {
            self.port.borrow_mut().pending = self.stream.take();
            self.publish();
            return Err(ControllerError::Restarted(RESTARTED.into()));
        }
        if self.stream.is_none() {
            if self.stats.steps > 0 {
                // Lost mid-run: the caller decides whether to wait for PX4
                // (within --px4-timeout), not this step.
                return Err(ControllerError::Disconnected(format!(
                    "PX4 disconnected after {} steps",
                    self.stats.steps
                )));
            }
            self.wait_for_connection()?;
        }
        self.note_asked();
        self.sensors(f);
        self.publish();
        self.flush()
    }
}
