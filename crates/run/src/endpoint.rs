//! SimpleFlight served to ground stations: its MAVLink endpoint on a UDP
//! socket (QGroundControl, MAVSDK, MAVProxy), as `serve` and `fly --gcs`
//! run it.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mavlink::dialects::common::MavAutopilot;
use mavsitl_core::geo::LocalFrame;
use mavsitl_core::time::SimTime;
use mavsitl_core::vehicle::VehicleKind;
use mavsitl_mavlink::mission::Mission;
use mavsitl_mavlink::tlog::TlogWriter;
use mavsitl_mavlink::wire::Outgoing;
use mavsitl_sim::scenario::Scenario;
use mavsitl_simpleflight::gcs::{Endpoint, EndpointConfig, LinkConfig, UdpLink};
use mavsitl_simpleflight::params::{name, ParamStore};
use mavsitl_simpleflight::{RequestQueue, StatusHandle};

use crate::flight::VehicleLink;
use crate::setup::{Flight, Pilot};
use crate::StartError;
use mavsitl_core::failure::Failure;

/// SimpleFlight's MAVLink endpoint on its UDP socket, and the clocks it
/// runs on: sim time for the protocol, the scenario's date for the
/// link's time stamps, the wall clock for the link's own timeouts.
pub struct EndpointLink {
    /// The protocol engine.
    pub endpoint: Endpoint,
    /// The socket.
    pub link: UdpLink,
    started: Instant,
    epoch_unix_us: u64,
    out: Vec<Outgoing>,
    /// The link is cut (a `gcs_link_loss` fault): nothing in, nothing out.
    silent: bool,
}

/// What an endpoint serves: its vehicle's SimpleFlight and world.
pub struct EndpointParts<'a> {
    /// SimpleFlight's status.
    pub status: StatusHandle,
    /// Where ground-station requests go.
    pub requests: RequestQueue,
    /// The parameters in force.
    pub params: ParamStore,
    /// The mission already loaded, if any.
    pub mission: Option<&'a Mission>,
    /// The scenario (its date is the link's clock).
    pub scenario: &'a Scenario,
    /// The world's frame.
    pub frame: LocalFrame,
    /// The vehicle's class.
    pub kind: VehicleKind,
    /// Motors (multicopter) or 0.
    pub motors: usize,
    /// Write the link's traffic here (a tlog).
    pub tlog: Option<PathBuf>,
}

