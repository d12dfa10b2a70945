//! A fleet of firmware: N firmware instances flying N vehicles of one
//! world in one lockstep loop that advances only when every firmware has
//! answered its step. Each flight ends on its own (a collision ends both
//! vehicles'); the run ends when all have.

use std::path::{Path, PathBuf};

use mavsitl_bridges::ground_station::Firmware as Dialect;
use mavsitl_core::failure::Failure;
use mavsitl_core::geo::LocalFrame;
use mavsitl_core::time::SimTime;
use mavsitl_mavlink::mission::Mission;
use mavsitl_mavlink::traffic::TRAFFIC_PERIOD_US;
use mavsitl_run::launch::LaunchSpec;
use mavsitl_run::session::{Driver, Step};
use mavsitl_run::setup::FlightInputs;
use mavsitl_sim::scenario::FirmwareSpec;
use mavsitl_sim::sim::{Lockstep, SimError, Simulation};

use crate::flight::{FirmwareFlight, FlightPlan, Judged, PlanOptions};
use mavsitl_run::traffic::traffic_for;

/// Vehicle k of a fleet as its firmware needs it.
pub struct Slot {
    /// Its index.
    pub index: usize,
    /// Its name.
    pub name: String,
    /// Where it stands at the start, NED m (horizontal).
    pub start: nalgebra::Vector2<f64>,
    /// Its recording directory (made), when recording.
    pub record: Option<PathBuf>,
    /// Its firmware's instance: the first instance + k.
    pub instance: u8,
}

impl Slot {
    /// Vehicle `k` of `sim`, its firmware instance `first + k`, recording
    /// into `record/<name>`.
    ///
    /// # Errors
    /// An instance past 255, or a directory that cannot be made.
    pub fn of(
        sim: &Simulation,
        k: usize,
        first: u8,
        record: Option<&Path>,
    ) -> Result<Slot, Failure> {
        let instance = u8::try_from(k)
            .ok()
            .and_then(|k| first.checked_add(k))
            .ok_or_else(|| {
                Failure::input("--instance + --count passes 255", "use a lower --instance")
            })?;
        Self::at(sim, k, instance, record)
    }

    /// Vehicle `k` of `sim` flown by firmware instance `instance`.
    ///
    /// # Errors
    /// No vehicle `k`, or a directory that cannot be made.
    pub fn at(
        sim: &Simulation,
        k: usize,
        instance: u8,
        record: Option<&Path>,
    ) -> Result<Slot, Failure> {
        let (name, start) = sim
            .vehicles()
            .get(k)
            .map(|v| (v.name().to_string(), v.body().state.pos_ned_m.xy()))
            .ok_or_else(|| Failure::run("no such vehicle"))?;
        let record = record.map(|d| d.join(&name));
        if let Some(d) = &record {
            std::fs::create_dir_all(d)
                .map_err(|e| Failure::input(format!("{}: cannot create: {e}", d.display()), ""))?;
        }
        Ok(Slot {
            index: k,
            name,
            start,
            record,
            instance,
        })
    }

    /// Starts this vehicle's flight: its firmware launched as `launch`, its
    /// ground station flying `mission` (named `mission_name`) as `opts` ask.
    ///
    /// # Errors
    /// The firmware or its ground station could not start (exit 2).
    pub fn start(
        self,
        dialect: Dialect,
        (inputs, mission, mission_name): (&FlightInputs, Mission, &str),
        opts: &PlanOptions,
        launch: LaunchSpec,
        frame: &LocalFrame,
    ) -> Result<Member, Failure> {
        let own = FlightInputs {
            mission: mission.clone(),
            mission_name: mission_name.to_string(),
            scenario: inputs.scenario.clone(),
            source: inputs.source.clone(),
            param_text: None,
        };
        let flight = FirmwareFlight::start(
            dialect,
            self.instance,
            &FlightPlan {
                kind: own.kind(self.index),
                ..FlightPlan::of(&own, frame, opts)
            },
            Some(launch),
            false,
        )?
        .for_vehicle(self.index, &mission, frame, self.start);
        Ok(Member::new(
            self.index,
            self.name,
            mission_name.to_string(),
            flight,
        ))
    }
}

/// What a firmware vehicle flies: its mission, the mission's name, its
/// parameters (name, value).
pub struct FirmwarePlan {
    /// The mission.
    pub mission: Mission,
    /// Its name (the file, or the command line's).
    pub name: String,
    /// The vehicle's parameter file, parsed: (name, value).
    pub params: Vec<(String, String)>,
}

