//! Cranelift JIT for wavejit IR kernels.
//!
//! Two execution cores run the same plan (`plan` cuts a kernel into
//! *segments* between barriers and cross-lane instructions, and segments into
//! *runs* that hold any loads or one store, so a run can go lane by lane or
//! chunk by chunk without other lanes telling the difference):
//! - the **gang core** (`gang`): one function per kernel runs a whole round
//!   of a batch with the scheduler inside. Per-lane pcs live in an array read
//!   four lanes at a time; a wave's lowest pc picks the segment, the lanes at
//!   it form the execution mask, and each run executes chunk by chunk (16 lanes
//!   as four `I32X4`/`F32X4` vectors per value, 64-bit values as `I64X2`) with
//!   values in vector registers; uniform and divergent branches, loops,
//!   reconvergence and barriers never leave compiled code until the round ends.
//!   Memory accesses with consecutive addresses inside one region are one
//!   vector access per four lanes; everything not inlined goes lane by lane
//!   through helpers built on the interpreter's own definitions.
//! - the **lane core** (`codegen`, `run::lane`): `fn(ctx, seg, list, n, limit)`
//!   runs a segment for a list of co-active lanes, lane by lane (values inside
//!   a run are SSA values, others in a per-lane slab; long pure i32/f32
//!   stretches run 16 lanes at a time), scheduled from Rust. It compiles in a
//!   fraction of the time.
//!
//! [`Core::Tiered`] (the default) compiles the lane core first
//! ([`Tier::Baseline`], single-pass register allocation: what a small dispatch
//! waits for) and the gang core once a kernel has run enough lanes or for a
//! large dispatch ([`Tier::Optimized`]). Both follow the interpreter's
//! schedule (per workgroup, waves in order, lowest pc first, parked lanes
//! released after a round), so both give its bits, faults included (FAULT
//! RULE: the lowest faulting lane wins). `run` splits a dispatch into
//! batches over threads (bit-identical to one thread) and holds each core's
//! runner (`run::gang`, `run::lane`: the Rust side of a batch); [`Jit`]
//! caches compiled kernels by content and batch width.
//!
//! Modules, leaves first (no module names one that names it back): `abi` (the
//! memory layout compiled code shares with Rust, read it first), `cpu`,
//! `plan`, `host` (what helpers see of a running dispatch), `helpers`,
//! `codegen` (lane core), `gang` (gang core: its ABI, lowering and helpers),
//! `buffers`, `compiled`, `workers`, `run`.
//!
//! Inline in the lane core's code: constants, builtins, every integer op (division
//! without traps), compares, selects, casts, control flow with parallel block
//! arguments and the watchdog, all memory accesses with the interpreter's checks
//! (global ones against the region of `GlobalMemory::regions` that served the
//! same instruction last; uniform loads at constant offsets once per run), shared
//! atomics, and f32/f64 float ops in round-to-nearest without exception flags
//! (add, sub, mul, div, min/max, minimum/maximum, copysign, neg, abs, sqrt,
//! floor/ceil/trunc/nearest with SSE4.1, fma with FMA, fcmp) including FTZ,
//! NaN propagation, canonical NaN and saturation. Through host helpers: every
//! other pure instruction via `semantics::eval_pure` (f16, directed rounding,
//! flags, conversions, special functions, bit fields), global address
//! translation on a cache miss, global atomics (`GlobalMemory::atomic`) and the
//! atomic value rule for shared memory.

mod abi;
mod buffers;
mod codegen;
mod compiled;
mod cpu;
mod error;
mod gang;
mod helpers;
mod host;
mod plan;
#[cfg(target_arch = "x86_64")]
mod preserving;
mod run;
mod workers;

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use wavejit_ir::interp::Interpreter;
use wavejit_ir::transform::WorkgroupPacking;
use wavejit_ir::{Dispatch, Engine, Fault, GlobalMemory, Kernel};

pub use compiled::Compiled;
pub use error::JitError;

/// How hard Cranelift works on a kernel. Both tiers lower the kernel the same
/// way, so their results are identical; only compile time and speed differ.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tier {
    /// Single-pass register allocation: about half the compile time.
    Baseline = 0,
    /// Backtracking register allocation: code about 1.5x faster.
    Optimized = 1,
}

