//! Suite files: TOML, because people write them by hand, comment them and
//! diff them in review (JSON has no comments). Unknown keys are refused with
//! the file, line and key.
//!
//! ```toml
//! [defaults]            # for every case; a case overrides key by key
//! seeds = "0..2"        # or [0, 1, 2]
//! timeout_s = 600
//!
//! [[case]]
//! name = "quad_square"
//! vehicle = "quad"
//! mission = "../missions/quad_square.plan"   # relative to this file
//! faults = ["gps_loss@40s+10s"]
//! [case.expect]
//! mission_completed = true
//! max_cross_track_rms_m = 1.5
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

use mavsitl_core::faults::{parse_fault_arg, FaultSpec};

/// Which controller flies a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Controller {
    /// The built-in autopilot.
    SimpleFlight,
    /// PX4 SITL (launched from `--px4-build` / `PX4_BUILD_DIR`).
    Px4,
    /// ArduPilot SITL (launched from `--ardupilot` / `ARDUPILOT_HOME`).
    ArduPilot,
}

/// The vehicle of a case: quad, boat, rover_skid or rover_ackermann.
pub use mavsitl_core::vehicle::BuiltinVehicle as Vehicle;

/// Seeds: a list, or `"A..B"` (both included).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "toml::Value")]
pub enum Seeds {
    /// These seeds.
    List(Vec<u64>),
    /// `"A..B"`.
    Range(String),
    /// One seed.
    One(u64),
}

impl TryFrom<toml::Value> for Seeds {
    type Error = String;

    /// A whole number from 0, a list of them, or `"A..B"`; anything else is
    /// named as written (serde's own word for it was "untagged enum Seeds").
    fn try_from(v: toml::Value) -> Result<Self, String> {
        let seed = |v: &toml::Value| match v {
            toml::Value::Integer(i) => u64::try_from(*i).ok(),
            _ => None,
        };
        let bad = || {
            format!(
                "seeds = {}: give a whole number from 0, a list of them, or \"A..B\"",
                written(&v)
            )
        };
        match &v {
            toml::Value::String(s) => Ok(Seeds::Range(s.clone())),
            toml::Value::Array(a) => a
                .iter()
                .map(|x| seed(x).ok_or_else(bad))
                .collect::<Result<Vec<u64>, String>>()
                .map(Seeds::List),
            other => seed(other).map(Seeds::One).ok_or_else(bad),
        }
    }
}

/// A TOML value as it would be written (short: a table is `{…}`).
fn written(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("{s:?}"),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => mavsitl_core::time::show(*f),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Datetime(d) => format!("{d:?}"),
        toml::Value::Array(a) => {
            format!("[{}]", a.iter().map(written).collect::<Vec<_>>().join(", "))
        }
        toml::Value::Table(_) => "{…}".into(),
    }
}

impl Seeds {
    /// The seeds, in order.
    ///
    /// # Errors
    /// A range that does not parse or runs downwards.
    pub fn expand(&self) -> Result<Vec<u64>, String> {
        match self {
            Seeds::List(v) if v.is_empty() => Err("seeds is an empty list".into()),
            Seeds::List(v) => Ok(v.clone()),
            Seeds::One(s) => Ok(vec![*s]),
            Seeds::Range(r) => {
                let bad = || format!("seeds '{r}' is not A..B (both included)");
                let (a, b) = r.split_once("..").ok_or_else(bad)?;
                let a: u64 = a.trim().parse().map_err(|_| bad())?;
                let b: u64 = b.trim().parse().map_err(|_| bad())?;
                if b < a || b - a >= 10_000 {
                    return Err(format!("seeds '{r}' must run upwards, at most 10000"));
                }
                Ok((a..=b).collect())
            }
        }
    }
}

/// `no_crash`: `true` (impact below 3 m/s) or the impact limit, m/s.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum NoCrash {
    /// With the default limit (or off, when false).
    Flag(bool),
    /// Impact speed limit, m/s.
    Limit(f64),
}

/// Default impact-speed limit of `no_crash = true`, m/s.
pub const DEFAULT_IMPACT_M_S: f64 = 3.0;

