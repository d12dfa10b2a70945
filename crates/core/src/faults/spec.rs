//! A fault as a scenario or the command line gives it, and its validation.
//!
//! The scenario form is one flat object: `kind`, one trigger (`at_s`,
//! `at_item` or `zone`), an optional `duration_s` (else to the end of the run),
//! an optional `vehicle` name (else the first vehicle), and the keys of its
//! kind. The command-line form `KIND@START[+DURATION][:key=value,...]` is
//! turned into that object, so both are checked by the same code.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// What fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// GPS: no fix.
    GpsLoss,
    /// GPS: noise × `noise_scale` (default 10), eph/epv grow with it.
    GpsJamming,
    /// GPS: position offset growing at `rate_m_s` (default 1) towards
    /// `bearing_deg` (default 0, north).
    GpsSpoof,
    /// IMU: `gyro_rad_s` and `accel_m_s2` added (sensor axes).
    ImuBiasStep,
    /// IMU: outputs frozen at their last value.
    ImuStuck,
    /// IMU: white noise × `noise_scale`.
    ImuNoiseScale,
    /// Barometer: altitude offset `offset_m` plus `rate_m_s` × time.
    BaroDriftStep,
    /// Magnetometer: `offset_gauss` added (sensor axes).
    MagInterference,
    /// Multirotor: rotor `motor` (0-based, motor order) at thrust ×
    /// `thrust_scale` (default 0).
    MotorFailure,
    /// Boat: thruster `thruster` (0 left, 1 right) at thrust × `thrust_scale`
    /// (default 0).
    ThrusterFailure,
    /// Rover: drive motor `motor` (skid steer: 0 left side, 1 right side;
    /// Ackermann: 0, its one motor) at torque × `torque_scale` (default 0).
    WheelMotorFailure,
    /// Rover: the friction under wheel `wheel` (0 front left, 1 front right,
    /// 2 rear left, 3 rear right; default every wheel) × `grip_scale`.
    TyreGrip,
    /// Battery: capacity × `scale`.
    BatteryCapacityScale,
    /// Battery: terminal voltage − `drop_v`.
    BatteryVoltageDrop,
    /// Wind: a 1-cosine gust of `peak_m_s` from `from_deg` lasting `duration_s`.
    WindGust,
    /// RC input stops.
    RcLoss,
    /// The ground-station link goes silent both ways.
    GcsLinkLoss,
}

impl FaultKind {
    /// Every kind.
    pub const ALL: [FaultKind; 17] = [
        FaultKind::GpsLoss,
        FaultKind::GpsJamming,
        FaultKind::GpsSpoof,
        FaultKind::ImuBiasStep,
        FaultKind::ImuStuck,
        FaultKind::ImuNoiseScale,
        FaultKind::BaroDriftStep,
        FaultKind::MagInterference,
        FaultKind::MotorFailure,
        FaultKind::ThrusterFailure,
        FaultKind::WheelMotorFailure,
        FaultKind::TyreGrip,
        FaultKind::BatteryCapacityScale,
        FaultKind::BatteryVoltageDrop,
        FaultKind::WindGust,
        FaultKind::RcLoss,
        FaultKind::GcsLinkLoss,
    ];

