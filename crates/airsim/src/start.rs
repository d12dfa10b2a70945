//! `mavsitl airsim` started: AirSim's settings.json imported, SimpleFlight
//! set up as AirSim's (on ground truth, staying armed), the server bound
//! and served in the run loop until the end. Whoever flies plugs in as a
//! [`Watch`]: nobody for SimpleFlight, a PX4 from above.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use mavsitl_core::failure::Failure;
use mavsitl_core::time::SimTime;
use mavsitl_core::vehicle::VehicleKind;
use mavsitl_mavlink::mission::Mission;
use mavsitl_run::pacing::Speedup;
use mavsitl_run::session::Session;
use mavsitl_run::setup::{self, FlightInputs};
use mavsitl_sim::physics::RoverDrive;
use mavsitl_sim::record::Recorder;
use mavsitl_sim::scenario::load::Airframe;
use mavsitl_sim::scenario::{ControllerSpec, Scenario, ScenarioSource};
use mavsitl_sim::sim::Lockstep;

use crate::api::{ApiVehicle, CarVehicle, SimpleFlightVehicle};
use crate::car::{CarChannels, CarDriver, CarLink};
use crate::serve::{ApiDriver, ApiWorld, Watch};
use crate::{AirSimApi, Server};

/// How the served clock runs and ends.
#[derive(Clone, Copy)]
pub struct Pace {
    /// Sim time per real second while not paused (AirSim's ClockSpeed).
    pub clock_speed: Speedup,
    /// The run's end in sim time, s (None: until stopped).
    pub duration_s: Option<f64>,
    /// Raised to stop (Ctrl-C).
    pub stop: &'static AtomicBool,
}

/// SimpleFlight's parameters in the AirSim mode, as AirSim's SimpleFlight
/// behaves: on ground truth (ready to arm at once), no automatic disarming
/// (AirSim's stays armed on the ground), and descents as fast as PX4's
/// limit allows (AirSim's examples ask 5 m/s; MPC_Z_VEL_MAX_DN tops at 4).
pub const AIRSIM_PARAMS: &str =
    "SF_GROUND_TRUTH 1\nCOM_DISARM_PRFLT -1\nCOM_DISARM_LAND -1\nMPC_Z_VEL_MAX_DN 4\n";

/// The AirSim mode's parameter text: [`AIRSIM_PARAMS`], then SimpleFlight
/// on its estimator when asked, then the settings' own `Parameters` (last
/// wins).
pub fn param_text(estimator: bool, from_settings: &[(String, String)]) -> String {
    let mut text = AIRSIM_PARAMS.to_string();
    if estimator {
        text.push_str("SF_GROUND_TRUTH 0\n");
    }
    for (name, value) in from_settings {
        text.push_str(&format!("{name} {value}\n"));
    }
    text
}

/// The API's names of the scenario's vehicles: AirSim's default
/// "SimpleFlight" for a lone vehicle of a scenario, else the scenario's (or
/// the settings') own.
pub fn api_names(inputs: &FlightInputs, from_settings: bool) -> Vec<String> {
    let vehicles = &inputs.scenario.vehicles;
    if vehicles.len() == 1 && !from_settings {
        return vec![crate::api::VEHICLE_NAME.to_string()];
    }
    vehicles.iter().map(|v| v.name.clone()).collect()
}

/// Every vehicle of `inputs` flown by SimpleFlight with its defaults, as
/// AirSim's SimpleFlight vehicles are (and as the recording then says).
pub fn as_simpleflight(inputs: &mut FlightInputs) {
    for v in &mut inputs.scenario.vehicles {
        v.controller = ControllerSpec::SimpleFlight(Default::default());
    }
}

