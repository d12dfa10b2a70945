//! QGroundControl `.plan` files (JSON), read and written.
//!
//! Read: `mission.items` SimpleItems (command, frame, 7 params with `null` as
//! NaN, autoContinue), ComplexItems `survey` and `CorridorScan` flattened from
//! the SimpleItems QGC stored in their `TransectStyleComplexItem.Items` (as
//! MAVSDK's importer does; StructureScan stores none and is refused),
//! `plannedHomePosition`, `geoFence` circles and polygons (as MAV_CMD_NAV_FENCE_*
//! items) and `rallyPoints`. DO_JUMP targets given as QGC `doJumpId`s are turned
//! into item indices. Errors name the file and the JSON path.

use serde_json::{json, Map, Value};

use super::commands::{self, DO_JUMP};
use super::{
    Mission, MissionError, MissionItem, PlanHome, FRAME_GLOBAL, FRAME_GLOBAL_RELATIVE_ALT,
};

struct Ctx<'a> {
    file: &'a str,
}

impl Ctx<'_> {
    fn err(&self, path: &str, message: impl Into<String>) -> MissionError {
        MissionError::Json {
            file: self.file.to_string(),
            path: path.to_string(),
            message: message.into(),
        }
    }

    fn obj<'v>(&self, v: &'v Value, path: &str) -> Result<&'v Map<String, Value>, MissionError> {
        v.as_object()
            .ok_or_else(|| self.err(path, format!("expected an object, found {}", kind(v))))
    }

    fn arr<'v>(&self, v: &'v Value, path: &str) -> Result<&'v Vec<Value>, MissionError> {
        v.as_array()
            .ok_or_else(|| self.err(path, format!("expected an array, found {}", kind(v))))
    }

    fn num(&self, v: &Value, path: &str) -> Result<f64, MissionError> {
        v.as_f64()
            .filter(|x| x.is_finite())
            .ok_or_else(|| self.err(path, format!("expected a number, found {}", kind(v))))
    }

    /// A number or `null` (NaN).
    fn num_or_null(&self, v: &Value, path: &str) -> Result<f64, MissionError> {
        if v.is_null() {
            Ok(f64::NAN)
        } else {
            self.num(v, path)
        }
    }

    fn uint(&self, v: &Value, path: &str, max: u64) -> Result<u64, MissionError> {
        v.as_u64().filter(|x| *x <= max).ok_or_else(|| {
            self.err(
                path,
                format!("expected a whole number 0..={max}, found {v}"),
            )
        })
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parses `.plan` text.
///
/// # Errors
/// [`MissionError::Line`] for invalid JSON, [`MissionError::Json`] for content.
pub fn parse(text: &str, file: &str) -> Result<Mission, MissionError> {
    let root: Value = serde_json::from_str(text).map_err(|e| MissionError::Line {
        file: file.to_string(),
        line: e.line(),
        message: {
            let m = e.to_string();
            m.rfind(" at line ")
                .map_or(m.clone(), |i| m[..i].to_string())
        },
    })?;
    let c = Ctx { file };
    let top = c.obj(&root, ".")?;
    match top.get("fileType").and_then(Value::as_str) {
        Some("Plan") => {}
        other => return Err(c.err("fileType", format!("expected \"Plan\", found {other:?}"))),
    }
    let mission = top
        .get("mission")
        .ok_or_else(|| c.err("mission", "missing"))?;
    let mission = c.obj(mission, "mission")?;
    let mut out = Mission::default();
    if let Some(h) = mission.get("plannedHomePosition") {
        let a = c.arr(h, "mission.plannedHomePosition")?;
        if a.len() != 3 {
            return Err(c.err(
                "mission.plannedHomePosition",
                format!("expected [lat, lon, alt], found {} values", a.len()),
            ));
        }
        let lat = c.num(&a[0], "mission.plannedHomePosition[0]")?;
        let lon = c.num(&a[1], "mission.plannedHomePosition[1]")?;
        let alt = c.num(&a[2], "mission.plannedHomePosition[2]")?;
        if !(-90.0..=90.0).contains(&lat) || !(-180.0..=180.0).contains(&lon) {
            return Err(c.err(
                "mission.plannedHomePosition",
                format!("({lat}, {lon}) is not a latitude/longitude"),
            ));
        }
        out.home = Some(PlanHome {
            lat_deg: lat,
            lon_deg: lon,
            alt_m: alt,
        });
    }
    if let Some(v) = mission.get("vehicleType") {
        out.vehicle_type = Some(c.uint(v, "mission.vehicleType", 255)? as u8);
    }
    for (key, slot) in [
        ("cruiseSpeed", &mut out.cruise_speed_m_s),
        ("hoverSpeed", &mut out.hover_speed_m_s),
    ] {
        if let Some(v) = mission.get(key) {
            *slot = Some(c.num(v, &format!("mission.{key}"))?);
        }
    }
    let items = mission
        .get("items")
        .ok_or_else(|| c.err("mission.items", "missing"))?;
    let items = c.arr(items, "mission.items")?;
    let mut jump_ids: Vec<(u64, usize)> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let path = format!("mission.items[{i}]");
        let o = c.obj(item, &path)?;
        match o.get("type").and_then(Value::as_str) {
            Some("SimpleItem") => {
                if let Some(id) = o.get("doJumpId").and_then(Value::as_u64) {
                    jump_ids.push((id, out.items.len()));
                }
                out.items.push(simple_item(&c, o, &path)?);
            }
            Some("ComplexItem") => {
                let t = o
                    .get("complexItemType")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                match t {
                    "survey" | "CorridorScan" => {
                        let ts = o
                            .get("TransectStyleComplexItem")
                            .ok_or_else(|| c.err(&format!("{path}.TransectStyleComplexItem"), format!("missing: this {t} has no stored items (save it again with a current QGroundControl)")))?;
                        let tpath = format!("{path}.TransectStyleComplexItem.Items");
                        let inner = c.obj(ts, &format!("{path}.TransectStyleComplexItem"))?
                            .get("Items")
                            .ok_or_else(|| c.err(&tpath, "missing"))?;
                        for (k, si) in c.arr(inner, &tpath)?.iter().enumerate() {
                            let p = format!("{tpath}[{k}]");
                            let so = c.obj(si, &p)?;
                            if let Some(id) = so.get("doJumpId").and_then(Value::as_u64) {
                                jump_ids.push((id, out.items.len()));
                            }
                            out.items.push(simple_item(&c, so, &p)?);
                        }
                    }
                    other => {
                        return Err(c.err(
                            &format!("{path}.complexItemType"),
                            format!("'{other}' is not supported (survey and CorridorScan are; a StructureScan stores no flight path in the file)"),
                        ))
                    }
                }
            }
            other => {
                return Err(c.err(
                    &format!("{path}.type"),
                    format!("expected \"SimpleItem\" or \"ComplexItem\", found {other:?}"),
                ))
            }
        }
    }
    // DO_JUMP param1 is a doJumpId in plan files: make it an item index.
    for (i, item) in out.items.iter_mut().enumerate() {
        if item.command == DO_JUMP {
            let id = item.params[0];
            match jump_ids.iter().find(|(j, _)| *j as f64 == id) {
                Some((_, idx)) => item.params[0] = *idx as f64,
                None => {
                    return Err(c.err(
                        &format!("mission.items (item {i})"),
                        format!("DO_JUMP to doJumpId {id}, which no item has"),
                    ));
                }
            }
        }
    }
    if let Some(f) = top.get("geoFence") {
        out.fence = fence(&c, f)?;
    }
    if let Some(r) = top.get("rallyPoints") {
        let r = c.obj(r, "rallyPoints")?;
        if let Some(points) = r.get("points") {
            for (i, p) in c.arr(points, "rallyPoints.points")?.iter().enumerate() {
                let path = format!("rallyPoints.points[{i}]");
                let a = c.arr(p, &path)?;
                if a.len() != 3 {
                    return Err(c.err(&path, "expected [lat, lon, alt]"));
                }
                out.rally.push(MissionItem {
                    command: commands::NAV_RALLY_POINT,
                    frame: FRAME_GLOBAL_RELATIVE_ALT,
                    params: [0.0; 4],
                    x: c.num(&a[0], &path)?,
                    y: c.num(&a[1], &path)?,
                    z: c.num(&a[2], &path)?,
                    autocontinue: true,
                });
            }
        }
    }
    Ok(out)
}

