//! A heightmap: the ground raised over a grid of heights, two triangles a
//! cell.
//!
//! `heights_m[i][j]` is the height (m, up) above the ground plane at
//! north `origin_ne_m[0] + i·spacing_m` and east `origin_ne_m[1] +
//! j·spacing_m`; between the samples the surface is the two triangles of
//! each cell. Outside the grid the ground is the plane. The heights come
//! inline or from a CSV file of one row a line, read when the scenario (or
//! the scene file) is loaded.
//!
//! A ray walks the cells under it (Amanatides and Woo's traversal) from
//! where it enters the grid's box, and stops at the first cell whose
//! triangles it meets. parry3d's own `HeightField` was not used: it picks
//! the first cell by rounding, and a ray that starts on a cell's edge (a
//! vehicle standing on a grid line, looking straight down) found no
//! surface.

use std::path::Path;

use parry3d::bounding_volume::Aabb;
use parry3d::math::Vector;
use parry3d::query::Ray;
use serde::{Deserialize, Serialize};

use crate::SceneError;

/// At most this many samples on a side.
pub const MAX_SAMPLES: usize = 1024;
/// The spacing of the samples, m: at least this…
pub const MIN_SPACING_M: f64 = 0.01;
/// …and at most this.
pub const MAX_SPACING_M: f64 = 1000.0;
/// A height, m, within ± this.
pub const MAX_HEIGHT_M: f64 = 10_000.0;
/// The grid's corner, m from home on each axis, within ± this.
pub const MAX_ORIGIN_M: f64 = 100_000.0;
/// A heightmap file's size at most, bytes: 1 024 rows of 1 024 heights
/// written with up to 31 characters each.
pub const MAX_FILE_BYTES: u64 = 32 << 20;

/// A heightmap as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeightmapSpec {
    /// Heights above the ground plane, m: row `i` north, column `j` east
    /// of the corner (default: none, then `file` gives them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub heights_m: Vec<Vec<f64>>,
    /// A CSV file of the heights, one row a line, relative to the folder of
    /// the file that names it; read at load into `heights_m`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The distance between samples, m, 0.01–1000.
    pub spacing_m: f64,
    /// North and east of `heights_m[0][0]`, m from home (default: 0, 0).
    #[serde(default)]
    pub origin_ne_m: [f64; 2],
}

impl HeightmapSpec {
    /// Reads `file`, if given, into `heights_m` (relative to `base`);
    /// `key` names this heightmap in errors.
    ///
    /// # Errors
    /// A file that cannot be read, or a field that is no number, with its
    /// line.
    pub fn read_file(&mut self, base: &Path, key: &str) -> Result<(), SceneError> {
        let Some(name) = self.file.take() else {
            return Ok(());
        };
        let bad = |message: String| SceneError::File {
            key: format!("{key}.file"),
            message,
        };
        let path = base.join(&name);
        let size = std::fs::metadata(&path)
            .map_err(|e| bad(format!("{}: cannot read: {e}", path.display())))?
            .len();
        if size > MAX_FILE_BYTES {
            return Err(bad(format!(
                "{name}: {size} bytes; a heightmap file holds at most {MAX_FILE_BYTES}"
            )));
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| bad(format!("{}: cannot read: {e}", path.display())))?;
        let mut rows = Vec::new();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            if rows.len() >= MAX_SAMPLES {
                return Err(bad(format!("{name}: more than {MAX_SAMPLES} rows")));
            }
            let row: Result<Vec<f64>, _> = line
                .split(',')
                .take(MAX_SAMPLES + 1)
                .map(|f| f.trim().parse::<f64>())
                .collect();
            let row = row.map_err(|_| bad(format!("{name}:{}: not a row of numbers", n + 1)))?;
            rows.push(row);
        }
        self.heights_m = rows;
        Ok(())
    }
}

/// A heightmap, built: the surface's points in NED (down = the plane's
/// less the height), row-major.
#[derive(Clone)]
pub struct Terrain {
    /// Each sample's down, NED m: `downs[i * cols + j]`.
    downs: Vec<f32>,
    rows: usize,
    cols: usize,
    spacing: f32,
    /// North and east of sample (0, 0), m.
    origin: [f32; 2],
    /// The highest and lowest point's down, NED m.
    down_range: [f32; 2],
}

impl Terrain {
    /// Checks `spec` and builds it over the plane at `down_m` (NED m);
    /// `key` names it in errors.
    ///
    /// # Errors
    /// A grid smaller than 2 × 2 or larger than 1024 × 1024, rows of
    /// different lengths, or a value out of its range, by key.
    pub fn build(spec: &HeightmapSpec, down_m: f64, key: &str) -> Result<Terrain, SceneError> {
        let (rows, cols) = check(spec, key)?;
        let downs: Vec<f32> = spec
            .heights_m
            .iter()
            .flatten()
            .map(|h| (down_m - h) as f32)
            .collect();
        let down_range = downs
            .iter()
            .fold([f32::MAX, f32::MIN], |[lo, hi], d| [lo.min(*d), hi.max(*d)]);
        Ok(Terrain {
            downs,
            rows,
            cols,
            spacing: spec.spacing_m as f32,
            origin: spec.origin_ne_m.map(|x| x as f32),
            down_range,
        })
    }

