//! `ground_truth.csv`: the true state of one vehicle, EuRoC-style.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::rows::RowFile;
use std::path::Path;

use crate::sim::Simulation;
use mavsitl_core::geo::ExportFrame;
use mavsitl_core::time::Rate;

/// The EuRoC ground-truth header (positions and velocities in the world frame R,
/// rates in the body frame S).
pub const HEADER: &str = "#timestamp [ns],p_RS_R_x [m],p_RS_R_y [m],p_RS_R_z [m],q_RS_w [],q_RS_x [],q_RS_y [],q_RS_z [],v_RS_R_x [m s^-1],v_RS_R_y [m s^-1],v_RS_R_z [m s^-1],w_RS_S_x [rad s^-1],w_RS_S_y [rad s^-1],w_RS_S_z [rad s^-1]";

/// The header of `battery.csv`, written beside the ground truth at its rate.
pub const BATTERY_HEADER: &str =
    "#timestamp [ns],voltage [V],current [A],consumed [mAh],energy [J],remaining []";

/// Writes one vehicle's ground truth (`ground_truth.csv`), the true state
/// of its battery (`battery.csv`) and the commands its controller gave
/// (`actuators.csv`: `u0 … u{n−1}`, the airframe's channels, normalised as
/// the physics takes them) in one directory, at a fixed rate.
pub struct GroundTruthWriter {
    out: RowFile,
    battery: RowFile,
    actuators: RowFile,
    channels: usize,
    vehicle: usize,
    frame: ExportFrame,
    rate: Rate,
}

impl GroundTruthWriter {
    /// Creates the files and writes their headers; `channels` actuator
    /// channels are recorded.
    ///
    /// # Errors
    /// I/O errors.
    pub fn create(
        path: &Path,
        vehicle: usize,
        frame: ExportFrame,
        rate: Rate,
        channels: usize,
    ) -> io::Result<Self> {
        let out = RowFile::with_header(path, HEADER)?;
        let battery = RowFile::with_header(&path.with_file_name("battery.csv"), BATTERY_HEADER)?;
        let mut header = String::from("#timestamp [ns]");
        for i in 0..channels {
            let _ = write!(header, ",u{i} []");
        }
        let actuators = RowFile::with_header(&path.with_file_name("actuators.csv"), &header)?;
        Ok(GroundTruthWriter {
            out,
            battery,
            actuators,
            channels,
            vehicle,
            frame,
            rate,
        })
    }

    /// Writes the row for the simulation's current time.
    ///
    /// # Errors
    /// I/O errors.
    pub fn write_row(&mut self, sim: &Simulation) -> io::Result<()> {
        let Some(v) = sim.vehicles().get(self.vehicle) else {
            return Ok(());
        };
        let s = &v.body().state;
        let p = self.frame.world_vector(&s.pos_ned_m);
        let q = self.frame.attitude(&s.att_ned_frd);
        let vel = self.frame.world_vector(&s.vel_ned_m_s);
        let w = self.frame.body_vector(&s.rate_frd_rad_s);
        let b = v.battery().state();
        if let Some(a) = sim.actuators(self.vehicle) {
            write!(self.actuators, "{}", sim.time().as_nanos())?;
            for c in a.controls.iter().take(self.channels) {
                write!(self.actuators, ",{c}")?;
            }
            writeln!(self.actuators)?;
        }
        writeln!(
            self.battery,
            "{},{},{},{},{},{}",
            sim.time().as_nanos(),
            b.voltage_v,
            b.current_a,
            b.consumed_mah,
            b.consumed_j,
            b.remaining
        )?;
        writeln!(
            self.out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            sim.time().as_nanos(),
            p.x,
            p.y,
            p.z,
            q.w,
            q.i,
            q.j,
            q.k,
            vel.x,
            vel.y,
            vel.z,
            w.x,
            w.y,
            w.z
        )
    }

    /// Writes a row if this tick is one of the recording rate's.
    ///
    /// # Errors
    /// I/O errors.
    pub fn on_tick(&mut self, sim: &Simulation) -> io::Result<()> {
        if self.rate.is_due(sim.tick()) {
            self.write_row(sim)?;
        }
        Ok(())
    }

    /// Flushes buffered rows.
    ///
    /// # Errors
    /// I/O errors.
    pub fn flush(&mut self) -> io::Result<()> {
        self.battery.flush()?;
        self.actuators.flush()?;
        self.out.flush()
    }
}
