//! SimpleFlight's MAVLink link to ground stations under `serve` and `fly
//! --gcs`: the options, and the endpoints on their UDP sockets.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use mavlink::dialects::common::MavAutopilot;

use mavsitl::autopilot::gcs::{Endpoint, EndpointConfig, LinkConfig, UdpLink};
use mavsitl::autopilot::params::ParamStore;
use mavsitl::autopilot::{RequestQueue, StatusHandle};
use mavsitl::geo::LocalFrame;
use mavsitl::mission::Mission;
use mavsitl::scenario::Scenario;
use mavsitl::scenario::VehicleKind;
use mavsitl::setup::Flight;
use mavsitl::time::SimTime;
use mavsitl::tlog::TlogWriter;

use super::inputs::FlightInputs;
use super::CliError;
use mavsitl::pacing::{parse_speedup, Speedup};

/// The identity the vehicle claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AutopilotArg {
    /// MAV_AUTOPILOT_PX4: PX4 modes and actions in QGroundControl and MAVSDK.
    Px4,
    /// MAV_AUTOPILOT_GENERIC: honest identity; QGroundControl then offers the
    /// Plan view and telemetry but no guided actions.
    Generic,
}

/// Ground-station link options shared by `serve` and `fly --gcs`.
#[derive(Debug, Args, Clone)]
pub struct GcsArgs {
    /// Address (IP or IP:PORT) of the vehicle's UDP socket. The port defaults to
    /// 18570 + instance, PX4 SITL's GCS port; 0.0.0.0 exposes it to the network.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub gcs_bind: String,

    /// Where to send before any ground station is heard (repeatable). Default:
    /// 127.0.0.1:14550 (QGroundControl) and 127.0.0.1:14540 + instance (MAVSDK).
    #[arg(long = "gcs-out", value_name = "HOST:PORT")]
    pub gcs_out: Vec<SocketAddr>,

    /// Instance N: system id 1 + N, ports shifted by N as PX4 SITL's are.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub instance: u8,

    /// Speed-up over real time with a ground station attached (serve, fly --gcs;
    /// fly without --gcs always runs as fast as possible), or 'max'.
    #[arg(long, value_name = "X|max", value_parser = parse_speedup, default_value = "1")]
    pub speedup: Speedup,

    /// MAVLink 2 signing: a file holding the 32-byte secret key (raw 32 bytes,
    /// or 64 hex digits). Unsigned frames are then rejected.
    #[arg(long, value_name = "FILE")]
    pub signing_key: Option<PathBuf>,

    /// Identity claimed in the heartbeat.
    #[arg(long, value_enum, default_value_t = AutopilotArg::Px4)]
    pub autopilot: AutopilotArg,
}

/// Reads a signing key file.
fn read_key(path: &Path) -> Result<[u8; 32], CliError> {
    let bytes = std::fs::read(path).map_err(|e| {
        CliError::input(
            format!("{}: cannot read signing key: {e}", path.display()),
            "a file with 32 raw bytes or 64 hex digits",
        )
    })?;
    let mut key = [0u8; 32];
    if bytes.len() == 32 {
        key.copy_from_slice(&bytes);
        return Ok(key);
    }
    let text = String::from_utf8_lossy(&bytes);
    let hex = text.trim();
    let bad = || {
        CliError::input(
            format!(
                "{}: a signing key is 32 raw bytes or 64 hex digits",
                path.display()
            ),
            "e.g. `openssl rand -hex 32 > key.txt`",
        )
    };
    if hex.len() != 64 {
        return Err(bad());
    }
    for (i, k) in key.iter_mut().enumerate() {
        let pair = hex.get(2 * i..2 * i + 2).ok_or_else(bad)?;
        *k = u8::from_str_radix(pair, 16).map_err(|_| bad())?;
    }
    Ok(key)
}

/// Unix time of the scenario's date at 00:00 UTC, µs.
pub fn epoch_unix_us(scenario: &Scenario) -> u64 {
    scenario.date.unix_midnight_us()
}

/// The endpoint on its socket, and the clocks it runs on.
pub struct GcsSession {
    /// The protocol engine.
    pub endpoint: Endpoint,
    /// The socket.
    pub link: UdpLink,
    started: Instant,
    epoch_unix_us: u64,
    out: Vec<mavsitl::wire::Outgoing>,
    /// The link is cut (a `gcs_link_loss` fault): nothing in, nothing out.
    silent: bool,
}

/// What a session is built from.
struct SessionParts<'a> {
    pub status: StatusHandle,
    pub requests: RequestQueue,
    pub params: ParamStore,
    pub mission: Option<&'a Mission>,
    pub scenario: &'a Scenario,
    pub frame: LocalFrame,
    pub kind: VehicleKind,
    pub motors: usize,
    pub tlog: Option<PathBuf>,
}

impl GcsSession {
    /// A session for `flight` (built from `inputs`); with `record`, the link is
    /// also written to `record/telemetry.tlog`.
    pub fn for_flight(
        args: &GcsArgs,
        flight: &Flight,
        inputs: &FlightInputs,
        record: Option<&Path>,
    ) -> Result<Self, CliError> {
        Self::open(
            args,
            SessionParts {
                status: flight.status.clone(),
                requests: flight.requests.clone(),
                params: flight.params.clone(),
                mission: Some(&inputs.mission),
                scenario: &inputs.scenario,
                frame: *flight.lockstep.sim().world().frame(),
                kind: flight.kind,
                motors: flight.motors,
                tlog: record.map(|d| d.join("telemetry.tlog")),
            },
        )
    }