/// What a case expects; every key optional. Units are in the names.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The run says the mission completed (or, with false, that it did not).
    pub mission_completed: Option<bool>,
    /// Cross-track RMS at most this, m (ground truth against the planned legs).
    pub max_cross_track_rms_m: Option<f64>,
    /// Cross-track error never above this, m.
    pub max_cross_track_m: Option<f64>,
    /// At rest at the end within this horizontal distance of home, m.
    pub landed_within_m: Option<f64>,
    /// The run's sim time at most this, s.
    pub max_duration_s: Option<f64>,
    /// Never higher than this above home, m.
    pub max_altitude_m: Option<f64>,
    /// The battery never below this fraction, 0..1.
    pub min_battery_remaining: Option<f64>,
    /// Never outside the mission's fence (inclusion and exclusion shapes).
    pub stays_in_fence: Option<bool>,
    /// These flight modes are entered (names as the controller reports them,
    /// case-insensitive; e.g. "RTL", "Return", "Land").
    pub mode_seen: Option<Vec<String>>,
    /// Each text appears in some STATUSTEXT (case-insensitive substring).
    pub statustext_contains: Option<Vec<String>>,
    /// No STATUSTEXT contains any of these.
    pub statustext_absent: Option<Vec<String>>,
    /// No flip (tilt past 80°) and no ground impact faster than the limit.
    pub no_crash: Option<NoCrash>,
    /// Vehicles of a fleet never closer than this, centre to centre, m
    /// (measured within the scenario's `proximity_m`).
    pub min_separation_m: Option<f64>,
}

impl Expect {
    /// `self`, with `defaults` where `self` says nothing.
    pub fn or(&self, d: &Expect) -> Expect {
        Expect {
            mission_completed: self.mission_completed.or(d.mission_completed),
            max_cross_track_rms_m: self.max_cross_track_rms_m.or(d.max_cross_track_rms_m),
            max_cross_track_m: self.max_cross_track_m.or(d.max_cross_track_m),
            landed_within_m: self.landed_within_m.or(d.landed_within_m),
            max_duration_s: self.max_duration_s.or(d.max_duration_s),
            max_altitude_m: self.max_altitude_m.or(d.max_altitude_m),
            min_battery_remaining: self.min_battery_remaining.or(d.min_battery_remaining),
            stays_in_fence: self.stays_in_fence.or(d.stays_in_fence),
            mode_seen: self.mode_seen.clone().or_else(|| d.mode_seen.clone()),
            statustext_contains: self
                .statustext_contains
                .clone()
                .or_else(|| d.statustext_contains.clone()),
            statustext_absent: self
                .statustext_absent
                .clone()
                .or_else(|| d.statustext_absent.clone()),
            no_crash: self.no_crash.or(d.no_crash),
            min_separation_m: self.min_separation_m.or(d.min_separation_m),
        }
    }
}

/// A case as written (the `[defaults]` table has the same keys but `name`
/// and `mission`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseSpec {
    /// Name, unique in the suite.
    pub name: Option<String>,
    /// Vehicle (default: as `fly` decides from the plan).
    pub vehicle: Option<Vehicle>,
    /// Mission file, relative to the suite file.
    pub mission: Option<PathBuf>,
    /// Scenario file, relative to the suite file.
    pub scenario: Option<PathBuf>,
    /// Parameter file, relative to the suite file: SimpleFlight's, or the
    /// firmware's (set at its start-up).
    pub params: Option<PathBuf>,
    /// Controller (default simpleflight).
    pub controller: Option<Controller>,
    /// Seeds (default 0).
    pub seeds: Option<Seeds>,
    /// Wall and sim time limit of one run, s (default 600).
    pub timeout_s: Option<f64>,
    /// Faults, as `--fault` takes them.
    pub faults: Option<Vec<String>>,
    /// Assertions.
    #[serde(default)]
    pub expect: Expect,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    #[serde(default)]
    defaults: CaseSpec,
    #[serde(default, rename = "case")]
    cases: Vec<CaseSpec>,
}

/// A case ready to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Name.
    pub name: String,
    /// Vehicle, if given.
    pub vehicle: Option<Vehicle>,
    /// Mission file (resolved).
    pub mission: PathBuf,
    /// Scenario file (resolved), if any.
    pub scenario: Option<PathBuf>,
    /// Parameter file (resolved), if any: SimpleFlight's, or the firmware's.
    pub params: Option<PathBuf>,
    /// Controller.
    pub controller: Controller,
    /// Seeds.
    pub seeds: Vec<u64>,
    /// Time limit, s.
    pub timeout_s: f64,
    /// Faults (checked), as written.
    pub faults: Vec<String>,
    /// Assertions.
    pub expect: Expect,
}

/// A loaded suite.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    /// The suite's name (file stem).
    pub name: String,
    /// The file.
    pub path: PathBuf,
    /// Its cases.
    pub cases: Vec<Case>,
}

