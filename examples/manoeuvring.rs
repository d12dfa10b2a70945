//! The manoeuvring tests of the shipped boat airframes (speed step, yaw-rate
//! step, turning circle, 10°/10° zig-zag): prints their figures as the
//! table in docs/reference/airframes.md and draws them to `docs/manoeuvring.svg` and `.png`.
//!
//! `cargo run --release --example manoeuvring [-- OUT_DIR]`

use std::path::PathBuf;

use mavsitl::analysis::manoeuvre::{measure, SHIPPED, TABLE_HEADER};
use mavsitl::analysis::plot;

fn main() -> Result<(), String> {
    let dir = std::env::args()
        .nth(1)
        .map_or(PathBuf::from("docs"), PathBuf::from);
    let ms = SHIPPED
        .iter()
        .map(|(a, t, s)| measure(a, *t, *s))
        .collect::<Result<Vec<_>, _>>()?;
    println!("{TABLE_HEADER}");
    for m in &ms {
        println!("{}", m.table_row());
    }
    let files = plot::manoeuvring(&dir, "manoeuvring", &ms)?;
    for f in files {
        eprintln!("wrote {}", f.display());
    }
    Ok(())
}
