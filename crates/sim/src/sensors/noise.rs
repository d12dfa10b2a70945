//! Noise primitives shared by the sensor models, each discretised exactly.
//!
//! - White noise from a continuous density N (unit/√Hz) sampled every dt has
//!   σ = N/√dt (IEEE Std 952-1997 Annex C; the Kalibr IMU model).
//! - A first-order Gauss–Markov process with stationary σ and correlation time τ
//!   is advanced as x ← a·x + σ·√(1 − a²)·w with a = e^(−dt/τ), w ~ N(0, 1), which
//!   keeps its variance exactly σ² at any dt (AirSim's `GaussianMarkov` uses
//!   (1 − a)·σ instead, which makes its stationary σ ≈ σ·√(dt/2τ): far too small).
//! - Quantisation and saturation model the ADC.

use rand_distr::{Distribution, StandardNormal};

use mavsitl_core::rng::NoiseRng;

/// A standard normal draw.
pub fn gaussian(rng: &mut NoiseRng) -> f64 {
    StandardNormal.sample(rng)
}

/// `x` plus a zero-mean Gaussian draw of standard deviation `sigma`.
pub fn noisy(x: f64, sigma: f64, rng: &mut NoiseRng) -> f64 {
    plus_draw(x, sigma, gaussian(rng))
}

/// `x` plus `sigma` times `w`, a standard normal draw already taken.
///
/// Every additive white noise goes through here: a draw is symmetric, so
/// `x + σ·w` and `x − σ·w` are the same process, and only the statistics
/// of the result can be tested.
pub fn plus_draw(x: f64, sigma: f64, w: f64) -> f64 {
    x + sigma * w
}

/// A first-order Gauss–Markov process.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GaussMarkov {
    sigma: f64,
    a: f64,
    b: f64,
    /// Current value.
    pub value: f64,
}

impl GaussMarkov {
    /// Stationary σ, correlation time τ (s; infinite or ≤ 0 means "constant"),
    /// update period dt (s), starting at `value`.
    pub fn new(sigma: f64, tau_s: f64, dt_s: f64, value: f64) -> Self {
        let a = if tau_s.is_finite() && tau_s > 0.0 {
            (-dt_s / tau_s).exp()
        } else {
            1.0
        };
        GaussMarkov {
            sigma,
            a,
            b: sigma * (1.0 - a * a).max(0.0).sqrt(),
            value,
        }
    }

    /// Stationary standard deviation.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// A draw from the stationary distribution (to start in steady state).
    pub fn stationary_start(mut self, rng: &mut NoiseRng) -> Self {
        self.value = self.sigma * gaussian(rng);
        self
    }

    /// Advances one period and returns the new value.
    pub fn step(&mut self, rng: &mut NoiseRng) -> f64 {
        self.value = plus_draw(self.a * self.value, self.b, gaussian(rng));
        self.value
    }
}

/// Rounds `x` to a multiple of `resolution` (no-op when ≤ 0).
pub fn quantize(x: f64, resolution: f64) -> f64 {
    if resolution > 0.0 {
        (x / resolution).round() * resolution
    } else {
        x
    }
}

/// Clamps `x` to ±`range` (no-op when ≤ 0).
pub fn saturate(x: f64, range: f64) -> f64 {
    if range > 0.0 {
        x.clamp(-range, range)
    } else {
        x
    }
}

/// Allan deviation and related statistics, for tests and tools.
pub mod allan {
    /// Overlapping Allan deviation of rate samples `y` (sampled every `dt` s) at
    /// cluster lengths `m` (in samples). Returns (τ = m·dt, σ(τ)).
    pub fn overlapping(y: &[f64], dt: f64, m: usize) -> (f64, f64) {
        let n = y.len();
        if m == 0 || n < 2 * m + 1 {
            return (m as f64 * dt, f64::NAN);
        }
        // Integrate to "angle" θ_k with θ_0 = 0, then
        // σ² = Σ (θ_{k+2m} − 2θ_{k+m} + θ_k)² / (2 τ² (N − 2m)).
        let mut theta = Vec::with_capacity(n + 1);
        let mut acc = 0.0;
        theta.push(0.0);
        for v in y {
            acc += v * dt;
            theta.push(acc);
        }
        let tau = m as f64 * dt;
        let count = theta.len() - 2 * m;
        let sum: f64 = (0..count)
            .map(|k| {
                let d = theta[k + 2 * m] - 2.0 * theta[k + m] + theta[k];
                d * d
            })
            .sum();
        (tau, (sum / (2.0 * tau * tau * count as f64)).sqrt())
    }

