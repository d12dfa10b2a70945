//! Vehicles on a heightmap: a quad set down on a slope and one dropped on
//! it, a rover standing on it, and a rangefinder over it, each against the
//! same vehicle on home's flat ground, which it must match but for the
//! height of the ground under it.

use mavsitl_core::samples::Range;
use mavsitl_sim::sim::Lockstep;

/// The ground raised 0.1 m for every metre north over a 20 m square from
/// home: 1.5 m up at 15 m north.
const SLOPE: &str = r#""scene": {"ground": {"heightmap": {"spacing_m": 10,
    "heights_m": [[0, 0, 0], [1, 1, 1], [2, 2, 2]]}}},"#;

/// A scenario of one vehicle at (15, 10), over the slope or not.
fn at_15_10(vehicle: &str, hill: bool) -> Lockstep {
    let scene = if hill { SLOPE } else { "" };
    let text = format!(
        r#"{{"seed": 2, {scene} "vehicles": [{{"name": "v", {vehicle},
             "initial": {{"north_m": 15, "east_m": 10, "height_m": HEIGHT}}}}]}}"#
    );
    crate::scenario(&text.replace("HEIGHT", "0"), &[]).1
}

fn dropped(hill: bool) -> Lockstep {
    let text = format!(
        r#"{{"seed": 2, {} "vehicles": [{{"name": "v", "kind": "multirotor",
             "controller": {{"kind": "passive", "controls": [0, 0, 0, 0]}},
             "sensors": {{"rangefinder": {{"enabled": true, "noise_sigma_m": 0}}}},
             "initial": {{"north_m": 15, "east_m": 10, "height_m": 5}}}}]}}"#,
        if hill { SLOPE } else { "" }
    );
    crate::scenario(&text, &[]).1
}

fn z(ls: &Lockstep) -> f64 {
    ls.sim().vehicles()[0].body().state.pos_ned_m.z
}

fn run(ls: &mut Lockstep, ticks: usize) {
    for _ in 0..ticks {
        ls.tick(&mut ()).expect("tick");
    }
}

#[test]
fn a_quad_rests_on_the_slope_as_on_the_flat_but_raised() {
    let quad =
        r#""kind": "multirotor", "controller": {"kind": "passive", "controls": [0, 0, 0, 0]}"#;
    let (mut hill, mut flat) = (at_15_10(quad, true), at_15_10(quad, false));
    assert!(
        (z(&hill) - z(&flat) + 1.5).abs() < 1e-5,
        "{} {}",
        z(&hill),
        z(&flat)
    );
    run(&mut hill, 500);
    run(&mut flat, 500);
    // Held there: no sinking, no bounce.
    assert!((z(&hill) - z(&flat) + 1.5).abs() < 1e-5);
    assert_eq!(hill.sim().vehicles()[0].body().state.vel_ned_m_s.z, 0.0);
}

#[test]
fn a_quad_dropped_on_the_slope_lands_on_it_and_its_rangefinder_sees_it() {
    let (mut hill, mut flat) = (dropped(true), dropped(false));
    run(&mut hill, 10);
    run(&mut flat, 10);
    // Falling alike, 1.5 m higher; the rangefinder reads the same height
    // over the ground under it.
    assert!((z(&hill) - z(&flat) + 1.5).abs() < 1e-5);
    let range = |ls: &Lockstep| match ls.sim().vehicles()[0].samples().range.map(|r| r.range) {
        Some(Range::Distance(d)) => d,
        r => panic!("{r:?}"),
    };
    // To the rangefinder's next sample, the same tick in both.
    while hill.sim().vehicles()[0].samples().range.is_none() {
        run(&mut hill, 1);
        run(&mut flat, 1);
    }
    let (a, b) = (range(&hill), range(&flat));
    assert!(a > 5.0 && (a - b).abs() < 1e-6, "{a} {b}");
    run(&mut hill, 2000);
    run(&mut flat, 2000);
    assert_eq!(hill.sim().vehicles()[0].body().state.vel_ned_m_s.z, 0.0);
    assert!(
        (z(&hill) - z(&flat) + 1.5).abs() < 1e-5,
        "{} {}",
        z(&hill),
        z(&flat)
    );
    // Off the grid, the plane again: the same scenario at (25, 10).
    let text = format!(
        r#"{{"seed": 2, {SLOPE} "vehicles": [{{"name": "v", "kind": "multirotor",
             "initial": {{"north_m": 25, "east_m": 10}}}}]}}"#
    );
    let off = crate::scenario(&text, &[]).1;
    let text = r#"{"seed": 2, "vehicles": [{"name": "v", "kind": "multirotor",
             "initial": {"north_m": 25, "east_m": 10}}]}"#;
    assert_eq!(z(&off), z(&crate::scenario(text, &[]).1));
}

#[test]
fn a_rover_stands_on_the_slope_as_on_the_flat_but_raised() {
    let rover = r#""kind": "rover", "controller": {"kind": "passive", "controls": [0, 0, 0, 0]}"#;
    let (mut hill, mut flat) = (at_15_10(rover, true), at_15_10(rover, false));
    assert!((z(&hill) - z(&flat) + 1.5).abs() < 1e-5);
    run(&mut hill, 200);
    run(&mut flat, 200);
    assert!((z(&hill) - z(&flat) + 1.5).abs() < 1e-5);
}

#[test]
fn a_scenarios_heightmap_file_is_read_beside_it_or_refused_by_key() {
    use mavsitl_sim::scenario::{Scenario, ScenarioSource};
    let dir = std::env::temp_dir().join(format!("mavsitl-hill-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("hill.csv"), "0,0,0\n1,1,1\n2,2,2\n").unwrap();
    let src = ScenarioSource {
        name: "s.json".into(),
        base_dir: dir.clone(),
    };
    let text = |file: &str| {
        format!(
            r#"{{"scene": {{"ground": {{"heightmap": {{"spacing_m": 10, "file": "{file}"}}}}}},
                 "vehicles": [{{"kind": "multirotor", "initial": {{"north_m": 15, "east_m": 10}}}}]}}"#
        )
    };
    let s = Scenario::from_json(&text("hill.csv"), &src).expect("scenario");
    let hill = s.build(&src).expect("build");
    let flat = crate::scenario(
        r#"{"vehicles": [{"kind": "multirotor", "initial": {"north_m": 15, "east_m": 10}}]}"#,
        &[],
    )
    .1;
    assert!((z(&hill) - z(&flat) + 1.5).abs() < 1e-5);
    let e = Scenario::from_json(&text("gone.csv"), &src)
        .expect_err("missing")
        .to_string();
    assert!(
        e.contains("scene")
            && e.contains("ground.heightmap.file: ")
            && e.contains("gone.csv: cannot read"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