fn simple_item(
    c: &Ctx<'_>,
    o: &Map<String, Value>,
    path: &str,
) -> Result<MissionItem, MissionError> {
    let command = c.uint(
        o.get("command").unwrap_or(&Value::Null),
        &format!("{path}.command"),
        u64::from(u16::MAX),
    )? as u16;
    let frame = c.uint(
        o.get("frame").unwrap_or(&Value::Null),
        &format!("{path}.frame"),
        255,
    )? as u8;
    let ppath = format!("{path}.params");
    let params = c.arr(o.get("params").unwrap_or(&Value::Null), &ppath)?;
    if params.len() != 7 {
        return Err(c.err(
            &ppath,
            format!("expected 7 parameters, found {}", params.len()),
        ));
    }
    let mut p = [0.0; 7];
    for (k, v) in params.iter().enumerate() {
        p[k] = c.num_or_null(v, &format!("{ppath}[{k}]"))?;
    }
    let autocontinue = match o.get("autoContinue") {
        None => true,
        Some(v) => v.as_bool().ok_or_else(|| {
            c.err(
                &format!("{path}.autoContinue"),
                format!("expected true or false, found {}", kind(v)),
            )
        })?,
    };
    Ok(MissionItem {
        command,
        frame,
        params: [p[0], p[1], p[2], p[3]],
        x: p[4],
        y: p[5],
        z: p[6],
        autocontinue,
    })
}

