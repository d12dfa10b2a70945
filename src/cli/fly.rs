//! `mavsitl fly`: SimpleFlight flies a QGroundControl mission headless.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, ValueEnum};

use mavsitl::autopilot::StatusHandle;
use mavsitl::geo::ExportFrame;
use mavsitl::metrics::{FlightMetrics, PlannedLegs};
use mavsitl::mission::Mission;
use mavsitl::record::Recorder;
use mavsitl::scenario::{Home, Scenario, ScenarioSource};
use mavsitl::setup;
use mavsitl::sim::{Observer, Simulation};
use mavsitl::time::{PhysicsRate, SimTime};

use super::gcs::{GcsArgs, GcsSession, Pacer};
use super::summary::FlightSummary;
use super::{home, CliError};

/// Which vehicle flies when no scenario is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VehicleArg {
    /// The generic quad (AirSim's SimpleFlight "Generic").
    Quad,
    /// The twin-thruster USV.
    Boat,
}

/// Arguments of `mavsitl fly`.
#[derive(Debug, Args)]
pub struct FlyArgs {
    /// Mission: a QGroundControl .plan or a 'QGC WPL 110' file. Without one, the
    /// built-in missions/quad_square.plan flies.
    pub mission: Option<PathBuf>,

    /// Vehicle (default: a boat for plans made for a boat or rover, else a quad).
    #[arg(long, value_enum)]
    pub vehicle: Option<VehicleArg>,

    /// Scenario (vehicle, environment, sensors); its home overrides the plan's.
    #[arg(long, value_name = "S")]
    pub scenario: Option<PathBuf>,

    /// Noise seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Inject a fault (repeatable): KIND@START[+DURATION][:key=value,...], e.g.
    /// gps_loss@40s+30s, motor_failure@30s:motor=0,thrust_scale=0,
    /// battery_capacity_scale@0s:scale=0.25. Keys as in a scenario's "faults".
    #[arg(long = "fault", value_name = "FAULT", value_parser = mavsitl::faults::parse_fault_arg)]
    pub faults: Vec<mavsitl::faults::FaultSpec>,

    /// Home LAT,LON,ALT[,HEADING]; overrides the plan's and the scenario's.
    #[arg(long, value_name = "LAT,LON,ALT[,HEADING]", value_parser = home::parse_home, allow_hyphen_values = true)]
    pub home: Option<Home>,

    /// Parameter file (`NAME VALUE` lines, ArduPilot/PX4 names).
    #[arg(long, value_name = "FILE")]
    pub params: Option<PathBuf>,

    /// Write recordings (ground truth, sensors, mission_events.csv, estimator.csv, params.parm).
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,

    /// Frame of the recordings.
    #[arg(long, default_value = "ned", value_parser = super::export_frame_parser())]
    pub frame: ExportFrame,

    /// Fly on perfect state (AirSim's SimpleFlight behaviour) instead of the
    /// estimator; the same as the parameter SF_GROUND_TRUTH 1.
    #[arg(long)]
    pub ground_truth: bool,

    /// Give up after this much sim time, s.
    #[arg(long, value_name = "S", default_value_t = 1800.0)]
    pub timeout: f64,

    /// Be a MAVLink vehicle while flying: QGroundControl, MAVSDK or MAVProxy
    /// watch the flight (and may take over) as with `mavsitl serve`; the run is
    /// then paced at --speedup (default real time).
    #[arg(long)]
    pub gcs: bool,

    /// Ground-station link (with --gcs).
    #[command(flatten)]
    pub gcs_args: GcsArgs,

    /// PX4's build directory, for a scenario's vehicles flown by PX4
    /// (`"controller": {"kind": "px4", "instance": N}`).
    #[arg(long, value_name = "DIR", env = "PX4_BUILD_DIR")]
    pub px4_build: Option<PathBuf>,

