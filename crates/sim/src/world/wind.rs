//! Wind, turbulence and water current.
//!
//! Sign conventions: a **wind** is given the meteorological way, by the direction
//! it blows *from* (`from_deg`, clockwise from north) and its speed; the vector it
//! produces is the air's velocity over ground in NED (it points *towards* where
//! the air goes). A **current** is given the oceanographic way, by the direction
//! it flows *towards*. Both end up as NED velocity vectors, m/s.
//!
//! **Turbulence** follows the MIL-F-8785C / MIL-HDBK-1797 low-altitude Dryden
//! model for scales and intensities: with h the height above ground in feet
//! (clamped to 10–1000 ft), L_w = h, L_u = L_v = h / (0.177 + 0.000823 h)^1.2,
//! σ_w = 0.1 W₂₀, σ_u = σ_v = σ_w / (0.177 + 0.000823 h)^0.4, where W₂₀ is the
//! wind speed at 20 ft. Each component is generated as a first-order
//! Gauss–Markov process with that σ and correlation time L/V (V the airspeed,
//! at least 1 m/s), discretised exactly (x ← a·x + σ√(1−a²)·n, a = e^(−dt·V/L)),
//! so its variance is exactly σ² at every step size; this is the Dryden
//! longitudinal form applied to all three axes (the second-order lateral and
//! vertical shaping is not modelled). Components are along the mean wind (u),
//! across it (v) and vertical (w, positive down).

use nalgebra::Vector3;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

use mavsitl_core::rng::NoiseRng;

/// A mean wind.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WindSpec {
    /// Horizontal speed, m/s (≥ 0).
    #[serde(default)]
    pub speed_m_s: f64,
    /// Direction the wind blows **from**, degrees clockwise from north.
    #[serde(default)]
    pub from_deg: f64,
    /// Vertical component, m/s, positive **down** (NED).
    #[serde(default)]
    pub down_m_s: f64,
}

impl WindSpec {
    /// The air's velocity over ground, NED, m/s.
    pub fn velocity_ned_m_s(&self) -> Vector3<f64> {
        let towards = self.from_deg.to_radians() + std::f64::consts::PI;
        Vector3::new(
            self.speed_m_s * towards.cos(),
            self.speed_m_s * towards.sin(),
            self.down_m_s,
        )
    }
}

/// A water current (horizontal).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurrentSpec {
    /// Speed, m/s (≥ 0).
    #[serde(default)]
    pub speed_m_s: f64,
    /// Direction the water flows **towards**, degrees clockwise from north.
    #[serde(default)]
    pub towards_deg: f64,
}

impl CurrentSpec {
    /// The water's velocity over ground, NED, m/s (z = 0).
    pub fn velocity_ned_m_s(&self) -> Vector3<f64> {
        let a = self.towards_deg.to_radians();
        Vector3::new(self.speed_m_s * a.cos(), self.speed_m_s * a.sin(), 0.0)
    }
}

/// Dryden turbulence settings.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurbulenceSpec {
    /// Wind speed at 20 ft (6.1 m), m/s, that sets the intensity. When absent,
    /// the mean wind speed is used. MIL-F-8785C calls 7.7 / 15.4 / 23.1 m/s
    /// (15 / 30 / 45 kt) light, moderate and severe.
    #[serde(default)]
    pub w20_m_s: Option<f64>,
}

const FT: f64 = 0.3048;

/// Dryden intensities σ (m/s) and length scales L (m) for components (u, v, w)
/// at height `height_agl_m` for a 20-ft wind of `w20_m_s`.
pub fn dryden_sigma_scale(height_agl_m: f64, w20_m_s: f64) -> ([f64; 3], [f64; 3]) {
    let h_ft = (height_agl_m / FT).clamp(10.0, 1000.0);
    let k = 0.177 + 0.000_823 * h_ft;
    let sigma_w = 0.1 * w20_m_s;
    let k04 = k.powf(0.4);
    let sigma_uv = sigma_w / k04;
    let l_uv = h_ft / (k04 * k04 * k04) * FT;
    let l_w = h_ft * FT;
    ([sigma_uv, sigma_uv, sigma_w], [l_uv, l_uv, l_w])
}

/// The turbulence state one vehicle flies through (gust velocity in the
/// mean-wind-aligned axes), with its own seeded RNG.
#[derive(Debug, Clone)]
pub struct Turbulence {
    w20_m_s: f64,
    gust_uvw_m_s: [f64; 3],
    rng: NoiseRng,
}

impl Turbulence {
    /// A calm start (zero gust) with intensity `w20_m_s` and its own RNG.
    pub fn new(w20_m_s: f64, rng: NoiseRng) -> Self {
        Turbulence {
            w20_m_s,
            gust_uvw_m_s: [0.0; 3],
            rng,
        }
    }

