//! Vehicles meeting: every pair's closest approach while the two are within
//! the proximity range, and contact — their collision spheres touching — as a
//! collision.
//!
//! Pairs are found on a uniform grid whose cells are the proximity range
//! across (north and east): the vehicles are kept sorted by their cell (an
//! insertion sort, linear when the order barely changes between ticks), and
//! each is measured only against the vehicles of its own and the eight
//! neighbouring cells, walked in that order. The cost is O(n log n + k) in
//! the vehicles and the pairs near each other (O(n + k) once sorted), whatever the
//! layout: a sweep along north alone met every pair of a fleet lined up east
//! to west. The encounters in progress are kept sorted by pair, so finding a
//! pair's is a binary search. Separations are centre to centre, in
//! metres; pairs never within the range are not measured.
//!
//! Once running, a tick allocates nothing; a new encounter or collision
//! (rare) goes into a log reserved up front.

use nalgebra::Vector3;

use mavsitl_core::time::SimTime;

/// Default proximity range, m: pairs closer than this are encounters.
pub const DEFAULT_PROXIMITY_M: f64 = 20.0;

/// One pair's passage within the proximity range, `a < b` (vehicle indices).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Encounter {
    /// The first vehicle (lower index).
    pub a: usize,
    /// The second vehicle.
    pub b: usize,
    /// When they came within range.
    pub start: SimTime,
    /// When they left it again (None: still within range).
    pub end: Option<SimTime>,
    /// When they were closest.
    pub closest_at: SimTime,
    /// Their closest separation, centre to centre, m.
    pub min_separation_m: f64,
    /// Where each was then, NED m.
    pub pos_a_ned_m: Vector3<f64>,
    /// Where the other was then, NED m.
    pub pos_b_ned_m: Vector3<f64>,
    /// When they touched, if they did.
    pub collided: Option<SimTime>,
    tick_seen: u64,
}

/// Two vehicles' collision spheres touching.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Collision {
    /// When (the end of the tick it was found in).
    pub time: SimTime,
    /// The first vehicle (lower index).
    pub a: usize,
    /// The second vehicle.
    pub b: usize,
    /// Midway between their centres, NED m.
    pub point_ned_m: Vector3<f64>,
    /// Their separation, centre to centre, m.
    pub separation_m: f64,
    /// How fast they were closing, m/s.
    pub closing_speed_m_s: f64,
}

/// A vehicle's place and motion, for the sweep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placed {
    /// Position, NED m.
    pub pos_ned_m: Vector3<f64>,
    /// Velocity, NED m/s.
    pub vel_ned_m_s: Vector3<f64>,
}

/// Watches every pair of vehicles, tick by tick.
#[derive(Debug, Clone)]
pub struct EncounterMonitor {
    proximity_m: f64,
    radii_m: Vec<f64>,
    /// Vehicle indices sorted by grid cell.
    order: Vec<usize>,
    /// Each vehicle's grid cell (north, east), this tick.
    cells: Vec<(i64, i64)>,
    /// The encounters still within range: (a, b, index into `log`), sorted
    /// by pair.
    open: Vec<(usize, usize, usize)>,
    log: Vec<Encounter>,
    collisions: Vec<Collision>,
    tick: u64,
}

impl EncounterMonitor {
    /// A monitor for vehicles with these collision radii (m), reporting
    /// pairs closer than `proximity_m` (at least the sum of two radii).
    pub fn new(radii_m: Vec<f64>, proximity_m: f64) -> Self {
        let n = radii_m.len();
        let widest = radii_m.iter().copied().fold(0.0, f64::max);
        EncounterMonitor {
            proximity_m: proximity_m.max(2.0 * widest),
            order: (0..n).collect(),
            cells: vec![(0, 0); n],
            open: Vec::with_capacity(4 * n),
            log: Vec::with_capacity(16 * n),
            collisions: Vec::with_capacity(n),
            radii_m,
            tick: 0,
        }
    }

    /// The proximity range in force, m.
    pub fn proximity_m(&self) -> f64 {
        self.proximity_m
    }

    /// Every encounter so far, in the order they began.
    pub fn encounters(&self) -> &[Encounter] {
        &self.log
    }

    /// Every collision so far, in time order.
    pub fn collisions(&self) -> &[Collision] {
        &self.collisions
    }

