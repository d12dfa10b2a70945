//! Firmware as a child process: started in a fresh scratch directory with its
//! console captured, watched, and always stopped (SIGTERM, then SIGKILL after
//! a grace period; the kernel kills it too if mavsitl dies first).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::StartError;

/// Console lines kept for the message when the firmware dies.
const TAIL_LINES: usize = 12;
/// How long the firmware gets to stop after SIGTERM.
const GRACE: Duration = Duration::from_secs(3);
/// How often the watcher looks at the child.
const WATCH_EVERY: Duration = Duration::from_millis(50);
/// The console log's size at which it is rotated, bytes: `firmware.log`
/// becomes `firmware.log.1` (replacing the one before) and a new one starts,
/// so a chatty firmware keeps at most twice this on disk, always its tail.
pub const LOG_ROTATE_BYTES: u64 = 16 << 20;

/// What to start.
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    /// "PX4" or "ArduPilot", for messages.
    pub name: &'static str,
    /// The executable.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// The scratch working directory (made fresh; removed at the end unless kept).
    pub workdir: PathBuf,
    /// Keep the working directory.
    pub keep_workdir: bool,
    /// Where the console goes.
    pub log: PathBuf,
    /// Files to write into the working directory before the start (name, text).
    pub files: Vec<(String, String)>,
}

type Shared<T> = Arc<Mutex<T>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The firmware's console on disk, rotated at [`LOG_ROTATE_BYTES`].
struct ConsoleLog {
    path: PathBuf,
    file: File,
    written: u64,
}

impl ConsoleLog {
    fn create(path: &Path) -> std::io::Result<Self> {
        Ok(ConsoleLog {
            path: path.to_path_buf(),
            file: File::create(path)?,
            written: 0,
        })
    }

    /// Appends one console line; rotates first when the file is full. A
    /// failing disk loses lines, never the run.
    fn write_line(&mut self, line: &[u8]) {
        if self.written > 0 && self.written + line.len() as u64 > LOG_ROTATE_BYTES {
            let mut old = self.path.clone().into_os_string();
            old.push(".1");
            let fresh = std::fs::rename(&self.path, &old).and_then(|()| File::create(&self.path));
            match fresh {
                Ok(f) => {
                    self.file = f;
                    self.written = 0;
                }
                Err(e) => {
                    tracing::warn!(%e, log = %self.path.display(), "cannot rotate the firmware log")
                }
            }
        }
        if self.file.write_all(line).is_ok() {
            self.written += line.len() as u64;
        }
    }
}

/// A running firmware.
pub struct Firmware {
    spec: LaunchSpec,
    child: Shared<Child>,
    exit: Shared<Option<ExitStatus>>,
    tail: Shared<VecDeque<String>>,
    quit: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    started: Instant,
    /// mavsitl stopped it while it ran (its exit then is no failure).
    stopped_running: bool,
}

/// A fresh, empty directory at `dir` (whatever was there is removed).
pub fn fresh_dir(dir: &Path) -> Result<(), StartError> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| {
            StartError::new(
                format!("{}: cannot clear the working directory: {e}", dir.display()),
                "remove it by hand",
            )
        })?;
    }
    std::fs::create_dir_all(dir).map_err(|e| {
        StartError::new(
            format!(
                "{}: cannot create the working directory: {e}",
                dir.display()
            ),
            "set TMPDIR to a writable directory",
        )
    })
}

/// Why `program` cannot be started, if it cannot: missing, not a file, or
/// without an execute bit.
pub fn executable_problem(program: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt as _;
    match std::fs::metadata(program) {
        Err(e) => Some(format!("{}: {e}", program.display())),
        Ok(m) if !m.is_file() => Some(format!("{}: not a file", program.display())),
        Ok(m) if m.permissions().mode() & 0o111 == 0 => {
            Some(format!("{}: not executable", program.display()))
        }
        Ok(_) => None,
    }
}

/// A scratch directory for one run of `name` instance `instance`.
pub fn scratch_dir(name: &str, instance: u8) -> PathBuf {
    std::env::temp_dir().join(format!("mavsitl-{name}-{instance}-{}", std::process::id()))
}

/// Copies every line of `from` to the log and the tail.
fn pump(from: impl Read, log: Shared<ConsoleLog>, tail: Shared<VecDeque<String>>) {
    let mut r = BufReader::new(from);
    let mut line = Vec::new();
    loop {
        line.clear();
        match r.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                lock(&log).write_line(&line);
                let text = String::from_utf8_lossy(&line).trim_end().to_string();
                let mut t = lock(&tail);
                if t.len() == TAIL_LINES {
                    t.pop_front();
                }
                t.push_back(text);
            }
        }
    }
}

fn signal_group(pid: u32, sig: libc::c_int) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill(2) on the child's own process group; no memory is involved.
        unsafe {
            libc::kill(-pid, sig);
        }
    }
}

impl Firmware {
    /// Starts the firmware. `stop_run` is set the moment it exits, so a
    /// lockstep wait ends at once.
    pub fn spawn(spec: LaunchSpec, stop_run: &'static AtomicBool) -> Result<Self, StartError> {
        fresh_dir(&spec.workdir)?;
        let (workdir, keep) = (spec.workdir.clone(), spec.keep_workdir);
        Self::start(spec, stop_run).inspect_err(|_| {
            // Nothing ran: nothing to keep but what was asked for.
            if !keep {
                let _ = std::fs::remove_dir_all(&workdir);
            }
        })
    }

