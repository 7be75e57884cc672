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

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use wavejit_ir::dispatch::BudgetClock;
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

/// A baseline dispatch that may move to optimized code after its first
/// batch: a kernel's loops decide its cost, which its lane count does not
/// show (tinygrad's `r_4375_3_13125`: 4,375 lanes, 13,125 iterations each).
pub struct Probe<'p> {
    /// Lane steps (blocks entered) the whole dispatch must be projected to
    /// take, from its first batch's, for the rest to run optimized.
    pub min_steps: u64,
    /// The optimized compilation (`None`: keep the baseline code).
    pub optimized: &'p dyn Fn() -> Option<Arc<Compiled>>,
}

/// Runs `dispatch` with `c` (the gang core when `c` has its code, takes the
/// dispatch and has not lost to the lane core on it, else the lane core,
/// compiled now if needed). With a `probe`, a lane-core dispatch of several
/// batches runs its first batch alone; when that batch's steps project to at
/// least the probe's `min_steps`, the second batch runs on the optimized
/// gang code, and whichever core took less time per lane runs the rest. Both
/// cores give the interpreter's bits (only the speed depends on the timing),
/// and the batches still run in order under one budget clock.
pub fn run_dispatch(
    c: &Compiled,
    kernel: &Kernel,
    dispatch: &Dispatch,
    memory: &dyn GlobalMemory,
    workers: Workers<'_>,
    probe: Option<Probe<'_>>,
) -> Result<Result<(), Fault>, JitError> {
    // The runners snapshot region pointers for the whole dispatch; the pin keeps
    // them mapped even if another thread frees their allocations meanwhile.
    let _pin = Pinned::new(memory);
    let grid = Grid::new(c, dispatch);
    if grid.batches == 0 {
        return Ok(Ok(()));
    }
    let clock = dispatch.budget.start();
    let gang = c.gang.as_ref().filter(|g| g.takes(dispatch));
    if let Some(code) = gang.filter(|_| !c.prefer_lanes.load(Ordering::Relaxed)) {
        let make = || GangRunner::new(code, c, dispatch, memory, c.take_gang_buffers());
        return Ok(run_batches(kernel, &grid, &clock, 0, workers, make));
    }
    c.lane_code()?;
    let make = || Runner::new(c, kernel, dispatch, memory, c.take_buffers());
    let Some(probe) = probe.filter(|_| grid.batches > 1) else {
        return Ok(run_batches(kernel, &grid, &clock, 0, workers, make));
    };
    let mut runner = make();
    let t0 = Instant::now();
    let first = grid.run_checked(&mut runner, &clock, kernel, &mut 0, 0);
    let lane_time = t0.elapsed();
    let steps = runner.lane_steps(grid.batch(0).1);
    runner.finish();
    if let Some((_, fault)) = first {
        return Ok(Err(fault));
    }
    let optimized = if steps.saturating_mul(grid.batches) >= probe.min_steps {
        (probe.optimized)().filter(|o| o.lanes == c.lanes)
    } else {
        None
    };
    let Some(o) = optimized else {
        return Ok(run_batches(kernel, &grid, &clock, 1, workers, make));
    };
    let o = &*o;
    let Some(code) = o.gang.as_ref().filter(|g| g.takes(dispatch)) else {
        return Ok(run_batches(kernel, &grid, &clock, 1, workers, make));
    };
    // Loops of divergent branches can run slower on the gang core (its
    // scheduler moves lanes between pcs): the second batch runs there, and
    // the core that took less time per lane runs the rest (and, for the lane
    // core, the kernel's later dispatches). Either gives the same bits.
    let make_gang = || GangRunner::new(code, o, dispatch, memory, o.take_gang_buffers());
    let mut gang = make_gang();
    let t1 = Instant::now();
    let second = grid.run_checked(&mut gang, &clock, kernel, &mut 0, 1);
    let gang_time = t1.elapsed();
    gang.finish();
    if let Some((_, fault)) = second {
        return Ok(Err(fault));
    }
    let per_lane = |t: Duration, b: u64| t.as_secs_f64() / grid.batch(b).1.max(1) as f64;
    if per_lane(gang_time, 1) <= per_lane(lane_time, 0) {
        return Ok(run_batches(kernel, &grid, &clock, 2, workers, make_gang));
    }
    o.prefer_lanes.store(true, Ordering::Relaxed);
    Ok(run_batches(kernel, &grid, &clock, 2, workers, make))
}