/// A vehicle's own mission (relative to the scenario), else the command
/// line's; and the parameters of its file.
///
/// # Errors
/// A mission or parameter file that cannot be read (exit 2).
pub fn plan_of(inputs: &FlightInputs, f: &FirmwareSpec) -> Result<FirmwarePlan, Failure> {
    let base = &inputs.source.base_dir;
    let (mission, name) = match &f.mission {
        Some(m) => {
            let path = base.join(m);
            let mission = Mission::load(&path)
                .map_err(|e| Failure::input(e.to_string(), "check the scenario's missions"))?;
            (mission, path.display().to_string())
        }
        None => (inputs.mission.clone(), inputs.mission_name.clone()),
    };
    let params = match &f.params {
        Some(p) => read_param_file(&base.join(p))?,
        None => Vec::new(),
    };
    Ok(FirmwarePlan {
        mission,
        name,
        params,
    })
}

/// A firmware parameter file: `NAME VALUE` or `NAME,VALUE` lines, or
/// QGroundControl's .params; (name, value) in file order.
///
/// # Errors
/// A file that cannot be read, or a line that is not a parameter, named
/// (exit 2).
pub fn read_param_file(path: &Path) -> Result<Vec<(String, String)>, Failure> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::input(format!("{name}: cannot read: {e}"), ""))?;
    mavsitl_bridges::param_file::parse(&text, &name)
        .map_err(|e| Failure::input(e, "NAME VALUE lines, one parameter each"))
}

/// One vehicle's firmware flight.
pub struct Member {
    /// The vehicle's index in the world.
    pub index: usize,
    /// The vehicle's name.
    pub name: String,
    /// The plan's name, for titles.
    pub mission_name: String,
    /// The flight.
    pub flight: FirmwareFlight,
    /// How it ended, once it has.
    pub outcome: Option<Result<(), String>>,
}

impl Member {
    /// Vehicle `index`'s (`name`'s) flight of `mission_name`, under way.
    pub fn new(index: usize, name: String, mission_name: String, flight: FirmwareFlight) -> Self {
        Member {
            index,
            name,
            mission_name,
            flight,
            outcome: None,
        }
    }

    /// Whether its flight is over.
    pub fn done(&self) -> bool {
        self.outcome.is_some()
    }

    /// Its outcome, the run having ended with `run`: its own if it ended,
    /// else the run's failure; a run that ended well ends a flight with no
    /// plan well (the run's duration is its end) and a plan's flight not.
    pub fn outcome_after(&self, run: &Result<(), String>) -> Result<(), String> {
        match (&self.outcome, run) {
            (Some(o), _) => o.clone(),
            (None, Err(e)) => Err(e.clone()),
            (None, Ok(())) if !self.flight.flies_mission() => Ok(()),
            (None, Ok(())) => Err("the run ended first".into()),
        }
    }
}

/// The firmware flying the vehicles of one world, each judged on its own;
/// with `adsb`, each sent the others as traffic at 2 Hz of sim time.
pub struct Crew<'a> {
    members: &'a mut [Member],
    adsb: bool,
    next_traffic: SimTime,
}

impl<'a> Crew<'a> {
    /// The crew of `members`.
    pub fn new(members: &'a mut [Member], adsb: bool) -> Self {
        Crew {
            members,
            adsb,
            next_traffic: SimTime::ZERO,
        }
    }

    /// Whether a flight is still under way.
    pub fn flying(&self) -> bool {
        self.members.iter().any(|m| !m.done())
    }

    /// Why a failed tick stopped the world: the firmware that exited, if
    /// one did.
    pub fn cause(&self) -> Option<String> {
        self.members
            .iter()
            .find_map(|m| m.flight.exited().map(|w| format!("{}: {w}", m.name)))
    }

    /// After a good tick: each flight judged, traffic sent when due.
    pub fn follow(&mut self, ls: &mut Lockstep) {
        for m in self.members.iter_mut() {
            if m.outcome.is_some() {
                continue;
            }
            if ls.sim().is_wrecked(m.index) {
                let why = mavsitl_analysis::encounters::collision_text(ls.sim(), m.index);
                m.outcome = Some(Err(why));
                continue;
            }
            match m.flight.judge(Ok(()), ls.sim_mut()) {
                Judged::Go => {}
                Judged::End(o) => m.outcome = Some(o),
                Judged::Lost { why, .. } => m.outcome = Some(Err(why)),
            }
        }
        if self.adsb && ls.sim().time() >= self.next_traffic {
            self.next_traffic = ls.sim().time() + TRAFFIC_PERIOD_US;
            for (k, m) in self.members.iter().enumerate() {
                m.flight.send(traffic_for(k, ls.sim()));
            }
        }
    }

