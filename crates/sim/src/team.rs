//! A team of threads that share each stage of a tick.
//!
//! A lockstep tick is a few short stages (the controllers' commands, the
//! physics, the sensor frames), each over every vehicle, with a little
//! serial work between them. At a hundred quads a stage is some tens of
//! microseconds: a pool whose idle threads go to sleep between stages spends
//! as long waking them as the stage saves.
//!
//! A [`Team`] is the calling thread (the leader, member 0) and `threads − 1`
//! workers kept for the team's life. Each stage gives every member a
//! contiguous share of the items, the leader the first ([`Balance`]), so a
//! vehicle is stepped on the same thread tick after tick (but for the few
//! at the edge of the leader's share) and its state stays in that thread's
//! cache. The leader's share is not fixed: the leader also does the serial
//! work between stages, which leaves its cache warm with state the stage
//! reads, and a worker's core may be slowed by the host. So after each
//! stage the leader's share grows a little when it had to wait for the
//! workers, and shrinks a little when they were done first: the shares
//! settle where all finish together.
//!
//! Between stages a worker spins on the stage counter for [`ROUNDS`] of
//! [`PAUSES`] looks, offering its core to other threads between rounds,
//! before it parks; a stage that follows within that time reaches it in
//! about a microsecond, and a team left idle (a paced run waiting for the
//! wall clock) sleeps. The leader waits for the workers by spinning too,
//! then sleeps until the last of them wakes it (a controller that blocks on
//! its firmware, a machine with more threads than cores).
//!
//! A stage of fewer items than threads runs on the leader alone: handing
//! it over costs about a microsecond, more than one vehicle's tick.
//!
//! What each member does with its share is independent of the others, so
//! the result of a stage does not depend on the number of threads; nothing
//! here allocates after [`Team::new`].

use std::any::Any;
use std::cell::UnsafeCell;
use std::ops::Range;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{JoinHandle, Thread};

/// Looks a spinning thread takes, pausing the core between them
/// (`spin_loop`), before it offers the core to another thread
/// (`yield_now`): about 1.5 µs on an AMD EPYC core, where a pause takes
/// 24 ns. A thread that waits on the core of the one it waits for (a
/// machine with more threads than cores) so lets it run.
const PAUSES: u32 = 64;

/// Rounds of [`PAUSES`] looks an idle worker takes for the next stage
/// before it parks: 2 048 looks, about 50 µs here (more on cores with a
/// longer pause). Counted, not timed: this crate never reads the wall
/// clock.
pub const ROUNDS: u32 = 32;

/// Rounds of [`PAUSES`] looks the leader takes for the workers before it
/// sleeps: about 100 µs.
const LEADER_ROUNDS: u32 = 64;

/// The items `member` of `threads` equal members takes of `n`: the
/// contiguous range from `member·n/threads` to `(member + 1)·n/threads`.
/// The shares of members 0 to `threads − 1` cover 0..n once, in order, and
/// differ in length by at most one. An empty range for a member past the
/// team.
pub fn share(n: usize, threads: usize, member: usize) -> Range<usize> {
    if member >= threads {
        return n..n;
    }
    // In u128: n·(member + 1) cannot overflow.
    let at = |m: usize| (n as u128 * m as u128 / threads as u128) as usize;
    at(member)..at(member + 1)
}

/// Whether a stage of `n` items on `threads` runs on the caller's thread
/// alone: when there are fewer items than threads. Handing a stage over
/// costs about a microsecond, more than one vehicle's tick (0.3 µs); and a
/// world of one vehicle on several threads is then one thread's world.
fn alone(n: usize, threads: usize) -> bool {
    n < threads
}

/// The whole of a stage's items, in [`Balance`]'s fixed point.
const WHOLE: u32 = 1 << 16;

/// How far the leader's share moves after a stage: 1/1024 of the items.
const STEP: u32 = WHOLE / 1024;

/// How one kind of stage splits its items: the leader's part, adapted
/// stage by stage; the workers share the rest equally. One per kind of
/// stage, since their items cost differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Balance {
    /// The leader's part in 1/65 536ths of the items (None: not yet used,
    /// an equal part).
    leader: Option<u32>,
}

