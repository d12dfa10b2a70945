//! What a flight is made of, from the command line: the mission, the
//! scenario (or the built-in quad or boat), the seed, faults, home and the
//! parameter file, loaded and checked once for every subcommand that flies.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use mavsitl::mission::Mission;
use mavsitl::scenario::{Home, Scenario, ScenarioSource, VehicleKind};

use super::{home, CliError};

/// Which vehicle flies when no scenario is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VehicleArg {
    /// The generic quad (AirSim's SimpleFlight "Generic").
    Quad,
    /// The twin-thruster USV.
    Boat,
}

pub(super) const DEFAULT_MISSION: &str = include_str!("../../missions/quad_square.plan");
const DEFAULT_MISSION_NAME: &str = "<built-in missions/quad_square.plan>";
const QUAD_SCENARIO: &str =
    r#"{"vehicles":[{"name":"quad","kind":"multirotor","airframe":"generic_quad"}]}"#;
const BOAT_SCENARIO: &str = r#"{"vehicles":[{"name":"boat","kind":"boat","airframe":"usv_twin"}]}"#;

/// Longest simulated run a time limit may ask for, s (115 days; as a
/// scenario's `duration_s`).
pub const MAX_RUN_S: f64 = 1e7;

/// Longest a bridge may wait for its firmware's answer, s (a day).
pub const MAX_WAIT_S: f64 = 86_400.0;

/// A clap parser for seconds within `min..=max`: anything else (0, a
/// negative, NaN, inf, 1e300) is refused with exit 2 and the range, the
/// value as written.
pub fn seconds_in(min: f64, max: f64) -> impl Fn(&str) -> Result<f64, String> + Clone {
    move |s: &str| match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= min && x <= max => Ok(x),
        _ => Err(format!(
            "'{s}' is not a time here: give seconds from {} to {}",
            mavsitl::time::show(min),
            mavsitl::time::show(max)
        )),
    }
}

fn input(msg: impl Into<String>, hint: &str) -> CliError {
    CliError::input(msg, hint)
}

pub(super) use mavsitl::setup::FlightInputs;

/// The word a vehicle kind has on the command line (`--vehicle`) and in
/// summaries' titles.
pub(super) fn vehicle_word(kind: VehicleKind) -> &'static str {
    kind.word()
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
                .map_err(|e| input(e.to_string(), "see docs/reference/scenario.md"))?,
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
    super::add_faults(
        &mut scenario,
        &source,
        Some(mission.items.len()),
        args.faults,
    )?;
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

/// East spacing of the vehicles of `--count`, m.
pub(super) const COUNT_SPACING_M: f64 = 5.0;

/// `--count N` vehicles: the scenario's one vehicle copied N times,
/// `COUNT_SPACING_M` apart eastwards (named `<name><k>`), or its N vehicles.
pub(super) fn copies(inputs: &mut FlightInputs, count: u8) -> Result<(), CliError> {
    let vehicles = &mut inputs.scenario.vehicles;
    let n = count as usize;
    match vehicles.len() {
        1 if n > 1 => {
            let one = vehicles[0].clone();
            vehicles.clear();
            for k in 0..n {
                let mut v = one.clone();
                v.name = format!("{}{k}", one.name);
                v.initial.east_m += COUNT_SPACING_M * k as f64;
                vehicles.push(v);
            }
            Ok(())
        }
        m if m == n => Ok(()),
        m => Err(CliError::input(
            format!("--count {n} with a scenario of {m} vehicles"),
            "give a scenario of one vehicle (copied) or of N",
        )),
    }
}

/// Refuses `--instance I --count N` whose last vehicle would need a MAVLink
/// system id beyond 255 (vehicle k is system id 1 + I + k, as PX4 SITL's
/// instances are) — two vehicles would otherwise share id 255 and a port.
pub(super) fn check_instances(instance: u8, count: u8) -> Result<(), CliError> {
    let last = u16::from(instance) + u16::from(count.max(1)) - 1;
    if last > 254 {
        return Err(CliError::input(
            format!(
                "--instance {instance} with --count {count}: the last vehicle would be instance {last}, system id {}; instances go from 0 to 254 (system ids 1 to 255)",
                last + 1
            ),
            "give a smaller --instance or --count",
        ));
    }
    Ok(())
}
