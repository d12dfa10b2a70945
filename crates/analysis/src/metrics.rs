//! Mission metrics on ground truth against the planned route, the same code
//! for every controller: time and path, cross-track error overall and per
//! leg, how each corner was taken, speed, acceleration and jerk, altitude
//! error, energy and where the vehicle came to rest.

use nalgebra::{Vector2, Vector3};

use super::route::Route;
use super::track::{Sample, Track};

/// Speed above which the vehicle counts as moving, m/s: the flight is timed
/// from the first sample above it to the last.
pub const MOVING_M_S: f64 = 0.3;

/// Cross-track error on one leg.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct LegMetrics {
    /// RMS horizontal distance to the leg of the samples nearest to it, m.
    pub xtrack_rms_m: f64,
    /// Largest, m.
    pub xtrack_max_m: f64,
    /// Samples nearest to this leg.
    pub samples: usize,
}

/// How a corner (a route point between two legs) was taken.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct CornerMetrics {
    /// Index of the route point.
    pub point: usize,
    /// Farthest the track went outside the two legs near the corner, m.
    pub overshoot_m: f64,
    /// How far inside the corner point the track passed at its closest, m
    /// (0 when it passed over or outside it).
    pub cut_m: f64,
    /// Horizontal speed at the closest approach, m/s.
    pub speed_m_s: f64,
}

/// Everything measured of one flight.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct MissionMetrics {
    /// What the run said of the mission.
    pub completed: Option<bool>,
    /// From the first to the last moving sample, s.
    pub time_s: f64,
    /// Distance flown in that time, 3-D m.
    pub path_m: f64,
    /// RMS cross-track error over the moving samples, m.
    pub xtrack_rms_m: f64,
    /// Largest cross-track error, m.
    pub xtrack_max_m: f64,
    /// Per leg, in route order.
    pub legs: Vec<LegMetrics>,
    /// Per corner, in route order.
    pub corners: Vec<CornerMetrics>,
    /// Largest 3-D speed, m/s.
    pub speed_max_m_s: f64,
    /// RMS speed over the moving time, m/s.
    pub speed_rms_m_s: f64,
    /// Largest acceleration (from the velocity at [`DYNAMICS_HZ`]), m/s².
    pub accel_max_m_s2: f64,
    /// RMS acceleration, m/s².
    pub accel_rms_m_s2: f64,
    /// Largest jerk (from the velocity at [`DYNAMICS_HZ`]), m/s³.
    pub jerk_max_m_s3: f64,
    /// RMS jerk, m/s³.
    pub jerk_rms_m_s3: f64,
    /// RMS altitude error along the legs, away from their ends (farther than
    /// the acceptance radius), m (None: no such sample).
    pub alt_err_rms_m: Option<f64>,
    /// Largest altitude error along the legs, m.
    pub alt_err_max_m: Option<f64>,
    /// Energy drawn from the battery, Wh.
    pub energy_wh: Option<f64>,
    /// Horizontal distance from home where the vehicle came to rest, m.
    pub rest_from_home_m: f64,
}

/// A running RMS and maximum.
#[derive(Debug, Clone, Copy, Default)]
struct Accum {
    sq: f64,
    n: usize,
    max: f64,
}

impl Accum {
    fn add(&mut self, x: f64) {
        self.sq += x * x;
        self.n += 1;
        self.max = self.max.max(x);
    }
    fn merge(&mut self, other: &Accum) {
        self.sq += other.sq;
        self.n += other.n;
        self.max = self.max.max(other.max);
    }
    fn rms(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            (self.sq / self.n as f64).sqrt()
        }
    }
}

/// The whole-mission cross-track error measured sample by sample, as
/// [`MissionMetrics::measure`] measures it over a recording: the distance
/// to the nearest leg of the route, over the samples from the first to the
/// last moving one (faster than [`MOVING_M_S`]). A flight's summary and
/// `compare` of its recording therefore print the same figure.
#[derive(Debug, Clone, Default)]
pub struct CrossTrack {
    route: Route,
    /// Up to and including the latest moving sample.
    counted: Accum,
    /// Since the latest moving sample: counted if the vehicle moves again.
    pending: Accum,
}

impl CrossTrack {
    /// Against `route`.
    pub fn new(route: Route) -> Self {
        CrossTrack {
            route,
            ..CrossTrack::default()
        }
    }

    /// One ground-truth sample: position and velocity, NED m and m/s.
    pub fn add(&mut self, pos_ned_m: &Vector3<f64>, vel_ned_m_s: &Vector3<f64>) {
        let moving = vel_ned_m_s.norm() > MOVING_M_S;
        if self.counted.n == 0 && !moving {
            return;
        }
        if let Some((_, _, d)) = self.route.nearest_leg(&pos_ned_m.xy()) {
            self.pending.add(d);
        }
        if moving {
            self.counted.merge(&self.pending);
            self.pending = Accum::default();
        }
    }

    /// RMS, m (0 before the vehicle moved).
    pub fn rms_m(&self) -> f64 {
        self.counted.rms()
    }

    /// Largest, m.
    pub fn max_m(&self) -> f64 {
        self.counted.max
    }

    /// The route measured against.
    pub fn route(&self) -> &Route {
        &self.route
    }
}