/// Which execution core compiled kernels run on. Every choice gives the
/// interpreter's bits, faults included.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Core {
    /// The lane core at [`Tier::Baseline`] (it compiles in a fraction of the
    /// time, which is what small dispatches wait for) and the gang core at
    /// [`Tier::Optimized`] (kernels that have run enough lanes, and large
    /// dispatches at once): the default.
    Tiered,
    /// Lanes in gangs of vector registers with the scheduler inside the
    /// compiled code (`gang`) at both tiers: 4-lane chunks at the baseline,
    /// 16-lane chunks optimized.
    Gang,
    /// Lane by lane with a scheduler in Rust at both tiers (also what runs
    /// dispatches the gang core does not take: step limits beyond its 32-bit
    /// counters).
    Lanes,
}

impl Core {
    /// The core `WAVEJIT_CORE` names (`tiered`, `gang` or `lanes`), else
    /// [`Core::Tiered`].
    pub fn from_env() -> Core {
        match std::env::var("WAVEJIT_CORE").as_deref() {
            Ok("lanes") => Core::Lanes,
            Ok("gang") => Core::Gang,
            _ => Core::Tiered,
        }
    }

    /// Whether code at `tier` runs on the gang core.
    pub fn gang_at(self, tier: Tier) -> bool {
        match self {
            Core::Tiered => tier == Tier::Optimized,
            Core::Gang => true,
            Core::Lanes => false,
        }
    }
}

/// How the JIT runs dispatches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JitConfig {
    /// The execution core.
    pub core: Core,
    /// Lanes per batch: as many whole workgroups as fit side by side (at least one).
    pub batch_lanes: usize,
    /// Worker threads for dispatches of several batches: the calling thread
    /// and `threads - 1` pooled ones, started by the first dispatch that uses
    /// them and kept until the [`Jit`] is dropped.
    pub threads: usize,
    /// Dispatches whose kernel is not compiled yet and whose lanes x instructions
    /// stay below this run on the interpreter (compile cost would dominate).
    pub interp_below: u64,
    /// Pure stretches of at least this many 32-bit integer/f32 instructions run
    /// several lanes at once in vector registers; 0 keeps every run scalar.
    pub vector_min_ops: usize,
    /// Dispatches with fewer lanes x instructions than this run on the calling
    /// thread alone: waking a pooled thread costs about 10 us (a new one 50),
    /// and on a busy machine waiting for it to be scheduled costs milliseconds.
    pub parallel_min_work: u64,
    /// Kernels compile at [`Tier::Baseline`] first and are recompiled at
    /// [`Tier::Optimized`] once they have run this many lanes in total; a
    /// dispatch of at least this many lanes compiles optimized at once.
    /// 0: always optimized; `u64::MAX`: never.
    pub optimize_after_lanes: u64,
    /// Budget of the kernel cache in bytes ([`Compiled::bytes`]: code and
    /// pooled batch buffers). Past it the least recently used compilations
    /// are dropped (dispatches running them keep them alive until they end);
    /// the one just used always stays. Default [`DEFAULT_CACHE_BYTES`], or
    /// the number of bytes in [`CACHE_BYTES_ENV`].
    pub cache_bytes: usize,
    /// Dispatches of small independent workgroups run them side by side,
    /// several to one larger workgroup of at most `batch_lanes` lanes
    /// ([`WorkgroupPacking`]), so the gang core's vectors fill with lanes of
    /// several workgroups. Default on; [`PACK_WORKGROUPS_ENV`]`=0` turns it off.
    pub pack_workgroups: bool,
}

/// The kernel cache's default budget: 256 MiB.
pub const DEFAULT_CACHE_BYTES: usize = 256 << 20;

/// Shared plus private memory one batch may hold (per worker thread): the
/// batch takes fewer workgroups when its kernel declares more per workgroup,
/// but always one.
pub const MAX_BATCH_MEMORY: u64 = 256 << 20;

/// Environment variable overriding [`JitConfig::cache_bytes`] (bytes, decimal).
pub const CACHE_BYTES_ENV: &str = "WAVEJIT_JIT_CACHE_BYTES";

/// [`JitConfig::cache_bytes`] from [`CACHE_BYTES_ENV`], else the default (a
/// value that is not a number is ignored with a warning rather than taken as
/// "no budget").
fn cache_bytes_from_env() -> usize {
    match std::env::var(CACHE_BYTES_ENV) {
        Ok(v) => v.trim().parse().unwrap_or_else(|_| {
            eprintln!(
                "wavejit: {CACHE_BYTES_ENV}={v:?} is not a byte count; using {DEFAULT_CACHE_BYTES}"
            );
            DEFAULT_CACHE_BYTES
        }),
        Err(_) => DEFAULT_CACHE_BYTES,
    }
}

