//! A heightmap against its own geometry: a plane sloping north at 1 in 10
//! over a 3 × 3 grid, read from JSON and from a CSV file, seen from above
//! and from the side, and its checks.

use mavsitl_render::scene::Surface;
use mavsitl_render::{Scene, SceneError, SceneSpec};
use parry3d::math::Vector;

/// The ground 2 m below home, raised 0.1 m for every metre north over
/// the grid from (0, 0) to (20, 20): heights 0, 1, 2 m by rows 10 m apart.
fn slope() -> Scene {
    let spec: SceneSpec = serde_json::from_str(
        r#"{"ground": {"down_m": 2, "heightmap": {"spacing_m": 10,
            "heights_m": [[0, 0, 0], [1, 1, 1], [2, 2, 2]]}}}"#,
    )
    .expect("json");
    Scene::build(&spec).expect("scene")
}

#[test]
fn the_ground_under_a_point_is_the_slope_over_the_grid_and_the_plane_off_it() {
    let s = slope();
    for (n, e) in [
        (0.0, 0.0),
        (5.0, 3.0),
        (12.5, 19.0),
        (20.0, 20.0),
        (17.0, 0.5),
    ] {
        let d = s.ground_down_at(n, e).expect("ground");
        assert!((d - (2.0 - n / 10.0)).abs() < 1e-5, "({n}, {e}): {d}");
    }
    for (n, e) in [(-0.5, 10.0), (20.5, 10.0), (10.0, -1.0), (10.0, 21.0)] {
        assert_eq!(s.ground_down_at(n, e), Some(2.0), "({n}, {e})");
    }
    // No ground at all: nothing under anything.
    let bare: SceneSpec = serde_json::from_str(r#"{"ground": {"enabled": false}}"#).unwrap();
    assert_eq!(Scene::build(&bare).unwrap().ground_down_at(0.0, 0.0), None);
}

#[test]
fn a_ray_meets_the_slope_from_above_and_from_the_side() {
    let s = slope();
    // Straight down from 50 m above home at (15, 10): the slope is 1.5 m
    // up from the plane at 2 m down.
    let hit = s
        .cast(
            Vector::new(15.0, 10.0, -50.0),
            Vector::new(0.0, 0.0, 1.0),
            1000.0,
        )
        .expect("hit");
    assert_eq!(hit.surface, Surface::Ground);
    assert!((hit.t - 50.5).abs() < 1e-4, "{}", hit.t);
    // Its normal leans back south: (−0.1, 0, −1), unit.
    let k = 1.0 / (1.01f32).sqrt();
    let n = hit.normal_ned;
    assert!(
        (n[0] + 0.1 * k).abs() < 1e-5 && n[1].abs() < 1e-5 && (n[2] + k).abs() < 1e-5,
        "{n:?}"
    );
    // Off the grid, the plane.
    let hit = s
        .cast(
            Vector::new(25.0, 10.0, -50.0),
            Vector::new(0.0, 0.0, 1.0),
            1000.0,
        )
        .expect("hit");
    assert!((hit.t - 52.0).abs() < 1e-4 && hit.normal_ned == [0.0, 0.0, -1.0]);
    // Level and northward at 0.5 m down, from 5 m south of the grid: the
    // slope reaches it where it is 1.5 m up, 15 m north, 20 m on.
    let hit = s
        .cast(
            Vector::new(-5.0, 10.0, 0.5),
            Vector::new(1.0, 0.0, 0.0),
            1000.0,
        )
        .expect("hit");
    assert!((hit.t - 20.0).abs() < 1e-4, "{}", hit.t);
    // Southward it meets nothing: the plane is below, the slope behind.
    assert!(s
        .cast(
            Vector::new(-5.0, 10.0, 0.5),
            Vector::new(-1.0, 0.0, 0.0),
            1000.0
        )
        .is_none());
    // Within reach only.
    assert!(s
        .cast(
            Vector::new(-5.0, 10.0, 0.5),
            Vector::new(1.0, 0.0, 0.0),
            19.0
        )
        .is_none());
    // Looking down over a hollow below the plane: the hollow, not the plane.
    let hollow: SceneSpec = serde_json::from_str(
        r#"{"ground": {"heightmap": {"spacing_m": 1, "origin_ne_m": [-1, -1],
            "heights_m": [[0, 0, 0], [0, -3, 0], [0, 0, 0]]}}}"#,
    )
    .unwrap();
    let s = Scene::build(&hollow).unwrap();
    let hit = s
        .cast(
            Vector::new(0.0, 0.0, -10.0),
            Vector::new(0.0, 0.0, 1.0),
            1000.0,
        )
        .expect("hit");
    assert!((hit.t - 13.0).abs() < 1e-4, "{}", hit.t);
    let d = s.ground_down_at(0.0, 0.0).expect("ground");
    assert!((d - 3.0).abs() < 1e-5, "{d}");
}

