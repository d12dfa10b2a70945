//! What `px4` and `ardupilot` share for a flight in one command: the firmware
//! launched as a child process, mavsitl as its ground station flying a plan,
//! and the flight summary measured on ground truth as `fly` measures it.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use clap::Args;

use mavsitl::analysis::route::default_radius_m;
use mavsitl::analysis::Route;
use mavsitl::bridge::ground_station::link::{FirmwareAddr, GroundStationHandle, LinkOptions};
use mavsitl::bridge::ground_station::{Firmware as Dialect, GroundStationConfig, GsEvent, Phase};
use mavsitl::metrics::FlightMetrics;
use mavsitl::mission_protocol::StoredItem;
use mavsitl::scenario::VehicleKind;
use mavsitl::sim::Simulation;
use mavsitl::time::SimTime;

use super::inputs::FlightInputs;
use super::summary::FlightSummary;
use super::CliError;
use mavsitl::launch::{Firmware, LaunchSpec};

/// Options of a one-command firmware flight (`px4`, `ardupilot`).
#[derive(Debug, Args, Clone)]
pub struct FirmwareFlightArgs {
    /// Fly this plan (QGroundControl .plan or WPL): mavsitl is the firmware's
    /// ground station — it waits for the pre-arm checks, uploads, arms, starts
    /// the mission, follows it to the end and prints the flight summary.
    #[arg(long, value_name = "PLAN")]
    pub mission: Option<PathBuf>,

    /// The firmware must be ready to arm within this long (sim time, and as
    /// much wall time for a firmware that never starts), s.
    #[arg(long, value_name = "S", default_value_t = 120.0, value_parser = super::inputs::seconds_in(0.001, super::inputs::MAX_RUN_S))]
    pub ready_timeout: f64,

    /// Give the mission up after this much sim time, s.
    #[arg(long, value_name = "S", default_value_t = 1800.0, value_parser = super::inputs::seconds_in(0.001, super::inputs::MAX_RUN_S))]
    pub mission_timeout: f64,

    /// Relay the firmware's MAVLink to HOST:PORT and back (with --mission),
    /// e.g. 127.0.0.1:14550 for QGroundControl to watch the flight.
    #[arg(long, value_name = "HOST:PORT")]
    pub gcs_forward: Option<SocketAddr>,

    /// Keep the launched firmware's scratch working directory (its
    /// parameters, logs and mission store) instead of removing it.
    #[arg(long)]
    pub keep_workdir: bool,

    /// With --count: send each firmware the other vehicles as ADS-B traffic
    /// (ADSB_VEHICLE at 2 Hz over its ground-station link), for its own
    /// traffic avoidance.
    #[arg(long)]
    pub adsb: bool,

    /// Firmware parameters set at start-up, over the airframe's (a launched
    /// firmware): `NAME VALUE` or `NAME,VALUE` lines, or QGroundControl's
    /// .params. PX4 gets them as PX4_PARAM_<NAME> variables, ArduPilot as a
    /// defaults file after the stock ones and mavsitl's.
    #[arg(long, value_name = "FILE")]
    pub params: Option<PathBuf>,
}

impl FirmwareFlightArgs {
    /// The `--params` file's parameters (none without one); `launched`:
    /// whether mavsitl starts the firmware (`flag` names how to ask it to).
    pub fn firmware_params(
        &self,
        launched: bool,
        flag: &str,
    ) -> Result<Vec<(String, String)>, CliError> {
        let Some(path) = &self.params else {
            return Ok(Vec::new());
        };
        if !launched {
            return Err(CliError::input(
                "--params sets the parameters of a firmware mavsitl starts",
                format!("add {flag}, or set them in the firmware's console (param set NAME VALUE)"),
            ));
        }
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| CliError::input(format!("{name}: cannot read: {e}"), ""))?;
        mavsitl::bridge::param_file::parse(&text, &name)
            .map_err(|e| CliError::input(e, "NAME VALUE lines, one parameter each"))
    }
}

/// The firmware's MAVLink port for a ground station, instance `n`.
pub(super) fn gcs_addr(dialect: Dialect, instance: u8) -> FirmwareAddr {
    match dialect {
        // PX4's onboard (MAVSDK) link listens on 14580 + N and answers to
        // whoever talks to it; its default partner, 14540 + N, stays free
        // for the user's own MAVSDK program (and from N = 10 on PX4 points
        // every instance at 14549).
        Dialect::Px4 => {
            FirmwareAddr::UdpTo(SocketAddr::from(([127, 0, 0, 1], 14580 + instance as u16)))
        }
        // ArduPilot's SERIAL0 listens on TCP 5760 + 10 N.
        Dialect::ArduCopter | Dialect::ArduRover => FirmwareAddr::Tcp(SocketAddr::from((
            [127, 0, 0, 1],
            5760 + 10 * instance as u16,
        ))),
    }
}

