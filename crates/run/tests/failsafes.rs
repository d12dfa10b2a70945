//! SimpleFlight's failsafes on the real fault path: the fault acts on the
//! simulated world, SimpleFlight notices it through its sensors, and reacts
//! as PX4 does. Judged on ground truth.

use std::path::PathBuf;
use std::time::Duration;

use mavlink::dialects::common::{
    MavAutopilot, MavMessage, MavModeFlag, MavState, MavType, HEARTBEAT_DATA,
};
use mavsitl_core::faults::parse_fault_arg;
use mavsitl_core::time::SimTime;
use mavsitl_mavlink::mission::Mission;
use mavsitl_mavlink::wire::{CommandIn, Incoming, Outgoing};
use mavsitl_run::setup::{self, Flight};
use mavsitl_sim::scenario::{Scenario, ScenarioSource};
use mavsitl_sim::sim::{Observer, Simulation};
use mavsitl_simpleflight::gcs::Endpoint;
use mavsitl_simpleflight::FlightMode;
use nalgebra::Vector3;

const SQUARE: &str = include_str!("../../../missions/quad_square.plan");

/// Ground truth of vehicle 0 every tick: time, position, tilt (rad), yaw
/// rate (rad/s).
#[derive(Default)]
struct Truth(Vec<(SimTime, Vector3<f64>, f64, f64)>);

impl Observer for Truth {
    fn on_tick(&mut self, sim: &Simulation) -> std::io::Result<()> {
        let s = sim.vehicles()[0].body().state;
        let up = s.att_ned_frd * Vector3::z();
        let tilt = up.z.clamp(-1.0, 1.0).acos();
        self.0
            .push((sim.time(), s.pos_ned_m, tilt, s.rate_frd_rad_s.z.abs()));
        Ok(())
    }
}

impl Truth {
    fn at(&self, t: SimTime) -> Vector3<f64> {
        self.0
            .iter()
            .find(|x| x.0 >= t)
            .map_or(Vector3::zeros(), |x| x.1)
    }
    fn last(&self) -> (Vector3<f64>, f64) {
        self.0
            .last()
            .map_or((Vector3::zeros(), 0.0), |x| (x.1, x.2))
    }
}