/// Central differences of `f` over the samples (length n − 2 shorter).
fn derivative(t: &[f64], f: &[Vector3<f64>]) -> (Vec<f64>, Vec<Vector3<f64>>) {
    let mut ts = Vec::new();
    let mut d = Vec::new();
    for i in 1..f.len().saturating_sub(1) {
        let (Some(t0), Some(t1), Some(f0), Some(f1), Some(tm)) = (
            t.get(i - 1),
            t.get(i + 1),
            f.get(i - 1),
            f.get(i + 1),
            t.get(i),
        ) else {
            continue;
        };
        if t1 > t0 {
            ts.push(*tm);
            d.push((f1 - f0) / (t1 - t0));
        }
    }
    (ts, d)
}

/// The samples from the first to the last moving one.
pub fn moving(samples: &[Sample]) -> &[Sample] {
    let is_moving = |s: &Sample| s.vel_ned_m_s.norm() > MOVING_M_S;
    match (
        samples.iter().position(is_moving),
        samples.iter().rposition(is_moving),
    ) {
        (Some(a), Some(b)) => samples.get(a..=b).unwrap_or(&[]),
        _ => &[],
    }
}

/// Rate at which acceleration and jerk are differentiated from velocity, Hz.
pub const DYNAMICS_HZ: f64 = 20.0;

/// Altitude below which a flying vehicle counts as on the ground, m.
pub const ON_GROUND_M: f64 = 0.5;

/// For a route that flies (a point above [`ON_GROUND_M`]), the samples from
/// lift-off to touch-down, so that the impulses of ground contact do not
/// count as the controller's acceleration and jerk; else all of them.
fn airborne<'a>(flown: &'a [Sample], route: &Route) -> &'a [Sample] {
    if !route.points.iter().any(|p| -p.ned_m.z > ON_GROUND_M) {
        return flown;
    }
    let up = |s: &Sample| -s.pos_ned_m.z > ON_GROUND_M;
    match (flown.iter().position(up), flown.iter().rposition(up)) {
        (Some(a), Some(b)) => flown.get(a..=b).unwrap_or(&[]),
        _ => &[],
    }
}

impl MissionMetrics {
    /// Measures `track` against `route`.
    pub fn measure(track: &Track, route: &Route) -> Self {
        let flown = moving(&track.samples);
        let mut m = MissionMetrics {
            completed: track.completed,
            energy_wh: track.energy_j.map(|j| j / 3600.0),
            rest_from_home_m: track
                .samples
                .last()
                .map_or(0.0, |s| s.pos_ned_m.xy().norm()),
            ..Default::default()
        };
        if let (Some(a), Some(b)) = (flown.first(), flown.last()) {
            m.time_s = b.t_s - a.t_s;
        }
        m.path_m = flown
            .windows(2)
            .map(|w| match w {
                [a, b] => (b.pos_ned_m - a.pos_ned_m).norm(),
                _ => 0.0,
            })
            .sum();
        m.measure_route(flown, route);
        m.measure_dynamics(airborne(flown, route));
        m.corners = corners(flown, route);
        m
    }

    fn measure_route(&mut self, flown: &[Sample], route: &Route) {
        let mut all = Accum::default();
        let mut alt = Accum::default();
        let mut legs = vec![Accum::default(); route.legs.len()];
        for s in flown {
            let Some((i, t, d)) = route.nearest_leg(&s.pos_ned_m.xy()) else {
                continue;
            };
            all.add(d);
            if let Some(l) = legs.get_mut(i) {
                l.add(d);
            }
            if let Some(leg) = route.legs.get(i) {
                let margin = leg.end_radius_m / leg.length_m();
                if t > margin && t < 1.0 - margin {
                    let z = leg.from.z + t * (leg.to.z - leg.from.z);
                    alt.add((s.pos_ned_m.z - z).abs());
                }
            }
        }
        self.xtrack_rms_m = all.rms();
        self.xtrack_max_m = all.max;
        self.legs = legs
            .iter()
            .map(|a| LegMetrics {
                xtrack_rms_m: a.rms(),
                xtrack_max_m: a.max,
                samples: a.n,
            })
            .collect();
        if alt.n > 0 {
            self.alt_err_rms_m = Some(alt.rms());
            self.alt_err_max_m = Some(alt.max);
        }
    }

    fn measure_dynamics(&mut self, flown: &[Sample]) {
        let mut speed = Accum::default();
        for s in flown {
            speed.add(s.vel_ned_m_s.norm());
        }
        // Acceleration and jerk from the velocity at DYNAMICS_HZ: what the
        // vehicle's path does, not the rotors' millisecond steps.
        let mut t: Vec<f64> = Vec::new();
        let mut v: Vec<Vector3<f64>> = Vec::new();
        for s in flown {
            if t.last()
                .is_none_or(|l| s.t_s - l >= 1.0 / DYNAMICS_HZ - 1e-9)
            {
                t.push(s.t_s);
                v.push(s.vel_ned_m_s);
            }
        }
        let (ta, a) = derivative(&t, &v);
        let (_, j) = derivative(&ta, &a);
        let mut acc = Accum::default();
        a.iter().for_each(|x| acc.add(x.norm()));
        let mut jerk = Accum::default();
        j.iter().for_each(|x| jerk.add(x.norm()));
        self.speed_max_m_s = speed.max;
        self.speed_rms_m_s = speed.rms();
        self.accel_max_m_s2 = acc.max;
        self.accel_rms_m_s2 = acc.rms();
        self.jerk_max_m_s3 = jerk.max;
        self.jerk_rms_m_s3 = jerk.rms();
    }

