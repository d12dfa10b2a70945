//! What `compare` and `plot` write: the aligned table (for stdout),
//! `metrics.csv`, `metrics.json`, the pictures and `report.html` — one
//! self-contained page (pictures inline as SVG, no network) with the table,
//! the exact command, versions and seeds.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use mavsitl_core::geo::{GeoPoint, LocalFrame};
use mavsitl_mavlink::mission::Mission;
use serde_json::json;

use crate::plot::{draw_all, Flown};
use crate::{distribution, Route, Scalar};

/// What was written.
pub struct Report {
    /// The table, ready to print.
    pub table: String,
    /// The HTML report.
    pub html: PathBuf,
    /// Wall time of the analysis (metrics, files, pictures), s.
    pub analysis_s: f64,
}

/// The controllers in order of first appearance.
fn controllers(flown: &[Flown]) -> Vec<&str> {
    let mut v: Vec<&str> = Vec::new();
    for f in flown {
        if !v.contains(&f.controller.as_str()) {
            v.push(&f.controller);
        }
    }
    v
}

fn io_err(path: &Path, e: std::io::Error) -> String {
    format!("{}: {e}", path.display())
}

/// One cell: the value (one seed) or median [p5, p95] (several).
fn cell(key: &str, values: &[f64]) -> String {
    match (values, distribution(values)) {
        (_, None) => "–".into(),
        ([v], _) if key == "completed" => if *v > 0.5 { "yes" } else { "no" }.into(),
        (_, Some((m, _, _))) if key == "completed" => format!("{:.0} %", m * 100.0),
        ([v], _) => format!("{v:.3}"),
        (_, Some((m, lo, hi))) => format!("{m:.3} [{lo:.3}, {hi:.3}]"),
    }
}

/// Rows of (metric label, one cell per controller).
fn rows(flown: &[Flown]) -> (Vec<&str>, Vec<(String, Vec<String>)>) {
    let names = controllers(flown);
    let Some(first) = flown.first() else {
        return (names, Vec::new());
    };
    let keys: Vec<Scalar> = first.metrics.scalars();
    let rows = keys
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let label = if s.unit.is_empty() {
                s.key.to_string()
            } else {
                format!("{} [{}]", s.key, s.unit)
            };
            let cells = names
                .iter()
                .map(|c| {
                    let v: Vec<f64> = flown
                        .iter()
                        .filter(|f| f.controller == *c)
                        .filter_map(|f| f.metrics.scalars().get(k).and_then(|x| x.value))
                        .collect();
                    if s.key == "completed" {
                        let all: Vec<f64> = flown
                            .iter()
                            .filter(|f| f.controller == *c)
                            .map(|f| f.metrics.completed.map_or(0.0, |b| f64::from(u8::from(b))))
                            .collect();
                        return cell(s.key, &all);
                    }
                    cell(s.key, &v)
                })
                .collect();
            (label, cells)
        })
        .collect();
    (names, rows)
}

/// The aligned text table.
fn table(flown: &[Flown]) -> String {
    let (names, rows) = rows(flown);
    let w0 = rows
        .iter()
        .map(|r| r.0.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    let widths: Vec<usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            rows.iter()
                .filter_map(|r| r.1.get(i).map(|c| c.chars().count()))
                .max()
                .unwrap_or(0)
                .max(n.chars().count())
        })
        .collect();
    let mut out = String::new();
    let _ = write!(out, "{:w0$}", "metric");
    for (n, w) in names.iter().zip(&widths) {
        let _ = write!(out, "  {n:>w$}");
    }
    out.push('\n');
    for (label, cells) in &rows {
        let _ = write!(out, "{label:w0$}");
        for (c, w) in cells.iter().zip(&widths) {
            let _ = write!(out, "  {c:>w$}");
        }
        out.push('\n');
    }
    out
}

fn csv(flown: &[Flown]) -> String {
    let mut out = String::from("controller,seed");
    if let Some(f) = flown.first() {
        for s in f.metrics.scalars() {
            if s.unit.is_empty() {
                let _ = write!(out, ",{}", s.key);
            } else {
                let _ = write!(out, ",{} [{}]", s.key, s.unit);
            }
        }
    }
    out.push('\n');
    for f in flown {
        let _ = write!(out, "{},{}", f.controller, f.seed);
        for s in f.metrics.scalars() {
            match s.value {
                Some(v) => {
                    let _ = write!(out, ",{v}");
                }
                None => out.push(','),
            }
        }
        out.push('\n');
    }
    out
}

fn summary_json(flown: &[Flown]) -> serde_json::Value {
    let mut by = serde_json::Map::new();
    for c in controllers(flown) {
        let mine: Vec<&Flown> = flown.iter().filter(|f| f.controller == c).collect();
        let mut m = serde_json::Map::new();
        if let Some(first) = mine.first() {
            for (k, s) in first.metrics.scalars().iter().enumerate() {
                let v: Vec<f64> = mine
                    .iter()
                    .filter_map(|f| f.metrics.scalars().get(k).and_then(|x| x.value))
                    .collect();
                if let Some((med, p5, p95)) = distribution(&v) {
                    m.insert(
                        s.key.into(),
                        json!({"unit": s.unit, "median": med, "p5": p5, "p95": p95, "n": v.len()}),
                    );
                }
            }
        }
        by.insert(c.into(), serde_json::Value::Object(m));
    }
    serde_json::Value::Object(by)
}