impl Balance {
    /// The leader's part of a stage of `threads`, in 1/65 536ths.
    fn part(&self, threads: usize) -> u32 {
        let equal = WHOLE / threads.max(1).min(WHOLE as usize) as u32;
        self.leader.unwrap_or(equal)
    }

    /// The items `member` of `threads` takes of `n`: the leader (0) its part,
    /// rounded to the nearest item, from the start; each worker an equal
    /// [`share`] of the rest. The members' shares cover 0..n once, in order.
    pub fn share(&self, n: usize, threads: usize, member: usize) -> Range<usize> {
        if threads <= 1 {
            return if member == 0 { 0..n } else { n..n };
        }
        let part = u128::from(self.part(threads));
        let lead = ((n as u128 * part + u128::from(WHOLE / 2)) >> 16) as usize;
        match member {
            0 => 0..lead,
            m => {
                let r = share(n - lead, threads - 1, m - 1);
                lead + r.start..lead + r.end
            }
        }
    }

    /// After a stage of `threads`: the leader's part grows by [`STEP`] when
    /// it `waited` for the workers, else shrinks by it, within the whole.
    pub fn adapt(&mut self, threads: usize, waited: bool) {
        let part = self.part(threads);
        self.leader = Some(match waited {
            true => part.saturating_add(STEP).min(WHOLE),
            false => part.saturating_sub(STEP),
        });
    }
}