fn fence(c: &Ctx<'_>, f: &Value) -> Result<Vec<MissionItem>, MissionError> {
    let f = c.obj(f, "geoFence")?;
    let mut out = Vec::new();
    if let Some(polys) = f.get("polygons") {
        for (i, p) in c.arr(polys, "geoFence.polygons")?.iter().enumerate() {
            let path = format!("geoFence.polygons[{i}]");
            let o = c.obj(p, &path)?;
            let inclusion = o.get("inclusion").and_then(Value::as_bool).unwrap_or(true);
            let verts = c.arr(
                o.get("polygon").unwrap_or(&Value::Null),
                &format!("{path}.polygon"),
            )?;
            if verts.len() < 3 {
                return Err(c.err(
                    &format!("{path}.polygon"),
                    format!("a polygon needs at least 3 vertices, found {}", verts.len()),
                ));
            }
            for (k, v) in verts.iter().enumerate() {
                let vp = format!("{path}.polygon[{k}]");
                let a = c.arr(v, &vp)?;
                if a.len() != 2 {
                    return Err(c.err(&vp, "expected [lat, lon]"));
                }
                out.push(MissionItem {
                    command: if inclusion {
                        commands::NAV_FENCE_POLYGON_VERTEX_INCLUSION
                    } else {
                        commands::NAV_FENCE_POLYGON_VERTEX_EXCLUSION
                    },
                    frame: FRAME_GLOBAL,
                    params: [verts.len() as f64, 0.0, 0.0, 0.0],
                    x: c.num(&a[0], &vp)?,
                    y: c.num(&a[1], &vp)?,
                    z: 0.0,
                    autocontinue: true,
                });
            }
        }
    }
    if let Some(circles) = f.get("circles") {
        for (i, cv) in c.arr(circles, "geoFence.circles")?.iter().enumerate() {
            let path = format!("geoFence.circles[{i}]");
            let o = c.obj(cv, &path)?;
            let inclusion = o.get("inclusion").and_then(Value::as_bool).unwrap_or(true);
            let circle = c.obj(
                o.get("circle").unwrap_or(&Value::Null),
                &format!("{path}.circle"),
            )?;
            let center = c.arr(
                circle.get("center").unwrap_or(&Value::Null),
                &format!("{path}.circle.center"),
            )?;
            if center.len() != 2 {
                return Err(c.err(&format!("{path}.circle.center"), "expected [lat, lon]"));
            }
            out.push(MissionItem {
                command: if inclusion {
                    commands::NAV_FENCE_CIRCLE_INCLUSION
                } else {
                    commands::NAV_FENCE_CIRCLE_EXCLUSION
                },
                frame: FRAME_GLOBAL,
                params: [
                    c.num(
                        circle.get("radius").unwrap_or(&Value::Null),
                        &format!("{path}.circle.radius"),
                    )?,
                    0.0,
                    0.0,
                    0.0,
                ],
                x: c.num(&center[0], &format!("{path}.circle.center[0]"))?,
                y: c.num(&center[1], &format!("{path}.circle.center[1]"))?,
                z: 0.0,
                autocontinue: true,
            });
        }
    }
    Ok(out)
}