    /// An ArduPilot checkout or SITL binary, for a scenario's vehicles flown
    /// by ArduPilot (`"controller": {"kind": "ardupilot", "instance": N}`).
    #[arg(long, value_name = "PATH", env = "ARDUPILOT_HOME")]
    pub ardupilot: Option<PathBuf>,
}

const DEFAULT_MISSION: &str = include_str!("../../missions/quad_square.plan");
const DEFAULT_MISSION_NAME: &str = "<built-in missions/quad_square.plan>";
const QUAD_SCENARIO: &str =
    r#"{"vehicles":[{"name":"quad","kind":"multirotor","airframe":"generic_quad"}]}"#;
const BOAT_SCENARIO: &str = r#"{"vehicles":[{"name":"boat","kind":"boat","airframe":"usv_twin"}]}"#;

/// Path following on SimpleFlight's own estimate (the ground-truth rows
/// are the shared [`FlightMetrics`]).
#[derive(Debug, Default)]
struct Stats {
    xtrack_sq: f64,
    xtrack_n: u64,
    xtrack_max_m: f64,
    est_sq: f64,
    est_n: u64,
}

struct FlyObserver<'a> {
    status: StatusHandle,
    stats: Stats,
    legs: PlannedLegs,
    metrics: FlightMetrics,
    recorder: Option<&'a mut Recorder>,
    est_csv: Option<mavsitl::record::rows::RowFile>,
    /// When the next `estimator.csv` row is due (50 Hz of sim time, whatever
    /// the physics rate).
    est_next: SimTime,
    /// `mission_events.csv`, written as the events come, and how far.
    events_csv: Option<mavsitl::record::rows::RowFile>,
    /// `statustext.csv`: the STATUSTEXT the events make on a ground station.
    statustext_csv: Option<mavsitl::record::rows::RowFile>,
    events_seen: usize,
}

impl FlyObserver<'_> {
    /// Appends SimpleFlight's events not yet written to `mission_events.csv`.
    fn write_events(&mut self) -> std::io::Result<()> {
        let Some(w) = self.events_csv.as_mut() else {
            return Ok(());
        };
        let st = self.status.borrow();
        for e in st.events.since(self.events_seen) {
            if let Some(t) = self.statustext_csv.as_mut() {
                for (sev, text) in mavsitl::autopilot::gcs::event_statustexts(e) {
                    writeln!(
                        t,
                        "{},{sev:?},{}",
                        e.time.as_nanos(),
                        text.replace(',', ";")
                    )?;
                }
            }
            writeln!(
                w,
                "{},{},{},{}",
                e.time.as_nanos(),
                e.kind,
                e.item.map_or(String::new(), |i| i.to_string()),
                e.detail.replace(',', ";")
            )?;
        }
        self.events_seen = st.events.end();
        if let Some(t) = self.statustext_csv.as_mut() {
            t.flush()?;
        }
        w.flush()
    }
}

/// `estimator.csv`'s row interval, µs (50 Hz).
const EST_ROW_US: u64 = 20_000;