    /// The scalar metrics with their keys and units, in table order.
    pub fn scalars(&self) -> Vec<Scalar> {
        let opt = |v: Option<f64>| v;
        let corners = |f: fn(&CornerMetrics) -> f64| self.corners.iter().map(f).reduce(f64::max);
        vec![
            Scalar::new(
                "completed",
                "",
                self.completed.map(|c| if c { 1.0 } else { 0.0 }),
            ),
            Scalar::new("time", "s", Some(self.time_s)),
            Scalar::new("path", "m", Some(self.path_m)),
            Scalar::new("xtrack_rms", "m", Some(self.xtrack_rms_m)),
            Scalar::new("xtrack_max", "m", Some(self.xtrack_max_m)),
            Scalar::new("corner_overshoot_max", "m", corners(|c| c.overshoot_m)),
            Scalar::new("corner_cut_max", "m", corners(|c| c.cut_m)),
            Scalar::new(
                "corner_speed_mean",
                "m/s",
                (!self.corners.is_empty()).then(|| {
                    self.corners.iter().map(|c| c.speed_m_s).sum::<f64>()
                        / self.corners.len() as f64
                }),
            ),
            Scalar::new("speed_max", "m/s", Some(self.speed_max_m_s)),
            Scalar::new("speed_rms", "m/s", Some(self.speed_rms_m_s)),
            Scalar::new("accel_max", "m/s²", Some(self.accel_max_m_s2)),
            Scalar::new("accel_rms", "m/s²", Some(self.accel_rms_m_s2)),
            Scalar::new("jerk_max", "m/s³", Some(self.jerk_max_m_s3)),
            Scalar::new("jerk_rms", "m/s³", Some(self.jerk_rms_m_s3)),
            Scalar::new("alt_err_rms", "m", opt(self.alt_err_rms_m)),
            Scalar::new("alt_err_max", "m", opt(self.alt_err_max_m)),
            Scalar::new("energy", "Wh", opt(self.energy_wh)),
            Scalar::new("rest_from_home", "m", Some(self.rest_from_home_m)),
        ]
    }
}

/// One named metric.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Scalar {
    /// Key (CSV column, JSON field).
    pub key: &'static str,
    /// Unit ("" for a count or a flag).
    pub unit: &'static str,
    /// Value (None: not measurable for this flight).
    pub value: Option<f64>,
}

impl Scalar {
    fn new(key: &'static str, unit: &'static str, value: Option<f64>) -> Self {
        Scalar { key, unit, value }
    }
}

fn cross(a: &Vector2<f64>, b: &Vector2<f64>) -> f64 {
    a.x * b.y - a.y * b.x
}

/// The sine of the least turn that makes a corner: about 3°.
const CORNER_MIN_SIN: f64 = 0.05;

/// A turn of sine `turn` too slight, or too close to a reversal, to be
/// judged as a corner. (The threshold's boundary itself is never met by
/// a measured route.)
fn too_slight(turn: f64) -> bool {
    turn.abs() < CORNER_MIN_SIN
}

/// Corners: route points with a leg on each side that turn by more than
/// about 3° and less than about 177°. Each is judged on the samples within
/// half the shorter leg.
fn corners(flown: &[Sample], route: &Route) -> Vec<CornerMetrics> {
    let mut out = Vec::new();
    for w in route.legs.windows(2) {
        let [a, b] = w else { continue };
        if a.to != b.from {
            continue; // a vertical leg between: not one corner
        }
        let (ua, ub) = (a.direction(), b.direction());
        let turn = cross(&ua, &ub);
        if too_slight(turn) {
            continue;
        }
        let Some(point) = route.points.iter().position(|p| p.ned_m == b.from) else {
            continue;
        };
        let c = b.from.xy();
        let window = 0.5 * a.length_m().min(b.length_m());
        // Inside the corner: on the turn's side of both legs.
        let left = turn.is_sign_positive();
        let on_turn_side = |x: f64| if left { x > 0.0 } else { x < 0.0 };
        let inside = |p: &Vector2<f64>| {
            on_turn_side(cross(&ua, &(p - a.from.xy()))) && on_turn_side(cross(&ub, &(p - c)))
        };
        let mut m = CornerMetrics {
            point,
            ..Default::default()
        };
        let mut closest: Option<(f64, &Sample)> = None;
        for s in flown {
            let p = s.pos_ned_m.xy();
            let r = (p - c).norm();
            if r > window {
                continue;
            }
            if !inside(&p) {
                m.overshoot_m = m.overshoot_m.max(a.project(&p).1.min(b.project(&p).1));
            }
            if closest.is_none_or(|(d, _)| r < d) {
                closest = Some((r, s));
            }
        }
        if let Some((r, s)) = closest {
            m.cut_m = if inside(&s.pos_ned_m.xy()) { r } else { 0.0 };
            m.speed_m_s = s.vel_ned_m_s.xy().norm();
            out.push(m);
        }
    }
    out
}

