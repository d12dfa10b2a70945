//! Pose replay: drive the sensors from a recorded trajectory instead of physics.
//!
//! AirSim's "ExternalPhysicsEngine" workflow, done right. A trajectory file (EuRoC
//! ground truth, or AirSim's `timestamp,x,y,z,qx,qy,qz,qw`) is read, position is
//! interpolated by a C² cubic spline per axis and attitude by SLERP between
//! poses, and every physics tick produces a kinematic state whose velocity and
//! acceleration are the exact derivatives of the replayed position. The sensors
//! then see specific force = Rᵀ(a − g) and body rates = the SLERP rate, so IMU
//! samples at any rate are consistent with the trajectory.
//!
//! Accepted files (comma-separated, one header line):
//!
//! - EuRoC ground truth: header starting `#timestamp`, columns timestamp \[ns\],
//!   p_x, p_y, p_z \[m\], q_w, q_x, q_y, q_z, any further columns ignored;
//! - AirSim: header `timestamp,x,y,z,qx,qy,qz,qw`, timestamp in ns.
//!
//! Positions are local NED (m) around the scenario's home, quaternions body FRD →
//! NED. Time starts at the first row.

mod spline;

use std::path::Path;

use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use thiserror::Error;

pub use spline::CubicSpline;

use crate::physics::BodyState;

/// A trajectory file that could not be used.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum TrajectoryError {
    /// The file could not be read.
    #[error("{file}: cannot read: {message}")]
    Read {
        /// The file.
        file: String,
        /// The OS's reason.
        message: String,
    },
    /// A line that is not a pose.
    #[error("{file}:{line}: {message}")]
    Line {
        /// The file.
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// Not enough poses.
    #[error("{file}: {message}")]
    File {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// t, px, py, pz, qw, qx, qy, qz
    Euroc,
    /// t, x, y, z, qx, qy, qz, qw
    AirSim,
}

/// The longest gap between consecutive poses that is interpolated, s. (A
/// spline across a longer hole invents the motion; and a pair of rows a
/// lifetime apart would make a replay of 10¹² ticks.)
pub const MAX_GAP_S: f64 = 10.0;

/// A recorded trajectory, interpolated.
#[derive(Debug, Clone)]
pub struct Trajectory {
    t0_ns: u64,
    times_s: Vec<f64>,
    splines: [CubicSpline; 3],
    attitudes: Vec<UnitQuaternion<f64>>,
}

/// The kinematic state at one time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KinematicState {
    /// Pose, velocity and body rates.
    pub state: BodyState,
    /// Acceleration, NED, m/s².
    pub accel_ned_m_s2: Vector3<f64>,
    /// Angular acceleration, FRD, rad/s².
    pub ang_accel_frd_rad_s2: Vector3<f64>,
}