    /// [`Firmware::spawn`] in its fresh working directory.
    fn start(spec: LaunchSpec, stop_run: &'static AtomicBool) -> Result<Self, StartError> {
        eprintln!(
            "mavsitl: starting {} {} (console: {})",
            spec.program.display(),
            spec.args
                .iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" "),
            spec.log.display()
        );
        for (name, text) in &spec.files {
            let p = spec.workdir.join(name);
            std::fs::write(&p, text).map_err(|e| {
                StartError::new(
                    format!("{}: cannot write: {e}", p.display()),
                    "set TMPDIR to a writable directory",
                )
            })?;
        }
        let log = ConsoleLog::create(&spec.log).map_err(|e| {
            StartError::new(
                format!("{}: cannot write the firmware log: {e}", spec.log.display()),
                "choose a writable --record directory",
            )
        })?;
        let mut cmd = Command::new(&spec.program);
        cmd.args(&spec.args)
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&spec.workdir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group: Ctrl-C reaches mavsitl, which stops it
            // in order, and a stop reaches anything it started.
            .process_group(0);
        // SAFETY: prctl(2) only, between fork and exec; it allocates nothing.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let mut child = cmd.spawn().map_err(|e| {
            StartError::new(
                format!("cannot start {}: {e}", spec.program.display()),
                "check the firmware path",
            )
        })?;
        let log = Arc::new(Mutex::new(log));
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let mut threads = Vec::new();
        if let Some(out) = child.stdout.take() {
            let (l, t) = (log.clone(), tail.clone());
            threads.push(std::thread::spawn(move || pump(out, l, t)));
        }
        if let Some(err) = child.stderr.take() {
            let (l, t) = (log.clone(), tail.clone());
            threads.push(std::thread::spawn(move || pump(err, l, t)));
        }
        let child = Arc::new(Mutex::new(child));
        let exit = Arc::new(Mutex::new(None));
        let quit = Arc::new(AtomicBool::new(false));
        {
            let (child, exit, quit) = (child.clone(), exit.clone(), quit.clone());
            threads.push(std::thread::spawn(move || {
                while !quit.load(Ordering::Relaxed) {
                    if let Ok(Some(status)) = lock(&child).try_wait() {
                        *lock(&exit) = Some(status);
                        stop_run.store(true, Ordering::SeqCst);
                        return;
                    }
                    std::thread::sleep(WATCH_EVERY);
                }
            }));
        }
        Ok(Firmware {
            spec,
            child,
            exit,
            tail,
            quit,
            threads,
            started: Instant::now(),
            stopped_running: false,
        })
    }

    /// The console's last lines.
    pub fn tail(&self) -> Vec<String> {
        lock(&self.tail).iter().cloned().collect()
    }

    /// Whether the firmware exits within `timeout` (a bridge that saw its
    /// connection close may be a moment ahead of the watcher): why, as
    /// [`Firmware::exited`].
    pub fn exited_within(&self, timeout: Duration) -> Option<String> {
        let t = Instant::now();
        loop {
            if let Ok(Some(status)) = lock(&self.child).try_wait() {
                *lock(&self.exit) = Some(status);
            }
            if lock(&self.exit).is_some() || t.elapsed() >= timeout {
                return self.exited();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// When the firmware has exited on its own: why, with the last lines of
    /// its console.
    pub fn exited(&self) -> Option<String> {
        let status = (*lock(&self.exit))?;
        // Let the console pumps catch the last lines.
        std::thread::sleep(Duration::from_millis(100));
        let how = match (
            status.code(),
            std::os::unix::process::ExitStatusExt::signal(&status),
        ) {
            (Some(c), _) => format!("exited with status {c}"),
            (None, Some(s)) => format!("was killed by signal {s}"),
            _ => "exited".to_string(),
        };
        let tail = self.tail();
        let quoted = if tail.is_empty() {
            " (its console was empty)".to_string()
        } else {
            format!(
                "; the last lines of its console ({}):\n  | {}",
                self.spec.log.display(),
                tail.join("\n  | ")
            )
        };
        Some(format!(
            "{} {how} after {:.1} s{quoted}",
            self.spec.name,
            self.started.elapsed().as_secs_f64()
        ))
    }

    /// Stops the firmware: SIGTERM to its process group, SIGKILL after the
    /// grace period. Idempotent.
    pub fn stop(&mut self) {
        let pid = lock(&self.child).id();
        let running = lock(&self.child).try_wait().ok().flatten().is_none();
        if running && lock(&self.exit).is_none() {
            self.stopped_running = true;
        }
        if running {
            signal_group(pid, libc::SIGTERM);
            let t = Instant::now();
            while t.elapsed() < GRACE {
                if lock(&self.child).try_wait().ok().flatten().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        // Whatever is left of the group (the firmware itself after the grace
        // period, or anything it started).
        signal_group(pid, libc::SIGKILL);
        let _ = lock(&self.child).wait();
        self.quit.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for Firmware {
    fn drop(&mut self) {
        // A firmware that exited on its own failed (a run's end stops it):
        // its working directory holds what tells why.
        self.stop();
        let failed = !self.stopped_running;
        if self.spec.keep_workdir || failed {
            eprintln!(
                "{} working directory kept: {}",
                self.spec.name,
                self.spec.workdir.display()
            );
        } else {
            let _ = std::fs::remove_dir_all(&self.spec.workdir);
        }
    }
}
