//! Mission files: QGroundControl .plan and QGC WPL 110, read, written and
//! round-tripped, and the errors for broken files.

use mavsitl_mavlink::mission::{commands, plan, wpl, Mission, MissionError, MissionItem};

const PLAN: &str = r#"{
  "fileType": "Plan",
  "groundStation": "QGroundControl",
  "version": 1,
  "geoFence": {
    "circles": [ { "circle": { "center": [47.3977, 8.5456], "radius": 300 }, "inclusion": true, "version": 1 } ],
    "polygons": [ { "inclusion": false, "polygon": [[47.398, 8.546], [47.398, 8.547], [47.399, 8.547]], "version": 1 } ],
    "version": 2
  },
  "mission": {
    "cruiseSpeed": 15, "firmwareType": 12, "hoverSpeed": 5, "globalPlanAltitudeMode": 1,
    "items": [
      { "autoContinue": true, "command": 22, "doJumpId": 1, "frame": 3, "params": [0, 0, 0, null, 47.3977, 8.5456, 20], "type": "SimpleItem" },
      { "autoContinue": true, "command": 16, "doJumpId": 2, "frame": 3, "params": [0, 0, 0, null, 47.3980, 8.5456, 20], "type": "SimpleItem" },
      { "complexItemType": "survey", "type": "ComplexItem", "version": 5,
        "TransectStyleComplexItem": { "Items": [
          { "autoContinue": true, "command": 16, "doJumpId": 3, "frame": 3, "params": [0, 0, 0, null, 47.3981, 8.5457, 30], "type": "SimpleItem" },
          { "autoContinue": true, "command": 206, "doJumpId": 4, "frame": 2, "params": [25, 0, 1, 0, 0, 0, 0], "type": "SimpleItem" },
          { "autoContinue": true, "command": 16, "doJumpId": 5, "frame": 3, "params": [0, 0, 0, null, 47.3985, 8.5457, 30], "type": "SimpleItem" }
        ] } },
      { "autoContinue": true, "command": 177, "doJumpId": 6, "frame": 2, "params": [2, 3, 0, 0, 0, 0, 0], "type": "SimpleItem" },
      { "autoContinue": true, "command": 20, "doJumpId": 7, "frame": 2, "params": [0, 0, 0, 0, 0, 0, 0], "type": "SimpleItem" }
    ],
    "plannedHomePosition": [47.3977, 8.5456, 488],
    "vehicleType": 2, "version": 2
  },
  "rallyPoints": { "points": [[47.3979, 8.5459, 25]], "version": 2 }
}"#;

fn same(a: &MissionItem, b: &MissionItem) -> bool {
    let eq = |x: f64, y: f64| (x.is_nan() && y.is_nan()) || x == y;
    a.command == b.command
        && a.frame == b.frame
        && a.autocontinue == b.autocontinue
        && a.params.iter().zip(&b.params).all(|(x, y)| eq(*x, *y))
        && eq(a.x, b.x)
        && eq(a.y, b.y)
        && eq(a.z, b.z)
}

#[test]
fn reads_a_qgc_plan_with_survey_fence_rally_and_jump() {
    let m = Mission::parse(PLAN, "t.plan").expect("plan");
    assert_eq!(m.vehicle_type, Some(2), "a multirotor's plan");
    let home = m.home.expect("home");
    assert_eq!(
        (home.lat_deg, home.lon_deg, home.alt_m),
        (47.3977, 8.5456, 488.0)
    );
    let cmds: Vec<u16> = m.items.iter().map(|i| i.command).collect();
    assert_eq!(
        cmds,
        [22, 16, 16, 206, 16, 177, 20],
        "survey flattened in place"
    );
    assert!(m.items[0].params[3].is_nan(), "null is NaN");
    // DO_JUMP to doJumpId 2 is item index 1.
    assert_eq!(m.items[5].params[0], 1.0);
    assert_eq!(m.items[5].params[1], 3.0);
    assert_eq!(m.fence.len(), 4, "3 polygon vertices + 1 circle");
    assert_eq!(
        m.fence[0].command,
        commands::NAV_FENCE_POLYGON_VERTEX_EXCLUSION
    );
    assert_eq!(m.fence[0].params[0], 3.0);
    assert_eq!(m.fence[3].command, commands::NAV_FENCE_CIRCLE_INCLUSION);
    assert_eq!(m.rally.len(), 1);
    assert_eq!(
        (m.hover_speed_m_s, m.cruise_speed_m_s),
        (Some(5.0), Some(15.0))
    );
}

