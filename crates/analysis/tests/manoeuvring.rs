//! The boats' manoeuvring tests (`mavsitl_analysis::manoeuvre`) against
//! mechanics and against docs/reference/airframes.md, which publishes them.

use std::sync::OnceLock;

use mavsitl_analysis::manoeuvre::{measure, Manoeuvres, SHIPPED};
use mavsitl_sim::physics::airframes;
use mavsitl_sim::world::SEA_WATER_DENSITY_KG_M3;

/// The shipped boats' manoeuvres, measured once for all the tests.
fn all() -> &'static [Manoeuvres] {
    static ALL: OnceLock<Vec<Manoeuvres>> = OnceLock::new();
    ALL.get_or_init(|| {
        SHIPPED
            .iter()
            .map(|(a, t, s)| measure(a, *t, *s).unwrap_or_else(|e| panic!("{a}: {e}")))
            .collect()
    })
}

/// The steady turn of a twin-thruster hull at surge speed `u` with
/// differential thrust `steer` (of full), solved from the hull model's
/// documented forces by Newton's method: sway
/// 0 = −Y(v + x·r) − (m + m_u)·u·r + cross-flow, yaw
/// 0 = 2·steer·T·y − N_r·r − N_rr·|r|·r + x·Y(v + x·r) − Munk + cross-flow,
/// with the Munk moment (m_v − m_u)·u·v where the hull has it.
fn steady_turn(airframe: &str, u: f64, steer: f64) -> f64 {
    let p = airframes::boat(airframe).expect("boat");
    let rho = SEA_WATER_DENSITY_KG_M3;
    let [mu, mv, _] = p.added_mass_kg;
    let quad = |c: [f64; 2], w: f64| c[0] * w + c[1] * w.abs() * w;
    let strips = |v: f64, r: f64| {
        let [l, t, cd] = p.cross_flow;
        let dx = l / 20.0;
        // Fossen's sum: 21 points from −L/2 to L/2, each weighted L/20.
        (0..=20).fold((0.0, 0.0), |(y, n), i| {
            let x = -l / 2.0 + i as f64 * dx;
            let w = v + x * r;
            let f = -0.5 * rho * t * cd * w.abs() * w * dx;
            (y + f, n + x * f)
        })
    };
    let x = p.lateral_resistance_x_m;
    let moment = 2.0 * steer * p.thruster_max_thrust_n * p.thruster_position_m[1];
    let residual = |v: f64, r: f64| {
        let side = -quad(p.sway_damping, v + x * r);
        let (yc, nc) = strips(v, r);
        let munk = if p.yaw_munk_moment {
            (mv - mu) * u * v
        } else {
            0.0
        };
        (
            side - (p.mass_kg + mu) * u * r + yc,
            moment - quad(p.yaw_damping, r) + x * side - munk + nc,
        )
    };
    let (mut v, mut r) = (0.0, 0.05);
    for _ in 0..50 {
        let (f, g) = residual(v, r);
        let h = 1e-7;
        let (fv, gv) = residual(v + h, r);
        let (fr, gr) = residual(v, r + h);
        let (a, b, c, d) = ((fv - f) / h, (fr - f) / h, (gv - g) / h, (gr - g) / h);
        let det = a * d - b * c;
        v -= (d * f - b * g) / det;
        r -= (a * g - c * f) / det;
    }
    r
}

#[test]
fn the_steady_yaw_rate_of_a_twin_thruster_hull_is_its_force_balance() {
    for m in all().iter().filter(|m| m.airframe != "usv_rudder") {
        let analytic = steady_turn(&m.airframe, m.yaw_step_speed_m_s, 0.1);
        assert!(
            (m.yaw_rate_rad_s / analytic - 1.0).abs() < 0.01,
            "{}: {} rad/s simulated, {analytic} rad/s from the force balance",
            m.airframe,
            m.yaw_rate_rad_s
        );
    }
}

#[test]
fn every_boat_turns_the_way_it_is_steered_and_alike_both_ways() {
    for m in all() {
        assert!(
            m.yaw_rate_rad_s > 0.0 && m.port_yaw_rate_rad_s < 0.0,
            "{}: steering right turns right, left turns left",
            m.airframe
        );
        assert!(m.tactical_diameter_m > 0.0 && m.advance_m > 0.0, "{m:?}");
        let ratio = m.steady_diameter_m / m.steady_diameter_port_m;
        assert!((ratio - 1.0).abs() < 0.01, "{}: {ratio}", m.airframe);
        assert!(
            m.zigzag_overshoot_deg.iter().all(|o| *o > 0.0 && *o < 30.0),
            "{m:?}"
        );
        assert!(m.speed_t63_s < m.speed_t90_s, "{m:?}");
    }
}

/// The published manoeuvring table is what the code measures.
#[test]
fn the_published_table_is_the_measured_one() {
    let page = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/reference/airframes.md"
    );
    let text = std::fs::read_to_string(page).expect(page);
    for m in all() {
        let row = m.table_row();
        assert!(text.contains(&row), "{page} lacks the row\n{row}");
    }
}

/// The pictures' traces: the first 20 s of each step and 40 s of the
/// zig-zag at 10 Hz, and the turning circle up to one full turn.
#[test]
fn the_traces_cover_what_the_pictures_show() {
    for m in all() {
        let t = &m.traces;
        for (name, trace, n) in [
            ("speed step", &t.speed_step, 201),
            ("yaw-rate step", &t.yaw_rate_step, 201),
            ("zig-zag", &t.zigzag, 401),
        ] {
            assert_eq!(trace.len(), n, "{}: {name}", m.airframe);
            assert!((trace[n - 1].t_s - (n - 1) as f64 * 0.1).abs() < 1e-9);
        }
        let circle = &t.turning_circle;
        let last = circle.last().expect("a circle");
        assert!(last.heading_rad <= std::f64::consts::TAU, "{}", m.airframe);
        assert!(
            last.heading_rad > std::f64::consts::TAU - 0.2,
            "{}: {}",
            m.airframe,
            last.heading_rad
        );
    }
}
