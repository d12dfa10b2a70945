//! `mavsitl fly`: SimpleFlight flies a QGroundControl mission headless.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use mavsitl::analysis::route::default_radius_m;
use mavsitl::analysis::Route;
use mavsitl::autopilot::params::ParamStore;
use mavsitl::autopilot::{FlightStatus, StatusHandle};
use mavsitl::geo::ExportFrame;
use mavsitl::metrics::FlightMetrics;
use mavsitl::record::rows::RowFile;
use mavsitl::scenario::Home;
use mavsitl::session::{Driver, Session, Step};
use mavsitl::setup;
use mavsitl::sim::{Lockstep, Observer, SimError, Simulation};
use mavsitl::time::{PhysicsRate, SimTime};

use super::inputs::{load_inputs, FlightInputs, InputArgs, VehicleArg, DEFAULT_MISSION};
use super::summary::FlightSummary;
use super::vehicle_link::{GcsArgs, GcsSession};
use super::{home, CliError};

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
    #[arg(long, value_name = "S", default_value_t = 1800.0, value_parser = super::inputs::seconds_in(0.001, super::inputs::MAX_RUN_S))]
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

struct FlyObserver {
    status: StatusHandle,
    stats: Stats,
    metrics: FlightMetrics,
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

impl FlyObserver {
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

impl Observer for FlyObserver {
    fn on_tick(&mut self, sim: &Simulation) -> std::io::Result<()> {
        let Some(v) = sim.vehicles().first() else {
            return Ok(());
        };
        let t = v.ground_truth();
        let st = self.status.borrow();
        let on_mission = st.armed && !st.finished && !st.landed;
        self.metrics.sample(sim.tick(), &t, on_mission);
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
        Ok(())
    }
}

/// What `mavsitl fly` flies: the mission, scenario and parameters.
pub fn load(args: &FlyArgs) -> Result<FlightInputs, CliError> {
    load_inputs(
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
    )
}

/// Runs `mavsitl fly` for a one-vehicle world (a fleet is the fleet
/// module's).
pub fn run(args: FlyArgs, inputs: FlightInputs) -> Result<(), CliError> {
    let flight = setup::flight(
        &inputs.mission,
        &inputs.mission_name,
        &inputs.scenario,
        &inputs.source,
        inputs.params(),
        true,
    )
    .map_err(|e| {
        CliError::input(
            e.to_string(),
            "check the mission, scenario and parameter file",
        )
    })?;
    for w in &flight.warnings {
        eprintln!("warning: {}: {}", inputs.mission_name, w.message);
    }
    let link = gcs_session(&args, &flight, &inputs)?;
    let setup::Flight {
        lockstep,
        status,
        kind,
        total_items: total_nav,
        params,
        ..
    } = flight;
    let scenario = &inputs.scenario;
    let rate = PhysicsRate::new(scenario.physics_rate_hz)
        .map_err(|e| CliError::input(e.to_string(), ""))?;
    let mut recorder =
        super::open_recorder(args.record.as_deref(), scenario, lockstep.sim(), args.frame)?;
    super::note_mission(
        recorder.as_mut(),
        args.record.as_deref(),
        args.mission.as_deref(),
        DEFAULT_MISSION,
    );
    let files = FlyFiles::open(args.record.as_deref(), &params)?;
    let wall = Instant::now();
    let obs = FlyObserver {
        status: status.clone(),
        stats: Stats::default(),
        metrics: FlightMetrics::new(
            Route::new(
                &inputs.mission,
                lockstep.sim().world().frame(),
                default_radius_m(!kind.is_multirotor()),
            ),
            super::summary_rate(scenario),
        ),
        est_csv: files.estimator,
        statustext_csv: files.statustext,
        est_next: SimTime::ZERO,
        events_csv: files.events,
        events_seen: 0,
    };
    let mut session = Session::new(lockstep, rate.period_us())
        .until(Some(SimTime::from_secs_f64(args.timeout)))
        .recording(recorder)
        .interrupted_by(&super::INTERRUPTED);
    if link.is_some() {
        // A ground station sees the flight at the pace asked, served every
        // 4 ms of sim time.
        session = session
            .paced(args.gcs_args.speedup)
            .serving_every(GCS_SERVICE_US);
    }
    let mut driver = FlyDriver {
        obs,
        link,
        finished_at: None,
    };
    let mut outcome = session.run(&mut driver);
    let sim = session.world().sim();
    if let Some(s) = driver.link.as_mut() {
        // Let the ground stations see the end state.
        s.service(sim.time());
        s.finish();
    }
    let wall_s = wall.elapsed().as_secs_f64();
    let st = status.borrow().clone();
    judge_end(&mut outcome, &st, args.timeout);
    let mut obs = driver.obs;
    if let Some(w) = obs.est_csv.as_mut() {
        let _ = w.flush();
    }
    let _ = obs.write_events();
    session.finish(outcome.is_ok()).map_err(CliError::run)?;
    let sim = session.world().sim();
    let reached: std::collections::BTreeSet<usize> = st.reached.iter().map(|(_, i)| *i).collect();
    FlightSummary {
        title: format!(
            "mavsitl fly {} ({}, seed {})",
            inputs.mission_name,
            super::inputs::vehicle_word(kind),
            scenario.seed
        ),
        outcome: &outcome,
        sim_s: sim.time().as_secs_f64(),
        wall_s,
        items: (reached.len(), total_nav),
        metrics: &obs.metrics,
    }
    .print();
    print_autopilot_rows(&obs.stats, &st);
    if let Some(dir) = &args.record {
        println!("  recorded to         {}", dir.display());
    }
    outcome.map_err(CliError::run)
}

/// With `--gcs`, the ground-station endpoint on its UDP socket.
fn gcs_session(
    args: &FlyArgs,
    flight: &setup::Flight,
    inputs: &super::inputs::FlightInputs,
) -> Result<Option<GcsSession>, CliError> {
    if !args.gcs {
        return Ok(None);
    }
    let s = GcsSession::for_flight(&args.gcs_args, flight, inputs, args.record.as_deref())?;
    if let Ok(a) = s.link.local_addr() {
        eprintln!("MAVLink on udp {a}");
    }
    Ok(Some(s))
}

/// The recording's SimpleFlight files: `params.parm` written at once,
/// `estimator.csv`, `mission_events.csv` and `statustext.csv` opened with
/// their headers.
struct FlyFiles {
    estimator: Option<RowFile>,
    events: Option<RowFile>,
    statustext: Option<RowFile>,
}

impl FlyFiles {
    fn open(dir: Option<&std::path::Path>, params: &ParamStore) -> Result<Self, CliError> {
        let Some(dir) = dir else {
            return Ok(FlyFiles {
                estimator: None,
                events: None,
                statustext: None,
            });
        };
        let _ = std::fs::write(dir.join("params.parm"), params.to_file());
        let file = |name: &str, header: &str| -> Result<Option<RowFile>, CliError> {
            let w = RowFile::with_header(&dir.join(name), header)
                .map_err(|e| CliError::run(e.to_string()))?;
            Ok(Some(w))
        };
        Ok(FlyFiles {
            estimator: file("estimator.csv", "#timestamp [ns],p_N [m],p_E [m],p_D [m],v_N [m s^-1],v_E [m s^-1],v_D [m s^-1],q_w [],q_x [],q_y [],q_z []")?,
            events: file("mission_events.csv", "#timestamp [ns],event,item,detail")?,
            statustext: file("statustext.csv", "#timestamp [ns],severity,text")?,
        })
    }
}

/// Sim time between services of the ground-station link, µs.
const GCS_SERVICE_US: u64 = 4_000;

/// SimpleFlight flying the mission, seen by its observer and, with
/// `--gcs`, by ground stations on its link.
struct FlyDriver {
    obs: FlyObserver,
    link: Option<GcsSession>,
    /// When SimpleFlight reported the mission finished.
    finished_at: Option<SimTime>,
}

impl Driver<Lockstep> for FlyDriver {
    fn on_tick(&mut self, sim: &Simulation) -> std::io::Result<()> {
        self.obs.on_tick(sim)
    }

