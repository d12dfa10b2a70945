//! Recorders: observers of the simulation that write files. They never change it.
//!
//! `--record DIR` writes, per vehicle (in `DIR/` for a single vehicle, in
//! `DIR/<name>/` when there are several):
//!
//! - `ground_truth.csv`, EuRoC-style (`#timestamp [ns]`, position m, quaternion
//!   w,x,y,z body→world, velocity m/s, body rates rad/s), in the export frame
//!   (NED/FRD by default);
//! - `battery.csv` at the same rate: the pack's true voltage, current,
//!   charge and energy drawn, and the fraction remaining;
//! - `actuators.csv` at the same rate: the commands the controller gave
//!   the airframe's channels (`u0 … u{n−1}`, a multirotor's motors, a
//!   boat's channels up to the highest it reads);
//! - `imu.csv` (EuRoC), `gps.csv`, `baro.csv`, `mag.csv`, `range.csv` for the sensors it has;
//! - with cameras or LiDARs, a EuRoC-style data set: `mav0/` with the IMU,
//!   the camera frames, depth and segmentation as PNG, the LiDAR sweeps,
//!   each with its calibration, and Kalibr's `camchain-imucam.yaml` and
//!   `imu.yaml` ([`dataset`]);
//!
//! and once per run `zone_events.csv` and `meta.json` (scenario, seed, frames,
//! version, files). Writes are buffered; [`Recorder::finish`] flushes and is also
//! called on errors; dropping a recorder flushes what it can.

pub mod dataset;
mod ground_truth;
pub mod rows;
mod sensors;

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde_json::json;

pub use ground_truth::GroundTruthWriter;
pub use sensors::SensorWriter;

/// The header line of `ground_truth.csv`.
pub fn ground_truth_header() -> &'static str {
    ground_truth::HEADER
}

use crate::scenario::Scenario;
use crate::sim::{Observer, Simulation};
use mavsitl_core::geo::ExportFrame;
use mavsitl_core::time::Rate;
use mavsitl_core::time::SimTime;
use rows::RowFile;

/// Everything written for one run.
pub struct Recorder {
    dir: PathBuf,
    ground_truth: Vec<GroundTruthWriter>,
    sensors: Vec<SensorWriter>,
    datasets: Vec<dataset::DatasetWriter>,
    zone_events: RowFile,
    zone_events_written: usize,
    fault_events: RowFile,
    fault_events_written: usize,
    /// When whole rows are next written out.
    next_flush: SimTime,
    meta: serde_json::Value,
}

