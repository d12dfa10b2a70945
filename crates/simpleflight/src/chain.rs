//! The three-leg S-curve chain shared by multicopter missions: consecutive legs
//! with fast-waypoint promotion and corner blending, as ArduPilot's AC_WPNav and
//! AR_WPNav drive `SCurve` (see `guidance::scurve`), with AR_WPNav's track
//! time-scaling so the target waits for a vehicle that falls behind.
//!
//! The legs are computed as ArduPilot computes them, in single precision (see
//! `guidance::scurve`): the chain keeps its origin and destination as float
//! NED metres and converts at its edges. SCurve limits +z with its climb
//! speed (ArduPilot's frame is NEU), so this NED chain hands it the descent
//! speed for +z (down) and the climb speed for −z.
//!
//! One deliberate difference from ArduPilot: when the time scaling slows the
//! target (the vehicle lags), the target's velocity and acceleration are
//! scaled with it (by the scaler and its square), so the position,
//! velocity and acceleration handed to the position controller describe one
//! trajectory. ArduPilot hands on the unscaled S-curve velocity and lets its
//! position controller's input shaping reconcile the two; without that
//! shaping, the position set-point fell behind its own velocity
//! feed-forward after every start from rest, and the cruise sagged by
//! 0.3 m/s and recovered over seconds.

use nalgebra::Vector3;

use mavsitl_guidance::SCurve;

/// Limits for the legs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LegLimits {
    /// Horizontal speed, m/s.
    pub speed_xy: f64,
    /// Climb speed, m/s.
    pub speed_up: f64,
    /// Descent speed, m/s.
    pub speed_down: f64,
    /// Horizontal acceleration, m/s².
    pub accel_xy: f64,
    /// Vertical acceleration, m/s².
    pub accel_z: f64,
    /// Jerk, m/s³.
    pub jerk: f64,
    /// Snap, m/s⁴.
    pub snap: f64,
    /// Corner radius, m.
    pub wp_radius: f64,
    /// Largest horizontal acceleration in a blended corner, m/s² (AC_WPNav's
    /// `get_corner_acceleration`: WPNAV_ACCEL_C, by default twice the
    /// horizontal acceleration).
    pub accel_corner: f64,
}

impl LegLimits {
    /// Plans `curve` as a straight leg from `origin` to `destination` (local
    /// NED, m) within these limits.
    fn calculate_track(
        &self,
        curve: &mut SCurve,
        origin: &Vector3<f32>,
        destination: &Vector3<f32>,
    ) {
        curve.calculate_track(
            origin,
            destination,
            self.speed_xy as f32,
            self.speed_down as f32,
            self.speed_up as f32,
            self.accel_xy as f32,
            self.accel_z as f32,
            self.snap as f32,
            self.jerk as f32,
        );
    }
}

/// The legs in flight.
#[derive(Debug, Clone)]
pub struct Chain {
    prev: SCurve,
    this: SCurve,
    next: SCurve,
    origin: Vector3<f32>,
    destination: Vector3<f32>,
    /// The next leg's destination, while this leg blends into it.
    next_destination: Option<Vector3<f32>>,
    fast: bool,
    scaler: f64,
}

/// A target on the path.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathTarget {
    /// Position, NED m.
    pub pos: Vector3<f64>,
    /// Velocity, NED m/s.
    pub vel: Vector3<f64>,
    /// Acceleration, NED m/s².
    pub acc: Vector3<f64>,
    /// The leg's end passed (past the turn's middle for a fast waypoint).
    pub finished: bool,
}

impl Chain {
    /// An idle chain at `at`.
    pub fn new(at: Vector3<f64>) -> Self {
        Chain {
            prev: SCurve::new(),
            this: SCurve::new(),
            next: SCurve::new(),
            origin: at.cast(),
            destination: at.cast(),
            next_destination: None,
            fast: false,
            scaler: 1.0,
        }
    }

    /// Starts afresh from `at` (after a hold, a take-off or a landing).
    pub fn restart(&mut self, at: Vector3<f64>) {
        *self = Chain::new(at);
    }

    /// The current leg, origin → destination.
    pub fn leg(&self) -> (Vector3<f64>, Vector3<f64>) {
        (self.origin.cast(), self.destination.cast())
    }

    /// Whether this leg blends into the next.
    pub fn is_fast(&self) -> bool {
        self.fast
    }

    /// Whether heading for `d` continues this leg's blend into the next (the
    /// next leg's destination is `d`): else the chain must start afresh
    /// rather than promote a next leg that is not flown.
    pub fn continues_to(&self, d: &Vector3<f64>) -> bool {
        self.fast && self.next_destination == Some(d.cast())
    }

    /// Heads for `d`, blending towards `n` when given.
    pub fn set_destination(&mut self, d: Vector3<f64>, n: Option<Vector3<f64>>, l: &LegLimits) {
        self.prev = self.this.clone();
        self.origin = self.destination;
        let d = d.cast::<f32>();
        self.destination = d;
        if self.fast && !self.next.finished() {
            self.this = self.next.clone();
        } else {
            l.calculate_track(&mut self.this, &self.origin, &d);
        }
        self.next.init();
        self.fast = false;
        self.next_destination = None;
        if let Some(n) = n {
            l.calculate_track(&mut self.next, &d, &n.cast());
            self.fast = true;
            self.next_destination = Some(n.cast());
        }
    }

    /// Changes the horizontal speed of the legs in flight.
    pub fn set_speed(&mut self, l: &LegLimits) {
        let (xy, up, down) = (l.speed_xy as f32, l.speed_up as f32, l.speed_down as f32);
        self.this.set_speed_max(xy, down, up);
        self.next.set_speed_max(xy, down, up);
    }

    /// Advances by `dt`, slowed when the vehicle at `pos`/`vel` lags behind the
    /// last target `last` (AR_WPNav's time scaling with position gain `kp`).
    pub fn advance(
        &mut self,
        dt: f64,
        pos: &Vector3<f64>,
        vel: &Vector3<f64>,
        last: Option<&PathTarget>,
        kp: f64,
        l: &LegLimits,
    ) -> PathTarget {
        let raw = match last {
            Some(t) if t.vel.norm() > 0.1 => {
                let u = t.vel.normalize();
                let err = (t.pos - pos).dot(&u);
                (0.05 + (vel.dot(&u) - kp * err) / t.vel.norm()).clamp(0.0, 1.0)
            }
            _ => 1.0,
        };
        let tc = if l.jerk > 0.0 {
            (l.accel_xy / l.jerk).max(0.1)
        } else {
            1.0
        };
        self.scaler += (raw - self.scaler) * (dt / tc).min(1.0);
        let mut p = self.origin;
        let mut v = Vector3::zeros();
        let mut a = Vector3::zeros();
        let finished = self.this.advance_target_along_track(
            &mut self.prev,
            &mut self.next,
            l.wp_radius as f32,
            l.accel_corner as f32,
            self.fast,
            (self.scaler * dt) as f32,
            &mut p,
            &mut v,
            &mut a,
        );
        let k = self.scaler;
        PathTarget {
            pos: p.cast(),
            vel: v.cast() * k,
            acc: a.cast() * (k * k),
            finished,
        }
    }
}