#[test]
fn plan_and_wpl_round_trip() {
    let m = Mission::parse(PLAN, "t.plan").expect("plan");
    let again =
        Mission::parse(&plan::to_string(&m, 2), "out.plan").expect("written plan reads back");
    assert_eq!(again.items.len(), m.items.len());
    assert!(
        m.items.iter().zip(&again.items).all(|(a, b)| same(a, b)),
        "plan round trip"
    );
    assert_eq!(again.fence.len(), m.fence.len());
    assert!(m.fence.iter().zip(&again.fence).all(|(a, b)| same(a, b)));
    assert_eq!(again.home, m.home);
    let w = wpl::to_string(&m);
    assert!(
        w.starts_with("QGC WPL 110\n0\t1\t0\t16\t0\t0\t0\t0\t47.3977\t8.5456\t488\t1\n"),
        "{w}"
    );
    let back = Mission::parse(&w, "out.waypoints").expect("wpl reads back");
    assert_eq!(back.home, m.home);
    assert!(
        m.items.iter().zip(&back.items).all(|(a, b)| same(a, b)),
        "wpl round trip"
    );
}

/// A fence read from a waypoint file (or, later, uploaded) may carry any vertex
/// count in param1; writing it as a plan must keep every vertex, not panic.
#[test]
fn writing_a_fence_with_a_wrong_vertex_count_keeps_every_vertex() {
    for count in [1e30, f64::NAN, -3.0, 2.0] {
        let vertex = |lat: f64, lon: f64| MissionItem {
            command: commands::NAV_FENCE_POLYGON_VERTEX_INCLUSION,
            frame: mavsitl_mavlink::mission::FRAME_GLOBAL,
            params: [count, 0.0, 0.0, 0.0],
            x: lat,
            y: lon,
            z: 0.0,
            autocontinue: true,
        };
        let m = Mission {
            fence: vec![vertex(47.0, 8.0), vertex(47.1, 8.0), vertex(47.1, 8.1)],
            ..Mission::default()
        };
        let back = Mission::parse(&plan::to_string(&m, 2), "out.plan").expect("plan reads back");
        let lats: Vec<f64> = back.fence.iter().map(|f| f.x).collect();
        assert_eq!(lats, [47.0, 47.1, 47.1], "vertex count {count}");
        assert!(back.fence.iter().all(|f| f.params[0] == 3.0));
    }
    // Two adjacent triangles with correct counts stay two triangles.
    let tri = |count: f64| MissionItem {
        command: commands::NAV_FENCE_POLYGON_VERTEX_INCLUSION,
        frame: mavsitl_mavlink::mission::FRAME_GLOBAL,
        params: [count, 0.0, 0.0, 0.0],
        x: 47.0,
        y: 8.0,
        z: 0.0,
        autocontinue: true,
    };
    let m = Mission {
        fence: vec![tri(3.0); 6],
        ..Mission::default()
    };
    let text = plan::to_string(&m, 2);
    let back = Mission::parse(&text, "out.plan").expect("plan reads back");
    assert_eq!(back.fence.len(), 6);
    assert_eq!(text.matches("\"polygon\"").count(), 2, "{text}");
}

#[test]
fn reads_mission_planner_wpl_with_spaces() {
    let text = "QGC WPL 110\n0 1 0 16 0 0 0 0 -35.363261 149.165230 584.0 1\n# a comment\n1 0 3 22 0 0 0 0 0 0 15 1\n2\t0\t3\t16\t0\t0\t0\t0\t-35.36\t149.166\t15\t1\n3 0 0 177 2 1 0 0 0 0 0 1\n";
    let m = Mission::parse(text, "mp.waypoints").expect("wpl");
    assert_eq!(m.home.map(|h| h.lat_deg), Some(-35.363261));
    assert_eq!(m.items.len(), 3);
    assert_eq!(
        m.items[2].params[0], 1.0,
        "WPL jump target 2 (counting home) is item index 1"
    );
}

fn err(text: &str) -> String {
    Mission::parse(text, "bad.plan")
        .expect_err("must fail")
        .to_string()
}