    /// The scenario name (`gps_loss`, ...).
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::GpsLoss => "gps_loss",
            FaultKind::GpsJamming => "gps_jamming",
            FaultKind::GpsSpoof => "gps_spoof",
            FaultKind::ImuBiasStep => "imu_bias_step",
            FaultKind::ImuStuck => "imu_stuck",
            FaultKind::ImuNoiseScale => "imu_noise_scale",
            FaultKind::BaroDriftStep => "baro_drift_step",
            FaultKind::MagInterference => "mag_interference",
            FaultKind::MotorFailure => "motor_failure",
            FaultKind::ThrusterFailure => "thruster_failure",
            FaultKind::WheelMotorFailure => "wheel_motor_failure",
            FaultKind::TyreGrip => "tyre_grip",
            FaultKind::BatteryCapacityScale => "battery_capacity_scale",
            FaultKind::BatteryVoltageDrop => "battery_voltage_drop",
            FaultKind::WindGust => "wind_gust",
            FaultKind::RcLoss => "rc_loss",
            FaultKind::GcsLinkLoss => "gcs_link_loss",
        }
    }

    /// The parameter keys this kind takes.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            FaultKind::GpsJamming | FaultKind::ImuNoiseScale => &["noise_scale"],
            FaultKind::GpsSpoof => &["rate_m_s", "bearing_deg"],
            FaultKind::ImuBiasStep => &["gyro_rad_s", "accel_m_s2"],
            FaultKind::BaroDriftStep => &["offset_m", "rate_m_s"],
            FaultKind::MagInterference => &["offset_gauss"],
            FaultKind::MotorFailure => &["motor", "thrust_scale"],
            FaultKind::ThrusterFailure => &["thruster", "thrust_scale"],
            FaultKind::WheelMotorFailure => &["motor", "torque_scale"],
            FaultKind::TyreGrip => &["wheel", "grip_scale"],
            FaultKind::BatteryCapacityScale => &["scale"],
            FaultKind::BatteryVoltageDrop => &["drop_v"],
            FaultKind::WindGust => &["peak_m_s", "from_deg"],
            FaultKind::GpsLoss
            | FaultKind::ImuStuck
            | FaultKind::RcLoss
            | FaultKind::GcsLinkLoss => &[],
        }
    }
}

impl std::fmt::Display for FaultKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One fault: what, when, for how long, on which vehicle, with which values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    /// What fails.
    pub kind: FaultKind,
    /// The vehicle's name (default: the first vehicle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vehicle: Option<String>,
    /// Start at this sim time, s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_s: Option<f64>,
    /// Start when this mission item (0-based sequence) is reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_item: Option<u32>,
    /// Start when the vehicle first enters this zone (by name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// How long it lasts, s (default: to the end of the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// Noise multiplier (`gps_jamming`, `imu_noise_scale`), 1–1000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_scale: Option<f64>,
    /// Growth rate, m/s (`gps_spoof` offset, `baro_drift_step` drift), ±100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_m_s: Option<f64>,
    /// Direction the spoofed position moves towards, deg clockwise from north.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearing_deg: Option<f64>,
    /// Gyro bias step, sensor axes, rad/s (each ±10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gyro_rad_s: Option<[f64; 3]>,
    /// Accelerometer bias step, sensor axes, m/s² (each ±100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accel_m_s2: Option<[f64; 3]>,
    /// Barometric altitude step, m (±10 000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_m: Option<f64>,
    /// Magnetic field offset, sensor axes, gauss (each ±10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_gauss: Option<[f64; 3]>,
    /// Failed rotor, 0-based in the airframe's motor order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub motor: Option<u32>,
    /// Failed thruster, 0 (left, or the only one) or 1 (right).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thruster: Option<u32>,
    /// Thrust left to the failed rotor or thruster, 0–1 (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thrust_scale: Option<f64>,
    /// Torque left to the failed wheel motor, 0–1 (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub torque_scale: Option<f64>,
    /// The wheel whose grip changes, 0–3 (default every wheel).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wheel: Option<u32>,
    /// Friction multiplier under the wheel, 0–5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grip_scale: Option<f64>,
    /// Capacity multiplier, (0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    /// Voltage drop, V (0–100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_v: Option<f64>,
    /// Gust peak, m/s (0–100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_m_s: Option<f64>,
    /// Direction the gust blows from, deg clockwise from north (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_deg: Option<f64>,
}

/// A fault that is not acceptable: the key and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{key}: {message}")]
pub struct FaultSpecError {
    /// The key at fault (`at_s`, `motor`, ...).
    pub key: String,
    /// What is wrong.
    pub message: String,
}