impl Default for JitConfig {
    fn default() -> JitConfig {
        JitConfig {
            core: Core::from_env(),
            // Measured on saxpy (one 256-lane workgroup per batch before):
            // 512 lanes halve the per-batch cost, 7-8 % of the dispatch;
            // 4,096 were slower (the lanes' state outgrows the L1 cache).
            batch_lanes: 512,
            threads: host_threads(),
            interp_below: 0,
            // Shorter stretches gain little over the cost of gathering their
            // inputs and make small kernels slower to compile (30-op bench
            // kernel: 0.73 ms with 8, 0.53 ms with 16).
            vector_min_ops: 16,
            // About a millisecond of work on one core.
            parallel_min_work: 1 << 23,
            // Where the second compile pays for itself: the optimized tier
            // costs about 4 us more per instruction to compile and saves about
            // 0.03 ns per lane and instruction (bench_profile, ALU kernel).
            optimize_after_lanes: 1 << 17,
            cache_bytes: cache_bytes_from_env(),
            pack_workgroups: std::env::var(PACK_WORKGROUPS_ENV).as_deref() != Ok("0"),
        }
    }
}

/// The host's available parallelism, asked once per process (it reads cgroup
/// files on Linux, which costs more than compiling a small kernel).
fn host_threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Compiled kernels by (content hash, batch lanes); equal hashes are told apart
/// by comparing the kernels.
type Cache = HashMap<(u64, usize), Vec<Arc<Compiled>>>;

/// The JIT engine (`name() == "jit"`).
pub struct Jit {
    config: JitConfig,
    cache: Mutex<Cache>,
    /// The last kernels used, newest first, checked by comparison before the
    /// cache is consulted: comparing a kernel costs about a quarter of hashing
    /// it, and most dispatches repeat a recent kernel.
    recent: Mutex<Vec<Arc<Compiled>>>,
    /// The last kernels packed ([`WorkgroupPacking`]), newest first.
    packed: Mutex<Vec<Packed>>,
    compiles: AtomicUsize,
    interpreted: AtomicUsize,
    lane_core_fallbacks: AtomicUsize,
    packed_dispatches: AtomicUsize,
    evictions: AtomicUsize,
    /// Ticks once per use of a compilation (its `last_used` stamp).
    clock: AtomicU64,
    /// The worker threads beside the caller's, started by the first dispatch
    /// that uses them (`None` inside when the system refused the threads).
    pool: OnceLock<Option<workers::Pool>>,
}

/// Set (to anything) in tests and CI: a verified kernel the JIT cannot compile
/// panics naming the reason instead of running on the interpreter unnoticed,
/// and so does a kernel the gang core refuses (it would run on the lane core).
pub const NO_FALLBACK_ENV: &str = "WAVEJIT_NO_INTERP_FALLBACK";

/// Set to `0`: [`JitConfig::pack_workgroups`] is off by default.
pub const PACK_WORKGROUPS_ENV: &str = "WAVEJIT_PACK_WORKGROUPS";

fn no_fallback() -> bool {
    static NO: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *NO.get_or_init(|| std::env::var_os(NO_FALLBACK_ENV).is_some())
}

/// How many recent kernels [`Jit`] compares before hashing.
const RECENT: usize = 4;

/// How many packed kernels [`Jit`] keeps.
const PACKED: usize = 8;

/// A kernel and its packing, with the packed kernel.
struct Packed {
    original: Arc<Kernel>,
    packing: WorkgroupPacking,
    kernel: Arc<Kernel>,
}

impl Default for Jit {
    fn default() -> Jit {
        Jit::new(JitConfig::default())
    }
}

impl Jit {
    pub fn new(config: JitConfig) -> Jit {
        Jit {
            config,
            cache: Mutex::new(HashMap::new()),
            recent: Mutex::new(Vec::with_capacity(RECENT)),
            packed: Mutex::new(Vec::new()),
            compiles: AtomicUsize::new(0),
            interpreted: AtomicUsize::new(0),
            lane_core_fallbacks: AtomicUsize::new(0),
            packed_dispatches: AtomicUsize::new(0),
            evictions: AtomicUsize::new(0),
            clock: AtomicU64::new(0),
            pool: OnceLock::new(),
        }
    }