/// A stage's work, member by member: erased to `'static` while
/// [`Team::run`] holds the borrow it came from.
type Job = *const (dyn Fn(usize) + Sync + 'static);

/// What the leader and its workers share.
struct Shared {
    /// The current stage's work. Written by the leader only while no
    /// worker is working (before it bumps `epoch`), read by the workers only
    /// after they see the bump.
    job: UnsafeCell<Option<Job>>,
    /// Stages handed out so far.
    epoch: AtomicU64,
    /// Workers finished with the current stage.
    done: AtomicUsize,
    /// Per worker: parked, or about to park (the leader must unpark it).
    sleeping: Vec<AtomicBool>,
    /// The leader sleeps on `leader_wakes` (with `leader_lock`) until the
    /// last worker of the stage wakes it.
    leader_sleeping: AtomicBool,
    leader_lock: Mutex<()>,
    leader_wakes: Condvar,
    /// The team is being dropped.
    stop: AtomicBool,
    /// The panic of the lowest worker whose share panicked in the current
    /// stage, with the worker's number: the panic of the first item that
    /// panicked, whatever the threads.
    panic: Mutex<Option<(usize, Box<dyn Any + Send>)>>,
}

// SAFETY: `job` is the only field that is not Sync by itself. The leader
// writes it before a Release (SeqCst) bump of `epoch` and only after every
// worker has reported the previous stage done (Acquire on `done`); a worker
// reads it only after an Acquire load saw the bump. So the write happens
// before every read and no read overlaps a write. The pointee is Sync, and
// it outlives its use: `Team::run` returns only after every worker is done.
unsafe impl Sync for Shared {}
// SAFETY: as above; the raw pointer is only dereferenced under that protocol.
unsafe impl Send for Shared {}

/// The calling thread and `threads − 1` workers, sharing stages.
pub struct Team {
    shared: Arc<Shared>,
    workers: Vec<(Thread, Option<JoinHandle<()>>)>,
}

/// A slice's start, shareable because each member touches only its own
/// items (disjoint ranges from [`share`]).
struct Items<T>(*mut T);

impl<T> Items<T> {
    /// Item `i`.
    ///
    /// # Safety
    /// `i` is in bounds of the slice, and no other reference to item `i`
    /// lives while the returned one does.
    #[allow(clippy::mut_from_ref)]
    unsafe fn get(&self, i: usize) -> &mut T {
        // SAFETY: the caller's contract.
        unsafe { &mut *self.0.add(i) }
    }
}

// SAFETY: an `Items` only hands out `&mut T` to disjoint items, one member
// each; moving such a reference to another thread needs `T: Send`.
unsafe impl<T: Send> Sync for Items<T> {}

impl Team {
    /// A team of `threads` (at least 2): the caller and `threads − 1`
    /// workers named `mavsitl-step-1`, `mavsitl-step-2`, …
    ///
    /// # Errors
    /// The OS error when a worker cannot be started (those started are
    /// stopped again).
    pub fn new(threads: usize) -> std::io::Result<Team> {
        let workers = threads.max(2) - 1;
        let shared = Arc::new(Shared {
            job: UnsafeCell::new(None),
            epoch: AtomicU64::new(0),
            done: AtomicUsize::new(0),
            sleeping: (0..workers).map(|_| AtomicBool::new(false)).collect(),
            leader_sleeping: AtomicBool::new(false),
            leader_lock: Mutex::new(()),
            leader_wakes: Condvar::new(),
            stop: AtomicBool::new(false),
            panic: Mutex::new(None),
        });
        let mut team = Team {
            shared,
            workers: Vec::with_capacity(workers),
        };
        for w in 0..workers {
            let shared = Arc::clone(&team.shared);
            // On failure `team` drops, which stops the workers started.
            let handle = std::thread::Builder::new()
                .name(format!("mavsitl-step-{}", w + 1))
                .spawn(move || work(&shared, w))?;
            team.workers.push((handle.thread().clone(), Some(handle)));
        }
        Ok(team)
    }

    /// The threads of the team, the caller's included.
    pub fn threads(&self) -> usize {
        self.workers.len() + 1
    }

    /// `f(i, &mut items[i])` for every item, member `m` taking the items
    /// of `balance`'s share, which then adapts; all on the caller's thread
    /// when there are fewer items than threads ([`alone`]).
    ///
    /// # Panics
    /// When `f` panics on any thread (after every member is done).
    pub fn for_each<T: Send>(
        &mut self,
        balance: &mut Balance,
        items: &mut [T],
        f: impl Fn(usize, &mut T) + Sync,
    ) {
        let (n, t, b) = (items.len(), self.threads(), *balance);
        if alone(n, t) {
            items.iter_mut().enumerate().for_each(|(i, x)| f(i, x));
            return;
        }
        let items = Items(items.as_mut_ptr());
        let waited = self.run(&|m| {
            for i in b.share(n, t, m) {
                // SAFETY: i < n, and the members' shares are disjoint.
                f(i, unsafe { items.get(i) });
            }
        });
        balance.adapt(t, waited);
    }

    /// [`Team::for_each`] over two slices of the same length, item by item.
    ///
    /// # Panics
    /// When the lengths differ, or as [`Team::for_each`].
    pub fn for_each_pair<A: Send, B: Send>(
        &mut self,
        balance: &mut Balance,
        a: &mut [A],
        b: &mut [B],
        f: impl Fn(usize, &mut A, &mut B) + Sync,
    ) {
        assert_eq!(a.len(), b.len(), "a team's paired slices differ in length");
        let (n, t, shares) = (a.len(), self.threads(), *balance);
        if alone(n, t) {
            let pairs = a.iter_mut().zip(b.iter_mut()).enumerate();
            pairs.for_each(|(i, (a, b))| f(i, a, b));
            return;
        }
        let (a, b) = (Items(a.as_mut_ptr()), Items(b.as_mut_ptr()));
        let waited = self.run(&|m| {
            for i in shares.share(n, t, m) {
                // SAFETY: i < n for both, and the members' shares are disjoint.
                f(i, unsafe { a.get(i) }, unsafe { b.get(i) });
            }
        });
        balance.adapt(t, waited);
    }

    /// Runs `job(m)` on every member `m`, the caller taking 0; returns when
    /// all are done, with whether the caller had to wait for a worker.
    fn run(&mut self, job: &(dyn Fn(usize) + Sync)) -> bool {
        let sh = &*self.shared;
        let job = job as *const (dyn Fn(usize) + Sync + '_);
        // SAFETY: only the lifetime is erased; the pointer is used only
        // until every worker reports done, below, before this returns.
        let job: Job = unsafe { std::mem::transmute(job) };
        // SAFETY: every worker is done with the last stage (the wait below
        // saw it), so none reads `job` until the bump.
        unsafe { *sh.job.get() = Some(job) };
        sh.done.store(0, Ordering::Relaxed);
        sh.epoch.fetch_add(1, Ordering::SeqCst);
        for (w, (thread, _)) in self.workers.iter().enumerate() {
            if sh.sleeping[w].load(Ordering::SeqCst) {
                thread.unpark();
            }
        }
        // SAFETY: the pointee is alive for the whole call.
        let own = catch_unwind(AssertUnwindSafe(|| unsafe { (*job)(0) }));
        let waited = sh.done.load(Ordering::Acquire) < self.workers.len();
        self.wait_for_workers();
        // Taken whatever the leader's outcome, so that it is not reported
        // again by a later stage.
        let worker = sh.panic.lock().map(|mut p| p.take()).unwrap_or_default();
        if let Some(p) = own.err().or(worker.map(|(_, p)| p)) {
            resume_unwind(p);
        }
        waited
    }

    /// Spins until every worker is done with the stage, then sleeps until
    /// the last one wakes it.
    fn wait_for_workers(&self) {
        let (sh, workers) = (&*self.shared, self.workers.len());
        for _ in 0..LEADER_ROUNDS {
            for _ in 0..PAUSES {
                if sh.done.load(Ordering::Acquire) >= workers {
                    return;
                }
                std::hint::spin_loop();
            }
            std::thread::yield_now();
        }
        // The same handshake as a worker's: the flag is set before `done`
        // is read again, and the last worker adds to `done` before it reads
        // the flag (SeqCst), so one of them sees the other. The lock keeps
        // the wake-up from coming between the check and the wait.
        let mut guard = sh.leader_lock.lock().unwrap_or_else(|p| p.into_inner());
        sh.leader_sleeping.store(true, Ordering::SeqCst);
        while sh.done.load(Ordering::SeqCst) < workers {
            guard = match sh.leader_wakes.wait(guard) {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
        }
        sh.leader_sleeping.store(false, Ordering::SeqCst);
    }
}

impl Drop for Team {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        for (thread, handle) in &mut self.workers {
            thread.unpark();
            if let Some(h) = handle.take() {
                // A worker catches its shares' panics, so it ends cleanly.
                let _ = h.join();
            }
        }
    }
}

/// Worker `w`'s loop: wait for a stage, do member `w + 1`'s share, report.
fn work(sh: &Shared, w: usize) {
    let mut seen = 0;
    while let Some(epoch) = next_stage(sh, w, seen) {
        seen = epoch;
        // SAFETY: the leader wrote the job before the bump seen (Acquire),
        // and keeps it alive until this worker reports done.
        let job = unsafe { *sh.job.get() };
        if let Some(job) = job {
            // SAFETY: as above.
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| unsafe { (*job)(w + 1) })) {
                keep_lowest(&sh.panic, w, p);
            }
        }
        let done = sh.done.fetch_add(1, Ordering::SeqCst) + 1;
        if wakes_leader(done, sh.sleeping.len(), || {
            sh.leader_sleeping.load(Ordering::SeqCst)
        }) {
            let _guard = sh.leader_lock.lock().unwrap_or_else(|p| p.into_inner());
            sh.leader_wakes.notify_one();
        }
    }
}