fn build(plan: &str, scenario: &str, params: &str, faults: &[&str], auto_arm: bool) -> Flight {
    let src = ScenarioSource {
        name: "failsafe".into(),
        base_dir: PathBuf::from("."),
    };
    let mut sc = Scenario::from_json(scenario, &src).unwrap_or_else(|e| panic!("{e}"));
    sc.faults = faults.iter().map(|f| parse_fault_arg(f).unwrap()).collect();
    sc.validate(&src).unwrap_or_else(|e| panic!("{e}"));
    let mission = Mission::parse(plan, "test.plan").unwrap_or_else(|e| panic!("{e}"));
    setup::flight(
        &mission,
        "test",
        &sc,
        &src,
        Some((params, "test.parm")),
        auto_arm,
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Flies until landed and disarmed or `limit_s`; returns the truth trace.
fn fly(f: &mut Flight, limit_s: u64) -> Truth {
    let mut truth = Truth::default();
    while f.lockstep.sim().time() < SimTime::from_secs(limit_s) {
        f.lockstep
            .tick(&mut truth)
            .unwrap_or_else(|e| panic!("{e}"));
        let st = f.status.borrow();
        if st.landed && !st.armed {
            break;
        }
    }
    truth
}

/// (time, detail) of the events of `kind`.
fn events(f: &Flight, kind: &str) -> Vec<(SimTime, String)> {
    f.status
        .borrow()
        .events
        .iter()
        .filter(|e| e.kind.as_str() == kind)
        .map(|e| (e.time, e.detail.clone()))
        .collect()
}

const QUAD: &str = r#"{"vehicles":[{"name":"quad","kind":"multirotor"}]}"#;

/// The square with a fence: an inclusion circle of `radius` m around home.
fn square_with_fence(radius: f64) -> String {
    let mut plan: serde_json::Value = serde_json::from_str(SQUARE).unwrap();
    plan["geoFence"]["circles"][0]["circle"]["radius"] = radius.into();
    plan.to_string()
}

#[test]
fn a_battery_running_out_returns_and_lands_at_home() {
    // A pack at 16 % on take-off: low at once, critical (13 %) halfway
    // through the survey; with COM_LOW_BAT_ACT 3 it returns there and lands.
    let survey = include_str!("../../../missions/quad_survey.plan");
    let quad =
        r#"{"vehicles":[{"name":"quad","kind":"multirotor","battery":{"initial_charge":0.16}}]}"#;
    let mut f = build(
        survey,
        quad,
        "COM_LOW_BAT_ACT 3\nBAT_CRIT_THR 0.13\n",
        &[],
        true,
    );
    let truth = fly(&mut f, 400);
    let fs = events(&f, "failsafe");
    assert_eq!(fs.len(), 1, "{:?}", f.status.borrow().events);
    assert_eq!(fs[0].1, "Critical battery level: switching to RTL");
    let modes = events(&f, "mode");
    assert!(
        modes
            .iter()
            .any(|(t, m)| m == FlightMode::Return.name() && *t == fs[0].0),
        "{modes:?}"
    );
    let st = f.status.borrow();
    assert!(
        st.landed && !st.finished,
        "landed without finishing the mission"
    );
    let (end, tilt) = truth.last();
    assert!(
        end.xy().norm() < 2.0,
        "landed {:.2} m from home",
        end.xy().norm()
    );
    assert!(tilt < 0.2, "upright");
    let rem = st.battery.map_or(0.0, |b| b.remaining);
    assert!((0.05..0.13).contains(&rem), "landed with {rem:.3} left");
}

#[test]
fn a_fence_across_the_route_stops_the_quad_at_the_boundary() {
    let radius = 30.0;
    let mut f = build(&square_with_fence(radius), QUAD, "", &[], true);
    let truth = fly(&mut f, 120);
    let fs = events(&f, "failsafe");
    assert_eq!(fs.len(), 1, "{fs:?}");
    assert!(fs[0].1.contains("Geofence"), "{fs:?}");
    // Where the quad truly was when the breach was declared: on the boundary,
    // within the estimate's error and one control cycle of travel.
    let at = truth.at(fs[0].0).xy().norm();
    assert!(
        (at - radius).abs() < 1.0,
        "breach declared {at:.2} m from home"
    );
    // GF_ACTION 2 (default): hold, just past the boundary (braking).
    assert_eq!(f.status.borrow().mode, Some(FlightMode::Hold));
    let (end, _) = truth.last();
    assert!(
        end.xy().norm() < radius + 8.0,
        "held at {:.1} m",
        end.xy().norm()
    );
}

#[test]
fn gps_lost_over_a_waypoint_descends_without_flying_away() {
    // The square's first corner held for 60 s; the GPS fails on arrival.
    let mut plan: serde_json::Value = serde_json::from_str(SQUARE).unwrap();
    plan["mission"]["items"][1]["params"][0] = 60.0.into();
    let mut f = build(&plan.to_string(), QUAD, "", &["gps_loss@item1"], true);
    let truth = fly(&mut f, 200);
    let fs = events(&f, "failsafe");
    assert_eq!(fs.len(), 1, "{fs:?}");
    assert!(
        fs[0]
            .1
            .starts_with("Position estimate lost: switching to Descend"),
        "{fs:?}"
    );
    let reached = f
        .status
        .borrow()
        .reached
        .iter()
        .find(|(_, i)| *i == 1)
        .map(|x| x.0);
    let lost_at = reached.expect("item 1 reached");
    // PX4: the estimate is declared invalid once its accuracy passes
    // COM_POS_FS_EPH (about 5 s of dead reckoning), then COM_POS_FS_DELAY.
    let after = fs[0].0.secs_since(lost_at);
    assert!(
        (4.0..9.0).contains(&after),
        "failsafe {after:.1} s after the loss"
    );
    let st = f.status.borrow();
    assert!(st.landed, "it landed");
    // The estimate says how bad it is: its accuracy grew past 5 m.
    assert!(st.position_eph_m > 5.0, "eph {}", st.position_eph_m);
    // No fly-away: the drift is what an uncorrected 0.35 m/s² allows over
    // the loss (dead reckoning, then a level descent).
    let p0 = truth.at(lost_at);
    let (end, tilt) = truth.last();
    let t = truth.0.last().unwrap().0.secs_since(lost_at);
    let bound = 0.5 * 0.35 * t * t;
    let drift = (end - p0).xy().norm();
    assert!(drift < bound.min(60.0), "drifted {drift:.1} m in {t:.0} s");
    assert!(tilt < 0.2, "landed upright");
}

#[test]
fn a_hexa_that_loses_a_rotor_lands_upright_where_it_is() {
    // A hexa hovering at 47 % (1.2 kg on the generic rotors).
    let hexa = r#"{"vehicles":[{"name":"hexa","kind":"multirotor",
        "overrides":{"frame":"hexa_x","mass_kg":1.2}}]}"#;
    let mut f = build(
        SQUARE,
        hexa,
        "",
        &["motor_failure@item2:motor=0,thrust_scale=0"],
        true,
    );
    let truth = fly(&mut f, 300);
    let fs = events(&f, "failsafe");
    assert_eq!(fs.len(), 1, "{fs:?}");
    assert!(fs[0].1.contains("Motor 1 failure"), "{fs:?}");
    let reached = f
        .status
        .borrow()
        .reached
        .iter()
        .find(|(_, i)| *i == 2)
        .map(|x| x.0);
    // Found by the ESC telemetry within half a second.
    let found = fs[0].0.secs_since(reached.expect("item 2 reached"));
    assert!(found < 0.5, "found {found:.2} s after the failure");
    let st = f.status.borrow();
    assert!(st.landed && !st.armed && !st.finished, "{:?}", st.events);
    let (end, tilt) = truth.last();
    assert!(tilt < 0.2, "upright ({tilt:.2} rad)");
    // Straight down from where the rotor failed (the square's second corner).
    let corner = truth.at(reached.unwrap());
    assert!(
        (end - corner).xy().norm() < 3.0,
        "landed {:.1} m away",
        (end - corner).xy().norm()
    );
    // The heading is given up, but the spin is damped.
    let spin = truth.0.iter().map(|x| x.3).fold(0.0, f64::max);
    assert!(spin < 6.0, "spun at {spin:.1} rad/s");
}

