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

use std::cell::RefCell;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mavlink::dialects::common::{
    HilActuatorControlsFlags, HilSensorUpdatedFlags, MavMessage, MavModeFlag, HIL_GPS_DATA,
    HIL_SENSOR_DATA, HIL_STATE_QUATERNION_DATA, RC_CHANNELS_DATA,
};

use mavlink::MessageData;
use mavsitl_core::controller::{Actuators, ControllerError, FlightController, SensorFrame};
use mavsitl_core::geo::LocalFrame;
use mavsitl_core::time::SimTime;
use mavsitl_mavlink::mission::commands;
use mavsitl_mavlink::wire::{self, deg_e7, Encoder, GpsScaled, Incoming, Outgoing};

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

/// The connection to PX4: TCP (PX4's default, PX4 connects to us) or UDP
/// (`simulator_mavlink start -u PORT`: PX4 binds, we send to it).
#[derive(Debug)]
pub enum Link {
    /// A TCP connection PX4 opened.
    Tcp(TcpStream),
    /// A UDP socket connected to PX4's port.
    Udp(UdpSocket),
}

impl Link {
    /// Writes what it can of `b` (TCP: WouldBlock when PX4 is not reading).
    fn write_some(&mut self, b: &[u8]) -> std::io::Result<usize> {
        match self {
            Link::Tcp(s) => s.write(b),
            // A step's messages (a few hundred bytes) go in one datagram.
            Link::Udp(s) => match s.send(b) {
                Ok(_) => Ok(b.len()),
                // PX4 not up yet (ICMP port unreachable), or the socket's
                // buffer full: the datagram is lost, as UDP loses them.
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::ConnectionRefused | ErrorKind::WouldBlock
                    ) =>
                {
                    Ok(b.len())
                }
                Err(e) => Err(e),
            },
        }
    }

    /// Makes the socket blocking, reads waiting up to `t`; so do TCP
    /// writes, which a PX4 that stopped reading would otherwise block for
    /// ever (the send buffer full): they come back WouldBlock, back-pressure.
    fn set_timeout(&mut self, t: Duration) -> std::io::Result<()> {
        match self {
            Link::Tcp(s) => {
                s.set_nonblocking(false)?;
                s.set_read_timeout(Some(t))?;
                s.set_write_timeout(Some(t))
            }
            Link::Udp(s) => {
                s.set_nonblocking(false)?;
                s.set_read_timeout(Some(t))
            }
        }
    }

    /// Reads what is there without blocking, whatever the socket's mode
    /// (`MSG_DONTWAIT`: one system call, no mode change): WouldBlock when
    /// nothing is.
    fn read_now(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::os::fd::AsRawFd;
        let fd = match self {
            Link::Tcp(s) => s.as_raw_fd(),
            Link::Udp(s) => s.as_raw_fd(),
        };
        // SAFETY: recv into a buffer this call borrows mutably, of its length,
        // on a socket this link owns.
        let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
        match usize::try_from(n) {
            Ok(0) if matches!(self, Link::Udp(_)) => {
                Err(std::io::Error::from(ErrorKind::WouldBlock))
            }
            Ok(n) => Ok(n),
            Err(_) => {
                let e = std::io::Error::last_os_error();
                if e.kind() == ErrorKind::ConnectionRefused && matches!(self, Link::Udp(_)) {
                    Err(std::io::Error::from(ErrorKind::Interrupted))
                } else {
                    Err(e)
                }
            }
        }
    }

    /// Reads; a UDP "connection refused" (PX4 not listening yet) reads as no data.
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Link::Tcp(s) => s.read(buf),
            Link::Udp(s) => match s.recv(buf) {
                // An ICMP error from an earlier send: not data, read again.
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                    Err(std::io::Error::from(ErrorKind::Interrupted))
                }
                // A zero-length datagram is not an end of stream.
                Ok(0) => Err(std::io::Error::from(ErrorKind::WouldBlock)),
                r => r,
            },
        }
    }
}

/// The listening socket and a connection waiting to be taken, shared by the
/// bridges of successive runs (a restarted PX4 connects to the same port and
/// the harness starts a fresh simulation for it).
#[derive(Debug)]
pub struct Px4Socket {
    listener: Option<TcpListener>,
    pending: Option<Link>,
    udp_local: Option<SocketAddr>,
    stats: Px4Stats,
}

