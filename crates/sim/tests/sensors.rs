//! Sensor models checked against statistics and physics, not against themselves.

use mavsitl_core::geo::{GeoPoint, LocalFrame};
use mavsitl_core::rng::{noise_rng, NoiseSource};
use mavsitl_core::time::SimTime;
use mavsitl_sim::sensors::noise::allan;
use mavsitl_sim::sensors::{
    Baro, BaroParams, FixType, Gps, GpsParams, Imu, ImuParams, ImuTruth, Mount,
};
use nalgebra::{UnitQuaternion, Vector3};

/// No faults.
static NOMINAL: std::sync::LazyLock<mavsitl_core::faults::FaultEffects> =
    std::sync::LazyLock::new(mavsitl_core::faults::FaultEffects::default);

const G: f64 = 9.80665;

fn static_truth() -> ImuTruth {
    ImuTruth {
        rate_frd_rad_s: Vector3::zeros(),
        ang_accel_frd_rad_s2: Vector3::zeros(),
        specific_force_frd_m_s2: Vector3::new(0.0, 0.0, -G),
    }
}

/// Two hours at 200 Hz.
const N_SAMPLES: usize = 2 * 3600 * 200;

/// Two hours of a static IMU at 200 Hz; returns per-axis gyro and accel series.
fn record_static(params: &ImuParams, seed: u64) -> [[Vec<f64>; 3]; 2] {
    let dt = 1.0 / 200.0;
    let mut imu = Imu::new(params.clone(), dt, noise_rng(seed, 0, NoiseSource::Imu));
    let n = N_SAMPLES;
    let mut out: [[Vec<f64>; 3]; 2] = Default::default();
    for series in out.iter_mut().flatten() {
        series.reserve(n);
    }
    let truth = static_truth();
    for k in 0..n {
        let s = imu.sample(SimTime::from_micros(k as u64 * 5000), &truth, &NOMINAL.imu);
        let accel_error = s.accel_m_s2 - Vector3::new(0.0, 0.0, -G);
        let [gyro_axes, accel_axes] = &mut out;
        for (axis, (g, a)) in gyro_axes.iter_mut().zip(accel_axes.iter_mut()).enumerate() {
            g.push(s.gyro_rad_s[axis]);
            a.push(accel_error[axis]);
        }
    }
    out
}

/// Allan deviation averaged over the three axes (i.i.d., so their variances average).
fn adev(axes: &[Vec<f64>; 3], dt: f64, m: usize) -> (f64, f64) {
    let mut var = 0.0;
    let mut tau = 0.0;
    for a in axes {
        let (t, s) = allan::overlapping(a, dt, m);
        tau = t;
        var += s * s / 3.0;
    }
    (tau, var.sqrt())
}

/// The data sheet's units in SI, worked here rather than taken from the
/// model: (gyro density rad/s/√Hz, gyro bias σ rad/s, accel density
/// m/s²/√Hz, accel bias σ m/s²). 1 deg/√h = (π/180) rad / √(3600 s);
/// 1 deg/h = (π/180) rad / 3600 s; 1 mg = 1e-3·g₀; 1 µg = 1e-6·g₀.
fn si_noise(p: &ImuParams) -> (f64, f64, f64, f64) {
    let deg = std::f64::consts::PI / 180.0;
    (
        p.angular_random_walk_deg_sqrt_h * deg / 3600f64.sqrt(),
        p.gyro_bias_stability_deg_h * deg / 3600.0,
        p.velocity_random_walk_mg_sqrt_hz * 1e-3 * G,
        p.accel_bias_stability_ug * 1e-6 * G,
    )
}

#[test]
fn imu_noise_units_convert_as_the_data_sheet_says() {
    // AirSim's MPU-6000: ARW 0.3 deg/√h is 8.7266e-5 rad/s/√Hz, a gyro bias
    // stability of 4.6 deg/h is 2.2302e-5 rad/s; VRW 0.24 mg/√Hz is
    // 2.3536e-3 m/s²/√Hz and 36 µg is 3.5304e-4 m/s².
    let p = ImuParams::default();
    let q = ImuParams {
        rate_hz: 400,
        ..p.clone()
    };
    let imu = Imu::new(q.clone(), 0.0025, noise_rng(0, 0, NoiseSource::Imu));
    assert_eq!(imu.params(), &q);
    for (got, want) in [
        (p.gyro_noise_density(), 8.7266e-5),
        (p.gyro_bias_sigma(), 2.2302e-5),
        (p.accel_noise_density(), 2.3536e-3),
        (p.accel_bias_sigma(), 3.5304e-4),
    ] {
        assert!((got / want - 1.0).abs() < 1e-4, "{got:e} vs {want:e}");
    }
    let (ng, bg, na, ba) = si_noise(&p);
    assert!((p.gyro_noise_density() / ng - 1.0).abs() < 1e-12);
    assert!((p.gyro_bias_sigma() / bg - 1.0).abs() < 1e-12);
    assert!((p.accel_noise_density() / na - 1.0).abs() < 1e-12);
    assert!((p.accel_bias_sigma() / ba - 1.0).abs() < 1e-12);
}

