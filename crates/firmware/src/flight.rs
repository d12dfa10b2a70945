//! A firmware's flight in the loop: the firmware launched as a child
//! process (or started by hand), mavsitl as its ground station flying a
//! plan, and the flight judged on ground truth as SimpleFlight's is.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use mavlink::dialects::common::MavMessage;
use mavsitl_analysis::flight::FlightMetrics;
use mavsitl_analysis::route::default_radius_m;
use mavsitl_analysis::Route;
use mavsitl_bridges::ground_station::link::{FirmwareAddr, GroundStationHandle, LinkOptions};
use mavsitl_bridges::ground_station::{Firmware as Dialect, GroundStationConfig, GsEvent, Phase};
use mavsitl_core::faults::FaultTransition;
use mavsitl_core::geo::LocalFrame;
use mavsitl_core::time::{Rate, SimTime};
use mavsitl_core::vehicle::VehicleKind;
use mavsitl_mavlink::mission::{command_name, Mission};
use mavsitl_mavlink::mission_protocol::StoredItem;
use mavsitl_mavlink::wire::deg_e7;
use mavsitl_run::launch::{Firmware, LaunchSpec};
use mavsitl_run::setup::FlightInputs;
use mavsitl_run::summary::FlightSummary;
use mavsitl_run::StartError;
use mavsitl_sim::scenario::Home;
use mavsitl_sim::sim::{SimError, Simulation};

/// What a firmware's flight flies and how long it may take.
#[derive(Debug, Clone, Copy)]
pub struct FlightPlan<'a> {
    /// The plan: its route measures the flight; uploaded when `fly_plan`.
    pub mission: &'a Mission,
    /// Whether mavsitl flies the plan as the firmware's ground station
    /// (else the firmware is only simulated for).
    pub fly_plan: bool,
    /// The vehicle's class.
    pub kind: VehicleKind,
    /// The scenario's home (the firmware's home is set to it).
    pub home: &'a Home,
    /// The world's frame.
    pub frame: &'a LocalFrame,
    /// The rate the summary samples cross-track at (the recording's).
    pub summary_rate: Rate,
    /// The firmware must be ready to arm within this much sim time, s.
    pub ready_timeout_s: f64,
    /// The mission is given up after this much sim time, s.
    pub mission_timeout_s: f64,
    /// Relay the firmware's MAVLink to this address and back.
    pub gcs_forward: Option<SocketAddr>,
    /// Set to stop the run at once (the firmware exited, the ground
    /// station failed, the user interrupted); watched by the bridges.
    pub stop_run: &'static AtomicBool,
    /// Set by the user's interrupt.
    pub interrupted: &'static AtomicBool,
}

/// How a firmware's plan is flown: what `px4` and `ardupilot` take on
/// their command lines.
#[derive(Debug, Clone, Copy)]
pub struct PlanOptions {
    /// Whether mavsitl flies the plan as the firmware's ground station.
    pub fly_plan: bool,
    /// The firmware must be ready to arm within this much sim time, s.
    pub ready_timeout_s: f64,
    /// The mission is given up after this much sim time, s.
    pub mission_timeout_s: f64,
    /// Relay the firmware's MAVLink to this address and back.
    pub gcs_forward: Option<SocketAddr>,
    /// Set to stop the run at once; watched by the bridges.
    pub stop_run: &'static AtomicBool,
    /// Set by the user's interrupt.
    pub interrupted: &'static AtomicBool,
}

impl<'a> FlightPlan<'a> {
    /// The flight of `inputs`' plan by vehicle 0's class in `frame`, as
    /// `opts` ask, its summary sampled at the recording's rate.
    pub fn of(inputs: &'a FlightInputs, frame: &'a LocalFrame, opts: &PlanOptions) -> Self {
        FlightPlan {
            mission: &inputs.mission,
            fly_plan: opts.fly_plan,
            kind: inputs.kind(0),
            home: &inputs.scenario.home,
            frame,
            summary_rate: mavsitl_run::recording::summary_rate(&inputs.scenario),
            ready_timeout_s: opts.ready_timeout_s,
            mission_timeout_s: opts.mission_timeout_s,
            gcs_forward: opts.gcs_forward,
            stop_run: opts.stop_run,
            interrupted: opts.interrupted,
        }
    }
}