/// The API over SimpleFlight flying every vehicle of `inputs` with the
/// AirSim mode's `params`, each addressed by its name in `names`; a
/// ground station's reboot or the client's `reset` builds it afresh. With
/// it, the names of the vehicles it serves, in order.
///
/// # Errors
/// A scenario that does not build, or a vehicle that is not a multirotor
/// (exit 2).
pub fn simpleflight_api(
    inputs: FlightInputs,
    params: String,
    names: Vec<String>,
) -> Result<(AirSimApi, Vec<String>), Failure> {
    let mut inputs = inputs;
    as_simpleflight(&mut inputs);
    let inputs = std::rc::Rc::new(inputs);
    let build = {
        let inputs = inputs.clone();
        let names = names.clone();
        move || {
            let plan = setup::PilotPlan {
                mission: &inputs.mission,
                mission_name: &inputs.mission_name,
                param_file: Some((&params, "the AirSim mode's parameters")),
                auto_arm: false,
            };
            let fleet = setup::fleet(&inputs.scenario, &inputs.source, &plan)?;
            let vehicles: Vec<ApiVehicle> = fleet
                .pilots
                .into_iter()
                .map(|p| {
                    ApiVehicle::SimpleFlight(SimpleFlightVehicle {
                        name: names.get(p.index).cloned().unwrap_or_default(),
                        index: p.index,
                        status: p.status,
                        requests: p.requests,
                    })
                })
                .collect();
            Ok::<_, setup::SetupError>((fleet.lockstep, vehicles))
        }
    };
    let (lockstep, vehicles) =
        build().map_err(|e| Failure::input(e.to_string(), "check the scenario"))?;
    if inputs
        .scenario
        .vehicles
        .iter()
        .any(|v| v.kind != VehicleKind::Multirotor)
    {
        return Err(Failure::input(
            "airsim: a vehicle of the scenario is not a multirotor",
            "AirSim's API here is the multirotor one: use quads",
        ));
    }
    let served = names.iter().take(vehicles.len()).cloned().collect();
    Ok((AirSimApi::new(lockstep, vehicles, Box::new(build)), served))
}

/// The API over AirSim's car API: every vehicle of `inputs` an Ackermann
/// rover the client's car controls drive, each addressed by its name in
/// `names`; the client's `reset` builds it afresh. With it, the names of
/// the cars it serves, in order.
///
/// # Errors
/// A scenario that does not build, or a vehicle that is not an Ackermann
/// rover (exit 2).
pub fn car_api(
    inputs: FlightInputs,
    names: Vec<String>,
) -> Result<(AirSimApi, Vec<String>), Failure> {
    let mut channels = Vec::new();
    for i in 0..inputs.scenario.vehicles.len() {
        match inputs.scenario.resolve_airframe(i, &inputs.source) {
            Ok(Airframe::Rover(p)) if p.drive == RoverDrive::Ackermann => {
                channels.push(CarChannels::of(&p));
            }
            _ => {
                return Err(Failure::input(
                    "airsim: with SimMode \"Car\" every vehicle is a car: an Ackermann rover",
                    "use PhysXCar vehicles (mavsitl drives the f1tenth airframe)",
                ))
            }
        }
    }
    let inputs = std::rc::Rc::new(inputs);
    let build = {
        let inputs = inputs.clone();
        let names = names.clone();
        move || {
            let sim = inputs.scenario.build_simulation(&inputs.source)?;
            let rate = sim.rate().hz();
            let mut lockstep = Lockstep::new(sim);
            let mut vehicles = Vec::new();
            for (index, ch) in channels.iter().enumerate() {
                let controls: CarLink = Default::default();
                let driver = CarDriver::new(controls.clone(), *ch, rate);
                lockstep.attach(index, Box::new(driver))?;
                vehicles.push(ApiVehicle::Car(CarVehicle {
                    name: names.get(index).cloned().unwrap_or_default(),
                    index,
                    controls,
                }));
            }
            Ok::<_, setup::SetupError>((lockstep, vehicles))
        }
    };
    let (lockstep, vehicles) =
        build().map_err(|e| Failure::input(e.to_string(), "check the settings"))?;
    let served = names.iter().take(vehicles.len()).cloned().collect();
    Ok((AirSimApi::new(lockstep, vehicles, Box::new(build)), served))
}