/// Median, 5th and 95th percentile of `values` (linear interpolation between
/// order statistics); None when empty.
pub fn distribution(values: &[f64]) -> Option<(f64, f64, f64)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let x = p * (v.len() - 1) as f64;
        let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
        let (a, b) = (v.get(lo).copied()?, v.get(hi).copied()?);
        Some(a + (b - a) * (x - lo as f64))
    };
    Some((q(0.5)?, q(0.05)?, q(0.95)?))
}

#[cfg(test)]
mod tests {
    use super::super::route::{Leg, RoutePoint};
    use super::*;

    /// A route through `pts` (NED, 10 m up), every point a route point.
    fn route(pts: &[(f64, f64)]) -> Route {
        let points: Vec<RoutePoint> = pts
            .iter()
            .enumerate()
            .map(|(i, (n, e))| RoutePoint {
                ned_m: Vector3::new(*n, *e, -10.0),
                item: Some(i),
                radius_m: 2.0,
            })
            .collect();
        let mut along = 0.0;
        let legs = points
            .windows(2)
            .map(|w| {
                let l = Leg {
                    from: w[0].ned_m,
                    to: w[1].ned_m,
                    start_along_m: along,
                    end_radius_m: 2.0,
                };
                along += l.length_m();
                l
            })
            .collect();
        Route { points, legs }
    }

    /// A track through `pts` (N, E, D) at 2 m/s, sampled every 0.01 s.
    fn track(pts: &[(f64, f64, f64)]) -> Track {
        let mut samples = Vec::new();
        let mut t = 0.0;
        for w in pts.windows(2) {
            let a = Vector3::new(w[0].0, w[0].1, w[0].2);
            let b = Vector3::new(w[1].0, w[1].1, w[1].2);
            let v = (b - a).normalize() * 2.0;
            let n = ((b - a).norm() / 0.02).round() as usize;
            for k in 0..n {
                samples.push(Sample {
                    t_s: t,
                    pos_ned_m: a + (b - a) * (k as f64 / n as f64),
                    vel_ned_m_s: v,
                    tilt_rad: 0.0,
                });
                t += 0.01;
            }
        }
        Track {
            samples,
            ..Default::default()
        }
    }

    /// Sample by sample, [`CrossTrack`] measures what `measure` measures of
    /// the whole track: still samples before the first and after the last
    /// moving one left out, a stop between them counted.
    #[test]
    fn cross_track_sample_by_sample_is_the_measured_one() {
        let r = route(&[(0.0, 0.0), (100.0, 0.0), (100.0, 100.0)]);
        let mut t = track(&[(0.0, 1.0, -10.0), (100.0, 3.0, -10.0), (96.0, 100.0, -10.0)]);
        let still = |n: f64, e: f64| Sample {
            t_s: 0.0,
            pos_ned_m: Vector3::new(n, e, -10.0),
            vel_ned_m_s: Vector3::new(0.1, 0.0, 0.0),
            tilt_rad: 0.0,
        };
        t.samples.insert(0, still(0.0, 9.0));
        t.samples.insert(3000, still(60.0, 5.0));
        t.samples.insert(3001, still(60.0, 6.0));
        t.samples.push(still(90.0, 110.0));
        let m = MissionMetrics::measure(&t, &r);
        let mut x = CrossTrack::new(r.clone());
        for s in &t.samples {
            x.add(&s.pos_ned_m, &s.vel_ned_m_s);
        }
        assert!(
            (x.rms_m() - m.xtrack_rms_m).abs() < 1e-12,
            "{} {}",
            x.rms_m(),
            m.xtrack_rms_m
        );
        assert_eq!(x.max_m(), m.xtrack_max_m);
        // The stop 6 m off counts; the drift 10 m off at the end does not.
        assert_eq!(x.max_m(), 6.0);
    }

    #[test]
    fn a_track_offset_by_one_metre_has_one_metre_of_cross_track() {
        let r = route(&[(0.0, 0.0), (100.0, 0.0)]);
        let m = MissionMetrics::measure(&track(&[(0.0, 1.0, -10.0), (100.0, 1.0, -10.0)]), &r);
        assert!((m.xtrack_rms_m - 1.0).abs() < 1e-12, "{}", m.xtrack_rms_m);
        assert!((m.xtrack_max_m - 1.0).abs() < 1e-12);
        assert_eq!(m.legs.len(), 1);
        assert!((m.legs[0].xtrack_rms_m - 1.0).abs() < 1e-12);
        assert!((m.alt_err_max_m.expect("on the leg")).abs() < 1e-12);
        // Constant velocity: no acceleration, no jerk; 2 m/s throughout.
        assert!(m.accel_max_m_s2 < 1e-9 && m.jerk_max_m_s3 < 1e-6);
        assert!((m.speed_rms_m_s - 2.0).abs() < 1e-12);
        assert!((m.path_m - 99.98).abs() < 1e-9, "{}", m.path_m);
    }