impl EndpointLink {
    /// Binds the socket as `cfg` says and sets the endpoint up for
    /// `parts`; `generic` claims MAV_AUTOPILOT_GENERIC instead of PX4.
    ///
    /// # Errors
    /// The socket cannot be bound; the tlog cannot be written.
    pub fn open(cfg: LinkConfig, generic: bool, parts: EndpointParts) -> Result<Self, StartError> {
        let (bind, system_id) = (cfg.bind, cfg.system_id);
        let mut link = UdpLink::bind(&cfg).map_err(|e| {
            StartError::new(
                format!("cannot bind the GCS socket {bind}: {e}"),
                "another mavsitl or PX4 SITL may hold it: use --instance N or --gcs-bind IP:PORT",
            )
        })?;
        if let Some(p) = &parts.tlog {
            let t = TlogWriter::create(p).map_err(|e| {
                StartError::new(
                    format!("{}: cannot write: {e}", p.display()),
                    "choose a writable --record directory",
                )
            })?;
            link.record_to(t);
        }
        let epoch = parts.scenario.date.unix_midnight_us();
        let mut params = parts.params;
        let _ = params.set(name::MAV_SYS_ID, system_id as f64);
        let mut cfg =
            EndpointConfig::px4_vehicle(system_id, parts.kind, parts.motors, parts.frame, epoch);
        if generic {
            cfg.autopilot = MavAutopilot::MAV_AUTOPILOT_GENERIC;
        }
        let endpoint = Endpoint::new(cfg, parts.status, parts.requests, params, parts.mission);
        Ok(EndpointLink {
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
        self.out.extend(msgs.into_iter().map(Outgoing::Msg));
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

/// The run loop serves the flight's link.
impl VehicleLink for EndpointLink {
    fn service(&mut self, now: SimTime) {
        EndpointLink::service(self, now);
    }

    fn wait(&mut self, d: Duration) {
        EndpointLink::wait(self, d);
    }

    fn set_silent(&mut self, silent: bool) {
        EndpointLink::set_silent(self, silent);
    }
}

/// Where and as whom a served vehicle's link opens: what `serve` and `fly
/// --gcs` take on their command lines.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkChoice {
    /// The vehicle's UDP socket: an IP, or IP:PORT (the port defaults to
    /// 18570 + instance, PX4 SITL's).
    pub bind: String,
    /// Where to send before a ground station is heard (none given:
    /// QGroundControl's 127.0.0.1:14550 and MAVSDK's 14540 + instance).
    pub targets: Vec<SocketAddr>,
    /// Instance N: system id 1 + N, ports shifted by N.
    pub instance: u8,
    /// A MAVLink 2 signing key file.
    pub signing_key: Option<PathBuf>,
    /// Claim MAV_AUTOPILOT_GENERIC instead of PX4.
    pub generic: bool,
}

impl LinkChoice {
    /// The `k`-th vehicle's: its instance, and an explicit bind port or
    /// the targets' ports shifted by `k`.
    pub fn for_vehicle(&self, k: u8) -> LinkChoice {
        let mut a = self.clone();
        a.instance = self.instance.saturating_add(k);
        if let Ok(mut b) = self.bind.parse::<SocketAddr>() {
            if b.port() != 0 {
                b.set_port(b.port().saturating_add(k as u16));
            }
            a.bind = b.to_string();
        }
        for o in &mut a.targets {
            o.set_port(o.port().saturating_add(k as u16));
        }
        a
    }

    /// The socket's configuration.
    ///
    /// # Errors
    /// A bind address that is not an IP or IP:PORT, or a signing key that
    /// cannot be read (exit 2).
    pub fn config(&self) -> Result<LinkConfig, Failure> {
        let n = self.instance as u16;
        let bind: SocketAddr = match self.bind.parse::<SocketAddr>() {
            Ok(a) => a,
            Err(_) => {
                let ip: IpAddr = self.bind.parse().map_err(|_| {
                    Failure::input(
                        format!("--gcs-bind '{}' is not an IP or IP:PORT", self.bind),
                        "e.g. 127.0.0.1 or 0.0.0.0:18570",
                    )
                })?;
                SocketAddr::new(ip, 18570 + n)
            }
        };
        let targets = if self.targets.is_empty() {
            let lo = IpAddr::V4(Ipv4Addr::LOCALHOST);
            vec![SocketAddr::new(lo, 14550), SocketAddr::new(lo, 14540 + n)]
        } else {
            self.targets.clone()
        };
        let signing_key = match &self.signing_key {
            Some(p) => Some(read_key(p)?),
            None => None,
        };
        Ok(LinkConfig {
            bind,
            targets,
            system_id: 1u8.saturating_add(self.instance),
            component_id: 1,
            signing_key,
        })
    }

    /// The endpoint of `parts` on this link.
    ///
    /// # Errors
    /// As [`LinkChoice::config`], or a socket that cannot be bound.
    pub fn open(&self, parts: EndpointParts) -> Result<EndpointLink, Failure> {
        Ok(EndpointLink::open(self.config()?, self.generic, parts)?)
    }
}

impl<'a> EndpointParts<'a> {
    /// The parts of SimpleFlight vehicle `pilot` of a world in `frame`.
    pub fn of_pilot(
        pilot: &Pilot,
        mission: Option<&'a Mission>,
        scenario: &'a Scenario,
        frame: LocalFrame,
        tlog: Option<PathBuf>,
    ) -> Self {
        EndpointParts {
            status: pilot.status.clone(),
            requests: pilot.requests.clone(),
            params: pilot.params.clone(),
            mission,
            scenario,
            frame,
            kind: pilot.kind,
            motors: pilot.motors,
            tlog,
        }
    }

    /// The parts of a one-vehicle `flight` of `mission` in `scenario`.
    pub fn of_flight(
        flight: &Flight,
        mission: Option<&'a Mission>,
        scenario: &'a Scenario,
        tlog: Option<PathBuf>,
    ) -> Self {
        EndpointParts {
            status: flight.status.clone(),
            requests: flight.requests.clone(),
            params: flight.params.clone(),
            mission,
            scenario,
            frame: *flight.lockstep.sim().world().frame(),
            kind: flight.kind,
            motors: flight.motors,
            tlog,
        }
    }
}

/// Reads a signing key file.
///
/// # Errors
/// A file that cannot be read or holds no key (exit 2).
pub fn read_key(path: &Path) -> Result<[u8; 32], Failure> {
    let bytes = std::fs::read(path).map_err(|e| {
        Failure::input(
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
        Failure::input(
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
