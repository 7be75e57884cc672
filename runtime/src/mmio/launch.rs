//! DISPATCH (datasheet §4): validate, lift the kernel from VRAM for the launch's
//! grid (cached while the code words and the grid are unchanged), run every block
//! synchronously, map faults to error bits.

use std::fmt;

use std::time::Instant;

use wavejit_frontend::rv32::lift::resume::{STATUS_NONE, STATUS_OFFSET};
use wavejit_frontend::rv32::lift::{
    self, DispatchShape, LANE_BYTES, LaneContext, LiftConfig, LiftedKernel, ResumeConfig,
    STATE_BYTES, TrapCause,
};
use wavejit_ir::interp::Interpreter;
use wavejit_ir::{Dispatch, Engine, Fault, FaultKind};

use super::device::{EngineChoice, GpgpuDevice};
use super::regs::{MAX_BLOCKS, MAX_THREADS_PER_BLOCK, ctrl, error, irq};
use super::resume::{self, MAX_RESUME_BYTES, MAX_ROOTS, RESUME_BASE};

/// Guest-invisible global address of the per-lane context records (above the
/// 32-bit core address space, so kernels cannot reach it).
pub const CONTEXT_BASE: u64 = 1 << 32;

/// What went wrong in a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceFaultKind {
    /// A trap of the lifted code (illegal instruction, fetch, jump target, ecall,
    /// invalid frm, cycle limit).
    Trap(TrapCause),
    /// A load/store outside VRAM or a store to the ID window.
    Memory { addr: u64, size: u32, write: bool },
    /// The program could not be lifted at all.
    Lift(String),
    /// Anything else the engine reported (e.g. its own watchdog).
    Engine(String),
}

/// A kernel fault with its place: pc, word, lane (as mhartid) and the error bits
/// it set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceFault {
    pub kind: DeviceFaultKind,
    pub pc: Option<u32>,
    pub word: Option<u32>,
    /// mhartid of the faulting lane (block_linear << 13 | warp << 5 | lane).
    pub hartid: Option<u32>,
    /// ERROR_STATUS bits set.
    pub error_bits: u32,
}

impl fmt::Display for DeviceFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            DeviceFaultKind::Trap(c) => write!(f, "{c}")?,
            DeviceFaultKind::Memory { addr, size, write } => write!(
                f,
                "{} of {size} bytes at {addr:#x} outside VRAM",
                if *write { "store" } else { "load" }
            )?,
            DeviceFaultKind::Lift(m) | DeviceFaultKind::Engine(m) => f.write_str(m)?,
        }
        if let Some(pc) = self.pc {
            write!(f, " at pc {pc:#010x}")?;
        }
        if let Some(w) = self.word {
            write!(f, " (word {w:#010x})")?;
        }
        if let Some(h) = self.hartid {
            write!(f, ", mhartid {h:#x}")?;
        }
        Ok(())
    }
}

/// The outcome of one DISPATCH.
#[derive(Clone, Debug, Default)]
pub struct LaunchReport {
    pub lanes: u64,
    pub guest_blocks: usize,
    pub fault: Option<DeviceFault>,
    /// Final state per lane in linear order (block_linear * threads + local),
    /// when the device captures contexts; `done` is false for lanes that did not end.
    pub contexts: Vec<LaneContext>,
    /// The engine that ran the kernel ("jit" or "interp").
    pub engine: &'static str,
    /// Why the JIT refused the kernel, when it fell back to the interpreter.
    pub jit_error: Option<String>,
    /// Resume dispatches run after the first (see [`super::resume`]).
    pub rounds: u32,
}

/// Resume kernels kept per device (distinct root sets of recent launches).
const RESUME_CACHE: usize = 4;

/// The first round of a launch: its kernel, dispatch and start time.
struct Round {
    kernel: LiftedKernel,
    dispatch: Dispatch,
    start: Instant,
}

/// Context capture is skipped for dispatches whose records would exceed this.
pub const MAX_CONTEXT_BYTES: u64 = 256 << 20;