/// Keeps worker `worker`'s panic `p` in `slot` unless a panic of the same
/// or a lower worker is there. A payload not kept is leaked, not dropped:
/// its drop could panic again and end the worker, and the leader would
/// wait for it forever.
fn keep_lowest(
    slot: &Mutex<Option<(usize, Box<dyn Any + Send>)>>,
    worker: usize,
    p: Box<dyn Any + Send>,
) {
    let mut kept = slot.lock().unwrap_or_else(|e| e.into_inner());
    let surplus = match kept.as_ref() {
        Some((w, _)) if *w <= worker => Some(p),
        _ => kept.replace((worker, p)).map(|(_, old)| old),
    };
    drop(kept);
    if let Some(s) = surplus {
        std::mem::forget(s);
    }
}

/// Whether the worker that made `done` of `workers` done wakes the leader:
/// the last one does, when the leader sleeps (`leader_sleeping`, read only
/// then).
fn wakes_leader(done: usize, workers: usize, leader_sleeping: impl FnOnce() -> bool) -> bool {
    done == workers && leader_sleeping()
}

/// What a worker that last took stage `seen` finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum News {
    /// Stage `epoch` to take.
    Stage(u64),
    /// The team is stopping.
    Stop,
    /// Nothing yet.
    Nothing,
}