fn err(key: &str, message: impl Into<String>) -> FaultSpecError {
    FaultSpecError {
        key: key.to_string(),
        message: message.into(),
    }
}

fn within(key: &str, v: Option<f64>, lo: f64, hi: f64) -> Result<(), FaultSpecError> {
    match v {
        Some(x) if !(x.is_finite() && (lo..=hi).contains(&x)) => {
            Err(err(key, format!("{x} is not within [{lo}, {hi}]")))
        }
        _ => Ok(()),
    }
}

fn within3(key: &str, v: Option<[f64; 3]>, bound: f64) -> Result<(), FaultSpecError> {
    for x in v.into_iter().flatten() {
        within(key, Some(x), -bound, bound)?;
    }
    Ok(())
}

impl FaultSpec {
    /// A fault of `kind` at `at_s` with every other key unset.
    pub fn new(kind: FaultKind, at_s: f64) -> Self {
        FaultSpec {
            kind,
            vehicle: None,
            at_s: Some(at_s),
            at_item: None,
            zone: None,
            duration_s: None,
            noise_scale: None,
            rate_m_s: None,
            bearing_deg: None,
            gyro_rad_s: None,
            accel_m_s2: None,
            offset_m: None,
            offset_gauss: None,
            motor: None,
            thruster: None,
            thrust_scale: None,
            torque_scale: None,
            wheel: None,
            grip_scale: None,
            scale: None,
            drop_v: None,
            peak_m_s: None,
            from_deg: None,
        }
    }