    /// The threads a dispatch with `threads` workers runs on.
    fn workers(&self, threads: usize) -> workers::Workers<'_> {
        let pool = (threads > 1)
            .then(|| {
                self.pool
                    .get_or_init(|| workers::Pool::start(self.config.threads.max(2) - 1))
            })
            .and_then(|p| p.as_ref()?.threads());
        workers::Workers { threads, pool }
    }

    /// Bytes the kernel cache holds now ([`Compiled::bytes`] summed).
    pub fn cache_bytes(&self) -> usize {
        self.cache
            .lock()
            .map_or(0, |cache| cache.values().flatten().map(|c| c.bytes()).sum())
    }

    /// Compilations in the kernel cache now.
    pub fn cached_kernels(&self) -> usize {
        self.cache
            .lock()
            .map_or(0, |cache| cache.values().map(Vec::len).sum())
    }

    /// How many compilations were dropped to keep [`JitConfig::cache_bytes`].
    pub fn evictions(&self) -> usize {
        self.evictions.load(Ordering::Relaxed)
    }

    /// Drops least recently used compilations until the cache fits its
    /// budget, never `keep` (the one just used). Running dispatches hold an
    /// `Arc` of their compilation, so dropping it here frees nothing they use.
    fn evict(&self, keep: &Arc<Compiled>) {
        // Hits on the recent list do not stamp their compilation (that path
        // stays lock- and write-light), so its members count as the newest.
        let recent: Vec<Arc<Compiled>> = self.recent.lock().map_or(Vec::new(), |r| r.clone());
        let age = |c: &Arc<Compiled>| match recent.iter().position(|r| Arc::ptr_eq(r, c)) {
            Some(i) => u64::MAX - i as u64,
            None => c.last_used.load(Ordering::Relaxed),
        };
        let Ok(mut cache) = self.cache.lock() else {
            return;
        };
        let mut total: usize = cache.values().flatten().map(|c| c.bytes()).sum();
        if total <= self.config.cache_bytes {
            return;
        }
        let mut by_age: Vec<(u64, (u64, usize), Arc<Compiled>)> = cache
            .iter()
            .flat_map(|(k, v)| v.iter().map(|c| (age(c), *k, c.clone())))
            .filter(|(_, _, c)| !Arc::ptr_eq(c, keep))
            .collect();
        by_age.sort_by_key(|(t, _, _)| *t);
        let mut dropped = Vec::new();
        for (_, key, c) in by_age {
            if total <= self.config.cache_bytes {
                break;
            }
            if let Some(entry) = cache.get_mut(&key) {
                entry.retain(|e| !Arc::ptr_eq(e, &c));
                if entry.is_empty() {
                    cache.remove(&key);
                }
            }
            total = total.saturating_sub(c.bytes());
            dropped.push(c);
        }
        drop(cache);
        // The recent list must not keep dropped code alive either.
        if let Ok(mut recent) = self.recent.lock() {
            recent.retain(|r| !dropped.iter().any(|d| Arc::ptr_eq(r, d)));
        }
        self.evictions.fetch_add(dropped.len(), Ordering::Relaxed);
    }

    /// How many dispatches ran on the interpreter instead of compiled code
    /// (malformed dispatch shapes, kernels the JIT could not compile, tiny
    /// dispatches below [`JitConfig::interp_below`]).
    pub fn interpreter_fallbacks(&self) -> usize {
        self.interpreted.load(Ordering::Relaxed)
    }

    /// How many compilations the gang core refused (they run on the lane
    /// core, which gives the same bits; a panic under [`NO_FALLBACK_ENV`]).
    pub fn gang_fallbacks(&self) -> usize {
        self.lane_core_fallbacks.load(Ordering::Relaxed)
    }

    /// How many dispatches ran with their workgroups packed
    /// ([`JitConfig::pack_workgroups`]).
    pub fn packed_dispatches(&self) -> usize {
        self.packed_dispatches.load(Ordering::Relaxed)
    }

    fn interpret(
        &self,
        kernel: &Kernel,
        dispatch: &Dispatch,
        memory: &dyn GlobalMemory,
    ) -> Result<(), Fault> {
        self.interpreted.fetch_add(1, Ordering::Relaxed);
        Interpreter.run(kernel, dispatch, memory)
    }

    /// The interpreter's answer for a kernel the JIT refused with `e` (a panic
    /// under [`NO_FALLBACK_ENV`]).
    fn refused(
        &self,
        e: JitError,
        kernel: &Kernel,
        dispatch: &Dispatch,
        memory: &dyn GlobalMemory,
    ) -> Result<(), Fault> {
        // Unverified kernels are not a limit of the JIT: the interpreter's
        // answer (its malformed-kernel fault) is their defined behaviour.
        assert!(
            !no_fallback() || matches!(e, JitError::Unverified(_)),
            "{NO_FALLBACK_ENV}: the JIT refused kernel `{}`: {e}",
            kernel.name
        );
        self.interpret(kernel, dispatch, memory)
    }

    pub fn config(&self) -> &JitConfig {
        &self.config
    }

    /// How many kernels were compiled (cache misses) so far.
    pub fn compile_count(&self) -> usize {
        self.compiles.load(Ordering::Relaxed)
    }

    /// Lanes per batch for `kernel` on `dispatch`: whole workgroups only,
    /// and no more of them than keep the batch's shared and private memory
    /// within [`MAX_BATCH_MEMORY`] (one workgroup always fits).
    pub fn batch_lanes_for(&self, kernel: &Kernel, dispatch: &Dispatch) -> usize {
        let wg = u64::from(dispatch.lanes_per_workgroup().max(1));
        let per_group = u64::from(kernel.shared_size)
            .saturating_add(u64::from(kernel.private_size).saturating_mul(wg))
            .max(1);
        let fit = (MAX_BATCH_MEMORY / per_group).max(1);
        let groups = (self.config.batch_lanes as u64 / wg).clamp(1, fit);
        usize::try_from(groups.saturating_mul(wg)).unwrap_or(usize::MAX)
    }

    fn cached(&self, key: (u64, usize), kernel: &Kernel) -> Option<Arc<Compiled>> {
        // The hash only narrows the search: the full comparison keeps kernels
        // with equal hashes apart.
        let cache = self.cache.lock().ok()?;
        cache
            .get(&key)?
            .iter()
            .find(|c| c.kernel == *kernel)
            .cloned()
    }

    /// A recently used compilation of `kernel` for `lanes` lanes.
    fn recent(&self, kernel: &Kernel, lanes: usize) -> Option<Arc<Compiled>> {
        let recent = self.recent.lock().ok()?;
        recent
            .iter()
            .find(|c| c.lanes == lanes && c.kernel == *kernel)
            .cloned()
    }

    /// Makes `c` the most recently used compilation (in place of `replaced`,
    /// a lower tier of the same kernel, if any).
    fn touch(&self, c: &Arc<Compiled>, replaced: Option<&Arc<Compiled>>) {
        let now = self.clock.fetch_add(1, Ordering::Relaxed) + 1;
        c.last_used.store(now, Ordering::Relaxed);
        if let Ok(mut recent) = self.recent.lock() {
            if recent.first().is_some_and(|r| Arc::ptr_eq(r, c)) {
                return;
            }
            recent.retain(|r| !Arc::ptr_eq(r, c) && !replaced.is_some_and(|o| Arc::ptr_eq(r, o)));
            recent.insert(0, c.clone());
            recent.truncate(RECENT);
        }
    }

    /// The tier a dispatch of `lanes` lanes compiles at.
    fn tier_for(&self, lanes: u64) -> Tier {
        if lanes >= self.config.optimize_after_lanes {
            Tier::Optimized
        } else {
            Tier::Baseline
        }
    }

    /// The compiled code of `kernel` for batches of `lanes` lanes, from the cache
    /// when present at any tier (a hit does not touch Cranelift), else compiled
    /// at the first tier ([`JitConfig::optimize_after_lanes`]).
    pub fn compile(&self, kernel: &Kernel, lanes: usize) -> Result<Arc<Compiled>, JitError> {
        if let Some(c) = self.recent(kernel, lanes) {
            return Ok(c);
        }
        self.compile_keyed((content_hash(kernel), lanes), kernel, self.tier_for(0))
    }

    /// The compiled code [`Engine::run`] would use for `dispatch` (its batch
    /// width, and the optimized tier at once for a dispatch of at least
    /// [`JitConfig::optimize_after_lanes`] lanes): for callers that report a
    /// kernel the JIT cannot take before running it.
    pub fn compile_for(
        &self,
        kernel: &Kernel,
        dispatch: &Dispatch,
    ) -> Result<Arc<Compiled>, JitError> {
        let lanes =
            u64::from(dispatch.lanes_per_workgroup()).saturating_mul(dispatch.workgroup_count());
        self.compile_at(
            kernel,
            self.batch_lanes_for(kernel, dispatch),
            self.tier_for(lanes),
        )
    }

    /// [`Jit::compile`] at `tier` or better: a cached lower tier is replaced.
    pub fn compile_at(
        &self,
        kernel: &Kernel,
        lanes: usize,
        tier: Tier,
    ) -> Result<Arc<Compiled>, JitError> {
        if let Some(c) = self.recent(kernel, lanes).filter(|c| c.tier >= tier) {
            return Ok(c);
        }
        self.compile_keyed((content_hash(kernel), lanes), kernel, tier)
    }

    /// [`Jit::compile_at`] with the cache key already computed (hashing a
    /// kernel is most of the cost of a hit, so a dispatch hashes once).
    fn compile_keyed(
        &self,
        key: (u64, usize),
        kernel: &Kernel,
        tier: Tier,
    ) -> Result<Arc<Compiled>, JitError> {
        let old = self.cached(key, kernel);
        if let Some(c) = &old
            && c.tier >= tier
        {
            self.touch(c, None);
            return Ok(c.clone());
        }
        wavejit_ir::verify::verify(kernel)?;
        let c = Arc::new(Compiled::new(
            kernel,
            key.1,
            self.config.vector_min_ops,
            tier,
            self.config.core,
        )?);
        self.compiles.fetch_add(1, Ordering::Relaxed);
        if let Some(e) = &c.gang_error {
            self.lane_core_fallbacks.fetch_add(1, Ordering::Relaxed);
            assert!(
                !no_fallback(),
                "{NO_FALLBACK_ENV}: the gang core refused kernel `{}`: {e}",
                kernel.name
            );
        }
        if let Ok(mut cache) = self.cache.lock() {
            let entry = cache.entry(key).or_default();
            if let Some(o) = &old {
                entry.retain(|e| !Arc::ptr_eq(e, o));
            }
            entry.push(c.clone());
        }
        self.touch(&c, old.as_ref());
        self.evict(&c);
        Ok(c)
    }

    /// `c` after a dispatch of `lanes` more lanes: an optimized recompile once
    /// a baseline compilation has run enough lanes to pay for it (on failure
    /// the baseline code keeps running: its results are the same).
    fn tiered_up(&self, c: Arc<Compiled>, kernel: &Kernel, lanes: u64) -> Arc<Compiled> {
        if c.tier == Tier::Optimized {
            return c;
        }
        let before = c.lanes_run.fetch_add(lanes, Ordering::Relaxed);
        if before.saturating_add(lanes) < self.config.optimize_after_lanes {
            return c;
        }
        self.compile_keyed((content_hash(kernel), c.lanes), kernel, Tier::Optimized)
            .unwrap_or(c)
    }
}