/// The summary's heading: "mavsitl px4 <plan> (quad, seed 0)".
pub(super) fn flight_title(command: &str, inputs: &FlightInputs, kind: VehicleKind) -> String {
    format!(
        "mavsitl {command} {} ({}, seed {})",
        inputs.mission_name,
        super::inputs::vehicle_word(kind),
        inputs.scenario.seed
    )
}

/// What a tick's result means for the run.
pub(super) enum Judged {
    /// Go on.
    Go,
    /// The run is over, with this outcome.
    End(Result<(), String>),
    /// The bridge lost a firmware started by hand: the caller may wait for
    /// it to come back.
    Lost {
        /// The bridge's message.
        why: String,
        /// The firmware restarted (it is already back).
        restarted: bool,
    },
}

/// One flight of a firmware: the child process, the ground station, the
/// metrics, the record of events.
pub(super) struct FirmwareFlight {
    name: &'static str,
    dialect: Dialect,
    firmware: Option<Firmware>,
    gs: Option<GroundStationHandle>,
    clock: Arc<AtomicU64>,
    metrics: FlightMetrics,
    events: Vec<(SimTime, GsEvent)>,
    armed: bool,
    /// The last mission item the firmware reported reached, not yet handed on.
    reached: Option<u32>,
    /// Fault events already turned into firmware parameters.
    faults_seen: usize,
    on_mission: bool,
    mission_end: SimTime,
    wall: Instant,
    /// When the flight's run ended (wall), if marked before [`Self::finish`].
    ended: Option<Instant>,
    /// The vehicle it flies (its index in the simulation).
    vehicle: usize,
}

impl FirmwareFlight {
    /// Starts the ground station (when flying a plan) and then the firmware
    /// (when launching it).
    pub fn start(
        dialect: Dialect,
        instance: u8,
        inputs: &FlightInputs,
        args: &FirmwareFlightArgs,
        launch: Option<LaunchSpec>,
        frame: &mavsitl::geo::LocalFrame,
    ) -> Result<Self, CliError> {
        Self::start_as(dialect, instance, inputs, args, launch, frame, true)
    }

    /// [`Self::start`] for one flight of several (`alone` false): its
    /// ground station's failure ends this flight only, not the run's
    /// lockstep waits.
    pub fn start_as(
        dialect: Dialect,
        instance: u8,
        inputs: &FlightInputs,
        args: &FirmwareFlightArgs,
        launch: Option<LaunchSpec>,
        frame: &mavsitl::geo::LocalFrame,
        alone: bool,
    ) -> Result<Self, CliError> {
        let clock = Arc::new(AtomicU64::new(0));
        let kind = inputs.kind(0);
        let gs = match &args.mission {
            None => None,
            Some(_) => {
                let h = &inputs.scenario.home;
                let cfg = GroundStationConfig {
                    firmware: dialect,
                    kind,
                    mission: dialect_items(dialect, &inputs.mission),
                    home: (
                        mavsitl::wire::deg_e7(h.lat_deg.to_radians()),
                        mavsitl::wire::deg_e7(h.lon_deg.to_radians()),
                        h.alt_m as f32,
                    ),
                    ready_timeout: SimTime::from_secs_f64(args.ready_timeout.max(0.0)),
                };
                let addr = gcs_addr(dialect, instance);
                let gs = GroundStationHandle::spawn(
                    cfg,
                    LinkOptions {
                        firmware: addr,
                        forward: args.gcs_forward,
                        sim_clock: clock.clone(),
                        stop_run: alone.then_some(&super::STOP_RUN),
                    },
                )
                .map_err(|e| {
                    CliError::input(
                        format!("cannot open the ground-station port {addr:?}: {e}"),
                        "another ground station, MAVSDK program or mavsitl holds it: close it or use --instance N",
                    )
                })?;
                Some(gs)
            }
        };
        let firmware = match launch {
            Some(spec) => Some(Firmware::spawn(spec, &super::STOP_RUN)?),
            None => None,
        };
        Ok(FirmwareFlight {
            name: dialect.name(),
            firmware,
            gs,
            clock,
            metrics: FlightMetrics::new(
                Route::new(
                    &inputs.mission,
                    frame,
                    default_radius_m(!kind.is_multirotor()),
                ),
                super::summary_rate(&inputs.scenario),
            ),
            events: Vec::new(),
            armed: false,
            reached: None,
            faults_seen: 0,
            dialect,
            on_mission: false,
            mission_end: SimTime::from_secs_f64(args.mission_timeout.max(0.0)),
            wall: Instant::now(),
            ended: None,
            vehicle: 0,
        })
    }