/// The firmware's MAVLink port for a ground station, instance `n`.
pub fn gcs_addr(dialect: Dialect, instance: u8) -> FirmwareAddr {
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

/// What a tick's result means for the run.
pub enum Judged {
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
pub struct FirmwareFlight {
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
    /// Set by the user's interrupt.
    interrupted: &'static AtomicBool,
}

impl FirmwareFlight {
    /// Starts the ground station (when flying a plan) and then the firmware
    /// (when launching it). `alone` (one flight in the run): its ground
    /// station's failure stops the run's lockstep waits at once.
    ///
    /// # Errors
    /// The ground station's port taken; the firmware that cannot start.
    pub fn start(
        dialect: Dialect,
        instance: u8,
        plan: &FlightPlan<'_>,
        launch: Option<LaunchSpec>,
        alone: bool,
    ) -> Result<Self, StartError> {
        let clock = Arc::new(AtomicU64::new(0));
        let gs = match plan.fly_plan {
            false => None,
            true => Some(ground_station(dialect, instance, plan, &clock, alone)?),
        };
        let firmware = match launch {
            Some(spec) => Some(Firmware::spawn(spec, plan.stop_run)?),
            None => None,
        };
        Ok(FirmwareFlight {
            name: dialect.name(),
            firmware,
            gs,
            clock,
            metrics: FlightMetrics::new(
                Route::new(plan.mission, plan.frame, default_radius_m(plan.kind)),
                plan.summary_rate,
            ),
            events: Vec::new(),
            armed: false,
            reached: None,
            faults_seen: 0,
            dialect,
            on_mission: false,
            mission_end: SimTime::from_secs_f64(plan.mission_timeout_s.max(0.0)),
            wall: Instant::now(),
            ended: None,
            vehicle: 0,
            interrupted: plan.interrupted,
        })
    }

    /// The flight of vehicle `index` of a fleet, launched at `launch` (NED m,
    /// horizontal), flying `mission`: its metrics against its own legs.
    pub fn for_vehicle(
        mut self,
        index: usize,
        mission: &Mission,
        frame: &LocalFrame,
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
    pub fn send(&self, msgs: Vec<MavMessage>) {
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
            let active = e.transition == FaultTransition::Start;
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
                .sample(sim.tick(), &v.body().state, self.on_mission);
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
    pub fn judge(&mut self, step: Result<(), SimError>, sim: &mut Simulation) -> Judged {
        match step {
            Ok(()) => {
                let end = self.after_tick(sim);
                if let Some(seq) = self.reached.take() {
                    sim.note_item_reached(self.vehicle, seq);
                }
                end.map_or(Judged::Go, Judged::End)
            }
            Err(_) if self.interrupted.load(Ordering::Relaxed) => {
                Judged::End(Err("interrupted".into()))
            }
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

    /// Stops the firmware and the ground station, writes the record into
    /// `record`; returns what the flight did, when a plan was flown.
    pub fn finish(mut self, sim: &Simulation, record: Option<&Path>) -> Option<FlightReport> {
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
        let gs = self.gs.as_ref()?;
        if let Some(dir) = record {
            if let Err(e) = write_events(dir, &self.events) {
                eprintln!(
                    "warning: {}: cannot write the mission events: {e}",
                    dir.display()
                );
            }
        }
        let upload_attempts = self
            .events
            .iter()
            .filter_map(|(_, e)| match e {
                GsEvent::Uploaded { attempts, .. } => Some(*attempts),
                _ => None,
            })
            .collect();
        Some(FlightReport {
            sim_s: sim.time().as_secs_f64(),
            wall_s,
            items: gs.progress(),
            metrics: self.metrics,
            upload_attempts,
        })
    }
}

/// What a firmware's flight of a plan did, for its summary.
#[derive(Debug)]
pub struct FlightReport {
    /// Sim time at the end, s.
    pub sim_s: f64,
    /// Wall time of the flight, s.
    pub wall_s: f64,
    /// Mission items reached, of the items flown.
    pub items: (usize, usize),
    /// The figures measured on ground truth.
    pub metrics: FlightMetrics,
    /// For each upload the firmware accepted, the attempt it accepted.
    pub upload_attempts: Vec<u32>,
}

impl FlightReport {
    /// The summary of this flight under `title`, ended with `outcome`: the
    /// rows every mission flight prints, then the uploads the firmware
    /// refused before accepting one.
    pub fn summary<'a>(
        &'a self,
        title: String,
        outcome: &'a Result<(), String>,
    ) -> ReportSummary<'a> {
        ReportSummary {
            common: FlightSummary {
                title,
                outcome,
                sim_s: self.sim_s,
                wall_s: self.wall_s,
                items: self.items,
                metrics: &self.metrics,
            },
            upload_attempts: &self.upload_attempts,
        }
    }
}

/// A firmware flight's summary ([`FlightReport::summary`]).
pub struct ReportSummary<'a> {
    common: FlightSummary<'a>,
    upload_attempts: &'a [u32],
}

impl std::fmt::Display for ReportSummary<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.common)?;
        for attempts in self.upload_attempts.iter().filter(|&&a| a > 1) {
            writeln!(
                f,
                "  mission upload      accepted at attempt {attempts} (the firmware answered MAV_MISSION_ERROR before)"
            )?;
        }
        Ok(())
    }
}

