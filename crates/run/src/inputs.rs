//! What a flight is made of, from the caller's choices: the mission, the
//! scenario (or the built-in quad, boat or rover), the seed, faults, home and
//! the parameter file, loaded and checked once for every command that flies.

use std::path::PathBuf;

use mavsitl_core::geo::{GeoPoint, LocalFrame};
pub use mavsitl_core::vehicle::BuiltinVehicle;
use mavsitl_mavlink::mission::Mission;
use mavsitl_sim::scenario::{Home, Scenario, ScenarioSource};

use crate::setup::FlightInputs;
use crate::{home, StartError};

/// What a flight is asked to be: the files and overrides the command line
/// (or any caller) gives.
#[derive(Debug, Clone, Copy)]
pub struct InputArgs<'a> {
    /// The plan (.plan or WPL), if given.
    pub mission: Option<&'a PathBuf>,
    /// The built-in vehicle (without a scenario): else the plan's kind.
    pub vehicle: Option<BuiltinVehicle>,
    /// The scenario, if given.
    pub scenario: Option<&'a PathBuf>,
    /// The noise seed, over the scenario's.
    pub seed: Option<u64>,
    /// Faults to inject besides the scenario's.
    pub faults: &'a [mavsitl_core::faults::FaultSpec],
    /// Home, over the scenario's and the plan's.
    pub home: Option<Home>,
    /// SimpleFlight's parameter file.
    pub params: Option<&'a PathBuf>,
    /// Fly on perfect state (SF_GROUND_TRUTH 1).
    pub ground_truth: bool,
}

/// The built-in mission: missions/quad_square.plan.
pub const DEFAULT_MISSION: &str = include_str!("../../../missions/quad_square.plan");
const DEFAULT_MISSION_NAME: &str = "<built-in missions/quad_square.plan>";
/// A scenario of vehicle `v` alone, with everything else at its default.
fn builtin_scenario(v: BuiltinVehicle) -> String {
    format!(
        r#"{{"vehicles":[{{"name":"{}","kind":"{}","airframe":"{}"}}]}}"#,
        v.kind().word(),
        v.kind().name(),
        v.airframe()
    )
}

/// Refuses a mission with nothing to fly (no navigation item): it would end
/// "completed" with the vehicle hovering where it took off.
fn require_navigation(mission: &Mission, name: &str) -> Result<(), StartError> {
    if mission.items.iter().any(|i| (16..=99).contains(&i.command)) {
        return Ok(());
    }
    Err(StartError::new(
        format!("{name}: the mission has no navigation item to fly"),
        "add waypoints in QGroundControl's Plan view; missions/ has examples",
    ))
}

