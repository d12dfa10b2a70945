//! `mavsitl airsim` with a PX4Multirotor: PX4 SITL flies the vehicle over
//! its simulator interface (TCP 4560 + instance, in lockstep) while the
//! AirSim API serves state, sensors and the clock.

use std::io::Write as _;
use std::net::SocketAddr;
use std::time::Duration;

use mavsitl::airsim::api::FirmwarePilot;
use mavsitl::airsim::serve::Watch;
use mavsitl::airsim::settings::Px4Settings;
use mavsitl::airsim::{start, AirSimApi};
use mavsitl::bridge::ground_station::Firmware as Dialect;
use mavsitl::bridge::px4::Px4Port;
use mavsitl::firmware::flight::FirmwareFlight;
use mavsitl::pacing::Speedup;
use mavsitl::sim::Simulation;

use super::airsim::{open_recorder, pace, AirSimArgs};
use super::firmware::FirmwareFlightArgs;
use super::inputs::FlightInputs;
use super::px4::Px4Setup;
use super::CliError;

/// A PX4 flying the vehicle: connected yet, still running.
struct Px4Watch {
    port: Px4Port,
    flight: FirmwareFlight,
    connected: bool,
}

impl Watch for Px4Watch {
    fn ready(&mut self) -> Result<bool, String> {
        if self.connected {
            return Ok(true);
        }
        if let Some(why) = self.flight.exited() {
            return Err(why);
        }
        self.connected = self
            .port
            .borrow_mut()
            .wait_for_connection(Some(Duration::ZERO));
        if self.connected {
            eprintln!("PX4 connected: the clock runs");
        }
        Ok(self.connected)
    }

    fn after_tick(&mut self, sim: &Simulation) -> Option<Result<(), String>> {
        self.flight.after_tick(sim)
    }

    fn explain(&self, error: String) -> String {
        self.flight.explain(error)
    }
}

/// A PX4Multirotor: PX4 SITL flies the vehicle over its simulator interface
/// (TCP 4560 + instance, in lockstep); the API serves state, sensors and
/// the clock.
pub(super) fn run(
    args: &AirSimArgs,
    inputs: FlightInputs,
    clock_speed: Speedup,
    px4: &Px4Settings,
) -> Result<(), CliError> {
    let setup = Px4Setup {
        instance: px4.instance,
        bind: std::net::IpAddr::from([127, 0, 0, 1]),
        keep_workdir: args.keep_workdir,
        record: args.record.as_deref(),
        params: &px4.parameters,
        vehicle: 0,
    };
    let opts = super::px4::bridge_options(&setup, &inputs, args.px4_build.is_some());
    let port = mavsitl::firmware::px4::listen(&opts, "give the vehicle another TcpPort")?;
    let lockstep = super::px4::build(&inputs, &port, &opts)?;
    let recorder = open_recorder(args, &inputs, lockstep.sim())?;
    let server = start::bind_server(SocketAddr::new(args.bind, args.port))?;
    println!(
        "mavsitl airsim: AirSim API on tcp {}; PX4 flies the vehicle (simulator port tcp {}); {}",
        server.local_addr(),
        opts.listen,
        start::clock_text(clock_speed)
    );
    let launch = match &args.px4_build {
        Some(dir) => Some(super::px4::launch_spec(dir, &setup, &inputs, clock_speed)?),
        None => {
            for line in start::px4_by_hand(px4) {
                println!("{line}");
            }
            None
        }
    };
    let _ = std::io::stdout().flush();
    let flight_args = FirmwareFlightArgs {
        mission: None,
        ready_timeout: mavsitl::firmware::launcher::READY_TIMEOUT_S,
        // No mission: not used.
        mission_timeout: 1800.0,
        gcs_forward: None,
        keep_workdir: args.keep_workdir,
        params: None,
        adsb: false,
    };
    let flight = FirmwareFlight::start(
        Dialect::Px4,
        px4.instance,
        &flight_args.plan(&inputs, lockstep.sim().world().frame()),
        launch,
        true,
    )?;
    let stats = port.clone();
    let name = start::api_names(&inputs, args.settings.is_some())
        .into_iter()
        .next()
        .unwrap_or_default();
    let mut api = AirSimApi::with_firmware(
        lockstep,
        &name,
        FirmwarePilot {
            name: "PX4",
            mavlink: format!(
                "MAVSDK on udp://:{}, QGroundControl on udp 14550",
                start::px4_offboard_port(px4.instance)
            ),
            armed: Box::new(move || stats.borrow().stats().armed),
        },
    );
    api.set_paused(args.paused);
    let mut watch = Px4Watch {
        port,
        flight,
        connected: false,
    };
    let outcome = start::serve_and_record(
        &mut api,
        &server,
        pace(args, clock_speed),
        recorder,
        &mut watch,
    );
    super::firmware::finish(
        watch.flight,
        api.sim(),
        &outcome,
        args.record.as_deref(),
        String::new(),
    );
    outcome.map_err(CliError::run)
}