/// The RPC server on `addr`.
///
/// # Errors
/// An address that cannot be bound (exit 2), with what to try.
pub fn bind_server(addr: SocketAddr) -> Result<Server, Failure> {
    Server::bind(addr).map_err(|e| {
        Failure::input(
            format!("cannot listen on TCP {addr}: {e}"),
            "another simulator (AirSim, mavsitl) may hold it: use --port",
        )
    })
}

/// Serves the API until the end (Ctrl-C or the duration), then closes the
/// recording.
///
/// # Errors
/// Why the run ended early, or why the recording could not be closed.
pub fn serve_and_record(
    api: &mut AirSimApi,
    server: &Server,
    pace: Pace,
    recorder: Option<Recorder>,
    watch: &mut dyn Watch,
) -> Result<(), String> {
    let period = api.sim().rate().period_us();
    // Ticks paced at the clock speed, continues included, as AirSim's.
    let mut run = Session::new(ApiWorld::new(api), period)
        .paced(pace.clock_speed)
        .until(pace.duration_s.map(SimTime::from_secs_f64))
        .recording(recorder)
        .interrupted_by(pace.stop);
    let outcome = run.run(&mut ApiDriver::new(server, watch));
    run.finish(outcome.is_ok())?;
    outcome
}

/// The flight's inputs from AirSim's settings.json, and the rest of what
/// the settings say (ClockSpeed, external physics, who flies).
///
/// # Errors
/// A file that cannot be read or imported, or a scenario it makes that
/// does not validate (exit 2).
pub fn from_settings(
    path: &Path,
    seed: Option<u64>,
) -> Result<(FlightInputs, crate::settings::Imported), Failure> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::input(format!("{name}: cannot read: {e}"), ""))?;
    let imported = crate::settings::import(&text, &name)
        .map_err(|e| Failure::input(e, "see docs/commands/airsim.md"))?;
    for w in &imported.warnings {
        eprintln!("warning: {w}");
    }
    let source = ScenarioSource {
        name: name.clone(),
        base_dir: path.parent().map(PathBuf::from).unwrap_or_default(),
    };
    let mut scenario = Scenario::from_json(&imported.scenario.to_string(), &source)
        .map_err(|e| Failure::input(e.to_string(), "see docs/commands/airsim.md"))?;
    if let Some(seed) = seed {
        scenario.seed = seed;
    }
    Ok((
        FlightInputs {
            mission: Mission::default(),
            mission_name: "none".into(),
            scenario,
            source,
            param_text: None,
        },
        imported,
    ))
}

/// What `mavsitl airsim` serves, loaded: the flight's inputs and what the
/// settings say besides.
pub struct Loaded {
    /// The world (from settings.json, the scenario, or the built-in quad).
    pub inputs: FlightInputs,
    /// The clock speed: the command line's, else the settings', else 1.
    pub clock_speed: Speedup,
    /// The settings' PhysicsEngineName is ExternalPhysicsEngine.
    pub external_physics: bool,
    /// Who flies: SimpleFlight, or the settings' PX4.
    pub vehicle_type: crate::settings::VehicleType,
    /// The settings' SimpleFlight `Parameters`.
    pub sf_params: Vec<(String, String)>,
}

