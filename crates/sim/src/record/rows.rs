//! A CSV file that is only ever written whole rows at a time, laid out so
//! that even a kill cannot tear one.
//!
//! A `BufWriter` writes out when its buffer fills, in the middle of a row, so
//! a run killed (SIGKILL, out of memory, a CI timeout) left files ending in a
//! torn row. [`RowFile`] buffers rows and hands the file only complete ones,
//! when the buffer passes its capacity and whenever [`Write::flush`] is called
//! (the recorder flushes every second of sim time), so a killed run loses at
//! most the rows since then.
//!
//! Whole rows per `write(2)` are not enough: Linux copies a write into the
//! page cache one page at a time and gives up between pages when the process
//! is killed, so a 64 KiB write can end anywhere on a 4 KiB boundary. No row
//! here ever crosses one: a row that would is moved to the next page by
//! padding the row before it with spaces ahead of its newline (readers trim
//! fields; the padding is on average half a row per 4 KiB). When that row
//! is already in the file, its newline is rewritten together with the
//! padding in the same page-local write.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Bytes buffered before whole rows are written out.
const CAPACITY: usize = 1 << 16;
/// The page size the kernel copies writes in, bytes.
const PAGE: u64 = 4096;

/// A file written in whole rows that never cross a page boundary.
#[derive(Debug)]
pub struct RowFile {
    file: File,
    buf: Vec<u8>,
    out: Vec<u8>,
    /// Bytes in the file.
    written: u64,
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
            out: Vec::with_capacity(CAPACITY + 2 * PAGE as usize),
            written: 0,
        })
    }

    /// Creates (truncates) the CSV file at `path` with its `header` line
    /// (without the newline) already in the file, not only buffered: a run
    /// killed at once still leaves a file that says what its columns are.
    ///
    /// # Errors
    /// The file cannot be created or written.
    pub fn with_header(path: &Path, header: &str) -> io::Result<Self> {
        let mut f = RowFile::create(path)?;
        writeln!(f, "{header}")?;
        f.write_rows()?;
        Ok(f)
    }

    /// Writes every complete row buffered, keeping a partial one.
    fn write_rows(&mut self) -> io::Result<()> {
        let Some(end) = self.buf.iter().rposition(|b| *b == b'\n') else {
            return Ok(());
        };
        self.out.clear();
        let mut at = self.written;
        // (Taken out of `self` for the loop, which appends to `self.out`;
        // taking it moves no memory.)
        let buf = std::mem::take(&mut self.buf);
        for row in buf[..=end].split_inclusive(|b| *b == b'\n') {
            self.place_row(&mut at, row.len());
            self.out.extend_from_slice(row);
        }
        self.buf = buf;
        // The rows leave the buffer only once they are in the file: after a
        // failed write they are tried again with the next.
        self.file.write_all_at(&self.out, at)?;
        self.written = at + self.out.len() as u64;
        self.buf.drain(..=end);
        Ok(())
    }

    /// Pads before the row of `len` bytes about to be appended to `out` (to
    /// be written at file offset `at`) if it would cross a page boundary.
    fn place_row(&mut self, at: &mut u64, len: usize) {
        let offset = (*at + self.out.len() as u64) % PAGE;
        if offset == 0 || offset + len as u64 <= PAGE || len as u64 > PAGE {
            return;
        }
        if self.out.is_empty() {
            // The row before is in the file: rewrite its newline.
            let Some(newline) = self.written.checked_sub(1) else {
                return;
            };
            *at = newline;
            self.out.push(b'\n');
        }
        self.out.pop();
        let pad = (PAGE - offset) as usize;
        self.out.extend(std::iter::repeat_n(b' ', pad));
        self.out.push(b'\n');
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
        self.write_rows()
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
    fn the_header_is_in_the_file_from_the_start() {
        // A run killed before its first flush (SIGKILL) still leaves the
        // header: it is written at open, not buffered with the rows.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fault_events.csv");
        let mut f = RowFile::with_header(&path, "#timestamp [ns],vehicle").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"#timestamp [ns],vehicle\n");
        writeln!(f, "1,0").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"#timestamp [ns],vehicle\n");
        std::mem::forget(f); // as a kill: no flush, no drop
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "#timestamp [ns],vehicle\n");
    }

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

    #[test]
    fn no_row_crosses_a_page_and_the_rows_read_back_trimmed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        let mut f = RowFile::create(&path).unwrap();
        let mut want = Vec::new();
        // Rows of 1 to 300 bytes, flushed at odd moments (so that padding is
        // also needed right after what an earlier flush wrote).
        let mut x: u32 = 1;
        for i in 0..30_000 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let row = format!("{i},{}", "7".repeat((x >> 16) as usize % 290));
            writeln!(f, "{row}").unwrap();
            want.push(row);
            if x.is_multiple_of(7) {
                f.flush().unwrap();
            }
        }
        drop(f);
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.ends_with(b"\n"));
        // Every page boundary is a row boundary.
        for k in (PAGE as usize..bytes.len()).step_by(PAGE as usize) {
            assert_eq!(bytes[k - 1], b'\n', "page boundary at {k} inside a row");
        }
        let text = String::from_utf8(bytes).unwrap();
        let got: Vec<&str> = text.lines().map(str::trim_end).collect();
        assert_eq!(got, want);
        // The padding stays small: under 5 % here.
        let raw: usize = want.iter().map(|r| r.len() + 1).sum();
        assert!(text.len() < raw + raw / 20, "{} vs {raw}", text.len());
    }

    /// A row of exactly a page is moved to the next page's start; a longer
    /// one cannot fit any page and is written where it falls.
    #[test]
    fn a_row_of_a_page_starts_one_and_a_longer_one_is_not_padded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        let mut f = RowFile::create(&path).unwrap();
        let page = PAGE as usize;
        writeln!(f, "{}", "a".repeat(99)).unwrap();
        writeln!(f, "{}", "b".repeat(page - 1)).unwrap();
        writeln!(f, "{}", "d".repeat(9)).unwrap();
        writeln!(f, "{}", "c".repeat(page + 899)).unwrap();
        f.flush().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        // The first row padded to the page; the page-long row fills the
        // second page; the longer one follows the short one at once.
        assert_eq!(bytes.len(), 2 * page + 10 + page + 900);
        assert_eq!(&bytes[page - 1..=page], b"\nb");
        assert_eq!(&bytes[2 * page - 1..2 * page + 11], b"\nddddddddd\nc");
        let text = String::from_utf8(bytes).unwrap();
        let lens: Vec<usize> = text.lines().map(|l| l.trim_end().len()).collect();
        assert_eq!(lens, [99, page - 1, 9, page + 899]);
    }
}
