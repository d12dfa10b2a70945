//! A firmware parameter file, as PX4 and ArduPilot users keep them: one
//! parameter per line, in any of the three common shapes —
//!
//! - `NAME VALUE` (MAVProxy's `param save`, mavsitl's own files);
//! - `NAME,VALUE` (ArduPilot's `.parm` files);
//! - QGroundControl's `.params`: `SYSID COMPID NAME VALUE TYPE`, tab-separated.
//!
//! `#` starts a comment. Values stay as written (PX4's `param set` takes an
//! integer parameter's value only without a decimal point), after a check
//! that they are finite numbers.

/// Longest parameter name MAVLink carries (PARAM_VALUE's `param_id`).
const MAX_NAME_LEN: usize = 16;

/// The parameters of `text` in file order, (name, value as written); `file`
/// names the file in messages.
///
/// # Errors
/// One line naming the file, the line number and what is wrong with it.
pub fn parse(text: &str, file: &str) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let at = |why: String| format!("{file}:{}: {why}", i + 1);
        let fields: Vec<&str> = line
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|f| !f.is_empty())
            .collect();
        let (name, value) = match fields.as_slice() {
            [name, value] => (*name, *value),
            // QGroundControl: vehicle id, component id, name, value, type.
            [sys, comp, name, value, _type]
                if sys.parse::<u8>().is_ok() && comp.parse::<u8>().is_ok() =>
            {
                (*name, *value)
            }
            _ => {
                return Err(at(format!(
                    "'{line}' is not NAME VALUE (nor NAME,VALUE or QGroundControl's SYSID COMPID NAME VALUE TYPE)"
                )))
            }
        };
        let name_ok = !name.is_empty()
            && name.len() <= MAX_NAME_LEN
            && name
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        if !name_ok {
            return Err(at(format!(
                "'{name}' is not a parameter name (A-Z, 0-9 and _, at most {MAX_NAME_LEN})"
            )));
        }
        if !value.parse::<f64>().is_ok_and(f64::is_finite) {
            return Err(at(format!("{name}: '{value}' is not a number")));
        }
        // A later line wins, as when the firmware loads the file.
        out.retain(|(n, _)| n != name);
        out.push((name.to_string(), value.to_string()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn the_three_shapes_and_comments_are_read() {
        let text =
            "# tuning\nMPC_XY_VEL_MAX 3.5\nWPNAV_SPEED,250 # cm/s\n\n1\t1\tNAV_RCL_ACT\t0\t6\n";
        assert_eq!(
            parse(text, "p").expect("parse"),
            [
                ("MPC_XY_VEL_MAX".to_string(), "3.5".to_string()),
                ("WPNAV_SPEED".into(), "250".into()),
                ("NAV_RCL_ACT".into(), "0".into()),
            ]
        );
    }

    #[test]
    fn a_later_line_wins() {
        let p = parse("A 1\nB 2\nA 3\n", "p").expect("parse");
        assert_eq!(
            p,
            [("B".to_string(), "2".to_string()), ("A".into(), "3".into())]
        );
    }

    #[test]
    fn bad_lines_are_named_with_file_and_line() {
        for (text, needle) in [
            ("A 1\nB\n", "p.parm:2: 'B' is not NAME VALUE"),
            ("mpc_xy 1\n", "p.parm:1: 'mpc_xy' is not a parameter name"),
            ("A_VERY_LONG_PARAMETER 1\n", "is not a parameter name"),
            ("A 1\nB x\n", "p.parm:2: B: 'x' is not a number"),
            ("A inf\n", "'inf' is not a number"),
            ("A 1 2\n", "is not NAME VALUE"),
        ] {
            let e = parse(text, "p.parm").expect_err(text);
            assert!(e.contains(needle), "{e}");
        }
    }
}