/// Loads `settings` (AirSim's settings.json), else `scenario`, else the
/// built-in quad, with `seed`; the clock speed `clock_speed` over the
/// settings'; `record` made.
///
/// # Errors
/// A file that cannot be read or imported, a directory that cannot be made
/// (exit 2).
pub fn load(
    (settings, scenario, scene): (Option<&Path>, Option<&PathBuf>, Option<&Path>),
    seed: Option<u64>,
    clock_speed: Option<Speedup>,
    record: Option<&Path>,
) -> Result<Loaded, Failure> {
    let (mut inputs, imported) = match settings {
        Some(path) => {
            let (inputs, imported) = from_settings(path, seed)?;
            (inputs, Some(imported))
        }
        None => {
            let args = mavsitl_run::inputs::InputArgs {
                mission: None,
                vehicle: Some(mavsitl_run::inputs::BuiltinVehicle::Quad),
                scenario,
                seed,
                faults: &[],
                home: None,
                params: None,
                ground_truth: false,
            };
            (mavsitl_run::inputs::load_inputs(&args, false)?, None)
        }
    };
    fit_vision(&mut inputs.scenario, scene)?;
    let clock_speed = clock_speed
        .or(imported
            .as_ref()
            .and_then(|i| i.clock_speed.map(Speedup::Factor)))
        .unwrap_or(Speedup::Factor(1.0));
    if let Some(dir) = record {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::input(format!("{}: cannot create: {e}", dir.display()), ""))?;
    }
    Ok(match imported {
        Some(i) => Loaded {
            inputs,
            clock_speed,
            external_physics: i.external_physics,
            vehicle_type: i.vehicle_type,
            sf_params: i.simpleflight_parameters,
        },
        None => Loaded {
            inputs,
            clock_speed,
            external_physics: false,
            vehicle_type: crate::settings::VehicleType::SimpleFlight,
            sf_params: Vec::new(),
        },
    })
}

/// Gives the world its scene — `scene` (a scene file), else the
/// scenario's, else [`crate::vision::blocks`] — and every vehicle without
/// cameras AirSim's five.
///
/// # Errors
/// A scene file that cannot be read or does not check (exit 2).
pub fn fit_vision(scenario: &mut Scenario, scene: Option<&Path>) -> Result<(), Failure> {
    if let Some(path) = scene {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::input(format!("{name}: cannot read: {e}"), ""))?;
        let mut spec: mavsitl_render::SceneSpec = serde_json::from_str(&text)
            .map_err(|e| Failure::input(format!("{name}: {e}"), "see docs/reference/scene.md"))?;
        spec.read_files(path.parent().unwrap_or(Path::new(".")))
            .map_err(|e| Failure::input(format!("{name}: {e}"), "see docs/reference/scene.md"))?;
        mavsitl_render::Scene::build(&spec)
            .map_err(|e| Failure::input(format!("{name}: {e}"), "see docs/reference/scene.md"))?;
        scenario.scene = Some(spec);
    }
    if scenario.scene.is_none() {
        scenario.scene = Some(crate::vision::blocks());
    }
    for v in &mut scenario.vehicles {
        if v.sensors.cameras.is_empty() {
            v.sensors.cameras = mavsitl_sim::sensors::vision::CameraSpec::airsim_defaults();
        }
    }
    Ok(())
}

/// How the start-up line tells the clock: "clock speed 2", or as fast as
/// possible.
pub fn clock_text(clock_speed: Speedup) -> String {
    match clock_speed {
        Speedup::Max => "as fast as possible".to_string(),
        Speedup::Factor(k) => format!("clock speed {k}"),
    }
}

/// The start-up line of SimpleFlight served: where the API listens, the
/// vehicles' names, the clock.
pub fn banner(server: &Server, served: &[String], clock_speed: Speedup) -> String {
    let listed: Vec<String> = served.iter().map(|n| format!("'{n}'")).collect();
    format!(
        "mavsitl airsim: AirSim API on tcp {}; {} {}; {}",
        server.local_addr(),
        if listed.len() == 1 {
            "vehicle"
        } else {
            "vehicles"
        },
        listed.join(", "),
        clock_text(clock_speed)
    )
}

/// The UDP port PX4 instance `n` sends its offboard (MAVSDK) link to:
/// 14540 + n, and 14549 from n = 10 on (PX4's px4-rc.mavlink).
pub fn px4_offboard_port(n: u8) -> u16 {
    if n < 10 {
        14540 + n as u16
    } else {
        14549
    }
}

