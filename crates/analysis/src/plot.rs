//! Pictures of flights, as SVG and PNG, drawn with `plotters`: the ground
//! track over the planned route, cross-track error along the route, speed and
//! altitude against time, per-leg bars, and box plots over seeds.
//!
//! Text is set in DejaVu Sans, embedded, so a picture looks the same on any
//! machine.

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::metrics::{distribution, moving, MissionMetrics};
use super::route::Route;
use super::track::Track;

/// One flight to draw.
#[derive(Debug, Clone)]
pub struct Flown {
    /// The controller's label (its colour and legend entry).
    pub controller: String,
    /// The seed flown.
    pub seed: u64,
    /// What was recorded.
    pub track: Track,
    /// What was measured.
    pub metrics: MissionMetrics,
}

/// Series colours, one per controller (colour-blind safe).
const COLORS: [RGBColor; 6] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
];

const FONT: &str = "sans-serif";

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Only fails on bytes that are not a font.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
    });
}

/// The controllers in order of first appearance.
fn controllers(flights: &[Flown]) -> Vec<&str> {
    let mut v: Vec<&str> = Vec::new();
    for f in flights {
        if !v.contains(&f.controller.as_str()) {
            v.push(&f.controller);
        }
    }
    v
}

fn color_of(flights: &[Flown], controller: &str) -> RGBColor {
    let i = controllers(flights)
        .iter()
        .position(|c| *c == controller)
        .unwrap_or(0);
    COLORS.get(i % COLORS.len()).copied().unwrap_or(BLACK)
}

/// A picture that can be drawn on any backend.
trait Picture {
    fn size(&self) -> (u32, u32);
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String>;
}

fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// Draws `p` to `dir/name.svg` and `dir/name.png`; returns both paths.
fn render(p: &impl Picture, dir: &Path, name: &str) -> Result<[PathBuf; 2], String> {
    register_font();
    let svg = dir.join(format!("{name}.svg"));
    let png = dir.join(format!("{name}.png"));
    {
        let area = SVGBackend::new(&svg, p.size()).into_drawing_area();
        area.fill(&WHITE).map_err(err)?;
        p.draw(&area)?;
        area.present().map_err(err)?;
    }
    let (w, h) = p.size();
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let area = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        area.fill(&WHITE).map_err(err)?;
        p.draw(&area)?;
        area.present().map_err(err)?;
    }
    write_png(&png, &rgb, (w, h)).map_err(|e| format!("{}: {e}", png.display()))?;
    Ok([svg, png])
}

/// Writes 8-bit RGB pixels, row by row from the top, as a PNG (deflate at
/// its default level, each row's filter chosen adaptively).
fn write_png(path: &Path, rgb: &[u8], (w, h): (u32, u32)) -> Result<(), String> {
    let file = std::fs::File::create(path).map_err(err)?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Default);
    encoder.set_filter(png::FilterType::Sub);
    encoder.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
    let mut writer = encoder.write_header().map_err(err)?;
    writer.write_image_data(rgb).map_err(err)?;
    writer.finish().map_err(err)
}

/// (min, max) of `v`, widened by `pad` of the span (and to at least `min_span`).
fn range(v: impl Iterator<Item = f64>, pad: f64, min_span: f64) -> (f64, f64) {
    let (lo, hi) = v
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
    if lo > hi {
        return (0.0, min_span);
    }
    let span = (hi - lo).max(min_span);
    let mid = 0.5 * (lo + hi);
    (mid - span * (0.5 + pad), mid + span * (0.5 + pad))
}

/// Axes over at least `(x0, x1)` and `(y0, y1)` (m), about their middles,
/// with one scale (m per pixel) on a plotting area of `(w, h)` pixels.
fn map_axes(
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
    (w, h): (f64, f64),
) -> (std::ops::Range<f64>, std::ops::Range<f64>) {
    let per_px = ((x1 - x0) / w).max((y1 - y0) / h);
    let (xm, ym) = (0.5 * (x0 + x1), 0.5 * (y0 + y1));
    let (hx, hy) = (0.5 * per_px * w, 0.5 * per_px * h);
    (xm - hx..xm + hx, ym - hy..ym + hy)
}

struct GroundTrack<'a> {
    route: &'a Route,
    flights: &'a [Flown],
}