#[test]
fn broken_files_name_the_path_or_line() {
    assert_eq!(
        err("{\"fileType\": \"Plan\",\n\"mission\": {\"items\": [}"),
        "bad.plan:2: expected value"
    );
    assert_eq!(
        err("{\"fileType\": \"Mission\"}"),
        "bad.plan: fileType: expected \"Plan\", found Some(\"Mission\")"
    );
    assert_eq!(
        err(
            r#"{"fileType":"Plan","mission":{"items":[{"type":"SimpleItem","command":16,"frame":3,"params":[0,0,0,0,47,8]}]}}"#
        ),
        "bad.plan: mission.items[0].params: expected 7 parameters, found 6"
    );
    assert_eq!(
        err(
            r#"{"fileType":"Plan","mission":{"items":[{"type":"SimpleItem","command":"16","frame":3,"params":[0,0,0,0,47,8,5]}]}}"#
        ),
        "bad.plan: mission.items[0].command: invalid type: string \"16\", expected u16"
    );
    assert_eq!(
        err(r#"{"fileType":"Plan","mission":{"items":[{"type":"ComplexItem","complexItemType":"StructureScan"}]}}"#),
        "bad.plan: mission.items[0].complexItemType: 'StructureScan' is not supported (survey and CorridorScan are; a StructureScan stores no flight path in the file)"
    );
    assert_eq!(
        err(
            r#"{"fileType":"Plan","mission":{"items":[{"type":"SimpleItem","command":177,"frame":2,"params":[9,1,0,0,0,0,0]}]}}"#
        ),
        "bad.plan: mission.items (item 0): DO_JUMP to doJumpId 9, which no item has"
    );
    assert_eq!(
        Mission::parse(
            "QGC WPL 110\n0 1 0 16 0 0 0 0 1 2 3 1\n1 0 3 16 0 0 0 0 1 2\n",
            "x.txt"
        )
        .expect_err("short")
        .to_string(),
        "x.txt:3: 10 fields; a waypoint line has 12"
    );
    assert_eq!(
        Mission::parse(
            "QGC WPL 110\n0 1 0 16 0 0 0 0 1 2 3 1\n2 0 3 16 0 0 0 0 1 2 3 1\n",
            "x.txt"
        )
        .expect_err("gap")
        .to_string(),
        "x.txt:3: index 2, expected 1"
    );
    assert!(matches!(
        Mission::parse("hello", "x"),
        Err(MissionError::Format { .. })
    ));
}

/// Positions no vehicle can fly to are refused at load, naming the item (they
/// used to be flown towards; only the planned home was checked).
#[test]
fn out_of_range_positions_are_refused() {
    let item = |lat: &str, lon: &str, alt: &str| {
        format!(
            r#"{{"fileType":"Plan","mission":{{"items":[{{"type":"SimpleItem","command":22,"frame":3,"params":[0,0,0,null,0,0,10]}},{{"type":"SimpleItem","command":16,"frame":3,"params":[0,0,0,null,{lat},{lon},{alt}]}}]}}}}"#
        )
    };
    assert_eq!(
        err(&item("91", "8", "10")),
        "bad.plan: mission item 1 (MAV_CMD_NAV_WAYPOINT): latitude 91 is outside -90..90"
    );
    assert_eq!(
        err(&item("1e300", "8", "10")),
        "bad.plan: mission item 1 (MAV_CMD_NAV_WAYPOINT): latitude 1e300 is outside -90..90"
    );
    assert_eq!(
        err(&item("47", "500", "10")),
        "bad.plan: mission item 1 (MAV_CMD_NAV_WAYPOINT): longitude 500 is outside -180..180"
    );
    assert_eq!(
        err(&item("47", "8", "1e9")),
        "bad.plan: mission item 1 (MAV_CMD_NAV_WAYPOINT): altitude 1e9 m is beyond ±100000 m"
    );
    // A take-off "here" (0, 0) is fine.
    Mission::parse(&item("47", "8", "10"), "ok.plan").expect("in range");
    // A WPL home of 999 999.
    let e = Mission::parse(
        "QGC WPL 110\n0\t1\t0\t16\t0\t0\t0\t0\t999\t999\t488\t1\n",
        "home.waypoints",
    )
    .expect_err("home");
    assert!(e.to_string().contains("latitude 999"), "{e}");
}

/// A UTF-8 byte-order mark, as some editors write, is accepted.
#[test]
fn a_byte_order_mark_is_accepted() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../missions/quad_square.plan"),
    )
    .expect("plan");
    let with_bom = format!("\u{feff}{text}");
    let a = Mission::parse(&with_bom, "bom.plan").expect("BOM accepted");
    let b = Mission::parse(&text, "plain.plan").expect("plain");
    // (Debug text: the items' NaN yaw makes `==` false for equal plans.)
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}

/// A planned home out of range names the file and the home (it used to name
/// "<built-in vehicle>" with an internal error).
#[test]
fn an_absurd_planned_home_names_the_file() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../missions/quad_square.plan"),
    )
    .expect("plan");
    let mut plan: serde_json::Value = serde_json::from_str(&text).expect("json");
    plan["mission"]["plannedHomePosition"][2] = serde_json::json!(1e300);
    let e = Mission::parse(&plan.to_string(), "h.plan").expect_err("home");
    assert_eq!(
        e.to_string(),
        "h.plan: planned home: altitude 1e300 m is beyond ±100000 m"
    );
}
