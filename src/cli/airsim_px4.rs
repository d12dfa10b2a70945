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

use super::airsim::{clock_text, open_recorder, pace, AirSimArgs};
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
        clock_text(clock_speed)
    );
    let launch = match &args.px4_build {
        Some(dir) => Some(super::px4::launch_spec(dir, &setup, &inputs, clock_speed)?),
        None => {
            print_px4_instructions(px4);
            None
        }
    };
    let _ = std::io::stdout().flush();
    let flight_args = FirmwareFlightArgs {
        mission: None,
        ready_timeout: 120.0,
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
                offboard_port(px4.instance)
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

/// The UDP port PX4 instance `n` sends its offboard (MAVSDK) link to:
/// 14540 + n, and 14549 from n = 10 on (PX4's px4-rc.mavlink).
fn offboard_port(n: u8) -> u16 {
    if n < 10 {
        14540 + n as u16
    } else {
        14549
    }
}

/// What to run in another terminal when PX4 is not started here.
fn print_px4_instructions(px4: &Px4Settings) {
    println!(
        "  start PX4 SITL instance {0} in another terminal: source firmware_configs/px4/generic_quad.env && cd PX4-Autopilot/build/px4_sitl_default/rootfs && ../bin/px4 -d -i {0}",
        px4.instance
    );
    if !px4.parameters.is_empty() {
        let names: Vec<&str> = px4.parameters.iter().map(|(n, _)| n.as_str()).collect();
        println!(
            "  (and set the settings' Parameters there: {}; --px4-build sets them for you)",
            names.join(", ")
        );
    }
}
