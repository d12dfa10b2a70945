//! QGroundControl `.plan` files (JSON), read and written.
//!
//! Read: `mission.items` SimpleItems (command, frame, 7 params with `null` as
//! NaN, autoContinue), ComplexItems `survey` and `CorridorScan` flattened from
//! the SimpleItems QGC stored in their `TransectStyleComplexItem.Items` (as
//! MAVSDK's importer does; StructureScan stores none and is refused),
//! `plannedHomePosition`, `geoFence` circles and polygons (as MAV_CMD_NAV_FENCE_*
//! items) and `rallyPoints`. DO_JUMP targets given as QGC `doJumpId`s are turned
//! into item indices. Errors name the file and the JSON path.

use serde::Deserialize;
use serde_json::{json, Value};

use super::commands::{self, DO_JUMP};
use super::{
    Mission, MissionError, MissionItem, PlanHome, FRAME_GLOBAL, FRAME_GLOBAL_RELATIVE_ALT,
};

/// A `.plan` file as QGroundControl writes it (the fields read; the others
/// are ignored).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PlanFile {
    mission: PlanMission,
    geo_fence: Option<GeoFenceJson>,
    rally_points: Option<RallyJson>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PlanMission {
    planned_home_position: Option<Vec<f64>>,
    vehicle_type: Option<u8>,
    cruise_speed: Option<f64>,
    hover_speed: Option<f64>,
    items: Vec<ItemJson>,
}

/// A mission item: a SimpleItem, or a ComplexItem whose SimpleItems QGC
/// stored with it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ItemJson {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<u16>,
    frame: Option<u8>,
    /// Seven parameters, `null` for NaN.
    params: Option<Vec<Option<f64>>>,
    auto_continue: Option<bool>,
    do_jump_id: Option<u64>,
    complex_item_type: Option<String>,
    #[serde(rename = "TransectStyleComplexItem")]
    transect: Option<TransectJson>,
}

#[derive(Debug, Deserialize)]
struct TransectJson {
    #[serde(rename = "Items")]
    items: Option<Vec<ItemJson>>,
}

#[derive(Debug, Deserialize)]
struct GeoFenceJson {
    #[serde(default)]
    polygons: Vec<PolygonJson>,
    #[serde(default)]
    circles: Vec<CircleFenceJson>,
}

#[derive(Debug, Deserialize)]
struct PolygonJson {
    inclusion: Option<bool>,
    polygon: Vec<[f64; 2]>,
}

#[derive(Debug, Deserialize)]
struct CircleFenceJson {
    inclusion: Option<bool>,
    circle: CircleJson,
}

#[derive(Debug, Deserialize)]
struct CircleJson {
    center: [f64; 2],
    radius: f64,
}

#[derive(Debug, Deserialize)]
struct RallyJson {
    #[serde(default)]
    points: Vec<[f64; 3]>,
}

/// Errors of one file, with the JSON path.
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
}

/// Parses `.plan` text.
///
/// # Errors
/// [`MissionError::Line`] for invalid JSON, [`MissionError::Json`] for content
/// (the path of the offending value and what is wrong).
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
    match root.get("fileType").and_then(Value::as_str) {
        Some("Plan") => {}
        other => return Err(c.err("fileType", format!("expected \"Plan\", found {other:?}"))),
    }
    let plan: PlanFile = serde_path_to_error::deserialize(&root).map_err(|e| {
        let path = e.path().to_string();
        c.err(&path, e.into_inner().to_string())
    })?;
    let mut out = Mission {
        home: plan
            .mission
            .planned_home_position
            .as_deref()
            .map(|h| home(&c, h))
            .transpose()?,
        vehicle_type: plan.mission.vehicle_type,
        cruise_speed_m_s: plan.mission.cruise_speed,
        hover_speed_m_s: plan.mission.hover_speed,
        ..Mission::default()
    };
    let mut jump_ids: Vec<(u64, usize)> = Vec::new();
    for (i, item) in plan.mission.items.iter().enumerate() {
        let path = format!("mission.items[{i}]");
        for (p, simple) in flattened(&c, item, &path)? {
            if let Some(id) = simple.do_jump_id {
                jump_ids.push((id, out.items.len()));
            }
            out.items.push(simple_item(&c, simple, &p)?);
        }
    }
    resolve_jumps(&c, &mut out.items, &jump_ids)?;
    if let Some(f) = &plan.geo_fence {
        out.fence = fence(&c, f)?;
    }
    if let Some(r) = &plan.rally_points {
        out.rally = r.points.iter().map(|p| rally_point(*p)).collect();
    }
    Ok(out)
}

/// `plannedHomePosition`: [lat, lon, alt].
fn home(c: &Ctx<'_>, h: &[f64]) -> Result<PlanHome, MissionError> {
    let path = "mission.plannedHomePosition";
    let [lat, lon, alt] = *h else {
        return Err(c.err(
            path,
            format!("expected [lat, lon, alt], found {} values", h.len()),
        ));
    };
    if !(-90.0..=90.0).contains(&lat) || !(-180.0..=180.0).contains(&lon) {
        return Err(c.err(path, format!("({lat}, {lon}) is not a latitude/longitude")));
    }
    Ok(PlanHome {
        lat_deg: lat,
        lon_deg: lon,
        alt_m: alt,
    })
}