    /// Theoretical Allan variance of white noise of density `n` plus a first-order
    /// Gauss–Markov process of stationary σ `b` and correlation time `t`, at τ.
    /// (IEEE Std 952-1997 Annex C; GM term from the process's autocorrelation.)
    pub fn white_plus_gauss_markov(n: f64, b: f64, t: f64, tau: f64) -> f64 {
        let x = tau / t;
        let gm = 2.0 * b * b * t / tau
            * (1.0 - (t / (2.0 * tau)) * (3.0 - 4.0 * (-x).exp() + (-2.0 * x).exp()));
        (n * n / tau + gm).sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mavsitl_core::rng::{noise_rng, NoiseSource};

    #[test]
    fn gauss_markov_keeps_its_variance_and_correlation() {
        let mut rng = noise_rng(1, 0, NoiseSource::Imu);
        let (sigma, tau, dt) = (2.0, 5.0, 0.05);
        let mut gm = GaussMarkov::new(sigma, tau, dt, 0.0).stationary_start(&mut rng);
        let n = 2_000_000;
        let lag = (tau / dt) as usize;
        let mut xs = Vec::with_capacity(n);
        for _ in 0..n {
            xs.push(gm.step(&mut rng));
        }
        let var = xs.iter().map(|x| x * x).sum::<f64>() / n as f64;
        assert!((var.sqrt() / sigma - 1.0).abs() < 0.03, "σ {}", var.sqrt());
        let cov = xs.windows(lag + 1).map(|w| w[0] * w[lag]).sum::<f64>() / (n - lag) as f64;
        assert!(
            (cov / var - (-1f64).exp()).abs() < 0.03,
            "ρ(τ) {}",
            cov / var
        );
    }

    #[test]
    fn allan_of_white_noise_is_density_over_root_tau() {
        let mut rng = noise_rng(2, 0, NoiseSource::Imu);
        let dt: f64 = 0.01;
        let density = 3e-3;
        let y: Vec<f64> = (0..400_000)
            .map(|_| density / dt.sqrt() * gaussian(&mut rng))
            .collect();
        for m in [1usize, 10, 100, 1000] {
            let (tau, s) = allan::overlapping(&y, dt, m);
            let expect = density / tau.sqrt();
            assert!((s / expect - 1.0).abs() < 0.1, "τ {tau}: {s} vs {expect}");
        }
    }

    #[test]
    fn gauss_markov_without_a_finite_positive_tau_is_a_constant() {
        let mut rng = noise_rng(3, 0, NoiseSource::Imu);
        for tau in [f64::INFINITY, 0.0, -1.0, f64::NAN] {
            let mut gm = GaussMarkov::new(2.0, tau, 0.01, 3.0);
            assert_eq!(gm.sigma(), 2.0);
            for _ in 0..10 {
                assert_eq!(gm.step(&mut rng), 3.0, "τ {tau}");
            }
        }
        // A turn-on draw from the stationary distribution: σ across 20 000
        // processes, to ±3 %.
        let n = 20_000;
        let sq: f64 = (0..n)
            .map(|_| {
                GaussMarkov::new(2.0, f64::INFINITY, 0.01, 0.0)
                    .stationary_start(&mut rng)
                    .value
                    .powi(2)
            })
            .sum();
        assert!(((sq / n as f64).sqrt() / 2.0 - 1.0).abs() < 0.03);
    }

    /// The white + Gauss–Markov Allan curve against its limits: white noise
    /// N²/τ; the GM part (2/3)·b²·τ/T well below T and 2·b²·T/τ well above
    /// it; and its peak, ≈ 0.618·b at τ ≈ 1.89·T (the bias-instability
    /// bump of a first-order Markov bias).
    #[test]
    fn the_allan_model_has_the_published_limits_and_peak() {
        let (n, b, t) = (3e-3, 2e-4, 50.0);
        let white = allan::white_plus_gauss_markov(n, 0.0, t, 4.0);
        assert!((white - n / 2.0).abs() < 1e-15);
        let gm = |tau: f64| allan::white_plus_gauss_markov(0.0, b, t, tau).powi(2);
        let short = 1e-3 * t;
        assert!((gm(short) / (2.0 / 3.0 * b * b * short / t) - 1.0).abs() < 1e-3);
        let long = 1e4 * t;
        assert!((gm(long) / (2.0 * b * b * t / long) - 1.0).abs() < 1e-3);
        let (mut peak, mut at) = (0.0, 0.0);
        let mut tau = 0.1 * t;
        while tau < 10.0 * t {
            let s = gm(tau).sqrt();
            if s > peak {
                (peak, at) = (s, tau);
            }
            tau *= 1.001;
        }
        assert!((peak / b - 0.618).abs() < 2e-3, "peak {}", peak / b);
        assert!((at / t - 1.89).abs() < 0.02, "at {}", at / t);
    }

    #[test]
    fn allan_of_an_alternating_series_by_hand() {
        // y = 1, −1, 1, −1, 1 at dt = 1: θ = 0, 1, 0, 1, 0, 1; the four second
        // differences are ∓2, so σ² = 16 / (2·1²·4) = 2.
        let y = [1.0, -1.0, 1.0, -1.0, 1.0];
        assert_eq!(allan::overlapping(&y, 1.0, 1), (1.0, 2f64.sqrt()));
        // At dt = 0.5 the angles halve and τ halves: σ² = 4/(2·0.25·4) = 2.
        let (tau, s) = allan::overlapping(&y, 0.5, 1);
        assert_eq!(tau, 0.5);
        assert!((s - 2f64.sqrt()).abs() < 1e-15);
        // m = 2 needs 5 samples: θ₄ − 2θ₂ + θ₀ and θ₅ − 2θ₃ + θ₁, both 0.
        assert_eq!(allan::overlapping(&y, 1.0, 2), (2.0, 0.0));
        // m = 1 needs 3 samples: θ₂ − 2θ₁ + θ₀ = −2 and θ₃ − 2θ₂ + θ₁ = 2.
        assert_eq!(allan::overlapping(&y[..3], 1.0, 1), (1.0, 2f64.sqrt()));
        let (tau, s) = allan::overlapping(&y[..4], 0.5, 2);
        assert!(tau == 1.0 && s.is_nan(), "too short");
        assert!(allan::overlapping(&y, 1.0, 0).1.is_nan());
    }

    #[test]
    fn quantize_and_saturate() {
        assert_eq!(quantize(0.26, 0.1), 0.30000000000000004);
        assert_eq!(quantize(1.234, 0.0), 1.234);
        assert_eq!(saturate(5.0, 2.0), 2.0);
        assert_eq!(saturate(-5.0, 2.0), -2.0);
        assert_eq!(saturate(5.0, 0.0), 5.0);
    }
}
