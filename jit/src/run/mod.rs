//! A whole dispatch: batches of whole workgroups, on one or several threads.
//!
//! With the FAULT RULE the reported fault is the lowest faulting lane. Batches are
//! taken in increasing order, so when a batch faults every lower batch has been
//! taken and runs to its end; higher batches not yet taken are skipped. Results
//! therefore do not depend on the number of threads.
//!
//! The dispatch's [`Budget`](wavejit_ir::Budget) (time limit, cancel flag) is
//! checked before a worker's first batch and every `CLOCK_EVERY` batches
//! after (the interpreter checks it before each workgroup): a batch that finds
//! it exceeded faults like a batch whose first lane faulted, with
//! [`FaultKind::Budget`](wavejit_ir::FaultKind::Budget).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use wavejit_ir::{Dispatch, Fault, GlobalMemory, Kernel, Pinned};

use crate::JitError;
use crate::compiled::Compiled;
use crate::host::LaneFault;

mod gang;
mod lane;

use crate::workers::Workers;
use gang::GangRunner;
use lane::Runner;

/// Batches between two looks at the dispatch budget: a clock read costs about
/// a sixth of the smallest batch (256 lanes of a 3-instruction kernel on the
/// gang core, about 150 ns), and 16 batches stay far below a millisecond.
const CLOCK_EVERY: u32 = 16;

/// A worker running batches of one dispatch.
trait Batches {
    fn run_batch(&mut self, first: u64, count: usize) -> Option<LaneFault>;
    /// Gives the buffers back to the compiled kernel's pool.
    fn finish(self);
}

impl Batches for Runner<'_> {
    fn run_batch(&mut self, first: u64, count: usize) -> Option<LaneFault> {
        Runner::run_batch(self, first, count)
    }
    fn finish(self) {
        let c = self.compiled();
        c.give_buffers(self.into_buffers());
    }
}

impl Batches for GangRunner<'_> {
    fn run_batch(&mut self, first: u64, count: usize) -> Option<LaneFault> {
        GangRunner::run_batch(self, first, count)
    }
    fn finish(self) {
        let c = self.compiled();
        c.give_gang_buffers(self.into_buffers());
    }
}

/// Runs `dispatch` with `c` (the gang core when `c` has its code and takes the
/// dispatch, else the lane core, compiled now if needed).
pub fn run_dispatch(
    c: &Compiled,
    kernel: &Kernel,
    dispatch: &Dispatch,
    memory: &dyn GlobalMemory,
    workers: Workers<'_>,
) -> Result<Result<(), Fault>, JitError> {
    // The runners snapshot region pointers for the whole dispatch; the pin keeps
    // them mapped even if another thread frees their allocations meanwhile.
    let _pin = Pinned::new(memory);
    if let Some(code) = c.gang.as_ref().filter(|g| g.takes(dispatch)) {
        let make = || GangRunner::new(code, c, dispatch, memory, c.take_gang_buffers());
        return Ok(run_batches(c, kernel, dispatch, workers, make));
    }
    c.lane_code()?;
    let make = || Runner::new(c, kernel, dispatch, memory, c.take_buffers());
    Ok(run_batches(c, kernel, dispatch, workers, make))
}

fn run_batches<R: Batches>(
    c: &Compiled,
    kernel: &Kernel,
    dispatch: &Dispatch,
    workers: Workers<'_>,
    make: impl Fn() -> R + Sync,
) -> Result<(), Fault> {
    let wg_lanes = dispatch.lanes_per_workgroup() as usize;
    let groups = dispatch.workgroup_count();
    if wg_lanes == 0 || groups == 0 {
        return Ok(());
    }
    let slots = (c.lanes / wg_lanes).max(1) as u64;
    let batches = groups.div_ceil(slots);
    let batch = |b: u64| (b * slots, (groups - b * slots).min(slots) as usize);
    let clock = dispatch.budget.start();
    // A batch run, or the budget fault of its first lane (the first workgroup
    // not started), keyed like a lane fault so the lowest still wins. Each
    // worker looks at the budget on its first batch (so an exhausted budget
    // runs nothing) and every CLOCK_EVERY batches after.
    let run = |runner: &mut R, ticks: &mut u32, b: u64| -> Option<LaneFault> {
        let (first, count) = batch(b);
        if *ticks == 0 {
            let id = dispatch.workgroup_id(first);
            if let Some(fault) = clock.fault(kernel, id) {
                return Some((u128::from(first) * wg_lanes as u128, fault));
            }
        }
        *ticks = (*ticks + 1) % CLOCK_EVERY;
        runner.run_batch(first, count)
    };
    let threads = (workers.threads.max(1) as u64).min(batches) as usize;
    if threads == 1 {
        let mut runner = make();
        let mut ticks = 0;
        let mut result = Ok(());
        for b in 0..batches {
            if let Some((_, fault)) = run(&mut runner, &mut ticks, b) {
                result = Err(fault);
                break;
            }
        }
        runner.finish();
        return result;
    }
    let next = AtomicU64::new(0);
    let stop = AtomicU64::new(u64::MAX);
    let best: Mutex<Option<LaneFault>> = Mutex::new(None);
    // A worker claims up to 64 consecutive batches at a time (still in
    // increasing order, each checked against `stop`; at least 8 claims per
    // thread): neighbouring batches stream neighbouring memory, which the
    // processor's prefetchers follow; single batches alternating between
    // threads would break each thread's streams (saxpy on two threads,
    // measured with the software prefetch since removed: 2.5 ms with 1 batch
    // per claim, about 2.1 with 16, 1.7 with 64).
    let claim = (batches / (threads as u64 * 8)).clamp(1, 64);
    let worker = || {
        let mut runner = make();
        let mut ticks = 0;
        'claims: loop {
            let b0 = next.fetch_add(claim, Ordering::SeqCst);
            for b in b0..(b0 + claim).min(batches) {
                if b > stop.load(Ordering::SeqCst) {
                    break 'claims;
                }
                if let Some(found) = run(&mut runner, &mut ticks, b) {
                    stop.fetch_min(b, Ordering::SeqCst);
                    if let Ok(mut best) = best.lock()
                        && best.as_ref().is_none_or(|(k, _)| found.0 < *k)
                    {
                        *best = Some(found);
                    }
                    break 'claims;
                }
            }
            if b0 + claim >= batches {
                break;
            }
        }
        runner.finish();
    };
    workers.run(threads, &worker);
    match best.into_inner() {
        Ok(Some((_, fault))) => Err(fault),
        Ok(None) => Ok(()),
        Err(poisoned) => poisoned.into_inner().map_or(Ok(()), |(_, f)| Err(f)),
    }
}
