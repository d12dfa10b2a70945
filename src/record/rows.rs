//! A CSV file that is only ever written whole rows at a time.
//!
//! A `BufWriter` writes out when its buffer fills, in the middle of a row, so
//! a run killed (SIGKILL, out of memory, a CI timeout) left files ending in a
//! torn row. [`RowFile`] buffers rows and hands the file only complete ones
//! (everything up to the last newline), when the buffer passes its capacity
//! and whenever [`Write::flush`] is called — the recorder flushes every
//! second of sim time — so a killed run loses at most the rows since then and
//! never tears one.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

/// Bytes buffered before whole rows are written out.
const CAPACITY: usize = 1 << 16;

/// A file written in whole rows.
#[derive(Debug)]
pub struct RowFile {
    file: File,
    buf: Vec<u8>,
}

impl RowFile {
    /// Creates (truncates) the file at `path`.
    ///
    /// # Errors
    /// The file cannot be created.
    pub fn create(path: &Path) -> io::Result<Self> {
        Ok(RowFile {
            file: File::create(path)?,
            buf: Vec::with_capacity(CAPACITY + 1024),
        })
    }

    /// Writes every complete row buffered, keeping a partial one.
    fn write_rows(&mut self) -> io::Result<()> {
        let Some(end) = self.buf.iter().rposition(|b| *b == b'\n') else {
            return Ok(());
        };
        self.file.write_all(self.buf.get(..=end).unwrap_or(&[]))?;
        self.buf.drain(..=end);
        Ok(())
    }
}

impl Write for RowFile {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CAPACITY {
            self.write_rows()?;
        }
        Ok(data.len())
    }

    /// Writes the complete rows (a row still being written stays buffered).
    fn flush(&mut self) -> io::Result<()> {
        self.write_rows()?;
        self.file.flush()
    }
}

impl Drop for RowFile {
    fn drop(&mut self) {
        let _ = self.write_rows();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_whole_rows_reach_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        let mut f = RowFile::create(&path).unwrap();
        for i in 0..20_000 {
            write!(f, "{i},").unwrap();
            // Whatever is on disk between the two halves of a row ends whole.
            let on_disk = std::fs::read(&path).unwrap();
            assert!(on_disk.is_empty() || on_disk.ends_with(b"\n"), "row {i}");
            writeln!(f, "{}", i * 2).unwrap();
        }
        f.flush().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 20_000);
    }
}
