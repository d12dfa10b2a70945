//! ArduPilot SITL in the loop over its external-physics JSON backend
//! (`--model JSON:127.0.0.1`, ArduPilot's libraries/SITL/SIM_JSON.cpp).
//!
//! - **Transport and lockstep.** mavsitl binds UDP 9002 (+ 10 per instance)
//!   and replies to the sender. Each servo packet (magic 18458 with 16 PWM
//!   channels, 29569 with 32) drives one physics frame of 1/frame_rate s and
//!   gets exactly one JSON reply carrying the new state, so ArduPilot's clock
//!   (driven by the reply's `timestamp`) is the simulation's. A repeated
//!   frame_count (ArduPilot re-sends after 1 s without a reply) is answered
//!   again without stepping; a smaller one means ArduPilot restarted; a gap is
//!   counted. Packets of the wrong size or magic are counted and skipped.
//! - **Reply.** Compact JSON, keys in the order ArduPilot's substring parser
//!   needs (`velocity` before anything else starting with it): `timestamp` (s),
//!   `imu.gyro` and `imu.accel_body` (body FRD, specific force) from the noisy
//!   IMU model (the newest sample, held between samples), `position` and
//!   `velocity` (NED, m, m/s, relative to home), `quaternion` (scalar first,
//!   body → NED), `rng_1` from the rangefinder if fitted, `airspeed` (through
//!   the air), `windvane` (apparent wind from the bow, rad, and its speed) and
//!   `battery` from the battery model. ArduPilot runs its own GPS, baro and
//!   magnetometer models from this state.
//! - **Rate.** The frame rate is fixed (`ArduPilotOptions::frame_rate_hz`);
//!   ArduPilot's rate field starts at 1200 and drifts 1 Hz a frame towards its
//!   SIM_RATE_HZ, so it is only read after 50 frames and a lasting difference
//!   is a warning, not an error (ArduPilot's clock follows the timestamps).
//! - **Actuators.** PWM µs → normalised commands by a channel map: a quad in
//!   ArduPilot's X motor order (motors 1–4 on SERVO1–4: front-right,
//!   rear-left, front-left, rear-right — the same rotors as PX4's order) to
//!   0..1; a boat's SERVOn to its actuator channel n − 1, −1..1 about
//!   1500 µs, so ArduPilot's own mixer drives the hull: skid steering
//!   (ThrottleLeft/ThrottleRight on the twin thrusters' channels) or
//!   steering and throttle (a rudder boat).

use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mavsitl_core::controller::{
    Actuators, ControllerError, FlightController, SensorFrame, MAX_ACTUATORS,
};
use mavsitl_core::samples::Range;
use mavsitl_core::time::SimTime;

/// Magic of the 16-channel servo packet.
pub const MAGIC_16: u16 = 18458;
/// Magic of the 32-channel servo packet.
pub const MAGIC_32: u16 = 29569;

/// How PWM channels become actuator commands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ChannelMap {
    /// Multirotor: actuator i = (PWM\[servo\[i\]\] − 1000) / 1000, 0..1. The array
    /// holds the 0-based servo channel of each of our motors (PX4 order).
    Multirotor {
        /// Servo channel per motor.
        servo: [usize; 8],
        /// Motors.
        count: usize,
    },
    /// Boat: actuator i = (PWM\[i\] − 1500) / 500, −1..1, for every channel:
    /// ArduPilot's SERVOn drives the airframe's channel n − 1 (`left_channel`
    /// 0 is SERVO1). ArduPilot mixes: SERVOn_FUNCTION 73/74 (ThrottleLeft,
    /// ThrottleRight) on a twin-thruster hull's channels make it a skid-steering
    /// vehicle that pivots, as a real twin-thruster boat on ArduPilot is set up;
    /// 26/70 (GroundSteering, Throttle) on a rudder boat's.
    Boat,
}

impl ChannelMap {
    /// ArduPilot's quad X: motor 1 front-right, 2 rear-left, 3 front-left,
    /// 4 rear-right on SERVO1–4, which is PX4's order: identity.
    pub fn quad_x() -> Self {
        ChannelMap::Multirotor {
            servo: [0, 1, 2, 3, 4, 5, 6, 7],
            count: 4,
        }
    }

    /// A boat: every servo channel to the actuator channel of the same index.
    pub fn boat() -> Self {
        ChannelMap::Boat
    }

