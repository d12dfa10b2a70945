//! SimpleFlight's flight of a mission, as `fly` runs it: watched tick by
//! tick (the summary's figures, path following on the estimate, the
//! recording's SimpleFlight rows), over when the mission is, and served to
//! ground stations when asked.

use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

use mavsitl_analysis::flight::FlightMetrics;
use mavsitl_core::time::SimTime;
use mavsitl_sim::record::rows::RowFile;
use mavsitl_sim::sim::{Lockstep, Observer, SimError, Simulation};
use mavsitl_simpleflight::params::ParamStore;
use mavsitl_simpleflight::{FlightStatus, StatusHandle};

use crate::session::{Driver, Step};

/// Path following on SimpleFlight's own estimate, and the estimate's
/// error (the ground-truth figures are the shared [`FlightMetrics`]).
#[derive(Debug, Default, Clone)]
pub struct PathStats {
    xtrack_sq: f64,
    xtrack_n: u64,
    xtrack_max_m: f64,
    est_sq: f64,
    est_n: u64,
}

impl PathStats {
    /// Cross-track of the estimate from the leg flown, RMS and max, m.
    pub fn path_following_m(&self) -> (f64, f64) {
        let n = self.xtrack_n.max(1) as f64;
        ((self.xtrack_sq / n).sqrt(), self.xtrack_max_m)
    }

    /// The estimate's position error against ground truth while armed
    /// (sampled every 10 physics ticks: 10 ms at 1 kHz, 40 ms at 250 Hz),
    /// RMS, m.
    pub fn estimator_rms_m(&self) -> f64 {
        if self.est_n > 0 {
            (self.est_sq / self.est_n as f64).sqrt()
        } else {
            0.0
        }
    }
}

/// Watches SimpleFlight's flight tick by tick: the summary's figures on
/// ground truth, path following on its estimate, and (recording) the
/// `estimator.csv`, `mission_events.csv` and `statustext.csv` rows.
pub struct FlightWatch {
    status: StatusHandle,
    stats: PathStats,
    metrics: FlightMetrics,
    est_csv: Option<RowFile>,
    /// When the next `estimator.csv` row is due (50 Hz of sim time, whatever
    /// the physics rate).
    est_next: SimTime,
    /// `mission_events.csv`, written as the events come, and how far.
    events_csv: Option<RowFile>,
    /// `statustext.csv`: the STATUSTEXT the events make on a ground station.
    statustext_csv: Option<RowFile>,
    events_seen: usize,
}

impl FlightWatch {
    /// Watches the flight `status` reports, measured by `metrics`; with
    /// `record`, writes `params.parm` (`params`) there and opens its rows.
    ///
    /// # Errors
    /// A file that cannot be created.
    pub fn new(
        status: StatusHandle,
        metrics: FlightMetrics,
        record: Option<&Path>,
        params: &ParamStore,
    ) -> std::io::Result<Self> {
        let files = FlightFiles::open(record, params)?;
        Ok(FlightWatch {
            status,
            stats: PathStats::default(),
            metrics,
            est_csv: files.estimator,
            est_next: SimTime::ZERO,
            events_csv: files.events,
            statustext_csv: files.statustext,
            events_seen: 0,
        })
    }

    /// The figures on ground truth.
    pub fn metrics(&self) -> &FlightMetrics {
        &self.metrics
    }

    /// Path following on the estimate.
    pub fn path_stats(&self) -> &PathStats {
        &self.stats
    }

    /// Writes what is left: the estimator rows buffered, the events not
    /// yet written.
    pub fn flush(&mut self) {
        if let Some(w) = self.est_csv.as_mut() {
            let _ = w.flush();
        }
        let _ = self.write_events();
    }

    /// Appends SimpleFlight's events not yet written to `mission_events.csv`.
    fn write_events(&mut self) -> std::io::Result<()> {
        let Some(w) = self.events_csv.as_mut() else {
            return Ok(());
        };
        let st = self.status.borrow();
        for e in st.events.since(self.events_seen) {
            if let Some(t) = self.statustext_csv.as_mut() {
                for (sev, text) in mavsitl_simpleflight::gcs::event_statustexts(e) {
                    writeln!(
                        t,
                        "{},{sev:?},{}",
                        e.time.as_nanos(),
                        text.replace(',', ";")
                    )?;
                }
            }
            writeln!(
                w,
                "{},{},{},{}",
                e.time.as_nanos(),
                e.kind,
                e.item.map_or(String::new(), |i| i.to_string()),
                e.detail.replace(',', ";")
            )?;
        }
        self.events_seen = st.events.end();
        if let Some(t) = self.statustext_csv.as_mut() {
            t.flush()?;
        }
        w.flush()
    }
}

/// `estimator.csv`'s row interval, µs (50 Hz).
const EST_ROW_US: u64 = 20_000;