/// The ground station flying `plan` through the firmware at instance `n`'s
/// port, on its own thread.
fn ground_station(
    dialect: Dialect,
    instance: u8,
    plan: &FlightPlan<'_>,
    clock: &Arc<AtomicU64>,
    alone: bool,
) -> Result<GroundStationHandle, StartError> {
    let h = plan.home;
    let cfg = GroundStationConfig {
        firmware: dialect,
        kind: plan.kind,
        mission: dialect_items(dialect, plan.mission),
        home: (
            deg_e7(h.lat_deg.to_radians()),
            deg_e7(h.lon_deg.to_radians()),
            h.alt_m as f32,
        ),
        ready_timeout: SimTime::from_secs_f64(plan.ready_timeout_s.max(0.0)),
    };
    let addr = gcs_addr(dialect, instance);
    GroundStationHandle::spawn(
        cfg,
        LinkOptions {
            firmware: addr,
            forward: plan.gcs_forward,
            sim_clock: clock.clone(),
            stop_run: alone.then_some(plan.stop_run),
        },
    )
    .map_err(|e| {
        StartError::new(
            format!("cannot open the ground-station port {addr:?}: {e}"),
            "another ground station, MAVSDK program or mavsitl holds it: close it or use --instance N",
        )
    })
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
fn dialect_items(dialect: Dialect, mission: &Mission) -> Vec<StoredItem> {
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
                    command_name(s.command),
                    which.join(", "),
                    dialect.name()
                );
            }
            s
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report's summary: the common rows under its title, then one row
    /// per upload accepted only after a refusal (attempt 1 says nothing).
    #[test]
    fn a_report_summary_tells_the_uploads_refused_before_one_was_accepted() {
        let mut metrics = FlightMetrics::new(Route::default(), Rate::EVERY_TICK);
        metrics.distance_m = 123.45;
        let report = FlightReport {
            sim_s: 61.0,
            wall_s: 0.5,
            items: (3, 4),
            metrics,
            upload_attempts: vec![1, 3],
        };
        let failed = Err("timeout".to_string());
        let text = report
            .summary("mavsitl px4 m (quad, seed 7)".into(), &failed)
            .to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "mavsitl px4 m (quad, seed 7)");
        assert_eq!(lines[1], "  result              FAILED: timeout");
        assert!(lines.contains(&"  distance            123.5 m"), "{text}");
        assert!(lines.contains(&"  items reached       3 / 4"), "{text}");
        let uploads: Vec<&&str> = lines
            .iter()
            .filter(|l| l.contains("mission upload"))
            .collect();
        assert_eq!(uploads.len(), 1, "{text}");
        assert!(uploads[0].contains("accepted at attempt 3"), "{text}");
        let ok = Ok(());
        let done = report.summary(String::new(), &ok).to_string();
        assert!(
            done.contains("  result              mission completed"),
            "{done}"
        );
    }

    #[test]
    fn each_firmware_is_reached_on_its_own_ground_station_port() {
        let at = |port: u16| SocketAddr::from(([127, 0, 0, 1], port));
        assert_eq!(gcs_addr(Dialect::Px4, 0), FirmwareAddr::UdpTo(at(14580)));
        assert_eq!(gcs_addr(Dialect::Px4, 7), FirmwareAddr::UdpTo(at(14587)));
        assert_eq!(
            gcs_addr(Dialect::ArduCopter, 0),
            FirmwareAddr::Tcp(at(5760))
        );
        assert_eq!(gcs_addr(Dialect::ArduRover, 3), FirmwareAddr::Tcp(at(5790)));
    }

    #[test]
    fn mission_events_and_status_texts_go_to_their_own_files() {
        let dir = std::env::temp_dir().join(format!("mavsitl-fw-events-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let events = vec![
            (SimTime::from_micros(1_500), GsEvent::Armed),
            (
                SimTime::from_micros(2_000),
                GsEvent::StatusText {
                    severity: mavlink::dialects::common::MavSeverity::MAV_SEVERITY_WARNING,
                    text: "low battery, land".into(),
                },
            ),
            (SimTime::from_micros(3_000), GsEvent::ItemReached(2)),
        ];
        write_events(&dir, &events).expect("write");
        let ev = std::fs::read_to_string(dir.join("mission_events.csv")).expect("events");
        let st = std::fs::read_to_string(dir.join("statustext.csv")).expect("statustext");
        std::fs::remove_dir_all(&dir).ok();
        let ev: Vec<&str> = ev.lines().collect();
        assert_eq!(ev.len(), 3, "{ev:?}");
        assert!(ev[1].starts_with("1500000,"), "{ev:?}");
        assert!(
            ev[2].starts_with("3000000,") && ev[2].contains(",2,"),
            "{ev:?}"
        );
        assert_eq!(
            st.lines().nth(1),
            Some("2000000,MAV_SEVERITY_WARNING,low battery; land")
        );
    }
}