impl Picture for GroundTrack<'_> {
    fn size(&self) -> (u32, u32) {
        (900, 900)
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let pts = self
            .route
            .points
            .iter()
            .map(|p| (p.ned_m.y, p.ned_m.x))
            .chain(self.flights.iter().flat_map(|f| {
                f.track
                    .samples
                    .iter()
                    .map(|s| (s.pos_ned_m.y, s.pos_ned_m.x))
            }));
        let (xs, ys): (Vec<f64>, Vec<f64>) = pts.unzip();
        let area = area
            .titled("Ground track over the planned route", (FONT, 24))
            .map_err(err)?;
        // A map: one scale on both axes, the plotting area's (what the
        // margins and label areas below leave) filled along the tighter one.
        let (w, h) = area.dim_in_pixel();
        let plot_px = (
            f64::from(w.saturating_sub(2 * 15 + 60).max(1)),
            f64::from(h.saturating_sub(2 * 15 + 45).max(1)),
        );
        let (x, y) = map_axes(
            range(xs.into_iter(), 0.05, 10.0),
            range(ys.into_iter(), 0.05, 10.0),
            plot_px,
        );
        let mut chart = ChartBuilder::on(&area)
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d(x, y)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("east of home [m]")
            .y_desc("north of home [m]")
            .label_style((FONT, 15))
            .draw()
            .map_err(err)?;
        let grey = RGBColor(150, 150, 150);
        for leg in &self.route.legs {
            chart
                .draw_series(LineSeries::new(
                    [(leg.from.y, leg.from.x), (leg.to.y, leg.to.x)],
                    grey.stroke_width(3),
                ))
                .map_err(err)?;
        }
        for p in self.route.points.iter().skip(1) {
            let ring = (0..=48).map(|k| {
                let a = k as f64 / 48.0 * std::f64::consts::TAU;
                (
                    p.ned_m.y + p.radius_m * a.sin(),
                    p.ned_m.x + p.radius_m * a.cos(),
                )
            });
            chart
                .draw_series(LineSeries::new(ring, grey.stroke_width(1)))
                .map_err(err)?;
        }
        chart
            .draw_series(
                self.route
                    .points
                    .iter()
                    .map(|p| Circle::new((p.ned_m.y, p.ned_m.x), 4, BLACK.filled())),
            )
            .map_err(err)?
            .label("planned route, acceptance radii")
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], grey.stroke_width(3))
            });
        draw_per_controller(&mut chart, self.flights, |f| {
            vec![f
                .track
                .samples
                .iter()
                .map(|s| (s.pos_ned_m.y, s.pos_ned_m.x))
                .collect()]
        })?;
        legend(&mut chart, 15)
    }
}

/// A chart with f64 axes.
type Chart<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// The legend box of `chart`, its labels `font_px` high.
fn legend<'a, DB: DrawingBackend + 'a>(
    chart: &mut Chart<'a, DB>,
    font_px: u32,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .label_font((FONT, font_px))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)
}

/// Draws one line per flight, coloured by controller, one legend entry each.
fn draw_per_controller<DB: DrawingBackend>(
    chart: &mut ChartContext<
        '_,
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    flights: &[Flown],
    mut segments: impl FnMut(&Flown) -> Vec<Vec<(f64, f64)>>,
) -> Result<(), String> {
    let mut labelled: Vec<&str> = Vec::new();
    for f in flights {
        let c = color_of(flights, &f.controller);
        let lines = segments(f)
            .into_iter()
            .map(|p| PathElement::new(p, c.stroke_width(2)));
        let s = chart.draw_series(lines).map_err(err)?;
        if !labelled.contains(&f.controller.as_str()) {
            labelled.push(&f.controller);
            s.label(f.controller.clone()).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
            });
        }
    }
    Ok(())
}

struct CrossTrack<'a> {
    route: &'a Route,
    flights: &'a [Flown],
}