    /// The grid's far corner, north and east, m.
    fn far(&self) -> [f32; 2] {
        [
            self.origin[0] + (self.rows - 1) as f32 * self.spacing,
            self.origin[1] + (self.cols - 1) as f32 * self.spacing,
        ]
    }

    /// A ten-thousandth of a cell, m: how far the grid's box reaches past
    /// its edges. Any length from rounding's up finds the same hits.
    fn margin(&self) -> f32 {
        1e-4 * self.spacing
    }

    /// Whether (north, east), m, lies over the grid.
    pub fn covers(&self, north_m: f32, east_m: f32) -> bool {
        let far = self.far();
        (self.origin[0]..=far[0]).contains(&north_m) && (self.origin[1]..=far[1]).contains(&east_m)
    }

    /// Sample (i, j)'s point, NED m.
    fn point(&self, i: usize, j: usize) -> Vector {
        Vector::new(
            self.origin[0] + i as f32 * self.spacing,
            self.origin[1] + j as f32 * self.spacing,
            self.downs[i * self.cols + j],
        )
    }

    /// Cell (i, j)'s two triangles: split along the diagonal from sample
    /// (i + 1, j) to (i, j + 1).
    fn triangles(&self, i: usize, j: usize) -> [[Vector; 3]; 2] {
        let (a, b) = (self.point(i, j), self.point(i + 1, j));
        let (c, d) = (self.point(i, j + 1), self.point(i + 1, j + 1));
        [[a, b, c], [b, d, c]]
    }

    /// The cell (row, column) holding (north, east), clamped to the grid.
    fn cell(&self, north_m: f32, east_m: f32) -> (usize, usize) {
        let at = |x: f32, o: f32, n: usize| {
            (((x - o) / self.spacing).floor().max(0.0) as usize).min(n - 2)
        };
        (
            at(north_m, self.origin[0], self.rows),
            at(east_m, self.origin[1], self.cols),
        )
    }

    /// The first point of the surface the ray from `origin` along `dir`
    /// (NED) meets within `max_t`: its parameter and the surface's upward
    /// unit normal, NED.
    ///
    /// The ray walks the cells under it (Amanatides and Woo) from where it
    /// enters the grid's box. A walk that starts on a cell's edge may
    /// start in the cell behind: its crossing into the next is then at
    /// once. A ray straight up or down stays in its first cell, whose
    /// triangles count a point on their edges.
    pub fn cast(&self, origin: Vector, dir: Vector, max_t: f32) -> Option<(f32, [f32; 3])> {
        let ray = Ray::new(origin, dir);
        let (t0, t1) = self.bounds().clip_ray_parameters(&ray)?;
        // A hit where the ray leaves the box (a corner of the grid) is kept
        // whatever the rounding of either.
        let t1 = widened(t1).min(max_t);
        let p = ray.point_at(t0);
        let (mut i, mut j) = self.cell(p.x, p.y);
        // An axis along which the next cell is off the grid: the ray runs
        // along that edge (within the box's margin) until it leaves the box.
        let mut blocked = [false; 2];
        for _ in 0..self.max_steps() {
            if let Some(hit) = self.cast_cell(&ray, i, j, t1) {
                return Some(hit);
            }
            let tn = self.crossing(origin.x, dir.x, self.origin[0], i, blocked[0]);
            let te = self.crossing(origin.y, dir.y, self.origin[1], j, blocked[1]);
            if past(tn.min(te), t1) {
                return None;
            }
            let (axis, k, d, n) = if north_first(tn, te) {
                (0, &mut i, dir.x, self.rows)
            } else {
                (1, &mut j, dir.y, self.cols)
            };
            let next = if forward(d) {
                (*k + 2 < n).then_some(*k + 1)
            } else {
                k.checked_sub(1)
            };
            match next {
                Some(next) => *k = next,
                None => blocked[axis] = true,
            }
        }
        None
    }

    /// The grid's box, a margin larger all round: a ray along its edge,
    /// out by a rounding, still meets the edge.
    fn bounds(&self) -> Aabb {
        let (far, m) = (self.far(), self.margin());
        Aabb::new(
            Vector::new(
                self.origin[0] - m,
                self.origin[1] - m,
                self.down_range[0] - m,
            ),
            Vector::new(far[0] + m, far[1] + m, self.down_range[1] + m),
        )
    }

    /// Each pass of a walk moves a cell or blocks an axis: at most this
    /// many passes.
    fn max_steps(&self) -> usize {
        self.rows + self.cols
    }

    /// When the ray from `x` along `d` (one axis) leaves cell `k` of the
    /// grid starting at `o`; never along an axis it does not move on or
    /// that is blocked.
    fn crossing(&self, x: f32, d: f32, o: f32, k: usize, blocked: bool) -> f32 {
        if d == 0.0 || blocked {
            return f32::MAX;
        }
        let side = if forward(d) { k + 1 } else { k };
        (o + side as f32 * self.spacing - x) / d
    }

