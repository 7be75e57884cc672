//! A compiled kernel specialisation and what the Rust side needs to run it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use cranelift_entity::{EntityRef, SecondaryMap};
use wavejit_ir::{AddrSpace, Block, Inst, InstKind, Kernel, Type};

use crate::Tier;
use crate::buffers::{Buffers, GangBuffers};
use crate::codegen::{CompiledCode, compile};
use crate::error::JitError;
use crate::gang::GangCode;
use crate::plan::{PcKind, Plan};

/// A kernel compiled for batches of a given number of lanes.
pub struct Compiled {
    /// The kernel this was compiled from (cache hits compare it).
    pub(crate) kernel: Kernel,
    /// Lanes per batch the code was compiled for.
    pub(crate) lanes: usize,
    pub(crate) plan: Plan,
    /// Argument types of every instruction, by instruction index.
    pub(crate) arg_tys: Vec<Vec<Type>>,
    /// The block of every instruction.
    pub(crate) inst_block: SecondaryMap<Inst, Block>,
    /// Code of the lane core ([`crate::Core::Lanes`]); with the gang core,
    /// compiled on first need (dispatches the gang core does not take).
    code: std::sync::OnceLock<Result<CompiledCode, String>>,
    /// Code of the gang core, when the kernel was compiled for it.
    pub(crate) gang: Option<GangCode>,
    /// Why the gang core refused a kernel it was asked to compile.
    pub(crate) gang_error: Option<String>,
    /// The plan of the gang core: no vector runs (every run is vector code).
    pub(crate) gang_plan: Plan,
    pub(crate) tier: Tier,
    /// Some edge leads back to a block not after its source (every loop has
    /// one): the lane count alone does not tell the dispatch's cost.
    pub(crate) may_loop: bool,
    /// A batch of this kernel ran slower per lane on the gang core than one
    /// on the lane core ([`crate::run::Probe`]): dispatches use the lane core.
    pub(crate) prefer_lanes: AtomicBool,
    /// Lanes run so far with this code (decides when a baseline compilation is
    /// replaced by an optimized one).
    pub(crate) lanes_run: AtomicU64,
    /// Segment starting at each linear pc, `u32::MAX` elsewhere (read by the
    /// compiled code through `BatchCtx::seg_of_pc`).
    pub(crate) seg_of_pc: Vec<u32>,
    /// Bytes of shared memory per workgroup and private memory per lane a
    /// batch provides: the kernel's sizes, or 0 when no instruction accesses
    /// that space (then zeroing it for every batch would be wasted; AGX and
    /// ir3 kernels declare register-file areas that the lifters' SSA promotion
    /// leaves unused).
    pub(crate) shared_bytes: usize,
    pub(crate) private_bytes: usize,
    /// Batch buffers left by earlier dispatches, one per worker that ran,
    /// with their bytes.
    pool: Mutex<Vec<(Buffers, usize)>>,
    gang_pool: Mutex<Vec<(GangBuffers, usize)>>,
    /// Bytes held by both pools (counted against the JIT cache's budget).
    pool_bytes: AtomicUsize,
    /// The JIT cache's use clock when this was last used (LRU eviction).
    pub(crate) last_used: AtomicU64,
}

/// Estimated executable bytes of gang-core code per kernel instruction and
/// the fixed part (scheduler, trampolines). `GangCode` has no size accessor
/// (its module is not ours to change), so these are measured upper figures:
/// the machine code `WAVEJIT_JIT_DUMP_BIN` wrote for ALU kernels of 9 to 407
/// instructions was 2.7-3.1 KB plus 8-17 bytes per instruction; memory and
/// control flow cost more per instruction, hence the margin.
const GANG_CODE_PER_INST: usize = 64;
const GANG_CODE_FIXED: usize = 4096;

impl Compiled {
    /// Lanes per batch the code was compiled for.
    pub fn lanes(&self) -> usize {
        self.lanes
    }

    /// How hard Cranelift worked on this code.
    pub fn tier(&self) -> Tier {
        self.tier
    }

    /// Straight-line segments the kernel was cut into (between barriers and
    /// cross-lane instructions).
    pub fn segment_count(&self) -> usize {
        self.plan.segments.len()
    }

    /// Blocks that run as a loop per lane (`plan::Segment::self_loop`).
    pub fn per_lane_loops(&self) -> usize {
        self.plan.segments.iter().filter(|s| s.self_loop).count()
    }

    /// Bytes this compilation holds that the JIT cache's budget counts:
    /// executable code (page-rounded; gang code estimated from the kernel's
    /// size) and pooled batch buffers (the register slab is lanes x values x
    /// 8 bytes, usually far more than the code).
    pub fn bytes(&self) -> usize {
        let lane = self
            .code
            .get()
            .and_then(|c| c.as_ref().ok())
            .map_or(0, |c| c.bytes);
        let gang = if self.gang.is_some() {
            crate::codegen::code_pages(
                GANG_CODE_FIXED + GANG_CODE_PER_INST * self.kernel.insts.len(),
            )
        } else {
            0
        };
        lane + gang + self.pool_bytes.load(Ordering::Relaxed)
    }

    /// Whether the kernel runs on the gang core.
    pub fn is_gang(&self) -> bool {
        self.gang.is_some()
    }