/// (distance along the route, cross-track error) of each moving sample, cut
/// into runs where the nearest point of the route jumps (a vehicle back over
/// the start of a closed route).
fn along_route(route: &Route, track: &Track) -> Vec<Vec<(f64, f64)>> {
    let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
    for s in moving(&track.samples) {
        let Some((i, t, d)) = route.nearest_leg(&s.pos_ned_m.xy()) else {
            continue;
        };
        let Some(leg) = route.legs.get(i) else {
            continue;
        };
        let p = (leg.start_along_m + t * leg.length_m(), d);
        match runs.last_mut() {
            Some(run) if run.last().is_some_and(|q| (q.0 - p.0).abs() < 5.0) => run.push(p),
            _ => runs.push(vec![p]),
        }
    }
    runs
}

impl Picture for CrossTrack<'_> {
    fn size(&self) -> (u32, u32) {
        (1000, 450)
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let series: Vec<Vec<Vec<(f64, f64)>>> = self
            .flights
            .iter()
            .map(|f| along_route(self.route, &f.track))
            .collect();
        let y1 = series
            .iter()
            .flatten()
            .flatten()
            .map(|p| p.1)
            .fold(0.5f64, f64::max)
            * 1.1;
        let x1 = self.route.length_m().max(1.0);
        let mut chart = ChartBuilder::on(area)
            .caption("Cross-track error along the route", (FONT, 24))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..x1, 0.0..y1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("distance along the planned route [m]")
            .y_desc("cross-track [m]")
            .label_style((FONT, 15))
            .draw()
            .map_err(err)?;
        let grey = RGBColor(170, 170, 170);
        for leg in self.route.legs.iter().skip(1) {
            chart
                .draw_series(LineSeries::new(
                    [(leg.start_along_m, 0.0), (leg.start_along_m, y1)],
                    grey.stroke_width(1),
                ))
                .map_err(err)?;
        }
        let mut i = 0;
        draw_per_controller(&mut chart, self.flights, |_| {
            let s = series.get(i).cloned().unwrap_or_default();
            i += 1;
            s
        })
        .and_then(|_| legend(&mut chart, 15))
    }
}

struct SpeedAltitude<'a> {
    flights: &'a [Flown],
}

impl Picture for SpeedAltitude<'_> {
    fn size(&self) -> (u32, u32) {
        (1000, 700)
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let panes = area.split_evenly((2, 1));
        let t1 = self
            .flights
            .iter()
            .filter_map(|f| f.track.samples.last().map(|s| s.t_s))
            .fold(1.0f64, f64::max);
        type Value = fn(&super::track::Sample) -> f64;
        let quantities: [(&str, &str, Value); 2] = [
            ("Speed", "speed [m/s]", |s| s.vel_ned_m_s.norm()),
            ("Altitude above home", "altitude [m]", |s| -s.pos_ned_m.z),
        ];
        for (pane, (title, unit, value)) in panes.iter().zip(quantities) {
            let (y0, y1) = range(
                self.flights
                    .iter()
                    .flat_map(|f| f.track.samples.iter().map(value)),
                0.05,
                1.0,
            );
            let mut chart = ChartBuilder::on(pane)
                .caption(title, (FONT, 22))
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(60)
                .build_cartesian_2d(0.0..t1, y0.min(0.0)..y1)
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc("sim time [s]")
                .y_desc(unit)
                .label_style((FONT, 14))
                .draw()
                .map_err(err)?;
            draw_per_controller(&mut chart, self.flights, |f| {
                vec![f.track.samples.iter().map(|s| (s.t_s, value(s))).collect()]
            })?;
            legend(&mut chart, 14)?;
        }
        Ok(())
    }
}

/// Grouped bars: per leg, one bar per controller (the median over seeds).
struct LegBars<'a> {
    flights: &'a [Flown],
}