    /// Advances by `dt_s` and returns the gust velocity in NED (m/s).
    ///
    /// `mean_wind_ned` sets the u axis (north when calm), `airspeed_m_s` the
    /// correlation time, `height_agl_m` the scales and intensities.
    pub fn step(
        &mut self,
        dt_s: f64,
        height_agl_m: f64,
        airspeed_m_s: f64,
        mean_wind_ned: &Vector3<f64>,
    ) -> Vector3<f64> {
        let (sigma, scale) = dryden_sigma_scale(height_agl_m, self.w20_m_s);
        let v = airspeed_m_s.max(1.0);
        let a_uv = (-dt_s * v / scale[0]).exp();
        let a_w = (-dt_s * v / scale[2]).exp();
        for (i, a) in [a_uv, a_uv, a_w].into_iter().enumerate() {
            let n: f64 = StandardNormal.sample(&mut self.rng);
            self.gust_uvw_m_s[i] = a * self.gust_uvw_m_s[i] + sigma[i] * (1.0 - a * a).sqrt() * n;
        }
        let heading = if mean_wind_ned.x.abs() + mean_wind_ned.y.abs() > 1e-9 {
            mean_wind_ned.y.atan2(mean_wind_ned.x)
        } else {
            0.0
        };
        let (s, c) = heading.sin_cos();
        let [u, vv, w] = self.gust_uvw_m_s;
        Vector3::new(c * u - s * vv, s * u + c * vv, w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mavsitl_core::rng::{noise_rng, NoiseSource};

    #[test]
    fn wind_from_west_blows_east() {
        let w = WindSpec {
            speed_m_s: 5.0,
            from_deg: 270.0,
            down_m_s: 0.0,
        }
        .velocity_ned_m_s();
        assert!((w - Vector3::new(0.0, 5.0, 0.0)).norm() < 1e-12, "{w}");
        let c = CurrentSpec {
            speed_m_s: 0.5,
            towards_deg: 90.0,
        }
        .velocity_ned_m_s();
        assert!((c - Vector3::new(0.0, 0.5, 0.0)).norm() < 1e-12);
    }

    #[test]
    fn dryden_scales_match_mil_spec_at_50_ft() {
        // At h = 50 ft: L_w = 50 ft, L_u = 50/(0.177+0.04115)^1.2 ft = 310.79 ft,
        // σ_u/σ_w = 1/(0.21815)^0.4 = 1.8386 (MIL-HDBK-1797 low-altitude model).
        let (sigma, scale) = dryden_sigma_scale(50.0 * FT, 10.0);
        assert!((sigma[2] - 1.0).abs() < 1e-12);
        assert!((sigma[0] / sigma[2] - 1.8386).abs() < 1e-3, "{}", sigma[0]);
        assert!((scale[2] - 50.0 * FT).abs() < 1e-9);
        assert!((scale[0] / FT - 310.79).abs() < 0.05, "{}", scale[0] / FT);
    }

    #[test]
    fn turbulence_has_configured_variance_and_correlation() {
        let mut t = Turbulence::new(15.4, noise_rng(3, 0, NoiseSource::Turbulence));
        // ~4000 correlation times, so the σ estimate is good to about 2 %.
        let dt = 0.05;
        let wind = Vector3::new(5.0, 0.0, 0.0);
        let h = 30.0;
        let (sigma, scale) = dryden_sigma_scale(h, 15.4);
        let n = 2_400_000;
        let mut sum2 = [0.0; 3];
        let mut lag_prod = 0.0;
        let mut prev_u = 0.0;
        let lag_steps = (scale[0] / 5.0 / dt).round() as usize; // one correlation time
        let mut hist = std::collections::VecDeque::new();
        for _ in 0..n {
            let g = t.step(dt, h, 5.0, &wind);
            for i in 0..3 {
                sum2[i] += g[i] * g[i];
            }
            hist.push_back(g.x);
            if hist.len() > lag_steps {
                prev_u = hist.pop_front().unwrap_or(0.0);
            }
            lag_prod += g.x * prev_u;
        }
        for i in 0..3 {
            let s = (sum2[i] / n as f64).sqrt();
            assert!(
                (s / sigma[i] - 1.0).abs() < 0.1,
                "axis {i}: σ {s} vs {}",
                sigma[i]
            );
        }
        // Autocorrelation at one time constant is e⁻¹.
        let rho = lag_prod / sum2[0];
        assert!((rho - (-1f64).exp()).abs() < 0.08, "ρ(τ) = {rho}");
    }

    /// The documented law, step by step on the same stream: each axis is
    /// x ← a·x + σ·√(1 − a²)·n with a = e^(−dt·V/L) (V at least 1 m/s),
    /// then (u, v) turned from the mean wind's heading into north and east.
    #[test]
    fn each_step_is_the_gauss_markov_update_turned_into_the_mean_winds_axes() {
        let (w20, h, dt) = (15.4, 30.0, 0.01);
        let (sigma, scale) = dryden_sigma_scale(h, w20);
        let mut t = Turbulence::new(w20, noise_rng(5, 2, NoiseSource::Turbulence));
        let mut draws = noise_rng(5, 2, NoiseSource::Turbulence);
        let mut x = [0.0f64; 3];
        let (s30, c30) = 30f64.to_radians().sin_cos();
        // (mean wind, airspeed, V, the mean wind's heading): towards east;
        // towards 30° below the 1 m/s floor; calm (u north).
        let cases = [
            (Vector3::new(0.0, 12.0, 0.0), 12.0, 12.0, 90f64),
            (Vector3::new(3.0 * c30, 3.0 * s30, 0.5), 0.4, 1.0, 30.0),
            (Vector3::zeros(), 7.0, 7.0, 0.0),
        ];
        for (mean, airspeed, v, heading) in cases {
            let a = [scale[0], scale[1], scale[2]].map(|l| (-dt * v / l).exp());
            for _ in 0..50 {
                for i in 0..3 {
                    let n: f64 = StandardNormal.sample(&mut draws);
                    x[i] = a[i] * x[i] + sigma[i] * (1.0 - a[i] * a[i]).sqrt() * n;
                }
                let (s, c) = heading.to_radians().sin_cos();
                let want = Vector3::new(c * x[0] - s * x[1], s * x[0] + c * x[1], x[2]);
                let got = t.step(dt, h, airspeed, &mean);
                assert!(
                    (got - want).norm() < 1e-12,
                    "{heading}°: {got} against {want}"
                );
            }
        }
        assert!(x.iter().all(|g| g.abs() > 1e-3), "{x:?}");
    }
}