/// What to run in another terminal for the settings' PX4 when mavsitl
/// does not start it.
pub fn px4_by_hand(px4: &crate::settings::Px4Settings) -> Vec<String> {
    let mut lines = vec![format!(
        "  start PX4 SITL instance {0} in another terminal: source firmware_configs/px4/generic_quad.env && cd PX4-Autopilot/build/px4_sitl_default/rootfs && ../bin/px4 -d -i {0}",
        px4.instance
    )];
    if !px4.parameters.is_empty() {
        let names: Vec<&str> = px4.parameters.iter().map(|(n, _)| n.as_str()).collect();
        lines.push(format!(
            "  (and set the settings' Parameters there: {}; --px4-build sets them for you)",
            names.join(", ")
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Px4Settings;

    /// The car API on the F1TENTH car, in the crate.
    struct Car(AirSimApi);

    impl Car {
        fn new() -> Self {
            Self::from(r#"{"vehicles":[{"kind":"rover","airframe":"f1tenth"}]}"#)
        }

        fn from(text: &str) -> Self {
            let source = ScenarioSource {
                name: "car.json".into(),
                base_dir: PathBuf::from("."),
            };
            let scenario = Scenario::from_json(text, &source).expect("scenario");
            let inputs = FlightInputs {
                mission: Mission::default(),
                mission_name: "none".into(),
                scenario,
                source,
                param_text: None,
            };
            let (api, served) = car_api(inputs, vec!["Car1".into()]).expect("car api");
            assert_eq!(served, ["Car1"]);
            Car(api)
        }

        fn call(&mut self, method: &str, params: Vec<rmpv::Value>) -> Result<rmpv::Value, String> {
            let mut replies = Vec::new();
            let call = crate::rpc::Call {
                conn: 1,
                msgid: 7,
                method: method.into(),
                params,
            };
            self.0.handle(call, &mut replies);
            replies.pop().expect("an answer").2
        }

        fn controls(&mut self, fields: Vec<(&str, rmpv::Value)>) -> Result<rmpv::Value, String> {
            self.call("setCarControls", vec![crate::types::map(fields)])
        }

        fn drive_for(&mut self, seconds: f64) {
            let end = self.0.now().as_secs_f64() + seconds;
            while self.0.now().as_secs_f64() < end {
                self.0.tick(&mut ()).expect("tick");
            }
        }

        /// getCarState's `key` as a number.
        fn state(&mut self, key: &str) -> f64 {
            let s = self.call("getCarState", Vec::new()).expect("state");
            crate::types::field(&s, key)
                .and_then(crate::types::f64_of)
                .unwrap_or_else(|| panic!("{key} in {s}"))
        }

        /// The car's true speed along its heading, m/s.
        fn true_forward_speed(&self) -> f64 {
            let t = self.0.sim().vehicles()[0].ground_truth();
            (t.att_ned_frd.inverse() * t.vel_ned_m_s).x
        }
    }

    /// A world without a scene gets the blocks, a vehicle without cameras
    /// AirSim's five; a scene file replaces the scenario's; a bad one is
    /// refused naming the file.
    #[test]
    fn the_scene_and_cameras_are_fitted_for_the_api() {
        let source = ScenarioSource {
            name: "s.json".into(),
            base_dir: PathBuf::from("."),
        };
        let mut s = Scenario::from_json(
            r#"{"vehicles":[{"kind":"multirotor"},{"kind":"multirotor","sensors":{"cameras":[{"name":"only"}]}}]}"#,
            &source,
        )
        .expect("scenario");
        fit_vision(&mut s, None).expect("fit");
        assert_eq!(s.scene, Some(crate::vision::blocks()));
        assert_eq!(s.vehicles[0].sensors.cameras.len(), 5);
        assert_eq!(s.vehicles[1].sensors.cameras.len(), 1);
        let dir = std::env::temp_dir().join(format!("mavsitl-scene-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let good = dir.join("good.json");
        std::fs::write(&good, r#"{"objects":[{"name":"a","shape":{"sphere":{"radius_m":1}},"position_ned_m":[3,0,-1]}]}"#)
            .expect("write");
        fit_vision(&mut s, Some(&good)).expect("fit");
        assert_eq!(s.scene.as_ref().map(|c| c.objects.len()), Some(1));
        let bad = dir.join("bad.json");
        std::fs::write(&bad, r#"{"objects":[{"name":"a","shape":{"sphere":{"radius_m":0}},"position_ned_m":[3,0,-1]}]}"#)
            .expect("write");
        let e = fit_vision(&mut s, Some(&bad))
            .map_err(|f| f.message)
            .expect_err("flat");
        assert!(
            e.contains("bad.json") && e.contains("radius_m: 0 is outside"),
            "{e}"
        );
        let e = fit_vision(&mut s, Some(&dir.join("none.json")))
            .map_err(|f| f.message)
            .expect_err("missing");
        assert!(e.contains("none.json: cannot read"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// The image, LiDAR and scene calls through the API's dispatch: each
    /// finds its vehicle by its own argument (`simGetImage`'s third, the
    /// others' second), refuses an external camera, and the scene's calls
    /// name no vehicle.
    #[test]
    fn cameras_lidar_and_scene_objects_answer_through_the_dispatch() {
        use rmpv::Value;
        let mut car = Car::from(
            r#"{"vehicles":[{"kind":"rover","airframe":"f1tenth","sensors":{
                  "cameras":[{"name":"front_center","width":4,"height":3}],
                  "lidars":[{"name":"L","points_per_second":1600}]}}],
                "scene":{"objects":[{"name":"Crate","shape":{"box":{"size_m":[1,1,1]}},
                                     "position_ned_m":[5,0,-0.5],"segmentation_id":9}]}}"#,
        );
        car.drive_for(0.1);
        let request = crate::types::map(vec![
            ("camera_name", Value::from("0")),
            ("image_type", Value::from(1)),
            ("pixels_as_float", Value::from(true)),
        ]);
        let list = || Value::Array(vec![request.clone()]);
        let out = car
            .call(
                "simGetImages",
                vec![list(), Value::from("Car1"), Value::from(false)],
            )
            .expect("images");
        let floats = crate::types::field(&out.as_array().expect("list")[0], "image_data_float")
            .and_then(Value::as_array)
            .map(Vec::len);
        assert_eq!(floats, Some(12));
        let e = car
            .call(
                "simGetImages",
                vec![list(), Value::from("Car9"), Value::from(false)],
            )
            .expect_err("no such car");
        assert!(
            e.starts_with("Vehicle API for 'Car9' is not available"),
            "{e}"
        );
        let e = car
            .call(
                "simGetImages",
                vec![list(), Value::from(""), Value::from(true)],
            )
            .expect_err("external");
        assert!(e.contains("external cameras are not fitted"), "{e}");
        let png = car
            .call(
                "simGetImage",
                vec![
                    Value::from("0"),
                    Value::from(0),
                    Value::from("Car1"),
                    Value::from(false),
                ],
            )
            .expect("png");
        assert!(matches!(png, Value::Binary(ref b) if b.starts_with(b"\x89PNG")));
        let e = car
            .call(
                "simGetImage",
                vec![
                    Value::from("0"),
                    Value::from(0),
                    Value::from("Car9"),
                    Value::from(false),
                ],
            )
            .expect_err("no such car");
        assert!(e.contains("'Car9'"), "{e}");
        let info = car
            .call(
                "simGetCameraInfo",
                vec![Value::from("front_center"), Value::from("Car1")],
            )
            .expect("info");
        assert_eq!(
            crate::types::field(&info, "fov").and_then(Value::as_f64),
            Some(90.0)
        );
        let lidar = car
            .call("getLidarData", vec![Value::from("L"), Value::from("Car1")])
            .expect("lidar");
        let cloud = crate::types::field(&lidar, "point_cloud").and_then(Value::as_array);
        assert_eq!(cloud.map(Vec::len), Some(3 * 16 * 10));
        let ids = car
            .call(
                "simGetLidarSegmentation",
                vec![Value::from("L"), Value::from("Car1")],
            )
            .expect("ids");
        assert_eq!(ids, Value::Array(Vec::new()));
        let e = car
            .call("getLidarData", vec![Value::from("X"), Value::from("Car1")])
            .expect_err("none");
        assert_eq!(e, "No lidar with name X exist on vehicle");
        // The scene's calls: a pattern or a name, never a vehicle.
        let names = car.call("simListSceneObjects", vec![Value::from("Cr.*")]);
        assert_eq!(names, Ok(Value::Array(vec![Value::from("Crate")])));
        let all = car.call("simListSceneObjects", Vec::new()).expect("all");
        assert_eq!(all.as_array().map(Vec::len), Some(1));
        assert_eq!(
            car.call("simGetSegmentationObjectID", vec![Value::from("Crate")]),
            Ok(Value::from(9))
        );
        let relabel = vec![Value::from("Crate"), Value::from(12), Value::from(false)];
        assert_eq!(
            car.call("simSetSegmentationObjectID", relabel),
            Ok(Value::from(true))
        );
        assert_eq!(
            car.call("simGetSegmentationObjectID", vec![Value::from("Crate")]),
            Ok(Value::from(12))
        );
        let pose = crate::types::pose(
            &nalgebra::Vector3::new(7.0, 1.0, -0.5),
            &nalgebra::UnitQuaternion::identity(),
        );
        let moved = car.call(
            "simSetObjectPose",
            vec![Value::from("Crate"), pose, Value::from(true)],
        );
        assert_eq!(moved, Ok(Value::from(true)));
        let at = car
            .call("simGetObjectPose", vec![Value::from("Crate")])
            .expect("pose");
        let p = crate::types::field(&at, "position").and_then(crate::types::vector3r_of);
        assert!((p.expect("position") - nalgebra::Vector3::new(7.0, 1.0, -0.5)).norm() < 1e-6);
        let e = car
            .call("simGetObjectPose", vec![Value::from(3)])
            .expect_err("not a name");
        assert_eq!(e, "simGetObjectPose: argument 0 is not a string");
        let e = car.call(
            "simSetSegmentationObjectID",
            vec![Value::from("Crate"), Value::from("x")],
        );
        assert_eq!(
            e,
            Err("simSetSegmentationObjectID: the id is not an integer".into())
        );
        let e = car
            .call("simEnableWeather", vec![Value::from(true)])
            .expect_err("weather");
        assert!(
            e.starts_with("simEnableWeather: not supported by mavsitl"),
            "{e}"
        );
    }

    /// setCarControls needs API control, as AirSim's car; the controls set
    /// are the controls read back; getCarState's speed is the truth's along
    /// the heading (negative in reverse), its rpm the wheels' turning at
    /// that speed (wheel radius 0.0508 m), its maxrpm the motor's no-load
    /// 7 m/s, its gear the manual one, else 1 while the car drives or rolls
    /// and 0 at rest.
    #[test]
    fn the_car_api_drives_the_car_and_reports_its_state() {
        let rpm_per_m_s = 60.0 / (std::f64::consts::TAU * 0.0508);
        let mut car = Car::new();
        let e = car
            .controls(vec![("throttle", 0.5.into())])
            .expect_err("no API control");
        assert!(e.contains("enableApiControl(True) first"), "{e}");
        assert_eq!(car.state("gear"), 0.0, "at rest");
        assert!((car.state("maxrpm") - 7.0 * rpm_per_m_s).abs() < 1e-9);
        car.call("enableApiControl", vec![true.into()])
            .expect("control");
        car.controls(vec![("throttle", 0.5.into()), ("steering", (-0.25).into())])
            .expect("controls");
        let back = car.call("getCarControls", Vec::new()).expect("controls");
        let read = crate::car::CarControls::from_value(&back).expect("controls");
        assert_eq!((read.throttle, read.steering), (0.5, -0.25));
        assert_eq!(car.state("gear"), 1.0, "driving off");

        car.drive_for(2.0);
        let speed = car.state("speed");
        assert!(speed > 1.0, "{speed}");
        assert_eq!(speed, car.true_forward_speed());
        let rpm = car.state("rpm");
        assert!(
            (rpm / (speed * rpm_per_m_s) - 1.0).abs() < 0.05,
            "{rpm} rpm at {speed} m/s"
        );
        let stamp = car.state("timestamp");
        assert_eq!(stamp, (car.0.now().as_micros() * 1000) as f64);

        car.controls(vec![("throttle", 0.0.into())]).expect("coast");
        assert_eq!(car.state("gear"), 1.0, "rolling");
        car.controls(vec![
            ("throttle", 0.5.into()),
            ("is_manual_gear", true.into()),
            ("manual_gear", (-1).into()),
            ("brake", 0.0.into()),
        ])
        .expect("reverse");
        car.drive_for(4.0);
        let speed = car.state("speed");
        assert!(speed < -0.5, "{speed}");
        assert_eq!(speed, car.true_forward_speed());
        assert_eq!(car.state("gear"), -1.0);
        let rpm = car.state("rpm");
        assert!(
            (rpm / (speed * rpm_per_m_s) - 1.0).abs() < 0.05,
            "{rpm} rpm at {speed} m/s"
        );
    }

    #[test]
    fn the_clock_is_told_as_a_speed_or_as_fast_as_possible() {
        assert_eq!(clock_text(Speedup::Factor(2.5)), "clock speed 2.5");
        assert_eq!(clock_text(Speedup::Max), "as fast as possible");
    }

    #[test]
    fn px4_instances_send_offboard_to_14540_plus_n_then_14549() {
        let ports: Vec<u16> = [0, 1, 9, 10, 200].map(px4_offboard_port).to_vec();
        assert_eq!(ports, [14540, 14541, 14549, 14549, 14549]);
    }

    #[test]
    fn the_banner_names_the_port_the_vehicles_and_the_clock() {
        let server = bind_server("127.0.0.1:0".parse().expect("addr")).expect("bind");
        let port = server.local_addr().port();
        let one = banner(&server, &["Drone1".into()], Speedup::Factor(1.0));
        assert_eq!(
            one,
            format!("mavsitl airsim: AirSim API on tcp 127.0.0.1:{port}; vehicle 'Drone1'; clock speed 1")
        );
        let two = banner(&server, &["A".into(), "B".into()], Speedup::Max);
        assert!(
            two.ends_with("vehicles 'A', 'B'; as fast as possible"),
            "{two}"
        );
    }

    #[test]
    fn px4_by_hand_names_the_instance_and_the_parameters_to_set() {
        let bare = px4_by_hand(&Px4Settings {
            instance: 3,
            parameters: Vec::new(),
        });
        assert_eq!(bare.len(), 1);
        assert!(bare[0].contains("SITL instance 3 ") && bare[0].ends_with("-d -i 3"));
        let with = px4_by_hand(&Px4Settings {
            instance: 0,
            parameters: vec![
                ("COM_RCL_EXCEPT".into(), "4".into()),
                ("NAV_DLL_ACT".into(), "0".into()),
            ],
        });
        assert_eq!(with.len(), 2);
        assert!(
            with[1].contains("Parameters there: COM_RCL_EXCEPT, NAV_DLL_ACT;"),
            "{}",
            with[1]
        );
    }
}
