//! A run's recording: opened at the scenario's ground-truth rate, with the
//! mission flown kept beside it so that `mavsitl plot` finds it.

use mavsitl_core::failure::Failure;

/// The scenario's ground-truth recording rate.
///
/// # Errors
/// A physics rate or ground-truth rate the scenario cannot have (exit 2).
pub fn ground_truth_rate(
    scenario: &mavsitl_sim::scenario::Scenario,
) -> Result<mavsitl_core::time::Rate, Failure> {
    let rate = mavsitl_core::time::PhysicsRate::new(scenario.physics_rate_hz)
        .map_err(|e| Failure::input(e.to_string(), "physics_rate_hz"))?;
    rate.divider(scenario.record.ground_truth_rate_hz)
        .map_err(|e| Failure::input(e.to_string(), "record.ground_truth_rate_hz"))
}

/// The rate a flight's summary samples its cross-track error at: the
/// recording's, so that the two agree; every tick when that rate does not
/// divide the physics rate (which only a recording refuses).
pub fn summary_rate(scenario: &mavsitl_sim::scenario::Scenario) -> mavsitl_core::time::Rate {
    ground_truth_rate(scenario).unwrap_or(mavsitl_core::time::Rate::EVERY_TICK)
}

/// Opens the recorder of a run when `dir` is given: ground truth at the
/// scenario's rate, sensors, in `frame`.
///
/// # Errors
/// A directory that cannot be written (exit 2).
pub fn open_recorder(
    dir: Option<&std::path::Path>,
    scenario: &mavsitl_sim::scenario::Scenario,
    sim: &mavsitl_sim::sim::Simulation,
    frame: mavsitl_core::geo::ExportFrame,
) -> Result<Option<mavsitl_sim::record::Recorder>, Failure> {
    let Some(dir) = dir else {
        return Ok(None);
    };
    let gt = ground_truth_rate(scenario)?;
    mavsitl_sim::record::Recorder::create(dir, scenario, sim, frame, gt)
        .map(Some)
        .map_err(|e| match e.kind() {
            // What the scenario asks to record, not the directory.
            std::io::ErrorKind::InvalidInput => {
                Failure::input(e.to_string(), "see docs/reference/recordings.md")
            }
            _ => Failure::input(
                format!("{}: cannot record: {e}", dir.display()),
                "choose a writable directory",
            ),
        })
}

/// Keeps the mission flown with the recording (for `mavsitl plot`): a copy
/// in it — `mission.plan`, or `mission.waypoints` for a WPL file — named in
/// `meta.json` relative to the recording, so a recording moved or copied
/// elsewhere still plots; `mission_source` says where it came from.
/// Nothing when there is no mission.
pub fn note_mission(
    recorder: Option<&mut mavsitl_sim::record::Recorder>,
    dir: Option<&std::path::Path>,
    file: Option<&std::path::Path>,
    builtin: &str,
) {
    let (Some(r), Some(dir)) = (recorder, dir) else {
        return;
    };
    let (text, source) = match file {
        Some(f) => match std::fs::read_to_string(f) {
            Ok(t) => (
                t,
                std::fs::canonicalize(f).unwrap_or_else(|_| f.to_path_buf()),
            ),
            Err(_) => return,
        },
        None if builtin.is_empty() => return,
        None => (builtin.to_string(), "<built-in>".into()),
    };
    let name = if text.trim_start().starts_with("QGC WPL") {
        "mission.waypoints"
    } else {
        "mission.plan"
    };
    if std::fs::write(dir.join(name), &text).is_err() {
        return;
    }
    r.note("mission", serde_json::json!(name));
    r.note(
        "mission_source",
        serde_json::json!(source.display().to_string()),
    );
}

/// How a run is recorded, paced and ended: what the flying commands take
/// on their command lines.
pub struct RunPlan<'a> {
    /// Record into this directory.
    pub record: Option<&'a std::path::Path>,
    /// The frame recordings are written in.
    pub frame: mavsitl_core::geo::ExportFrame,
    /// The mission's file, kept with the recording (None: `builtin`'s
    /// text, when not empty).
    pub mission_file: Option<&'a std::path::Path>,
    /// The built-in mission's text ("" for none).
    pub builtin: &'a str,
    /// The run's end in sim time, s (None: the driver's).
    pub end_s: Option<f64>,
    /// Raised to stop (Ctrl-C).
    pub stop: &'static std::sync::atomic::AtomicBool,
}