    /// The ray's first hit on cell (i, j)'s triangles within `max_t`.
    fn cast_cell(&self, ray: &Ray, i: usize, j: usize, max_t: f32) -> Option<(f32, [f32; 3])> {
        self.triangles(i, j)
            .iter()
            .filter_map(|tri| hit_triangle(ray, tri, max_t))
            .min_by(|a, b| a.0.total_cmp(&b.0))
    }

    /// The surface's height as NED down at (north, east), m; none off the grid.
    pub fn down_at(&self, north_m: f32, east_m: f32) -> Option<f32> {
        if !self.covers(north_m, east_m) {
            return None;
        }
        let above = Vector::new(north_m, east_m, self.down_range[0] - 1.0);
        let (t, _) = self.cast(above, Vector::new(0.0, 0.0, 1.0), f32::MAX)?;
        Some(above.z + t)
    }
}

/// The box's far side `t1`, moved out by rounding's worth: a hit there is
/// still kept. Any such finds the same hits.
fn widened(t1: f32) -> f32 {
    t1 + 1e-5 * (1.0 + t1)
}

/// Whether a ray moving `d` along an axis moves up it. Never asked of a
/// ray that does not move along it.
fn forward(d: f32) -> bool {
    d > 0.0
}

/// Whether the walk crosses into the next row (north) before the next
/// column (east), crossing at `tn` and `te`.
fn north_first(tn: f32, te: f32) -> bool {
    tn < te
}

/// Whether a walk that would next cross at `t` has gone past `t1`, the
/// far side of the box.
fn past(t: f32, t1: f32) -> bool {
    t > t1
}

/// Where the ray meets triangle `tri` within `max_t` (Möller and
/// Trumbore), and the triangle's upward unit normal. A point on an edge
/// or a corner counts, within a millionth of the triangle, for both
/// triangles that share it: a ray through a corner of the grid is not let
/// through between them.
fn hit_triangle(ray: &Ray, [a, b, c]: &[Vector; 3], max_t: f32) -> Option<(f32, [f32; 3])> {
    const EDGE: f32 = 1e-6;
    let (e1, e2) = (*b - *a, *c - *a);
    let p = ray.dir.cross(e2);
    // A ray parallel to the triangle has det 0, and u, v and t not
    // finite: refused by the tests below.
    let det = e1.dot(p);
    let s = ray.origin - *a;
    let u = s.dot(p) / det;
    let q = s.cross(e1);
    let v = ray.dir.dot(q) / det;
    if u < -EDGE || v < -EDGE || u + v > 1.0 + EDGE {
        return None;
    }
    // From on the surface (within a micrometre), away: no hit.
    let t = e2.dot(q) / det;
    if !(t > 1e-6 && t <= max_t) {
        return None;
    }
    let n = e1.cross(e2).normalize();
    let n = if n.z > 0.0 { -n } else { n };
    Some((t, [n.x, n.y, n.z]))
}

/// Checks a heightmap's shape and values: its rows and columns.
fn check(spec: &HeightmapSpec, key: &str) -> Result<(usize, usize), SceneError> {
    let rows = spec.heights_m.len();
    let cols = spec.heights_m.first().map_or(0, Vec::len);
    let range = |k: String, v: f64, r: &str| SceneError::Range {
        key: k,
        value: v.to_string(),
        range: r.into(),
    };
    let sides = format!("2..={MAX_SAMPLES} samples");
    if !(2..=MAX_SAMPLES).contains(&rows) {
        return Err(range(
            format!("{key}.heights_m"),
            rows as f64,
            &format!("{sides} a side"),
        ));
    }
    for (i, row) in spec.heights_m.iter().enumerate() {
        if row.len() != cols || !(2..=MAX_SAMPLES).contains(&cols) {
            let want = if (2..=MAX_SAMPLES).contains(&cols) {
                format!("{cols}, as row 0")
            } else {
                sides.clone()
            };
            return Err(range(
                format!("{key}.heights_m[{i}]"),
                row.len() as f64,
                &want,
            ));
        }
        for (j, h) in row.iter().enumerate() {
            if !(-MAX_HEIGHT_M..=MAX_HEIGHT_M).contains(h) {
                return Err(range(format!("{key}.heights_m[{i}][{j}]"), *h, "±10000 m"));
            }
        }
    }
    let s = spec.spacing_m;
    if !(MIN_SPACING_M..=MAX_SPACING_M).contains(&s) {
        return Err(range(format!("{key}.spacing_m"), s, "0.01..=1000 m"));
    }
    for (k, v) in spec.origin_ne_m.iter().enumerate() {
        if !(-MAX_ORIGIN_M..=MAX_ORIGIN_M).contains(v) {
            return Err(range(format!("{key}.origin_ne_m[{k}]"), *v, "±100000 m"));
        }
    }
    Ok((rows, cols))
}

impl std::fmt::Debug for Terrain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Terrain")
            .field("rows", &self.rows)
            .field("cols", &self.cols)
            .field("origin", &self.origin)
            .finish()
    }
}
