//! SimpleFlight's MAVLink link to ground stations under `serve` and `fly
//! --gcs`: the options, and the link they choose
//! (`mavsitl::endpoint::LinkChoice`).

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use mavsitl::endpoint::LinkChoice;
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

impl GcsArgs {
    /// The link these options choose.
    pub fn choice(&self) -> LinkChoice {
        LinkChoice {
            bind: self.gcs_bind.clone(),
            targets: self.gcs_out.clone(),
            instance: self.instance,
            signing_key: self.signing_key.clone(),
            generic: self.autopilot == AutopilotArg::Generic,
        }
    }
}