    /// Non-constant inputs, where RMS, mean and max differ: offsets that
    /// alternate 3 m left and 4 m right (RMS √12.5 = 3.536 m, mean absolute
    /// 3.5 m, max 4 m) and speeds that alternate 1 and 3 m/s (RMS √5, mean 2).
    #[test]
    fn alternating_offsets_and_speeds_give_their_rms_not_their_mean() {
        let r = route(&[(0.0, 0.0), (100.0, 0.0)]);
        let samples = (0..2000)
            .map(|k| {
                let odd = k % 2 == 1;
                Sample {
                    t_s: k as f64 * 0.01,
                    pos_ned_m: Vector3::new(k as f64 * 0.04, if odd { 4.0 } else { -3.0 }, -10.0),
                    vel_ned_m_s: Vector3::new(if odd { 3.0 } else { 1.0 }, 0.0, 0.0),
                    tilt_rad: 0.0,
                }
            })
            .collect();
        let m = MissionMetrics::measure(
            &Track {
                samples,
                ..Default::default()
            },
            &r,
        );
        assert!(
            (m.xtrack_rms_m - 12.5f64.sqrt()).abs() < 1e-9,
            "{}",
            m.xtrack_rms_m
        );
        assert!((m.xtrack_max_m - 4.0).abs() < 1e-9, "{}", m.xtrack_max_m);
        assert!((m.legs[0].xtrack_rms_m - 12.5f64.sqrt()).abs() < 1e-9);
        assert!(
            (m.speed_rms_m_s - 5f64.sqrt()).abs() < 1e-9,
            "{}",
            m.speed_rms_m_s
        );
    }

    /// Speed 1 + t²/2 m/s north: acceleration t m/s², jerk 1 m/s³, both
    /// differentiated from the velocity resampled every 0.05 s (0, 0.05 …
    /// 9.95 s): acceleration at 0.05 … 9.90 s, jerk at 0.10 … 9.85 s.
    #[test]
    fn acceleration_and_jerk_are_the_derivatives_of_the_velocity() {
        let r = route(&[(0.0, 0.0), (1000.0, 0.0)]);
        let samples = (0..1000)
            .map(|k| {
                let t = f64::from(k) / 100.0;
                Sample {
                    t_s: t,
                    pos_ned_m: Vector3::new(t + t * t * t / 6.0, 0.0, -10.0),
                    vel_ned_m_s: Vector3::new(1.0 + 0.5 * t * t, 0.0, 0.0),
                    tilt_rad: 0.0,
                }
            })
            .collect();
        let m = MissionMetrics::measure(
            &Track {
                samples,
                ..Default::default()
            },
            &r,
        );
        let at: Vec<f64> = (1..=198).map(|j| 0.05 * f64::from(j)).collect();
        let rms = (at.iter().map(|t| t * t).sum::<f64>() / at.len() as f64).sqrt();
        assert!(
            (m.accel_max_m_s2 - 9.9).abs() < 1e-6,
            "{}",
            m.accel_max_m_s2
        );
        assert!(
            (m.accel_rms_m_s2 - rms).abs() < 1e-6,
            "{} {rms}",
            m.accel_rms_m_s2
        );
        assert!((m.jerk_max_m_s3 - 1.0).abs() < 1e-6, "{}", m.jerk_max_m_s3);
        assert!((m.jerk_rms_m_s3 - 1.0).abs() < 1e-6, "{}", m.jerk_rms_m_s3);
        assert!((m.speed_max_m_s - (1.0 + 0.5 * 9.99 * 9.99)).abs() < 1e-9);
        assert!((m.time_s - 9.99).abs() < 1e-12, "{}", m.time_s);
    }

    /// Central differences, and none where the time does not advance
    /// across a sample (a repeated time stamp), rather than an infinity.
    #[test]
    fn derivatives_are_central_differences_over_advancing_time() {
        let v = |x: f64| Vector3::new(x, -2.0 * x, 0.0);
        let (t, d) = derivative(
            &[0.0, 1.0, 3.0, 3.0, 3.0],
            &[v(0.0), v(2.0), v(10.0), v(11.0), v(11.0)],
        );
        assert_eq!(t, [1.0, 3.0]);
        assert_eq!(d, [v(10.0 / 3.0), v(9.0 / 2.0)]);
        assert_eq!(derivative(&[], &[]), (vec![], vec![]));
    }

    /// On the ground the speed ramps at 10 m/s² (a take-off run, or the
    /// knocks of landing gear); airborne it is a steady 2 m/s. A flying
    /// route's dynamics are the airborne samples', higher than
    /// [`ON_GROUND_M`] (a sample at exactly 0.5 m is on the ground); a
    /// route on the ground (its highest point at 0.5 m) counts them all.
    #[test]
    fn a_flights_dynamics_leave_out_its_ground_contact() {
        let sample = |k: u32, up_m: f64, v: f64| Sample {
            t_s: f64::from(k) / 100.0,
            pos_ned_m: Vector3::new(f64::from(k) / 10.0, 0.0, -up_m),
            vel_ned_m_s: Vector3::new(v, 0.0, 0.0),
            tilt_rad: 0.0,
        };
        let mut samples: Vec<Sample> = (0..100)
            .map(|k| sample(k, 0.0, 1.0 + f64::from(k) / 10.0))
            .collect();
        samples.push(sample(100, ON_GROUND_M, 5.0));
        samples.extend((101..400).map(|k| sample(k, 10.0, 2.0)));
        samples.push(sample(400, ON_GROUND_M, 5.0));
        let track = Track {
            samples,
            ..Default::default()
        };
        let flying = MissionMetrics::measure(&track, &route(&[(0.0, 0.0), (100.0, 0.0)]));
        assert_eq!((flying.accel_max_m_s2, flying.jerk_max_m_s3), (0.0, 0.0));
        assert_eq!(flying.speed_max_m_s, 2.0);
        let mut ground = route(&[(0.0, 0.0), (50.0, 0.0), (100.0, 0.0)]);
        for p in &mut ground.points {
            p.ned_m.z = 0.0;
        }
        ground.points[1].ned_m.z = -ON_GROUND_M;
        let rolled = MissionMetrics::measure(&track, &ground);
        assert!(rolled.accel_max_m_s2 >= 10.0, "{}", rolled.accel_max_m_s2);
        assert_eq!(rolled.speed_max_m_s, 10.9);
    }