/// Loads the mission (the built-in square when `builtin` and none is given,
/// else an empty mission), the scenario (or the built-in vehicle), home and
/// the parameter file.
///
/// # Errors
/// A file that cannot be read or is not valid, named, and what would do.
pub fn load_inputs(args: &InputArgs, builtin: bool) -> Result<FlightInputs, StartError> {
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
        StartError::new(
            e.to_string(),
            "missions/ has examples; QGroundControl writes .plan files",
        )
    })?;
    if args.mission.is_some() {
        require_navigation(&mission, &mission_name)?;
    }
    let builtin_vehicle = args
        .vehicle
        .unwrap_or_else(|| BuiltinVehicle::of_plan(mission.vehicle_type));
    // Scenario.
    let (mut scenario, source) = match args.scenario {
        Some(p) => (
            Scenario::load(p)
                .map_err(|e| StartError::new(e.to_string(), "see docs/reference/scenario.md"))?,
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
            let text = builtin_scenario(builtin_vehicle);
            (
                Scenario::from_json(&text, &src).map_err(|e| StartError::new(e.to_string(), ""))?,
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
    .map_err(|e| StartError::new(format!("home: {e}"), "--home LAT,LON,ALT[,HEADING]"))?;
    if let Some(seed) = args.seed {
        scenario.seed = seed;
    }
    add_faults(
        &mut scenario,
        &source,
        Some(mission.items.len()),
        args.faults,
    )?;
    let mut param_text = match args.params {
        Some(p) => Some((
            std::fs::read_to_string(p)
                .map_err(|e| StartError::new(format!("{}: cannot read: {e}", p.display()), ""))?,
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

/// How far a plan's planned home may lie from the flight's home before the
/// user is told, m: beyond it the plan was laid out somewhere else.
pub const PLAN_HOME_WARN_M: f64 = 1000.0;

/// A word for the user when the plan's planned home lies more than
/// [`PLAN_HOME_WARN_M`] (horizontally) from the home the flight starts at
/// (the command line's or the scenario's, which win over the plan's): the
/// vehicle would drive or fly kilometres to its first waypoint.
pub fn plan_home_far(inputs: &FlightInputs) -> Option<String> {
    let plan = inputs.mission.home?;
    let home = &inputs.scenario.home;
    let frame = LocalFrame::new(GeoPoint::from_deg(home.lat_deg, home.lon_deg, home.alt_m));
    let ned = frame.to_ned(&GeoPoint::from_deg(plan.lat_deg, plan.lon_deg, home.alt_m));
    let d_m = ned.x.hypot(ned.y);
    (d_m > PLAN_HOME_WARN_M).then(|| {
        format!(
            "{}: the plan's home ({:.6}, {:.6}) is {:.1} km from the flight's ({:.6}, {:.6}), \
             where the vehicle starts: give the scenario the plan's home, or --home",
            inputs.mission_name,
            plan.lat_deg,
            plan.lon_deg,
            d_m / 1000.0,
            home.lat_deg,
            home.lon_deg
        )
    })
}

/// East spacing of the vehicles of `--count`, m.
pub const COUNT_SPACING_M: f64 = 5.0;

/// `--count N` vehicles: the scenario's one vehicle copied N times,
/// `COUNT_SPACING_M` apart eastwards (named `<name><k>`), or its N vehicles.
pub fn copies(inputs: &mut FlightInputs, count: u8) -> Result<(), StartError> {
    let n = count as usize;
    match inputs.scenario.vehicles.len() {
        1 if n > 1 => {
            inputs.scenario.repeat_first_vehicle(n, COUNT_SPACING_M);
            Ok(())
        }
        m if m == n => Ok(()),
        m => Err(StartError::new(
            format!("--count {n} with a scenario of {m} vehicles"),
            "give a scenario of one vehicle (copied) or of N",
        )),
    }
}

/// Refuses `--instance I --count N` whose last vehicle would need a MAVLink
/// system id beyond 255 (vehicle k is system id 1 + I + k, as PX4 SITL's
/// instances are) — two vehicles would otherwise share id 255 and a port.
pub fn check_instances(instance: u8, count: u8) -> Result<(), StartError> {
    let last = u16::from(instance) + u16::from(count.max(1)) - 1;
    if last > 254 {
        return Err(StartError::new(
            format!(
                "--instance {instance} with --count {count}: the last vehicle would be instance {last}, system id {}; instances go from 0 to 254 (system ids 1 to 255)",
                last + 1
            ),
            "give a smaller --instance or --count",
        ));
    }
    Ok(())
}

/// Adds `--fault`s to the scenario after checking that each has a vehicle,
/// a zone, the rotor or thruster it fails and, with `@itemN`, an item N of
/// the mission flown (`items`, None: no mission).
///
/// # Errors
/// The first fault with nothing to act on, and what it lacks.
pub fn add_faults(
    scenario: &mut mavsitl_sim::scenario::Scenario,
    source: &mavsitl_sim::scenario::ScenarioSource,
    items: Option<usize>,
    faults: &[mavsitl_core::faults::FaultSpec],
) -> Result<(), StartError> {
    for f in faults {
        let hint = "--fault KIND@START[+DURATION][:key=value,...]; see docs/reference/faults.md";
        if let Some((key, why)) = scenario.fault_target_problem(f, source) {
            return Err(StartError::new(
                format!("--fault {}: {key}: {why}", f.kind),
                hint,
            ));
        }
        if let (Some(i), Some(n)) = (f.at_item, items) {
            if i as usize >= n {
                return Err(StartError::new(
                    format!(
                        "--fault {}: at_item: the mission has no item {i}: its items are 0..={}",
                        f.kind,
                        n.saturating_sub(1)
                    ),
                    hint,
                ));
            }
        }
        if scenario.fault_vehicle(f).is_none() {
            let name = f.vehicle.as_deref().unwrap_or("");
            return Err(StartError::new(
                format!("--fault {}: vehicle: no vehicle named '{name}'", f.kind),
                hint,
            ));
        }
        if let Some(z) = f
            .zone
            .as_deref()
            .filter(|z| scenario.fault_zone(z).is_none())
        {
            return Err(StartError::new(
                format!("--fault {}: zone: no zone named '{z}'", f.kind),
                hint,
            ));
        }
        scenario.faults.push(f.clone());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use mavsitl_mavlink::mission::PlanHome;

    use super::*;

    /// A flight from 47.35° N, 8.55° E with a plan whose home is `d_lat`
    /// degrees north of it.
    fn inputs(d_lat: f64) -> FlightInputs {
        let source = ScenarioSource {
            name: "s.json".into(),
            base_dir: PathBuf::from("."),
        };
        let scenario = Scenario::from_json(
            r#"{"home":{"lat_deg":47.35,"lon_deg":8.55,"alt_m":400},"vehicles":[{"kind":"boat"}]}"#,
            &source,
        )
        .expect("scenario");
        let mission = Mission {
            home: Some(PlanHome {
                lat_deg: 47.35 + d_lat,
                lon_deg: 8.55,
                alt_m: 400.0,
            }),
            ..Mission::default()
        };
        FlightInputs {
            mission,
            mission_name: "box.plan".into(),
            scenario,
            source,
            param_text: None,
        }
    }

    /// A degree of latitude at 47° N is 111.2 km of meridian (WGS-84:
    /// a(1 − e²)/(1 − e² sin²φ)^1.5 per radian), so 0.0085° is 945 m, said
    /// nothing of, and 0.0095° (1056 m) or 0.0433° south (4.8 km) are told
    /// with the distance; a plan with no home says nothing.
    #[test]
    fn a_plan_laid_out_far_from_the_flights_home_is_told() {
        assert_eq!(plan_home_far(&inputs(0.0)), None);
        assert_eq!(plan_home_far(&inputs(0.0085)), None);
        let w = plan_home_far(&inputs(0.0095)).expect("1.06 km");
        assert_eq!(
            w,
            "box.plan: the plan's home (47.359500, 8.550000) is 1.1 km from the flight's \
             (47.350000, 8.550000), where the vehicle starts: give the scenario the plan's \
             home, or --home"
        );
        let w = plan_home_far(&inputs(-0.0433)).expect("4.8 km");
        assert!(w.contains(" is 4.8 km from "), "{w}");
        let mut none = inputs(1.0);
        none.mission.home = None;
        assert_eq!(plan_home_far(&none), None);
    }

    /// The sim crate's own copy of SimpleFlight's loop rate, which it
    /// cannot import, is SimpleFlight's.
    #[test]
    fn the_scenarios_simpleflight_rate_is_simpleflights() {
        assert_eq!(
            mavsitl_sim::scenario::SIMPLEFLIGHT_PHYSICS_RATE_HZ,
            mavsitl_simpleflight::simpleflight::RATE_HZ
        );
    }

    /// `--count`'s copies keep which rates the file left to their
    /// defaults: a bridge's physics rate refits every copy, not the first
    /// alone. At 320 Hz (ArduPilot at 320 frames/s from a 250 Hz file) the
    /// 50 Hz barometer of each becomes 40 Hz, the divider nearest 50.
    #[test]
    fn copies_follow_a_bridges_physics_rate_each() {
        let mut one = inputs(0.0);
        one.scenario = Scenario::from_json(
            r#"{"physics_rate_hz":250,"vehicles":[{"kind":"multirotor","sensors":{"gps":{"rate_hz":5}}}]}"#,
            &one.source,
        )
        .expect("scenario");
        copies(&mut one, 1).expect("one");
        assert_eq!(
            one.scenario.vehicles[0].name, "vehicle0",
            "one is left as it is"
        );
        copies(&mut one, 3).expect("three");
        one.scenario.set_physics_rate_hz(320);
        let vehicles = &one.scenario.vehicles;
        assert_eq!(vehicles.len(), 3);
        for (k, v) in vehicles.iter().enumerate() {
            assert_eq!(v.name, format!("vehicle0{k}"));
            assert_eq!(v.initial.east_m, COUNT_SPACING_M * k as f64);
            assert_eq!(
                (v.sensors.baro.rate_hz, v.sensors.gps.rate_hz),
                (40, 5),
                "{k}"
            );
        }
        one.scenario
            .validate(&one.source)
            .expect("every copy fits 320 Hz");
    }
}