/// Fx hashing: the derived `Hash` of a kernel makes thousands of tiny
/// writes, which SipHash makes cost microseconds. It is not collision
/// resistant, which is fine: equal hashes are compared in full.
fn content_hash(kernel: &Kernel) -> u64 {
    rustc_hash::FxBuildHasher.hash_one(kernel)
}

impl Engine for Jit {
    fn name(&self) -> &str {
        "jit"
    }

    fn run(
        &self,
        kernel: &Kernel,
        dispatch: &Dispatch,
        memory: &dyn GlobalMemory,
    ) -> Result<(), Fault> {
        // The same refusal as the interpreter's, before anything is compiled.
        dispatch.check(kernel)?;
        // A packed workgroup stays within the configured batch: a batch of
        // one workgroup keeps meaning one of the dispatch's (after a fault,
        // what else ran is the rest of the faulting batch).
        let fits = |p: &WorkgroupPacking| {
            let lanes = u64::from(p.per_pack()) * u64::from(dispatch.lanes_per_workgroup());
            lanes <= self.config.batch_lanes as u64
        };
        if self.config.pack_workgroups
            && let Some(packing) = WorkgroupPacking::plan(kernel, dispatch).filter(fits)
        {
            self.packed_dispatches.fetch_add(1, Ordering::Relaxed);
            let packed = self.packed_kernel(kernel, packing);
            let packed_dispatch = packing.dispatch(dispatch);
            return self
                .run_checked(&packed, &packed_dispatch, memory)
                .map_err(|f| packing.original_fault(f));
        }
        self.run_checked(kernel, dispatch, memory)
    }
}

