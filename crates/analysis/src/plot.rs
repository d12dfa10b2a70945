//! Pictures of flights, as SVG and PNG, drawn with `plotters`: the ground
//! track over the planned route, cross-track error along the route, speed and
//! altitude against time, per-leg bars, box plots over seeds, and a rover's
//! slide over a patch of ground.
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

/// The point of a waypoint's acceptance ring `a` rad round from north:
/// (east, north), m, as the map plots it.
fn ring_point(north_m: f64, east_m: f64, radius_m: f64, a: f64) -> (f64, f64) {
    (east_m + radius_m * a.sin(), north_m + radius_m * a.cos())
}

/// The plotting area a chart leaves of an area of `(w, h)` px with a
/// `margin` all round and label areas `y_label` wide and `x_label` high, px.
fn plot_px((w, h): (u32, u32), margin: u32, y_label: u32, x_label: u32) -> (f64, f64) {
    (
        f64::from(w.saturating_sub(2 * margin + y_label).max(1)),
        f64::from(h.saturating_sub(2 * margin + x_label).max(1)),
    )
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
        let (x, y) = map_axes(
            range(xs.into_iter(), 0.05, 10.0),
            range(ys.into_iter(), 0.05, 10.0),
            plot_px(area.dim_in_pixel(), 15, 60, 45),
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
                ring_point(p.ned_m.x, p.ned_m.y, p.radius_m, a)
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

/// One panel: `series(m)` gives each airframe's (x, y) points; with
/// `equal_axes`, a metre across is as long as a metre along.
fn manoeuvre_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    ms: &[super::manoeuvre::Manoeuvres],
    (title, x_desc, y_desc): (&str, &str, &str),
    equal_axes: bool,
    series: impl Fn(&super::manoeuvre::Manoeuvres) -> Vec<(f64, f64)>,
) -> Result<(), String> {
    let all: Vec<Vec<(f64, f64)>> = ms.iter().map(&series).collect();
    let (x0, x1) = range(all.iter().flatten().map(|p| p.0), 0.03, 1.0);
    let (y0, y1) = range(all.iter().flatten().map(|p| p.1), 0.05, 0.1);
    let area = area.titled(title, (FONT, 20)).map_err(err)?;
    let (x, y) = if equal_axes {
        // One scale on both axes, on the plotting area the margins and
        // label areas below leave: a circle is drawn round.
        map_axes((x0, x1), (y0, y1), plot_px(area.dim_in_pixel(), 12, 55, 40))
    } else {
        (x0..x1, y0..y1)
    };
    let mut chart = ChartBuilder::on(&area)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(x, y)
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

/// One moment of a rover's drive: where it is and how its wheels slip.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlidePoint {
    /// Sim time, s.
    pub t_s: f64,
    /// North of home, m.
    pub north_m: f64,
    /// East of home, m.
    pub east_m: f64,
    /// Slip angle of the rear axle, deg (the angle of its contact's
    /// velocity from the heading; 0 where nothing slides).
    pub slip_deg: f64,
}

/// A patch of ground of its own friction, and when a vehicle was on it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Patch {
    /// South and north edges, m north of home.
    pub north_m: (f64, f64),
    /// West and east edges, m east of home.
    pub east_m: (f64, f64),
    /// Entered and left, s.
    pub on_s: (f64, f64),
    /// Its friction coefficient.
    pub mu: f64,
}

/// A rover's drive over a patch: the ground track beside the slip angle
/// against time.
struct Slide<'a> {
    route: &'a Route,
    trace: &'a [SlidePoint],
    patch: &'a Patch,
}

/// The patch's fill.
const ICE: RGBColor = RGBColor(170, 210, 240);