/// The run of `ls` that `plan` asks for: ticking at the scenario's physics
/// rate, recorded (with the mission kept beside the recording) and ended
/// as asked. It runs as fast as it goes; pace it
/// ([`Session::paced`](crate::session::Session::paced)) once whoever flies
/// has started, so that the wall clock counts from there.
///
/// # Errors
/// A physics rate the scenario cannot have, or a recording that cannot be
/// opened (exit 2).
pub fn session(
    ls: mavsitl_sim::sim::Lockstep,
    scenario: &mavsitl_sim::scenario::Scenario,
    plan: &RunPlan,
) -> Result<crate::session::Session<mavsitl_sim::sim::Lockstep>, Failure> {
    physics_period_us(scenario)?;
    let mut recorder = open_recorder(plan.record, scenario, ls.sim(), plan.frame)?;
    note_mission(
        recorder.as_mut(),
        plan.record,
        plan.mission_file,
        plan.builtin,
    );
    session_with(ls, scenario, recorder, plan.end_s, plan.stop)
}

/// [`session`] with a recording already open (or none), ending at `end_s`
/// of sim time (None: the driver's) or when `stop` is raised.
///
/// # Errors
/// A physics rate the scenario cannot have (exit 2).
pub fn session_with(
    ls: mavsitl_sim::sim::Lockstep,
    scenario: &mavsitl_sim::scenario::Scenario,
    recorder: Option<mavsitl_sim::record::Recorder>,
    end_s: Option<f64>,
    stop: &'static std::sync::atomic::AtomicBool,
) -> Result<crate::session::Session<mavsitl_sim::sim::Lockstep>, Failure> {
    Ok(
        crate::session::Session::new(ls, physics_period_us(scenario)?)
            .until(end_s.map(mavsitl_core::time::SimTime::from_secs_f64))
            .recording(recorder)
            .interrupted_by(stop),
    )
}

/// The scenario's physics period, µs.
fn physics_period_us(scenario: &mavsitl_sim::scenario::Scenario) -> Result<u64, Failure> {
    mavsitl_core::time::PhysicsRate::new(scenario.physics_rate_hz)
        .map(|r| r.period_us())
        .map_err(|e| Failure::input(e.to_string(), ""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_camera_the_recording_cannot_find_is_the_scenarios_fault_not_the_directorys() {
        let src = mavsitl_sim::scenario::ScenarioSource {
            name: "s.json".into(),
            base_dir: ".".into(),
        };
        let text = r#"{"record": {"cameras": ["left"]},
            "vehicles": [{"kind": "multirotor", "sensors": {"cameras": [{"name": "right"}]}}]}"#;
        let scenario = mavsitl_sim::scenario::Scenario::from_json(text, &src).expect("scenario");
        let ls = scenario.build(&src).expect("build");
        let dir = std::env::temp_dir().join(format!("mavsitl-rec-{}", std::process::id()));
        let frame = mavsitl_core::geo::ExportFrame::Ned;
        let Err(e) = open_recorder(Some(&dir), &scenario, ls.sim(), frame) else {
            panic!("a camera no vehicle has was recorded");
        };
        assert_eq!(
            e.message,
            "record.cameras[0]: no camera \"left\" on any vehicle (the cameras: right)"
        );
        assert_eq!(e.hint.as_deref(), Some("see docs/reference/recordings.md"));
        assert_eq!(e.code, mavsitl_core::failure::INPUT);
        // An unwritable directory is the directory's.
        let file = dir.with_extension("file");
        std::fs::write(&file, "").expect("file");
        let ok = text.replace("left", "right");
        let scenario = mavsitl_sim::scenario::Scenario::from_json(&ok, &src).expect("scenario");
        let Err(e) = open_recorder(Some(&file.join("sub")), &scenario, ls.sim(), frame) else {
            panic!("recorded under a file");
        };
        assert!(e.message.contains(": cannot record: "), "{}", e.message);
        assert_eq!(e.hint.as_deref(), Some("choose a writable directory"));
        std::fs::remove_file(&file).ok();
        std::fs::remove_dir_all(&dir).ok();
    }
}
