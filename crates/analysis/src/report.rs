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
        // A flag: 1 (yes) or 0 (no).
        ([v], _) if key == "completed" => if *v == 1.0 { "yes" } else { "no" }.into(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MissionMetrics, Track};
    use mavsitl_mavlink::mission::MissionItem;

    /// A flight of `controller` with seed `seed`: cross-track RMS `x` m,
    /// the mission `completed` as given, the rest zero or unmeasured.
    fn flight(controller: &str, seed: u64, x: f64, completed: Option<bool>) -> Flown {
        Flown {
            controller: controller.into(),
            seed,
            track: Track::default(),
            metrics: MissionMetrics {
                completed,
                time_s: 100.0 + x,
                xtrack_rms_m: x,
                ..Default::default()
            },
        }
    }

    /// SimpleFlight over three seeds (1, 2 and 3 m), PX4 once (0.4851 m).
    fn fleet() -> Vec<Flown> {
        vec![
            flight("simpleflight", 1, 3.0, Some(true)),
            flight("px4", 1, 0.4851, None),
            flight("simpleflight", 2, 1.0, Some(false)),
            flight("simpleflight", 3, 2.0, Some(true)),
        ]
    }

    /// The words of the table's row that starts with `label`.
    fn row<'a>(table: &'a str, label: &str) -> Vec<&'a str> {
        let line = table
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no row {label} in\n{table}"));
        line.split_whitespace().collect()
    }

    #[test]
    fn a_cell_is_the_value_or_the_median_and_percentiles() {
        assert_eq!(cell("xtrack_rms", &[0.4851]), "0.485");
        // Median 2, p5 = 1 + 0.05·2·1, p95 = 2 + 0.9.
        assert_eq!(cell("xtrack_rms", &[3.0, 1.0, 2.0]), "2.000 [1.100, 2.900]");
        assert_eq!(cell("xtrack_rms", &[]), "–");
        assert_eq!(cell("completed", &[1.0]), "yes");
        assert_eq!(cell("completed", &[0.0]), "no");
        assert_eq!(cell("completed", &[1.0, 0.0, 1.0]), "100 %");
        assert_eq!(cell("completed", &[1.0, 0.0, 0.0, 0.0]), "0 %");
        assert_eq!(cell("completed", &[1.0, 0.0]), "50 %");
    }

    /// Controllers in order of first appearance, each column its own
    /// flights' values, every line as wide as the others.
    #[test]
    fn the_table_has_a_column_per_controller_in_order() {
        let t = table(&fleet());
        assert_eq!(row(&t, "metric"), ["metric", "simpleflight", "px4"]);
        assert_eq!(
            row(&t, "xtrack_rms [m]"),
            ["xtrack_rms", "[m]", "2.000", "[1.100,", "2.900]", "0.485"]
        );
        assert_eq!(
            row(&t, "time [s]"),
            ["time", "[s]", "102.000", "[101.100,", "102.900]", "100.485"]
        );
        // Two of three SimpleFlight flights completed; PX4's did not say.
        assert_eq!(row(&t, "completed"), ["completed", "100", "%", "no"]);
        assert_eq!(row(&t, "energy [Wh]"), ["energy", "[Wh]", "–", "–"]);
        let widths: Vec<usize> = t.lines().map(|l| l.chars().count()).collect();
        assert!(widths.iter().all(|w| *w == widths[0]), "{t}");
        // The widest label, the widest cell and two spaces between.
        let label = "corner_overshoot_max [m]".len();
        let sf = "102.000 [101.100, 102.900]".len();
        assert_eq!(widths[0], label + 2 + sf + 2 + "100.485".len(), "{t}");
        assert_eq!(t.lines().count(), 1 + fleet()[0].metrics.scalars().len());
        assert_eq!(table(&[]), "metric\n");
    }

    #[test]
    fn the_csv_has_a_row_per_flight_with_units_in_the_header() {
        let text = csv(&fleet());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5);
        let header: Vec<&str> = lines[0].split(',').collect();
        assert_eq!(
            &header[..6],
            [
                "controller",
                "seed",
                "completed",
                "time [s]",
                "path [m]",
                "xtrack_rms [m]"
            ]
        );
        let px4: Vec<&str> = lines[2].split(',').collect();
        assert_eq!(px4.len(), header.len());
        assert_eq!(&px4[..6], ["px4", "1", "", "100.4851", "0", "0.4851"]);
        let sf: Vec<&str> = lines[3].split(',').collect();
        assert_eq!(&sf[..6], ["simpleflight", "2", "0", "101", "0", "1"]);
        let energy = header
            .iter()
            .position(|h| *h == "energy [Wh]")
            .expect("energy");
        assert_eq!(sf[energy], "");
        assert_eq!(csv(&[]), "controller,seed\n");
    }

    #[test]
    fn the_json_summary_gives_median_percentiles_and_count() {
        let s = summary_json(&fleet());
        let x = &s["simpleflight"]["xtrack_rms"];
        assert_eq!(x["unit"], "m");
        assert_eq!(x["median"], 2.0);
        assert!((x["p5"].as_f64().expect("p5") - 1.1).abs() < 1e-12, "{x}");
        assert!((x["p95"].as_f64().expect("p95") - 2.9).abs() < 1e-12, "{x}");
        assert_eq!(x["n"], 3);
        assert_eq!(s["px4"]["xtrack_rms"]["n"], 1);
        assert_eq!(s["px4"]["xtrack_rms"]["median"], 0.4851);
        // Nothing measured, nothing written.
        assert!(s["px4"].get("energy").is_none() && s["px4"].get("completed").is_none());
        assert_eq!(s["simpleflight"]["completed"]["median"], 1.0);
        let keys: Vec<&String> = s.as_object().expect("map").keys().collect();
        assert_eq!(keys.len(), 2);
    }

    #[test]
    fn each_controller_is_named_by_what_its_flight_reported() {
        let mut f = fleet();
        f[1].track.events = vec![
            (0.5, "armed".into(), String::new()),
            (1.0, "autopilot_version".into(), "PX4 v1.15.4".into()),
        ];
        f.push(flight("ardupilot", 1, 1.0, None));
        let ids = identities(&f);
        assert_eq!(ids.len(), 3);
        assert_eq!(
            ids[0],
            (
                "simpleflight".into(),
                format!("SimpleFlight, mavsitl {}", env!("CARGO_PKG_VERSION"))
            )
        );
        assert_eq!(ids[1], ("px4".into(), "PX4 v1.15.4".into()));
        assert_eq!(
            ids[2],
            ("ardupilot".into(), "did not identify itself".into())
        );
    }

    #[test]
    fn html_escapes_text_and_inlines_the_pictures() {
        assert_eq!(escape(r#"a<b & "c">"#), "a&lt;b &amp; &quot;c&quot;&gt;");
        let dir = std::env::temp_dir().join(format!("mavsitl-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let svg = dir.join("p.svg");
        std::fs::write(&svg, "<?xml version=\"1.0\"?>\n<svg id=\"p\"></svg>\n").expect("svg");
        let mut f = fleet();
        f[1].controller = "px4<v1>".into();
        let page = html(&f, &[1, 2, 3], std::slice::from_ref(&svg));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(
            page.contains("<th>simpleflight</th><th>px4&lt;v1&gt;</th>"),
            "{page}"
        );
        assert!(
            page.contains(
                "<tr><td>xtrack_rms [m]</td><td>2.000 [1.100, 2.900]</td><td>0.485</td></tr>"
            ),
            "{page}"
        );
        assert!(page.contains("<td>seeds</td><td>1, 2, 3</td>"), "{page}");
        assert!(
            page.contains("<figure><svg id=\"p\"></svg>\n</figure>"),
            "{page}"
        );
        assert!(!page.contains("<?xml"));
        assert!(
            page.contains("px4&lt;v1&gt;: did not identify itself"),
            "{page}"
        );
        assert!(page.ends_with("</body></html>\n"));
    }

    /// The files written, the table returned, and the route drawn from the
    /// first flight's home.
    #[test]
    fn write_puts_the_table_files_and_pictures_in_the_folder() {
        let home = GeoPoint::from_deg(47.3977, 8.5456, 488.0);
        let frame = LocalFrame::new(home);
        let wp = frame.to_geodetic(&nalgebra::Vector3::new(100.0, 0.0, -10.0));
        let mission = Mission {
            items: vec![MissionItem::waypoint(wp.lat_deg(), wp.lon_deg(), 10.0)],
            ..Default::default()
        };
        let mut f = fleet();
        f[0].track.home = Some(home);
        let route = route_of(&mission, &f, 2.0);
        assert_eq!(route.points.len(), 2);
        assert!(
            (route.length_m() - 100.0).abs() < 0.01,
            "{}",
            route.length_m()
        );
        // With no home recorded, the route is measured from 0° N 0° E.
        let elsewhere = route_of(&mission, &fleet(), 2.0);
        assert!(elsewhere.length_m() > 1e6, "{}", elsewhere.length_m());

        let dir = std::env::temp_dir().join(format!("mavsitl-write-{}", std::process::id()));
        let command = ["mavsitl".to_string(), "compare".to_string()];
        let report = write(&dir, (&[1, 2, 3], &command), &route, &f).expect("written");
        let csv_text = std::fs::read_to_string(dir.join("metrics.csv")).expect("csv");
        let json_text = std::fs::read_to_string(dir.join("metrics.json")).expect("json");
        let page = std::fs::read_to_string(&report.html).expect("html");
        let plots = std::fs::read_dir(dir.join("plots")).map(Iterator::count);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(report.table, table(&f));
        assert_eq!(report.html, dir.join("report.html"));
        assert!(report.analysis_s > 0.0, "the analysis is timed");
        assert_eq!(csv_text, csv(&f));
        let doc: serde_json::Value = serde_json::from_str(&json_text).expect("json");
        assert_eq!(doc["command"], json!(["mavsitl", "compare"]));
        assert_eq!(doc["seeds"], json!([1, 2, 3]));
        assert_eq!(doc["flights"].as_array().map(Vec::len), Some(4));
        assert_eq!(doc["summary"], summary_json(&f));
        assert!(page.contains("<figure><svg"), "no picture inlined");
        assert!(plots.expect("plots") > 0);

        // A folder that cannot be made is named in the error.
        let file = std::env::temp_dir().join(format!("mavsitl-write-file-{}", std::process::id()));
        std::fs::write(&file, "").expect("file");
        let below = file.join("report");
        let e = write(&below, (&[1], &command), &route, &f).err();
        let _ = std::fs::remove_file(&file);
        let e = e.expect("a folder under a file");
        assert!(e.starts_with(&format!("{}: ", below.display())), "{e}");
    }
}