    /// The parameter keys that are set.
    fn set_keys(&self) -> impl Iterator<Item = &'static str> {
        [
            ("noise_scale", self.noise_scale.is_some()),
            ("rate_m_s", self.rate_m_s.is_some()),
            ("bearing_deg", self.bearing_deg.is_some()),
            ("gyro_rad_s", self.gyro_rad_s.is_some()),
            ("accel_m_s2", self.accel_m_s2.is_some()),
            ("offset_m", self.offset_m.is_some()),
            ("offset_gauss", self.offset_gauss.is_some()),
            ("motor", self.motor.is_some()),
            ("thruster", self.thruster.is_some()),
            ("thrust_scale", self.thrust_scale.is_some()),
            ("torque_scale", self.torque_scale.is_some()),
            ("wheel", self.wheel.is_some()),
            ("grip_scale", self.grip_scale.is_some()),
            ("scale", self.scale.is_some()),
            ("drop_v", self.drop_v.is_some()),
            ("peak_m_s", self.peak_m_s.is_some()),
            ("from_deg", self.from_deg.is_some()),
        ]
        .into_iter()
        .filter_map(|(k, set)| set.then_some(k))
    }

    /// Checks the trigger, the duration, that every key belongs to the kind,
    /// the ranges, and the keys a kind requires.
    ///
    /// # Errors
    /// [`FaultSpecError`] naming the key.
    pub fn validate(&self) -> Result<(), FaultSpecError> {
        let triggers = [
            self.at_s.is_some(),
            self.at_item.is_some(),
            self.zone.is_some(),
        ];
        match triggers.iter().filter(|t| **t).count() {
            1 => {}
            0 => return Err(err("at_s", "give one start: at_s, at_item or zone")),
            _ => return Err(err("at_s", "give only one of at_s, at_item, zone")),
        }
        within("at_s", self.at_s, 0.0, 1e7)?;
        if let Some(d) = self.duration_s {
            if !(d.is_finite() && d > 0.0 && d <= 1e7) {
                return Err(err("duration_s", format!("{d} is not within (0, 1e7] s")));
            }
        }
        let allowed = self.kind.keys();
        if let Some(k) = self.set_keys().find(|k| !allowed.contains(k)) {
            let takes = if allowed.is_empty() {
                "no keys".to_string()
            } else {
                allowed.join(", ")
            };
            return Err(err(
                k,
                format!("does not apply to {} (it takes {takes})", self.kind),
            ));
        }
        within("noise_scale", self.noise_scale, 1.0, 1000.0)?;
        within("rate_m_s", self.rate_m_s, -100.0, 100.0)?;
        within("bearing_deg", self.bearing_deg, -360.0, 360.0)?;
        within3("gyro_rad_s", self.gyro_rad_s, 10.0)?;
        within3("accel_m_s2", self.accel_m_s2, 100.0)?;
        within("offset_m", self.offset_m, -1e4, 1e4)?;
        within3("offset_gauss", self.offset_gauss, 10.0)?;
        within("thrust_scale", self.thrust_scale, 0.0, 1.0)?;
        within("torque_scale", self.torque_scale, 0.0, 1.0)?;
        within("grip_scale", self.grip_scale, 0.0, 5.0)?;
        within("drop_v", self.drop_v, 0.0, 100.0)?;
        within("peak_m_s", self.peak_m_s, 0.0, 100.0)?;
        within("from_deg", self.from_deg, -360.0, 360.0)?;
        if let Some(s) = self.scale {
            if !(s.is_finite() && s > 0.0 && s <= 1.0) {
                return Err(err("scale", format!("{s} is not within (0, 1]")));
            }
        }
        self.validate_required()
    }

    fn validate_required(&self) -> Result<(), FaultSpecError> {
        match self.kind {
            FaultKind::MotorFailure if self.motor.is_none() => Err(err(
                "motor",
                "motor_failure needs the rotor: motor=N (0-based)",
            )),
            FaultKind::MotorFailure if self.motor.is_some_and(|m| m >= 8) => {
                Err(err("motor", "rotors are numbered 0..7"))
            }
            FaultKind::ThrusterFailure if self.thruster.is_some_and(|t| t > 1) => {
                Err(err("thruster", "thrusters are 0 (left) and 1 (right)"))
            }
            FaultKind::WheelMotorFailure if self.motor.is_some_and(|m| m > 1) => Err(err(
                "motor",
                "wheel motors are 0 (left, or an Ackermann rover's only one) and 1 (right)",
            )),
            FaultKind::TyreGrip if self.wheel.is_some_and(|w| w > 3) => Err(err(
                "wheel",
                "wheels are 0 front left, 1 front right, 2 rear left, 3 rear right",
            )),
            FaultKind::TyreGrip if self.grip_scale.is_none() => {
                Err(err("grip_scale", "tyre_grip needs grip_scale=K"))
            }
            FaultKind::BatteryCapacityScale if self.scale.is_none() => {
                Err(err("scale", "battery_capacity_scale needs scale=K"))
            }
            FaultKind::BatteryVoltageDrop if self.drop_v.is_none() => {
                Err(err("drop_v", "battery_voltage_drop needs drop_v=V"))
            }
            FaultKind::WindGust if self.duration_s.is_none() => Err(err(
                "duration_s",
                "a wind_gust needs its length: duration_s (or +DURATION)",
            )),
            FaultKind::WindGust if self.peak_m_s.is_none() => {
                Err(err("peak_m_s", "a wind_gust needs peak_m_s"))
            }
            FaultKind::ImuBiasStep if self.gyro_rad_s.is_none() && self.accel_m_s2.is_none() => {
                Err(err(
                    "gyro_rad_s",
                    "imu_bias_step needs gyro_rad_s and/or accel_m_s2",
                ))
            }
            FaultKind::MagInterference if self.offset_gauss.is_none() => {
                Err(err("offset_gauss", "mag_interference needs offset_gauss"))
            }
            FaultKind::BaroDriftStep if self.offset_m.is_none() && self.rate_m_s.is_none() => Err(
                err("offset_m", "baro_drift_step needs offset_m and/or rate_m_s"),
            ),
            _ => Ok(()),
        }
    }

    /// A one-line description: `gps_loss at 40 s for 30 s`.
    pub fn describe(&self) -> String {
        let start = match (self.at_s, self.at_item, &self.zone) {
            (Some(t), _, _) => format!("at {t} s"),
            (_, Some(i), _) => format!("at item {i}"),
            (_, _, Some(z)) => format!("in zone {z}"),
            _ => String::new(),
        };
        match self.duration_s {
            Some(d) => format!("{} {start} for {d} s", self.kind),
            None => format!("{} {start}", self.kind),
        }
    }
}