fn check_allan(params: &ImuParams, seed: u64) {
    let dt = 1.0 / 200.0;
    let data = record_static(params, seed);
    let (ng, bg, na, ba) = si_noise(params);
    let sets = [
        ("gyro", &data[0], ng, bg, params.gyro_bias_stability_tau_s),
        ("accel", &data[1], na, ba, params.accel_bias_stability_tau_s),
    ];
    for (name, axes, n, b, t) in sets {
        // White-noise level at τ = 1 s is the configured density, within
        // what the record can tell: with K = N/m clusters the estimate's
        // relative standard error is 1/√(2(K − 1)) (IEEE Std 952, annex C),
        // over three i.i.d. axes averaged √3 smaller; 4 standard errors.
        let (tau, s1) = adev(axes, dt, 200);
        let theory1 = allan::white_plus_gauss_markov(n, b, t, tau);
        let clusters = (N_SAMPLES / 200) as f64;
        let bound = 4.0 / (2.0 * (clusters - 1.0)).sqrt() / 3f64.sqrt();
        assert!(bound < 0.05, "the record pins the level to {bound}");
        assert!(
            (s1 / theory1 - 1.0).abs() < bound,
            "{name}: σ(1 s) {s1:e} vs theory {theory1:e} (density {n:e}), bound {bound}"
        );
        // Bias-instability floor: the minimum of the Allan curve, against the
        // minimum of the theoretical white + Gauss–Markov curve (±25 %).
        let mut measured_min = f64::INFINITY;
        let mut theory_min = f64::INFINITY;
        let mut m = 1usize;
        // Cluster times up to a fifth of the record.
        while m <= N_SAMPLES / 5 {
            let (tau, s) = adev(axes, dt, m);
            measured_min = measured_min.min(s);
            theory_min = theory_min.min(allan::white_plus_gauss_markov(n, b, t, tau));
            m = (m as f64 * 1.25).ceil() as usize;
        }
        let ratio = measured_min / theory_min;
        assert!(
            (ratio - 1.0).abs() < 0.25,
            "{name}: floor {measured_min:e} vs theory {theory_min:e} ({ratio})"
        );
    }
}

#[test]
fn imu_allan_deviation_matches_airsim_defaults() {
    check_allan(&ImuParams::default(), 11);
}

#[test]
fn imu_allan_deviation_matches_a_consumer_grade_set() {
    let p = ImuParams {
        angular_random_walk_deg_sqrt_h: 1.2,
        gyro_bias_stability_deg_h: 40.0,
        gyro_bias_stability_tau_s: 60.0,
        velocity_random_walk_mg_sqrt_hz: 0.8,
        accel_bias_stability_ug: 400.0,
        accel_bias_stability_tau_s: 120.0,
        ..ImuParams::default()
    };
    check_allan(&p, 12);
}

#[test]
fn imu_biases_add_to_the_reading_with_their_sign() {
    // White noise off, biases on (a consumer-grade 400 deg/h and 4 mg so that
    // they stand out): each reading is the truth plus the bias it reports.
    let p = ImuParams {
        angular_random_walk_deg_sqrt_h: 0.0,
        velocity_random_walk_mg_sqrt_hz: 0.0,
        gyro_bias_stability_deg_h: 400.0,
        accel_bias_stability_ug: 4000.0,
        ..ImuParams::default()
    };
    let mut imu = Imu::new(p, 0.004, noise_rng(3, 0, NoiseSource::Imu));
    let truth = ImuTruth {
        rate_frd_rad_s: Vector3::new(0.1, -0.2, 0.3),
        ..static_truth()
    };
    for k in 0..100 {
        let s = imu.sample(SimTime::from_micros(k * 4000), &truth, &NOMINAL.imu);
        let (bg, ba) = imu.biases();
        assert!(bg.norm() > 1e-4 && ba.norm() > 1e-3, "{bg} {ba}");
        assert!((s.gyro_rad_s - (truth.rate_frd_rad_s + bg)).norm() < 1e-15);
        assert!((s.accel_m_s2 - (Vector3::new(0.0, 0.0, -G) + ba)).norm() < 1e-14);
    }
}