    /// Whether the gang core runs the kernel in lockstep (barrier interval by
    /// barrier interval over each workgroup's chunks, nothing scheduled:
    /// `gang::lower::lockstep`).
    pub fn gang_lockstep(&self) -> bool {
        self.gang.as_ref().is_some_and(|g| g.lockstep())
    }

    /// Whether `dispatch` runs on the gang core (else on the lane core): the
    /// gang core was compiled and its 32-bit step counters serve the
    /// dispatch's step limit (see `GangCode::takes`).
    pub fn gang_takes(&self, dispatch: &wavejit_ir::Dispatch) -> bool {
        self.gang.as_ref().is_some_and(|g| g.takes(dispatch))
    }

    /// The lane core's code, compiled now if it was not yet.
    pub(crate) fn lane_code(&self) -> Result<&CompiledCode, JitError> {
        self.code
            .get_or_init(|| {
                compile(&self.kernel, &self.plan, self.lanes, self.tier).map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| JitError::Cranelift(e.clone()))
    }

    pub(crate) fn new(
        kernel: &Kernel,
        lanes: usize,
        vector_min_ops: usize,
        tier: Tier,
        core: crate::Core,
    ) -> Result<Compiled, JitError> {
        let plan = Plan::new(kernel, vector_min_ops);
        let gang_plan = Plan::new(kernel, 0);
        let arg_tys = kernel
            .insts
            .values()
            .map(|d| d.args.iter().map(|&a| kernel.value_type(a)).collect())
            .collect();
        let mut inst_block = SecondaryMap::with_default(Block::from_u32(0));
        for (b, data) in kernel.blocks.iter() {
            for &i in &data.insts {
                inst_block[i] = b;
            }
        }
        let code = std::sync::OnceLock::new();
        // A kernel the gang core cannot compile runs on the lane core, which
        // takes every kernel (`gang_error` keeps why, `Jit` counts it).
        let mut gang_error = None;
        let gang = if core.gang_at(tier) {
            let g = crate::gang::vectors_for(tier);
            match crate::gang::compile(kernel, &gang_plan, lanes, g, tier) {
                Ok(code) => Some(code),
                Err(e) => {
                    gang_error = Some(e.to_string());
                    None
                }
            }
        } else {
            None
        };
        if gang.is_none() {
            let _ = code.set(compile(kernel, &plan, lanes, tier).map_err(|e| e.to_string()));
            if let Some(Err(e)) = code.get() {
                return Err(JitError::Cranelift(e.clone()));
            }
        }
        let seg_of_pc = plan
            .kinds
            .iter()
            .map(|k| match k {
                PcKind::Segment(s) => *s,
                _ => u32::MAX,
            })
            .collect();
        let uses = |space: AddrSpace| {
            kernel.insts.values().any(|d| match &d.kind {
                InstKind::Load(a) | InstKind::Store(a) => a.space == space,
                InstKind::Atomic { space: s, .. } => *s == space,
                _ => false,
            })
        };
        let shared_bytes = if uses(AddrSpace::Shared) {
            kernel.shared_size as usize
        } else {
            0
        };
        let private_bytes = if uses(AddrSpace::Private) {
            kernel.private_size as usize
        } else {
            0
        };
        let cfg = wavejit_ir::analysis::cfg::Cfg::compute(kernel);
        let may_loop = kernel
            .blocks
            .keys()
            .any(|b| cfg.succs(b).iter().any(|s| s.index() <= b.index()));
        Ok(Compiled {
            may_loop,
            prefer_lanes: AtomicBool::new(false),
            seg_of_pc,
            shared_bytes,
            private_bytes,
            kernel: kernel.clone(),
            lanes,
            plan,
            arg_tys,
            inst_block,
            code,
            gang,
            gang_error,
            gang_plan,
            tier,
            lanes_run: AtomicU64::new(0),
            pool: Mutex::new(Vec::new()),
            gang_pool: Mutex::new(Vec::new()),
            pool_bytes: AtomicUsize::new(0),
            last_used: AtomicU64::new(0),
        })
    }

    /// Recycled batch buffers (empty ones when none are left).
    pub(crate) fn take_buffers(&self) -> Buffers {
        self.take(&self.pool)
    }

    /// Recycled gang batch buffers.
    pub(crate) fn take_gang_buffers(&self) -> GangBuffers {
        self.take(&self.gang_pool)
    }

    /// Keeps `bufs` for a later dispatch (at most a few: one per worker thread).
    pub(crate) fn give_buffers(&self, bufs: Buffers) {
        let bytes = bufs.bytes();
        self.give(&self.pool, bufs, bytes);
    }

    /// Keeps gang `bufs` for a later dispatch.
    pub(crate) fn give_gang_buffers(&self, bufs: GangBuffers) {
        let bytes = bufs.bytes();
        self.give(&self.gang_pool, bufs, bytes);
    }

    fn take<B: Default>(&self, pool: &Mutex<Vec<(B, usize)>>) -> B {
        match pool.lock().ok().and_then(|mut p| p.pop()) {
            Some((b, bytes)) => {
                self.pool_bytes.fetch_sub(bytes, Ordering::Relaxed);
                b
            }
            None => B::default(),
        }
    }

    fn give<B>(&self, pool: &Mutex<Vec<(B, usize)>>, bufs: B, bytes: usize) {
        const KEEP: usize = 4;
        if let Ok(mut p) = pool.lock()
            && p.len() < KEEP
        {
            p.push((bufs, bytes));
            self.pool_bytes.fetch_add(bytes, Ordering::Relaxed);
        }
    }
}