impl Observer for FlyObserver<'_> {
    fn on_tick(&mut self, sim: &Simulation) -> std::io::Result<()> {
        let Some(v) = sim.vehicles().first() else {
            return Ok(());
        };
        let t = v.ground_truth();
        let st = self.status.borrow();
        let on_mission = st.armed && !st.finished && !st.landed;
        self.metrics.sample(&t, on_mission, &self.legs);
        if let (Some((o, d)), Some(e)) = (st.leg, st.estimate) {
            let track = (d - o).xy();
            if track.norm() > 1.0 {
                let u = track.normalize();
                let rel = (e.pos_ned_m - o).xy();
                let x = (rel.x * u.y - rel.y * u.x).abs();
                self.stats.xtrack_sq += x * x;
                self.stats.xtrack_n += 1;
                self.stats.xtrack_max_m = self.stats.xtrack_max_m.max(x);
            }
        }
        if let Some(e) = st.estimate {
            if st.armed && sim.tick().is_multiple_of(10) {
                let d = (e.pos_ned_m - t.pos_ned_m).norm();
                self.stats.est_sq += d * d;
                self.stats.est_n += 1;
            }
            if let Some(w) = self.est_csv.as_mut() {
                if sim.time() >= self.est_next {
                    self.est_next = SimTime::from_micros(
                        (sim.time().as_micros() / EST_ROW_US + 1) * EST_ROW_US,
                    );
                    let q = e.att_ned_frd;
                    writeln!(
                        w,
                        "{},{},{},{},{},{},{},{},{},{},{}",
                        sim.time().as_nanos(),
                        e.pos_ned_m.x,
                        e.pos_ned_m.y,
                        e.pos_ned_m.z,
                        e.vel_ned_m_s.x,
                        e.vel_ned_m_s.y,
                        e.vel_ned_m_s.z,
                        q.w,
                        q.i,
                        q.j,
                        q.k
                    )?;
                }
            }
        }
        let new_events = st.events.end() > self.events_seen;
        drop(st);
        if new_events {
            self.write_events()?;
        }
        match self.recorder.as_deref_mut() {
            Some(r) => r.on_tick(sim),
            None => Ok(()),
        }
    }
}

fn input(msg: impl Into<String>, hint: &str) -> CliError {
    CliError::input(msg, hint)
}

/// A mission, scenario and parameters resolved from the command line.
pub(super) struct FlightInputs {
    pub mission: Mission,
    pub mission_name: String,
    pub scenario: Scenario,
    pub source: ScenarioSource,
    pub param_text: Option<(String, String)>,
}

impl FlightInputs {
    /// The parameter file as (text, name).
    pub fn params(&self) -> Option<(&str, &str)> {
        self.param_text
            .as_ref()
            .map(|(t, n)| (t.as_str(), n.as_str()))
    }
}

/// The simulated world a firmware bridge flies in: scenario, home, seed.
#[derive(Debug, Args)]
pub struct WorldArgs {
    /// Scenario (vehicle, environment, sensors).
    #[arg(long, value_name = "S")]
    pub scenario: Option<PathBuf>,

    /// Home LAT,LON,ALT[,HEADING] (also PX4_HOME_LAT/LON/ALT); give the
    /// firmware the same home.
    #[arg(long, value_name = "LAT,LON,ALT[,HEADING]", value_parser = home::parse_home, allow_hyphen_values = true)]
    pub home: Option<Home>,

    /// Noise seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Inject a fault (repeatable): KIND@START[+DURATION][:key=value,...], e.g.
    /// gps_loss@40s+30s, motor_failure@30s:motor=0,thrust_scale=0,
    /// battery_capacity_scale@0s:scale=0.25. Keys as in a scenario's "faults".
    #[arg(long = "fault", value_name = "FAULT", value_parser = mavsitl::faults::parse_fault_arg)]
    pub faults: Vec<mavsitl::faults::FaultSpec>,
}

impl WorldArgs {
    /// The scenario (or the built-in vehicle) with home and seed applied,
    /// and the plan to fly if any: the vehicle is `vehicle`, else the plan's
    /// kind, else `fallback`; home is the plan's unless the command line or
    /// the scenario gives one.
    pub(super) fn load(
        &self,
        vehicle: Option<VehicleArg>,
        mission: Option<&PathBuf>,
        fallback: VehicleArg,
    ) -> Result<FlightInputs, CliError> {
        load_inputs(
            &InputArgs {
                mission,
                vehicle: vehicle.or(mission.is_none().then_some(fallback)),
                scenario: self.scenario.as_ref(),
                seed: self.seed,
                faults: &self.faults,
                home: self.home,
                params: None,
                ground_truth: false,
            },
            false,
        )
    }
}

/// What `fly` and `serve` share on their command lines.
pub(super) struct InputArgs<'a> {
    pub mission: Option<&'a PathBuf>,
    pub vehicle: Option<VehicleArg>,
    pub scenario: Option<&'a PathBuf>,
    pub seed: Option<u64>,
    pub faults: &'a [mavsitl::faults::FaultSpec],
    pub home: Option<Home>,
    pub params: Option<&'a PathBuf>,
    pub ground_truth: bool,
}

