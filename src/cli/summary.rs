//! The flight summary every mission flight prints (`fly`, `px4 --mission`,
//! `ardupilot --mission`): the same rows, measured the same way on ground
//! truth by [`mavsitl::metrics`], so the outputs of different controllers
//! compare line by line. Fleets add their encounters and collisions.

use mavsitl::metrics::FlightMetrics;
use mavsitl::sim::Simulation;

/// What a summary reports.
pub(super) struct FlightSummary<'a> {
    /// The heading: "mavsitl fly <mission> (quad, seed 0)" and the like.
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

impl FlightSummary<'_> {
    /// Prints the common rows on stdout.
    pub fn print(&self) {
        let m = self.metrics;
        println!("{}", self.title);
        println!(
            "  result              {}",
            match self.outcome {
                Ok(()) => "mission completed".to_string(),
                Err(e) => format!("FAILED: {e}"),
            }
        );
        println!("  sim time            {:.1} s", self.sim_s);
        println!("  wall time           {:.2} s", self.wall_s);
        if self.wall_s > 0.0 {
            println!("  real-time factor    {:.0}x", self.sim_s / self.wall_s);
        }
        println!("  distance            {:.1} m", m.distance_m);
        println!("  items reached       {} / {}", self.items.0, self.items.1);
        println!(
            "  cross-track         RMS {:.3} m, max {:.3} m (ground truth against the plan's route)",
            m.xtrack_rms_m(),
            m.xtrack_max_m()
        );
        println!("  max speed           {:.2} m/s", m.max_speed_m_s);
        if let Some(p) = m.last_ned_m {
            let from_start = m
                .from_start_m()
                .map_or_else(|| "never started".to_string(), |d| format!("{d:.2} m"));
            println!(
                "  final position      N {:.2} E {:.2} D {:.2} m, {from_start} from the take-off point",
                p.x, p.y, p.z
            );
        }
    }
}

/// The one summary row of a world's encounters (none with one vehicle).
pub(super) fn print_encounter_row(sim: &Simulation) {
    if let Some(e) = sim.encounters() {
        println!(
            "  encounters          {} (within {:.0} m), {} collisions",
            e.encounters().len(),
            e.proximity_m(),
            e.collisions().len()
        );
    }
}