/// Whether two vertex counts are the same, NaN equal to NaN.
fn same_count(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

fn num_or_null(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

/// Writes a mission as a QGroundControl `.plan` (version 1) for a PX4
/// multirotor (`vehicle_type` 2) or surface boat (11).
pub fn to_string(m: &Mission, vehicle_type: u8) -> String {
    let items: Vec<Value> = m
        .items
        .iter()
        .enumerate()
        .map(|(i, it)| {
            let mut p1 = it.params[0];
            if it.command == DO_JUMP && p1.is_finite() {
                p1 += 1.0; // doJumpIds are 1-based
            }
            json!({
                "type": "SimpleItem",
                "autoContinue": it.autocontinue,
                "command": it.command,
                "doJumpId": i + 1,
                "frame": it.frame,
                "params": [num_or_null(p1), num_or_null(it.params[1]), num_or_null(it.params[2]), num_or_null(it.params[3]),
                           num_or_null(it.x), num_or_null(it.y), num_or_null(it.z)],
            })
        })
        .collect();
    let mut polygons = Vec::new();
    let mut circles = Vec::new();
    let mut i = 0;
    while i < m.fence.len() {
        let f = m.fence[i];
        match f.command {
            commands::NAV_FENCE_POLYGON_VERTEX_INCLUSION
            | commands::NAV_FENCE_POLYGON_VERTEX_EXCLUSION => {
                // param1 is the polygon's vertex count. Where it is not a usable
                // count, the polygon is the run of vertices of the same kind.
                let run = m.fence[i..]
                    .iter()
                    .take_while(|v| v.command == f.command && same_count(v.params[0], f.params[0]))
                    .count();
                let count = f.params[0];
                let n = if count.is_finite() && count >= 3.0 && count <= run as f64 {
                    count as usize
                } else {
                    run
                };
                let end = (i + n.max(1)).min(m.fence.len());
                let verts: Vec<Value> = m.fence[i..end].iter().map(|v| json!([v.x, v.y])).collect();
                polygons.push(json!({
                    "inclusion": f.command == commands::NAV_FENCE_POLYGON_VERTEX_INCLUSION,
                    "polygon": verts,
                    "version": 1,
                }));
                i = end;
            }
            _ => {
                circles.push(json!({
                    "circle": { "center": [f.x, f.y], "radius": f.params[0] },
                    "inclusion": f.command == commands::NAV_FENCE_CIRCLE_INCLUSION,
                    "version": 1,
                }));
                i += 1;
            }
        }
    }
    let home = m
        .home
        .map_or(json!([0, 0, 0]), |h| json!([h.lat_deg, h.lon_deg, h.alt_m]));
    let plan = json!({
        "fileType": "Plan",
        "groundStation": "mavsitl",
        "version": 1,
        "mission": {
            "version": 2,
            "firmwareType": 12,
            "vehicleType": vehicle_type,
            "cruiseSpeed": m.cruise_speed_m_s.unwrap_or(3.0),
            "hoverSpeed": m.hover_speed_m_s.unwrap_or(5.0),
            "globalPlanAltitudeMode": 1,
            "plannedHomePosition": home,
            "items": items,
        },
        "geoFence": { "version": 2, "polygons": polygons, "circles": circles },
        "rallyPoints": { "version": 2, "points": m.rally.iter().map(|r| json!([r.x, r.y, r.z])).collect::<Vec<_>>() },
    });
    serde_json::to_string_pretty(&plan).unwrap_or_default() + "\n"
}
