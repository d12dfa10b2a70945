//! `QGC WPL 110` text waypoint files, read and written.
//!
//! One item per line: `index current frame command p1 p2 p3 p4 x y z
//! autocontinue`, any whitespace between fields (tabs are written), `#` lines
//! are comments. Line 0 is the home position (as Mission Planner and ArduPilot
//! write it); mission items follow from index 1, and DO_JUMP targets count that
//! home line (so they are shifted by one against this crate's item indices).

use std::fmt::Write as _;

use super::commands::DO_JUMP;
use super::{Mission, MissionError, MissionItem, PlanHome};

/// Parses WPL text.
///
/// # Errors
/// [`MissionError::Line`] naming the line.
pub fn parse(text: &str, file: &str) -> Result<Mission, MissionError> {
    let err = |line: usize, message: String| MissionError::Line {
        file: file.to_string(),
        line,
        message,
    };
    let mut lines = text.lines().enumerate();
    let header = lines.next().map(|(_, l)| l.trim()).unwrap_or("");
    if !header.starts_with("QGC WPL") {
        return Err(err(1, format!("expected 'QGC WPL 110', found '{header}'")));
    }
    let mut out = Mission::default();
    let mut expected_index = 0u64;
    for (i, l) in lines {
        let line = i + 1;
        let t = l.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = t.split_whitespace().collect();
        if f.len() != 12 {
            return Err(err(
                line,
                format!("{} fields; a waypoint line has 12", f.len()),
            ));
        }
        let int = |k: usize, what: &str, max: u64| -> Result<u64, MissionError> {
            f[k].parse::<u64>()
                .ok()
                .filter(|v| *v <= max)
                .ok_or_else(|| {
                    err(
                        line,
                        format!("{what} '{}' is not a whole number 0..={max}", f[k]),
                    )
                })
        };
        let num = |k: usize, what: &str| -> Result<f64, MissionError> {
            f[k].parse::<f64>()
                .ok()
                .filter(|v| !v.is_infinite())
                .ok_or_else(|| err(line, format!("{what} '{}' is not a number", f[k])))
        };
        let index = int(0, "index", u64::from(u16::MAX))?;
        if index != expected_index {
            return Err(err(
                line,
                format!("index {index}, expected {expected_index}"),
            ));
        }
        expected_index += 1;
        let item = MissionItem {
            command: int(3, "command", u64::from(u16::MAX))? as u16,
            frame: int(2, "frame", 255)? as u8,
            params: [
                num(4, "param1")?,
                num(5, "param2")?,
                num(6, "param3")?,
                num(7, "param4")?,
            ],
            x: num(8, "x/latitude")?,
            y: num(9, "y/longitude")?,
            z: num(10, "z/altitude")?,
            autocontinue: int(11, "autocontinue", 1)? == 1,
        };
        if index == 0 {
            out.home = Some(PlanHome {
                lat_deg: item.x,
                lon_deg: item.y,
                alt_m: item.z,
            });
        } else {
            out.items.push(item);
        }
    }
    // WPL DO_JUMP targets count the home line; ours count mission items.
    for it in out.items.iter_mut().filter(|it| it.command == DO_JUMP) {
        it.params[0] -= 1.0;
    }
    let n = out.items.len() as f64;
    if let Some(bad) = out
        .items
        .iter()
        .position(|it| it.command == DO_JUMP && !(0.0..n).contains(&it.params[0]))
    {
        return Err(MissionError::Format {
            file: file.to_string(),
            message: format!(
                "item {}: DO_JUMP to item {}, which does not exist",
                bad + 1,
                out.items[bad].params[0] + 1.0
            ),
        });
    }
    Ok(out)
}

/// Writes a mission as `QGC WPL 110` (home on line 0).
pub fn to_string(m: &Mission) -> String {
    let mut s = String::from("QGC WPL 110\n");
    let h = m.home.unwrap_or(PlanHome {
        lat_deg: 0.0,
        lon_deg: 0.0,
        alt_m: 0.0,
    });
    let _ = writeln!(
        s,
        "0\t1\t0\t16\t0\t0\t0\t0\t{}\t{}\t{}\t1",
        h.lat_deg, h.lon_deg, h.alt_m
    );
    for (i, it) in m.items.iter().enumerate() {
        let mut p1 = it.params[0];
        if it.command == DO_JUMP {
            p1 += 1.0;
        }
        let _ = writeln!(
            s,
            "{}\t0\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            i + 1,
            it.frame,
            it.command,
            p1,
            it.params[1],
            it.params[2],
            it.params[3],
            it.x,
            it.y,
            it.z,
            u8::from(it.autocontinue)
        );
    }
    s
}