/// Refuses a mission with nothing to fly (no navigation item): it would end
/// "completed" with the vehicle hovering where it took off.
fn require_navigation(mission: &Mission, name: &str) -> Result<(), CliError> {
    if mission.items.iter().any(|i| (16..=99).contains(&i.command)) {
        return Ok(());
    }
    Err(input(
        format!("{name}: the mission has no navigation item to fly"),
        "add waypoints in QGroundControl's Plan view; missions/ has examples",
    ))
}

/// Loads the mission (the built-in square when `builtin` and none is given,
/// else an empty mission), the scenario (or the built-in vehicle), home and
/// the parameter file.
pub(super) fn load_inputs(args: &InputArgs, builtin: bool) -> Result<FlightInputs, CliError> {
    let mission_name = match (args.mission, builtin) {
        (Some(p), _) => p.display().to_string(),
        (None, true) => DEFAULT_MISSION_NAME.to_string(),
        (None, false) => "<no mission>".to_string(),
    };
    let mission = match (args.mission, builtin) {
        (Some(p), _) => Mission::load(p),
        (None, true) => Mission::parse(DEFAULT_MISSION, DEFAULT_MISSION_NAME),
        (None, false) => Ok(Mission::default()),
    }
    .map_err(|e| {
        input(
            e.to_string(),
            "missions/ has examples; QGroundControl writes .plan files",
        )
    })?;
    if args.mission.is_some() {
        require_navigation(&mission, &mission_name)?;
    }
    let boat = match args.vehicle {
        Some(v) => v == VehicleArg::Boat,
        None => matches!(mission.vehicle_type, Some(10..=12)),
    };
    // Scenario.
    let (mut scenario, source) = match args.scenario {
        Some(p) => (
            Scenario::load(p)
                .map_err(|e| input(e.to_string(), "see the README's scenario reference"))?,
            ScenarioSource {
                name: p.display().to_string(),
                base_dir: p.parent().map(PathBuf::from).unwrap_or_default(),
            },
        ),
        None => {
            let src = ScenarioSource {
                name: "<built-in vehicle>".into(),
                base_dir: PathBuf::from("."),
            };
            let text = if boat { BOAT_SCENARIO } else { QUAD_SCENARIO };
            (
                Scenario::from_json(text, &src).map_err(|e| input(e.to_string(), ""))?,
                src,
            )
        }
    };
    // Home: --home, else the scenario's (if one was given), else the plan's.
    let plan_home = if args.scenario.is_none() {
        mission.home.map(|h| Home {
            lat_deg: h.lat_deg,
            lon_deg: h.lon_deg,
            alt_m: h.alt_m,
            heading_deg: 0.0,
        })
    } else {
        None
    };
    scenario.home = home::resolve(args.home.or(plan_home), scenario.home, |k| {
        std::env::var(k).ok()
    })
    .map_err(|e| input(format!("home: {e}"), "--home LAT,LON,ALT[,HEADING]"))?;
    if let Some(seed) = args.seed {
        scenario.seed = seed;
    }
    super::add_faults(&mut scenario, args.faults)?;
    let mut param_text = match args.params {
        Some(p) => Some((
            std::fs::read_to_string(p)
                .map_err(|e| input(format!("{}: cannot read: {e}", p.display()), ""))?,
            p.display().to_string(),
        )),
        None => None,
    };
    if args.ground_truth {
        let (text, _) = param_text.get_or_insert_with(|| (String::new(), "--ground-truth".into()));
        text.push_str("\nSF_GROUND_TRUTH 1\n");
    }
    Ok(FlightInputs {
        mission,
        mission_name,
        scenario,
        source,
        param_text,
    })
}