impl Picture for LegBars<'_> {
    fn size(&self) -> (u32, u32) {
        (1000, 450)
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let names = controllers(self.flights);
        let legs = self
            .flights
            .iter()
            .map(|f| f.metrics.legs.len())
            .max()
            .unwrap_or(0);
        let value = |c: &str, leg: usize| {
            let v: Vec<f64> = self
                .flights
                .iter()
                .filter(|f| f.controller == c)
                .filter_map(|f| f.metrics.legs.get(leg).map(|l| l.xtrack_rms_m))
                .collect();
            distribution(&v).map_or(0.0, |d| d.0)
        };
        let y1 = (0..legs)
            .flat_map(|l| names.iter().map(move |c| (l, *c)))
            .map(|(l, c)| value(c, l))
            .fold(0.1f64, f64::max)
            * 1.15;
        let mut chart = ChartBuilder::on(area)
            .caption("Cross-track RMS per leg", (FONT, 24))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d(0.5..legs as f64 + 0.5, 0.0..y1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(legs.max(1))
            .x_label_formatter(&|x| format!("leg {}", x.round()))
            .y_desc("cross-track RMS [m]")
            .label_style((FONT, 15))
            .draw()
            .map_err(err)?;
        let width = 0.8 / names.len().max(1) as f64;
        for (k, c) in names.iter().enumerate() {
            let color = color_of(self.flights, c);
            let bars = (0..legs).map(|l| {
                let x = l as f64 + 1.0 - 0.4 + k as f64 * width;
                Rectangle::new([(x, 0.0), (x + width * 0.9, value(c, l))], color.filled())
            });
            chart
                .draw_series(bars)
                .map_err(err)?
                .label(c.to_string())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled())
                });
        }
        legend(&mut chart, 15)
    }
}

/// Box plots over seeds of the headline metrics, one box per controller:
/// the box from the 25th to the 75th percentile, the median across it,
/// whiskers from the 5th to the 95th.
struct Boxes<'a> {
    flights: &'a [Flown],
}

/// The metrics boxed: (title, unit, value).
type Boxed = (
    &'static str,
    &'static str,
    fn(&MissionMetrics) -> Option<f64>,
);

const BOXED: [Boxed; 4] = [
    ("cross-track RMS", "m", |m| Some(m.xtrack_rms_m)),
    ("time", "s", |m| Some(m.time_s)),
    ("largest corner overshoot", "m", |m| {
        m.corners.iter().map(|c| c.overshoot_m).reduce(f64::max)
    }),
    ("energy", "Wh", |m| m.energy_wh),
];

fn percentile(v: &[f64], p: f64) -> f64 {
    let x = p * (v.len().saturating_sub(1)) as f64;
    let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
    match (v.get(lo), v.get(hi)) {
        (Some(a), Some(b)) => a + (b - a) * (x - lo as f64),
        _ => 0.0,
    }
}

impl Picture for Boxes<'_> {
    fn size(&self) -> (u32, u32) {
        (1000, 800)
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let names = controllers(self.flights);
        for (pane, (title, unit, value)) in area.split_evenly((2, 2)).iter().zip(BOXED) {
            let per: Vec<Vec<f64>> = names
                .iter()
                .map(|c| {
                    let mut v: Vec<f64> = self
                        .flights
                        .iter()
                        .filter(|f| f.controller == *c)
                        .filter_map(|f| value(&f.metrics))
                        .filter(|x| x.is_finite())
                        .collect();
                    v.sort_by(f64::total_cmp);
                    v
                })
                .collect();
            let (y0, y1) = range(per.iter().flatten().copied(), 0.1, 0.01);
            let mut chart = ChartBuilder::on(pane)
                .caption(format!("{title} over seeds"), (FONT, 20))
                .margin(12)
                .x_label_area_size(35)
                .y_label_area_size(60)
                .build_cartesian_2d(-0.5..names.len() as f64 - 0.5, y0..y1)
                .map_err(err)?;
            chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(names.len().max(1))
                .x_label_formatter(&|x| {
                    names
                        .get(x.round().max(0.0) as usize)
                        .map_or(String::new(), |s| s.to_string())
                })
                .y_desc(format!("{title} [{unit}]"))
                .label_style((FONT, 13))
                .draw()
                .map_err(err)?;
            for (k, v) in per.iter().enumerate() {
                if v.is_empty() {
                    continue;
                }
                let c = color_of(self.flights, names.get(k).copied().unwrap_or(""));
                let x = k as f64;
                let q = |p| percentile(v, p);
                let parts = [
                    PathElement::new(vec![(x, q(0.05)), (x, q(0.95))], c.stroke_width(2)),
                    PathElement::new(
                        vec![(x - 0.1, q(0.05)), (x + 0.1, q(0.05))],
                        c.stroke_width(2),
                    ),
                    PathElement::new(
                        vec![(x - 0.1, q(0.95)), (x + 0.1, q(0.95))],
                        c.stroke_width(2),
                    ),
                ];
                chart.draw_series(parts).map_err(err)?;
                chart
                    .draw_series([
                        Rectangle::new(
                            [(x - 0.25, q(0.25)), (x + 0.25, q(0.75))],
                            c.mix(0.35).filled(),
                        ),
                        Rectangle::new(
                            [(x - 0.25, q(0.25)), (x + 0.25, q(0.75))],
                            c.stroke_width(2),
                        ),
                    ])
                    .map_err(err)?;
                chart
                    .draw_series([PathElement::new(
                        vec![(x - 0.25, q(0.5)), (x + 0.25, q(0.5))],
                        BLACK.stroke_width(3),
                    )])
                    .map_err(err)?;
            }
        }
        Ok(())
    }
}