#[test]
fn a_quad_that_loses_a_rotor_is_not_a_successful_mission() {
    let mut f = build(
        SQUARE,
        QUAD,
        "",
        &["motor_failure@item2:motor=0,thrust_scale=0"],
        true,
    );
    let _ = fly(&mut f, 200);
    let st = f.status.borrow();
    assert!(!st.finished, "the mission was not completed");
    assert!(
        st.failsafe
            .as_deref()
            .is_some_and(|t| t.contains("Motor 1")),
        "{:?}",
        st.failsafe
    );
}

fn heartbeat() -> Incoming {
    Incoming::Msg(MavMessage::HEARTBEAT(HEARTBEAT_DATA {
        custom_mode: 0,
        mavtype: MavType::MAV_TYPE_GCS,
        autopilot: MavAutopilot::MAV_AUTOPILOT_INVALID,
        base_mode: MavModeFlag::empty(),
        system_status: MavState::MAV_STATE_ACTIVE,
        mavlink_version: 3,
    }))
}

fn command(f: &Flight, ep: &mut Endpoint, command: u16, p1: f32) {
    let now = f.lockstep.sim().time();
    ep.handle(
        now,
        Duration::from_micros(now.as_micros()),
        (255, 190),
        Incoming::Command(CommandIn {
            command,
            params: [p1, 0.0, 0.0, 0.0],
            x: 0.0,
            y: 0.0,
            z: 0.0,
            target_system: 1,
            target_component: 1,
            confirmation: 0,
            int_frame: None,
        }),
        &mut Vec::new(),
    );
}

#[test]
fn a_served_quad_whose_link_is_cut_returns_after_com_dl_loss_t() {
    let mut f = build(
        SQUARE,
        QUAD,
        "NAV_DLL_ACT 2\n",
        &["gcs_link_loss@40s"],
        false,
    );
    let mission = Mission::parse(SQUARE, "square.plan").unwrap();
    let mut ep = f.endpoint(Some(&mission));
    let mut truth = Truth::default();
    let mut out: Vec<Outgoing> = Vec::new();
    let mut texts = Vec::new();
    let mut started = false;
    while f.lockstep.sim().time() < SimTime::from_secs(240) {
        f.lockstep.tick(&mut truth).unwrap();
        let now = f.lockstep.sim().time();
        // The ground station heartbeats at 1 Hz while the link is up (the
        // fault cuts it as `serve` does: nothing passes either way).
        let cut = f.lockstep.sim().vehicles()[0].faults().links.gcs_lost;
        if now.as_micros().is_multiple_of(1_000_000) && !cut {
            let link = Duration::from_micros(now.as_micros());
            ep.handle(now, link, (255, 190), heartbeat(), &mut out);
            if !started && f.status.borrow().prearm_failure.is_none() && now > SimTime::from_secs(5)
            {
                command(&f, &mut ep, 400, 1.0); // arm
                command(&f, &mut ep, 300, 0.0); // MISSION_START
                started = true;
            }
        }
        if f.lockstep.sim().tick().is_multiple_of(4) {
            ep.poll(now, Duration::from_micros(now.as_micros()), &mut out);
            for o in out.drain(..) {
                if let Outgoing::Msg(MavMessage::STATUSTEXT(t)) = o {
                    let text = t
                        .text
                        .to_str()
                        .unwrap_or("")
                        .trim_end_matches('\0')
                        .to_string();
                    texts.push((t.severity, text));
                }
            }
        }
        let st = f.status.borrow();
        if st.landed && !st.armed && started {
            break;
        }
    }
    let fs = events(&f, "failsafe");
    assert_eq!(fs.len(), 1, "{fs:?}");
    // The last heartbeat passed at 40 s (the cut starts with the next tick);
    // the link is lost COM_DL_LOSS_T (10 s) later, within a control cycle.
    let t = fs[0].0.as_secs_f64();
    assert!((50.0..50.02).contains(&t), "failsafe at {t} s");
    let modes = events(&f, "mode");
    assert!(
        modes
            .iter()
            .any(|(m_t, m)| m == "Return" && *m_t == fs[0].0),
        "{modes:?}"
    );
    let (end, _) = truth.last();
    assert!(
        end.xy().norm() < 2.0,
        "landed at home ({:.1} m)",
        end.xy().norm()
    );
    assert!(!f.status.borrow().finished);
}

