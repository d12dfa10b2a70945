//! The battery drain against rotor aerodynamics: the shaft power the model
//! draws in hover must sit above the ideal (momentum-theory) induced power by a
//! figure of merit small propellers have (0.4–0.8), and a hovering quad's pack
//! must last as long as its capacity over that current says.

use mavsitl_sim::physics::{airframes, Battery, BatteryParams, Multirotor};
use mavsitl_sim::world::atmosphere::{G0_M_S2, RHO0_KG_M3};

#[test]
fn hover_shaft_power_has_a_realistic_figure_of_merit() {
    for name in ["generic_quad", "x500"] {
        let p = airframes::multirotor(name).unwrap_or_else(|| panic!("no airframe {name}"));
        let n = p.rotor_geometry().len() as f64;
        let t_max = p.max_thrust_n(RHO0_KG_M3);
        let u = p.mass_kg * G0_M_S2 / (n * t_max);
        let mut m = Multirotor::new(p.clone(), 0.001);
        m.set_rotor_commands_steady(&vec![u; n as usize]);
        let shaft = m.shaft_power_w(RHO0_KG_M3);
        // Ideal induced power per rotor: T^1.5 / sqrt(2 rho A).
        let t = p.mass_kg * G0_M_S2 / n;
        let area = std::f64::consts::PI * (p.propeller_diameter_m / 2.0).powi(2);
        let ideal = n * t.powf(1.5) / (2.0 * RHO0_KG_M3 * area).sqrt();
        let fm = ideal / shaft;
        println!(
            "{name}: hover command {u:.3}, shaft {shaft:.1} W, ideal {ideal:.1} W, FM {fm:.2}"
        );
        assert!((0.4..=0.8).contains(&fm), "{name}: figure of merit {fm:.2}");
    }
}

#[test]
fn a_pack_lasts_capacity_over_current() {
    // 200 W electrical from a 4S 5000 mAh pack: about 13 A, so about 23 min to
    // empty; the integration must agree with the charge it reports.
    let mut b = Battery::new(BatteryParams::default());
    let dt = 0.01;
    let mut t = 0.0;
    while b.state().remaining > 0.0 && t < 7200.0 {
        b.step(200.0, dt);
        t += dt;
    }
    let s = b.state();
    assert!(
        (s.consumed_mah - 5000.0).abs() < 1.0,
        "{} mAh",
        s.consumed_mah
    );
    let mean_current = s.consumed_mah * 3.6 / t;
    // Mean voltage over the discharge ≈ 4 cells × 3.7 V nominal.
    let mean_voltage = 200.0 / (mean_current - BatteryParams::default().avionics_current_a);
    assert!(
        (13.8..=15.6).contains(&mean_voltage),
        "mean {mean_voltage:.2} V"
    );
    println!(
        "200 W: empty after {:.1} min at {mean_current:.1} A mean",
        t / 60.0
    );
}