impl Observer for FlightWatch {
    fn on_tick(&mut self, sim: &Simulation) -> std::io::Result<()> {
        let Some(v) = sim.vehicles().first() else {
            return Ok(());
        };
        let t = &v.body().state;
        let st = self.status.borrow();
        let on_mission = st.armed && !st.finished && !st.landed;
        self.metrics.sample(sim.tick(), t, on_mission);
        if let (Some((o, d)), Some(e)) = (st.leg, st.estimate) {
            let track = (d - o).xy();
            if track.norm() > 1.0 {
                let u = track.normalize();
                let rel = (e.pos_ned_m - o).xy();
                let x = (rel.x * u.y - rel.y * u.x).abs();
                self.stats.xtrack_sq += x * x;
                self.stats.xtrack_n += 1;
                self.stats.xtrack_max_m = self.stats.xtrack_max_m.max(x);
            }
        }
        if let Some(e) = st.estimate {
            if st.armed && sim.tick().is_multiple_of(10) {
                let d = (e.pos_ned_m - t.pos_ned_m).norm();
                self.stats.est_sq += d * d;
                self.stats.est_n += 1;
            }
            if let Some(w) = self.est_csv.as_mut() {
                if sim.time() >= self.est_next {
                    self.est_next = SimTime::from_micros(
                        (sim.time().as_micros() / EST_ROW_US + 1) * EST_ROW_US,
                    );
                    let q = e.att_ned_frd;
                    writeln!(
                        w,
                        "{},{},{},{},{},{},{},{},{},{},{}",
                        sim.time().as_nanos(),
                        e.pos_ned_m.x,
                        e.pos_ned_m.y,
                        e.pos_ned_m.z,
                        e.vel_ned_m_s.x,
                        e.vel_ned_m_s.y,
                        e.vel_ned_m_s.z,
                        q.w,
                        q.i,
                        q.j,
                        q.k
                    )?;
                }
            }
        }
        let new_events = st.events.end() > self.events_seen;
        drop(st);
        if new_events {
            self.write_events()?;
        }
        Ok(())
    }
}

/// The recording's SimpleFlight files: `params.parm` written at once,
/// `estimator.csv`, `mission_events.csv` and `statustext.csv` opened with
/// their headers.
struct FlightFiles {
    estimator: Option<RowFile>,
    events: Option<RowFile>,
    statustext: Option<RowFile>,
}

impl FlightFiles {
    fn open(dir: Option<&Path>, params: &ParamStore) -> std::io::Result<Self> {
        let Some(dir) = dir else {
            return Ok(FlightFiles {
                estimator: None,
                events: None,
                statustext: None,
            });
        };
        let _ = std::fs::write(dir.join("params.parm"), params.to_file());
        let file = |name: &str, header: &str| -> std::io::Result<Option<RowFile>> {
            RowFile::with_header(&dir.join(name), header).map(Some)
        };
        Ok(FlightFiles {
            estimator: file("estimator.csv", "#timestamp [ns],p_N [m],p_E [m],p_D [m],v_N [m s^-1],v_E [m s^-1],v_D [m s^-1],q_w [],q_x [],q_y [],q_z []")?,
            events: file("mission_events.csv", "#timestamp [ns],event,item,detail")?,
            statustext: file("statustext.csv", "#timestamp [ns],severity,text")?,
        })
    }
}

/// Sim time between services of the ground-station link, µs.
pub const GCS_SERVICE_US: u64 = 4_000;

/// A flight's ground-station link, served from the run loop.
pub trait VehicleLink {
    /// Answers what came and sends what is due at sim time `now`.
    fn service(&mut self, now: SimTime);
    /// Waits up to `d` of wall time for the next datagram.
    fn wait(&mut self, d: Duration);
    /// Cuts the link (a `gcs_link_loss` fault): nothing in, nothing out.
    fn set_silent(&mut self, silent: bool);
}

/// SimpleFlight flying the mission, watched, and served to ground
/// stations on its link when it has one.
pub struct FlightDriver<L: VehicleLink> {
    /// The watch.
    pub watch: FlightWatch,
    /// The link, if served.
    pub link: Option<L>,
    /// When SimpleFlight reported the mission finished.
    finished_at: Option<SimTime>,
}

impl<L: VehicleLink> FlightDriver<L> {
    /// Flies under `watch`, served on `link`.
    pub fn new(watch: FlightWatch, link: Option<L>) -> Self {
        FlightDriver {
            watch,
            link,
            finished_at: None,
        }
    }
}

impl<L: VehicleLink> Driver<Lockstep> for FlightDriver<L> {
    fn on_tick(&mut self, sim: &Simulation) -> std::io::Result<()> {
        self.watch.on_tick(sim)
    }

    fn serve(&mut self, ls: &mut Lockstep) -> Step<Lockstep> {
        if let Some(s) = self.link.as_mut() {
            s.service(ls.sim().time());
        }
        Step::Go
    }

    fn idle(&mut self, ls: &mut Lockstep, d: Duration) -> Step<Lockstep> {
        match self.link.as_mut() {
            Some(s) => {
                s.service(ls.sim().time());
                s.wait(d);
            }
            None => std::thread::sleep(d),
        }
        Step::Go
    }