/// Why a suite cannot be used: one line naming the file, line and key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}{}: {message}", line.map_or(String::new(), |l| format!(":{l}")))]
pub struct SuiteError {
    /// The file.
    pub file: String,
    /// Line, from 1.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// Line (from 1) of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(1, |t| t.matches('\n').count() + 1)
}

/// Line of the `[[case]]` table number `i` (0-based), for errors found after
/// parsing.
fn case_line(text: &str, i: usize) -> Option<usize> {
    let mut seen = 0;
    for (n, l) in text.lines().enumerate() {
        if l.trim_start().starts_with("[[case]]") {
            if seen == i {
                return Some(n + 1);
            }
            seen += 1;
        }
    }
    None
}

impl Suite {
    /// Reads the suite at `path`.
    ///
    /// # Errors
    /// A file that cannot be read, bad TOML, an unknown key, a missing
    /// name or mission, duplicate names, bad seeds, timeouts or faults.
    pub fn load(path: &Path) -> Result<Suite, SuiteError> {
        let text = std::fs::read_to_string(path).map_err(|e| SuiteError {
            file: path.display().to_string(),
            line: None,
            message: e.to_string(),
        })?;
        Suite::parse(&text, path)
    }

    /// Parses suite `text` read from `path` (paths inside resolve against
    /// its directory).
    ///
    /// # Errors
    /// As [`Suite::load`].
    pub fn parse(text: &str, path: &Path) -> Result<Suite, SuiteError> {
        let file = path.display().to_string();
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let raw: SuiteFile = toml::from_str(text).map_err(|e| SuiteError {
            file: file.clone(),
            line: e.span().map(|s| line_of(text, s.start)),
            message: e.message().trim().to_string(),
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        let mut cases: Vec<Case> = Vec::new();
        for (i, c) in raw.cases.iter().enumerate() {
            let err = |message: String| SuiteError {
                file: file.clone(),
                line: case_line(text, i),
                message,
            };
            let case = resolve(c, &raw.defaults, base).map_err(err)?;
            if cases.iter().any(|k| k.name == case.name) {
                return Err(err(format!("case name '{}' used twice", case.name)));
            }
            cases.push(case);
        }
        if cases.is_empty() {
            return Err(SuiteError {
                file,
                line: None,
                message: "no [[case]] in the suite".into(),
            });
        }
        Ok(Suite {
            name: path
                .file_stem()
                .map_or_else(|| "suite".into(), |s| s.to_string_lossy().into_owned()),
            path: path.to_path_buf(),
            cases,
        })
    }
}

/// A case with the defaults filled in and its paths resolved.
fn resolve(c: &CaseSpec, d: &CaseSpec, base: &Path) -> Result<Case, String> {
    let name = c.name.clone().ok_or("a case has no name")?;
    if name.trim().is_empty() || name.contains(['/', '\\']) {
        return Err(format!(
            "case name '{name}' must be non-empty and without slashes"
        ));
    }
    let at =
        |p: &Option<PathBuf>, q: &Option<PathBuf>| p.as_ref().or(q.as_ref()).map(|p| base.join(p));
    let mission = at(&c.mission, &d.mission).ok_or(format!("case '{name}' has no mission"))?;
    let seeds = c
        .seeds
        .as_ref()
        .or(d.seeds.as_ref())
        .map_or(Ok(vec![0]), Seeds::expand)
        .map_err(|e| format!("case '{name}': {e}"))?;
    let timeout_s = c.timeout_s.or(d.timeout_s).unwrap_or(600.0);
    if !(timeout_s.is_finite() && timeout_s > 0.0 && timeout_s <= 1.0e6) {
        return Err(format!(
            "case '{name}': timeout_s {timeout_s} is not in (0, 1e6] s"
        ));
    }
    let faults = c
        .faults
        .clone()
        .or_else(|| d.faults.clone())
        .unwrap_or_default();
    for f in &faults {
        let _: FaultSpec =
            parse_fault_arg(f).map_err(|e| format!("case '{name}': fault '{f}': {e}"))?;
    }
    let expect = c.expect.or(&d.expect);
    check_bounds(&expect).map_err(|e| format!("case '{name}': expect.{e}"))?;
    Ok(Case {
        name,
        vehicle: c.vehicle.or(d.vehicle),
        mission,
        scenario: at(&c.scenario, &d.scenario),
        params: at(&c.params, &d.params),
        controller: c
            .controller
            .or(d.controller)
            .unwrap_or(Controller::SimpleFlight),
        seeds,
        timeout_s,
        faults,
        expect,
    })
}

/// Numeric bounds must be finite and not negative.
fn check_bounds(e: &Expect) -> Result<(), String> {
    let bounds = [
        ("max_cross_track_rms_m", e.max_cross_track_rms_m),
        ("max_cross_track_m", e.max_cross_track_m),
        ("landed_within_m", e.landed_within_m),
        ("max_duration_s", e.max_duration_s),
        ("max_altitude_m", e.max_altitude_m),
        ("min_separation_m", e.min_separation_m),
        ("min_battery_remaining", e.min_battery_remaining),
        (
            "no_crash",
            match e.no_crash {
                Some(NoCrash::Limit(l)) => Some(l),
                _ => None,
            },
        ),
    ];
    for (k, v) in bounds {
        if let Some(v) = v {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("{k} = {v}: a finite bound of 0 or more"));
            }
        }
    }
    match e.min_battery_remaining {
        Some(v) if v > 1.0 => Err(format!("min_battery_remaining = {v}: a fraction, 0..1")),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Suite, SuiteError> {
        Suite::parse(text, Path::new("suites/x.toml"))
    }

    #[test]
    fn defaults_fill_cases_key_by_key_and_paths_resolve_against_the_file() {
        let s = parse(
            r#"
[defaults]
seeds = "0..2"
timeout_s = 300
[defaults.expect]
mission_completed = true
max_cross_track_m = 3.0

[[case]]
name = "square"
mission = "../missions/quad_square.plan"
[case.expect]
max_cross_track_m = 2.0

[[case]]
name = "box"
vehicle = "boat"
controller = "px4"
mission = "../missions/boat_box.plan"
seeds = [7]
faults = ["gps_loss@40s+10s"]
"#,
        )
        .expect("suite");
        assert_eq!(s.name, "x");
        let [a, b] = &s.cases[..] else {
            panic!("two cases")
        };
        assert_eq!(a.mission, Path::new("suites/../missions/quad_square.plan"));
        assert_eq!(a.seeds, vec![0, 1, 2]);
        assert_eq!(a.timeout_s, 300.0);
        assert_eq!(a.controller, Controller::SimpleFlight);
        assert_eq!(a.expect.max_cross_track_m, Some(2.0));
        assert_eq!(a.expect.mission_completed, Some(true));
        assert_eq!(b.seeds, vec![7]);
        assert_eq!(b.vehicle, Some(Vehicle::Boat));
        assert_eq!(b.controller, Controller::Px4);
        assert_eq!(b.expect.max_cross_track_m, Some(3.0));
    }

    #[test]
    fn mistakes_name_the_file_line_and_key() {
        let e = parse(
            "[[case]]\nname = \"a\"\nmission = \"m.plan\"\n[case.expect]\nmax_crosstrack_m = 1\n",
        )
        .expect_err("unknown key");
        assert_eq!(e.line, Some(5), "{e}");
        assert!(
            e.to_string()
                .starts_with("suites/x.toml:5: unknown field `max_crosstrack_m`"),
            "{e}"
        );
        let e = parse("[[case]]\nname = \"a\"\n").expect_err("no mission");
        assert_eq!(e.to_string(), "suites/x.toml:1: case 'a' has no mission");
        let e = parse(
            "[[case]]\nname = \"a\"\nmission = \"m\"\n[[case]]\nname = \"a\"\nmission = \"m\"\n",
        )
        .expect_err("twice");
        assert_eq!(e.to_string(), "suites/x.toml:4: case name 'a' used twice");
        let e = parse("[[case]]\nname = \"a\"\nmission = \"m\"\nseeds = \"3..1\"\n")
            .expect_err("seeds");
        assert!(e.to_string().contains("must run upwards"), "{e}");
        let e = parse("[[case]]\nname = \"a\"\nmission = \"m\"\nfaults = [\"gps_los@1s\"]\n")
            .expect_err("fault");
        assert!(e.to_string().contains("fault 'gps_los@1s'"), "{e}");
        let e = parse("[[case]]\nname = \"a\"\nmission = \"m\"\ncontroller = \"inav\"\n")
            .expect_err("ctl");
        assert_eq!(e.line, Some(4), "{e}");
        let e = parse(
            "[[case]]\nname = \"a\"\nmission = \"m\"\n[case.expect]\nmin_battery_remaining = 20\n",
        )
        .expect_err("fraction");
        assert!(e.to_string().contains("a fraction"), "{e}");
        assert!(parse("")
            .expect_err("empty")
            .to_string()
            .contains("no [[case]]"));
    }
}