    /// What the recording says is passed on: the outcome, the energy in
    /// Wh, and where the last sample came to rest from home (3-4-5 m).
    #[test]
    fn the_recordings_own_figures_pass_through() {
        let mut t = track(&[(0.0, 0.0, -10.0), (3.0, 4.0, -10.0)]);
        t.completed = Some(true);
        t.energy_j = Some(9000.0);
        t.samples.push(Sample {
            t_s: 100.0,
            pos_ned_m: Vector3::new(3.0, 4.0, 0.0),
            vel_ned_m_s: Vector3::zeros(),
            tilt_rad: 0.0,
        });
        let m = MissionMetrics::measure(&t, &route(&[(0.0, 0.0), (3.0, 4.0)]));
        assert_eq!(m.completed, Some(true));
        assert_eq!(m.energy_wh, Some(2.5));
        assert!((m.rest_from_home_m - 5.0).abs() < 1e-12);
        let nothing = MissionMetrics::measure(&Track::default(), &Route::default());
        assert_eq!(nothing.rest_from_home_m, 0.0);
        assert_eq!((nothing.alt_err_rms_m, nothing.alt_err_max_m), (None, None));
    }

    /// A vehicle at exactly [`MOVING_M_S`] is not moving: the flight and
    /// its cross-track error start with the first sample faster than it.
    #[test]
    fn moving_means_faster_than_the_threshold() {
        let r = route(&[(0.0, 0.0), (100.0, 0.0)]);
        let at = |k: u32, v: f64, e: f64| Sample {
            t_s: f64::from(k),
            pos_ned_m: Vector3::new(f64::from(k), e, -10.0),
            vel_ned_m_s: Vector3::new(v, 0.0, 0.0),
            tilt_rad: 0.0,
        };
        let samples = vec![
            at(0, MOVING_M_S, 5.0),
            at(1, 1.0, 1.0),
            at(2, 1.0, 2.0),
            at(3, MOVING_M_S, 7.0),
        ];
        assert_eq!(moving(&samples), &samples[1..3]);
        let mut x = CrossTrack::new(r.clone());
        for s in &samples {
            x.add(&s.pos_ned_m, &s.vel_ned_m_s);
        }
        assert_eq!(x.max_m(), 2.0);
        assert!((x.rms_m() - 2.5f64.sqrt()).abs() < 1e-12, "{}", x.rms_m());
        assert_eq!(x.route(), &r);
        let m = MissionMetrics::measure(
            &Track {
                samples,
                ..Default::default()
            },
            &r,
        );
        assert_eq!((m.time_s, m.xtrack_max_m), (1.0, 2.0));
    }

    #[test]
    fn a_corner_cut_by_a_chord_gives_its_cut_distance() {
        // North 50 m, then east 50 m; the track leaves the first leg 5 m
        // before the corner and joins the second 5 m after it: the chord
        // passes 5/√2 m inside the corner point.
        let r = route(&[(0.0, 0.0), (50.0, 0.0), (50.0, 50.0)]);
        let m = MissionMetrics::measure(
            &track(&[
                (0.0, 0.0, -10.0),
                (45.0, 0.0, -10.0),
                (50.0, 5.0, -10.0),
                (50.0, 50.0, -10.0),
            ]),
            &r,
        );
        assert_eq!(m.corners.len(), 1);
        let c = m.corners[0];
        assert_eq!(c.point, 1);
        assert!((c.cut_m - 5.0 / 2f64.sqrt()).abs() < 0.01, "{c:?}");
        assert!(c.overshoot_m < 1e-9, "{c:?}");
        assert!((c.speed_m_s - 2.0).abs() < 1e-9);
        // On the chord the track is off both legs: at most the chord's
        // midpoint distance to them, 2.5 m.
        assert!((m.xtrack_max_m - 2.5).abs() < 0.01, "{}", m.xtrack_max_m);
    }

    #[test]
    fn a_corner_overshot_gives_the_overshoot_and_no_cut() {
        // Past the corner by 3 m, then across to the second leg 3 m out.
        let r = route(&[(0.0, 0.0), (50.0, 0.0), (50.0, 50.0)]);
        let m = MissionMetrics::measure(
            &track(&[
                (0.0, 0.0, -10.0),
                (53.0, 0.0, -10.0),
                (53.0, 10.0, -10.0),
                (50.0, 20.0, -10.0),
                (50.0, 50.0, -10.0),
            ]),
            &r,
        );
        let c = m.corners[0];
        assert!((c.overshoot_m - 3.0).abs() < 1e-9, "{c:?}");
        assert_eq!(c.cut_m, 0.0);
    }