/// Draws every picture for `flights` over `route` into `dir`: `track`,
/// `cross_track`, `speed_altitude`, `legs` and, with more than one seed of a
/// controller, `seeds`. Returns the SVG paths in that order.
///
/// # Errors
/// A file that cannot be written, or a drawing error, as text.
pub fn draw_all(dir: &Path, route: &Route, flights: &[Flown]) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut out = Vec::new();
    let [svg, _] = render(&GroundTrack { route, flights }, dir, "track")?;
    out.push(svg);
    let [svg, _] = render(&CrossTrack { route, flights }, dir, "cross_track")?;
    out.push(svg);
    let [svg, _] = render(&SpeedAltitude { flights }, dir, "speed_altitude")?;
    out.push(svg);
    if !route.legs.is_empty() {
        let [svg, _] = render(&LegBars { flights }, dir, "legs")?;
        out.push(svg);
    }
    let seeds = controllers(flights)
        .iter()
        .map(|c| flights.iter().filter(|f| f.controller == *c).count())
        .max()
        .unwrap_or(0);
    if seeds > 1 {
        let [svg, _] = render(&Boxes { flights }, dir, "seeds")?;
        out.push(svg);
    }
    Ok(out)
}

/// The manoeuvring tests of several boat airframes on one page.
struct ManoeuvringPage<'a>(&'a [super::manoeuvre::Manoeuvres]);