    /// The flight of vehicle `index` of a fleet, launched at `launch` (NED m,
    /// horizontal), flying `mission`: its metrics against its own legs.
    pub fn for_vehicle(
        mut self,
        index: usize,
        mission: &mavsitl::mission::Mission,
        frame: &mavsitl::geo::LocalFrame,
        launch: nalgebra::Vector2<f64>,
    ) -> Self {
        self.vehicle = index;
        let radius = self
            .metrics
            .route()
            .points
            .first()
            .map_or(0.0, |p| p.radius_m);
        self.metrics = self
            .metrics
            .with_route(Route::launched_at(mission, frame, radius, launch));
        self
    }

    /// Whether a plan is flown.
    pub fn flies_mission(&self) -> bool {
        self.gs.is_some()
    }

    /// When the launched firmware has exited on its own: why, with the last
    /// lines of its console.
    pub fn exited(&self) -> Option<String> {
        self.firmware.as_ref().and_then(Firmware::exited)
    }

    /// Sends the firmware `msgs` over its ground-station link (none without
    /// a plan flown).
    pub fn send(&self, msgs: Vec<mavlink::dialects::common::MavMessage>) {
        if let Some(gs) = &self.gs {
            gs.send(msgs);
        }
    }

    /// Marks the end of the run's wall time (a fleet's flights, finished one
    /// after another, all end when the loop does).
    pub fn mark_end(&mut self) {
        self.ended.get_or_insert_with(Instant::now);
    }

    /// Whether mavsitl started the firmware.
    pub fn launched(&self) -> bool {
        self.firmware.is_some()
    }

    /// After each tick: publishes sim time, samples the metrics, and says
    /// whether the run is over (Some: with its outcome).
    pub fn after_tick(&mut self, sim: &Simulation) -> Option<Result<(), String>> {
        let now = sim.time();
        self.clock.store(now.as_micros(), Ordering::Relaxed);
        if let Some(msg) = self.exited() {
            return Some(Err(msg));
        }
        let gs = self.gs.as_ref()?;
        gs.set_cut(
            sim.vehicles()
                .get(self.vehicle)
                .is_some_and(|v| v.faults().links.gcs_lost),
        );
        for e in sim
            .fault_events()
            .iter()
            .skip(self.faults_seen)
            .filter(|e| e.vehicle == self.vehicle)
        {
            let active = e.transition == mavsitl::faults::FaultTransition::Start;
            if let Some((name, value)) = self.dialect.sim_param_for(e.kind, active) {
                eprintln!(
                    "{}: {} {} -> {name} {value}",
                    self.name,
                    e.kind,
                    e.transition.name()
                );
                gs.set_firmware_param(name, value);
            }
        }
        self.faults_seen = sim.fault_events().len();
        for (t, e) in gs.take_events() {
            match &e {
                GsEvent::StatusText { severity, text } if (*severity as u8) <= 5 => {
                    eprintln!("{}: {text}", self.name);
                }
                GsEvent::ItemReached(i) => self.reached = Some(*i as u32),
                GsEvent::Armed => self.armed = true,
                GsEvent::Disarmed => self.armed = false,
                _ => {}
            }
            self.events.push((t, e));
        }
        let phase = gs.phase();
        self.on_mission = phase == Phase::Flying && self.armed;
        if let Some(v) = sim.vehicles().get(self.vehicle) {
            self.metrics
                .sample(sim.tick(), &v.ground_truth(), self.on_mission);
        }
        if let Some(c) = &self.metrics.crashed {
            return Some(Err(format!("crash: {c} at {now}")));
        }
        match phase {
            Phase::Finished => Some(Ok(())),
            Phase::Failed(why) => Some(Err(why)),
            _ if now >= self.mission_end => Some(Err(format!(
                "timeout: mission not completed after {:.0} s of sim time",
                self.mission_end.as_secs_f64()
            ))),
            _ => None,
        }
    }