#[test]
fn imu_at_rest_reads_minus_g_and_lever_arm_adds_centripetal() {
    let quiet = ImuParams {
        angular_random_walk_deg_sqrt_h: 0.0,
        gyro_bias_stability_deg_h: 0.0,
        velocity_random_walk_mg_sqrt_hz: 0.0,
        accel_bias_stability_ug: 0.0,
        mount: Mount {
            x_m: 0.1,
            y_m: 0.0,
            z_m: 0.0,
            ..Mount::default()
        },
        ..ImuParams::default()
    };
    let mut imu = Imu::new(quiet.clone(), 0.004, noise_rng(1, 0, NoiseSource::Imu));
    let s = imu.sample(SimTime::ZERO, &static_truth(), &NOMINAL.imu);
    assert_eq!(s.accel_m_s2, Vector3::new(0.0, 0.0, -G));
    // Spinning at 2 rad/s about z, a sensor 0.1 m forward feels −ω²r = −0.4 m/s² in x;
    // an angular acceleration of 3 rad/s² about z adds α × r = 0.3 m/s² in y.
    let spin = ImuTruth {
        rate_frd_rad_s: Vector3::new(0.0, 0.0, 2.0),
        ang_accel_frd_rad_s2: Vector3::new(0.0, 0.0, 3.0),
        specific_force_frd_m_s2: Vector3::new(0.0, 0.0, -G),
    };
    let s = imu.sample(SimTime::ZERO, &spin, &NOMINAL.imu);
    assert!(
        (s.accel_m_s2 - Vector3::new(-0.4, 0.3, -G)).norm() < 1e-12,
        "{}",
        s.accel_m_s2
    );
    assert_eq!(s.gyro_rad_s, Vector3::new(0.0, 0.0, 2.0));
    // A sensor yawed 90° on the body sees body x as its −y.
    let turned = ImuParams {
        mount: Mount {
            yaw_deg: 90.0,
            ..Mount::default()
        },
        ..quiet
    };
    let mut imu = Imu::new(turned, 0.004, noise_rng(1, 0, NoiseSource::Imu));
    let t = ImuTruth {
        specific_force_frd_m_s2: Vector3::new(1.0, 0.0, -G),
        ..static_truth()
    };
    let s = imu.sample(SimTime::ZERO, &t, &NOMINAL.imu);
    assert!(
        (s.accel_m_s2 - Vector3::new(0.0, -1.0, -G)).norm() < 1e-12,
        "{}",
        s.accel_m_s2
    );
    // Saturation at the configured range.
    let sat = ImuParams {
        accel_range_m_s2: 20.0,
        ..ImuParams::default()
    };
    let mut imu = Imu::new(sat, 0.004, noise_rng(1, 0, NoiseSource::Imu));
    let t = ImuTruth {
        specific_force_frd_m_s2: Vector3::new(0.0, 0.0, -500.0),
        ..static_truth()
    };
    assert_eq!(
        imu.sample(SimTime::ZERO, &t, &NOMINAL.imu).accel_m_s2.z,
        -20.0
    );
}

fn frame() -> LocalFrame {
    LocalFrame::new(GeoPoint::from_deg(47.397742, 8.545594, 488.0))
}

/// Runs a static GPS for `secs` at 10 Hz and returns the NED errors of 3-D fixes.
fn gps_errors(params: &GpsParams, secs: u64, seed: u64) -> Vec<Vector3<f64>> {
    let f = frame();
    let dt_us = 100_000;
    let mut gps = Gps::new(
        params.clone(),
        dt_us as f64 * 1e-6,
        noise_rng(seed, 0, NoiseSource::Gps),
    );
    let truth = Vector3::new(10.0, -5.0, -2.0);
    let mut errs = Vec::new();
    for k in 0..(secs * 10) {
        let t = SimTime::from_micros(k * dt_us);
        gps.measure(
            t,
            &truth,
            &Vector3::zeros(),
            &UnitQuaternion::identity(),
            &Vector3::zeros(),
            false,
            &f,
            &NOMINAL.gps,
        );
        while let Some(s) = gps.deliver(t) {
            if s.fix == FixType::Fix3d
                && s.measured.as_secs_f64() > params.startup_s + 10.0 * params.eph_tau_s
            {
                errs.push(s.pos_ned_m - truth);
                // The geodetic report is the same point.
                assert!((f.to_ned(&s.position) - s.pos_ned_m).norm() < 1e-6);
            }
        }
    }
    errs
}