#[test]
fn heights_read_from_a_csv_file_beside_the_scene() {
    let dir = std::env::temp_dir().join(format!("mavsitl-terrain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("hill.csv"),
        "# north rows, east columns\n0, 0, 0\n1,1,1\n\n2, 2, 2\n",
    )
    .unwrap();
    let mut spec: SceneSpec = serde_json::from_str(
        r#"{"ground": {"down_m": 2, "heightmap": {"spacing_m": 10, "file": "hill.csv"}}}"#,
    )
    .unwrap();
    spec.read_files(&dir).expect("read");
    let h = spec.ground.heightmap.as_ref().unwrap();
    assert_eq!(h.heights_m, vec![vec![0.0; 3], vec![1.0; 3], vec![2.0; 3]]);
    assert!(h.file.is_none());
    assert_eq!(
        Scene::build(&spec).unwrap().ground_down_at(5.0, 3.0),
        slope().ground_down_at(5.0, 3.0)
    );
    // A bad line and a missing file, named.
    std::fs::write(dir.join("bad.csv"), "0,0\n0,x\n").unwrap();
    let mut spec: SceneSpec =
        serde_json::from_str(r#"{"ground": {"heightmap": {"spacing_m": 1, "file": "bad.csv"}}}"#)
            .unwrap();
    let e = spec.read_files(&dir).unwrap_err().to_string();
    assert_eq!(e, "ground.heightmap.file: bad.csv:2: not a row of numbers");
    let mut spec: SceneSpec =
        serde_json::from_str(r#"{"ground": {"heightmap": {"spacing_m": 1, "file": "no.csv"}}}"#)
            .unwrap();
    let e = spec.read_files(&dir).unwrap_err().to_string();
    assert!(
        e.starts_with("ground.heightmap.file: ") && e.contains("no.csv: cannot read"),
        "{e}"
    );
    // More rows than a grid may have.
    let rows = "0,0\n".repeat(1025);
    std::fs::write(dir.join("long.csv"), rows).unwrap();
    let mut spec: SceneSpec =
        serde_json::from_str(r#"{"ground": {"heightmap": {"spacing_m": 1, "file": "long.csv"}}}"#)
            .unwrap();
    let e = spec.read_files(&dir).unwrap_err().to_string();
    assert_eq!(e, "ground.heightmap.file: long.csv: more than 1024 rows");
    // A file of 32 MiB is read (here, to its first line's fault); one
    // past it is refused before it is read.
    let big = std::fs::File::create(dir.join("big.csv")).unwrap();
    big.set_len(32 << 20).unwrap();
    let mut spec: SceneSpec =
        serde_json::from_str(r#"{"ground": {"heightmap": {"spacing_m": 1, "file": "big.csv"}}}"#)
            .unwrap();
    let e = spec.read_files(&dir).unwrap_err().to_string();
    assert_eq!(e, "ground.heightmap.file: big.csv:1: not a row of numbers");
    big.set_len((32 << 20) + 1).unwrap();
    let mut spec: SceneSpec =
        serde_json::from_str(r#"{"ground": {"heightmap": {"spacing_m": 1, "file": "big.csv"}}}"#)
            .unwrap();
    let e = spec.read_files(&dir).unwrap_err().to_string();
    assert_eq!(
        e,
        "ground.heightmap.file: big.csv: 33554433 bytes; a heightmap file holds at most 33554432"
    );
    // A row of 1 024 is read whole; a longer one is refused when built.
    let row = |n: usize| vec!["1"; n].join(",");
    for (n, ok) in [(1024, true), (1025, false), (5000, false)] {
        std::fs::write(dir.join("wide.csv"), format!("{}\n{}\n", row(n), row(n))).unwrap();
        let mut spec: SceneSpec = serde_json::from_str(
            r#"{"ground": {"heightmap": {"spacing_m": 1, "file": "wide.csv"}}}"#,
        )
        .unwrap();
        spec.read_files(&dir).expect("read");
        let h = spec.ground.heightmap.as_ref().unwrap();
        assert_eq!(h.heights_m[0].len(), n.min(1025));
        assert_eq!(Scene::build(&spec).is_ok(), ok, "{n}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_heightmap_out_of_shape_or_range_is_refused_by_key() {
    let build = |heightmap: &str| -> Result<Scene, SceneError> {
        let spec: SceneSpec =
            serde_json::from_str(&format!(r#"{{"ground": {{"heightmap": {heightmap}}}}}"#))
                .unwrap();
        Scene::build(&spec)
    };
    let cases = [
        (
            r#"{"spacing_m": 1, "heights_m": [[0, 0]]}"#,
            "ground.heightmap.heights_m: 1 is outside 2..=1024 samples a side",
        ),
        (
            r#"{"spacing_m": 1, "heights_m": [[0], [0]]}"#,
            "ground.heightmap.heights_m[0]: 1 is outside 2..=1024 samples",
        ),
        (
            r#"{"spacing_m": 1, "heights_m": [[0, 0], [0, 0, 0]]}"#,
            "ground.heightmap.heights_m[1]: 3 is outside 2, as row 0",
        ),
        (
            r#"{"spacing_m": 1, "heights_m": [[0, 0], [0, 10001]]}"#,
            "ground.heightmap.heights_m[1][1]: 10001 is outside ±10000 m",
        ),
        (
            r#"{"spacing_m": 0.001, "heights_m": [[0, 0], [0, 0]]}"#,
            "ground.heightmap.spacing_m: 0.001 is outside 0.01..=1000 m",
        ),
        (
            r#"{"spacing_m": 1, "origin_ne_m": [0, -100001], "heights_m": [[0, 0], [0, 0]]}"#,
            "ground.heightmap.origin_ne_m[1]: -100001 is outside ±100000 m",
        ),
        (
            r#"{"spacing_m": 1}"#,
            "ground.heightmap.heights_m: 0 is outside 2..=1024 samples a side",
        ),
    ];
    for (h, want) in cases {
        let e = build(h).expect_err(h).to_string();
        assert_eq!(e, want, "{h}");
    }
    // The edges allowed.
    assert!(build(r#"{"spacing_m": 0.01, "heights_m": [[-10000, 0], [0, 10000]]}"#).is_ok());
    assert!(build(
        r#"{"spacing_m": 1000, "origin_ne_m": [100000, -100000], "heights_m": [[0, 0], [0, 0]]}"#
    )
    .is_ok());
}

/// The first hit on the slope of [`slope`] worked out by hand: the plane
/// down = 2 − n/10 over the square, the plane down = 2 off it.
/// `None` as well where the plane is met within a millimetre of the grid's
/// edge: there either answer is right.
fn by_hand(o: Vector, d: Vector, north_m: f32) -> Option<Option<f32>> {
    // The slope counts to within a millimetre of the grid's edge; the
    // plane counts from just off it.
    let near_square = |t: f32, m: f32| {
        let p = o + d * t;
        (-m..=north_m + m).contains(&p.x) && (-m..=20.0 + m).contains(&p.y)
    };
    let on_square = |t: f32| near_square(t, 1e-3);
    // o.z + t·d.z = 2 − (o.x + t·d.x)/10.
    let k = d.z + d.x / 10.0;
    let slope = (k != 0.0)
        .then(|| (2.0 - o.x / 10.0 - o.z) / k)
        .filter(|t| *t > 0.0 && on_square(*t));
    let plane = (d.z > 0.0).then(|| (2.0 - o.z) / d.z).filter(|t| *t > 0.0);
    if plane.is_some_and(|t| near_square(t, 1e-3) && !near_square(t, -1e-3)) {
        return None;
    }
    let plane = plane.filter(|t| !near_square(*t, 0.0));
    Some(match (slope, plane) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    })
}

#[test]
fn rays_from_cell_edges_corners_and_off_the_grid_meet_the_slope_where_worked_by_hand() {
    // The slope of [`slope`], and the same slope 40 m long on 5 rows; each
    // also moved 30 m south and 15 m east (the same rays, moved with it).
    let long = r#""heights_m": [[0, 0, 0], [1, 1, 1], [2, 2, 2], [3, 3, 3], [4, 4, 4]]"#;
    let short = r#""heights_m": [[0, 0, 0], [1, 1, 1], [2, 2, 2]]"#;
    let mut checked = 0;
    for (heights, north_m) in [(short, 20.0), (long, 40.0)] {
        for shift in [[0.0f32, 0.0], [-30.0, 15.0]] {
            let spec: SceneSpec = serde_json::from_str(&format!(
                r#"{{"ground": {{"down_m": 2, "heightmap": {{"spacing_m": 10,
                    "origin_ne_m": [{}, {}], {heights}}}}}}}"#,
                shift[0], shift[1]
            ))
            .expect("json");
            let s = Scene::build(&spec).expect("scene");
            checked += rays_against(&s, north_m, Vector::new(shift[0], shift[1], 0.0));
        }
    }
    assert!(checked > 40_000, "{checked}");
}

/// Casts rays over the slope `north_m` long from many origins in many
/// directions: each meets it where worked out by hand. The hits checked.
fn rays_against(s: &Scene, north_m: f32, shift: Vector) -> usize {
    let mut checked = 0;
    // Origins on the cells' edges and corners (multiples of 10 m), inside
    // cells and off the grid, above and below the slope's top.
    for n in [
        -10.0f32, -2.5, 0.0, 5.0, 10.0, 12.5, 20.0, 27.0, 35.0, 40.0, 44.0,
    ] {
        for e in [-5.0f32, 0.0, 7.5, 10.0, 20.0, 30.0] {
            for z in [-30.0f32, -0.5, 1.0] {
                let o = Vector::new(n, e, z);
                for az in (0..360).step_by(15) {
                    for el in [-10.0f32, 0.0, 5.0, 30.0, 60.0, 90.0] {
                        let (a, l) = ((az as f32).to_radians(), el.to_radians());
                        let d = Vector::new(l.cos() * a.cos(), l.cos() * a.sin(), l.sin());
                        let Some(want) = by_hand(o, d, north_m) else {
                            continue;
                        };
                        let want = want.filter(|t| *t <= 500.0);
                        let got = s.cast(o + shift, d, 500.0).map(|h| h.t);
                        match (got, want) {
                            (Some(g), Some(w)) => assert!(
                                (g - w).abs() < 1e-3 * w.max(1.0),
                                "from {o:?} at {az}°, {el}°: {g} m, by hand {w} m"
                            ),
                            (g, w) => assert_eq!(g, w, "from {o:?} at {az}°, {el}°"),
                        }
                        checked += usize::from(want.is_some());
                    }
                }
            }
        }
    }
    checked
}
