//! Flights run as children of the `mavsitl` program (`fly`, `px4`,
//! `ardupilot` with `--record`), several at a time: what a suite run and a
//! comparison share. A flight that needs no process of its own (SimpleFlight
//! alone, no firmware, no port) may instead be flown in this process, on
//! the slot's thread, by a [`FlyHere`] the program hands over. Each child's output goes to `run.log` in its
//! directory; a child past its wall time limit, or every child once the
//! stop flag is raised (Ctrl-C), is stopped (SIGTERM, then SIGKILL after a
//! grace period), so no run is left behind.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::Path;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use mavsitl_core::failure::Failure;

/// How long a child stopped with SIGTERM gets before SIGKILL.
const GRACE: Duration = Duration::from_secs(5);

/// One child run.
#[derive(Debug, Clone)]
pub struct ChildFlight {
    /// The program to run: `mavsitl` itself.
    pub exe: PathBuf,
    /// Arguments after the program name.
    pub args: Vec<OsString>,
    /// Its directory (recording and `run.log`).
    pub dir: PathBuf,
    /// Stopped after this much wall time.
    pub wall_limit: Option<Duration>,
}

/// Flies a child's flight in this process instead, its output in the
/// directory's `run.log`, its exit code as the program's would be; `None`
/// when the flight needs a process of its own (firmware, ports), which is
/// then started.
pub type FlyHere = fn(&ChildFlight, &AtomicBool) -> Option<ChildOutcome>;

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChildOutcome {
    /// Its exit code (None: killed by a signal).
    pub exit: Option<i32>,
    /// Stopped at its wall time limit.
    pub timed_out: bool,
    /// Wall time, s.
    pub wall_s: f64,
}

/// Runs `count` children, `parallel` at a time; `make(i, slot)` gives child
/// `i` run in parallel slot `slot` (0-based, never two children at once).
/// With `here`, each is first offered to it to fly in this process.
/// Once `stop` is raised, stops the running children and starts no other.
/// Returns (i, outcome) of the children run, in order of `i`.
pub fn run_children(
    count: usize,
    parallel: usize,
    (stop, here): (&AtomicBool, Option<FlyHere>),
    make: impl Fn(usize, usize) -> Result<ChildFlight, Failure> + Sync,
) -> Result<Vec<(usize, ChildOutcome)>, Failure> {
    let bar = progress(count);
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, ChildOutcome)>> = Mutex::new(Vec::new());
    let failure: Mutex<Option<Failure>> = Mutex::new(None);
    std::thread::scope(|s| {
        for slot in 0..parallel.max(1) {
            let (next, done, failure, bar, make) = (&next, &done, &failure, &bar, &make);
            let stopped = || stop.load(Ordering::SeqCst);
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= count || stopped() {
                    return;
                }
                let flown = make(i, slot).and_then(|c| match here.and_then(|h| h(&c, stop)) {
                    Some(o) => Ok(o),
                    None => run_one(&c, stop),
                });
                match flown {
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

fn io(what: &str, dir: &Path, e: std::io::Error) -> Failure {
    Failure::input(
        format!("{}: {what}: {e}", dir.display()),
        "choose a writable --out",
    )
}

/// Runs one child to its end, its wall limit or `stop`.
fn run_one(c: &ChildFlight, stop: &AtomicBool) -> Result<ChildOutcome, Failure> {
    std::fs::create_dir_all(&c.dir).map_err(|e| io("cannot create", &c.dir, e))?;
    let log = std::fs::File::create(c.dir.join("run.log")).map_err(|e| io("run.log", &c.dir, e))?;
    let log2 = log.try_clone().map_err(|e| io("run.log", &c.dir, e))?;
    let started = Instant::now();
    let mut child = Command::new(&c.exe)
        .args(&c.args)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log2)
        .spawn()
        .map_err(|e| Failure::run(format!("cannot start a flight: {e}")))?;
    let mut timed_out = false;
    let status = loop {
        if let Ok(Some(s)) = child.try_wait() {
            break Some(s);
        }
        let late = c.wall_limit.is_some_and(|l| started.elapsed() > l);
        if late || stop.load(Ordering::SeqCst) {
            timed_out = late;
            break terminate(&mut child);
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
fn terminate(child: &mut Child) -> Option<std::process::ExitStatus> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Flies the jobs whose first argument is "here" with exit 7; leaves
    /// the others to a child.
    fn here(c: &ChildFlight, _stop: &AtomicBool) -> Option<ChildOutcome> {
        (c.args.first().is_some_and(|a| a == "here")).then_some(ChildOutcome {
            exit: Some(7),
            timed_out: false,
            wall_s: 0.0,
        })
    }

    /// With a [`FlyHere`], the flights it takes are flown by it and the
    /// others by a child each; without one, every flight is a child.
    #[test]
    fn a_flight_is_flown_here_when_it_can_be_and_by_a_child_otherwise() {
        let dir = tempfile::tempdir().expect("dir");
        let job = |i: usize| {
            let args: Vec<OsString> = if i.is_multiple_of(2) {
                vec!["here".into()]
            } else {
                vec!["-c".into(), "echo child; exit 3".into()]
            };
            ChildFlight {
                exe: PathBuf::from("/bin/sh"),
                args,
                dir: dir.path().join(format!("{i}")),
                wall_limit: None,
            }
        };
        let never = AtomicBool::new(false);
        let run = |h: Option<FlyHere>| {
            run_children(5, 2, (&never, h), |i, _| Ok(job(i)))
                .expect("run")
                .into_iter()
                .map(|(i, o)| (i, o.exit))
                .collect::<Vec<_>>()
        };
        let with = run(Some(here));
        assert_eq!(
            with,
            vec![
                (0, Some(7)),
                (1, Some(3)),
                (2, Some(7)),
                (3, Some(3)),
                (4, Some(7))
            ]
        );
        let log = std::fs::read_to_string(dir.path().join("1").join("run.log")).expect("log");
        assert_eq!(log, "child\n");
        assert!(
            !dir.path().join("0").exists(),
            "flown here, no child's directory"
        );
        // Without it, "here" is an argument /bin/sh cannot open (exit 127 or 2).
        let without = run(None);
        assert!(
            without.iter().all(|(i, e)| (i % 2 == 1) == (*e == Some(3))),
            "{without:?}"
        );
    }
}