impl Jit {
    /// `kernel` as `packing` runs it, from the last few made.
    fn packed_kernel(&self, kernel: &Kernel, packing: WorkgroupPacking) -> Arc<Kernel> {
        let mut made = self.packed.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = made
            .iter()
            .position(|p| p.packing == packing && *p.original == *kernel)
        {
            let hit = made.remove(i);
            let k = hit.kernel.clone();
            made.insert(0, hit);
            return k;
        }
        let k = Arc::new(packing.kernel(kernel));
        made.insert(
            0,
            Packed {
                original: Arc::new(kernel.clone()),
                packing,
                kernel: k.clone(),
            },
        );
        made.truncate(PACKED);
        k
    }

    /// [`Engine::run`] after the dispatch check.
    fn run_checked(
        &self,
        kernel: &Kernel,
        dispatch: &Dispatch,
        memory: &dyn GlobalMemory,
    ) -> Result<(), Fault> {
        let wg = u64::from(dispatch.lanes_per_workgroup());
        let lanes = wg.saturating_mul(dispatch.workgroup_count());
        // Shapes the batch layout does not handle keep the interpreter's answer
        // (including its faults for malformed dispatches).
        let odd = kernel.blocks.is_empty()
            || dispatch.wave_size == 0
            || wg > 1 << 16
            || dispatch.workgroup_size.contains(&0);
        if odd {
            return self.interpret(kernel, dispatch, memory);
        }
        if lanes == 0 {
            return Ok(());
        }
        let batch = self.batch_lanes_for(kernel, dispatch);
        let work = lanes.saturating_mul(kernel.op_count() as u64);
        let threads = if work < self.config.parallel_min_work {
            1
        } else {
            self.config.threads
        };
        let c = match self.recent(kernel, batch) {
            Some(c) => c,
            None => {
                let key = (content_hash(kernel), batch);
                if work < self.config.interp_below && self.cached(key, kernel).is_none() {
                    return self.interpret(kernel, dispatch, memory);
                }
                match self.compile_keyed(key, kernel, self.tier_for(lanes)) {
                    Ok(c) => c,
                    // Kernels the JIT cannot take (e.g. failing verification)
                    // get the interpreter's defined behaviour.
                    Err(e) => return self.refused(e, kernel, dispatch, memory),
                }
            }
        };
        let c = self.tiered_up(c, kernel, lanes);
        let before = c.bytes();
        // A baseline kernel with loops may show after its first batch that it
        // is worth the optimized tier: the dispatch's lane steps (edges
        // taken) projected to at least `optimize_after_lanes` per block, four
        // times over, since a loop iteration often takes two edges (through
        // a block holding only the jump) and loops with a per-workgroup
        // address gain less from the gang core. Measured on tinygrad's
        // reductions: 177 k steps per block (of 5) lost 7 ms to the compile
        // (15 ms instead of 7.6), 23 M per block gained 0.6 s of 0.9.
        let optimized = || {
            let key = (content_hash(kernel), c.lanes);
            self.compile_keyed(key, kernel, Tier::Optimized).ok()
        };
        let probe = (c.tier == Tier::Baseline
            && c.may_loop
            && c.gang.is_none()
            && self.config.core.gang_at(Tier::Optimized)
            && self.config.optimize_after_lanes != u64::MAX)
            .then(|| run::Probe {
                min_steps: (self.config.optimize_after_lanes)
                    .saturating_mul(4 * kernel.blocks.len() as u64),
                optimized: &optimized,
            });
        let workers = self.workers(threads);
        let result = run::run_dispatch(&c, kernel, dispatch, memory, workers, probe);
        // A first dispatch pools its batch buffers (and may compile the lane
        // core's code): the cache grew without a compile.
        if c.bytes() > before {
            self.evict(&c);
        }
        match result {
            Ok(result) => result,
            Err(e) => self.refused(e, kernel, dispatch, memory),
        }
    }
}