impl Recorder {
    /// Creates `dir` and the files for `sim` built from `scenario`, and writes
    /// `meta.json` and the first ground-truth row (time 0).
    ///
    /// # Errors
    /// I/O errors creating the directory or files.
    pub fn create(
        dir: &Path,
        scenario: &Scenario,
        sim: &Simulation,
        frame: ExportFrame,
        ground_truth_rate: Rate,
    ) -> io::Result<Self> {
        dataset::check_cameras(&scenario.record, sim.vehicles())?;
        std::fs::create_dir_all(dir)?;
        let several = sim.vehicles().len() > 1;
        let camera_rate = mavsitl_core::time::PhysicsRate::new(scenario.physics_rate_hz)
            .and_then(|r| r.divider(scenario.record.camera_rate_hz))
            .unwrap_or(Rate::EVERY_TICK);
        let mut ground_truth = Vec::new();
        let mut sensors = Vec::new();
        let mut datasets = Vec::new();
        let mut files = Vec::new();
        let mut sensor_meta = Vec::new();
        for (i, v) in sim.vehicles().iter().enumerate() {
            let vdir = if several {
                dir.join(v.name())
            } else {
                dir.to_path_buf()
            };
            let prefix = if several {
                format!("{}/", v.name())
            } else {
                String::new()
            };
            std::fs::create_dir_all(&vdir)?;
            let path = vdir.join("ground_truth.csv");
            files.push(format!("{prefix}ground_truth.csv"));
            files.push(format!("{prefix}battery.csv"));
            files.push(format!("{prefix}actuators.csv"));
            let channels = match v.model() {
                crate::vehicle::VehicleModel::Multirotor(m) => m.rotor_count(),
                crate::vehicle::VehicleModel::Boat(b) => b.params().channel_count(),
                crate::vehicle::VehicleModel::Rover(r) => r.params().channel_count(),
            };
            let mut w = GroundTruthWriter::create(&path, i, frame, ground_truth_rate, channels)?;
            w.write_row(sim)?;
            ground_truth.push(w);
            let mut names = Vec::new();
            sensors.push(SensorWriter::create(&vdir, i, v, frame, &mut names)?);
            files.extend(names.into_iter().map(|n| format!("{prefix}{n}")));
            let set =
                dataset::DatasetWriter::create(&vdir, i, v, &scenario.record, camera_rate, frame)?;
            if let Some(set) = set {
                files.extend(set.files().into_iter().map(|n| format!("{prefix}{n}")));
                datasets.push(set);
            }
            sensor_meta.push(sensor_description(v));
        }
        let zone_events = RowFile::with_header(
            &dir.join("zone_events.csv"),
            "#timestamp [ns],vehicle,zone,event,ground_friction",
        )?;
        files.push("zone_events.csv".into());
        let fault_events = RowFile::with_header(
            &dir.join("fault_events.csv"),
            "#timestamp [ns],vehicle,fault,kind,event,spec",
        )?;
        files.push("fault_events.csv".into());
        if several {
            files.push("encounters.csv".into());
        }
        let meta = json!({
            "mavsitl_version": env!("CARGO_PKG_VERSION"),
            "seed": scenario.seed,
            "physics_rate_hz": scenario.physics_rate_hz,
            "frames": {
                "world": frame.world_axes(),
                "body": frame.body_axes(),
                "quaternion": "scalar first (w, x, y, z), rotates body vectors into the world frame",
                "origin": {
                    "lat_deg": scenario.home.lat_deg,
                    "lon_deg": scenario.home.lon_deg,
                    "alt_m": scenario.home.alt_m,
                },
                "time": "simulation time since start, integer ns",
            },
            "files": files,
            "sensors": sensor_meta,
            "scenario": scenario,
        });
        let mut rec = Recorder {
            dir: dir.to_path_buf(),
            ground_truth,
            sensors,
            datasets,
            zone_events,
            zone_events_written: 0,
            fault_events,
            fault_events_written: 0,
            next_flush: SimTime::ZERO,
            meta,
        };
        rec.write_meta(None)?;
        Ok(rec)
    }

    fn write_meta(&mut self, end: Option<(&Simulation, bool)>) -> io::Result<()> {
        let mut meta = self.meta.clone();
        if let (Some((sim, completed)), Some(obj)) = (end, meta.as_object_mut()) {
            obj.insert("sim_time_end_s".into(), json!(sim.time().as_secs_f64()));
            obj.insert("completed".into(), json!(completed));
        }
        let text = serde_json::to_string_pretty(&meta).map_err(io::Error::other)?;
        std::fs::write(self.dir.join("meta.json"), text + "\n")
    }

    /// Adds `key: value` to `meta.json` (written at [`Recorder::finish`]), e.g.
    /// why the recording ended before the run did.
    pub fn note(&mut self, key: &str, value: serde_json::Value) {
        if let Some(obj) = self.meta.as_object_mut() {
            obj.insert(key.to_string(), value);
        }
    }

    /// Flushes every file and records in `meta.json` how the run ended.
    ///
    /// # Errors
    /// I/O errors while flushing.
    pub fn finish(&mut self, sim: &Simulation, completed: bool) -> io::Result<()> {
        self.write_zone_events(sim)?;
        self.write_fault_events(sim)?;
        for w in &mut self.ground_truth {
            w.flush()?;
        }
        for w in &mut self.sensors {
            w.flush()?;
        }
        for d in &mut self.datasets {
            d.finish(sim)?;
        }
        self.zone_events.flush()?;
        self.fault_events.flush()?;
        if let Some(m) = sim.encounters() {
            write_encounters(&self.dir.join("encounters.csv"), sim, m)?;
        }
        self.write_meta(Some((sim, completed)))
    }

    fn write_zone_events(&mut self, sim: &Simulation) -> io::Result<()> {
        let events = sim.zone_events();
        for e in events.iter().skip(self.zone_events_written) {
            let spec = sim.world().zones().specs().get(e.zone);
            let zone = spec.map_or("?", |z| z.name.as_str());
            // The friction the zone puts under a wheel (empty: it sets none).
            let mu = spec
                .and_then(|z| z.ground_friction)
                .map_or(String::new(), |m| m.to_string());
            let vehicle = sim.vehicles().get(e.vehicle).map_or("?", |v| v.name());
            let what = match e.transition {
                crate::world::ZoneTransition::Enter => "enter",
                crate::world::ZoneTransition::Exit => "exit",
            };
            writeln!(
                self.zone_events,
                "{},{vehicle},{zone},{what},{mu}",
                e.time.as_nanos()
            )?;
        }
        self.zone_events_written = events.len();
        Ok(())
    }
}