impl GpgpuDevice {
    /// Rejects the launch (INVALID_CMD) when the datasheet says so.
    fn launch_valid(&self) -> bool {
        let r = &self.regs;
        let blocks: u64 = r.grid.iter().map(|&g| u64::from(g)).product();
        let threads: u64 = r.block.iter().map(|&b| u64::from(b)).product();
        r.global_ctrl & ctrl::ENABLE != 0
            && !r.busy
            && !r.grid.contains(&0)
            && !r.block.contains(&0)
            && r.kernel_addr[1] == 0
            && u64::from(r.kernel_addr[0]) < self.cfg.vram_size
            && r.kernel_addr[0].is_multiple_of(4)
            && blocks <= MAX_BLOCKS
            && threads <= MAX_THREADS_PER_BLOCK
    }

    pub(super) fn dispatch(&mut self) {
        if !self.launch_valid() {
            self.raise_error(error::INVALID_CMD);
            return;
        }
        self.regs.busy = true;
        let report = self.run_kernel();
        self.regs.busy = false;
        match &report.fault {
            None => self.regs.irq_status |= irq::KERNEL_DONE,
            Some(f) => self.raise_error(f.error_bits),
        }
        self.last_fault = report.fault.clone();
        self.last_report = Some(report);
    }

    fn fetch_word(&self, pc: u32) -> Option<u32> {
        let a = u64::from(pc);
        if a + 4 > self.cfg.vram_size {
            return None;
        }
        let b = self.vram.read_bytes(a, 4).ok()?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The kernel at `entry` lifted for this launch's grid (the lift assumes
    /// it to bound ID reads; a launch with another grid lifts again), with
    /// `roots` as extra entries. `resume`: lanes may leave resumably, and
    /// with `entry: true` the kernel is a resume dispatch. First-round kernels
    /// are cached in `cached`, resume kernels in `resume_cache`.
    fn lifted(
        &mut self,
        entry: u32,
        shape: DispatchShape,
        roots: &[u32],
        resume: Option<ResumeConfig>,
    ) -> Result<LiftedKernel, lift::LiftError> {
        let fetch = |pc: u32| self.fetch_word(pc);
        let hit = |k: &LiftedKernel| {
            k.entry == entry
                && k.fits(&shape)
                && k.resume == resume
                && k.roots.get(1..) == Some(roots)
                && k.matches(&fetch)
        };
        let resuming = resume.is_some_and(|r| r.entry);
        let found = if resuming {
            self.resume_cache.iter().find(|k| hit(k)).cloned()
        } else {
            self.cached.as_ref().filter(|k| hit(k)).cloned()
        };
        if let Some(k) = found {
            return Ok(k);
        }
        let opts = LiftConfig {
            name: format!("rv32@{entry:#x}"),
            cycle_limit: self.cfg.cycle_limit,
            context_base: self.cfg.capture_context.then_some(CONTEXT_BASE),
            shape: Some(shape),
            extra_entries: roots.to_vec(),
            resume,
            ..LiftConfig::default()
        };
        let k = lift::lift(&fetch, entry, &opts)?;
        if resuming {
            if self.resume_cache.len() >= RESUME_CACHE {
                self.resume_cache.remove(0);
            }
            self.resume_cache.push(k.clone());
        } else {
            self.cached = Some(k.clone());
        }
        Ok(k)
    }

    /// Runs one dispatch of `lifted`; the fault, mapped to the device.
    fn run_lifted(
        &mut self,
        lifted: &LiftedKernel,
        d: &Dispatch,
        report: &mut LaunchReport,
    ) -> Option<DeviceFault> {
        let jit_ok = match self.cfg.engine {
            EngineChoice::Jit => {
                // What `run` will use, so a large launch compiles once.
                match self.jit.compile_for(&lifted.kernel, d) {
                    Ok(_) => true,
                    Err(e) => {
                        report.jit_error = Some(e.to_string());
                        false
                    }
                }
            }
            EngineChoice::Interpreter => false,
        };
        // The first round's engine names the launch's.
        if report.engine.is_empty() {
            report.engine = if jit_ok { "jit" } else { "interp" };
        }
        let result = if jit_ok {
            self.jit.run(&lifted.kernel, d, &self.vram)
        } else {
            Interpreter.run(&lifted.kernel, d, &self.vram)
        };
        result.err().map(|f| self.map_fault(lifted, d, &f))
    }

    fn lift_fault(e: &lift::LiftError, pc: u32) -> DeviceFault {
        DeviceFault {
            kind: DeviceFaultKind::Lift(e.to_string()),
            pc: Some(pc),
            word: None,
            hartid: None,
            error_bits: error::KERNEL_FAULT,
        }
    }

    fn run_kernel(&mut self) -> LaunchReport {
        let r = self.regs.clone();
        let lanes = r.grid.iter().map(|&g| u64::from(g)).product::<u64>()
            * r.block.iter().map(|&b| u64::from(b)).product::<u64>();
        let mut report = LaunchReport {
            lanes,
            ..LaunchReport::default()
        };
        let shape = DispatchShape {
            num_workgroups: r.grid,
            workgroup_size: r.block,
        };
        let entry = r.kernel_addr[0];
        // The dispatch time budget covers all rounds together.
        let start = Instant::now();
        let state_len = lanes * STATE_BYTES;
        let fits = state_len <= MAX_RESUME_BYTES;
        let resume = fits.then_some(ResumeConfig {
            base: RESUME_BASE,
            entry: false,
        });
        // Targets earlier launches of this code left to: lifted up front.
        let mut roots: Vec<u32> = match &self.learned {
            Some((e, roots)) if *e == entry && fits => roots.clone(),
            _ => Vec::new(),
        };
        let ctx_len = lanes * LANE_BYTES;
        let ctx = self.cfg.capture_context
            && ctx_len <= MAX_CONTEXT_BYTES
            && self.vram.alloc_at(CONTEXT_BASE, ctx_len.max(1)).is_ok();
        // The state area only for a kernel whose lanes can leave; without it
        // the kernel is lifted without resumable exits.
        let mut resumable = false;
        let first = match self.lifted(entry, shape, &roots, resume) {
            Ok(k) if k.leaves => {
                resumable = self.vram.alloc_at(RESUME_BASE, state_len.max(1)).is_ok();
                if resumable {
                    Ok(k)
                } else {
                    roots.clear();
                    self.lifted(entry, shape, &roots, None)
                }
            }
            other => other,
        };
        match first {
            Ok(first) => {
                report.guest_blocks = first.guest_blocks;
                let mut d = Dispatch::new(r.grid, r.block);
                d.wave_size = 32;
                // The lifted instruction counter is the only watchdog; with no
                // cycle limit the kernel is unlimited, as DeviceConfig (and
                // `--cycle-limit 0`) says.
                d.step_limit = first.step_limit();
                d.budget = self.budget.clone();
                report.fault = self.run_lifted(&first, &d, &mut report);
                if resumable {
                    let first = Round {
                        kernel: first,
                        dispatch: d,
                        start,
                    };
                    self.resume_rounds(entry, shape, &mut roots, first, &mut report);
                }
            }
            Err(e) => report.fault = Some(Self::lift_fault(&e, entry)),
        }
        if resumable {
            let _ = self.vram.free(RESUME_BASE);
        }
        if ctx {
            if let Ok(bytes) = self.vram.read_bytes(CONTEXT_BASE, ctx_len as usize) {
                report.contexts = bytes
                    .chunks_exact(LANE_BYTES as usize)
                    .filter_map(LaneContext::parse)
                    .collect();
            }
            let _ = self.vram.free(CONTEXT_BASE);
        }
        report
    }

    /// Resumes waiting lanes until none waits (see [`super::resume`]).
    fn resume_rounds(
        &mut self,
        entry: u32,
        shape: DispatchShape,
        roots: &mut Vec<u32>,
        first: Round,
        report: &mut LaunchReport,
    ) {
        let threads: u64 = shape.workgroup_size.iter().map(|&b| u64::from(b)).product();
        let state_len = report.lanes * STATE_BYTES;
        let Round {
            kernel: mut last,
            dispatch: mut d,
            start,
        } = first;
        let time_limit = d.budget.time_limit;
        let first_roots = roots.len();
        loop {
            let Ok(records) = self.vram.read_bytes(RESUME_BASE, state_len as usize) else {
                return;
            };
            let limit_block = report
                .fault
                .as_ref()
                .and_then(|f| f.hartid)
                .map(|h| u64::from(h >> 13));
            let fetch = |pc: u32| self.fetch_word(pc);
            let plan = resume::plan(&records, threads, limit_block, &last, &fetch);
            for lane in &plan.cleared {
                let _ = self.vram.write_bytes(
                    RESUME_BASE + lane * STATE_BYTES + STATUS_OFFSET,
                    &STATUS_NONE.to_le_bytes(),
                );
            }
            for f in plan.faults {
                report.fault = resume::lower(report.fault.take(), Some(f));
            }
            // Lanes past the (new) lowest faulting block need not run on.
            let limit_block = report
                .fault
                .as_ref()
                .and_then(|f| f.hartid)
                .map(|h| u64::from(h >> 13));
            let waiting: Vec<resume::Waiting> = plan
                .waiting
                .into_iter()
                .filter(|w| limit_block.is_none_or(|b| w.lane / threads.max(1) <= b))
                .collect();
            if waiting.is_empty() {
                break;
            }
            let stop = |kind: String| DeviceFault {
                kind: DeviceFaultKind::Engine(kind),
                pc: waiting.first().map(|w| w.pc),
                word: None,
                hartid: waiting.first().map(|w| resume::hartid(w.lane, threads)),
                error_bits: error::KERNEL_FAULT,
            };
            // A round in which a lane cannot move would repeat forever.
            if let Some(w) = waiting.iter().find(|w| w.stuck(&last)) {
                report.fault = Some(stop(format!(
                    "lane left to {:#010x}, which its translation knew",
                    w.pc
                )));
                break;
            }
            let elapsed = start.elapsed();
            if let Some(limit) = time_limit {
                if elapsed >= limit {
                    report.fault = Some(stop(format!(
                        "dispatch time limit of {limit:?} exceeded over {} resume rounds",
                        report.rounds
                    )));
                    break;
                }
                d.budget.time_limit = Some(limit - elapsed);
            }
            roots.extend(resume::new_roots(roots, &waiting));
            if roots.len() > MAX_ROOTS {
                report.fault = Some(stop(format!(
                    "lanes left to more than {MAX_ROOTS} distinct pcs"
                )));
                break;
            }
            let config = ResumeConfig {
                base: RESUME_BASE,
                entry: true,
            };
            let kernel = match self.lifted(entry, shape, roots, Some(config)) {
                Ok(k) => k,
                Err(e) => {
                    let pc = waiting.first().map_or(entry, |w| w.pc);
                    report.fault = Some(Self::lift_fault(&e, pc));
                    break;
                }
            };
            report.rounds += 1;
            report.guest_blocks = kernel.guest_blocks;
            let fault = self.run_lifted(&kernel, &d, report);
            report.fault = resume::lower(report.fault.take(), fault);
            last = kernel;
        }
        if roots.len() > first_roots {
            self.learned = Some((entry, roots.clone()));
        }
    }

    fn map_fault(&self, lifted: &LiftedKernel, d: &Dispatch, f: &Fault) -> DeviceFault {
        let [gx, gy, _] = d.workgroups;
        let [bx, by, _] = d.workgroup_size;
        let w = f.lane.workgroup;
        let l = f.lane.local;
        let block_linear = w[0] + w[1] * gx + w[2] * gx * gy;
        let local = l[0] + l[1] * bx + l[2] * bx * by;
        let hartid = Some(block_linear << 13 | local);
        let pc = f.guest_pc.map(|p| p as u32);
        let word = pc.and_then(|p| lifted.words.get(&p).copied());
        let (kind, bits, pc, word) = match &f.kind {
            FaultKind::Trap { code } => match lifted.trap(*code) {
                Some(site) => (
                    DeviceFaultKind::Trap(site.cause),
                    error::KERNEL_FAULT,
                    site.pc.or(pc),
                    site.word.or(word),
                ),
                None => (
                    DeviceFaultKind::Engine(format!("unknown trap {code}")),
                    error::KERNEL_FAULT,
                    pc,
                    word,
                ),
            },
            FaultKind::Memory {
                addr, size, write, ..
            } => (
                DeviceFaultKind::Memory {
                    addr: *addr,
                    size: *size,
                    write: *write,
                },
                error::VRAM_FAULT | error::KERNEL_FAULT,
                pc,
                word,
            ),
            FaultKind::Watchdog { .. } | FaultKind::Dispatch(_) | FaultKind::Budget(_) => (
                DeviceFaultKind::Engine(f.kind.to_string()),
                error::KERNEL_FAULT,
                pc,
                word,
            ),
        };
        DeviceFault {
            kind,
            pc,
            word,
            hartid,
            error_bits: bits,
        }
    }
}
