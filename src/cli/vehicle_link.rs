//! SimpleFlight's MAVLink link to ground stations under `serve` and `fly
//! --gcs`: the options, and the endpoint they open
//! (`mavsitl::endpoint::EndpointLink`).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use mavsitl::autopilot::gcs::LinkConfig;
use mavsitl::endpoint::{EndpointLink, EndpointParts};
use mavsitl::geo::LocalFrame;
use mavsitl::mission::Mission;
use mavsitl::scenario::Scenario;
use mavsitl::setup::Flight;

use super::inputs::FlightInputs;
use super::CliError;
use mavsitl::pacing::{parse_speedup, Speedup};

/// The identity the vehicle claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AutopilotArg {
    /// MAV_AUTOPILOT_PX4: PX4 modes and actions in QGroundControl and MAVSDK.
    Px4,
    /// MAV_AUTOPILOT_GENERIC: honest identity; QGroundControl then offers the
    /// Plan view and telemetry but no guided actions.
    Generic,
}

/// Ground-station link options shared by `serve` and `fly --gcs`.
#[derive(Debug, Args, Clone)]
pub struct GcsArgs {
    /// Address (IP or IP:PORT) of the vehicle's UDP socket. The port defaults to
    /// 18570 + instance, PX4 SITL's GCS port; 0.0.0.0 exposes it to the network.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub gcs_bind: String,

    /// Where to send before any ground station is heard (repeatable). Default:
    /// 127.0.0.1:14550 (QGroundControl) and 127.0.0.1:14540 + instance (MAVSDK).
    #[arg(long = "gcs-out", value_name = "HOST:PORT")]
    pub gcs_out: Vec<SocketAddr>,

    /// Instance N: system id 1 + N, ports shifted by N as PX4 SITL's are.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub instance: u8,

    /// Speed-up over real time with a ground station attached (serve, fly --gcs;
    /// fly without --gcs always runs as fast as possible), or 'max'.
    #[arg(long, value_name = "X|max", value_parser = parse_speedup, default_value = "1")]
    pub speedup: Speedup,

    /// MAVLink 2 signing: a file holding the 32-byte secret key (raw 32 bytes,
    /// or 64 hex digits). Unsigned frames are then rejected.
    #[arg(long, value_name = "FILE")]
    pub signing_key: Option<PathBuf>,

    /// Identity claimed in the heartbeat.
    #[arg(long, value_enum, default_value_t = AutopilotArg::Px4)]
    pub autopilot: AutopilotArg,
}

/// Reads a signing key file.
fn read_key(path: &Path) -> Result<[u8; 32], CliError> {
    let bytes = std::fs::read(path).map_err(|e| {
        CliError::input(
            format!("{}: cannot read signing key: {e}", path.display()),
            "a file with 32 raw bytes or 64 hex digits",
        )
    })?;
    let mut key = [0u8; 32];
    if bytes.len() == 32 {
        key.copy_from_slice(&bytes);
        return Ok(key);
    }
    let text = String::from_utf8_lossy(&bytes);
    let hex = text.trim();
    let bad = || {
        CliError::input(
            format!(
                "{}: a signing key is 32 raw bytes or 64 hex digits",
                path.display()
            ),
            "e.g. `openssl rand -hex 32 > key.txt`",
        )
    };
    if hex.len() != 64 {
        return Err(bad());
    }
    for (i, k) in key.iter_mut().enumerate() {
        let pair = hex.get(2 * i..2 * i + 2).ok_or_else(bad)?;
        *k = u8::from_str_radix(pair, 16).map_err(|_| bad())?;
    }
    Ok(key)
}

/// The endpoint of `parts` on the socket `args` ask for.
fn open_endpoint(args: &GcsArgs, parts: EndpointParts) -> Result<EndpointLink, CliError> {
    let n = args.instance as u16;
    let bind: SocketAddr = match args.gcs_bind.parse::<SocketAddr>() {
        Ok(a) => a,
        Err(_) => {
            let ip: IpAddr = args.gcs_bind.parse().map_err(|_| {
                CliError::input(
                    format!("--gcs-bind '{}' is not an IP or IP:PORT", args.gcs_bind),
                    "e.g. 127.0.0.1 or 0.0.0.0:18570",
                )
            })?;
            SocketAddr::new(ip, 18570 + n)
        }
    };
    let targets = if args.gcs_out.is_empty() {
        let lo = IpAddr::V4(Ipv4Addr::LOCALHOST);
        vec![SocketAddr::new(lo, 14550), SocketAddr::new(lo, 14540 + n)]
    } else {
        args.gcs_out.clone()
    };
    let signing_key = match &args.signing_key {
        Some(p) => Some(read_key(p)?),
        None => None,
    };
    let cfg = LinkConfig {
        bind,
        targets,
        system_id: 1u8.saturating_add(args.instance),
        component_id: 1,
        signing_key,
    };
    Ok(EndpointLink::open(
        cfg,
        args.autopilot == AutopilotArg::Generic,
        parts,
    )?)
}

/// The endpoint for `flight` (built from `inputs`); with `record`, the link
/// is also written to `record/telemetry.tlog`.
pub fn for_flight(
    args: &GcsArgs,
    flight: &Flight,
    inputs: &FlightInputs,
    record: Option<&Path>,
) -> Result<EndpointLink, CliError> {
    open_endpoint(
        args,
        EndpointParts {
            status: flight.status.clone(),
            requests: flight.requests.clone(),
            params: flight.params.clone(),
            mission: Some(&inputs.mission),
            scenario: &inputs.scenario,
            frame: *flight.lockstep.sim().world().frame(),
            kind: flight.kind,
            motors: flight.motors,
            tlog: record.map(|d| d.join("telemetry.tlog")),
        },
    )
}

/// The endpoint for one SimpleFlight vehicle of a fleet, at instance
/// `args.instance` (the caller shifts it per vehicle).
pub fn for_pilot(
    args: &GcsArgs,
    pilot: &mavsitl::setup::Pilot,
    mission: Option<&Mission>,
    scenario: &Scenario,
    frame: LocalFrame,
    tlog: Option<PathBuf>,
) -> Result<EndpointLink, CliError> {
    open_endpoint(
        args,
        EndpointParts {
            status: pilot.status.clone(),
            requests: pilot.requests.clone(),
            params: pilot.params.clone(),
            mission,
            scenario,
            frame,
            kind: pilot.kind,
            motors: pilot.motors,
            tlog,
        },
    )
}
