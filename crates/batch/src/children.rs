//! Flights run as children of this program (`fly`, `px4`, `ardupilot` with
//! `--record`), several at a time: what `compare` and `test` share. Each
//! child's output goes to `run.log` in its directory; a child past its wall
//! time limit, or every child on Ctrl-C, is stopped (SIGTERM, then SIGKILL
//! after a grace period), so no run is left behind.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::CliError;

/// How long a child stopped with SIGTERM gets before SIGKILL.
const GRACE: Duration = Duration::from_secs(5);

/// One child run.
#[derive(Debug, Clone)]
pub(super) struct ChildFlight {
    /// Arguments after the program name.
    pub args: Vec<OsString>,
    /// Its directory (recording and `run.log`).
    pub dir: PathBuf,
    /// Stopped after this much wall time.
    pub wall_limit: Option<Duration>,
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct ChildOutcome {
    /// Its exit code (None: killed by a signal).
    pub exit: Option<i32>,
    /// Stopped at its wall time limit.
    pub timed_out: bool,
    /// Wall time, s.
    pub wall_s: f64,
}

/// Runs `count` children, `parallel` at a time; `make(i, slot)` gives child
/// `i` run in parallel slot `slot` (0-based, never two children at once).
/// Stops starting children when interrupted. Returns (i, outcome) of the
/// children run, in order of `i`.
pub(super) fn run_children(
    count: usize,
    parallel: usize,
    make: impl Fn(usize, usize) -> Result<ChildFlight, CliError> + Sync,
) -> Result<Vec<(usize, ChildOutcome)>, CliError> {
    let bar = progress(count);
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, ChildOutcome)>> = Mutex::new(Vec::new());
    let failure: Mutex<Option<CliError>> = Mutex::new(None);
    std::thread::scope(|s| {
        for slot in 0..parallel.max(1) {
            let (next, done, failure, bar, make) = (&next, &done, &failure, &bar, &make);
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= count || super::interrupted() {
                    return;
                }
                match make(i, slot).and_then(|c| run_one(&c)) {
                    Ok(o) => {
                        if let Some(b) = bar {
                            b.inc(1);
                        }
                        done.lock().unwrap_or_else(|p| p.into_inner()).push((i, o));
                    }
                    Err(e) => {
                        *failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                        next.store(count, Ordering::SeqCst);
                        return;
                    }
                }
            });
        }
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let mut done = done.into_inner().unwrap_or_else(|p| p.into_inner());
    done.sort_by_key(|(i, _)| *i);
    Ok(done)
}

fn progress(n: usize) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(n as u64), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{wide_bar}] {pos}/{len} flights, ETA {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    Some(bar)
}

fn io(what: &str, dir: &std::path::Path, e: std::io::Error) -> CliError {
    CliError::input(
        format!("{}: {what}: {e}", dir.display()),
        "choose a writable --out",
    )
}

/// Runs one child to its end, its wall limit or an interruption.
fn run_one(c: &ChildFlight) -> Result<ChildOutcome, CliError> {
    std::fs::create_dir_all(&c.dir).map_err(|e| io("cannot create", &c.dir, e))?;
    let log = std::fs::File::create(c.dir.join("run.log")).map_err(|e| io("run.log", &c.dir, e))?;
    let log2 = log.try_clone().map_err(|e| io("run.log", &c.dir, e))?;
    let exe = std::env::current_exe()
        .map_err(|e| CliError::run(format!("cannot find this program to run flights: {e}")))?;
    let started = Instant::now();
    let mut child = Command::new(exe)
        .args(&c.args)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log2)
        .spawn()
        .map_err(|e| CliError::run(format!("cannot start a flight: {e}")))?;
    let mut timed_out = false;
    let status = loop {
        if let Ok(Some(s)) = child.try_wait() {
            break Some(s);
        }
        let late = c.wall_limit.is_some_and(|l| started.elapsed() > l);
        if late || super::interrupted() {
            timed_out = late;
            break stop(&mut child);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ok(ChildOutcome {
        exit: status.and_then(|s| s.code()),
        timed_out,
        wall_s: started.elapsed().as_secs_f64(),
    })
}

/// SIGTERM (a mavsitl child then stops its firmware and flushes its
/// recording), SIGKILL after [`GRACE`].
fn stop(child: &mut Child) -> Option<std::process::ExitStatus> {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) on our own child's pid; no memory is involved.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
    let asked = Instant::now();
    while asked.elapsed() < GRACE {
        if let Ok(Some(s)) = child.try_wait() {
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    child.wait().ok()
}