/// Shared handle on the socket (single-threaded loop).
pub type Px4Port = Rc<RefCell<Px4Socket>>;

impl Px4Socket {
    /// Listens on `addr`.
    ///
    /// # Errors
    /// When the port cannot be bound.
    pub fn listen(addr: SocketAddr) -> std::io::Result<Px4Port> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        Ok(Rc::new(RefCell::new(Px4Socket {
            listener: Some(listener),
            pending: None,
            udp_local: None,
            stats: Px4Stats::default(),
        })))
    }

    /// The UDP variant: a socket bound at `local`, sending to PX4's
    /// `simulator_mavlink -u` port at `px4`.
    ///
    /// # Errors
    /// When the socket cannot be bound.
    pub fn udp(local: SocketAddr, px4: SocketAddr) -> std::io::Result<Px4Port> {
        let s = UdpSocket::bind(local)?;
        s.connect(px4)?;
        let udp_local = s.local_addr().ok();
        Ok(Rc::new(RefCell::new(Px4Socket {
            listener: None,
            pending: Some(Link::Udp(s)),
            udp_local,
            stats: Px4Stats {
                connections: 1,
                ..Px4Stats::default()
            },
        })))
    }

    /// The listening address (TCP) or the local UDP address.
    ///
    /// # Errors
    /// From the socket.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        match (&self.listener, self.udp_local) {
            (Some(l), _) => l.local_addr(),
            (None, Some(a)) => Ok(a),
            (None, None) => Err(std::io::Error::from(ErrorKind::NotConnected)),
        }
    }

    /// Waits up to `timeout` (None: forever) for PX4 to connect again; the
    /// connection goes to the next bridge. Returns whether one came.
    pub fn wait_for_connection(&mut self, timeout: Option<Duration>) -> bool {
        let start = Instant::now();
        let Some(listener) = self.listener.as_ref() else {
            // UDP: PX4 is back when a datagram arrives.
            let Some(Link::Udp(s)) = self.pending.as_ref() else {
                return false;
            };
            let mut probe = [0u8; 1];
            loop {
                let left = timeout.map(|t| t.saturating_sub(start.elapsed()));
                if left.is_some_and(|l| l.is_zero()) {
                    return false;
                }
                let _ = s.set_nonblocking(false);
                let _ = s.set_read_timeout(Some(left.unwrap_or(Duration::from_secs(1))));
                match s.peek(&mut probe) {
                    Ok(_) => return true,
                    Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                        std::thread::sleep(Duration::from_millis(5))
                    }
                    Err(_) => {}
                }
            }
        };
        loop {
            match listener.accept() {
                Ok((s, from)) => {
                    bound_send_buffer(&s);
                    let ok = s.set_nodelay(true).is_ok() && s.set_nonblocking(false).is_ok();
                    if ok {
                        tracing::info!(%from, "PX4 connected again");
                        self.pending = Some(Link::Tcp(s));
                        self.stats.connections += 1;
                        return true;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) => tracing::debug!(%e, "accept failed"),
            }
            if timeout.is_some_and(|t| start.elapsed() >= t) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Counters of the latest bridge (kept across restarts).
    pub fn stats(&self) -> Px4Stats {
        self.stats
    }
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

/// The TCP send buffer asked for, bytes: lockstep keeps one step (a few
/// hundred bytes) in flight, so 64 KiB (some 250 steps) is ample, and a PX4
/// that stops reading is noticed in seconds rather than after the kernel's
/// autotuned megabytes.
const SEND_BUFFER_BYTES: libc::c_int = 64 * 1024;
/// How long a read polls before it blocks (see [`Px4Bridge::read`]).
const SPIN_WAIT: Duration = Duration::from_micros(200);
/// Steps between looks for a newer connection (a restarted PX4): the look is
/// a system call, and a restart is rare (the old connection's end is seen at
/// once anyway).
const ACCEPT_EVERY_STEPS: u64 = 64;

fn bound_send_buffer(s: &std::net::TcpStream) {
    use std::os::fd::AsRawFd;
    let size = SEND_BUFFER_BYTES;
    // SAFETY: setsockopt on a socket this stream owns, with a c_int value of
    // the size given.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            std::ptr::addr_of!(size).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r != 0 {
        tracing::debug!("SO_SNDBUF not set: {}", std::io::Error::last_os_error());
    }
}

fn cm_i16(v: f64) -> i16 {
    (v * 100.0).round().clamp(i16::MIN as f64, i16::MAX as f64) as i16
}

/// HIL_STATE_QUATERNION's accelerations: the kinematic acceleration
/// `accel_ned_m_s2` in the body frame (FRD) of attitude `att_ned_frd`, mG, as
/// PX4's simulators send them (Gazebo's `RelativeLinearAccel`, SIH).
fn hil_state_accel_mg(
    att_ned_frd: &nalgebra::UnitQuaternion<f64>,
    accel_ned_m_s2: &nalgebra::Vector3<f64>,
) -> [i16; 3] {
    let a = att_ned_frd.inverse() * accel_ned_m_s2;
    a.map(|v| {
        (v / mavsitl_core::atmosphere::G0_M_S2 * 1000.0)
            .round()
            .clamp(i16::MIN as f64, i16::MAX as f64) as i16
    })
    .into()
}

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
                bound_send_buffer(&s);
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

    /// One lockstep step's messages: GPS, ground truth and RC when due, and
    /// HIL_SENSOR last (it releases PX4's step).
    fn sensors(&mut self, f: &SensorFrame) {
        self.send_gps(f);
        self.send_ground_truth(f);
        self.send_rc(f);
        self.send_hil_sensor(f);
        self.stats.steps += 1;
        self.last_sensor = Some(f.time);
    }

    /// HIL_GPS for the reports delivered in this step (the model applied the
    /// latency); time-stamped in UTC at their measurement.
    fn send_gps(&mut self, f: &SensorFrame) {
        for g in f.gps.iter() {
            let w = GpsScaled::of(g);
            self.send(MavMessage::HIL_GPS(HIL_GPS_DATA {
                time_usec: self.opts.utc_epoch_us + g.measured.as_micros(),
                lat: w.lat,
                lon: w.lon,
                alt: w.alt_mm,
                eph: w.eph_cm,
                epv: w.epv_cm,
                vel: w.vel_cm_s,
                vn: cm_i16(g.vel_ned_m_s.x),
                ve: cm_i16(g.vel_ned_m_s.y),
                vd: cm_i16(g.vel_ned_m_s.z),
                cog: w.cog_cdeg,
                fix_type: w.fix_type,
                satellites_visible: g.satellites,
                id: 0,
                yaw: 0,
            }));
            self.stats.gps_sent += 1;
        }
    }

    /// HIL_STATE_QUATERNION at the interval PX4 asked for (one message at
    /// most per step, keeping the average rate).
    fn send_ground_truth(&mut self, f: &SensorFrame) {
        let t = f.time.as_micros();
        if let (Some(iv), Some(gt)) = (self.state_interval_us, f.ground_truth) {
            if f.time >= self.next_state {
                // Keep the asked average rate (one message at most per step).
                let iv = iv.max(1);
                let due = self.next_state.as_micros();
                let base = if due.saturating_add(iv) < t { t } else { due };
                self.next_state = SimTime::from_micros(base.saturating_add(iv));
                let q = gt.att_ned_frd;
                let p = self.frame.to_geodetic(&gt.pos_ned_m);
                let [xacc, yacc, zacc] = hil_state_accel_mg(&q, &gt.accel_ned_m_s2);
                self.send(MavMessage::HIL_STATE_QUATERNION(
                    HIL_STATE_QUATERNION_DATA {
                        time_usec: t,
                        attitude_quaternion: [q.w as f32, q.i as f32, q.j as f32, q.k as f32],
                        rollspeed: gt.rate_frd_rad_s.x as f32,
                        pitchspeed: gt.rate_frd_rad_s.y as f32,
                        yawspeed: gt.rate_frd_rad_s.z as f32,
                        lat: deg_e7(p.lat_rad),
                        lon: deg_e7(p.lon_rad),
                        alt: (p.alt_m * 1000.0).round() as i32,
                        vx: cm_i16(gt.vel_ned_m_s.x),
                        vy: cm_i16(gt.vel_ned_m_s.y),
                        vz: cm_i16(gt.vel_ned_m_s.z),
                        ind_airspeed: 0,
                        true_airspeed: 0,
                        xacc,
                        yacc,
                        zacc,
                    },
                ));
            }
        }
    }

    /// RC_CHANNELS, if the scenario scripts the sticks and RC is not lost.
    fn send_rc(&mut self, f: &SensorFrame) {
        let t = f.time.as_micros();
        if let Some(rc) = self.opts.rc.as_ref().filter(|_| !f.links.rc_lost) {
            if self.stats.steps.is_multiple_of(rc.every_steps.max(1)) {
                if let Some(ch) = rc.at(f.time) {
                    let v = |i: usize| ch.get(i).copied().unwrap_or(u16::MAX);
                    let msg = MavMessage::RC_CHANNELS(RC_CHANNELS_DATA {
                        time_boot_ms: (t / 1000) as u32,
                        chan1_raw: v(0),
                        chan2_raw: v(1),
                        chan3_raw: v(2),
                        chan4_raw: v(3),
                        chan5_raw: v(4),
                        chan6_raw: v(5),
                        chan7_raw: v(6),
                        chan8_raw: v(7),
                        chan9_raw: v(8),
                        chan10_raw: v(9),
                        chan11_raw: v(10),
                        chan12_raw: v(11),
                        chan13_raw: v(12),
                        chan14_raw: v(13),
                        chan15_raw: v(14),
                        chan16_raw: v(15),
                        chan17_raw: v(16),
                        chan18_raw: v(17),
                        chancount: ch.len() as u8,
                        rssi: 255,
                    });
                    self.send(msg);
                }
            }
        }
    }

    /// HIL_SENSOR id 0 with the step's newest IMU, magnetometer and
    /// barometer samples, flagged as updated.
    fn send_hil_sensor(&mut self, f: &SensorFrame) {
        let t = f.time.as_micros();
        use HilSensorUpdatedFlags as F;
        let mut flags = F::empty();
        let mut m = HIL_SENSOR_DATA {
            time_usec: t,
            ..HIL_SENSOR_DATA::DEFAULT
        };
        m.fields_updated = F::empty();
        if let Some(s) = f.imu.iter().last() {
            m.xacc = s.accel_m_s2.x as f32;
            m.yacc = s.accel_m_s2.y as f32;
            m.zacc = s.accel_m_s2.z as f32;
            m.xgyro = s.gyro_rad_s.x as f32;
            m.ygyro = s.gyro_rad_s.y as f32;
            m.zgyro = s.gyro_rad_s.z as f32;
            flags |= F::HIL_SENSOR_UPDATED_XACC
                | F::HIL_SENSOR_UPDATED_YACC
                | F::HIL_SENSOR_UPDATED_ZACC
                | F::HIL_SENSOR_UPDATED_XGYRO
                | F::HIL_SENSOR_UPDATED_YGYRO
                | F::HIL_SENSOR_UPDATED_ZGYRO;
        }
        if let Some(s) = f.mag.iter().last() {
            m.xmag = s.field_gauss.x as f32;
            m.ymag = s.field_gauss.y as f32;
            m.zmag = s.field_gauss.z as f32;
            flags |= F::HIL_SENSOR_UPDATED_XMAG
                | F::HIL_SENSOR_UPDATED_YMAG
                | F::HIL_SENSOR_UPDATED_ZMAG;
        }
        if let Some(s) = f.baro.iter().last() {
            m.abs_pressure = (s.pressure_pa / 100.0) as f32;
            m.pressure_alt = s.pressure_altitude_m as f32;
            m.temperature = s.temperature_degc as f32;
            flags |= F::HIL_SENSOR_UPDATED_ABS_PRESSURE
                | F::HIL_SENSOR_UPDATED_PRESSURE_ALT
                | F::HIL_SENSOR_UPDATED_TEMPERATURE;
        }
        m.fields_updated = flags;
        m.id = 0;
        self.send(MavMessage::HIL_SENSOR(m));
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

#[cfg(test)]
mod tests {
    use nalgebra::{UnitQuaternion, Vector3};

    #[test]
    fn ground_truth_accelerations_are_in_the_body_frame() {
        // Facing east, accelerating north at 1 g: the body's left, −y.
        let east = UnitQuaternion::from_euler_angles(0.0, 0.0, std::f64::consts::FRAC_PI_2);
        let north = Vector3::new(mavsitl_core::atmosphere::G0_M_S2, 0.0, 0.0);
        assert_eq!(super::hil_state_accel_mg(&east, &north), [0, -1000, 0]);
    }
}