    /// The two corners above turned the other way (left) and rotated by
    /// 30°: the same cut and overshoot, whichever way the route turns and
    /// whatever its heading.
    #[test]
    fn a_left_corner_at_any_heading_is_measured_alike() {
        let (sin, cos) = 30f64.to_radians().sin_cos();
        let turn = |(n, e): (f64, f64)| (n * cos + e * sin, n * sin - e * cos);
        let route_of =
            |pts: &[(f64, f64)]| route(&pts.iter().map(|p| turn(*p)).collect::<Vec<_>>());
        let track_of = |pts: &[(f64, f64)]| {
            track(
                &pts.iter()
                    .map(|p| {
                        let (n, e) = turn(*p);
                        (n, e, -10.0)
                    })
                    .collect::<Vec<_>>(),
            )
        };
        let r = route_of(&[(0.0, 0.0), (50.0, 0.0), (50.0, 50.0)]);
        let cut = MissionMetrics::measure(
            &track_of(&[(0.0, 0.0), (45.0, 0.0), (50.0, 5.0), (50.0, 50.0)]),
            &r,
        );
        let c = cut.corners[0];
        assert!((c.cut_m - 5.0 / 2f64.sqrt()).abs() < 0.01, "{c:?}");
        assert!(c.overshoot_m < 1e-9, "{c:?}");
        let over = MissionMetrics::measure(
            &track_of(&[
                (0.0, 0.0),
                (53.0, 0.0),
                (53.0, 10.0),
                (50.0, 20.0),
                (50.0, 50.0),
            ]),
            &r,
        );
        let c = over.corners[0];
        assert!((c.overshoot_m - 3.0).abs() < 1e-9, "{c:?}");
        assert_eq!(c.cut_m, 0.0);
    }

    /// A map of (N, E) points.
    type Turn = fn((f64, f64)) -> (f64, f64);

    /// (N, E) as it is, mirrored east to west, and moved 100 m north and
    /// 200 m east: the same geometry, exactly, turning right and left and
    /// away from home.
    fn both_ways() -> [Turn; 3] {
        [|p| p, |(n, e)| (n, -e), |(n, e)| (n + 100.0, e + 200.0)]
    }