impl Slide<'_> {
    /// The ground track: the route, the patch, the path coloured off and on it.
    fn map<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let area = area
            .titled("Ground track over the planned route", (FONT, 22))
            .map_err(err)?;
        let (n, e) = (self.patch.north_m, self.patch.east_m);
        let xs = self.trace.iter().map(|p| p.east_m).chain([e.0, e.1]);
        let ys = self.trace.iter().map(|p| p.north_m).chain([n.0, n.1]);
        let (x, y) = map_axes(
            range(xs, 0.05, 5.0),
            range(ys, 0.05, 5.0),
            plot_px(area.dim_in_pixel(), 12, 55, 40),
        );
        let mut chart = ChartBuilder::on(&area)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(55)
            .build_cartesian_2d(x, y)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("east of home [m]")
            .y_desc("north of home [m]")
            .label_style((FONT, 14))
            .draw()
            .map_err(err)?;
        chart
            .draw_series([Rectangle::new([(e.0, n.0), (e.1, n.1)], ICE.filled())])
            .map_err(err)?
            .label(format!("patch, μ {}", self.patch.mu))
            .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], ICE.filled()));
        let grey = RGBColor(150, 150, 150);
        let legs = self.route.legs.iter().map(|l| {
            PathElement::new(
                vec![(l.from.y, l.from.x), (l.to.y, l.to.x)],
                grey.stroke_width(2),
            )
        });
        chart
            .draw_series(legs)
            .map_err(err)?
            .label("planned route")
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], grey.stroke_width(2))
            });
        let (on, off) = self.patch.on_s;
        for (label, color, keep) in [
            ("off the patch", COLORS[0], false),
            ("on the patch", COLORS[1], true),
        ] {
            let runs = runs_where(self.trace, |p| (p.t_s >= on && p.t_s < off) == keep);
            let lines = runs.into_iter().map(|r| {
                PathElement::new(
                    r.iter().map(|p| (p.east_m, p.north_m)).collect::<Vec<_>>(),
                    color.stroke_width(2),
                )
            });
            chart
                .draw_series(lines)
                .map_err(err)?
                .label(label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
        }
        legend(&mut chart, 14)
    }

    /// The rear axle's slip angle against time, the time on the patch shaded.
    fn slip<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let t1 = self.trace.last().map_or(1.0, |p| p.t_s).max(1.0);
        let (y0, y1) = range(self.trace.iter().map(|p| p.slip_deg), 0.05, 10.0);
        let mut chart = ChartBuilder::on(area)
            .caption("Slip angle of the rear axle", (FONT, 22))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(55)
            .build_cartesian_2d(0.0..t1, y0..y1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("sim time [s]")
            .y_desc("slip angle [deg]")
            .label_style((FONT, 14))
            .draw()
            .map_err(err)?;
        let (on, off) = self.patch.on_s;
        chart
            .draw_series([Rectangle::new([(on, y0), (off, y1)], ICE.filled())])
            .map_err(err)?
            .label("on the patch")
            .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], ICE.filled()));
        chart
            .draw_series([PathElement::new(
                self.trace
                    .iter()
                    .map(|p| (p.t_s, p.slip_deg))
                    .collect::<Vec<_>>(),
                COLORS[0].stroke_width(2),
            )])
            .map_err(err)?
            .label("slip angle")
            .legend(|(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], COLORS[0].stroke_width(2))
            });
        legend(&mut chart, 14)
    }
}

/// The runs of consecutive points of `trace` that `keep` keeps.
fn runs_where(trace: &[SlidePoint], keep: impl Fn(&SlidePoint) -> bool) -> Vec<Vec<SlidePoint>> {
    let mut runs: Vec<Vec<SlidePoint>> = Vec::new();
    let mut open = false;
    for p in trace {
        match (keep(p), open, runs.last_mut()) {
            (true, true, Some(run)) => run.push(*p),
            (true, _, _) => runs.push(vec![*p]),
            (false, _, _) => {}
        }
        open = keep(p);
    }
    runs
}

impl Picture for Slide<'_> {
    fn size(&self) -> (u32, u32) {
        (1400, 650)
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let (left, right) = area.split_horizontally(650);
        self.map(&left)?;
        self.slip(&right)
    }
}

/// Draws a rover's drive over `patch` (`trace` against `route`) to
/// `dir/name.svg` and `.png`.
///
/// # Errors
/// A drawing or file error, as text.
pub fn slide(
    dir: &Path,
    name: &str,
    route: &Route,
    trace: &[SlidePoint],
    patch: &Patch,
) -> Result<[PathBuf; 2], String> {
    render(
        &Slide {
            route,
            trace,
            patch,
        },
        dir,
        name,
    )
}

#[cfg(test)]
mod tests;