    /// After a tick ending at `time`, with every vehicle's place (`placed`,
    /// in index order): opens, follows and closes encounters and notes
    /// collisions. Returns how many collisions are new.
    pub fn update(&mut self, time: SimTime, placed: &[Placed]) -> usize {
        // An identity compared for equality only, never a count to read.
        self.tick = self.tick.wrapping_add(1);
        // `order` and `cells` are both one per vehicle.
        if placed.len() != self.order.len() {
            return 0;
        }
        let cell_m = self.proximity_m;
        for (c, p) in self.cells.iter_mut().zip(placed) {
            *c = (
                grid_cell(p.pos_ned_m.x, cell_m),
                grid_cell(p.pos_ned_m.y, cell_m),
            );
        }
        // The two lists leave `self` for the loop, which measures into it;
        // taking them moves no memory.
        let cells = std::mem::take(&mut self.cells);
        let mut order = std::mem::take(&mut self.order);
        sort_by_cell(&mut order, &cells);
        let key = |i: usize| cells.get(i).copied().unwrap_or((0, 0));
        let before = self.collisions.len();
        // Each pair once, from the vehicle earlier in the order: the rest of
        // its own cell and the next cell of its row (they follow it), and the
        // three cells of the next row (found by a pointer that only moves
        // forward, as the rows do).
        let mut next_row = 0;
        for (k, &i) in order.iter().enumerate() {
            let (cn, ce) = key(i);
            let same_end = (cn, ce.saturating_add(1));
            for &j in order.get(k + 1..).unwrap_or(&[]) {
                if key(j) > same_end {
                    break;
                }
                self.measure_pair(time, i, j, placed);
            }
            let lo = (cn.saturating_add(1), ce.saturating_sub(1));
            let hi = (cn.saturating_add(1), ce.saturating_add(1));
            while next_row < order.len() && key(order[next_row]) < lo {
                next_row += 1;
            }
            for &j in order.get(next_row..).unwrap_or(&[]) {
                if key(j) > hi {
                    break;
                }
                self.measure_pair(time, i, j, placed);
            }
        }
        self.cells = cells;
        self.order = order;
        self.close_left(time);
        self.collisions.len() - before
    }

    /// Vehicles `i` and `j` of `placed`, in neighbouring cells.
    fn measure_pair(&mut self, time: SimTime, i: usize, j: usize, placed: &[Placed]) {
        let (a, b) = (i.min(j), i.max(j));
        if let (Some(pa), Some(pb)) = (placed.get(a), placed.get(b)) {
            self.measure(time, a, b, pa, pb);
        }
    }

    /// One pair in neighbouring cells, `a < b`.
    fn measure(&mut self, time: SimTime, a: usize, b: usize, pa: &Placed, pb: &Placed) {
        let d = (pb.pos_ned_m - pa.pos_ned_m).norm();
        if d > self.proximity_m {
            return;
        }
        let at = match self
            .open
            .binary_search_by(|&(oa, ob, _)| (oa, ob).cmp(&(a, b)))
        {
            Ok(k) => self.open[k].2,
            Err(k) => {
                self.open.insert(k, (a, b, self.log.len()));
                self.log.push(Encounter {
                    a,
                    b,
                    start: time,
                    end: None,
                    closest_at: time,
                    min_separation_m: d,
                    pos_a_ned_m: pa.pos_ned_m,
                    pos_b_ned_m: pb.pos_ned_m,
                    collided: None,
                    tick_seen: self.tick,
                });
                self.log.len() - 1
            }
        };
        let touching = d < self.radius(a) + self.radius(b);
        let Some(e) = self.log.get_mut(at) else {
            return;
        };
        e.tick_seen = self.tick;
        if d < e.min_separation_m {
            e.min_separation_m = d;
            e.closest_at = time;
            e.pos_a_ned_m = pa.pos_ned_m;
            e.pos_b_ned_m = pb.pos_ned_m;
        }
        if touching && e.collided.is_none() {
            e.collided = Some(time);
            let line = (pb.pos_ned_m - pa.pos_ned_m) / d.max(1e-9);
            self.collisions.push(Collision {
                time,
                a,
                b,
                point_ned_m: (pa.pos_ned_m + pb.pos_ned_m) / 2.0,
                separation_m: d,
                closing_speed_m_s: -(pb.vel_ned_m_s - pa.vel_ned_m_s).dot(&line),
            });
        }
    }

    /// Ends the encounters not seen this tick.
    fn close_left(&mut self, time: SimTime) {
        let (log, tick) = (&mut self.log, self.tick);
        self.open.retain(|&(_, _, e)| match log.get_mut(e) {
            Some(e) if e.tick_seen == tick => true,
            Some(e) => {
                e.end = Some(time);
                false
            }
            None => false,
        });
    }

    fn radius(&self, i: usize) -> f64 {
        self.radii_m.get(i).copied().unwrap_or(0.0)
    }
}

