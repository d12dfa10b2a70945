//! Natural cubic spline through (tᵢ, yᵢ) with non-uniform knots: continuous
//! value, first and second derivative (C²), so replayed velocity is the exact
//! derivative of replayed position and acceleration the exact derivative of
//! velocity. Solved once with the Thomas algorithm (Burden & Faires, *Numerical
//! Analysis*, §3.5).

/// A cubic spline of one coordinate.
#[derive(Debug, Clone)]
pub struct CubicSpline {
    t: Vec<f64>,
    y: Vec<f64>,
    /// Second derivatives at the knots.
    m: Vec<f64>,
}

impl CubicSpline {
    /// Builds the spline; `t` strictly increasing and as long as `y` (≥ 2).
    pub fn new(t: &[f64], y: &[f64]) -> Self {
        let n = t.len();
        let mut m = vec![0.0; n];
        if n > 2 {
            // Tridiagonal system for interior second derivatives (natural ends).
            let mut c_prime = vec![0.0; n];
            let mut d_prime = vec![0.0; n];
            for i in 1..n - 1 {
                let h0 = t[i] - t[i - 1];
                let h1 = t[i + 1] - t[i];
                let a = h0;
                let b = 2.0 * (h0 + h1);
                let c = h1;
                let d = 6.0 * ((y[i + 1] - y[i]) / h1 - (y[i] - y[i - 1]) / h0);
                let denom = b - a * c_prime[i - 1];
                c_prime[i] = c / denom;
                d_prime[i] = (d - a * d_prime[i - 1]) / denom;
            }
            for i in (1..n - 1).rev() {
                m[i] = d_prime[i] - c_prime[i] * m[i + 1];
            }
        }
        CubicSpline {
            t: t.to_vec(),
            y: y.to_vec(),
            m,
        }
    }

    /// Index of the segment containing `t` (clamped to the ends).
    pub fn segment(&self, t: f64) -> usize {
        let n = self.t.len();
        match self.t.binary_search_by(|k| k.total_cmp(&t)) {
            Ok(i) => i.min(n - 2),
            Err(i) => i.saturating_sub(1).min(n - 2),
        }
    }

    /// Value, first and second derivative at `t` (within [t₀, tₙ]).
    pub fn eval(&self, t: f64) -> (f64, f64, f64) {
        let i = self.segment(t);
        let (t0, t1) = (self.t[i], self.t[i + 1]);
        let (y0, y1) = (self.y[i], self.y[i + 1]);
        let (m0, m1) = (self.m[i], self.m[i + 1]);
        let h = t1 - t0;
        let a = t1 - t;
        let b = t - t0;
        let value = m0 * a * a * a / (6.0 * h)
            + m1 * b * b * b / (6.0 * h)
            + (y0 / h - m0 * h / 6.0) * a
            + (y1 / h - m1 * h / 6.0) * b;
        let d1 = -m0 * a * a / (2.0 * h) + m1 * b * b / (2.0 * h) - (y0 / h - m0 * h / 6.0)
            + (y1 / h - m1 * h / 6.0);
        let d2 = m0 * a / h + m1 * b / h;
        (value, d1, d2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproduces_a_cubic_inside_and_is_c2() {
        // Natural ends are exact for a cubic with zero end curvature... use sin
        // instead and check accuracy well inside.
        let t: Vec<f64> = (0..=2000).map(|k| k as f64 * 0.005).collect();
        let y: Vec<f64> = t.iter().map(|x| x.sin()).collect();
        let s = CubicSpline::new(&t, &y);
        for x in [2.0123, 5.0, 7.777] {
            let (v, d1, d2) = s.eval(x);
            assert!((v - x.sin()).abs() < 1e-10);
            assert!((d1 - x.cos()).abs() < 1e-7);
            assert!((d2 + x.sin()).abs() < 1e-5);
        }
        // Continuity of the second derivative across a knot.
        let k = t[1000];
        let (_, _, left) = s.eval(k - 1e-12);
        let (_, _, right) = s.eval(k + 1e-12);
        assert!((left - right).abs() < 1e-9);
    }

    /// The natural spline from its definition: a dense solve of the
    /// interior second derivatives (continuity of the first derivative at
    /// each interior knot, zero curvature at the ends), then each segment
    /// in power form about its left knot.
    fn by_definition(t: &[f64], y: &[f64], x: f64) -> (f64, f64, f64) {
        let n = t.len();
        let h: Vec<f64> = t.windows(2).map(|w| w[1] - w[0]).collect();
        let mut a = nalgebra::DMatrix::<f64>::zeros(n, n);
        let mut r = nalgebra::DVector::<f64>::zeros(n);
        a[(0, 0)] = 1.0;
        a[(n - 1, n - 1)] = 1.0;
        for i in 1..n - 1 {
            a[(i, i - 1)] = h[i - 1] / 6.0;
            a[(i, i)] = (h[i - 1] + h[i]) / 3.0;
            a[(i, i + 1)] = h[i] / 6.0;
            r[i] = (y[i + 1] - y[i]) / h[i] - (y[i] - y[i - 1]) / h[i - 1];
        }
        let m = a.lu().solve(&r).unwrap();
        let i = (0..n - 1).rev().find(|&i| t[i] <= x).unwrap_or(0);
        let (hi, u) = (h[i], x - t[i]);
        let b = (y[i + 1] - y[i]) / hi - hi * (2.0 * m[i] + m[i + 1]) / 6.0;
        let c = m[i] / 2.0;
        let d = (m[i + 1] - m[i]) / (6.0 * hi);
        (
            y[i] + b * u + c * u * u + d * u * u * u,
            b + 2.0 * c * u + 3.0 * d * u * u,
            2.0 * c + 6.0 * d * u,
        )
    }

    #[test]
    fn matches_the_natural_spline_on_uneven_knots() {
        let t = [-1.0, -0.3, 0.2, 1.7, 2.0, 3.5];
        let y = [2.0, -1.0, 0.5, 0.25, 3.0, -2.0];
        let s = CubicSpline::new(&t, &y);
        for k in 0..=90 {
            let x = -1.0 + 4.5 * k as f64 / 90.0;
            let (v, d1, d2) = s.eval(x);
            let (wv, wd1, wd2) = by_definition(&t, &y, x);
            assert!((v - wv).abs() < 1e-12, "value at {x}: {v} against {wv}");
            assert!((d1 - wd1).abs() < 1e-11, "slope at {x}: {d1} against {wd1}");
            assert!(
                (d2 - wd2).abs() < 1e-10,
                "curvature at {x}: {d2} against {wd2}"
            );
        }
        // Through every knot, flat curvature at both ends.
        for (ti, yi) in t.iter().zip(&y) {
            assert!((s.eval(*ti).0 - yi).abs() < 1e-12);
        }
        assert!(s.eval(-1.0).2.abs() < 1e-12 && s.eval(3.5).2.abs() < 1e-12);
    }

    #[test]
    fn two_knots_are_a_straight_line_and_times_outside_take_the_end_segments() {
        let s = CubicSpline::new(&[1.0, 3.0], &[2.0, -4.0]);
        assert_eq!(s.eval(2.5), (-2.5, -3.0, 0.0));
        let s = CubicSpline::new(&[0.0, 1.0, 2.0, 4.0], &[0.0, 1.0, 0.0, 2.0]);
        assert_eq!(s.segment(-5.0), 0);
        assert_eq!(s.segment(0.0), 0);
        assert_eq!(s.segment(1.0), 1);
        assert_eq!(s.segment(1.5), 1);
        assert_eq!(s.segment(4.0), 2);
        assert_eq!(s.segment(9.0), 2);
    }
}
