//! The text of a run's summary: the rows every mission flight prints
//! (`fly`, `px4 --mission`, `ardupilot --mission`), measured the same way on
//! ground truth by [`mavsitl_analysis::flight`], so that the outputs of
//! different controllers compare line by line; and the rows of a world's
//! encounters. Each is a [`Display`](std::fmt::Display): the caller decides
//! where it goes (the CLI prints it on stdout).

use std::fmt;

use mavsitl_analysis::flight::FlightMetrics;
use mavsitl_sim::sim::Simulation;
use mavsitl_simpleflight::FlightStatus;

use crate::flight::PathStats;

/// A mission flight's summary: a heading, then one row per figure.
pub struct FlightSummary<'a> {
    /// The heading: "mavsitl fly `<mission>` (quad, seed 0)" and the like.
    pub title: String,
    /// How the flight ended.
    pub outcome: &'a Result<(), String>,
    /// Sim time at the end, s.
    pub sim_s: f64,
    /// Wall time of the flight, s.
    pub wall_s: f64,
    /// (items reached, items to reach).
    pub items: (usize, usize),
    /// Metrics on ground truth.
    pub metrics: &'a FlightMetrics,
}

impl fmt::Display for FlightSummary<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.metrics;
        writeln!(f, "{}", self.title)?;
        match self.outcome {
            Ok(()) => writeln!(f, "  result              mission completed")?,
            Err(e) => writeln!(f, "  result              FAILED: {e}")?,
        }
        writeln!(f, "  sim time            {:.1} s", self.sim_s)?;
        writeln!(f, "  wall time           {:.2} s", self.wall_s)?;
        if self.wall_s > 0.0 {
            writeln!(f, "  real-time factor    {:.0}x", self.sim_s / self.wall_s)?;
        }
        writeln!(f, "  distance            {:.1} m", m.distance_m)?;
        writeln!(
            f,
            "  items reached       {} / {}",
            self.items.0, self.items.1
        )?;
        writeln!(
            f,
            "  cross-track         RMS {:.3} m, max {:.3} m (ground truth against the plan's route)",
            m.xtrack_rms_m(),
            m.xtrack_max_m()
        )?;
        writeln!(f, "  max speed           {:.2} m/s", m.max_speed_m_s)?;
        if let Some(p) = m.last_ned_m {
            let from_start = m
                .from_start_m()
                .map_or_else(|| "never started".to_string(), |d| format!("{d:.2} m"));
            writeln!(
                f,
                "  final position      N {:.2} E {:.2} D {:.2} m, {from_start} from the take-off point",
                p.x, p.y, p.z
            )?;
        }
        Ok(())
    }
}

/// The rows only SimpleFlight has: path following on its own estimate,
/// where it ended against its home, and its estimator's error.
pub struct AutopilotRows<'a> {
    /// What the flight watch measured.
    pub stats: &'a PathStats,
    /// SimpleFlight's own status at the end.
    pub status: &'a FlightStatus,
}

impl fmt::Display for AutopilotRows<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (rms, max) = self.stats.path_following_m();
        writeln!(
            f,
            "  path following      RMS {rms:.3} m, max {max:.3} m (on the autopilot's estimate against the leg it flies)"
        )?;
        if let (Some(e), Some(h)) = (self.status.estimate, self.status.home_ned) {
            writeln!(
                f,
                "  final vs home       {:.2} m (autopilot's estimate vs its home)",
                (e.pos_ned_m - h).xy().norm()
            )?;
        }
        writeln!(
            f,
            "  estimator error     RMS {:.3} m (position vs truth)",
            self.stats.estimator_rms_m()
        )
    }
}

/// The one summary row of a world's encounters; nothing for a world
/// without an encounter sweep (one vehicle).
pub struct EncounterRow<'a>(pub &'a Simulation);

impl fmt::Display for EncounterRow<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(e) = self.0.encounters() else {
            return Ok(());
        };
        writeln!(
            f,
            "  encounters          {} (within {:.0} m), {} collisions",
            e.encounters().len(),
            e.proximity_m(),
            e.collisions().len()
        )
    }
}

/// A world's encounters in full: their count, the closest approach and
/// every collision; nothing without an encounter sweep.
pub struct Encounters<'a>(pub &'a Simulation);

impl fmt::Display for Encounters<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sim = self.0;
        let Some(e) = sim.encounters() else {
            return Ok(());
        };
        let closest = e
            .encounters()
            .iter()
            .min_by(|a, b| a.min_separation_m.total_cmp(&b.min_separation_m));
        let name = |i: usize| sim.vehicles().get(i).map_or("?", |v| v.name());
        writeln!(f, "encounters (pairs within {:.1} m)", e.proximity_m())?;
        writeln!(f, "  encounters          {}", e.encounters().len())?;
        if let Some(c) = closest {
            writeln!(
                f,
                "  closest approach    {:.2} m, '{}' and '{}' at {}",
                c.min_separation_m,
                name(c.a),
                name(c.b),
                c.closest_at
            )?;
        }
        writeln!(f, "  collisions          {}", e.collisions().len())?;
        for c in e.collisions() {
            writeln!(
                f,
                "    {}",
                mavsitl_analysis::encounters::collision_line(sim, c)
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use mavsitl_analysis::route::Route;
    use mavsitl_core::time::Rate;
    use nalgebra::Vector3;

    use super::*;

    fn metrics() -> FlightMetrics {
        let mut m = FlightMetrics::new(Route::default(), Rate::EVERY_TICK);
        m.distance_m = 412.34;
        m.max_speed_m_s = 5.678;
        m.start_ned_m = Some(Vector3::new(1.0, 2.0, 0.0));
        m.last_ned_m = Some(Vector3::new(4.0, 6.0, -0.5));
        m
    }

    /// Every row, with its figure rounded as printed; the real-time factor
    /// only when the wall time is above zero.
    #[test]
    fn a_flight_summary_has_every_row_with_its_figure() {
        let m = metrics();
        let failed = Err("no GPS".to_string());
        let s = FlightSummary {
            title: "mavsitl fly p (quad, seed 3)".into(),
            outcome: &failed,
            sim_s: 120.04,
            wall_s: 0.25,
            items: (5, 6),
            metrics: &m,
        }
        .to_string();
        let want = [
            "mavsitl fly p (quad, seed 3)",
            "  result              FAILED: no GPS",
            "  sim time            120.0 s",
            "  wall time           0.25 s",
            "  real-time factor    480x",
            "  distance            412.3 m",
            "  items reached       5 / 6",
            "  max speed           5.68 m/s",
            "  final position      N 4.00 E 6.00 D -0.50 m, 5.00 m from the take-off point",
        ];
        for w in want {
            assert!(s.lines().any(|l| l == w), "missing {w:?} in\n{s}");
        }
        let ok = Ok(());
        let s = FlightSummary {
            title: String::new(),
            outcome: &ok,
            sim_s: 1.0,
            wall_s: 0.0,
            items: (0, 0),
            metrics: &m,
        }
        .to_string();
        assert!(
            s.contains("  result              mission completed\n"),
            "{s}"
        );
        assert!(!s.contains("real-time factor"), "{s}");
    }
}
