//! The pictures read back from their SVG: where each line, bar and box
//! falls on its axes.

use super::{
    along_route, color_of, controllers, draw_all, err, manoeuvring, map_axes, percentile, range,
    register_font, runs_where, slide, write_png, Boxes, CrossTrack, Flown, GroundTrack, LegBars,
    ManoeuvringPage, Patch, Picture, Slide, SlidePoint, SpeedAltitude, COLORS, ICE,
};
use crate::manoeuvre::{self, Manoeuvres, Traces};
use crate::metrics::{LegMetrics, MissionMetrics};
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
    // Round, and about the first waypoint after home (100 m north).
    let (top, bottom) = (
        ring.iter().map(|p| p.1).fold(f64::MAX, f64::min),
        ring.iter().map(|p| p.1).fold(f64::MIN, f64::max),
    );
    assert!((bottom - top - across).abs() <= 1.0, "{top}..{bottom}");
    let left = ring.iter().map(|p| p.0).fold(f64::MAX, f64::min);
    near(
        &[(left + across / 2.0, (top + bottom) / 2.0)],
        &[(x0, y1)],
        "the ring's centre",
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

/// A chart's plotting area, px: its first and last pixel across and down.
#[derive(Debug, Clone, Copy)]
struct Area {
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

impl Area {
    /// The pixel of `(x, y)` on axes spanning `xs` and `ys`.
    fn at(&self, xs: (f64, f64), ys: (f64, f64), (x, y): (f64, f64)) -> (f64, f64) {
        (
            self.left + (x - xs.0) / (xs.1 - xs.0) * (self.right - self.left),
            self.bottom - (y - ys.0) / (ys.1 - ys.0) * (self.bottom - self.top),
        )
    }
}

/// Each chart's plotting area, in drawing order, from its axes: the line up
/// its left side, then the line under it.
fn areas(svg: &str) -> Vec<Area> {
    let axes = svg
        .split('<')
        .filter(|e| {
            e.starts_with("polyline") && e.contains("stroke=\"#000000\" stroke-width=\"1\"")
        })
        .map(|e| {
            let pts = e
                .split("points=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            let p: Vec<(f64, f64)> = pts
                .split_whitespace()
                .map(|xy| {
                    let (x, y) = xy.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect();
            (p[0], p[p.len() - 1])
        });
    let mut out = Vec::new();
    let mut up: Option<(f64, f64)> = None;
    for ((x0, y0), (x1, y1)) in axes {
        if x0 == x1 && (y1 - y0).abs() > 20.0 {
            up = Some((y0.min(y1), y0.max(y1)));
        } else if let (Some((top, bottom)), true) = (up, y0 == y1 && (x1 - x0).abs() > 20.0) {
            out.push(Area {
                left: x0.min(x1),
                right: x0.max(x1),
                top,
                bottom,
            });
            up = None;
        }
    }
    out
}

/// `got` and `want` (px) have the same length and are within 1 px of each
/// other point by point (plotters rounds to whole pixels).
fn near(got: &[(f64, f64)], want: &[(f64, f64)], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: points");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g.0 - w.0).abs() <= 1.0 && (g.1 - w.1).abs() <= 1.0,
            "{what}: point {i} at {g:?}, not {w:?}"
        );
    }
}

/// Every rectangle filled in `color` (with the opacity given): (x, y,
/// width, height) px.
fn rects(svg: &str, color: RGBColor, opacity: &str) -> Vec<[f64; 4]> {
    let fill = format!(
        "opacity=\"{opacity}\" fill=\"#{:02X}{:02X}{:02X}\"",
        color.0, color.1, color.2
    );
    svg.split('<')
        .filter(|e| e.starts_with("rect") && e.contains(&fill))
        .map(|e| ["x", "y", "width", "height"].map(|a| attr(e, a).unwrap()))
        .collect()
}

/// Every rectangle stroked, not filled, in `color`: (x, y, width, height) px.
fn outlines(svg: &str, color: RGBColor) -> Vec<[f64; 4]> {
    let stroke = format!("stroke=\"#{:02X}{:02X}{:02X}\"", color.0, color.1, color.2);
    svg.split('<')
        .filter(|e| e.starts_with("rect") && e.contains(&stroke) && e.contains("fill=\"none\""))
        .map(|e| ["x", "y", "width", "height"].map(|a| attr(e, a).unwrap()))
        .collect()
}

/// A moving sample at (north, east), NED m.
fn at(t_s: f64, n: f64, e: f64) -> Sample {
    Sample {
        t_s,
        pos_ned_m: Vector3::new(n, e, -5.0),
        vel_ned_m_s: Vector3::new(1.0, 0.0, 0.0),
        tilt_rad: 0.0,
    }
}

/// Along the route and across it, cut where the distance along jumps by 5 m
/// or more; the samples at rest before and after left out. Legs of 128 m,
/// so that each distance is exact.
#[test]
fn the_cross_track_runs_along_the_route() {
    let p = |n: f64, e: f64| Vector3::new(n, e, -5.0);
    let leg = |from, to, start_along_m| Leg {
        from,
        to,
        start_along_m,
        end_radius_m: 2.0,
    };
    let route = Route {
        points: Vec::new(),
        legs: vec![
            leg(p(0.0, 0.0), p(128.0, 0.0), 0.0),
            leg(p(128.0, 0.0), p(128.0, 128.0), 128.0),
        ],
    };
    let mut rest = at(0.0, 1.0, 1.0);
    rest.vel_ned_m_s = Vector3::zeros();
    let samples = vec![
        rest,
        at(1.0, 16.0, 2.0),
        at(2.0, 20.0, -3.0),
        at(3.0, 25.0, 1.0),
        at(4.0, 131.0, 32.0),
        at(5.0, 127.0, 36.0),
        rest,
    ];
    let track = Track {
        samples,
        ..Track::default()
    };
    assert_eq!(
        along_route(&route, &track),
        vec![
            vec![(16.0, 2.0), (20.0, 3.0)],
            vec![(25.0, 1.0)],
            vec![(160.0, 3.0), (164.0, 1.0)],
        ]
    );
    assert!(along_route(&route, &Track::default()).is_empty());
}

/// Each flight's cross-track against the distance along the route, the
/// axis 0 to the route's length across and 0 to 1.1 of the largest error
/// up; a grey line where each leg after the first starts.
#[test]
fn the_cross_track_picture_plots_each_flight_on_its_axes() {
    let (route, flights) = square();
    let p = CrossTrack {
        route: &route,
        flights: &flights,
    };
    assert_eq!(p.size(), (1000, 450));
    let text = svg(&p);
    let [area] = areas(&text)[..] else {
        panic!("one chart: {:?}", areas(&text))
    };
    // b is 10 m east of the square: 10 m off at most.
    let (xs, ys) = ((0.0, 300.0), (0.0, 11.0));
    for (k, f) in flights.iter().enumerate() {
        let mut lines = polylines(&text, COLORS[k]);
        let key = lines.pop().expect("a legend key");
        assert_eq!(key.len(), 2);
        assert_eq!(key[1].0 - key[0].0, 20.0);
        let runs = along_route(&route, &f.track);
        assert!(runs.iter().flatten().any(|q| q.1 == 10.0) == (k == 1));
        assert_eq!(lines.len(), runs.len(), "{}'s runs", f.controller);
        for (got, run) in lines.iter().zip(&runs) {
            let want: Vec<_> = run.iter().map(|q| area.at(xs, ys, *q)).collect();
            near(got, &want, &f.controller);
        }
    }
    let grey = polylines(&text, RGBColor(170, 170, 170));
    let want = |along| {
        vec![
            area.at(xs, ys, (along, 0.0)),
            area.at(xs, ys, (along, 11.0)),
        ]
    };
    near(&grey.concat(), &[want(100.0), want(200.0)].concat(), "legs");
}

/// Flights with speed 0.05·t m/s from (3, 4)·0.01·t and altitude t/5 m, and
/// half that altitude; plotted to the last sample's time.
fn climbing() -> Vec<Flown> {
    let flight = |controller: &str, last: usize, climb: f64| {
        let mut f = flown(controller);
        f.track.samples = (0..=last)
            .map(|k| {
                let t = k as f64;
                Sample {
                    t_s: t,
                    pos_ned_m: Vector3::new(t, 0.0, -climb * t),
                    vel_ned_m_s: Vector3::new(0.03 * t, 0.04 * t, 0.0),
                    tilt_rad: 0.0,
                }
            })
            .collect();
        f
    };
    vec![flight("a", 100, 0.2), flight("b", 80, 0.1)]
}

/// Speed (the velocity's norm) above, altitude (up from NED's down) below,
/// against sim time to the longest flight's end; each axis from 0, or the
/// data's least less 5 %, to its most and 5 %.
#[test]
fn speed_and_altitude_are_plotted_against_time() {
    let flights = climbing();
    let p = SpeedAltitude { flights: &flights };
    assert_eq!(p.size(), (1000, 700));
    let text = svg(&p);
    let [speed, alt] = areas(&text)[..] else {
        panic!("two charts: {:?}", areas(&text))
    };
    assert!(speed.bottom < alt.top, "speed above altitude");
    // Speeds 0..5 m/s, altitudes 0..20 m, both padded by 5 % of the span.
    let (ts, vs, hs) = ((0.0, 100.0), (-0.25, 5.25), (-1.0, 21.0));
    for (k, f) in flights.iter().enumerate() {
        let lines = polylines(&text, COLORS[k]);
        assert_eq!(
            lines.iter().map(Vec::len).collect::<Vec<_>>()[..2],
            [f.track.samples.len(), 2]
        );
        let s = &f.track.samples;
        let v: Vec<_> = s
            .iter()
            .map(|s| speed.at(ts, vs, (s.t_s, 0.05 * s.t_s)))
            .collect();
        let climb = if k == 0 { 0.2 } else { 0.1 };
        let h: Vec<_> = s
            .iter()
            .map(|s| alt.at(ts, hs, (s.t_s, climb * s.t_s)))
            .collect();
        near(&lines[0], &v, "speed");
        near(&lines[2], &h, "altitude");
    }
}

fn with_legs(controller: &str, xtrack: [f64; 3]) -> Flown {
    let mut f = flown(controller);
    f.metrics.legs = xtrack
        .iter()
        .map(|x| LegMetrics {
            xtrack_rms_m: *x,
            xtrack_max_m: 2.0 * x,
            samples: 10,
        })
        .collect();
    f
}

/// Per leg, one bar per controller, each the median over its seeds, side
/// by side within 0.8 of a leg's width; the axis to 1.15 of the tallest.
#[test]
fn leg_bars_stand_at_each_controllers_median() {
    // At two scales: the axis reaches 15 % above the tallest bar.
    for scale in [1.0, 0.1] {
        leg_bars_at(scale);
    }
}

fn leg_bars_at(scale: f64) {
    let s = |v: [f64; 3]| v.map(|x| x * scale);
    let flights = vec![
        with_legs("a", s([1.0, 4.0, 3.0])),
        with_legs("b", s([0.5, 1.5, 8.0])),
        with_legs("a", s([3.0, 2.0, 5.0])),
        with_legs("a", s([2.0, 6.0, 1.0])),
    ];
    let p = LegBars { flights: &flights };
    assert_eq!(p.size(), (1000, 450));
    let text = svg(&p);
    let [area] = areas(&text)[..] else {
        panic!("one chart: {:?}", areas(&text))
    };
    let (xs, ys) = ((0.5, 3.5), (0.0, 8.0 * scale * 1.15));
    let medians = [s([2.0, 4.0, 3.0]), s([0.5, 1.5, 8.0])];
    for (k, values) in medians.iter().enumerate() {
        let mut bars = rects(&text, COLORS[k], "1");
        let key = bars.pop().expect("a legend key");
        assert_eq!(key[2..], [12.0, 10.0]);
        // The keys one above the other, from one x: where the legend's
        // icons start, left of their labels.
        let first = rects(&text, COLORS[0], "1").pop().expect("a key");
        assert_eq!(key[0], first[0]);
        let label = text
            .split('<')
            .find(|e| e.starts_with("text") && e.ends_with(">\na\n"))
            .and_then(|e| attr(e, "x"))
            .expect("the first label");
        assert!(
            (0.0..=20.0).contains(&(label - key[0] - 12.0)),
            "{label} {key:?}"
        );
        assert_eq!(bars.len(), 3);
        for (leg, (bar, v)) in bars.iter().zip(values).enumerate() {
            let x = leg as f64 + 0.6 + 0.4 * k as f64;
            let (l, t) = area.at(xs, ys, (x, *v));
            let (r, b) = area.at(xs, ys, (x + 0.36, 0.0));
            let got = [(bar[0], bar[1]), (bar[0] + bar[2], bar[1] + bar[3])];
            near(&got, &[(l, t), (r, b)], &format!("leg {leg} of {k}"));
        }
    }
}

fn with_metrics(controller: &str, xtrack: f64) -> Flown {
    let mut f = flown(controller);
    f.metrics = MissionMetrics {
        xtrack_rms_m: xtrack,
        ..MissionMetrics::default()
    };
    f
}

/// A box per controller from the 25th to the 75th percentile over seeds, the
/// median across it in black, whiskers from the 5th to the 95th with caps;
/// one controller per unit across, from −0.5.
#[test]
fn seed_boxes_span_the_percentiles() {
    let mut flights: Vec<Flown> = [5.0, 1.0, 4.0, 2.0, 3.0]
        .iter()
        .map(|x| with_metrics("a", *x))
        .collect();
    flights.extend([30.0, 10.0, 20.0].iter().map(|x| with_metrics("b", *x)));
    let p = Boxes { flights: &flights };
    assert_eq!(p.size(), (1000, 800));
    let text = svg(&p);
    let panes = areas(&text);
    assert_eq!(panes.len(), 4, "{panes:?}");
    let area = panes[0];
    // 1..30 m: 29 m padded by a tenth each side.
    let (xs, ys) = ((-0.5, 1.5), (15.5 - 0.6 * 29.0, 15.5 + 0.6 * 29.0));
    // (5th, 25th, median, 75th, 95th) percentiles.
    let qs = [[1.2, 2.0, 3.0, 4.0, 4.8], [11.0, 15.0, 20.0, 25.0, 29.0]];
    let medians = polylines(&text, BLACK)
        .into_iter()
        .zip(
            text.split('<')
                .filter(|e| e.starts_with("polyline") && e.contains("stroke=\"#000000\"")),
        )
        .filter(|(_, e)| e.contains("stroke-width=\"3\""))
        .map(|(p, _)| p)
        .collect::<Vec<_>>();
    // Two in the cross-track pane, two in the time pane (every time 0).
    assert_eq!(medians.len(), 4);
    for (k, [q05, q25, q50, q75, q95]) in qs.into_iter().enumerate() {
        let x = k as f64;
        let px = |p| area.at(xs, ys, p);
        let whiskers = polylines(&text, COLORS[k]);
        let want = [
            vec![px((x, q05)), px((x, q95))],
            vec![px((x - 0.1, q05)), px((x + 0.1, q05))],
            vec![px((x - 0.1, q95)), px((x + 0.1, q95))],
        ];
        near(&whiskers[..3].concat(), &want.concat(), "whiskers");
        let boxes = rects(&text, COLORS[k], "0.35");
        let (l, t) = px((x - 0.25, q75));
        let (r, b) = px((x + 0.25, q25));
        let got = [
            (boxes[0][0], boxes[0][1]),
            (boxes[0][0] + boxes[0][2], boxes[0][1] + boxes[0][3]),
        ];
        near(&got, &[(l, t), (r, b)], "box");
        // Its outline over it, the same rectangle.
        let outline = outlines(&text, COLORS[k]);
        let got = [
            (outline[0][0], outline[0][1]),
            (outline[0][0] + outline[0][2], outline[0][1] + outline[0][3]),
        ];
        near(&got, &[(l, t), (r, b)], "outline");
        near(
            &medians[k],
            &[px((x - 0.25, q50)), px((x + 0.25, q50))],
            "median",
        );
    }
}

/// A fresh directory under the system's temporary one.
fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mavsitl-plot-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The track, cross-track, speed and altitude always; the legs with a route
/// that has any; the seeds with more than one of a controller; each as SVG
/// and PNG.
#[test]
fn draw_all_draws_what_the_flights_can_show() {
    let (route, _) = square();
    let names = |paths: Vec<std::path::PathBuf>| -> Vec<String> {
        paths
            .iter()
            .map(|p| {
                assert!(p.exists() && p.with_extension("png").exists(), "{p:?}");
                p.file_stem().unwrap().to_string_lossy().into_owned()
            })
            .collect()
    };
    let dir = temp_dir("all");
    let one_each: Vec<Flown> = ["a", "b", "c"]
        .iter()
        .map(|c| with_legs(c, [1.0, 2.0, 3.0]))
        .collect();
    let got = names(draw_all(&dir, &route, &one_each).expect("drawn"));
    assert_eq!(got, ["track", "cross_track", "speed_altitude", "legs"]);
    let seeds = vec![
        with_legs("a", [1.0, 2.0, 3.0]),
        with_legs("a", [2.0, 2.0, 2.0]),
    ];
    let no_legs = crate::route::Route {
        legs: Vec::new(),
        ..route.clone()
    };
    let dir2 = temp_dir("seeds");
    let got = names(draw_all(&dir2, &no_legs, &seeds).expect("drawn"));
    assert_eq!(got, ["track", "cross_track", "speed_altitude", "seeds"]);
    let _ = (
        std::fs::remove_dir_all(&dir),
        std::fs::remove_dir_all(&dir2),
    );
    let blocked = std::path::Path::new("/proc/mavsitl-plot");
    assert!(draw_all(blocked, &route, &seeds).is_err());
}

/// A boat's manoeuvres: a turning circle of `d` m across, a zig-zag, and
/// steps to `speed` m/s and 0.2 rad/s.
fn manoeuvres(name: &str, d: f64, speed: f64) -> Manoeuvres {
    let trace = |f: &dyn Fn(f64) -> manoeuvre::Sample| (0..=40).map(|k| f(f64::from(k))).collect();
    let sample = |t_s| manoeuvre::Sample {
        t_s,
        along_m: 0.0,
        across_m: 0.0,
        heading_rad: 0.0,
        surge_m_s: 0.0,
        yaw_rate_rad_s: 0.0,
    };
    let a = |t: f64| t / 40.0 * std::f64::consts::TAU;
    Manoeuvres {
        airframe: name.into(),
        throttle: 0.5,
        steering: 0.1,
        speed_m_s: speed,
        yaw_rate_rad_s: 0.2,
        yaw_step_speed_m_s: speed,
        speed_t63_s: 8.0,
        speed_t90_s: 18.4,
        yaw_t63_s: 4.0,
        yaw_overshoot_pct: 0.0,
        advance_m: d,
        tactical_diameter_m: d,
        steady_diameter_m: d,
        port_yaw_rate_rad_s: -0.2,
        steady_diameter_port_m: d,
        turn_speed_ratio: 0.8,
        zigzag_overshoot_deg: [2.0, 3.0],
        zigzag_first_check_s: 5.0,
        zigzag_period_s: 20.0,
        traces: Traces {
            turning_circle: trace(&|t| manoeuvre::Sample {
                along_m: d / 2.0 * a(t).sin(),
                across_m: d / 2.0 * (1.0 - a(t).cos()),
                ..sample(t)
            }),
            zigzag: trace(&|t| manoeuvre::Sample {
                heading_rad: 0.2 * a(t).sin(),
                ..sample(t)
            }),
            speed_step: trace(&|t| manoeuvre::Sample {
                surge_m_s: speed * (1.0 - (-t / 8.0).exp()),
                ..sample(t)
            }),
            yaw_rate_step: trace(&|t| manoeuvre::Sample {
                // Overshooting its steady 0.2 rad/s by a fifth.
                yaw_rate_rad_s: 0.2 * (1.0 - (-t / 4.0).exp() * (t / 2.0).cos()),
                ..sample(t)
            }),
        },
    }
}

/// Four panels, each airframe in its colour: the turning circle round (one
/// scale across and along), the zig-zag's heading in degrees, the speed and
/// yaw-rate steps as fractions of their steady values.
#[test]
fn the_manoeuvring_page_draws_circles_round_and_steps_to_one() {
    let ms = [
        manoeuvres("small", 40.0, 2.0),
        manoeuvres("large", 60.0, 4.0),
    ];
    let p = ManoeuvringPage(&ms);
    assert_eq!(p.size(), (1400, 1100));
    let text = svg(&p);
    let panes = areas(&text);
    assert_eq!(panes.len(), 4, "{panes:?}");
    for (k, m) in ms.iter().enumerate() {
        let lines = polylines(&text, COLORS[k]);
        // Each panel: the trace and the legend key.
        assert_eq!(
            lines.iter().map(Vec::len).collect::<Vec<_>>(),
            [41, 2, 41, 2, 41, 2, 41, 2],
            "{}",
            m.airframe
        );
        let circle = &lines[0];
        let span = |f: fn(&(f64, f64)) -> f64| {
            circle.iter().map(f).fold(f64::MIN, f64::max)
                - circle.iter().map(f).fold(f64::MAX, f64::min)
        };
        let (across, along) = (span(|p| p.0), span(|p| p.1));
        assert!(
            (across - along).abs() <= 1.0,
            "round: {across} by {along} px"
        );
        // The larger circle, 60 m across, fills the axis but for its pad.
        let area = panes[0];
        let scale = (area.right - area.left).min(area.bottom - area.top) / (60.0 * 1.1);
        assert!(
            (across - m.steady_diameter_m * scale).abs() <= 2.0,
            "{across} px"
        );
        let steps = [
            (&lines[4], &m.traces.speed_step, panes[2]),
            (&lines[6], &m.traces.yaw_rate_step, panes[3]),
        ];
        for (i, (got, trace, area)) in steps.into_iter().enumerate() {
            let frac = |s: &manoeuvre::Sample| match i {
                0 => s.surge_m_s / m.speed_m_s,
                _ => s.yaw_rate_rad_s / m.yaw_rate_rad_s,
            };
            let all = ms.iter().flat_map(|m| match i {
                0 => m
                    .traces
                    .speed_step
                    .iter()
                    .map(|s| s.surge_m_s / m.speed_m_s)
                    .collect::<Vec<_>>(),
                _ => m
                    .traces
                    .yaw_rate_step
                    .iter()
                    .map(|s| s.yaw_rate_rad_s / m.yaw_rate_rad_s)
                    .collect(),
            });
            let (xs, ys) = (
                range((0..=40).map(f64::from), 0.03, 1.0),
                range(all, 0.05, 0.1),
            );
            let want: Vec<_> = trace
                .iter()
                .map(|s| area.at(xs, ys, (s.t_s, frac(s))))
                .collect();
            near(got, &want, "step");
        }
        let zig = &lines[2];
        let ys = range(
            ms[0]
                .traces
                .zigzag
                .iter()
                .map(|s| s.heading_rad.to_degrees()),
            0.05,
            0.1,
        );
        let top = panes[1].at((0.0, 1.0), ys, (0.0, 0.2f64.to_degrees())).1;
        let most = zig.iter().map(|p| p.1).fold(f64::MAX, f64::min);
        assert!((most - top).abs() <= 1.0, "11.5° at {top} px, not {most}");
    }
    let dir = temp_dir("manoeuvring");
    std::fs::create_dir_all(&dir).expect("a directory");
    let [svg_path, png] = manoeuvring(&dir, "boats", &ms).expect("drawn");
    assert!(svg_path.ends_with("boats.svg") && png.ends_with("boats.png"));
    assert_eq!(std::fs::read_to_string(&svg_path).expect("read"), text);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A drive east along y = 0 then north, 1 m a second, over a patch 4 m
/// wide; slipping 20° while on it.
fn drive() -> (Route, Vec<SlidePoint>, Patch) {
    let (route, _) = square();
    let trace = (0..=40)
        .map(|k| {
            let t = f64::from(k);
            let (north_m, east_m) = if k <= 20 { (0.0, t) } else { (t - 20.0, 20.0) };
            let on = (8.0..12.0).contains(&t);
            SlidePoint {
                t_s: t,
                north_m,
                east_m,
                slip_deg: if on { 20.0 } else { 0.0 },
            }
        })
        .collect();
    let patch = Patch {
        north_m: (-2.0, 2.0),
        east_m: (8.0, 12.0),
        on_s: (8.0, 12.0),
        mu: 0.1,
    };
    (route, trace, patch)
}

/// The runs of consecutive kept points, each in order.
#[test]
fn runs_are_the_stretches_kept() {
    let (_, trace, _) = drive();
    let runs = runs_where(&trace, |p| {
        p.t_s < 3.0 || (5.0..7.0).contains(&p.t_s) || p.t_s >= 39.0
    });
    let times: Vec<Vec<f64>> = runs
        .iter()
        .map(|r| r.iter().map(|p| p.t_s).collect())
        .collect();
    assert_eq!(
        times,
        [vec![0.0, 1.0, 2.0], vec![5.0, 6.0], vec![39.0, 40.0]]
    );
    assert!(runs_where(&trace, |_| false).is_empty());
    assert_eq!(runs_where(&trace, |_| true), vec![trace]);
}

/// The map at one scale with the patch where it lies and the drive in two
/// colours, off and on it; beside it the slip angle against time, the
/// time on the patch shaded.
#[test]
fn a_slide_is_drawn_on_its_map_and_against_time() {
    let (route, trace, patch) = drive();
    let p = Slide {
        route: &route,
        trace: &trace,
        patch: &patch,
    };
    assert_eq!(p.size(), (1400, 650));
    let text = svg(&p);
    let [map, slip] = areas(&text)[..] else {
        panic!("two charts: {:?}", areas(&text))
    };
    assert!(map.right < slip.left, "the map on the left");
    // The patch on the map (the first ICE rectangle) and on the time axis.
    let ice = rects(&text, ICE, "1");
    assert_eq!(ice.len(), 4, "two patches and their legend keys: {ice:?}");
    let (on_map, on_time) = (ice[0], ice[2]);
    let scale_x = on_map[2] / 4.0;
    let scale_y = on_map[3] / 4.0;
    assert!(
        (scale_x - scale_y).abs() <= 0.5,
        "one scale: {scale_x} by {scale_y} px/m"
    );
    // Off the patch: before it, after it; on it: one run of 8..11 s.
    let off = polylines(&text, COLORS[0]);
    let on = polylines(&text, COLORS[1]);
    let lens = |l: &[Vec<(f64, f64)>]| l.iter().map(Vec::len).collect::<Vec<_>>();
    assert_eq!(lens(&on), [4, 2], "the run on the patch and its key");
    assert_eq!(lens(&off)[..3], [8, 29, 2], "before, after, the key");
    // On the map the run on the patch starts at its west edge, 4 px per
    // step east.
    assert!((on[0][0].0 - on_map[0]).abs() <= 1.0);
    assert!((on[0][1].0 - on[0][0].0 - scale_x).abs() <= 1.0);
    // Against time: the slip line (the fourth line in the first colour)
    // is 20° from 8 s to 11 s; the shading spans the time on the patch.
    let line = &off[3];
    assert_eq!(line.len(), 41);
    let ys = range(trace.iter().map(|p| p.slip_deg), 0.05, 10.0);
    let want: Vec<_> = trace
        .iter()
        .map(|p| slip.at((0.0, 40.0), ys, (p.t_s, p.slip_deg)))
        .collect();
    near(line, &want, "slip");
    let (l, _) = slip.at((0.0, 40.0), ys, (8.0, 0.0));
    let (r, _) = slip.at((0.0, 40.0), ys, (12.0, 0.0));
    assert!((on_time[0] - l).abs() <= 1.0 && (on_time[0] + on_time[2] - r).abs() <= 1.0);
    assert!(text.contains("patch, μ 0.1"), "the legend");
    // The patch's key in the map's legend: 14 × 10 px, starting where the
    // line keys beside it start.
    assert_eq!(ice[1][2..], [14.0, 10.0]);
    assert!(
        (ice[1][0] - on[1][0].0).abs() <= 1.0,
        "{:?} {:?}",
        ice[1],
        on[1]
    );
    // And in the slip's legend, beside the slip line's key.
    assert_eq!(ice[3][2..], [14.0, 10.0]);
    assert_eq!(off[4].len(), 2, "the slip line's key");
    assert!(
        (ice[3][0] - off[4][0].0).abs() <= 1.0,
        "{:?} {:?}",
        ice[3],
        off[4]
    );
    let dir = temp_dir("slide");
    std::fs::create_dir_all(&dir).expect("a directory");
    let [svg_path, png] = slide(&dir, "ice", &route, &trace, &patch).expect("drawn");
    assert!(svg_path.ends_with("ice.svg") && png.ends_with("ice.png") && png.exists());
    assert_eq!(std::fs::read_to_string(&svg_path).expect("read"), text);
    let _ = std::fs::remove_dir_all(&dir);
}