/// One panel: `series(m)` gives each airframe's (x, y) points.
fn manoeuvre_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    ms: &[super::manoeuvre::Manoeuvres],
    (title, x_desc, y_desc): (&str, &str, &str),
    equal_axes: bool,
    series: impl Fn(&super::manoeuvre::Manoeuvres) -> Vec<(f64, f64)>,
) -> Result<(), String> {
    let all: Vec<Vec<(f64, f64)>> = ms.iter().map(&series).collect();
    let (mut x0, mut x1) = range(all.iter().flatten().map(|p| p.0), 0.03, 1.0);
    let (mut y0, mut y1) = range(all.iter().flatten().map(|p| p.1), 0.05, 0.1);
    if equal_axes {
        let span = (x1 - x0).max(y1 - y0);
        let (xm, ym) = (0.5 * (x0 + x1), 0.5 * (y0 + y1));
        (x0, x1, y0, y1) = (
            xm - span / 2.0,
            xm + span / 2.0,
            ym - span / 2.0,
            ym + span / 2.0,
        );
    }
    let mut chart = ChartBuilder::on(area)
        .caption(title, (FONT, 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style((FONT, 14))
        .draw()
        .map_err(err)?;
    for (k, (m, pts)) in ms.iter().zip(all).enumerate() {
        let c = COLORS.get(k % COLORS.len()).copied().unwrap_or(BLACK);
        chart
            .draw_series(LineSeries::new(pts, c.stroke_width(2)))
            .map_err(err)?
            .label(m.airframe.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
    }
    legend(&mut chart, 14)
}

/// One panel of the manoeuvring page: titles, equal axes, and each
/// airframe's points.
type Panel = (
    [&'static str; 3],
    bool,
    fn(&super::manoeuvre::Manoeuvres) -> Vec<(f64, f64)>,
);

/// The four panels: turning circle, zig-zag, speed step, yaw-rate step.
const MANOEUVRING_PANELS: [Panel; 4] = [
    (
        [
            "Turning circle (starboard)",
            "across the approach [m]",
            "along the approach [m]",
        ],
        true,
        |m| {
            m.traces
                .turning_circle
                .iter()
                .map(|s| (s.across_m, s.along_m))
                .collect()
        },
    ),
    (
        ["10°/10° zig-zag", "time [s]", "heading change [deg]"],
        false,
        |m| {
            m.traces
                .zigzag
                .iter()
                .map(|s| (s.t_s, s.heading_rad.to_degrees()))
                .collect()
        },
    ),
    (
        ["Speed step from rest", "time [s]", "speed / steady speed"],
        false,
        |m| {
            m.traces
                .speed_step
                .iter()
                .map(|s| (s.t_s, s.surge_m_s / m.speed_m_s))
                .collect()
        },
    ),
    (
        [
            "Yaw-rate step at cruise (steering 0.1)",
            "time [s]",
            "yaw rate / steady rate",
        ],
        false,
        |m| {
            m.traces
                .yaw_rate_step
                .iter()
                .map(|s| (s.t_s, s.yaw_rate_rad_s / m.yaw_rate_rad_s))
                .collect()
        },
    ),
];

impl Picture for ManoeuvringPage<'_> {
    fn size(&self) -> (u32, u32) {
        (1400, 1100)
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        for (panel, ([title, x, y], equal, series)) in
            area.split_evenly((2, 2)).iter().zip(MANOEUVRING_PANELS)
        {
            manoeuvre_panel(panel, self.0, (title, x, y), equal, series)?;
        }
        Ok(())
    }
}

/// Draws the manoeuvring tests of `ms` to `dir/name.svg` and `.png`.
///
/// # Errors
/// A drawing or file error, as text.
pub fn manoeuvring(
    dir: &Path,
    name: &str,
    ms: &[super::manoeuvre::Manoeuvres],
) -> Result<[PathBuf; 2], String> {
    render(&ManoeuvringPage(ms), dir, name)
}

#[cfg(test)]
mod tests {
    use super::{
        color_of, controllers, err, map_axes, percentile, range, register_font, write_png, Flown,
        GroundTrack, Picture, COLORS,
    };
    use crate::route::{Leg, Route, RoutePoint};
    use crate::track::{Sample, Track};
    use nalgebra::Vector3;
    use plotters::prelude::*;

    /// `p` drawn as SVG text.
    fn svg(p: &impl Picture) -> String {
        register_font();
        let mut text = String::new();
        {
            let area = SVGBackend::with_string(&mut text, p.size()).into_drawing_area();
            area.fill(&WHITE).unwrap();
            p.draw(&area).unwrap();
            area.present().unwrap();
        }
        text
    }

    /// The value of attribute `name` in an SVG element's text.
    fn attr(element: &str, name: &str) -> Option<f64> {
        let at = element.find(&format!(" {name}=\""))? + name.len() + 3;
        element[at..].split('"').next()?.parse().ok()
    }

    /// The points of every polyline stroked in `color`.
    fn polylines(svg: &str, color: RGBColor) -> Vec<Vec<(f64, f64)>> {
        let stroke = format!("stroke=\"#{:02X}{:02X}{:02X}\"", color.0, color.1, color.2);
        svg.split('<')
            .filter(|e| e.starts_with("polyline") && e.contains(&stroke))
            .map(|e| {
                let pts = e
                    .split("points=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap();
                pts.split_whitespace()
                    .map(|xy| {
                        let (x, y) = xy.split_once(',').unwrap();
                        (x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect()
            })
            .collect()
    }

    /// A 100 m square north then east of home, and two flights of it: one
    /// on it, one 10 m further east all along.
    fn square() -> (Route, Vec<Flown>) {
        let corners = [(0.0, 0.0), (100.0, 0.0), (100.0, 100.0), (0.0, 100.0)];
        let points: Vec<RoutePoint> = corners
            .iter()
            .enumerate()
            .map(|(i, (n, e))| RoutePoint {
                ned_m: Vector3::new(*n, *e, -10.0),
                item: (i > 0).then_some(i),
                radius_m: 5.0,
            })
            .collect();
        let legs = points
            .windows(2)
            .enumerate()
            .map(|(i, w)| Leg {
                from: w[0].ned_m,
                to: w[1].ned_m,
                start_along_m: 100.0 * i as f64,
                end_radius_m: 5.0,
            })
            .collect();
        let flight = |controller: &str, east: f64| {
            let samples = (0..=300)
                .map(|k| {
                    let d = k as f64;
                    let (n, e) = match k {
                        0..=100 => (d, 0.0),
                        101..=200 => (100.0, d - 100.0),
                        _ => (300.0 - d, 100.0),
                    };
                    Sample {
                        t_s: d,
                        pos_ned_m: Vector3::new(n, e + east, -10.0),
                        vel_ned_m_s: Vector3::new(0.0, 1.0, 0.0),
                        tilt_rad: 0.0,
                    }
                })
                .collect();
            let mut f = flown(controller);
            f.track = Track {
                samples,
                ..Track::default()
            };
            f
        };
        (
            Route { points, legs },
            vec![flight("a", 0.0), flight("b", 10.0)],
        )
    }

    /// One scale on both axes, set by whichever extent is tighter for the
    /// area's shape, the other axis widened about its middle.
    #[test]
    fn map_axes_share_the_scale_the_tighter_extent_needs() {
        // 100 m tall on 400 px: 0.25 m/px; 800 px wide then spans 200 m.
        assert_eq!(
            map_axes((0.0, 10.0), (-40.0, 60.0), (800.0, 400.0)),
            (-95.0..105.0, -40.0..60.0)
        );
        // 100 m wide on 400 px, 800 px tall.
        assert_eq!(
            map_axes((0.0, 100.0), (20.0, 30.0), (400.0, 800.0)),
            (0.0..100.0, -75.0..125.0)
        );
    }

    /// North up, east right, one scale on both axes, the data centred on
    /// the plotting area and filling it but for 5 % each side; each flight
    /// in its controller's colour, the route's legs in grey, its points
    /// with their acceptance rings.
    #[test]
    fn the_ground_track_is_a_map_at_one_scale() {
        let (route, flights) = square();
        let p = GroundTrack {
            route: &route,
            flights: &flights,
        };
        assert_eq!(p.size(), (900, 900));
        let text = svg(&p);
        // Each flight's line and its legend key (two points).
        let a = polylines(&text, COLORS[0]);
        let b = polylines(&text, COLORS[1]);
        let lens = |l: &[Vec<(f64, f64)>]| l.iter().map(Vec::len).collect::<Vec<_>>();
        assert_eq!((lens(&a), lens(&b)), (vec![301, 2], vec![301, 2]));
        let (a, b) = (&a[0], &b[0]);
        // Flight a: (0, 0) → 100 m north → 100 m east → back south.
        let (x0, y0) = a[0];
        let (_, y1) = a[100];
        let (x2, _) = a[200];
        assert!(y1 < y0, "north is up");
        assert!(x2 > x0, "east is right");
        let scale = (y0 - y1) / 100.0;
        assert!(((x2 - x0) / 100.0 - scale).abs() < 0.02, "one scale");
        // b is 10 m east of a everywhere.
        assert!((b[0].0 - x0 - 10.0 * scale).abs() <= 1.0, "whole pixels");
        // E spans −0..110 m: 110 m is the wider side, 1/1.1 of the axis.
        // The plotting area: 15 px margins, 60 px for the north labels.
        let width = 900.0 - 2.0 * 15.0 - 60.0;
        assert!((scale * 110.0 * 1.1 - width).abs() < 2.0, "{scale} px/m");
        let mid = 0.5 * (x0 + b[200].0);
        assert!(
            (mid - (15.0 + 60.0 + width / 2.0)).abs() < 2.0,
            "centred at {mid}"
        );
        // The route: three grey legs, four waypoints, three rings.
        let grey = polylines(&text, RGBColor(150, 150, 150));
        let mut counts = lens(&grey);
        counts.sort_unstable();
        assert_eq!(counts, [2, 2, 2, 2, 49, 49, 49], "legs, the key, rings");
        let ring = grey.iter().find(|l| l.len() == 49).expect("a ring");
        let across = ring.iter().map(|p| p.0).fold(f64::MIN, f64::max)
            - ring.iter().map(|p| p.0).fold(f64::MAX, f64::min);
        assert!(
            (across - 10.0 * scale).abs() <= 1.0,
            "a 5 m radius: {across} px"
        );
        let dots = text
            .split('<')
            .filter(|e| e.starts_with("circle") && e.contains("fill=\"#000000\""))
            .count();
        assert_eq!(dots, 4);
        assert!(
            text.contains(">\na\n</text>") && text.contains(">\nb\n</text>"),
            "the legend"
        );
        assert!(attr(text.split('<').nth(1).unwrap(), "width") == Some(900.0));
    }

    fn flown(controller: &str) -> Flown {
        Flown {
            controller: controller.into(),
            seed: 1,
            track: Default::default(),
            metrics: Default::default(),
        }
    }

    /// Each controller once, in the order it first flies, each with its own
    /// colour; the seventh takes the first colour again.
    #[test]
    fn controllers_keep_their_order_and_colour() {
        let f: Vec<Flown> = ["b", "a", "b", "c", "d", "e", "f", "g"]
            .iter()
            .map(|c| flown(c))
            .collect();
        assert_eq!(controllers(&f), ["b", "a", "c", "d", "e", "f", "g"]);
        assert_eq!(color_of(&f, "b"), COLORS[0]);
        assert_eq!(color_of(&f, "a"), COLORS[1]);
        assert_eq!(color_of(&f, "f"), COLORS[5]);
        assert_eq!(color_of(&f, "g"), COLORS[0]);
        assert_eq!(color_of(&f, "nobody"), COLORS[0]);
        assert_eq!(err(std::fmt::Error), std::fmt::Error.to_string());
        assert!(!err(std::fmt::Error).is_empty());
    }

    /// An axis spans the data widened by `pad` of its span each side, at
    /// least `min_span` wide, around the data's middle; no data, 0..min_span.
    #[test]
    fn an_axis_range_pads_the_data_around_its_middle() {
        assert_eq!(range([2.0, 6.0, 4.0].into_iter(), 0.25, 1.0), (1.0, 7.0));
        // Too narrow: widened to min_span about the middle, then padded.
        assert_eq!(range([3.0, 3.5].into_iter(), 0.0, 2.0), (2.25, 4.25));
        // Non-finite values are left out.
        assert_eq!(
            range([f64::NAN, -1.0, f64::INFINITY, 1.0].into_iter(), 0.5, 0.1),
            (-2.0, 2.0)
        );
        assert_eq!(range(std::iter::empty(), 0.5, 3.0), (0.0, 3.0));
        // One value: min_span about it.
        assert_eq!(range([5.0, 5.0].into_iter(), 0.1, 2.0), (3.8, 6.2));
    }

    /// Percentiles interpolate linearly between the sorted samples.
    #[test]
    fn percentiles_interpolate_between_ranks() {
        let v = [1.0, 2.0, 4.0, 8.0, 16.0];
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&v, 1.0), 16.0);
        assert_eq!(percentile(&v, 0.5), 4.0);
        // Rank 0.25·4 = 1: the second; 0.6·4 = 2.4: 4 + 0.4·(8 − 4).
        assert_eq!(percentile(&v, 0.25), 2.0);
        assert!((percentile(&v, 0.6) - 5.6).abs() < 1e-12);
        assert_eq!(percentile(&[7.0], 0.9), 7.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }

    /// Pixels of known, all different values written as a PNG read back
    /// the same, with the size and colour type given.
    #[test]
    fn a_png_reads_back_the_pixels_written() {
        let dir = std::env::temp_dir().join(format!("mavsitl-png-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("p.png");
        let rgb: Vec<u8> = (0..3 * 5 * 2).map(|i| (i * 7 + 3) as u8).collect();
        write_png(&path, &rgb, (5, 2)).expect("write");
        let file = std::fs::File::open(&path).expect("open");
        let mut reader = png::Decoder::new(std::io::BufReader::new(file))
            .read_info()
            .expect("a PNG");
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).expect("a frame");
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!((info.width, info.height), (5, 2));
        assert_eq!(
            (info.color_type, info.bit_depth),
            (png::ColorType::Rgb, png::BitDepth::Eight)
        );
        assert_eq!(&buf[..info.buffer_size()], &rgb[..]);
    }

    /// A file that cannot be made is an error naming why, not a panic.
    #[test]
    fn a_png_into_a_missing_directory_is_an_error() {
        let path = std::path::Path::new("/nonexistent-mavsitl-dir/p.png");
        assert!(write_png(path, &[0; 3], (1, 1)).is_err());
    }
}