#[test]
fn gps_error_has_the_configured_sigma_and_correlation_time() {
    let p = GpsParams {
        white_noise_sigma_m: 0.0,
        ..GpsParams::default()
    };
    let errs = gps_errors(&p, 200_000, 5);
    let n = errs.len() as f64;
    for (axis, sigma) in [
        (0, p.horizontal_error_sigma_m),
        (1, p.horizontal_error_sigma_m),
        (2, p.vertical_error_sigma_m),
    ] {
        let mean = errs.iter().map(|e| e[axis]).sum::<f64>() / n;
        let var = errs.iter().map(|e| (e[axis] - mean).powi(2)).sum::<f64>() / n;
        assert!(mean.abs() < 0.1 * sigma, "axis {axis}: mean {mean}");
        assert!(
            (var.sqrt() / sigma - 1.0).abs() < 0.1,
            "axis {axis}: σ {} vs {sigma}",
            var.sqrt()
        );
        // Correlation time from the autocorrelation at one configured τ: ρ = e⁻¹.
        let lag = (p.error_tau_s * 10.0) as usize;
        let cov = errs
            .windows(lag + 1)
            .map(|w| (w[0][axis] - mean) * (w[lag][axis] - mean))
            .sum::<f64>()
            / (errs.len() - lag) as f64;
        let tau = -p.error_tau_s / (cov / var).ln();
        assert!(
            (tau / p.error_tau_s - 1.0).abs() < 0.1,
            "axis {axis}: τ {tau} vs {}",
            p.error_tau_s
        );
    }
}

#[test]
fn gps_latency_startup_fix_and_denial() {
    let p = GpsParams::default();
    let f = frame();
    let mut gps = Gps::new(p.clone(), 0.1, noise_rng(1, 0, NoiseSource::Gps));
    let latency_us = 100_000;
    let mut first_3d = None;
    let mut delivered = 0;
    // 1 kHz ticks for 30 s: measure every 100 ms, deliver when due.
    for k in 0..30_000u64 {
        let t = SimTime::from_micros(k * 1000);
        let denied = (20_000..25_000).contains(&k);
        if k % 100 == 0 {
            gps.measure(
                t,
                &Vector3::zeros(),
                &Vector3::new(1.0, 1.0, 0.0),
                &UnitQuaternion::identity(),
                &Vector3::zeros(),
                denied,
                &f,
                &NOMINAL.gps,
            );
        }
        if let Some(s) = gps.deliver(t) {
            delivered += 1;
            assert_eq!(s.delivered - s.measured, latency_us);
            assert_eq!(t, s.delivered, "delivered on the tick it is due");
            let tm = s.measured.as_secs_f64();
            if tm < p.startup_s || denied_at(s.measured) {
                assert_eq!((s.fix, s.satellites), (FixType::NoFix, 0), "at {tm}");
            }
            if s.fix == FixType::Fix3d && first_3d.is_none() {
                first_3d = Some(tm);
                assert!(s.eph_m <= p.fix_3d_eph_m);
            }
            if s.fix != FixType::NoFix && s.eph_m < 1.5 * p.eph_final_m {
                assert!((s.ground_speed_m_s() - 2f64.sqrt()).abs() < 0.5);
                assert!((s.course_deg() - 45.0).abs() < 30.0);
            }
        }
    }
    assert_eq!(
        delivered, 299,
        "one report every 100 ms, the last one still in flight"
    );
    // eph falls from 20 m to 3 m after τ·ln((20 − 0.6)/(3 − 0.6)) = 6.27 s past start-up.
    let expect = p.startup_s
        + p.eph_tau_s * ((p.eph_initial_m - p.eph_final_m) / (p.fix_3d_eph_m - p.eph_final_m)).ln();
    let got = first_3d.expect("a 3-D fix");
    assert!(
        (got - expect).abs() <= 0.1 + 1e-9,
        "first 3-D fix at {got}, expected {expect}"
    );
}

