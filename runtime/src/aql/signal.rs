//! HSA signals: a 64-bit value that packets decrement on completion and that hosts
//! and packet processors wait on.
//!
//! A signal's handle is the address of its state, whose first 64 bytes follow
//! `amd_signal_t` (kind at 0, value at 8), as on ROCR. Handles found in packets are
//! looked up in a process-wide registry before use, so a bad handle is an error,
//! never a wild pointer. Writing the value through the raw address works but wakes
//! nobody; waiters poll every [`POLL_INTERVAL`] to see such writes eventually.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering, fence};
use std::sync::{Arc, LazyLock, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

use super::notify::Notify;

/// Longest sleep of a waiter between two looks at a value.
pub const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// `amd_signal_kind_t` values.
const KIND_USER: i64 = 1;
const KIND_DOORBELL: i64 = -1;

/// `hsa_signal_condition_t`.
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Condition {
    Eq = 0,
    Ne = 1,
    Lt = 2,
    Gte = 3,
}

impl Condition {
    pub fn from_raw(raw: u32) -> Option<Condition> {
        match raw {
            0 => Some(Condition::Eq),
            1 => Some(Condition::Ne),
            2 => Some(Condition::Lt),
            3 => Some(Condition::Gte),
            _ => None,
        }
    }

    pub fn holds(self, value: i64, compare: i64) -> bool {
        match self {
            Condition::Eq => value == compare,
            Condition::Ne => value != compare,
            Condition::Lt => value < compare,
            Condition::Gte => value >= compare,
        }
    }
}

/// The state behind a handle. The first 64 bytes are `amd_signal_t`.
#[repr(C, align(64))]
pub(crate) struct SignalState {
    kind: i64,
    value: AtomicI64,
    event_mailbox_ptr: u64,
    event_id: u32,
    reserved1: u32,
    start_ts: u64,
    end_ts: u64,
    queue_ptr: u64,
    reserved2: u64,
    /// Host waiters of this signal.
    notify: Notify,
    /// Packet processors blocked on this signal (barrier dependencies, doorbells).
    watchers: Mutex<Vec<Arc<Notify>>>,
    watcher_count: AtomicUsize,
}

type Registry = RwLock<HashMap<u64, Weak<SignalState>>>;

static REGISTRY: LazyLock<Registry> = LazyLock::new(|| RwLock::new(HashMap::new()));

impl Drop for SignalState {
    fn drop(&mut self) {
        let handle = self as *const SignalState as u64;
        REGISTRY
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&handle);
    }
}

/// A shared reference to a signal; clones refer to the same signal, which lives
/// while any clone does (the C ABI keeps one until `wj_aql_signal_destroy`).
#[derive(Clone)]
pub struct Signal(Arc<SignalState>);

impl std::fmt::Debug for Signal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Signal({:#x} = {})",
            self.handle(),
            self.load(Ordering::Relaxed)
        )
    }
}

impl Signal {
    /// A user signal with `initial` value.
    pub fn new(initial: i64) -> Signal {
        Signal::with_kind(initial, KIND_USER)
    }

    pub(crate) fn new_doorbell() -> Signal {
        Signal::with_kind(-1, KIND_DOORBELL)
    }

    fn with_kind(initial: i64, kind: i64) -> Signal {
        let state = Arc::new(SignalState {
            kind,
            value: AtomicI64::new(initial),
            event_mailbox_ptr: 0,
            event_id: 0,
            reserved1: 0,
            start_ts: 0,
            end_ts: 0,
            queue_ptr: 0,
            reserved2: 0,
            notify: Notify::default(),
            watchers: Mutex::new(Vec::new()),
            watcher_count: AtomicUsize::new(0),
        });
        let handle = Arc::as_ptr(&state) as u64;
        REGISTRY
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(handle, Arc::downgrade(&state));
        Signal(state)
    }

    /// The live signal with this handle (`hsa_signal_t.handle`), if any.
    pub fn from_handle(handle: u64) -> Option<Signal> {
        let reg = REGISTRY.read().unwrap_or_else(|e| e.into_inner());
        reg.get(&handle).and_then(Weak::upgrade).map(Signal)
    }

    /// The handle: the address of the `amd_signal_t`-compatible state.
    pub fn handle(&self) -> u64 {
        Arc::as_ptr(&self.0) as u64
    }

    pub fn is_doorbell(&self) -> bool {
        self.0.kind == KIND_DOORBELL
    }

    pub fn load(&self, order: Ordering) -> i64 {
        self.0.value.load(load_order(order))
    }

    pub fn store(&self, value: i64, order: Ordering) {
        self.0.value.store(value, store_order(order));
        self.changed();
    }

    /// A store that wakes no waiter (`hsa_signal_silent_store_*`).
    pub fn silent_store(&self, value: i64, order: Ordering) {
        self.0.value.store(value, store_order(order));
    }

