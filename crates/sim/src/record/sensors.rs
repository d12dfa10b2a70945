//! `imu.csv`, `gps.csv`, `baro.csv`, `mag.csv`, `range.csv`: every sample of one vehicle's
//! sensors, as produced (GPS rows at their delivery time, with the measurement
//! time beside it).
//!
//! Headers name units and frames. IMU and magnetometer vectors are in the
//! sensor's own axes (FRD-like for an unrotated mount; FLU when exporting ENU or
//! ISO 8855), the IMU file in EuRoC's layout.

use std::io::{self, Write};

use super::rows::RowFile;
use std::path::Path;

use crate::sensors::{Range, TickSamples};
use crate::vehicle::Vehicle;
use mavsitl_core::geo::ExportFrame;

/// Axis letters of the world frame (for headers).
fn world_letters(frame: ExportFrame) -> [&'static str; 3] {
    match frame {
        ExportFrame::Ned => ["N", "E", "D"],
        ExportFrame::Enu => ["E", "N", "U"],
        ExportFrame::Iso8855 => ["N", "W", "U"],
    }
}

/// Writes one vehicle's sensor samples.
pub struct SensorWriter {
    vehicle: usize,
    frame: ExportFrame,
    imu: Option<RowFile>,
    gps: Option<RowFile>,
    baro: Option<RowFile>,
    mag: Option<RowFile>,
    range: Option<RowFile>,
}

fn open(dir: &Path, name: &str, header: &str, files: &mut Vec<String>) -> io::Result<RowFile> {
    let w = RowFile::with_header(&dir.join(name), header)?;
    files.push(name.to_string());
    Ok(w)
}

impl SensorWriter {
    /// Creates the files for the sensors vehicle `index` has, in `dir`; appends
    /// their names to `files`.
    ///
    /// # Errors
    /// I/O errors.
    pub fn create(
        dir: &Path,
        index: usize,
        vehicle: &Vehicle,
        frame: ExportFrame,
        files: &mut Vec<String>,
    ) -> io::Result<Self> {
        let s = vehicle.sensors();
        let [a, b, c] = world_letters(frame);
        let imu = match s.imu() {
            Some(_) => Some(open(
                dir,
                "imu.csv",
                "#timestamp [ns],w_RS_S_x [rad s^-1],w_RS_S_y [rad s^-1],w_RS_S_z [rad s^-1],a_RS_S_x [m s^-2],a_RS_S_y [m s^-2],a_RS_S_z [m s^-2]",
                files,
            )?),
            None => None,
        };
        let gps = match s.gps() {
            Some(_) => Some(open(
                dir,
                "gps.csv",
                &format!(
                    "#timestamp [ns],measured [ns],fix_type,satellites,lat [deg],lon [deg],alt_wgs84 [m],v_{a} [m s^-1],v_{b} [m s^-1],v_{c} [m s^-1],eph [m],epv [m],ground_speed [m s^-1],course [deg]"
                ),
                files,
            )?),
            None => None,
        };
        let baro = match s.baro() {
            Some(_) => Some(open(
                dir,
                "baro.csv",
                "#timestamp [ns],pressure [Pa],temperature [degC],pressure_altitude_amsl [m]",
                files,
            )?),
            None => None,
        };
        let mag = match s.mag() {
            Some(_) => Some(open(
                dir,
                "mag.csv",
                "#timestamp [ns],m_S_x [gauss],m_S_y [gauss],m_S_z [gauss]",
                files,
            )?),
            None => None,
        };
        let range = match s.rangefinder() {
            Some(_) => Some(open(
                dir,
                "range.csv",
                "#timestamp [ns],distance [m],status (0 in range; 1 too close; 2 too far)",
                files,
            )?),
            None => None,
        };
        Ok(SensorWriter {
            vehicle: index,
            frame,
            imu,
            gps,
            baro,
            mag,
            range,
        })
    }

    /// Index of the vehicle written.
    pub fn vehicle(&self) -> usize {
        self.vehicle
    }

    /// Writes whatever the tick produced.
    ///
    /// # Errors
    /// I/O errors.
    pub fn write(&mut self, s: &TickSamples) -> io::Result<()> {
        let f = self.frame;
        if let (Some(w), Some(x)) = (self.imu.as_mut(), s.imu) {
            let g = f.body_vector(&x.gyro_rad_s);
            let a = f.body_vector(&x.accel_m_s2);
            writeln!(
                w,
                "{},{},{},{},{},{},{}",
                x.time.as_nanos(),
                g.x,
                g.y,
                g.z,
                a.x,
                a.y,
                a.z
            )?;
        }
        if let (Some(w), Some(x)) = (self.gps.as_mut(), s.gps) {
            let v = f.world_vector(&x.vel_ned_m_s);
            writeln!(
                w,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                x.delivered.as_nanos(),
                x.measured.as_nanos(),
                x.fix as u8,
                x.satellites,
                x.position.lat_deg(),
                x.position.lon_deg(),
                x.position.alt_m,
                v.x,
                v.y,
                v.z,
                x.eph_m,
                x.epv_m,
                x.ground_speed_m_s(),
                x.course_deg()
            )?;
        }
        if let (Some(w), Some(x)) = (self.baro.as_mut(), s.baro) {
            writeln!(
                w,
                "{},{},{},{}",
                x.time.as_nanos(),
                x.pressure_pa,
                x.temperature_degc,
                x.pressure_altitude_m
            )?;
        }
        if let (Some(w), Some(x)) = (self.mag.as_mut(), s.mag) {
            let m = f.body_vector(&x.field_gauss);
            writeln!(w, "{},{},{},{}", x.time.as_nanos(), m.x, m.y, m.z)?;
        }
        if let (Some(w), Some(x)) = (self.range.as_mut(), s.range) {
            let (d, status) = match x.range {
                Range::Distance(d) => (d, 0),
                Range::TooClose => (f64::NAN, 1),
                Range::TooFar => (f64::NAN, 2),
            };
            writeln!(w, "{},{d},{status}", x.time.as_nanos())?;
        }
        Ok(())
    }

    /// Flushes every file.
    ///
    /// # Errors
    /// I/O errors.
    pub fn flush(&mut self) -> io::Result<()> {
        for w in [
            &mut self.imu,
            &mut self.gps,
            &mut self.baro,
            &mut self.mag,
            &mut self.range,
        ]
        .into_iter()
        .flatten()
        {
            w.flush()?;
        }
        Ok(())
    }
}