    /// The actuator commands for `pwm`.
    pub fn apply(&self, pwm: &[u16]) -> Actuators {
        let mut a = Actuators::default();
        let get = |i: usize| pwm.get(i).copied().unwrap_or(0) as f64;
        match *self {
            ChannelMap::Multirotor { servo, count } => {
                for (i, ch) in servo.iter().take(count.min(MAX_ACTUATORS)).enumerate() {
                    let p = get(*ch);
                    a.controls[i] = if p < 900.0 {
                        0.0
                    } else {
                        ((p - 1000.0) / 1000.0).clamp(0.0, 1.0)
                    };
                }
            }
            ChannelMap::Boat => {
                for (i, c) in a.controls.iter_mut().enumerate() {
                    let p = get(i);
                    *c = if p < 900.0 {
                        0.0
                    } else {
                        ((p - 1500.0) / 500.0).clamp(-1.0, 1.0)
                    };
                }
            }
        }
        a
    }
}

/// A decoded servo packet.
#[derive(Debug, Clone, PartialEq)]
pub struct ServoPacket {
    /// Physics rate, Hz.
    pub frame_rate: u16,
    /// Frame counter.
    pub frame_count: u32,
    /// PWM, µs.
    pub pwm: Vec<u16>,
}

/// Decodes a servo packet; None for a wrong size or magic.
pub fn parse_servo(b: &[u8]) -> Option<ServoPacket> {
    let u16_at = |i: usize| Some(u16::from_le_bytes([*b.get(i)?, *b.get(i + 1)?]));
    let magic = u16_at(0)?;
    let n = match (magic, b.len()) {
        (MAGIC_16, 40) => 16,
        (MAGIC_32, 72) => 32,
        _ => return None,
    };
    let frame_rate = u16_at(2)?;
    let frame_count = u32::from_le_bytes([*b.get(4)?, *b.get(5)?, *b.get(6)?, *b.get(7)?]);
    let pwm = (0..n)
        .map(|i| u16_at(8 + 2 * i))
        .collect::<Option<Vec<_>>>()?;
    Some(ServoPacket {
        frame_rate,
        frame_count,
        pwm,
    })
}

/// Appends `x` with `decimals` digits after the point, as `format!("{x:.N}")`
/// writes it (ties may round the other way in the last digit), without the
/// general float formatter: the reply is 20 numbers a frame, and this is the
/// difference between 2.6 µs and 0.3 µs. Values too large for the integer
/// path, and non-finite ones, fall back to the formatter.
pub fn push_fixed(out: &mut String, x: f64, decimals: u32) {
    use std::fmt::Write as _;
    let decimals = decimals.min(9);
    let scale = 10u64.pow(decimals);
    let scaled = (x * scale as f64).round();
    if !scaled.is_finite() || scaled.abs() >= 9.0e15 {
        let _ = write!(out, "{x:.prec$}", prec = decimals as usize);
        return;
    }
    let n = scaled.abs() as u64;
    if scaled < 0.0 && n != 0 {
        out.push('-');
    }
    push_u64(out, n / scale);
    if decimals > 0 {
        out.push('.');
        let frac = n % scale;
        let mut digit = scale / 10;
        while digit > 0 {
            out.push(char::from(b'0' + ((frac / digit) % 10) as u8));
            digit /= 10;
        }
    }
}

fn push_u64(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[i..] {
        out.push(char::from(d));
    }
}

fn push_vec<const N: usize>(out: &mut String, v: [f64; N], decimals: u32) {
    out.push('[');
    for (i, x) in v.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_fixed(out, x, decimals);
    }
    out.push(']');
}

/// A distance ArduPilot reads as out of range high (beyond any RNGFND_MAX).
pub const RANGE_TOO_FAR_M: f64 = 9999.0;

/// The `rng_N` value for a reading: ArduPilot's SITL rangefinder takes the
/// distance and judges it against RNGFND_MIN/MAX itself, so too close is 0 and
/// too far is [`RANGE_TOO_FAR_M`].
fn range_m(range: Range) -> f64 {
    match range {
        Range::Distance(d) => d.max(0.0),
        Range::TooClose => 0.0,
        Range::TooFar => RANGE_TOO_FAR_M,
    }
}

