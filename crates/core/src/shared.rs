//! A value shared between a controller and what watches or commands it —
//! the ground-station endpoint, the flight's watch, AirSim's API — which a
//! world of many vehicles may step on several threads.
//!
//! Within one tick each vehicle's controller runs on one thread and its
//! watchers run between ticks, so a [`Shared`] is never contended; the
//! lock makes the handle `Send` and `Sync`, which the compiler needs to
//! hand a controller to another thread. `borrow` and `borrow_mut` keep
//! the names of the `RefCell` they replace: both give the one guard. A
//! guard must not be held while the same thread borrows again (a
//! `RefCell` refuses a write within a read the same way).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// A value shared by handles that may live on different threads.
#[derive(Debug, Default)]
pub struct Shared<T>(Arc<Mutex<T>>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<T> Shared<T> {
    /// A new shared value.
    pub fn new(value: T) -> Self {
        Shared(Arc::new(Mutex::new(value)))
    }

    /// The value, to read. (A panic while it was held does not make it
    /// unreadable: the value is as that thread left it.)
    pub fn borrow(&self) -> MutexGuard<'_, T> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The value, to change.
    pub fn borrow_mut(&self) -> MutexGuard<'_, T> {
        self.borrow()
    }

    /// Whether two handles share one value.
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A change through one handle is seen through every other, on another
    /// thread too.
    #[test]
    fn every_handle_sees_one_value_across_threads() {
        let a = Shared::new(vec![1, 2]);
        let b = a.clone();
        assert!(Shared::ptr_eq(&a, &b));
        assert!(!Shared::ptr_eq(&a, &Shared::new(vec![1, 2])));
        std::thread::scope(|s| {
            s.spawn(|| b.borrow_mut().push(3));
        });
        assert_eq!(*a.borrow(), vec![1, 2, 3]);
        // A thread that panicked holding it leaves the value readable.
        let c = a.clone();
        let _ = std::thread::spawn(move || {
            let mut g = c.borrow_mut();
            g.push(4);
            panic!("while holding it");
        })
        .join();
        assert_eq!(*a.borrow(), vec![1, 2, 3, 4]);
    }
}
