//! What a flight is made of, from the command line: the mission, the
//! scenario (or the built-in quad or boat), the seed, faults, home and the
//! parameter file, loaded and checked once for every subcommand that flies.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use mavsitl::scenario::Home;

use super::{home, CliError};
use mavsitl::inputs::{load_inputs, plan_home_far, BuiltinVehicle, InputArgs};

/// Which vehicle flies when no scenario is given: a class, or its shipped
/// airframe's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VehicleArg {
    /// The generic quad (AirSim's SimpleFlight "Generic").
    #[value(alias = "generic_quad")]
    Quad,
    /// The twin-thruster USV.
    #[value(alias = "usv_twin")]
    Boat,
    /// The skid-steer rover (Clearpath's Jackal, 17 kg).
    #[value(name = "rover_skid", alias = "jackal")]
    RoverSkid,
    /// The Ackermann rover (the F1TENTH 1/10-scale car, 3.47 kg).
    #[value(name = "rover_ackermann", alias = "f1tenth")]
    RoverAckermann,
}

pub(super) use mavsitl::inputs::DEFAULT_MISSION;

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

/// The most threads a world may be stepped on.
pub const MAX_THREADS: usize = 256;

/// A clap parser for `--threads`: a whole number from 1 to [`MAX_THREADS`].
pub fn threads(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        _ => Err(format!(
            "'{s}' threads: give a whole number from 1 to {MAX_THREADS}"
        )),
    }
}

pub(super) use mavsitl::setup::FlightInputs;

/// The simulated world a flight flies in: scenario, home, seed, faults.
#[derive(Debug, Args)]
pub struct WorldArgs {
    /// Scenario (vehicle, environment, sensors); its home overrides the plan's.
    #[arg(long, value_name = "S")]
    pub scenario: Option<PathBuf>,

    /// Home LAT,LON,ALT[,HEADING]; overrides the plan's, the scenario's and
    /// PX4_HOME_LAT/LON/ALT. A launched firmware is given the same home.
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
        let vehicle = vehicle.or(mission.is_none().then_some(fallback));
        self.flight(mission, vehicle, None, (false, false))
    }

    /// A SimpleFlight flight of `mission` (with `builtin`, the built-in
    /// square when none is given) by `vehicle` (else the plan's kind), with
    /// its parameter file `params`, on perfect state with `ground_truth`.
    pub(super) fn flight(
        &self,
        mission: Option<&PathBuf>,
        vehicle: Option<VehicleArg>,
        params: Option<&PathBuf>,
        (ground_truth, builtin): (bool, bool),
    ) -> Result<FlightInputs, CliError> {
        let args = InputArgs {
            mission,
            vehicle: vehicle.map(VehicleArg::builtin),
            scenario: self.scenario.as_ref(),
            seed: self.seed,
            faults: &self.faults,
            home: self.home,
            params,
            ground_truth,
        };
        let inputs = load_inputs(&args, builtin)?;
        if let Some(w) = plan_home_far(&inputs) {
            eprintln!("warning: {w}");
        }
        Ok(inputs)
    }
}

impl VehicleArg {
    /// The built-in vehicle it names.
    pub fn builtin(self) -> BuiltinVehicle {
        match self {
            VehicleArg::Quad => BuiltinVehicle::Quad,
            VehicleArg::Boat => BuiltinVehicle::Boat,
            VehicleArg::RoverSkid => BuiltinVehicle::RoverSkid,
            VehicleArg::RoverAckermann => BuiltinVehicle::RoverAckermann,
        }
    }
}