/// The apparent wind a wind vane reads, as ArduPilot's SITL wind vane takes
/// it: the direction it blows from relative to the bow (rad, −π..π, positive to
/// starboard) and its horizontal speed (m/s). `air_ned_m_s` is the vehicle's
/// velocity through the air (ground velocity minus wind), `yaw_rad` its heading.
pub fn apparent_wind(air_ned_m_s: &nalgebra::Vector3<f64>, yaw_rad: f64) -> (f64, f64) {
    let speed = air_ned_m_s.xy().norm();
    if speed == 0.0 {
        return (0.0, 0.0);
    }
    // Moving through the air at `air`, the wind comes from along `air`.
    let from = air_ned_m_s.y.atan2(air_ned_m_s.x) - yaw_rad;
    (from.sin().atan2(from.cos()), speed)
}

/// Bridge options.
#[derive(Debug, Clone)]
pub struct ArduPilotOptions {
    /// Address to bind (port 9002 + 10 × instance).
    pub bind: SocketAddr,
    /// Frame (physics step) rate ArduPilot runs, Hz (its SIM_RATE_HZ).
    pub frame_rate_hz: u32,
    /// PWM → actuator map.
    pub map: ChannelMap,
    /// ArduPilot silent this long (wall time) after its first packet: an error.
    pub give_up_after: Duration,
    /// Set (e.g. by Ctrl-C) to stop waiting.
    pub stop: Option<&'static AtomicBool>,
    /// mavsitl started ArduPilot itself: no "start it" advice while waiting.
    pub launched: bool,
}

/// What the bridge has seen.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ArduPilotStats {
    /// Frames stepped (one per new servo packet).
    pub frames: u64,
    /// Repeated frame counts answered again.
    pub repeats: u64,
    /// Frame counts skipped by ArduPilot.
    pub gaps: u64,
    /// Packets of the wrong size or magic.
    pub malformed: u64,
    /// Packets from another address while ArduPilot is talking: ignored,
    /// unanswered.
    pub foreign: u64,
    /// Wall time waiting for ArduPilot, µs.
    pub wait_us: u64,
}

/// How long a receive polls before it blocks.
const SPIN_WAIT: Duration = Duration::from_micros(SPIN_US);
const SPIN_US: u64 = 200;

/// Frames before ArduPilot's rate field is read: it starts at 1200 Hz and
/// moves 1 Hz a frame (plus one reply) before it says anything of SIM_RATE_HZ.
const RATE_SETTLE_FRAMES: u64 = 50;

/// The error text when ArduPilot restarted (its frame count went back).
pub const RESTARTED: &str = "ArduPilot restarted (frame count went back)";

/// The bridge.
pub struct ArduPilotBridge {
    opts: ArduPilotOptions,
    socket: UdpSocket,
    peer: Option<SocketAddr>,
    last_count: Option<u32>,
    reply: String,
    actuators: Actuators,
    started: Option<Instant>,
    last_heard: Instant,
    stats: ArduPilotStats,
    buf: [u8; 512],
    told_waiting: bool,
    told_rate: bool,
    rate_mismatch_frames: u64,
    range: Option<Range>,
    imu: Option<(nalgebra::Vector3<f64>, nalgebra::Vector3<f64>)>,
}

impl std::fmt::Debug for ArduPilotBridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArduPilotBridge")
            .field("bind", &self.opts.bind)
            .field("stats", &self.stats)
            .finish()
    }
}

impl ArduPilotBridge {
    /// Binds the socket.
    ///
    /// # Errors
    /// When the port cannot be bound.
    pub fn bind(opts: ArduPilotOptions) -> std::io::Result<Self> {
        let socket = UdpSocket::bind(opts.bind)?;
        socket.set_nonblocking(true)?;
        Ok(ArduPilotBridge {
            opts,
            socket,
            peer: None,
            last_count: None,
            reply: String::with_capacity(512),
            actuators: Actuators::default(),
            started: None,
            last_heard: Instant::now(),
            stats: ArduPilotStats::default(),
            buf: [0; 512],
            told_waiting: false,
            told_rate: false,
            rate_mismatch_frames: 0,
            range: None,
            imu: None,
        })
    }

    /// The bound address.
    ///
    /// # Errors
    /// From the socket.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    /// Counters.
    pub fn stats(&self) -> ArduPilotStats {
        self.stats
    }