#[test]
fn return_goes_to_the_closest_rally_point() {
    // The fence (30 m) sends the quad back (GF_ACTION 3); a rally point 40 m
    // north is closer than home when the breach happens 30 m north.
    let mut plan: serde_json::Value = serde_json::from_str(&square_with_fence(30.0)).unwrap();
    let frame = mavsitl_core::geo::LocalFrame::new(mavsitl_core::geo::GeoPoint::from_deg(
        47.397742, 8.545594, 488.0,
    ));
    let rally = frame.to_geodetic(&Vector3::new(25.0, 5.0, 0.0));
    plan["rallyPoints"]["points"] = serde_json::json!([[rally.lat_deg(), rally.lon_deg(), 15.0]]);
    let mut f = build(&plan.to_string(), QUAD, "GF_ACTION 3\n", &[], true);
    let truth = fly(&mut f, 200);
    let fs = events(&f, "failsafe");
    assert!(
        fs[0].1.contains("Geofence") && fs[0].1.ends_with("switching to RTL"),
        "{fs:?}"
    );
    let (end, _) = truth.last();
    let off = (end.xy() - nalgebra::Vector2::new(25.0, 5.0)).norm();
    assert!(off < 2.0, "landed {off:.1} m from the rally point");
    assert!(f.status.borrow().landed);
}

#[test]
fn a_boat_returns_or_holds_but_never_lands() {
    let boat_box = include_str!("../../../missions/boat_box.plan");
    let boat = r#"{"vehicles":[{"name":"boat","kind":"boat","battery":{"initial_charge":0.075}}],
        "home":{"lat_deg":47.3544,"lon_deg":8.5497,"alt_m":406}}"#;
    // Critical battery: Return; then GPS lost: the Descend a quad would fly
    // becomes Hold for a boat.
    let mut f = build(
        boat_box,
        boat,
        "COM_LOW_BAT_ACT 3\n",
        &["gps_loss@25s"],
        true,
    );
    let _ = fly(&mut f, 120);
    let modes: Vec<String> = events(&f, "mode").into_iter().map(|m| m.1).collect();
    assert!(modes.iter().any(|m| m == "Return"), "{modes:?}");
    assert!(!modes.iter().any(|m| m == "Land"), "{modes:?}");
    let fs = events(&f, "failsafe");
    let lost = fs.iter().find(|(_, t)| t.contains("Position")).map(|x| x.0);
    let lost = lost.unwrap_or_else(|| panic!("{fs:?}"));
    // The lost position outranks the return: the boat holds.
    let held = events(&f, "mode")
        .into_iter()
        .any(|(t, m)| t == lost && m == "Hold");
    assert!(held, "{:?}", events(&f, "mode"));
    assert_eq!(f.status.borrow().mode, Some(FlightMode::Hold));
}

#[test]
fn an_octo_that_loses_a_rotor_flies_its_mission_on() {
    let octo = r#"{"vehicles":[{"name":"octo","kind":"multirotor",
        "overrides":{"frame":"octo_x","mass_kg":1.6}}]}"#;
    let mut f = build(
        SQUARE,
        octo,
        "",
        &["motor_failure@item2:motor=0,thrust_scale=0"],
        true,
    );
    let truth = fly(&mut f, 300);
    let w = events(&f, "warning");
    assert!(
        w.iter().any(|(_, t)| t.contains("Motor 1 failure")),
        "{w:?}"
    );
    assert!(
        events(&f, "failsafe").is_empty(),
        "COM_ACT_FAIL_ACT 0 only warns"
    );
    let st = f.status.borrow();
    assert!(st.finished && st.landed, "{:?}", st.events);
    let (end, tilt) = truth.last();
    assert!(end.xy().norm() < 2.0 && tilt < 0.2, "home, upright");
}
