//! A one-vehicle SimpleFlight flight of a mission, as `mavsitl fly` runs
//! it: recorded (with the mission kept beside the recording), measured
//! against the plan's route, optionally served to ground stations at the
//! pace they ask, and its end judged.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use mavsitl_analysis::flight::FlightMetrics;
use mavsitl_analysis::route::default_radius_m;
use mavsitl_analysis::Route;
use mavsitl_core::failure::Failure;
use mavsitl_core::geo::ExportFrame;
use mavsitl_core::vehicle::VehicleKind;
use mavsitl_simpleflight::FlightStatus;

use crate::endpoint::EndpointLink;
use crate::flight::{judge_end, FlightDriver, FlightWatch, GCS_SERVICE_US};
use crate::pacing::Speedup;
use crate::recording::{session, summary_rate, RunPlan};
use crate::setup::{Flight, FlightInputs};

/// How the flight runs: what `mavsitl fly` takes on its command line.
pub struct FlyOptions<'a> {
    /// Give the mission up after this much sim time, s.
    pub timeout_s: f64,
    /// Record into this directory.
    pub record: Option<&'a Path>,
    /// The frame recordings are written in.
    pub frame: ExportFrame,
    /// The mission's file, kept with the recording (None: `builtin`'s
    /// text, when not empty).
    pub mission_file: Option<&'a Path>,
    /// The built-in mission's text.
    pub builtin: &'a str,
    /// A ground station's link, served every 4 ms of sim time at this
    /// pace (without one, as fast as possible).
    pub link: Option<(EndpointLink, Speedup)>,
    /// Raised to stop (Ctrl-C).
    pub stop: &'static AtomicBool,
}

/// How a flight went.
pub struct Flown {
    /// Its end: the mission flown, or why not.
    pub outcome: Result<(), String>,
    /// SimpleFlight's status at the end.
    pub status: FlightStatus,
    /// The vehicle's class.
    pub kind: VehicleKind,
    /// The plan's navigation items.
    pub total_items: usize,
    /// Sim time at the end, s.
    pub sim_s: f64,
    /// Wall time of the flight, s.
    pub wall_s: f64,
    /// Its figures and path following.
    pub watch: FlightWatch,
}

/// Flies `flight` (built from `inputs`) to its end.
///
/// # Errors
/// A recording that cannot be opened or closed, or a physics rate the
/// scenario cannot have (exit 2 or 1). A failed mission is
/// [`Flown::outcome`], not an error.
pub fn fly(flight: Flight, inputs: &FlightInputs, opts: FlyOptions<'_>) -> Result<Flown, Failure> {
    let Flight {
        lockstep,
        status,
        kind,
        total_items,
        params,
        ..
    } = flight;
    let scenario = &inputs.scenario;
    let plan = RunPlan {
        record: opts.record,
        frame: opts.frame,
        mission_file: opts.mission_file,
        builtin: opts.builtin,
        end_s: Some(opts.timeout_s),
        stop: opts.stop,
    };
    let frame = *lockstep.sim().world().frame();
    let mut session = session(lockstep, scenario, &plan)?;
    let route = Route::new(&inputs.mission, &frame, default_radius_m(kind));
    let metrics = FlightMetrics::new(route, summary_rate(scenario));
    let watch = FlightWatch::new(status.clone(), metrics, opts.record, &params)
        .map_err(|e| Failure::run(e.to_string()))?;
    let wall = Instant::now();
    let (link, pace) = match opts.link {
        Some((l, pace)) => (Some(l), Some(pace)),
        None => (None, None),
    };
    if let Some(pace) = pace {
        // A ground station sees the flight at the pace asked.
        session = session.paced(pace).serving_every(GCS_SERVICE_US);
    }
    let mut driver = FlightDriver::new(watch, link);
    let mut outcome = session.run(&mut driver);
    let sim = session.world().sim();
    if let Some(s) = driver.link.as_mut() {
        // Let the ground stations see the end state.
        s.service(sim.time());
        s.finish();
    }
    let wall_s = wall.elapsed().as_secs_f64();
    let st = status.borrow().clone();
    judge_end(&mut outcome, &st, opts.timeout_s);
    let mut watch = driver.watch;
    watch.flush();
    session.finish(outcome.is_ok()).map_err(Failure::run)?;
    Ok(Flown {
        outcome,
        status: st,
        kind,
        total_items,
        sim_s: session.world().sim().time().as_secs_f64(),
        wall_s,
        watch,
    })
}