    fn after_tick(&mut self, ls: &mut Lockstep, tick: Result<(), SimError>) -> Step<Lockstep> {
        if let Err(e) = tick {
            return Step::End(Err(format!("simulation stopped: {e}")));
        }
        if let Some(s) = self.link.as_mut() {
            s.set_silent(link_cut(ls.sim()));
        }
        let now = ls.sim().time();
        let st = self.watch.status.borrow();
        match flight_over(&st, &self.watch.metrics, now, &mut self.finished_at) {
            Some(end) => Step::End(end),
            None => Step::Go,
        }
    }
}

/// Whether the flight is over at `now`: failed, crashed, landed and
/// disarmed, or finished and holding for 2 s.
pub fn flight_over(
    st: &FlightStatus,
    metrics: &FlightMetrics,
    now: SimTime,
    finished_at: &mut Option<SimTime>,
) -> Option<Result<(), String>> {
    if let Some(f) = &st.failure {
        return Some(Err(f.clone()));
    }
    if let Some(c) = &metrics.crashed {
        return Some(Err(format!("crash: {c} at {now}")));
    }
    if st.finished && finished_at.is_none() {
        *finished_at = Some(now);
    }
    ((st.landed && !st.armed) || finished_at.is_some_and(|t| now - t >= 2_000_000))
        .then_some(Ok(()))
}

/// A flight that ended without completing its mission fails: by a
/// failsafe, or by the timeout.
pub fn judge_end(outcome: &mut Result<(), String>, st: &FlightStatus, timeout_s: f64) {
    if let (true, false, Some(fs)) = (outcome.is_ok(), st.finished, &st.failsafe) {
        *outcome = Err(format!("mission not completed: {fs}"));
    }
    if outcome.is_ok() && !(st.finished || st.landed) {
        *outcome = Err(format!(
            "timeout: mission not completed after {timeout_s} s of sim time"
        ));
    }
}

/// Whether the flight's link is cut by a `gcs_link_loss` fault.
fn link_cut(sim: &Simulation) -> bool {
    sim.vehicles()
        .first()
        .is_some_and(|v| v.faults().links.gcs_lost)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mavsitl_analysis::Route;
    use mavsitl_core::geo::{GeoPoint, LocalFrame};
    use mavsitl_core::time::Rate;
    use mavsitl_mavlink::mission::Mission;

    fn metrics() -> FlightMetrics {
        let frame = LocalFrame::new(GeoPoint::from_deg(47.0, 8.0, 400.0));
        FlightMetrics::new(
            Route::new(&Mission::default(), &frame, 2.0),
            Rate::EVERY_TICK,
        )
    }

    fn at(s: f64) -> SimTime {
        SimTime::from_secs_f64(s)
    }

    #[test]
    fn a_finished_mission_ends_the_flight_two_seconds_later() {
        let st = FlightStatus {
            armed: true,
            finished: true,
            ..FlightStatus::default()
        };
        let (m, mut finished_at) = (metrics(), None);
        assert_eq!(flight_over(&st, &m, at(10.0), &mut finished_at), None);
        assert_eq!(finished_at, Some(at(10.0)));
        assert_eq!(flight_over(&st, &m, at(11.999), &mut finished_at), None);
        assert_eq!(
            flight_over(&st, &m, at(12.0), &mut finished_at),
            Some(Ok(()))
        );
    }

    #[test]
    fn landing_disarmed_ends_it_at_once_and_a_failure_fails_it() {
        let (m, mut none) = (metrics(), None);
        let landed = FlightStatus {
            landed: true,
            ..FlightStatus::default()
        };
        assert_eq!(flight_over(&landed, &m, at(5.0), &mut none), Some(Ok(())));
        let landed_armed = FlightStatus {
            armed: true,
            ..landed.clone()
        };
        assert_eq!(flight_over(&landed_armed, &m, at(5.0), &mut none), None);
        let failed = FlightStatus {
            failure: Some("motor 2 lost".into()),
            ..FlightStatus::default()
        };
        assert_eq!(
            flight_over(&failed, &m, at(5.0), &mut none),
            Some(Err("motor 2 lost".into()))
        );
    }

    #[test]
    fn an_unfinished_mission_fails_by_its_failsafe_or_the_timeout() {
        let mut outcome = Ok(());
        let landed_by_failsafe = FlightStatus {
            landed: true,
            failsafe: Some("battery low: land".into()),
            ..FlightStatus::default()
        };
        judge_end(&mut outcome, &landed_by_failsafe, 600.0);
        assert_eq!(
            outcome,
            Err("mission not completed: battery low: land".into())
        );
        let mut outcome = Ok(());
        judge_end(&mut outcome, &FlightStatus::default(), 600.0);
        assert_eq!(
            outcome,
            Err("timeout: mission not completed after 600 s of sim time".into())
        );
        let mut outcome = Ok(());
        let done = FlightStatus {
            finished: true,
            failsafe: Some("wind".into()),
            ..FlightStatus::default()
        };
        judge_end(&mut outcome, &done, 600.0);
        assert_eq!(outcome, Ok(()));
    }
}