/// Parses `KIND@START[+DURATION][:key=value,...]` (START: `40s`, `40` or
/// `item3`; DURATION: `30s` or `30`; values: numbers, `[x,y,z]`, or a name for
/// `vehicle` and `zone`). `KIND:zone=NAME` starts on entering a zone.
///
/// # Errors
/// A one-line message naming the part at fault.
pub fn parse_fault_arg(arg: &str) -> Result<FaultSpec, String> {
    let (head, params) = match arg.split_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (arg, None),
    };
    let (kind, when) = match head.split_once('@') {
        Some((k, w)) => (k, Some(w)),
        None => (head, None),
    };
    let mut obj = serde_json::Map::new();
    obj.insert("kind".into(), serde_json::Value::String(kind.trim().into()));
    if let Some(w) = when {
        let (start, duration) = match w.split_once('+') {
            Some((s, d)) => (s, Some(d)),
            None => (w, None),
        };
        let start = start.trim();
        if let Some(item) = start.strip_prefix("item") {
            let n: u32 = item
                .parse()
                .map_err(|_| format!("'{start}': an item is itemN, e.g. item3"))?;
            obj.insert("at_item".into(), n.into());
        } else {
            obj.insert("at_s".into(), seconds(start)?.into());
        }
        if let Some(d) = duration {
            obj.insert("duration_s".into(), seconds(d.trim())?.into());
        }
    }
    for pair in split_top_level(params.unwrap_or("")) {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| format!("'{pair}': parameters are key=value"))?;
        let (k, v) = (k.trim(), v.trim());
        let value = match serde_json::from_str::<serde_json::Value>(v) {
            Ok(x) => x,
            Err(_) => serde_json::Value::String(v.to_string()),
        };
        obj.insert(k.to_string(), value);
    }
    let spec: FaultSpec = serde_json::from_value(serde_json::Value::Object(obj))
        .map_err(|e| format!("--fault {arg}: {e}"))?;
    spec.validate().map_err(|e| format!("--fault {arg}: {e}"))?;
    Ok(spec)
}

/// `40s` or `40` → 40.0.
fn seconds(s: &str) -> Result<f64, String> {
    let n = s.strip_suffix('s').unwrap_or(s);
    match n.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!("'{s}': a time is seconds, e.g. 40s")),
    }
}