/// One measurement of a receiver with `p` at `t_s`, delivered at once.
#[allow(clippy::too_many_arguments)]
fn gps_once(
    p: &GpsParams,
    seed: u64,
    t_s: f64,
    pos: Vector3<f64>,
    vel: Vector3<f64>,
    att: UnitQuaternion<f64>,
    rate: Vector3<f64>,
) -> mavsitl_sim::sensors::GpsSample {
    let p = GpsParams {
        latency_s: 0.0,
        ..p.clone()
    };
    let mut gps = Gps::new(p.clone(), 0.1, noise_rng(seed, 0, NoiseSource::Gps));
    assert_eq!(gps.params(), &p);
    let t = SimTime::from_secs_f64(t_s);
    gps.measure(t, &pos, &vel, &att, &rate, false, &frame(), &NOMINAL.gps);
    gps.deliver(t).expect("no latency")
}

#[test]
fn gps_reports_its_antenna_and_scales_its_noise_by_the_accuracy() {
    // Noise off: the antenna 0.3 m forward and 0.1 m left, on a vehicle facing
    // east (yaw 90°) and turning right at 0.5 rad/s: it sits 0.3 m east and
    // 0.1 m north of the CG and moves at ω × r = (0.05 forward, 0.15 right)
    // relative to it, which facing east is 0.05 m/s east and 0.15 m/s south.
    let quiet = GpsParams {
        horizontal_error_sigma_m: 0.0,
        vertical_error_sigma_m: 0.0,
        white_noise_sigma_m: 0.0,
        velocity_sigma_m_s: 0.0,
        mount: Mount {
            x_m: 0.3,
            y_m: -0.1,
            ..Mount::default()
        },
        ..GpsParams::default()
    };
    let att = UnitQuaternion::from_euler_angles(0.0, 0.0, std::f64::consts::FRAC_PI_2);
    let (pos, vel) = (Vector3::new(5.0, -2.0, -10.0), Vector3::new(1.0, 2.0, 0.5));
    let s = gps_once(&quiet, 1, 60.0, pos, vel, att, Vector3::new(0.0, 0.0, 0.5));
    assert!((s.pos_ned_m - (pos + Vector3::new(0.1, 0.3, 0.0))).norm() < 1e-12);
    assert!((s.vel_ned_m_s - (vel + Vector3::new(-0.15, 0.05, 0.0))).norm() < 1e-12);
    assert_eq!(
        gps_once(&quiet, 1, 1.0, pos, vel, att, Vector3::zeros()).fix,
        FixType::NoFix
    );
    // The reported accuracy converges as eph_final + (eph_initial − eph_final)·e^(−t/τ),
    // and so does epv; 1 s after start-up the fix is 2-D with at most 5 satellites.
    let p = GpsParams::default();
    for (t, fix, sats) in [(3.0, FixType::Fix2d, 5), (30.0, FixType::Fix3d, 12)] {
        let s = gps_once(&quiet, 1, t, pos, vel, att, Vector3::zeros());
        let decay = (-(t - p.startup_s) / p.eph_tau_s).exp();
        let eph = p.eph_final_m + (p.eph_initial_m - p.eph_final_m) * decay;
        let epv = p.epv_final_m + (p.epv_initial_m - p.epv_final_m) * decay;
        assert!((s.eph_m - eph).abs() < 1e-12 && (s.epv_m - epv).abs() < 1e-12);
        assert_eq!((s.fix, s.satellites), (fix, sats), "at {t} s");
    }
    // At the first fix the errors are eph/eph_final (and epv/epv_final) times
    // their converged σ: across 4 000 receivers, white noise only.
    let white = GpsParams {
        horizontal_error_sigma_m: 0.0,
        vertical_error_sigma_m: 0.0,
        ..GpsParams::default()
    };
    let n = 4000;
    let mut sq = Vector3::zeros();
    let mut sq_vel = Vector3::zeros();
    for seed in 0..n {
        let s = gps_once(&white, seed, p.startup_s, pos, vel, att, Vector3::zeros());
        sq += (s.pos_ned_m - pos).map(|e| e * e);
        sq_vel += (s.vel_ned_m_s - vel).map(|e| e * e);
    }
    let sigma = (sq / n as f64).map(f64::sqrt);
    let sigma_vel = (sq_vel / n as f64).map(f64::sqrt);
    let (k, kv) = (
        p.eph_initial_m / p.eph_final_m,
        p.epv_initial_m / p.epv_final_m,
    );
    let expect = Vector3::new(k, k, kv) * p.white_noise_sigma_m;
    let expect_vel = Vector3::repeat(k * p.velocity_sigma_m_s);
    // 4 000 samples pin a σ to about ±1.1 % (1σ); ±5 % here.
    for axis in 0..3 {
        assert!(
            (sigma[axis] / expect[axis] - 1.0).abs() < 0.05,
            "{sigma} vs {expect}"
        );
        assert!(
            (sigma_vel[axis] / expect_vel[axis] - 1.0).abs() < 0.05,
            "{sigma_vel} vs {expect_vel}"
        );
    }
}