/// Runs `mavsitl fly`.
pub fn run(args: FlyArgs) -> Result<(), CliError> {
    let inputs = load_inputs(
        &InputArgs {
            mission: args.mission.as_ref(),
            vehicle: args.vehicle,
            scenario: args.scenario.as_ref(),
            seed: args.seed,
            faults: &args.faults,
            home: args.home,
            params: args.params.as_ref(),
            ground_truth: args.ground_truth,
        },
        true,
    )?;
    if super::fleet::is_fleet(&inputs) {
        return super::fleet::run(&args, inputs);
    }
    let flight = setup::flight(
        &inputs.mission,
        &inputs.mission_name,
        &inputs.scenario,
        &inputs.source,
        inputs.params(),
        true,
    )
    .map_err(|e| input(e, "check the mission, scenario and parameter file"))?;
    let mission_name = inputs.mission_name.clone();
    let scenario = &inputs.scenario;
    for w in &flight.warnings {
        eprintln!("warning: {mission_name}: {}", w.message);
    }
    let mut session = if args.gcs {
        let s = GcsSession::for_flight(&args.gcs_args, &flight, &inputs, args.record.as_deref())?;
        if let Ok(a) = s.link.local_addr() {
            eprintln!("MAVLink on udp {a}");
        }
        Some(s)
    } else {
        None
    };
    let setup::Flight {
        mut lockstep,
        status,
        multicopter,
        total_items: total_nav,
        params,
        ..
    } = flight;
    // Recording.
    let rate = PhysicsRate::new(scenario.physics_rate_hz).map_err(|e| input(e.to_string(), ""))?;
    let mut recorder =
        super::open_recorder(args.record.as_deref(), scenario, lockstep.sim(), args.frame)?;
    super::note_mission(
        recorder.as_mut(),
        args.record.as_deref(),
        args.mission.as_deref(),
        DEFAULT_MISSION,
    );
    let est_csv = match &args.record {
        Some(dir) => {
            let _ = std::fs::write(dir.join("params.parm"), params.to_file());
            let mut w = mavsitl::record::rows::RowFile::create(&dir.join("estimator.csv"))
                .map_err(|e| CliError::run(e.to_string()))?;
            let _ = writeln!(w, "#timestamp [ns],p_N [m],p_E [m],p_D [m],v_N [m s^-1],v_E [m s^-1],v_D [m s^-1],q_w [],q_x [],q_y [],q_z []");
            Some(w)
        }
        None => None,
    };
    let events_csv = match &args.record {
        Some(dir) => {
            let mut w = mavsitl::record::rows::RowFile::create(&dir.join("mission_events.csv"))
                .map_err(|e| CliError::run(e.to_string()))?;
            let _ = writeln!(w, "#timestamp [ns],event,item,detail");
            Some(w)
        }
        None => None,
    };
    let statustext_csv = match &args.record {
        Some(dir) => {
            let mut w = mavsitl::record::rows::RowFile::create(&dir.join("statustext.csv"))
                .map_err(|e| CliError::run(e.to_string()))?;
            let _ = writeln!(w, "#timestamp [ns],severity,text");
            Some(w)
        }
        None => None,
    };
    // Fly.
    let end = SimTime::from_secs_f64(args.timeout);
    let wall = Instant::now();
    let mut obs = FlyObserver {
        status: status.clone(),
        stats: Stats::default(),
        legs: PlannedLegs::new(&inputs.mission, lockstep.sim().world().frame()),
        metrics: FlightMetrics::default(),
        recorder: recorder.as_mut(),
        est_csv,
        statustext_csv,
        est_next: SimTime::ZERO,
        events_csv,
        events_seen: 0,
    };
    let mut finished_at: Option<SimTime> = None;
    let mut outcome: Result<(), String> = Ok(());
    let pacer = Pacer::new(args.gcs_args.speedup, SimTime::ZERO);
    let mut last_service: Option<SimTime> = None;
    while lockstep.sim().time() < end {
        if let Some(s) = session.as_mut() {
            let now = lockstep.sim().time();
            let wait = pacer.wait(SimTime::from_micros(now.as_micros() + rate.period_us()));
            if !wait.is_zero() {
                s.service(now);
                last_service = Some(now);
                s.wait(wait.min(std::time::Duration::from_millis(2)));
                if super::interrupted() {
                    outcome = Err("interrupted".into());
                    break;
                }
                continue;
            }
            if last_service.is_none_or(|t| now.as_micros() >= t.as_micros() + 4_000) {
                s.service(now);
                last_service = Some(now);
            }
        }
        if let Err(e) = lockstep.tick(&mut obs) {
            outcome = Err(format!("simulation stopped: {e}"));
            break;
        }
        if let Some(s) = session.as_mut() {
            s.set_silent(super::link_cut(lockstep.sim()));
        }
        let st = status.borrow();
        if let Some(f) = &st.failure {
            outcome = Err(f.clone());
            break;
        }
        if let Some(c) = &obs.metrics.crashed {
            outcome = Err(format!("crash: {c} at {}", lockstep.sim().time()));
            break;
        }
        let now = lockstep.sim().time();
        if st.finished && finished_at.is_none() {
            finished_at = Some(now);
        }
        // Done: landed and disarmed, or finished and holding for 2 s.
        if (st.landed && !st.armed) || finished_at.is_some_and(|t| now - t >= 2_000_000) {
            break;
        }
        drop(st);
        if lockstep.sim().tick().is_multiple_of(1024) && super::interrupted() {
            outcome = Err("interrupted".into());
            break;
        }
    }
    if let Some(s) = session.as_mut() {
        // Let the ground stations see the end state.
        s.service(lockstep.sim().time());
        s.finish();
    }
    let wall_s = wall.elapsed().as_secs_f64();
    let st = status.borrow().clone();
    if let (true, false, Some(fs)) = (outcome.is_ok(), st.finished, &st.failsafe) {
        outcome = Err(format!("mission not completed: {fs}"));
    }
    if outcome.is_ok() && !(st.finished || st.landed) {
        outcome = Err(format!(
            "timeout: mission not completed after {} s of sim time",
            args.timeout
        ));
    }
    if let Some(w) = obs.est_csv.as_mut() {
        let _ = w.flush();
    }
    let _ = obs.write_events();
    let stats = std::mem::take(&mut obs.stats);
    let metrics = std::mem::take(&mut obs.metrics);
    drop(obs);
    if let Some(r) = recorder.as_mut() {
        r.finish(lockstep.sim(), outcome.is_ok())
            .map_err(|e| CliError::run(format!("recording: {e}")))?;
    }
    // Summary.
    let sim = lockstep.sim();
    let reached: std::collections::BTreeSet<usize> = st.reached.iter().map(|(_, i)| *i).collect();
    FlightSummary {
        title: format!(
            "mavsitl fly {mission_name} ({}, seed {})",
            if multicopter { "quad" } else { "boat" },
            scenario.seed
        ),
        outcome: &outcome,
        sim_s: sim.time().as_secs_f64(),
        wall_s,
        items: (reached.len(), total_nav),
        metrics: &metrics,
    }
    .print();
    let n = stats.xtrack_n.max(1) as f64;
    println!(
        "  path following      RMS {:.3} m, max {:.3} m (on the autopilot's estimate against the leg it flies)",
        (stats.xtrack_sq / n).sqrt(),
        stats.xtrack_max_m
    );
    if let (Some(e), Some(h)) = (st.estimate, st.home_ned) {
        println!(
            "  final vs home       {:.2} m (autopilot's estimate vs its home)",
            (e.pos_ned_m - h).xy().norm()
        );
    }
    let erms = if stats.est_n > 0 {
        (stats.est_sq / stats.est_n as f64).sqrt()
    } else {
        0.0
    };
    println!("  estimator error     RMS {erms:.3} m (position vs truth)");
    if let Some(dir) = &args.record {
        println!("  recorded to         {}", dir.display());
    }
    outcome.map_err(CliError::run)
}