impl Recorder {
    /// Writes every complete row buffered to disk.
    fn flush_rows(&mut self) -> io::Result<()> {
        for w in &mut self.ground_truth {
            w.flush()?;
        }
        for w in &mut self.sensors {
            w.flush()?;
        }
        self.zone_events.flush()
    }

    /// Appends the fault starts and ends not yet written (flushed at once:
    /// they are rare and matter most when a run is cut short).
    fn write_fault_events(&mut self, sim: &Simulation) -> io::Result<()> {
        let events = sim.fault_events();
        for e in events.iter().skip(self.fault_events_written) {
            let vehicle = sim.vehicles().get(e.vehicle).map_or("?", |v| v.name());
            let spec = sim
                .faults()
                .specs()
                .nth(e.fault)
                .map_or(String::new(), |(s, _)| s.describe());
            writeln!(
                self.fault_events,
                "{},{vehicle},{},{},{},{spec}",
                e.time.as_nanos(),
                e.fault,
                e.kind,
                e.transition.name()
            )?;
        }
        self.fault_events_written = events.len();
        self.fault_events.flush()
    }
}

/// Sim time between two writes of whole rows to disk, µs: a run killed
/// outright loses at most this much of its recording.
const FLUSH_EVERY_US: u64 = 1_000_000;

impl Observer for Recorder {
    fn on_tick(&mut self, sim: &Simulation) -> io::Result<()> {
        if sim.time() >= self.next_flush {
            self.next_flush = sim.time() + FLUSH_EVERY_US;
            self.flush_rows()?;
        }
        for w in &mut self.ground_truth {
            w.on_tick(sim)?;
        }
        for w in &mut self.sensors {
            if let Some(v) = sim.vehicles().get(w.vehicle()) {
                w.write(v.samples())?;
            }
        }
        for d in &mut self.datasets {
            d.on_tick(sim)?;
        }
        if sim.zone_events().len() != self.zone_events_written {
            self.write_zone_events(sim)?;
        }
        if sim.fault_events().len() != self.fault_events_written {
            self.write_fault_events(sim)?;
        }
        Ok(())
    }
}

/// Every sensor's parameters, rate, mount and noise stream, for `meta.json`.
fn sensor_description(v: &crate::vehicle::Vehicle) -> serde_json::Value {
    let s = v.sensors();
    let spec = serde_json::to_value(s.spec()).unwrap_or(serde_json::Value::Null);
    let streams: serde_json::Map<String, serde_json::Value> = s
        .streams()
        .iter()
        .map(|(name, id)| {
            (
                (*name).to_string(),
                json!({ "rng": "ChaCha8", "seed": s.seed(), "stream": id }),
            )
        })
        .collect();
    json!({ "vehicle": v.name(), "parameters": spec, "noise_streams": streams })
}

/// `encounters.csv`: every pair of vehicles that came within the proximity
/// range — when, how close (centre to centre) and where, and when they
/// collided if they did. Separations beyond the range are not measured.
fn write_encounters(
    path: &Path,
    sim: &Simulation,
    m: &crate::encounter::EncounterMonitor,
) -> io::Result<()> {
    let mut w = io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(
        w,
        "# proximity range {} m; NED m; separation centre to centre",
        m.proximity_m()
    )?;
    writeln!(w, "vehicle_a,vehicle_b,start [ns],end [ns],closest [ns],min_separation [m],a_N [m],a_E [m],a_D [m],b_N [m],b_E [m],b_D [m],collision [ns]")?;
    let name = |i: usize| sim.vehicles().get(i).map_or("?", |v| v.name());
    let ns = |t: Option<mavsitl_core::time::SimTime>| {
        t.map_or(String::new(), |t| t.as_nanos().to_string())
    };
    for e in m.encounters() {
        let (a, b) = (&e.pos_a_ned_m, &e.pos_b_ned_m);
        writeln!(
            w,
            "{},{},{},{},{},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{}",
            name(e.a),
            name(e.b),
            e.start.as_nanos(),
            ns(e.end),
            e.closest_at.as_nanos(),
            e.min_separation_m,
            a.x,
            a.y,
            a.z,
            b.x,
            b.y,
            b.z,
            ns(e.collided)
        )?;
    }
    w.flush()
}