    /// Returns the previous value.
    pub fn exchange(&self, value: i64, order: Ordering) -> i64 {
        self.rmw(|v| v.swap(value, order))
    }

    /// Returns the previous value; stores `value` only if it was `expected`.
    pub fn cas(&self, expected: i64, value: i64, order: Ordering) -> i64 {
        self.rmw(
            |v| match v.compare_exchange(expected, value, order, load_order(order)) {
                Ok(old) | Err(old) => old,
            },
        )
    }

    /// Adds (wrapping) and returns the previous value.
    pub fn add(&self, delta: i64, order: Ordering) -> i64 {
        self.rmw(|v| v.fetch_add(delta, order))
    }

    /// Subtracts (wrapping) and returns the previous value.
    pub fn sub(&self, delta: i64, order: Ordering) -> i64 {
        self.rmw(|v| v.fetch_sub(delta, order))
    }

    pub fn and(&self, bits: i64, order: Ordering) -> i64 {
        self.rmw(|v| v.fetch_and(bits, order))
    }

    pub fn or(&self, bits: i64, order: Ordering) -> i64 {
        self.rmw(|v| v.fetch_or(bits, order))
    }

    pub fn xor(&self, bits: i64, order: Ordering) -> i64 {
        self.rmw(|v| v.fetch_xor(bits, order))
    }

    fn rmw(&self, op: impl FnOnce(&AtomicI64) -> i64) -> i64 {
        let old = op(&self.0.value);
        self.changed();
        old
    }

    /// Waits (acquire) until `cond(value, compare)` holds or `timeout` passes, and
    /// returns the value last observed, which need not satisfy the condition
    /// (callers loop, as with `hsa_signal_wait_scacquire`). `None` waits forever.
    pub fn wait(&self, cond: Condition, compare: i64, timeout: Option<Duration>) -> i64 {
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        loop {
            let seen = self.0.notify.begin();
            let value = self.load(Ordering::Acquire);
            let now = Instant::now();
            if cond.holds(value, compare) || deadline.is_some_and(|d| now >= d) {
                self.0.notify.cancel();
                return value;
            }
            let poll = now + POLL_INTERVAL;
            let until = deadline.map_or(poll, |d| d.min(poll));
            self.0.notify.wait(seen, Some(until));
        }
    }

    /// Wakes waiters and watching processors after a change of the value.
    fn changed(&self) {
        self.0.notify.notify();
        // `notify` issued a SeqCst fence after the value changed; `watch` pairs with it.
        if self.0.watcher_count.load(Ordering::SeqCst) > 0 {
            let watchers = self.0.watchers.lock().unwrap_or_else(|e| e.into_inner());
            for w in watchers.iter() {
                w.notify();
            }
        }
    }

    /// Makes every change of this signal wake `notify` until [`Signal::unwatch`].
    pub(crate) fn watch(&self, notify: &Arc<Notify>) {
        let mut watchers = self.0.watchers.lock().unwrap_or_else(|e| e.into_inner());
        watchers.push(notify.clone());
        self.0.watcher_count.fetch_add(1, Ordering::SeqCst);
        drop(watchers);
        // The caller reads the value after this: either it sees a concurrent change
        // or the changer sees this watcher.
        fence(Ordering::SeqCst);
    }

    pub(crate) fn unwatch(&self, notify: &Arc<Notify>) {
        let mut watchers = self.0.watchers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = watchers.iter().position(|w| Arc::ptr_eq(w, notify)) {
            watchers.swap_remove(i);
            self.0.watcher_count.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

fn load_order(order: Ordering) -> Ordering {
    match order {
        Ordering::Release | Ordering::Relaxed => Ordering::Relaxed,
        Ordering::AcqRel | Ordering::Acquire => Ordering::Acquire,
        _ => Ordering::SeqCst,
    }
}

fn store_order(order: Ordering) -> Ordering {
    match order {
        Ordering::Acquire | Ordering::Relaxed => Ordering::Relaxed,
        Ordering::AcqRel | Ordering::Release => Ordering::Release,
        _ => Ordering::SeqCst,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handle_is_amd_signal_layout() {
        let s = Signal::new(7);
        assert_eq!(std::mem::offset_of!(SignalState, value), 8);
        // SAFETY: the handle is the address of the live state; value is at +8.
        let raw = unsafe { *((s.handle() + 8) as *const i64) };
        assert_eq!(raw, 7);
        // SAFETY: kind is at +0.
        let kind = unsafe { *(s.handle() as *const i64) };
        assert_eq!(kind, KIND_USER);
    }

    #[test]
    fn registry_forgets_dropped_signals() {
        let s = Signal::new(1);
        let h = s.handle();
        assert!(Signal::from_handle(h).is_some());
        drop(s);
        assert!(Signal::from_handle(h).is_none());
        assert!(Signal::from_handle(0).is_none());
    }
}