/// What each controller says it is: the firmware's AUTOPILOT_VERSION as its
/// flight recorded it, or SimpleFlight with mavsitl's version.
fn identities(flown: &[Flown]) -> Vec<(String, String)> {
    controllers(flown)
        .into_iter()
        .map(|c| {
            let reported = flown
                .iter()
                .filter(|f| f.controller == c)
                .flat_map(|f| f.track.events.iter())
                .find(|(_, kind, _)| kind == "autopilot_version")
                .map(|(_, _, d)| d.clone());
            let id = reported.unwrap_or_else(|| {
                if c.starts_with("simpleflight") {
                    format!("SimpleFlight, mavsitl {}", env!("CARGO_PKG_VERSION"))
                } else {
                    "did not identify itself".into()
                }
            });
            (c.to_string(), id)
        })
        .collect()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn html(flown: &[Flown], seeds: &[u64], pictures: &[PathBuf]) -> String {
    let (names, rows) = rows(flown);
    let command: Vec<String> = std::env::args().collect();
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>mavsitl compare</title><style>\
         body{{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;margin:2em auto;max-width:1100px;color:#222}}\
         table{{border-collapse:collapse;margin:1em 0}}th,td{{padding:.3em .8em;border-bottom:1px solid #ddd;text-align:right}}\
         th:first-child,td:first-child{{text-align:left}}thead th{{border-bottom:2px solid #444}}\
         code{{background:#f4f4f4;padding:.1em .3em}}figure{{margin:1.5em 0}}figure svg{{max-width:100%;height:auto}}\
         .meta td{{text-align:left;border:none;padding:.1em .8em .1em 0}}</style></head><body>\n\
         <h1>Mission comparison</h1>\n<table class=\"meta\">\
         <tr><td>command</td><td><code>{}</code></td></tr>\
         <tr><td>mavsitl</td><td>{}</td></tr><tr><td>seeds</td><td>{}</td></tr>\
         <tr><td>controllers</td><td>{}</td></tr></table>\n",
        escape(&command.join(" ")),
        env!("CARGO_PKG_VERSION"),
        escape(&seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")),
        escape(
            &identities(flown)
                .iter()
                .map(|(c, id)| format!("{c}: {id}"))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    );
    page.push_str("<h2>Metrics</h2>\n<p>On ground truth against the planned route; with several seeds, median [5th, 95th percentile].</p>\n<table><thead><tr><th>metric</th>");
    for n in &names {
        let _ = write!(page, "<th>{}</th>", escape(n));
    }
    page.push_str("</tr></thead><tbody>\n");
    for (label, cells) in &rows {
        let _ = write!(page, "<tr><td>{}</td>", escape(label));
        for c in cells {
            let _ = write!(page, "<td>{}</td>", escape(c));
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</tbody></table>\n<h2>Pictures</h2>\n");
    for p in pictures {
        let svg = std::fs::read_to_string(p).unwrap_or_default();
        let body = svg.find("<svg").and_then(|i| svg.get(i..)).unwrap_or("");
        let _ = writeln!(page, "<figure>{body}</figure>");
    }
    page.push_str("</body></html>\n");
    page
}

/// Writes metrics.csv, metrics.json, plots/ and report.html into `dir`,
/// for the flights of `seeds` made by `command` (the program's arguments).
///
/// # Errors
/// A file that cannot be written, named.
pub fn write(
    dir: &Path,
    (seeds, command): (&[u64], &[String]),
    route: &Route,
    flown: &[Flown],
) -> Result<Report, String> {
    let t0 = Instant::now();
    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    let path = dir.join("metrics.csv");
    std::fs::write(&path, csv(flown)).map_err(|e| io_err(&path, e))?;
    let flights: Vec<serde_json::Value> = flown
        .iter()
        .map(|f| json!({"controller": f.controller, "seed": f.seed, "metrics": f.metrics}))
        .collect();
    let doc = json!({
        "mavsitl_version": env!("CARGO_PKG_VERSION"),
        "command": command,
        "seeds": seeds,
        "flights": flights,
        "summary": summary_json(flown),
    });
    let path = dir.join("metrics.json");
    let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
    std::fs::write(&path, text + "\n").map_err(|e| io_err(&path, e))?;
    let pictures = plots(dir, route, flown)?;
    let path = dir.join("report.html");
    std::fs::write(&path, html(flown, seeds, &pictures)).map_err(|e| io_err(&path, e))?;
    Ok(Report {
        table: table(flown),
        html: path,
        analysis_s: t0.elapsed().as_secs_f64(),
    })
}

/// The route every flight is drawn against: the mission from the first
/// flight's home.
pub fn route_of(mission: &Mission, flown: &[Flown], radius_m: f64) -> Route {
    let home = flown
        .first()
        .and_then(|f| f.track.home)
        .unwrap_or(GeoPoint::from_deg(0.0, 0.0, 0.0));
    Route::new(mission, &LocalFrame::new(home), radius_m)
}

/// Draws the pictures into `dir/plots`.
///
/// # Errors
/// A picture that cannot be drawn or written.
pub fn plots(dir: &Path, route: &Route, flown: &[Flown]) -> Result<Vec<PathBuf>, String> {
    draw_all(&dir.join("plots"), route, flown).map_err(|e| format!("plots: {e}"))
}