/// Sorts the vehicle indices `order` by their cells (north, then east) by
/// insertion: linear when the order barely changed since the last tick.
fn sort_by_cell(order: &mut [usize], cells: &[(i64, i64)]) {
    let key = |i: usize| cells.get(i).copied().unwrap_or((0, 0));
    for k in 1..order.len() {
        let mut j = k;
        while j > 0 && key(order[j - 1]) > key(order[j]) {
            order.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// The index of the grid cell, `cell_m` wide, holding coordinate `v` (m):
/// cell `k` spans `[k·cell_m, (k+1)·cell_m)`. A position too far out (or
/// not finite) shares the outermost (or the origin's) cell, where the
/// pairs are still measured.
fn grid_cell(v: f64, cell_m: f64) -> i64 {
    let c = (v / cell_m).floor();
    if c.is_finite() {
        c.clamp(-1e15, 1e15) as i64
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(x: f64, y: f64, z: f64) -> Placed {
        Placed {
            pos_ned_m: Vector3::new(x, y, z),
            vel_ned_m_s: Vector3::zeros(),
        }
    }

    /// The pairs of the encounters in progress, sorted.
    fn open_pairs(m: &EncounterMonitor) -> Vec<(usize, usize)> {
        let mut open: Vec<(usize, usize)> = m
            .encounters()
            .iter()
            .filter(|e| e.end.is_none())
            .map(|e| (e.a, e.b))
            .collect();
        open.sort_unstable();
        open
    }

    /// Brute force: every pair's separation.
    fn closest_pairs(placed: &[Placed], range: f64) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        for a in 0..placed.len() {
            for b in a + 1..placed.len() {
                if (placed[a].pos_ned_m - placed[b].pos_ned_m).norm() <= range {
                    v.push((a, b));
                }
            }
        }
        v
    }

    #[test]
    fn the_sweep_finds_exactly_the_pairs_brute_force_finds() {
        // 200 vehicles scattered (a fixed LCG), moving between ticks.
        let mut s = 12345u64;
        let mut rnd = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut placed: Vec<Placed> = (0..200)
            .map(|_| at(rnd() * 400.0, rnd() * 400.0, -rnd() * 50.0))
            .collect();
        let mut m = EncounterMonitor::new(vec![0.3; 200], 15.0);
        for tick in 0..20u64 {
            for p in &mut placed {
                p.pos_ned_m.x += rnd() * 6.0 - 3.0;
            }
            m.update(SimTime::from_micros(tick * 4000), &placed);
            let open = open_pairs(&m);
            assert_eq!(open, closest_pairs(&placed, 15.0), "tick {tick}");
        }
    }

    #[test]
    fn a_line_across_the_grid_finds_the_same_pairs_as_brute_force() {
        // `--count`'s layout: 300 vehicles 5 m apart east to west, on both
        // sides of the origin (cells of negative index), drifting north and
        // east by up to a cell between ticks; 5 m apart in a 20 m range
        // each has up to 8 neighbours, 4 in the next cell.
        let mut placed: Vec<Placed> = (0..300)
            .map(|i| at(0.1, -750.0 + 5.0 * i as f64, -10.0))
            .collect();
        let mut m = EncounterMonitor::new(vec![0.3; 300], 20.0);
        for tick in 0..12u64 {
            for (i, p) in placed.iter_mut().enumerate() {
                p.pos_ned_m.x += 7.0 * ((i as f64) * 0.37 + tick as f64).sin();
                p.pos_ned_m.y += 3.0 * ((i as f64) * 0.11 - tick as f64).cos();
            }
            m.update(SimTime::from_micros(tick * 4000), &placed);
            let open = open_pairs(&m);
            let want = closest_pairs(&placed, 20.0);
            assert!(want.len() > 500, "tick {tick}: {} pairs", want.len());
            assert_eq!(open, want, "tick {tick}");
        }
    }

    #[test]
    fn cells_count_from_the_origin_both_ways() {
        assert_eq!(grid_cell(0.0, 20.0), 0);
        assert_eq!(grid_cell(19.9, 20.0), 0);
        assert_eq!(grid_cell(20.0, 20.0), 1);
        assert_eq!(grid_cell(-0.1, 20.0), -1);
        assert_eq!(grid_cell(-40.5, 20.0), -3);
        assert_eq!(grid_cell(1e30, 1.0), 1_000_000_000_000_000);
        assert_eq!(grid_cell(-1e30, 1.0), -1_000_000_000_000_000);
        assert_eq!(grid_cell(f64::NAN, 1.0), 0);
    }

    #[test]
    fn the_proximity_range_is_at_least_two_of_the_widest_radius() {
        assert_eq!(
            EncounterMonitor::new(vec![0.5, 4.0], 5.0).proximity_m(),
            8.0
        );
        assert_eq!(
            EncounterMonitor::new(vec![0.5, 2.0], 5.5).proximity_m(),
            5.5
        );
    }

    #[test]
    fn the_vehicles_are_kept_in_cell_order() {
        // Placed in falling order, north then east; the sweep's order is
        // by (north cell, east cell), rising.
        let placed: Vec<Placed> = (0..12)
            .map(|i| at(-30.0 * (i / 4) as f64, 50.0 - 25.0 * (i % 4) as f64, 0.0))
            .collect();
        let mut m = EncounterMonitor::new(vec![0.3; 12], 10.0);
        m.update(SimTime::from_micros(1000), &placed);
        let keys: Vec<(i64, i64)> = m.order.iter().map(|&i| m.cells[i]).collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        assert_eq!(keys, sorted);
        assert_eq!(keys[0], (-6, -3));
        assert_eq!(keys[11], (0, 5));
    }

    #[test]
    fn a_pair_exactly_at_the_range_is_an_encounter_and_a_steady_one_is_closest_first() {
        // 3-4-5: exactly 5 m apart, for three ticks.
        let mut m = EncounterMonitor::new(vec![0.5, 0.5], 5.0);
        for k in 1..=3 {
            let new = m.update(
                SimTime::from_micros(k * 1000),
                &[at(0.0, 0.0, 0.0), at(3.0, 4.0, 0.0)],
            );
            assert_eq!(new, 0);
        }
        let e = m.encounters();
        assert_eq!(e.len(), 1);
        assert_eq!((e[0].min_separation_m, e[0].end), (5.0, None));
        assert_eq!(e[0].closest_at, SimTime::from_micros(1000));
        // A hair beyond it, none.
        let mut m = EncounterMonitor::new(vec![0.5, 0.5], 5.0);
        m.update(
            SimTime::from_micros(1000),
            &[at(0.0, 0.0, 0.0), at(3.0, 4.000_001, 0.0)],
        );
        assert!(m.encounters().is_empty());
    }

    #[test]
    fn vehicles_touching_from_the_first_tick_collide_then_and_only_once() {
        let mut m = EncounterMonitor::new(vec![0.5, 0.5, 0.5], 5.0);
        let placed = [at(0.0, 0.0, 0.0), at(0.6, 0.0, 0.0), at(0.0, 3.0, 0.0)];
        assert_eq!(m.update(SimTime::from_micros(1000), &placed), 1);
        assert_eq!(m.update(SimTime::from_micros(2000), &placed), 0);
        let c = m.collisions();
        assert_eq!(c.len(), 1);
        assert_eq!(
            (c[0].a, c[0].b, c[0].time),
            (0, 1, SimTime::from_micros(1000))
        );
        assert_eq!(m.encounters()[0].collided, Some(SimTime::from_micros(1000)));
        // The third, 3 m off, was an encounter without a touch.
        assert_eq!(m.encounters().len(), 3);
        // A count of vehicles other than the monitor's is refused.
        assert_eq!(m.update(SimTime::from_micros(3000), &placed[..2]), 0);
    }

    #[test]
    fn a_pass_gives_its_closest_approach_and_a_touch_one_collision() {
        // B passes A along north at 2 m east, 1 m per tick; radii 0.5 m.
        let mut m = EncounterMonitor::new(vec![0.5, 0.5], 5.0);
        for k in 0..21 {
            let n = -10.0 + k as f64;
            m.update(
                SimTime::from_micros(k * 1000),
                &[at(0.0, 0.0, 0.0), at(n, 2.0, 0.0)],
            );
        }
        let e = m.encounters();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].min_separation_m, 2.0);
        assert_eq!(e[0].closest_at, SimTime::from_micros(10_000));
        // Within 5 m from n = −4 (k = 6) to n = 4; left at k = 15.
        assert_eq!(e[0].start, SimTime::from_micros(6_000));
        assert_eq!(e[0].end, Some(SimTime::from_micros(15_000)));
        assert!(m.collisions().is_empty());
        // Head on, closing at 2 m/s: touching once closer than 1 m, midway.
        let mut m = EncounterMonitor::new(vec![0.5, 0.5], 5.0);
        let vel = |v: f64, p: Placed| Placed {
            vel_ned_m_s: Vector3::new(v, 0.0, 0.0),
            ..p
        };
        for k in 0..10 {
            let d = 4.5 - 0.5 * k as f64;
            m.update(
                SimTime::from_micros(k * 1000),
                &[
                    vel(1.0, at(10.0 - d / 2.0, -4.0, -2.0)),
                    vel(-1.0, at(10.0 + d / 2.0, -4.0, -2.0)),
                ],
            );
        }
        let c = m.collisions();
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].time, SimTime::from_micros(8_000));
        assert_eq!((c[0].a, c[0].b), (0, 1));
        assert!((c[0].separation_m - 0.5).abs() < 1e-12);
        assert!((c[0].closing_speed_m_s - 2.0).abs() < 1e-12);
        assert_eq!(c[0].point_ned_m, Vector3::new(10.0, -4.0, -2.0));
    }
}