#[test]
fn gps_error_is_the_correlated_error_scaled_and_a_lost_fix_holds_the_last_position() {
    // White noise off: the position error is exactly k·(the correlated error
    // the receiver reports), k = eph/eph_final (epv/epv_final vertically).
    let p = GpsParams {
        white_noise_sigma_m: 0.0,
        horizontal_error_sigma_m: 2.0,
        vertical_error_sigma_m: 3.0,
        latency_s: 0.0,
        ..GpsParams::default()
    };
    let mut gps = Gps::new(p.clone(), 0.1, noise_rng(4, 0, NoiseSource::Gps));
    let truth = Vector3::new(3.0, 4.0, -5.0);
    let mut last = None;
    for k in 0..600u64 {
        let t = SimTime::from_micros(k * 100_000);
        // Lost between 40 s and 50 s.
        let lost = (400..500).contains(&k);
        gps.measure(
            t,
            &truth,
            &Vector3::zeros(),
            &UnitQuaternion::identity(),
            &Vector3::zeros(),
            lost,
            &frame(),
            &NOMINAL.gps,
        );
        let s = gps.deliver(t).expect("no latency");
        if s.fix == FixType::NoFix {
            assert_eq!((s.eph_m, s.epv_m), (99.99, 99.99));
            assert_eq!(s.vel_ned_m_s, Vector3::zeros());
            if let Some(held) = last {
                assert_eq!(s.pos_ned_m, held, "a lost fix holds the last position");
            }
            continue;
        }
        let (k_h, k_v) = (s.eph_m / p.eph_final_m, s.epv_m / p.epv_final_m);
        let e = gps.correlated_error_ned_m();
        let expect = truth + Vector3::new(k_h * e.x, k_h * e.y, k_v * e.z);
        assert!((s.pos_ned_m - expect).norm() < 1e-9, "at {t:?}");
        last = Some(s.pos_ned_m);
    }
    assert!(last.is_some_and(|p| (p - truth).norm() > 0.5), "{last:?}");
}

fn denied_at(t: SimTime) -> bool {
    (20_000_000..25_000_000).contains(&t.as_micros())
}

