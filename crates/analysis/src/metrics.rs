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

/// Corners: route points with a leg on each side that turn by more than
/// about 3°. Each is judged on the samples within half the shorter leg.
fn corners(flown: &[Sample], route: &Route) -> Vec<CornerMetrics> {
    let mut out = Vec::new();
    for (k, w) in route.legs.windows(2).enumerate() {
        let [a, b] = w else { continue };
        if (a.to - b.from).norm() > 1e-6 {
            continue; // a vertical leg between: not one corner
        }
        let (ua, ub) = (a.direction(), b.direction());
        let turn = cross(&ua, &ub);
        if turn.abs() < 0.05 || ua.dot(&ub) < -0.999 {
            continue;
        }
        let c = b.from.xy();
        let window = 0.5 * a.length_m().min(b.length_m());
        let inside = |p: &Vector2<f64>| {
            turn.signum() * cross(&ua, &(p - a.from.xy())) > 0.0
                && turn.signum() * cross(&ub, &(p - c)) > 0.0
        };
        let mut m = CornerMetrics {
            point: route
                .points
                .iter()
                .position(|p| (p.ned_m - b.from).norm() < 1e-9)
                .unwrap_or(k + 1),
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