impl Trajectory {
    /// Reads a trajectory file.
    ///
    /// # Errors
    /// [`TrajectoryError`] naming the file and line of the first bad row.
    pub fn load(path: &Path) -> Result<Self, TrajectoryError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| TrajectoryError::Read {
            file: file.clone(),
            message: e.to_string(),
        })?;
        Self::parse(&text, &file)
    }

    /// Parses trajectory text; `file` names it in errors.
    ///
    /// # Errors
    /// [`TrajectoryError`] naming the line of the first bad row.
    pub fn parse(text: &str, file: &str) -> Result<Self, TrajectoryError> {
        let line_err = |line: usize, message: String| TrajectoryError::Line {
            file: file.to_string(),
            line,
            message,
        };
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let (_, header) = lines.next().ok_or_else(|| TrajectoryError::File {
            file: file.to_string(),
            message: "empty file".into(),
        })?;
        let h = header.trim().to_ascii_lowercase().replace(' ', "");
        let layout = if h.starts_with("#timestamp") {
            Layout::Euroc
        } else if h.starts_with("timestamp,x,y,z,qx,qy,qz,qw") {
            Layout::AirSim
        } else {
            return Err(line_err(
                1,
                "unknown header: expected EuRoC ('#timestamp [ns],p_RS_R_x [m],…') or 'timestamp,x,y,z,qx,qy,qz,qw'".into(),
            ));
        };
        let mut stamps: Vec<u64> = Vec::new();
        let mut pos: [Vec<f64>; 3] = Default::default();
        let mut attitudes = Vec::new();
        for (i, l) in lines {
            let line = i + 1;
            let fields: Vec<&str> = l.split(',').map(str::trim).collect();
            if fields.len() < 8 {
                return Err(line_err(
                    line,
                    format!("{} columns; at least 8 needed", fields.len()),
                ));
            }
            let stamp: u64 = fields[0].parse().map_err(|_| {
                line_err(
                    line,
                    format!("timestamp '{}' is not a whole number of ns", fields[0]),
                )
            })?;
            let mut v = [0.0; 7];
            for (k, slot) in v.iter_mut().enumerate() {
                let f = fields[k + 1];
                *slot = f
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| {
                        line_err(
                            line,
                            format!("column {} '{f}' is not a finite number", k + 2),
                        )
                    })?;
            }
            if let Some(&last) = stamps.last() {
                if stamp <= last {
                    return Err(line_err(
                        line,
                        format!("timestamp {stamp} does not increase (previous {last})"),
                    ));
                }
                let gap_s = (stamp - last) as f64 * 1e-9;
                if gap_s > MAX_GAP_S {
                    return Err(line_err(
                        line,
                        format!(
                            "{gap_s:.3} s after the previous pose: a gap over {MAX_GAP_S} s cannot be interpolated (split the recording)"
                        ),
                    ));
                }
            }
            let q = match layout {
                Layout::Euroc => Quaternion::new(v[3], v[4], v[5], v[6]),
                Layout::AirSim => Quaternion::new(v[6], v[3], v[4], v[5]),
            };
            let norm = q.norm();
            if !(norm > 0.5 && norm < 1.5) {
                return Err(line_err(
                    line,
                    format!("quaternion norm {norm} is not close to 1"),
                ));
            }
            // q and −q are the same attitude: `at` turns by the shorter way
            // between rows either way (`scaled_axis` is at most π).
            let q = UnitQuaternion::new_normalize(q);
            stamps.push(stamp);
            for k in 0..3 {
                pos[k].push(v[k]);
            }
            attitudes.push(q);
        }
        if stamps.len() < 2 {
            return Err(TrajectoryError::File {
                file: file.to_string(),
                message: format!("{} pose(s); at least 2 are needed", stamps.len()),
            });
        }
        let t0 = stamps[0];
        let times_s: Vec<f64> = stamps.iter().map(|s| (s - t0) as f64 * 1e-9).collect();
        let splines = [0, 1, 2].map(|k| CubicSpline::new(&times_s, &pos[k]));
        Ok(Trajectory {
            t0_ns: t0,
            times_s,
            splines,
            attitudes,
        })
    }

    /// The first timestamp of the file, ns.
    pub fn start_ns(&self) -> u64 {
        self.t0_ns
    }

    /// Duration, s.
    pub fn duration_s(&self) -> f64 {
        self.times_s.last().copied().unwrap_or(0.0)
    }

    /// Number of poses.
    pub fn len(&self) -> usize {
        self.times_s.len()
    }

    /// Whether there are no poses (never true for a loaded trajectory).
    pub fn is_empty(&self) -> bool {
        self.times_s.is_empty()
    }

    /// The interpolated kinematic state at `t_s` seconds after the first pose
    /// (clamped to the trajectory).
    pub fn at(&self, t_s: f64) -> KinematicState {
        let t = t_s.clamp(0.0, self.duration_s());
        let mut p = Vector3::zeros();
        let mut v = Vector3::zeros();
        let mut a = Vector3::zeros();
        for k in 0..3 {
            let (y, d1, d2) = self.splines[k].eval(t);
            p[k] = y;
            v[k] = d1;
            a[k] = d2;
        }
        let i = self.splines[0].segment(t);
        let (q0, q1) = (self.attitudes[i], self.attitudes[i + 1]);
        let h = self.times_s[i + 1] - self.times_s[i];
        let frac = ((t - self.times_s[i]) / h).clamp(0.0, 1.0);
        // q1 = q0 ⊗ exp(ω h) with ω in body axes: constant rate over the segment.
        let delta = q0.inverse() * q1;
        let rate = delta.scaled_axis() / h;
        let att = q0 * UnitQuaternion::from_scaled_axis(delta.scaled_axis() * frac);
        KinematicState {
            state: BodyState {
                pos_ned_m: p,
                vel_ned_m_s: v,
                att_ned_frd: att,
                rate_frd_rad_s: rate,
            },
            accel_ned_m_s2: a,
            ang_accel_frd_rad_s2: Vector3::zeros(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_too_long_to_interpolate_is_refused_with_its_line() {
        // Two rows 10^18 ns apart used to replay for 10^12 ticks.
        let text = "#timestamp [ns],p_x,p_y,p_z,q_w,q_x,q_y,q_z\n0,0,0,0,1,0,0,0\n1000000000000000000,0,0,0,1,0,0,0\n";
        let e = Trajectory::parse(text, "t.csv").unwrap_err().to_string();
        assert!(
            e.starts_with("t.csv:3: ") && e.contains("cannot be interpolated"),
            "{e}"
        );
        let ok = "#timestamp [ns],p_x,p_y,p_z,q_w,q_x,q_y,q_z\n0,0,0,0,1,0,0,0\n10000000000,0,0,0,1,0,0,0\n";
        assert!(Trajectory::parse(ok, "t.csv").is_ok(), "10 s is still fine");
    }

    #[test]
    fn bad_rows_name_their_line() {
        let e = Trajectory::parse(
            "#timestamp [ns],x,y,z,qw,qx,qy,qz\n0,0,0,0,1,0,0,0\n10,0,0,x,1,0,0,0\n",
            "f.csv",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "f.csv:3: column 4 'x' is not a finite number"
        );
        let e = Trajectory::parse("#timestamp\n5,0,0,0,1,0,0,0\n5,0,0,0,1,0,0,0\n", "f.csv")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "f.csv:3: timestamp 5 does not increase (previous 5)"
        );
        let e = Trajectory::parse("#timestamp\n5,0,0,0,0,0,0,0\n", "f.csv").unwrap_err();
        assert_eq!(
            e.to_string(),
            "f.csv:2: quaternion norm 0 is not close to 1"
        );
        let e = Trajectory::parse("time,a,b\n", "f.csv").unwrap_err();
        assert!(e.to_string().starts_with("f.csv:1: unknown header"));
        let e = Trajectory::parse("#timestamp\n1,0,0,0,1,0,0,0\n", "f.csv").unwrap_err();
        assert_eq!(e.to_string(), "f.csv: 1 pose(s); at least 2 are needed");
        let e = Trajectory::parse("#timestamp\n-1,0,0,0,1,0,0,0\n", "f.csv").unwrap_err();
        assert!(e.to_string().starts_with("f.csv:2: timestamp '-1'"));
    }

    #[test]
    fn airsim_layout_reorders_the_quaternion() {
        let s = 0.5f64.sqrt();
        let t = Trajectory::parse(
            &format!(
                "timestamp,x,y,z,qx,qy,qz,qw\n1000,0,0,0,0,0,{s},{s}\n2000,1,0,0,0,0,{s},{s}\n"
            ),
            "a.csv",
        )
        .unwrap();
        let k = t.at(0.0);
        let (_, _, yaw) = k.state.att_ned_frd.euler_angles();
        assert!((yaw - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
        assert_eq!(t.start_ns(), 1000);
        assert!((t.duration_s() - 1e-6).abs() < 1e-15);
    }

    const EUROC: &str = "#timestamp [ns],p_x,p_y,p_z,q_w,q_x,q_y,q_z";

    #[test]
    fn a_row_of_either_sign_of_its_quaternion_turns_the_short_way() {
        // Yaw 0 then yaw 10° written as −q: halfway is 5°, turning at 10°/s.
        let (s, c) = (5f64.to_radians().sin(), 5f64.to_radians().cos());
        let text = format!(
            "{EUROC}\n0,0,0,0,1,0,0,0\n1000000000,0,0,0,{},0,0,{}\n",
            -c, -s
        );
        let t = Trajectory::parse(&text, "t.csv").unwrap();
        let k = t.at(0.5);
        let (_, _, yaw) = k.state.att_ned_frd.euler_angles();
        assert!(
            (yaw.to_degrees() - 5.0).abs() < 1e-9,
            "{}",
            yaw.to_degrees()
        );
        assert!((k.state.rate_frd_rad_s.z - 10f64.to_radians()).abs() < 1e-12);
    }

    #[test]
    fn rows_need_eight_columns_and_may_carry_more() {
        let e = Trajectory::parse(&format!("{EUROC}\n0,0,0,0,1,0,0\n"), "t.csv").unwrap_err();
        assert_eq!(e.to_string(), "t.csv:2: 7 columns; at least 8 needed");
        // EuRoC's ground truth goes on with velocity and biases.
        let text = format!("{EUROC}\n0,1,2,3,1,0,0,0,9,9,9\n1000,2,4,6,1,0,0,0,9,9,9\n");
        let t = Trajectory::parse(&text, "t.csv").unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t.at(1e-6).state.pos_ned_m, Vector3::new(2.0, 4.0, 6.0));
    }

    #[test]
    fn gaps_count_between_absolute_time_stamps() {
        // EuRoC's stamps are ns since 1970: 10 s apart is fine, 10.5 s not.
        let t0 = 1_403_636_579_758_555_392u64;
        let row = |t: u64| format!("{t},0,0,0,1,0,0,0");
        let ok = format!("{EUROC}\n{}\n{}\n", row(t0), row(t0 + 10_000_000_000));
        let t = Trajectory::parse(&ok, "t.csv").unwrap();
        assert_eq!((t.start_ns(), t.duration_s()), (t0, 10.0));
        let far = format!("{EUROC}\n{}\n{}\n", row(t0), row(t0 + 10_500_000_000));
        let e = Trajectory::parse(&far, "t.csv").unwrap_err().to_string();
        assert!(
            e.starts_with("t.csv:3: 10.500 s after the previous pose"),
            "{e}"
        );
    }

    #[test]
    fn a_quaternion_norm_must_be_strictly_between_a_half_and_one_and_a_half() {
        for (q, ok) in [
            ("0.5,0,0,0", false),
            ("0.500001,0,0,0", true),
            ("0,1.499999,0,0", true),
            ("0,0,1.5,0", false),
        ] {
            let text = format!("{EUROC}\n0,0,0,0,{q}\n1000,0,0,0,1,0,0,0\n");
            assert_eq!(Trajectory::parse(&text, "t.csv").is_ok(), ok, "{q}");
        }
    }
}