/// The SimpleItems an item stands for, with their paths: itself, or a
/// survey's or corridor scan's stored items.
fn flattened<'i>(
    c: &Ctx<'_>,
    item: &'i ItemJson,
    path: &str,
) -> Result<Vec<(String, &'i ItemJson)>, MissionError> {
    match item.kind.as_deref() {
        Some("SimpleItem") => Ok(vec![(path.to_string(), item)]),
        Some("ComplexItem") => {
            let t = item.complex_item_type.as_deref().unwrap_or("");
            if !matches!(t, "survey" | "CorridorScan") {
                return Err(c.err(
                    &format!("{path}.complexItemType"),
                    format!("'{t}' is not supported (survey and CorridorScan are; a StructureScan stores no flight path in the file)"),
                ));
            }
            let tpath = format!("{path}.TransectStyleComplexItem");
            let ts = item.transect.as_ref().ok_or_else(|| {
                c.err(
                    &tpath,
                    format!("missing: this {t} has no stored items (save it again with a current QGroundControl)"),
                )
            })?;
            let items = ts
                .items
                .as_ref()
                .ok_or_else(|| c.err(&format!("{tpath}.Items"), "missing"))?;
            Ok(items
                .iter()
                .enumerate()
                .map(|(k, si)| (format!("{tpath}.Items[{k}]"), si))
                .collect())
        }
        other => Err(c.err(
            &format!("{path}.type"),
            format!("expected \"SimpleItem\" or \"ComplexItem\", found {other:?}"),
        )),
    }
}

/// DO_JUMP param1 is a doJumpId in plan files: make it an item index.
fn resolve_jumps(
    c: &Ctx<'_>,
    items: &mut [MissionItem],
    jump_ids: &[(u64, usize)],
) -> Result<(), MissionError> {
    for (i, item) in items.iter_mut().enumerate() {
        if item.command != DO_JUMP {
            continue;
        }
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
    Ok(())
}

fn simple_item(c: &Ctx<'_>, o: &ItemJson, path: &str) -> Result<MissionItem, MissionError> {
    let missing = |key: &str| c.err(&format!("{path}.{key}"), "missing");
    let command = o.command.ok_or_else(|| missing("command"))?;
    let frame = o.frame.ok_or_else(|| missing("frame"))?;
    let params = o.params.as_ref().ok_or_else(|| missing("params"))?;
    let p: [f64; 7] = params
        .iter()
        .map(|v| v.unwrap_or(f64::NAN))
        .collect::<Vec<_>>()
        .try_into()
        .map_err(|_| {
            c.err(
                &format!("{path}.params"),
                format!("expected 7 parameters, found {}", params.len()),
            )
        })?;
    Ok(MissionItem {
        command,
        frame,
        params: [p[0], p[1], p[2], p[3]],
        x: p[4],
        y: p[5],
        z: p[6],
        autocontinue: o.auto_continue.unwrap_or(true),
    })
}

fn fence(c: &Ctx<'_>, f: &GeoFenceJson) -> Result<Vec<MissionItem>, MissionError> {
    let mut out = Vec::new();
    for (i, p) in f.polygons.iter().enumerate() {
        let n = p.polygon.len();
        if n < 3 {
            return Err(c.err(
                &format!("geoFence.polygons[{i}].polygon"),
                format!("a polygon needs at least 3 vertices, found {n}"),
            ));
        }
        let command = if p.inclusion.unwrap_or(true) {
            commands::NAV_FENCE_POLYGON_VERTEX_INCLUSION
        } else {
            commands::NAV_FENCE_POLYGON_VERTEX_EXCLUSION
        };
        out.extend(p.polygon.iter().map(|[lat, lon]| MissionItem {
            command,
            frame: FRAME_GLOBAL,
            params: [n as f64, 0.0, 0.0, 0.0],
            x: *lat,
            y: *lon,
            z: 0.0,
            autocontinue: true,
        }));
    }
    out.extend(f.circles.iter().map(|cf| MissionItem {
        command: if cf.inclusion.unwrap_or(true) {
            commands::NAV_FENCE_CIRCLE_INCLUSION
        } else {
            commands::NAV_FENCE_CIRCLE_EXCLUSION
        },
        frame: FRAME_GLOBAL,
        params: [cf.circle.radius, 0.0, 0.0, 0.0],
        x: cf.circle.center[0],
        y: cf.circle.center[1],
        z: 0.0,
        autocontinue: true,
    }));
    Ok(out)
}

/// A rally point [lat, lon, alt above home].
fn rally_point([lat, lon, alt]: [f64; 3]) -> MissionItem {
    MissionItem {
        command: commands::NAV_RALLY_POINT,
        frame: FRAME_GLOBAL_RELATIVE_ALT,
        params: [0.0; 4],
        x: lat,
        y: lon,
        z: alt,
        autocontinue: true,
    }
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
