//! MAVLink telemetry logs (`.tlog`), the format MAVProxy writes and
//! QGroundControl, MAVExplorer and pymavlink's tools replay: no header, then
//! for each frame an 8-byte big-endian timestamp (µs since the Unix epoch)
//! followed by the complete raw frame. Timestamps here are sim time mapped to
//! the scenario's date, so a replay shows the run's own clock.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// A .tlog being written.
#[derive(Debug)]
pub struct TlogWriter {
    out: BufWriter<File>,
    frames: u64,
}

impl TlogWriter {
    /// Creates (truncates) `path`.
    ///
    /// # Errors
    /// When the file cannot be created.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        Ok(TlogWriter {
            out: BufWriter::new(File::create(path)?),
            frames: 0,
        })
    }

    /// Appends one frame stamped `unix_us`.
    ///
    /// # Errors
    /// On a write error.
    pub fn write(&mut self, unix_us: u64, frame: &[u8]) -> std::io::Result<()> {
        self.out.write_all(&unix_us.to_be_bytes())?;
        self.out.write_all(frame)?;
        self.frames += 1;
        Ok(())
    }

    /// Frames written.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Flushes to disk.
    ///
    /// # Errors
    /// On a write error.
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_timestamp_then_frame() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("a.tlog");
        let mut w = TlogWriter::create(&p).unwrap_or_else(|e| panic!("{e}"));
        w.write(0x0102_0304_0506_0708, &[0xFD, 1, 2])
            .unwrap_or_else(|e| panic!("{e}"));
        w.flush().unwrap_or_else(|e| panic!("{e}"));
        let b = std::fs::read(&p).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(b, vec![1, 2, 3, 4, 5, 6, 7, 8, 0xFD, 1, 2]);
        assert_eq!(w.frames(), 1);
        w.write(9, &[0xFE]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(w.frames(), 2);
    }
}