/// A dispatch cut into batches of whole workgroups.
struct Grid<'d> {
    dispatch: &'d Dispatch,
    wg_lanes: usize,
    groups: u64,
    /// Workgroups per batch.
    slots: u64,
    batches: u64,
}

impl<'d> Grid<'d> {
    fn new(c: &Compiled, dispatch: &'d Dispatch) -> Grid<'d> {
        let wg_lanes = dispatch.lanes_per_workgroup() as usize;
        let groups = dispatch.workgroup_count();
        let slots = (c.lanes / wg_lanes.max(1)).max(1) as u64;
        let batches = if wg_lanes == 0 {
            0
        } else {
            groups.div_ceil(slots)
        };
        Grid {
            dispatch,
            wg_lanes,
            groups,
            slots,
            batches,
        }
    }

    /// The first workgroup of batch `b` and how many it holds.
    fn batch(&self, b: u64) -> (u64, usize) {
        (
            b * self.slots,
            (self.groups - b * self.slots).min(self.slots) as usize,
        )
    }

    /// Batch `b` run, or the budget fault of its first lane (the first
    /// workgroup not started), keyed like a lane fault so the lowest still
    /// wins. A worker looks at the budget on its first batch (so an
    /// exhausted budget runs nothing) and every CLOCK_EVERY batches after.
    fn run_checked(
        &self,
        runner: &mut impl Batches,
        clock: &BudgetClock<'_>,
        kernel: &Kernel,
        ticks: &mut u32,
        b: u64,
    ) -> Option<LaneFault> {
        let (first, count) = self.batch(b);
        if *ticks == 0
            && let Some(fault) = clock.fault(kernel, self.dispatch.workgroup_id(first))
        {
            return Some((u128::from(first) * self.wg_lanes as u128, fault));
        }
        *ticks = (*ticks + 1) % CLOCK_EVERY;
        runner.run_batch(first, count)
    }
}

/// Batches `from..` of `grid` on `workers`' threads, each with a runner of
/// its own from `make`.
fn run_batches<R: Batches>(
    kernel: &Kernel,
    grid: &Grid<'_>,
    clock: &BudgetClock<'_>,
    from: u64,
    workers: Workers<'_>,
    make: impl Fn() -> R + Sync,
) -> Result<(), Fault> {
    let batches = grid.batches;
    if from >= batches {
        return Ok(());
    }
    let run = |runner: &mut R, ticks: &mut u32, b: u64| -> Option<LaneFault> {
        grid.run_checked(runner, clock, kernel, ticks, b)
    };
    let threads = (workers.threads.max(1) as u64).min(batches - from) as usize;
    if threads == 1 {
        let mut runner = make();
        let mut ticks = 0;
        let mut result = Ok(());
        for b in from..batches {
            if let Some((_, fault)) = run(&mut runner, &mut ticks, b) {
                result = Err(fault);
                break;
            }
        }
        runner.finish();
        return result;
    }
    let next = AtomicU64::new(from);
    let stop = AtomicU64::new(u64::MAX);
    let best: Mutex<Option<LaneFault>> = Mutex::new(None);
    // A worker claims up to 64 consecutive batches at a time (still in
    // increasing order, each checked against `stop`; at least 8 claims per
    // thread): neighbouring batches stream neighbouring memory, which the
    // processor's prefetchers follow; single batches alternating between
    // threads would break each thread's streams (saxpy on two threads,
    // measured with the software prefetch since removed: 2.5 ms with 1 batch
    // per claim, about 2.1 with 16, 1.7 with 64).
    let claim = ((batches - from) / (threads as u64 * 8)).clamp(1, 64);
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