    /// Marks every flight's end of wall time (they all end with the loop).
    pub fn mark_end(&mut self) {
        for m in self.members.iter_mut() {
            m.flight.mark_end();
        }
    }
}

impl Driver<Lockstep> for Crew<'_> {
    fn after_tick(&mut self, ls: &mut Lockstep, tick: Result<(), SimError>) -> Step<Lockstep> {
        if let Err(e) = tick {
            return Step::End(Err(self.cause().unwrap_or_else(|| e.to_string())));
        }
        self.follow(ls);
        match self.flying() {
            true => Step::Go,
            false => Step::End(Ok(())),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::atomic::AtomicBool;

    use mavsitl_bridges::ground_station::Firmware as Dialect;
    use mavsitl_core::geo::{GeoPoint, LocalFrame};
    use mavsitl_core::time::Rate;
    use mavsitl_core::vehicle::VehicleKind;
    use mavsitl_mavlink::mission::Mission;
    use mavsitl_sim::scenario::Home;

    use super::*;
    use crate::flight::FlightPlan;

    static NEVER: AtomicBool = AtomicBool::new(false);

    /// A member whose firmware is only simulated for (no plan, nothing
    /// launched: no socket, no process).
    pub(crate) fn member(outcome: Option<Result<(), String>>) -> Member {
        let (mission, home) = (Mission::default(), Home::default());
        let frame = LocalFrame::new(GeoPoint::from_deg(home.lat_deg, home.lon_deg, home.alt_m));
        let plan = FlightPlan {
            mission: &mission,
            fly_plan: false,
            kind: VehicleKind::Multirotor,
            home: &home,
            frame: &frame,
            summary_rate: Rate::EVERY_TICK,
            ready_timeout_s: 1.0,
            mission_timeout_s: 1.0,
            gcs_forward: None,
            stop_run: &NEVER,
            interrupted: &NEVER,
        };
        let flight = FirmwareFlight::start(Dialect::Px4, 0, &plan, None, false).expect("flight");
        Member {
            outcome,
            ..Member::new(3, "c".into(), "square".into(), flight)
        }
    }

    #[test]
    fn a_flight_keeps_its_own_end_whatever_the_runs() {
        let crashed = member(Some(Err("crash".into())));
        assert_eq!(crashed.outcome_after(&Ok(())), Err("crash".into()));
        let landed = member(Some(Ok(())));
        assert_eq!(landed.outcome_after(&Err("interrupted".into())), Ok(()));
    }

    #[test]
    fn an_unfinished_flight_ends_as_the_run_did() {
        let flying = member(None);
        assert!(!flying.done());
        assert_eq!(
            flying.outcome_after(&Err("interrupted".into())),
            Err("interrupted".into())
        );
        // No plan flown: the run's duration is the flight's end.
        assert_eq!(flying.outcome_after(&Ok(())), Ok(()));
    }

    #[test]
    fn the_crew_flies_while_one_flight_is_under_way() {
        let mut members = vec![member(Some(Ok(()))), member(None)];
        let mut crew = Crew::new(&mut members, false);
        assert!(crew.flying());
        assert_eq!(crew.cause(), None);
        crew.mark_end();
        members[1].outcome = Some(Err("timeout".into()));
        assert!(!Crew::new(&mut members, false).flying());
    }

    #[test]
    fn a_parameter_file_is_read_in_order_and_a_bad_one_is_named() {
        let dir = std::env::temp_dir().join(format!("mavsitl-params-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let good = dir.join("good.params");
        std::fs::write(&good, "MPC_XY_VEL_MAX 7.5\nNAV_ACC_RAD,3\n").expect("write");
        let read = read_param_file(&good).expect("read");
        assert_eq!(
            read,
            [
                ("MPC_XY_VEL_MAX".to_string(), "7.5".to_string()),
                ("NAV_ACC_RAD".to_string(), "3".to_string())
            ]
        );
        let missing = read_param_file(&dir.join("none.params")).expect_err("missing");
        assert!(
            missing.message.contains("none.params: cannot read"),
            "{}",
            missing.message
        );
        assert_eq!(missing.code, 2);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
