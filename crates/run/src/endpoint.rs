//! SimpleFlight served to ground stations: its MAVLink endpoint on a UDP
//! socket (QGroundControl, MAVSDK, MAVProxy), as `serve` and `fly --gcs`
//! run it.

use std::path::PathBuf;
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
use crate::StartError;

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