/// What the stage counter at `epoch` and the stop flag tell a worker that
/// last took stage `seen`: a new stage comes before the stop (a team stops
/// only between stages).
fn news(epoch: u64, seen: u64, stopping: bool) -> News {
    match (epoch != seen, stopping) {
        (true, _) => News::Stage(epoch),
        (false, true) => News::Stop,
        (false, false) => News::Nothing,
    }
}

/// The next stage after `seen` (None: the team is stopping): looked for
/// [`ROUNDS`] of [`PAUSES`] times, offering the core between rounds, then
/// slept for.
fn next_stage(sh: &Shared, w: usize, seen: u64) -> Option<u64> {
    let look = |order| news(sh.epoch.load(order), seen, sh.stop.load(order));
    loop {
        for _ in 0..ROUNDS {
            for _ in 0..PAUSES {
                match look(Ordering::Acquire) {
                    News::Stage(epoch) => return Some(epoch),
                    News::Stop => return None,
                    News::Nothing => std::hint::spin_loop(),
                }
            }
            std::thread::yield_now();
        }
        // Announce the sleep, then look again: the leader bumps the epoch
        // before it reads `sleeping` (both SeqCst), so either it sees the
        // flag and unparks, or this look sees the bump.
        sh.sleeping[w].store(true, Ordering::SeqCst);
        if look(Ordering::SeqCst) == News::Nothing {
            std::thread::park();
        }
        sh.sleeping[w].store(false, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_each_item_once_in_order_within_one_of_each_other() {
        for threads in 1..=7 {
            for n in [0, 1, 2, 3, 5, 12, 100, 1001] {
                let shares: Vec<_> = (0..threads).map(|m| share(n, threads, m)).collect();
                let all: Vec<usize> = shares.iter().cloned().flatten().collect();
                assert_eq!(all, (0..n).collect::<Vec<_>>(), "{n} over {threads}");
                let lens = shares.iter().map(|r| r.len());
                let (lo, hi) = (lens.clone().min(), lens.max());
                assert!(hi.zip(lo).is_some_and(|(h, l)| h - l <= 1), "{shares:?}");
            }
        }
        // The numbers: 10 over 3 is 3, 3, 4; past the team, nothing.
        assert_eq!(share(10, 3, 0), 0..3);
        assert_eq!(share(10, 3, 1), 3..6);
        assert_eq!(share(10, 3, 2), 6..10);
        assert_eq!(share(10, 3, 3), 10..10);
        assert_eq!(share(usize::MAX, 2, 1), usize::MAX / 2..usize::MAX);
    }

    /// The thread each item of a stage ran on.
    fn names(team: &mut Team, n: usize) -> Vec<String> {
        let mut seen = vec![String::new(); n];
        team.for_each(&mut Balance::default(), &mut seen, |_, s| {
            *s = std::thread::current()
                .name()
                .unwrap_or("caller")
                .to_string();
        });
        seen
    }

    #[test]
    fn each_member_takes_its_share_on_its_own_thread_stage_after_stage() {
        let mut team = Team::new(3).expect("team");
        assert_eq!(team.threads(), 3);
        let first = names(&mut team, 10);
        let who = |r: Range<usize>| first[r].iter().collect::<std::collections::BTreeSet<_>>();
        assert_eq!(who(0..3).len(), 1);
        assert_eq!(
            who(3..6).into_iter().next().map(String::as_str),
            Some("mavsitl-step-1")
        );
        assert_eq!(
            who(6..10).into_iter().next().map(String::as_str),
            Some("mavsitl-step-2")
        );
        assert_ne!(first[0], first[3]);
        // The caller is the leader: its thread is the test's own.
        assert_eq!(first[0], std::thread::current().name().unwrap_or("caller"));
        // After a stage spun for and one slept for, the same shares.
        assert_eq!(names(&mut team, 10), first);
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert_eq!(names(&mut team, 10), first);
    }

    #[test]
    fn every_item_is_worked_once_with_its_index_over_many_stages() {
        let mut team = Team::new(2).expect("team");
        let mut a: Vec<u64> = (0..257).collect();
        let mut b = vec![0u64; 257];
        let mut balance = Balance::default();
        for round in 1..=2000u64 {
            team.for_each_pair(&mut balance, &mut a, &mut b, |i, a, b| {
                *a += i as u64;
                *b += round;
            });
        }
        for (i, (a, b)) in a.iter().zip(&b).enumerate() {
            assert_eq!(*a, i as u64 * 2001, "item {i}");
            assert_eq!(*b, 2000 * 2001 / 2, "item {i}");
        }
        // Fewer items than threads, and none.
        let mut one = [7u8];
        team.for_each(&mut balance, &mut one, |i, x| *x += i as u8 + 1);
        assert_eq!(one, [8]);
        team.for_each(&mut balance, &mut [] as &mut [u8], |_, _| unreachable!());
    }

    #[test]
    fn a_panic_on_a_worker_reaches_the_caller_and_the_team_goes_on() {
        let mut team = Team::new(2).expect("team");
        let mut items = [0u32; 4];
        let even = &mut Balance::default();
        let r = catch_unwind(AssertUnwindSafe(|| {
            team.for_each(even, &mut items, |i, _| assert!(i < 2, "item {i}"));
        }));
        let msg = r.err().and_then(|p| p.downcast::<String>().ok());
        assert_eq!(msg.as_deref().map(String::as_str), Some("item 2"));
        team.for_each(&mut Balance::default(), &mut items, |i, x| *x = i as u32);
        assert_eq!(items, [0, 1, 2, 3]);
        let r = catch_unwind(AssertUnwindSafe(|| {
            let even = &mut Balance::default();
            team.for_each(even, &mut items, |i, _| assert!(i >= 2, "leader's {i}"));
        }));
        assert!(r.is_err());
        team.for_each(&mut Balance::default(), &mut items, |i, x| {
            *x = 2 * i as u32
        });
        assert_eq!(items, [0, 2, 4, 6]);
    }

    #[test]
    #[should_panic(expected = "differ in length")]
    fn paired_slices_of_other_lengths_are_refused() {
        let mut team = Team::new(2).expect("team");
        let b = &mut Balance::default();
        team.for_each_pair(
            b,
            &mut [0; 2],
            &mut [0; 3],
            |_, _: &mut i32, _: &mut i32| {},
        );
    }

    /// The shares of `balance` for `n` items over `threads`.
    fn shares(balance: &Balance, n: usize, threads: usize) -> Vec<Range<usize>> {
        (0..threads).map(|m| balance.share(n, threads, m)).collect()
    }

    #[test]
    fn the_leaders_share_moves_a_1024th_a_stage_and_the_workers_share_the_rest() {
        let mut b = Balance::default();
        // Equal parts to start: 10 over 3 is 3 (3.33 rounded), 3, 4.
        assert_eq!(shares(&b, 10, 3), [0..3, 3..6, 6..10]);
        assert_eq!(shares(&b, 1000, 2), [0..500, 500..1000]);
        // Waiting grows the leader's part by 1/1024 a stage; 20 stages are
        // 20/1024 of 1000 items, 19.5, rounded to 20.
        for _ in 0..20 {
            b.adapt(2, true);
        }
        assert_eq!(shares(&b, 1000, 2), [0..520, 520..1000]);
        assert_eq!(shares(&b, 1000, 3), [0..520, 520..760, 760..1000]);
        // Not waiting shrinks it.
        for _ in 0..30 {
            b.adapt(2, false);
        }
        assert_eq!(shares(&b, 1000, 2), [0..490, 490..1000]);
        // Within the whole: all, or nothing, to the leader.
        for _ in 0..2000 {
            b.adapt(2, true);
        }
        assert_eq!(shares(&b, 1000, 2), [0..1000, 1000..1000]);
        b.adapt(2, false);
        assert_eq!(shares(&b, 1000, 2), [0..999, 999..1000]);
        for _ in 0..2000 {
            b.adapt(2, false);
        }
        assert_eq!(shares(&b, 1000, 3), [0..0, 0..500, 500..1000]);
        // One thread: everything to the leader, whatever its part.
        assert_eq!(b.share(7, 1, 0), 0..7);
        assert_eq!(b.share(7, 1, 1), 7..7);
        // Always a cover of 0..n in order.
        for part in [0, 1, 300, WHOLE / 3, WHOLE - 1, WHOLE] {
            let b = Balance { leader: Some(part) };
            for (n, t) in [(0, 2), (1, 2), (5, 3), (1001, 4)] {
                let all: Vec<usize> = shares(&b, n, t).into_iter().flatten().collect();
                assert_eq!(all, (0..n).collect::<Vec<_>>(), "{part} {n} {t}");
            }
        }
    }

    /// Waits (yielding) until `flag` is up; fails after 10 s.
    fn wait_for(flag: &AtomicBool) {
        let start = std::time::Instant::now();
        while !flag.load(Ordering::SeqCst) {
            assert!(
                start.elapsed().as_secs() < 10,
                "the other member never came"
            );
            std::thread::yield_now();
        }
    }

    /// A stage of 8 items on two threads in which the `late` member's
    /// share waits for the other's to end, then takes 100 ms more.
    fn lopsided(team: &mut Team, b: &mut Balance, late: usize) {
        let ended = AtomicBool::new(false);
        let mut items = [(); 8];
        team.for_each(b, &mut items, |i, _| {
            let member = usize::from(i >= 4);
            if member == late && (i == 0 || i == 4) {
                wait_for(&ended);
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            if member != late && (i == 3 || i == 7) {
                ended.store(true, Ordering::SeqCst);
            }
        });
    }

    #[test]
    fn the_leaders_share_grows_when_it_waits_and_shrinks_when_the_workers_do() {
        let mut team = Team::new(2).expect("team");
        let even = Balance::default().part(2);
        // The worker ends last: the leader waited (and slept), and takes more.
        let mut b = Balance::default();
        lopsided(&mut team, &mut b, 1);
        assert_eq!(b.part(2), even + STEP);
        // The leader ends last: it takes less.
        let mut b = Balance::default();
        lopsided(&mut team, &mut b, 0);
        assert_eq!(b.part(2), even - STEP);
    }

    /// Of the panics of one stage the caller gets the lowest member's, the
    /// first item's: the leader's before a worker's, the first worker's
    /// before the second's, whatever ends first; the next stage is clean.
    #[test]
    fn the_first_items_panic_is_the_one_reported() {
        let mut team = Team::new(3).expect("team");
        // Item `first` runs first; the others wait for it.
        let stage = |team: &mut Team, panics: &[usize], first: usize| {
            let first_ended = AtomicBool::new(false);
            let mut items = [(); 3];
            let r = catch_unwind(AssertUnwindSafe(|| {
                team.for_each(&mut Balance::default(), &mut items, |i, _| {
                    match i == first {
                        true => first_ended.store(true, Ordering::SeqCst),
                        false => wait_for(&first_ended),
                    }
                    assert!(!panics.contains(&i), "item {i}");
                });
            }));
            r.err()
                .and_then(|p| p.downcast::<String>().ok())
                .map(|m| *m)
        };
        // Items 1 and 2 panic, 2 (on the second worker) first.
        assert_eq!(stage(&mut team, &[1, 2], 2).as_deref(), Some("item 1"));
        assert_eq!(stage(&mut team, &[], 2), None);
        // The leader's item and a worker's, the worker's first.
        assert_eq!(stage(&mut team, &[0, 2], 2).as_deref(), Some("item 0"));
        assert_eq!(stage(&mut team, &[2, 1], 1).as_deref(), Some("item 1"));
        assert_eq!(stage(&mut team, &[], 0), None);
    }

    #[test]
    fn a_new_stage_comes_before_the_stop_and_the_last_worker_wakes_a_sleeping_leader() {
        assert_eq!(news(5, 4, false), News::Stage(5));
        assert_eq!(news(5, 4, true), News::Stage(5));
        assert_eq!(news(4, 4, true), News::Stop);
        assert_eq!(news(4, 4, false), News::Nothing);
        assert!(wakes_leader(3, 3, || true));
        assert!(!wakes_leader(3, 3, || false));
        assert!(!wakes_leader(2, 3, || true));
        // The flag is not read for a worker that is not the last.
        assert!(!wakes_leader(2, 3, || unreachable!()));
    }

    /// An idle worker sleeps after its spins and is woken for the next
    /// stage; a dropped team's workers end.
    #[test]
    fn an_idle_worker_sleeps_and_a_dropped_teams_threads_end() {
        let mut team = Team::new(2).expect("team");
        let shared = Arc::clone(&team.shared);
        let mut items = [0u8; 4];
        team.for_each(&mut Balance::default(), &mut items, |_, x| *x += 1);
        let start = std::time::Instant::now();
        while !shared.sleeping[0].load(Ordering::SeqCst) {
            assert!(start.elapsed().as_secs() < 10, "the worker never slept");
            std::thread::yield_now();
        }
        team.for_each(&mut Balance::default(), &mut items, |_, x| *x += 1);
        assert_eq!(items, [2; 4]);
        drop(team);
        // Only the workers held the other references.
        while Arc::strong_count(&shared) > 1 {
            assert!(start.elapsed().as_secs() < 10, "a worker outlived its team");
            std::thread::yield_now();
        }
    }

    /// Fewer items than threads run on the caller's thread, and leave the
    /// balance as it was; as many items as threads are shared.
    #[test]
    fn fewer_items_than_threads_stay_on_the_callers_thread() {
        let mut team = Team::new(3).expect("team");
        let caller = std::thread::current()
            .name()
            .unwrap_or("caller")
            .to_string();
        for n in [1, 2] {
            let mut b = Balance::default();
            let mut seen = vec![String::new(); n];
            let mut other = vec![0u8; n];
            team.for_each_pair(&mut b, &mut seen, &mut other, |i, s, o| {
                *s = std::thread::current()
                    .name()
                    .unwrap_or("caller")
                    .to_string();
                *o = i as u8 + 1;
            });
            assert!(seen.iter().all(|s| *s == caller), "{n}: {seen:?}");
            assert_eq!(other, (1..=n as u8).collect::<Vec<_>>());
            assert_eq!(b, Balance::default(), "{n}");
        }
        assert_eq!(
            names(&mut team, 3),
            [caller.as_str(), "mavsitl-step-1", "mavsitl-step-2"]
        );
        assert!(alone(1, 2) && alone(0, 2) && !alone(2, 2) && !alone(3, 2));
    }

    #[test]
    fn a_surplus_panic_is_kept_only_when_lower() {
        let slot = Mutex::new(None);
        keep_lowest(&slot, 2, Box::new("two"));
        keep_lowest(&slot, 3, Box::new("three"));
        let kept = |slot: &Mutex<Option<(usize, Box<dyn Any + Send>)>>| {
            let g = slot.lock().expect("lock");
            g.as_ref()
                .map(|(m, p)| (*m, p.downcast_ref::<&str>().copied()))
        };
        assert_eq!(kept(&slot), Some((2, Some("two"))));
        keep_lowest(&slot, 2, Box::new("two again"));
        assert_eq!(kept(&slot), Some((2, Some("two"))));
        keep_lowest(&slot, 1, Box::new("one"));
        assert_eq!(kept(&slot), Some((1, Some("one"))));
    }
}
