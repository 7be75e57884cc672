//! Env-gated per-phase timers for the KGSL path (`WAVEJIT_KGSL_PROFILE=1`): the
//! totals and per-submission means go to stderr when the process exits
//! (clients rarely close the device first). Off (the default) each phase costs
//! one relaxed atomic load.

use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use wavejit_ir::{Dispatch, Kernel};

/// Environment variable that turns the timers on.
pub const PROFILE_ENV: &str = "WAVEJIT_KGSL_PROFILE";

/// A timed part of the KGSL path.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    /// GPU_COMMAND as a whole, inside the driver.
    Submit,
    /// Re-reading /proc/self/maps and re-registering memory.
    Refresh,
    /// Reading the shader, hashing it and finding the lifted kernel (or lifting it).
    Kernel,
    /// Building the uniform image of a dispatch.
    Uniforms,
    /// The JIT running the dispatch (compilation on a cache miss included).
    Run,
    /// DEVICE_WAITTIMESTAMP as a whole.
    Wait,
}

const PHASES: [Phase; 6] = [
    Phase::Submit,
    Phase::Refresh,
    Phase::Kernel,
    Phase::Uniforms,
    Phase::Run,
    Phase::Wait,
];

static NANOS: [AtomicU64; 6] = [const { AtomicU64::new(0) }; 6];
static COUNTS: [AtomicU64; 6] = [const { AtomicU64::new(0) }; 6];
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Whether the timers run (read from the environment once).
pub fn enabled() -> bool {
    static INIT: OnceLock<()> = OnceLock::new();
    INIT.get_or_init(|| {
        let on = std::env::var(PROFILE_ENV).is_ok_and(|v| v == "1");
        ENABLED.store(on, Ordering::Relaxed);
        if on {
            // SAFETY: registers a function with no preconditions.
            unsafe { libc::atexit(print_report) };
        }
    });
    ENABLED.load(Ordering::Relaxed)
}

/// A running timer; adds its elapsed time to its phase when dropped.
pub struct Timer(Option<(Phase, Instant)>);

/// Starts timing `phase` (a no-op when the timers are off).
pub fn start(phase: Phase) -> Timer {
    Timer(enabled().then(|| (phase, Instant::now())))
}

impl Drop for Timer {
    fn drop(&mut self) {
        if let Some((phase, t0)) = self.0 {
            let i = PHASES.iter().position(|p| *p == phase).unwrap_or(0);
            NANOS[i].fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
            COUNTS[i].fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Runs the report lists by time, longest first.
const SLOWEST: usize = 12;

/// The longest runs so far: (nanoseconds, the run described).
static SLOWEST_RUNS: Mutex<Vec<(u64, String)>> = Mutex::new(Vec::new());

/// A dispatch's run, timed; [`Timer`] for [`Phase::Run`] that also keeps the
/// longest runs with their kernel's name (where a client's time goes is
/// mostly a few kernels).
pub struct RunTimer<'a> {
    _timer: Timer,
    started: Option<(Instant, &'a Kernel, &'a Dispatch)>,
}

/// Starts timing the run of `kernel` for `dispatch`.
pub fn start_run<'a>(kernel: &'a Kernel, dispatch: &'a Dispatch) -> RunTimer<'a> {
    let timer = start(Phase::Run);
    let started = timer.0.map(|(_, t0)| (t0, kernel, dispatch));
    RunTimer {
        _timer: timer,
        started,
    }
}

/// `kernel` told apart from others of the same name (lifted kernels are named
/// after their register count): its size and a hash of its IR.
fn describe(kernel: &Kernel, dispatch: &Dispatch) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    kernel.hash(&mut h);
    format!(
        "{:?} x {:?} lanes, {}: {} ops in {} blocks, IR hash {:016x}",
        dispatch.workgroups,
        dispatch.workgroup_size,
        kernel.name,
        kernel.op_count(),
        kernel.blocks.len(),
        h.finish()
    )
}

impl Drop for RunTimer<'_> {
    fn drop(&mut self) {
        let Some((t0, kernel, dispatch)) = self.started else {
            return;
        };
        let ns = t0.elapsed().as_nanos() as u64;
        let mut slow = SLOWEST_RUNS.lock().unwrap_or_else(|p| p.into_inner());
        if slow.len() < SLOWEST || slow.last().is_some_and(|l| l.0 < ns) {
            let at = slow.partition_point(|s| s.0 >= ns);
            slow.insert(at, (ns, describe(kernel, dispatch)));
            slow.truncate(SLOWEST);
        }
    }
}

extern "C" fn print_report() {
    eprint!("{}", report());
}

/// The totals as text: per phase its count, total and mean per submission.
pub fn report() -> String {
    let submits = COUNTS[0].load(Ordering::Relaxed).max(1);
    let mut s = format!("wavejit kgsl profile ({submits} submissions):\n");
    for (i, p) in PHASES.iter().enumerate() {
        let n = COUNTS[i].load(Ordering::Relaxed);
        let ns = NANOS[i].load(Ordering::Relaxed);
        s += &format!(
            "  {:<9} {n:>7} x  {:>10.3} ms total  {:>9.1} us/submission\n",
            format!("{p:?}"),
            ns as f64 / 1e6,
            ns as f64 / 1e3 / submits as f64
        );
    }
    let slow = SLOWEST_RUNS.lock().unwrap_or_else(|p| p.into_inner());
    if !slow.is_empty() {
        s += "  longest runs:\n";
        for (ns, run) in slow.iter() {
            s += &format!("    {:>10.3} ms  {run}\n", *ns as f64 / 1e6);
        }
    }
    s
}