    /// A session for one SimpleFlight vehicle of a fleet, at instance
    /// `args.instance` (the caller shifts it per vehicle).
    pub fn for_pilot(
        args: &GcsArgs,
        pilot: &mavsitl::setup::Pilot,
        mission: Option<&Mission>,
        scenario: &Scenario,
        frame: LocalFrame,
        tlog: Option<PathBuf>,
    ) -> Result<Self, CliError> {
        Self::open(
            args,
            SessionParts {
                status: pilot.status.clone(),
                requests: pilot.requests.clone(),
                params: pilot.params.clone(),
                mission,
                scenario,
                frame,
                kind: pilot.kind,
                motors: pilot.motors,
                tlog,
            },
        )
    }

    /// Binds the socket and sets the endpoint up.
    fn open(args: &GcsArgs, parts: SessionParts) -> Result<Self, CliError> {
        let n = args.instance as u16;
        let bind: SocketAddr = match args.gcs_bind.parse::<SocketAddr>() {
            Ok(a) => a,
            Err(_) => {
                let ip: IpAddr = args.gcs_bind.parse().map_err(|_| {
                    CliError::input(
                        format!("--gcs-bind '{}' is not an IP or IP:PORT", args.gcs_bind),
                        "e.g. 127.0.0.1 or 0.0.0.0:18570",
                    )
                })?;
                SocketAddr::new(ip, 18570 + n)
            }
        };
        let targets = if args.gcs_out.is_empty() {
            let lo = IpAddr::V4(Ipv4Addr::LOCALHOST);
            vec![SocketAddr::new(lo, 14550), SocketAddr::new(lo, 14540 + n)]
        } else {
            args.gcs_out.clone()
        };
        let system_id = 1u8.saturating_add(args.instance);
        let signing_key = match &args.signing_key {
            Some(p) => Some(read_key(p)?),
            None => None,
        };
        let mut link = UdpLink::bind(&LinkConfig {
            bind,
            targets,
            system_id,
            component_id: 1,
            signing_key,
        })
        .map_err(|e| {
            CliError::input(
                format!("cannot bind the GCS socket {bind}: {e}"),
                "another mavsitl or PX4 SITL may hold it: use --instance N or --gcs-bind IP:PORT",
            )
        })?;
        if let Some(p) = &parts.tlog {
            let t = TlogWriter::create(p)
                .map_err(|e| CliError::input(format!("{}: cannot write: {e}", p.display()), ""))?;
            link.record_to(t);
        }
        let epoch = epoch_unix_us(parts.scenario);
        let mut params = parts.params;
        let _ = params.set(
            mavsitl::autopilot::params::name::MAV_SYS_ID,
            system_id as f64,
        );
        let mut cfg =
            EndpointConfig::px4_vehicle(system_id, parts.kind, parts.motors, parts.frame, epoch);
        if let AutopilotArg::Generic = args.autopilot {
            cfg.autopilot = MavAutopilot::MAV_AUTOPILOT_GENERIC;
        }
        let endpoint = Endpoint::new(cfg, parts.status, parts.requests, params, parts.mission);
        Ok(GcsSession {
            endpoint,
            link,
            started: Instant::now(),
            epoch_unix_us: epoch,
            out: Vec::with_capacity(256),
            silent: false,
        })
    }

    /// Reads what arrived, answers, and sends what is due at sim time `now`.
    pub fn service(&mut self, now: SimTime) {
        let link_now = self.started.elapsed();
        let unix = self.epoch_unix_us + now.as_micros();
        let (endpoint, out, silent) = (&mut self.endpoint, &mut self.out, self.silent);
        self.link.receive(link_now, unix, |from, msg| {
            if !silent {
                endpoint.handle(now, link_now, from, msg, out);
            }
        });
        self.endpoint.poll(now, link_now, &mut self.out);
        if !self.silent {
            self.link.send(&self.out, unix);
        }
        self.out.clear();
    }

    /// Sends `msgs` with the next service (e.g. ADSB_VEHICLE traffic).
    pub fn queue(&mut self, msgs: Vec<mavlink::dialects::common::MavMessage>) {
        self.out
            .extend(msgs.into_iter().map(mavsitl::wire::Outgoing::Msg));
    }

    /// Cuts or restores the link (a `gcs_link_loss` fault): while cut, what
    /// arrives is dropped and nothing is sent.
    pub fn set_silent(&mut self, silent: bool) {
        if silent != self.silent {
            tracing::info!(silent, "ground-station link");
        }
        self.silent = silent;
    }

    /// Waits up to `timeout` for traffic (returns at once when a datagram is
    /// ready).
    pub fn wait(&self, timeout: Duration) {
        self.link.wait_readable(timeout);
    }

    /// Flushes the tlog.
    pub fn finish(&mut self) {
        if let Some(t) = self.link.tlog_mut() {
            let _ = t.flush();
        }
    }
}

/// `fly --gcs`: the run loop serves the flight's link.
impl mavsitl::flight::VehicleLink for GcsSession {
    fn service(&mut self, now: SimTime) {
        GcsSession::service(self, now);
    }

    fn wait(&mut self, d: Duration) {
        GcsSession::wait(self, d);
    }

    fn set_silent(&mut self, silent: bool) {
        GcsSession::set_silent(self, silent);
    }
}
