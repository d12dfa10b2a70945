//! What `mavsitl test` reports: a line per pair and the failed assertions
//! (for stdout), JUnit XML (one testsuite per suite file, one testcase per pair,
//! each failed assertion with both numbers, the run's log tail as
//! system-out and the firmware console's as system-err) and a JSON summary.

use std::path::{Path, PathBuf};

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use serde_json::json;

use crate::Check;

/// A pair's verdict.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Verdict {
    /// `suite`.
    pub suite: String,
    /// `case`.
    pub case: String,
    /// Seed.
    pub seed: u64,
    /// Passed.
    pub passed: bool,
    /// Wall time, s.
    pub wall_s: f64,
    /// What went wrong beyond the assertions (timeout, crash, no recording).
    pub problems: Vec<String>,
    /// The assertions.
    pub checks: Vec<Check>,
    /// Its recording directory.
    pub dir: PathBuf,
}

/// The last `n` lines of the log `name` in a pair's directory (empty when
/// there is none).
pub fn log_tail(dir: &Path, name: &str, n: usize) -> String {
    let text = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Lines of a failed run's log put in the JUnit report.
const LOG_TAIL_LINES: usize = 40;

fn io_err(path: &Path, e: impl std::fmt::Display) -> String {
    format!("{}: {e}", path.display())
}

/// The failure's one-line message and its full description.
fn failure_text(v: &Verdict) -> (String, String) {
    let failed: Vec<String> = v
        .problems
        .iter()
        .cloned()
        .chain(v.checks.iter().filter(|c| !c.passed).map(|c| c.to_string()))
        .collect();
    let message = failed.first().cloned().unwrap_or_default();
    let mut description = failed.join("\n");
    description.push_str(&format!("\nrecording: {}", v.dir.display()));
    (message, description)
}

fn junit(verdicts: &[Verdict], wall_s: f64) -> Report {
    let mut report = Report::new("mavsitl test");
    report.set_time(mavsitl_core::time::saturating_duration(wall_s));
    let mut names: Vec<&str> = Vec::new();
    for v in verdicts {
        if !names.contains(&v.suite.as_str()) {
            names.push(&v.suite);
        }
    }
    for name in names {
        let mut suite = TestSuite::new(name);
        for v in verdicts.iter().filter(|v| v.suite == name) {
            let status = if v.passed {
                TestCaseStatus::success()
            } else {
                let (message, description) = failure_text(v);
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message(message)
                    .set_type("assertion")
                    .set_description(description);
                s
            };
            let mut case = TestCase::new(format!("{} seed {}", v.case, v.seed), status);
            case.set_classname(format!("{}.{}", v.suite, v.case))
                .set_time(mavsitl_core::time::saturating_duration(v.wall_s))
                .set_assertions(v.checks.len());
            if !v.passed {
                case.set_system_out_lossy(log_tail(&v.dir, "run.log", LOG_TAIL_LINES));
                let firmware = log_tail(&v.dir, "firmware.log", LOG_TAIL_LINES);
                if !firmware.is_empty() {
                    case.set_system_err_lossy(format!("firmware.log (last lines):\n{firmware}"));
                }
            }
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }
    report
}

/// Where the reports go besides stdout.
pub struct ReportFiles<'a> {
    /// JUnit XML.
    pub junit: Option<&'a Path>,
    /// The JSON summary.
    pub json: Option<&'a Path>,
    /// The shard run (I of N), said in the JSON.
    pub shard: Option<(usize, usize)>,
}

/// The summary: a line per pair, the failed pair's problems, failed
/// checks and recording under it, and the count.
pub fn summary(verdicts: &[Verdict], wall_s: f64) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for v in verdicts {
        let _ = writeln!(
            out,
            "{} {}/{} seed {} ({:.1} s)",
            if v.passed { "PASS" } else { "FAIL" },
            v.suite,
            v.case,
            v.seed,
            v.wall_s
        );
        if !v.passed {
            for p in &v.problems {
                let _ = writeln!(out, "       {p}");
            }
            for c in v.checks.iter().filter(|c| !c.passed) {
                let _ = writeln!(out, "       {c}");
            }
            let _ = writeln!(out, "       recording: {}", v.dir.display());
        }
    }
    let failed = verdicts.iter().filter(|v| !v.passed).count();
    let _ = writeln!(
        out,
        "{} pairs: {} passed, {failed} failed, in {wall_s:.1} s",
        verdicts.len(),
        verdicts.len() - failed
    );
    out
}

/// Writes `--junit` and `--json`.
///
/// # Errors
/// A file that cannot be written, named.
pub fn write(args: &ReportFiles, verdicts: &[Verdict], wall_s: f64) -> Result<(), String> {
    let failed = verdicts.iter().filter(|v| !v.passed).count();
    if let Some(path) = args.junit {
        let xml = junit(verdicts, wall_s)
            .to_string()
            .map_err(|e| io_err(path, e))?;
        std::fs::write(path, xml).map_err(|e| io_err(path, e))?;
    }
    if let Some(path) = args.json {
        let doc = json!({
            "mavsitl_version": env!("CARGO_PKG_VERSION"),
            "pairs": verdicts.len(),
            "passed": verdicts.len() - failed,
            "failed": failed,
            "wall_s": wall_s,
            "shard": args.shard.map(|(i, n)| format!("{i}/{n}")),
            "results": verdicts,
        });
        let text = serde_json::to_string_pretty(&doc).map_err(|e| io_err(path, e))?;
        std::fs::write(path, text + "\n").map_err(|e| io_err(path, e))?;
    }
    Ok(())
}