    /// Samples at 2 m/s (the last of them at `slow`) through `pts`.
    fn at(pts: &[(f64, f64)], turn: Turn, slow: f64) -> Track {
        let samples = pts
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let (n, e) = turn(*p);
                let v = if k + 1 == pts.len() { slow } else { 2.0 };
                Sample {
                    t_s: k as f64,
                    pos_ned_m: Vector3::new(n, e, -10.0),
                    vel_ned_m_s: Vector3::new(v, 0.0, 0.0),
                    tilt_rad: 0.0,
                }
            })
            .collect();
        Track {
            samples,
            ..Default::default()
        }
    }

    /// A corner is judged within half its shorter leg (25 m), the edge
    /// included: a sample 25 m away and 15 m outside the first leg (a 3-4-5
    /// triangle) is its overshoot; one 35 m away and 18 m out is not. The
    /// cut is that of the sample closest to the corner, at 2 m/s when it
    /// first got there.
    #[test]
    fn a_corner_is_judged_within_half_its_shorter_leg() {
        for turn in both_ways() {
            let r = route(&[turn((0.0, 0.0)), turn((50.0, 0.0)), turn((50.0, 150.0))]);
            let t = at(
                &[
                    (20.0, -18.0),
                    (30.0, -15.0),
                    (48.0, 1.0),
                    (50.0, 30.0),
                    (48.0, 1.0),
                ],
                turn,
                0.5,
            );
            let m = MissionMetrics::measure(&t, &r);
            let c = m.corners[0];
            assert!((c.overshoot_m - 15.0).abs() < 1e-9, "{c:?}");
            assert!((c.cut_m - 5f64.sqrt()).abs() < 1e-9, "{c:?}");
            assert_eq!(c.speed_m_s, 2.0);
        }
    }

    /// A track whose closest sample to the corner lies on a leg's line, 2 m
    /// short of the corner or 2 m past it, does not cut the corner.
    #[test]
    fn a_track_on_a_legs_line_does_not_cut_the_corner() {
        for turn in both_ways() {
            let r = route(&[turn((0.0, 0.0)), turn((50.0, 0.0)), turn((50.0, 50.0))]);
            let short = [
                (0.0, 0.0),
                (48.0, 0.0),
                (48.0, -5.0),
                (55.0, -5.0),
                (55.0, 5.0),
                (50.0, 5.0),
                (50.0, 50.0),
            ];
            let past = [
                (0.0, -5.0),
                (55.0, -5.0),
                (55.0, 2.0),
                (50.0, 2.0),
                (50.0, 50.0),
            ];
            for pts in [&short[..], &past[..]] {
                let c = MissionMetrics::measure(&at(pts, turn, 2.0), &r).corners[0];
                assert_eq!(c.cut_m, 0.0, "{c:?}");
            }
            // Beside either line, inside, it does.
            let inside = [(0.0, 0.0), (48.0, 1.0), (50.0, 50.0)];
            let c = MissionMetrics::measure(&at(&inside, turn, 2.0), &r).corners[0];
            assert!((c.cut_m - 5f64.sqrt()).abs() < 1e-9, "{c:?}");
        }
    }

    /// A route point passed straight through, or with a climb between its
    /// legs, is not a corner; a corner names its own route point, whatever
    /// points without a leg came before it.
    #[test]
    fn only_a_turn_between_two_legs_is_a_corner() {
        let flown = at(
            &[(0.0, 0.0), (50.0, 0.0), (100.0, 0.0), (100.0, 50.0)],
            |p| p,
            2.0,
        );
        let straight = route(&[(0.0, 0.0), (50.0, 0.0), (100.0, 0.0), (100.0, 50.0)]);
        let m = MissionMetrics::measure(&flown, &straight);
        assert_eq!(m.corners.iter().map(|c| c.point).collect::<Vec<_>>(), [2]);
        // A point repeated: its zero leg dropped, the corner is point 3.
        let mut repeated = route(&[(0.0, 0.0), (0.0, 0.0), (100.0, 0.0), (100.0, 50.0)]);
        repeated.legs.remove(0);
        let m = MissionMetrics::measure(&flown, &repeated);
        assert_eq!(m.corners.iter().map(|c| c.point).collect::<Vec<_>>(), [2]);
        let mut doubled = route(&[
            (0.0, 0.0),
            (0.0, 0.0),
            (50.0, 0.0),
            (100.0, 0.0),
            (100.0, 50.0),
        ]);
        doubled.legs.remove(0);
        let m = MissionMetrics::measure(&flown, &doubled);
        assert_eq!(m.corners.iter().map(|c| c.point).collect::<Vec<_>>(), [3]);
        // A climb of 20 m at the turn: two horizontal legs that do not meet.
        let mut climb = route(&[(0.0, 0.0), (100.0, 0.0), (100.0, 50.0)]);
        climb.legs[1].from.z -= 20.0;
        climb.legs[1].to.z -= 20.0;
        assert!(MissionMetrics::measure(&flown, &climb).corners.is_empty());
    }

    #[test]
    fn altitude_error_counts_inside_legs_only() {
        let r = route(&[(0.0, 0.0), (100.0, 0.0)]);
        // 2 m low along the leg; the climb over its start is not counted.
        let m = MissionMetrics::measure(
            &track(&[(0.0, 0.0, 0.0), (0.0, 0.0, -8.0), (100.0, 0.0, -8.0)]),
            &r,
        );
        assert!((m.alt_err_rms_m.expect("leg") - 2.0).abs() < 1e-9);
        assert!((m.alt_err_max_m.expect("leg") - 2.0).abs() < 1e-9);
    }

    /// A leg climbing from 10 m to 30 m over 100 m north; its acceptance
    /// radius (2 m) makes the first and last 2 m its ends. The track is 5 m
    /// off at the ends, up to and including 2 m from them, and alternately
    /// 3 m and 1 m off between: 192 samples at 3 m and 191 at 1 m.
    #[test]
    fn altitude_error_is_measured_against_the_sloping_leg_between_its_ends() {
        let (from, to) = (
            Vector3::new(0.0, 0.0, -10.0),
            Vector3::new(100.0, 0.0, -30.0),
        );
        let point = |ned_m| RoutePoint {
            ned_m,
            item: None,
            radius_m: 2.0,
        };
        let r = Route {
            points: vec![point(from), point(to)],
            legs: vec![Leg {
                from,
                to,
                start_along_m: 0.0,
                end_radius_m: 2.0,
            }],
        };
        let samples = (0..=400)
            .map(|k| {
                let x = f64::from(k) * 0.25;
                let off = if !(2.0..98.0).contains(&x) || x == 2.0 {
                    5.0
                } else if k % 2 == 1 {
                    3.0
                } else {
                    1.0
                };
                Sample {
                    t_s: x,
                    pos_ned_m: Vector3::new(x, 0.0, -10.0 - 0.2 * x - off),
                    vel_ned_m_s: Vector3::new(1.0, 0.0, 0.0),
                    tilt_rad: 0.0,
                }
            })
            .collect();
        let m = MissionMetrics::measure(
            &Track {
                samples,
                ..Default::default()
            },
            &r,
        );
        let rms = ((192.0 * 9.0 + 191.0) / 383.0f64).sqrt();
        let alt = m.alt_err_rms_m.expect("samples between the ends");
        assert!((alt - rms).abs() < 1e-9, "{alt} {rms}");
        let max = m.alt_err_max_m.expect("samples between the ends");
        assert!((max - 3.0).abs() < 1e-9, "{max}");
    }

    #[test]
    fn percentiles_interpolate_between_order_statistics() {
        let v: Vec<f64> = (0..=100).map(f64::from).rev().collect();
        assert_eq!(distribution(&v), Some((50.0, 5.0, 95.0)));
        assert_eq!(distribution(&[3.0]), Some((3.0, 3.0, 3.0)));
        let (med, p5, p95) = distribution(&[1.0, 2.0]).expect("two");
        assert!(
            (med - 1.5).abs() < 1e-12 && (p5 - 1.05).abs() < 1e-12 && (p95 - 1.95).abs() < 1e-12
        );
        assert_eq!(distribution(&[]), None);
    }
}
