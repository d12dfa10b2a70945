//! The msgpack form of AirSim's structs (`airsim/types.py`): each is a map
//! from its field names to values, vectors as `{x_val, y_val, z_val}`,
//! quaternions as `{w_val, x_val, y_val, z_val}`, NED metres and radians,
//! time stamps in nanoseconds of sim time. Decoding is lenient about number
//! types (a client may send an integer where a float is meant) and strict
//! about everything else.

use nalgebra::{UnitQuaternion, Vector3};
use rmpv::Value;

/// A map value from field names.
pub fn map(fields: Vec<(&str, Value)>) -> Value {
    Value::Map(
        fields
            .into_iter()
            .map(|(k, v)| (Value::from(k), v))
            .collect(),
    )
}

/// `Vector3r`.
pub fn vector3r(v: &Vector3<f64>) -> Value {
    map(vec![
        ("x_val", Value::from(v.x)),
        ("y_val", Value::from(v.y)),
        ("z_val", Value::from(v.z)),
    ])
}

/// `Quaternionr` (body FRD → NED).
pub fn quaternionr(q: &UnitQuaternion<f64>) -> Value {
    map(vec![
        ("w_val", Value::from(q.w)),
        ("x_val", Value::from(q.i)),
        ("y_val", Value::from(q.j)),
        ("z_val", Value::from(q.k)),
    ])
}

/// `Pose`.
pub fn pose(pos: &Vector3<f64>, q: &UnitQuaternion<f64>) -> Value {
    map(vec![
        ("position", vector3r(pos)),
        ("orientation", quaternionr(q)),
    ])
}

/// `GeoPoint`: degrees, degrees, metres above mean sea level.
pub fn geo_point(lat_deg: f64, lon_deg: f64, alt_m: f64) -> Value {
    map(vec![
        ("latitude", Value::from(lat_deg)),
        ("longitude", Value::from(lon_deg)),
        ("altitude", Value::from(alt_m)),
    ])
}

/// `KinematicsState` from position, attitude, velocity, body rates (FRD),
/// acceleration (NED) and angular acceleration (FRD).
pub struct Kinematics<'a> {
    /// Position, NED m.
    pub pos: &'a Vector3<f64>,
    /// Attitude, FRD → NED.
    pub att: &'a UnitQuaternion<f64>,
    /// Velocity, NED m/s.
    pub vel: &'a Vector3<f64>,
    /// Body rates, FRD rad/s.
    pub rate: &'a Vector3<f64>,
    /// Acceleration, NED m/s².
    pub accel: &'a Vector3<f64>,
    /// Angular acceleration, FRD rad/s².
    pub ang_accel: &'a Vector3<f64>,
}

/// The `KinematicsState` map.
pub fn kinematics(k: &Kinematics) -> Value {
    map(vec![
        ("position", vector3r(k.pos)),
        ("orientation", quaternionr(k.att)),
        ("linear_velocity", vector3r(k.vel)),
        ("angular_velocity", vector3r(k.rate)),
        ("linear_acceleration", vector3r(k.accel)),
        ("angular_acceleration", vector3r(k.ang_accel)),
    ])
}

/// `CollisionInfo`.
pub fn collision(
    has_collided: bool,
    normal: &Vector3<f64>,
    at: &Vector3<f64>,
    stamp_ns: u64,
) -> Value {
    map(vec![
        ("has_collided", Value::from(has_collided)),
        ("normal", vector3r(normal)),
        ("impact_point", vector3r(at)),
        ("position", vector3r(at)),
        ("penetration_depth", Value::from(0.0)),
        ("time_stamp", Value::from(stamp_ns)),
        (
            "object_name",
            Value::from(if has_collided { "Ground" } else { "" }),
        ),
        ("object_id", Value::from(-1)),
    ])
}

/// A number argument (float or integer).
pub fn f64_of(v: &Value) -> Option<f64> {
    match v {
        Value::F64(x) => Some(*x),
        Value::F32(x) => Some(f64::from(*x)),
        Value::Integer(i) => i.as_f64(),
        _ => None,
    }
}

/// A map field by name.
pub fn field<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    v.as_map()?
        .iter()
        .find(|(k, _)| k.as_str() == Some(name))
        .map(|(_, v)| v)
}

/// A `Vector3r` argument.
pub fn vector3r_of(v: &Value) -> Option<Vector3<f64>> {
    Some(Vector3::new(
        f64_of(field(v, "x_val")?)?,
        f64_of(field(v, "y_val")?)?,
        f64_of(field(v, "z_val")?)?,
    ))
}

/// A `YawMode` argument: (is_rate, degrees or degrees per second).
pub fn yaw_mode_of(v: &Value) -> Option<(bool, f64)> {
    Some((
        field(v, "is_rate")?.as_bool()?,
        f64_of(field(v, "yaw_or_rate")?)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_msgpack_with_airsim_field_names() {
        let q = UnitQuaternion::from_euler_angles(0.1, -0.2, 0.3);
        let v = pose(&Vector3::new(1.0, 2.0, -3.0), &q);
        let mut bytes = Vec::new();
        rmpv::encode::write_value(&mut bytes, &v).expect("encode");
        let back = rmpv::decode::read_value(&mut bytes.as_slice()).expect("decode");
        let p = vector3r_of(field(&back, "position").expect("position")).expect("vector");
        assert_eq!(p, Vector3::new(1.0, 2.0, -3.0));
        let o = field(&back, "orientation").expect("orientation");
        assert_eq!(field(o, "w_val").and_then(f64_of), Some(q.w));
        assert!(field(o, "x").is_none());
    }

    #[test]
    fn numbers_may_be_integers_and_bad_shapes_are_none() {
        let v = map(vec![
            ("x_val", Value::from(1)),
            ("y_val", Value::from(2.5)),
            ("z_val", Value::from(-3)),
        ]);
        assert_eq!(vector3r_of(&v), Some(Vector3::new(1.0, 2.5, -3.0)));
        assert_eq!(vector3r_of(&Value::from("x")), None);
        assert_eq!(vector3r_of(&map(vec![("x_val", Value::from(1))])), None);
        let y = map(vec![
            ("is_rate", Value::from(true)),
            ("yaw_or_rate", Value::from(30)),
        ]);
        assert_eq!(yaw_mode_of(&y), Some((true, 30.0)));
    }
}
