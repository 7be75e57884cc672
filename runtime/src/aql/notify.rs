//! A wake-up channel without lost wake-ups: a waiter reads the generation, checks
//! its condition, then sleeps until the generation moves.

use std::sync::atomic::{AtomicUsize, Ordering, fence};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

#[derive(Default)]
pub(crate) struct Notify {
    generation: Mutex<u64>,
    changed: Condvar,
    /// Threads between `begin` and the end of `wait`; notifiers skip the lock when 0.
    waiters: AtomicUsize,
}

impl Notify {
    /// Starts a wait: returns the generation to pass to [`Notify::wait`]. The caller
    /// must call `wait` or `cancel` afterwards.
    pub(crate) fn begin(&self) -> u64 {
        self.waiters.fetch_add(1, Ordering::SeqCst);
        // Pairs with the fence in `notify`: either the notifier sees this waiter or
        // the waiter's condition check sees the notifier's change.
        fence(Ordering::SeqCst);
        *self.generation.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn cancel(&self) {
        self.waiters.fetch_sub(1, Ordering::SeqCst);
    }

    /// Sleeps until the generation differs from `seen` or `deadline` passes.
    pub(crate) fn wait(&self, seen: u64, deadline: Option<Instant>) {
        let mut g = self.generation.lock().unwrap_or_else(|e| e.into_inner());
        while *g == seen {
            match deadline {
                None => g = self.changed.wait(g).unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        break;
                    }
                    g = self
                        .changed
                        .wait_timeout(g, d - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            }
        }
        drop(g);
        self.cancel();
    }

    /// Wakes every waiter. Call after making the change visible.
    pub(crate) fn notify(&self) {
        fence(Ordering::SeqCst);
        if self.waiters.load(Ordering::SeqCst) == 0 {
            return;
        }
        let mut g = self.generation.lock().unwrap_or_else(|e| e.into_inner());
        *g = g.wrapping_add(1);
        drop(g);
        self.changed.notify_all();
    }

    /// Wakes unconditionally (for state changes not covered by the waiter count's
    /// fence pairing, e.g. shutdown).
    pub(crate) fn notify_always(&self) {
        let mut g = self.generation.lock().unwrap_or_else(|e| e.into_inner());
        *g = g.wrapping_add(1);
        drop(g);
        self.changed.notify_all();
    }
}