    /// ArduPilot's packets carry its SIM_RATE_HZ only loosely: the first says
    /// 1200 (its built-in default), later ones the rate of the replies' own
    /// timestamps nudged by ±1 Hz towards SIM_RATE_HZ (SIM_JSON.cpp,
    /// `adjust_frame_time`). Its clock follows the replies' timestamps, so a
    /// different SIM_RATE_HZ still flies; it is reported once, with the fix.
    fn check_rate(&mut self, asked_hz: u16) {
        let ours = self.opts.frame_rate_hz;
        let asked = u32::from(asked_hz);
        if self.stats.frames < RATE_SETTLE_FRAMES || asked == ours {
            self.rate_mismatch_frames = 0;
            return;
        }
        self.rate_mismatch_frames += 1;
        if self.rate_mismatch_frames == RATE_SETTLE_FRAMES && !self.told_rate {
            self.told_rate = true;
            tracing::warn!(
                "ArduPilot's SIM_RATE_HZ is {} than mavsitl's {ours} Hz frames (it asks for {asked} Hz): \
                 set SIM_RATE_HZ {ours} in ArduPilot (firmware_configs/ardupilot/*.parm do) or start mavsitl with \
                 --frame-rate equal to SIM_RATE_HZ; ArduPilot's clock follows mavsitl's timestamps meanwhile",
                if asked > ours { "higher" } else { "lower" }
            );
        }
    }

    /// The next datagram: first polled without blocking for up to
    /// [`SPIN_WAIT`] (ArduPilot usually answers within tens of µs, and a
    /// sleeping thread's wake-up costs more than that), then a blocking read
    /// bounded so the stop flag and the silence timeout are checked.
    fn recv_packet(&mut self) -> std::io::Result<(usize, SocketAddr)> {
        if self.started.is_some() {
            let spin_until = Instant::now() + SPIN_WAIT;
            loop {
                match self.socket.recv_from(&mut self.buf) {
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        if Instant::now() >= spin_until {
                            break;
                        }
                        std::hint::spin_loop();
                    }
                    other => return other,
                }
            }
        }
        let timeout = if self.started.is_some() {
            Duration::from_millis(100)
        } else {
            Duration::from_secs(1)
        };
        self.socket.set_nonblocking(false)?;
        self.socket.set_read_timeout(Some(timeout))?;
        let got = self.socket.recv_from(&mut self.buf);
        self.socket.set_nonblocking(true)?;
        got
    }

    fn send_reply(&self) {
        if let Some(p) = self.peer {
            let _ = self.socket.send_to(self.reply.as_bytes(), p);
        }
    }
}

impl FlightController for ArduPilotBridge {
    fn name(&self) -> &str {
        "ardupilot"
    }

    fn rate_hz(&self) -> u32 {
        self.opts.frame_rate_hz
    }

    fn wants_ground_truth(&self) -> bool {
        true
    }