#[test]
fn baro_matches_isa_and_drifts_as_configured() {
    // Noise off: exactly the ISA pressure at 0 m and 1000 m (ICAO table: 101 325 Pa, 89 874.6 Pa
    // at 1000 m geopotential = 1000.157 m geometric).
    let exact = BaroParams {
        noise_sigma_pa: 0.0,
        drift_sigma_pa: 0.0,
        temperature_noise_degc: 0.0,
        ..BaroParams::default()
    };
    let mut b = Baro::new(exact.clone(), 0.02, noise_rng(1, 0, NoiseSource::Baro));
    assert!((b.sample(SimTime::ZERO, 0.0).pressure_pa - 101_325.0).abs() < 1.0);
    let s = b.sample(SimTime::ZERO, 1000.157);
    assert!((s.pressure_pa - 89_874.6).abs() < 1.0, "{}", s.pressure_pa);
    assert!((s.temperature_degc - (281.65 - 273.15)).abs() < 0.01);
    assert!((s.pressure_altitude_m - 1000.157).abs() < 1e-6);
    // White noise averages out to the ISA value within 1 Pa.
    let mut b = Baro::new(
        BaroParams {
            drift_sigma_pa: 0.0,
            ..BaroParams::default()
        },
        0.02,
        noise_rng(2, 0, NoiseSource::Baro),
    );
    let n = 20_000;
    let mean = (0..n)
        .map(|_| b.sample(SimTime::ZERO, 1000.157).pressure_pa)
        .sum::<f64>()
        / n as f64;
    assert!((mean - 89_874.6).abs() < 1.0, "{mean}");
    // ... with the configured σ: 20 000 samples pin it to about ±1 %.
    // The temperature, 8.5 °C there, is as noisy as configured too.
    let (mut p_sq, mut t_sq) = (0.0, 0.0);
    for _ in 0..n {
        let s = b.sample(SimTime::ZERO, 1000.157);
        p_sq += (s.pressure_pa - 89_874.6).powi(2);
        t_sq += (s.temperature_degc - 8.5).powi(2);
    }
    let (p_sigma, t_sigma) = ((p_sq / n as f64).sqrt(), (t_sq / n as f64).sqrt());
    let sigma = b.params().noise_sigma_pa;
    assert!(
        (p_sigma / sigma - 1.0).abs() < 0.03,
        "{p_sigma} Pa vs {sigma} Pa"
    );
    let sigma = b.params().temperature_noise_degc;
    assert!(
        (t_sigma / sigma - 1.0).abs() < 0.03,
        "{t_sigma} °C vs {sigma} °C"
    );
    // Drift: after a time t from zero, the spread across independent sensors is
    // σ·√(1 − e^(−2t/τ)). The drift is discretised exactly, so the law holds for any τ:
    // a 60 s correlation time, sampled at the sensor's 50 Hz, shows it in 60 s instead
    // of the default's hour.
    let p = BaroParams {
        noise_sigma_pa: 0.0,
        drift_tau_s: 60.0,
        ..BaroParams::default()
    };
    let (runs, t_s) = (400, 45.0);
    let isa_100m = Baro::new(exact.clone(), 0.02, noise_rng(0, 0, NoiseSource::Baro))
        .sample(SimTime::ZERO, 100.0)
        .pressure_pa;
    let mut sq = 0.0;
    for seed in 0..runs {
        let mut b = Baro::new(p.clone(), 0.02, noise_rng(seed, 0, NoiseSource::Baro));
        for _ in 0..(t_s * 50.0) as usize {
            // Noise off: the pressure is the ISA pressure plus the drift (to the
            // rounding of a sum near 1e5 Pa).
            let s = b.sample(SimTime::ZERO, 100.0);
            assert!((s.pressure_pa - isa_100m - b.drift_pa()).abs() < 1e-9);
        }
        sq += b.drift_pa() * b.drift_pa();
    }
    let spread = (sq / runs as f64).sqrt();
    let expect = p.drift_sigma_pa * (1.0 - (-2.0 * t_s / p.drift_tau_s).exp()).sqrt();
    assert!(
        (spread / expect - 1.0).abs() < 0.1,
        "drift spread {spread} Pa vs {expect} Pa"
    );
}

#[test]
fn vehicles_and_sensors_never_share_a_noise_stream() {
    // Two identical static IMUs on two vehicles, and the IMU vs the GPS stream.
    let a: Vec<f64> = {
        let mut imu = Imu::new(
            ImuParams::default(),
            0.004,
            noise_rng(9, 0, NoiseSource::Imu),
        );
        (0..20_000)
            .map(|_| {
                imu.sample(SimTime::ZERO, &static_truth(), &NOMINAL.imu)
                    .gyro_rad_s
                    .x
            })
            .collect()
    };
    let b: Vec<f64> = {
        let mut imu = Imu::new(
            ImuParams::default(),
            0.004,
            noise_rng(9, 1, NoiseSource::Imu),
        );
        (0..20_000)
            .map(|_| {
                imu.sample(SimTime::ZERO, &static_truth(), &NOMINAL.imu)
                    .gyro_rad_s
                    .x
            })
            .collect()
    };
    let corr = |x: &[f64], y: &[f64]| {
        let mx = x.iter().sum::<f64>() / x.len() as f64;
        let my = y.iter().sum::<f64>() / y.len() as f64;
        let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
        let sxx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
        let syy: f64 = y.iter().map(|b| (b - my).powi(2)).sum();
        sxy / (sxx * syy).sqrt()
    };
    let diffs_a: Vec<f64> = a.windows(2).map(|w| w[1] - w[0]).collect();
    let diffs_b: Vec<f64> = b.windows(2).map(|w| w[1] - w[0]).collect();
    assert_ne!(a, b);
    assert!(
        corr(&diffs_a, &diffs_b).abs() < 0.03,
        "vehicles' IMU noise correlates"
    );
}