    /// What the result of a tick means: the flight's end, a lost firmware
    /// (started by hand, no plan flown: the caller may wait for it), or on.
    /// Mission items the firmware reports reached are handed to the
    /// simulation (faults may start on them).
    pub fn judge(
        &mut self,
        step: Result<(), mavsitl::sim::SimError>,
        sim: &mut Simulation,
    ) -> Judged {
        match step {
            Ok(()) => {
                let end = self.after_tick(sim);
                if let Some(seq) = self.reached.take() {
                    sim.note_item_reached(self.vehicle, seq);
                }
                end.map_or(Judged::Go, Judged::End)
            }
            Err(_) if super::interrupted() => Judged::End(Err("interrupted".into())),
            // Nothing to wait for: the cause ends the run.
            Err(e) if self.launched() || self.flies_mission() => {
                Judged::End(Err(self.explain(e.to_string())))
            }
            Err(e) => Judged::Lost {
                restarted: e.is_restart(),
                why: e.to_string(),
            },
        }
    }

    /// Why a tick failed: the firmware's exit or the ground station's
    /// failure come first, as they are the cause of what the bridge saw.
    pub fn explain(&self, bridge_error: String) -> String {
        let exited = self
            .firmware
            .as_ref()
            .and_then(|f| f.exited_within(std::time::Duration::from_secs(1)));
        if let Some(msg) = exited {
            return msg;
        }
        if let Some(Phase::Failed(why)) = self.gs.as_ref().map(GroundStationHandle::phase) {
            return why;
        }
        bridge_error
    }

    /// Stops the firmware and the ground station, writes the record, prints
    /// the summary (when a plan was flown).
    pub fn finish(
        mut self,
        sim: &Simulation,
        outcome: &Result<(), String>,
        record: Option<&Path>,
        title: String,
    ) {
        if let Some(f) = self.firmware.as_mut() {
            f.stop();
        }
        if let Some(gs) = self.gs.as_mut() {
            self.events.extend(gs.take_events());
            gs.stop();
        }
        let wall_s = self
            .ended
            .unwrap_or_else(Instant::now)
            .duration_since(self.wall)
            .as_secs_f64();
        let Some(gs) = self.gs.as_ref() else {
            return;
        };
        if let Some(dir) = record {
            if let Err(e) = write_events(dir, &self.events) {
                eprintln!(
                    "warning: {}: cannot write the mission events: {e}",
                    dir.display()
                );
            }
        }
        FlightSummary {
            title,
            outcome,
            sim_s: sim.time().as_secs_f64(),
            wall_s,
            items: gs.progress(),
            metrics: &self.metrics,
        }
        .print();
        for (_, e) in &self.events {
            if let GsEvent::Uploaded { attempts, .. } = e {
                if *attempts > 1 {
                    println!(
                        "  mission upload      accepted at attempt {attempts} (the firmware answered MAV_MISSION_ERROR before)"
                    );
                }
            }
        }
    }
}

/// `mission_events.csv` (as `fly` writes it) and `statustext.csv`.
fn write_events(dir: &Path, events: &[(SimTime, GsEvent)]) -> std::io::Result<()> {
    let mut ev = std::io::BufWriter::new(std::fs::File::create(dir.join("mission_events.csv"))?);
    let mut st = std::io::BufWriter::new(std::fs::File::create(dir.join("statustext.csv"))?);
    writeln!(ev, "#timestamp [ns],event,item,detail")?;
    writeln!(st, "#timestamp [ns],severity,text")?;
    for (t, e) in events {
        if let GsEvent::StatusText { severity, text } = e {
            writeln!(
                st,
                "{},{severity:?},{}",
                t.as_nanos(),
                text.replace(',', ";")
            )?;
            continue;
        }
        writeln!(
            ev,
            "{},{},{},{}",
            t.as_nanos(),
            e.kind(),
            e.item().map_or(String::new(), |i| i.to_string()),
            e.detail().replace(',', ";")
        )?;
    }
    ev.flush()?;
    st.flush()
}

/// The plan's items for the ground station, with one note on stderr per
/// item whose `null` (NaN) parameters it will send as 0 (see
/// [`Dialect::mission_params`]), so nobody believes a `null` reached the
/// firmware.
fn dialect_items(dialect: Dialect, mission: &mavsitl::mission::Mission) -> Vec<StoredItem> {
    mission
        .items
        .iter()
        .enumerate()
        .map(|(i, it)| {
            let s = StoredItem::from_mission_item(it);
            let (_, changed) = dialect.mission_params(s.command, s.params);
            if !changed.is_empty() {
                let which: Vec<String> = changed.iter().map(|k| format!("param{}", k + 1)).collect();
                eprintln!(
                    "note: mission item {i} ({}): {} null (NaN) in the plan, sent to {} as 0 (it refuses NaN there)",
                    mavsitl::mission::command_name(s.command),
                    which.join(", "),
                    dialect.name()
                );
            }
            s
        })
        .collect()
}