    /// Blocks for the next new servo packet.
    fn actuators(&mut self, _now: SimTime) -> Result<Actuators, ControllerError> {
        let t0 = Instant::now();
        loop {
            if self.opts.stop.is_some_and(|f| f.load(Ordering::Relaxed)) {
                return Err(ControllerError::Interrupted);
            }
            let (n, from) = match self.recv_packet() {
                Ok(x) => x,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    if self.started.is_none() {
                        if self.told_waiting {
                            continue;
                        }
                        self.told_waiting = true;
                        if self.opts.launched {
                            tracing::info!("waiting for the ArduPilot mavsitl started");
                            continue;
                        }
                        tracing::warn!(
                            "waiting for ArduPilot on UDP {}: start it, e.g. `ardurover -S --model JSON:127.0.0.1 --defaults …` (it waits for a MAVLink connection on TCP 5760 first)",
                            self.opts.bind
                        );
                    } else if self.last_heard.elapsed() >= self.opts.give_up_after {
                        return Err(ControllerError::Disconnected(format!(
                            "ArduPilot stopped sending servo packets ({:.0} s) after {} frames",
                            self.last_heard.elapsed().as_secs_f64(),
                            self.stats.frames
                        )));
                    }
                    continue;
                }
                // A signal (SIGTERM, SIGINT) interrupted the wait: the stop
                // flag, checked above, says whether to stop.
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => continue,
                Err(e) => return Err(e.into()),
            };
            let Some(pkt) = self.buf.get(..n).and_then(parse_servo) else {
                self.stats.malformed += 1;
                tracing::debug!(n, "malformed servo packet");
                continue;
            };
            // The session is ArduPilot's address until it falls silent: a
            // packet from anyone else neither steps nor restarts anything.
            if self.peer.is_some_and(|p| p != from)
                && self.last_heard.elapsed() < self.opts.give_up_after
            {
                self.stats.foreign += 1;
                tracing::debug!(%from, "servo packet from another address ignored");
                continue;
            }
            self.peer = Some(from);
            self.last_heard = Instant::now();
            self.check_rate(pkt.frame_rate);
            match self.last_count {
                Some(last) if pkt.frame_count == last => {
                    // ArduPilot re-sent: answer again, do not step.
                    self.stats.repeats += 1;
                    self.send_reply();
                    continue;
                }
                Some(last) if pkt.frame_count < last => {
                    self.last_count = None;
                    return Err(ControllerError::Restarted(RESTARTED.into()));
                }
                Some(last) if pkt.frame_count > last + 1 => {
                    self.stats.gaps += (pkt.frame_count - last - 1) as u64;
                }
                _ => {}
            }
            self.started.get_or_insert_with(Instant::now);
            self.last_count = Some(pkt.frame_count);
            self.actuators = self.opts.map.apply(&pkt.pwm);
            self.stats.frames += 1;
            self.stats.wait_us += t0.elapsed().as_micros() as u64;
            return Ok(self.actuators);
        }
    }

    /// Sends the state at the end of the frame.
    fn receive(&mut self, f: &SensorFrame) -> Result<(), ControllerError> {
        let Some(gt) = f.ground_truth else {
            return Ok(());
        };
        // The newest IMU sample (`mavsitl ardupilot` samples the IMU once a
        // frame); the last one is held if a frame had none, and a vehicle
        // without an IMU gets the true rates and specific force.
        if let Some(x) = f.imu.last() {
            self.imu = Some((x.gyro_rad_s, x.accel_m_s2));
        }
        let (gyro, accel) = self
            .imu
            .unwrap_or((gt.rate_frd_rad_s, gt.specific_force_frd_m_s2));
        let q = gt.att_ned_frd;
        let p = gt.pos_ned_m;
        let v = gt.vel_ned_m_s;
        let r = &mut self.reply;
        r.clear();
        r.push_str("\n{\"timestamp\":");
        push_fixed(r, f.time.as_secs_f64(), 6);
        r.push_str(",\"imu\":{\"gyro\":");
        push_vec(r, [gyro.x, gyro.y, gyro.z], 6);
        r.push_str(",\"accel_body\":");
        push_vec(r, [accel.x, accel.y, accel.z], 6);
        r.push_str("},\"position\":");
        push_vec(r, [p.x, p.y, p.z], 4);
        r.push_str(",\"quaternion\":");
        push_vec(r, [q.w, q.i, q.j, q.k], 7);
        r.push_str(",\"velocity\":");
        push_vec(r, [v.x, v.y, v.z], 4);
        // The air moves at the wind's velocity: the vehicle meets it at v − w.
        let air = v - gt.wind_ned_m_s;
        // The newest rangefinder reading, held between samples.
        if let Some(x) = f.range.last() {
            self.range = Some(x.range);
        }
        if let Some(range) = self.range {
            r.push_str(",\"rng_1\":");
            push_fixed(r, range_m(range), 3);
        }
        r.push_str(",\"airspeed\":");
        push_fixed(r, air.norm(), 3);
        let (direction, speed) = apparent_wind(&air, q.euler_angles().2);
        r.push_str(",\"windvane\":{\"direction\":");
        push_fixed(r, direction, 4);
        r.push_str(",\"speed\":");
        push_fixed(r, speed, 3);
        r.push('}');
        if let Some(b) = f.battery {
            r.push_str(",\"battery\":{\"voltage\":");
            push_fixed(r, b.voltage_v, 3);
            r.push_str(",\"current\":");
            push_fixed(r, b.current_a, 3);
            r.push('}');
        }
        self.reply.push_str("}\n");
        self.send_reply();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// The fast fixed-point writer agrees with Rust's formatter to the
        /// last digit, but for ties (which may round either way).
        #[test]
        fn push_fixed_matches_the_formatter(x in -1.0e9f64..1.0e9, decimals in 0u32..8) {
            let mut fast = String::new();
            super::push_fixed(&mut fast, x, decimals);
            let std = format!("{x:.prec$}", prec = decimals as usize);
            let (a, b): (f64, f64) = (fast.parse().unwrap_or(f64::NAN), std.parse().unwrap_or(f64::NAN));
            // One unit in the last digit, plus the parse's own rounding.
            let tol = 10f64.powi(-(decimals as i32)) + 4.0 * f64::EPSILON * x.abs();
            prop_assert!((a - b).abs() <= tol, "{fast} vs {std}");
            prop_assert_eq!(fast.len(), std.len(), "{} vs {}", fast, std);
        }
    }

    #[test]
    fn apparent_wind_is_relative_to_the_bow() {
        use nalgebra::Vector3;
        use std::f64::consts::FRAC_PI_2;
        let close = |(d, s): (f64, f64), (d0, s0): (f64, f64)| {
            assert!((d - d0).abs() < 1e-12 && (s - s0).abs() < 1e-12, "{d} {s}");
        };
        // Heading north at 2 m/s in calm air: 2 m/s from dead ahead.
        close(
            super::apparent_wind(&Vector3::new(2.0, 0.0, 0.0), 0.0),
            (0.0, 2.0),
        );
        // At rest, heading north, a 3 m/s wind blowing towards the east (from
        // the west): the air passes at −3 m/s east, so from the port beam.
        close(
            super::apparent_wind(&Vector3::new(0.0, -3.0, 0.0), 0.0),
            (-FRAC_PI_2, 3.0),
        );
        // The same wind, heading east: from astern.
        let (d, s) = super::apparent_wind(&Vector3::new(0.0, -3.0, 0.0), FRAC_PI_2);
        assert!((d.abs() - std::f64::consts::PI).abs() < 1e-12 && (s - 3.0).abs() < 1e-12);
        // Vertical motion alone is no wind on the vane.
        close(
            super::apparent_wind(&Vector3::new(0.0, 0.0, -5.0), 0.3),
            (0.0, 0.0),
        );
    }

    #[test]
    fn push_fixed_writes_signs_zeros_and_outliers() {
        let w = |x: f64, d: u32| {
            let mut s = String::new();
            super::push_fixed(&mut s, x, d);
            s
        };
        assert_eq!(w(-9.81, 6), "-9.810000");
        assert_eq!(w(0.0000004, 6), "0.000000");
        assert_eq!(w(-0.0000004, 6), "0.000000");
        assert_eq!(w(-0.0000006, 6), "-0.000001");
        assert_eq!(w(1.5e-7, 7), "0.0000002");
        assert_eq!(w(123.0, 0), "123");
        assert_eq!(w(0.02, 6), "0.020000");
        assert_eq!(w(f64::NAN, 3), "NaN");
        assert_eq!(w(1.0e20, 2), "100000000000000000000.00");
    }
    use super::*;

    #[test]
    fn servo_packets_decode_and_bad_ones_are_refused() {
        let mut b = vec![];
        b.extend_from_slice(&MAGIC_16.to_le_bytes());
        b.extend_from_slice(&400u16.to_le_bytes());
        b.extend_from_slice(&7u32.to_le_bytes());
        for i in 0..16u16 {
            b.extend_from_slice(&(1000 + i).to_le_bytes());
        }
        let p = parse_servo(&b).unwrap_or_else(|| panic!("valid packet refused"));
        assert_eq!((p.frame_rate, p.frame_count, p.pwm[15]), (400, 7, 1015));
        assert!(parse_servo(&b[..39]).is_none());
        let mut wrong = b.clone();
        wrong[0] = 0;
        assert!(parse_servo(&wrong).is_none());
        // 32 channels with the other magic.
        let mut c = vec![];
        c.extend_from_slice(&MAGIC_32.to_le_bytes());
        c.extend_from_slice(&50u16.to_le_bytes());
        c.extend_from_slice(&1u32.to_le_bytes());
        c.extend(std::iter::repeat_n(0u8, 64));
        assert_eq!(parse_servo(&c).map(|p| p.pwm.len()), Some(32));
    }

    #[test]
    fn channel_maps() {
        let mut pwm = [1000u16; 16];
        pwm[0] = 2000;
        pwm[2] = 1500;
        let a = ChannelMap::quad_x().apply(&pwm);
        assert_eq!(&a.controls[..4], &[1.0, 0.0, 0.5, 0.0]);
        // Boat: SERVOn to channel n − 1 about 1500 µs, both ways.
        let mut r = [1500u16; 16];
        r[0] = 2000; // ThrottleLeft full ahead
        r[1] = 1250; // ThrottleRight half astern
        r[2] = 1600;
        let b = ChannelMap::boat().apply(&r);
        assert_eq!(&b.controls[..4], &[1.0, -0.5, 0.2, 0.0]);
        assert_eq!(ChannelMap::boat().apply(&[800u16; 16]).controls[1], 0.0);
        // Below 900 µs (disarmed output): zero.
        assert_eq!(ChannelMap::quad_x().apply(&[0u16; 16]).controls[0], 0.0);
    }
}