    fn serve(&mut self, ls: &mut Lockstep) -> Step<Lockstep> {
        if let Some(s) = self.link.as_mut() {
            s.service(ls.sim().time());
        }
        Step::Go
    }

    fn idle(&mut self, ls: &mut Lockstep, d: std::time::Duration) -> Step<Lockstep> {
        match self.link.as_mut() {
            Some(s) => {
                s.service(ls.sim().time());
                s.wait(d);
            }
            None => std::thread::sleep(d),
        }
        Step::Go
    }

    fn after_tick(&mut self, ls: &mut Lockstep, tick: Result<(), SimError>) -> Step<Lockstep> {
        if let Err(e) = tick {
            return Step::End(Err(format!("simulation stopped: {e}")));
        }
        if let Some(s) = self.link.as_mut() {
            s.set_silent(super::link_cut(ls.sim()));
        }
        let now = ls.sim().time();
        let st = self.obs.status.borrow();
        match flight_over(&st, &self.obs.metrics, now, &mut self.finished_at) {
            Some(end) => Step::End(end),
            None => Step::Go,
        }
    }
}

/// Whether the flight is over at `now`: failed, crashed, landed and
/// disarmed, or finished and holding for 2 s.
fn flight_over(
    st: &FlightStatus,
    metrics: &FlightMetrics,
    now: SimTime,
    finished_at: &mut Option<SimTime>,
) -> Option<Result<(), String>> {
    if let Some(f) = &st.failure {
        return Some(Err(f.clone()));
    }
    if let Some(c) = &metrics.crashed {
        return Some(Err(format!("crash: {c} at {now}")));
    }
    if st.finished && finished_at.is_none() {
        *finished_at = Some(now);
    }
    ((st.landed && !st.armed) || finished_at.is_some_and(|t| now - t >= 2_000_000))
        .then_some(Ok(()))
}

/// A flight that ended without completing its mission fails: by a
/// failsafe, or by the timeout.
fn judge_end(outcome: &mut Result<(), String>, st: &FlightStatus, timeout_s: f64) {
    if let (true, false, Some(fs)) = (outcome.is_ok(), st.finished, &st.failsafe) {
        *outcome = Err(format!("mission not completed: {fs}"));
    }
    if outcome.is_ok() && !(st.finished || st.landed) {
        *outcome = Err(format!(
            "timeout: mission not completed after {timeout_s} s of sim time"
        ));
    }
}

/// The summary rows only SimpleFlight has: path following on its own
/// estimate, where it ended against its home, and its estimator's error.
fn print_autopilot_rows(stats: &Stats, st: &FlightStatus) {
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
}