/// Splits on commas outside brackets.
fn split_top_level(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_forms_become_the_scenario_form() {
        let f = parse_fault_arg("gps_loss@40s+30s").unwrap();
        assert_eq!(f.kind, FaultKind::GpsLoss);
        assert_eq!((f.at_s, f.duration_s), (Some(40.0), Some(30.0)));
        let f = parse_fault_arg("battery_capacity_scale@0s:scale=0.25").unwrap();
        assert_eq!(f.scale, Some(0.25));
        let f = parse_fault_arg("motor_failure@30s:motor=0,thrust_scale=0").unwrap();
        assert_eq!((f.motor, f.thrust_scale), (Some(0), Some(0.0)));
        let f = parse_fault_arg("wheel_motor_failure@5s:motor=1,torque_scale=0.25").unwrap();
        assert_eq!((f.motor, f.torque_scale), (Some(1), Some(0.25)));
        let f = parse_fault_arg("tyre_grip@10s+5s:wheel=3,grip_scale=0.1").unwrap();
        assert_eq!(
            (f.wheel, f.grip_scale, f.duration_s),
            (Some(3), Some(0.1), Some(5.0))
        );
        let f = parse_fault_arg("imu_bias_step@item2:gyro_rad_s=[0.1,0,0]").unwrap();
        assert_eq!((f.at_item, f.gyro_rad_s), (Some(2), Some([0.1, 0.0, 0.0])));
        let f = parse_fault_arg("gps_loss:zone=valley,vehicle=quad").unwrap();
        assert_eq!(f.zone.as_deref(), Some("valley"));
        assert_eq!(f.vehicle.as_deref(), Some("quad"));
    }

    #[test]
    fn bad_forms_say_what_is_wrong() {
        for (arg, needle) in [
            ("gps_lost@1s", "unknown variant"),
            ("gps_loss@soon", "a time is seconds"),
            ("gps_loss", "give one start"),
            ("gps_loss@1s:scale=0.5", "scale: does not apply to gps_loss"),
            ("motor_failure@1s", "motor=N"),
            (
                "motor_failure@1s:motor=0,thrust_scale=2",
                "thrust_scale: 2 is not within",
            ),
            ("wind_gust@1s:peak_m_s=5", "needs its length"),
            ("gps_loss@1s:bogus=1", "unknown field `bogus`"),
            ("gps_loss@1s:at_item=3", "only one of"),
            ("gps_jamming@1s:noise_scale=NaN", "noise_scale"),
            (
                "imu_bias_step@1s:gyro_rad_s=[0,0,10.5]",
                "gyro_rad_s: 10.5 is not within [-10, 10]",
            ),
            (
                "imu_bias_step@1s:accel_m_s2=[-101,0,0]",
                "accel_m_s2: -101 is not within [-100, 100]",
            ),
            (
                "mag_interference@1s:offset_gauss=[0,11,0]",
                "offset_gauss: 11 is not within [-10, 10]",
            ),
            ("motor_failure@1s:motor=8", "rotors are numbered 0..7"),
            (
                "thruster_failure@1s:thruster=2",
                "thrusters are 0 (left) and 1 (right)",
            ),
            (
                "wheel_motor_failure@1s:motor=2",
                "wheel motors are 0 (left, or an Ackermann rover's only one) and 1 (right)",
            ),
            (
                "wheel_motor_failure@1s:torque_scale=1.5",
                "torque_scale: 1.5 is not within [0, 1]",
            ),
            (
                "wheel_motor_failure@1s:thrust_scale=0.5",
                "thrust_scale: does not apply to wheel_motor_failure (it takes motor, torque_scale)",
            ),
            ("tyre_grip@1s", "tyre_grip needs grip_scale=K"),
            (
                "tyre_grip@1s:wheel=4,grip_scale=0.1",
                "wheels are 0 front left, 1 front right, 2 rear left, 3 rear right",
            ),
            (
                "tyre_grip@1s:grip_scale=-0.1",
                "grip_scale: -0.1 is not within [0, 5]",
            ),
            (
                "battery_capacity_scale@1s:scale=0",
                "scale: 0 is not within (0, 1]",
            ),
            ("gps_loss@1s+0s", "duration_s: 0 is not within (0, 1e7] s"),
            (
                "gps_spoof@1s:rate_m_s=-101",
                "rate_m_s: -101 is not within [-100, 100]",
            ),
            ("battery_capacity_scale@1s", "needs scale=K"),
            ("battery_voltage_drop@1s", "needs drop_v=V"),
            ("wind_gust@1s+5s", "needs peak_m_s"),
            ("imu_bias_step@1s", "needs gyro_rad_s and/or accel_m_s2"),
            ("mag_interference@1s", "needs offset_gauss"),
            ("baro_drift_step@1s", "needs offset_m and/or rate_m_s"),
        ] {
            let e = parse_fault_arg(arg).unwrap_err();
            assert!(e.contains(needle), "{arg}: {e}");
        }
    }

    #[test]
    fn a_fault_describes_its_start_and_length() {
        let d = |arg: &str| parse_fault_arg(arg).map(|f| f.describe());
        assert_eq!(
            d("gps_loss@40s+30s").as_deref(),
            Ok("gps_loss at 40 s for 30 s")
        );
        assert_eq!(d("rc_loss@item3").as_deref(), Ok("rc_loss at item 3"));
        assert_eq!(
            d("gcs_link_loss:zone=valley").as_deref(),
            Ok("gcs_link_loss in zone valley")
        );
        let none = FaultSpec {
            at_s: None,
            ..FaultSpec::new(FaultKind::ImuStuck, 0.0)
        };
        assert_eq!(none.describe(), "imu_stuck ");
        // Seconds are finite and not negative.
        for bad in ["gps_loss@-5s", "gps_loss@1s+-2", "gps_loss@NaNs"] {
            let e = parse_fault_arg(bad).expect_err(bad);
            assert!(e.contains("a time is seconds"), "{bad}: {e}");
        }
        assert_eq!(parse_fault_arg("gps_loss@0").map(|f| f.at_s), Ok(Some(0.0)));
        // Bracketed values keep their commas.
        let f = parse_fault_arg("imu_bias_step@1s:gyro_rad_s=[0.5,0,0],accel_m_s2=[0,1,2]")
            .expect("two vectors");
        assert_eq!(
            (f.gyro_rad_s, f.accel_m_s2),
            (Some([0.5, 0.0, 0.0]), Some([0.0, 1.0, 2.0]))
        );
    }

    /// The ends of each range are allowed.
    #[test]
    fn the_ends_of_each_range_are_allowed() {
        for arg in [
            "imu_bias_step@1s:gyro_rad_s=[10,-10,0],accel_m_s2=[100,-100,0]",
            "mag_interference@1s:offset_gauss=[10,-10,0]",
            "motor_failure@1s:motor=7",
            "thruster_failure@1s:thruster=1",
            "battery_capacity_scale@1s:scale=1",
            "gps_loss@1s+10000000s",
            "gps_spoof@1s:rate_m_s=-100,bearing_deg=-360",
            "baro_drift_step@1s:offset_m=-10000,rate_m_s=100",
            "wind_gust@1s+5s:peak_m_s=100,from_deg=-360",
            "gps_jamming@1s:noise_scale=1",
            "imu_noise_scale@1s:noise_scale=1000",
            "battery_voltage_drop@1s:drop_v=100",
            "motor_failure@1s:motor=0,thrust_scale=1",
            "thruster_failure@1s",
            "thruster_failure@1s:thruster=0",
            "imu_bias_step@1s:accel_m_s2=[1,0,0]",
            "baro_drift_step@1s:rate_m_s=0.5",
        ] {
            let f = parse_fault_arg(arg).unwrap_or_else(|e| panic!("{arg}: {e}"));
            assert_eq!(f.validate(), Ok(()), "{arg}");
        }
        // Infinities (no file or argument writes one) are refused too.
        let endless = FaultSpec {
            duration_s: Some(f64::INFINITY),
            ..FaultSpec::new(FaultKind::GpsLoss, 1.0)
        };
        assert_eq!(
            endless.validate().map_err(|e| e.key),
            Err("duration_s".to_string())
        );
        let whole = FaultSpec {
            scale: Some(f64::INFINITY),
            ..FaultSpec::new(FaultKind::BatteryCapacityScale, 1.0)
        };
        assert_eq!(
            whole.validate().map_err(|e| e.key),
            Err("scale".to_string())
        );
    }

    #[test]
    fn every_kind_round_trips_through_its_name() {
        for k in FaultKind::ALL {
            let v: FaultKind = serde_json::from_value(k.name().into()).unwrap();
            assert_eq!(v, k);
        }
    }
}
