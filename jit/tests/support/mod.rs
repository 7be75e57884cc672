//! Test support: a small global memory with two allocations, and a comparison of
//! the JIT against the golden interpreter.
#![allow(dead_code)]

use std::cell::UnsafeCell;
use std::ptr::NonNull;

use wavejit_ir::interp::Interpreter;
use wavejit_ir::{Access, AccessCause, Dispatch, Engine, Fault, GlobalMemory, Kernel, Region};
use wavejit_jit::{Jit, JitConfig};

/// Guest address of the writable buffer.
pub const BUF: u64 = 0x1000_0000;
/// Guest address of the read-only buffer.
pub const RO: u64 = 0x2000_0000;

/// Two allocations: a writable one at [`BUF`] and a read-only one at [`RO`].
pub struct TestMemory {
    rw: UnsafeCell<Vec<u64>>,
    ro: UnsafeCell<Vec<u64>>,
    /// Offer `regions()` (the JIT's inline path) or not.
    pub with_regions: bool,
}

// SAFETY: concurrent access goes through raw pointers handed out by `translate`,
// exactly like a real device memory; tests synchronise through the engines.
unsafe impl Sync for TestMemory {}

impl TestMemory {
    pub fn new(rw: &[u8], ro: &[u8], with_regions: bool) -> TestMemory {
        let words = |b: &[u8]| {
            let mut v = vec![0u64; b.len().div_ceil(8)];
            for (i, &x) in b.iter().enumerate() {
                v[i / 8] |= u64::from(x) << (8 * (i % 8));
            }
            v
        };
        TestMemory {
            rw: UnsafeCell::new(words(rw)),
            ro: UnsafeCell::new(words(ro)),
            with_regions,
        }
    }

    pub fn rw_bytes(&self) -> Vec<u8> {
        // SAFETY: no engine runs while tests read the result.
        let v = unsafe { &*self.rw.get() };
        v.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    fn parts(&self) -> [(u64, u64, *mut u8, bool); 2] {
        // SAFETY: only raw pointers are taken.
        let (rw, ro) = unsafe { (&mut *self.rw.get(), &mut *self.ro.get()) };
        [
            (BUF, rw.len() as u64 * 8, rw.as_mut_ptr().cast(), true),
            (RO, ro.len() as u64 * 8, ro.as_mut_ptr().cast(), false),
        ]
    }
}

// SAFETY: the pointers stay valid while `self` lives; ranges are checked.
unsafe impl GlobalMemory for TestMemory {
    fn translate(&self, addr: u64, len: u64, access: Access) -> Result<NonNull<u8>, AccessCause> {
        for (start, size, host, writable) in self.parts() {
            if addr >= start && addr < start + size.max(1) {
                if addr - start + len > size {
                    return Err(AccessCause::OutOfBounds);
                }
                if access == Access::Write && !writable {
                    return Err(AccessCause::ReadOnly);
                }
                // SAFETY: within the allocation.
                return NonNull::new(unsafe { host.add((addr - start) as usize) })
                    .ok_or(AccessCause::Unmapped);
            }
        }
        Err(AccessCause::Unmapped)
    }

    fn regions(&self) -> Option<Vec<Region>> {
        if !self.with_regions {
            return None;
        }
        Some(
            self.parts()
                .into_iter()
                .filter_map(|(start, len, host, writable)| {
                    Some(Region {
                        start,
                        len,
                        host: NonNull::new(host)?,
                        writable,
                    })
                })
                .collect(),
        )
    }
}

/// Result of one engine run: the fault and the writable buffer afterwards.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    pub fault: Option<Fault>,
    pub memory: Vec<u8>,
}

pub fn run_on(
    engine: &dyn Engine,
    kernel: &Kernel,
    dispatch: &Dispatch,
    rw: &[u8],
    ro: &[u8],
    with_regions: bool,
) -> Outcome {
    let mem = TestMemory::new(rw, ro, with_regions);
    let fault = engine.run(kernel, dispatch, &mem).err();
    Outcome {
        fault,
        memory: mem.rw_bytes(),
    }
}

/// JIT configurations every comparison runs: both cores (the gang core at
/// both tiers: 4-lane chunks at the baseline, 16-lane optimized; the tiered
/// core; the lane core), batch widths (1: one workgroup per batch; 16..1024:
/// gang-sized to many workgroups side by side), thread counts 1-3, the lane
/// core's vector thresholds (0: scalar only; 1: every vectorizable stretch),
/// both tiers (the register allocators differ), workgroup packing on and off
/// and memory with and without `regions()` (the JIT's inline path or
/// `translate` only).
pub fn jit_configs() -> Vec<JitConfig> {
    use wavejit_jit::Core::{Gang, Lanes, Tiered};
    [
        (Gang, 1, 1, 0),
        (Gang, 16, 2, 1),
        (Gang, 64, 3, 8),
        (Gang, 256, 1, 1),
        (Gang, 1024, 2, 16),
        (Tiered, 16, 1, 1),
        (Lanes, 64, 2, 8),
    ]
    .into_iter()
    .enumerate()
    .map(
        |(k, (core, batch_lanes, threads, vector_min_ops))| JitConfig {
            core,
            batch_lanes,
            threads,
            interp_below: 0,
            vector_min_ops,
            parallel_min_work: 0,
            // The tiered core at 64: small dispatches start at the baseline
            // and may move to the gang core after their first batch.
            optimize_after_lanes: match (core, k % 2) {
                (Tiered, _) => 64,
                (_, 0) => 0,
                _ => u64::MAX,
            },
            cache_bytes: wavejit_jit::DEFAULT_CACHE_BYTES,
            // Packing on and off on each core (it needs batches of 16 lanes).
            pack_workgroups: k != 2 && k != 6,
        },
    )
    .collect()
}

/// Whether configuration `k` of [`jit_configs`] offers `regions()`.
pub fn with_regions(k: usize) -> bool {
    k != 0 && k != 3
}

/// Dispatches `jit` ran on the interpreter instead of compiled code.
pub fn fallbacks(jit: &Jit) -> Option<u64> {
    Some(jit.interpreter_fallbacks() as u64)
}

/// Which engine path ran a dispatch, for messages.
fn path(jit: &Jit) -> String {
    match fallbacks(jit) {
        Some(0) => "compiled code".into(),
        Some(n) => format!("{n} interpreter fallback(s)"),
        None => "unknown (the JIT does not count fallbacks)".into(),
    }
}

/// Runs `kernel` on the interpreter and on the JIT in every configuration;
/// panics with the first difference. Memory is compared only without a fault
/// (after a fault it is unspecified). Returns the interpreter's outcome.
pub fn compare(kernel: &Kernel, dispatch: &Dispatch, rw: &[u8], ro: &[u8]) -> Outcome {
    compare_report(kernel, dispatch, rw, ro).0
}

/// [`compare`], also returning per configuration how many dispatches the JIT
/// ran on the interpreter instead (`None`: the JIT does not say).
pub fn compare_report(
    kernel: &Kernel,
    dispatch: &Dispatch,
    rw: &[u8],
    ro: &[u8],
) -> (Outcome, Vec<Option<u64>>) {
    let want = run_on(&Interpreter, kernel, dispatch, rw, ro, false);
    let mut paths = Vec::new();
    for (k, cfg) in jit_configs().into_iter().enumerate() {
        let jit = Jit::new(cfg.clone());
        let got = run_on(&jit, kernel, dispatch, rw, ro, with_regions(k));
        paths.push(fallbacks(&jit));
        // One compilation; the tiered core's may be followed by its optimized one.
        let compiles = if cfg.core == wavejit_jit::Core::Tiered {
            1..=2
        } else {
            1..=1
        };
        if wavejit_ir::verify::verify(kernel).is_ok() && !compiles.contains(&jit.compile_count()) {
            let why = jit.compile_for(kernel, dispatch).err();
            panic!("the JIT did not compile the kernel with {cfg:?}: {why:?}");
        }
        assert_eq!(
            got.fault,
            want.fault,
            "fault differs with {cfg:?} (JIT path: {})",
            path(&jit)
        );
        // After a fault, the memory depends on what else had run: later
        // batches on other threads, the rest of the faulting batch's
        // workgroups. With one thread and one workgroup per batch it is the
        // interpreter's.
        if want.fault.is_none() || (cfg.threads == 1 && cfg.batch_lanes == 1) {
            assert!(
                got.memory == want.memory,
                "memory differs with {cfg:?} (JIT path: {}):\n jit    {:?}\n interp {:?}",
                path(&jit),
                first_diff(&got.memory, &want.memory),
                first_diff(&want.memory, &got.memory),
            );
        }
    }
    (want, paths)
}

fn first_diff<'a>(a: &'a [u8], b: &[u8]) -> Option<(usize, &'a [u8])> {
    let i = a.iter().zip(b).position(|(x, y)| x != y)?;
    let start = i & !7;
    Some((start, &a[start..(start + 16).min(a.len())]))
}

/// Parses IR text of a test kernel (a test kernel that does not parse is a
/// bug of the test).
pub fn parse(text: &str) -> Kernel {
    match wavejit_ir::text::parse(text) {
        Ok(k) => k,
        Err(e) => panic!("test kernel does not parse: {e}"),
    }
}

/// Little-endian words of a memory image.
pub fn u32s(m: &[u8]) -> Vec<u32> {
    m.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// IR text for the start of a test kernel's entry block: the global id as
/// i32 (v3) and the byte address BUF + 4 * id (v6).
pub const PROLOGUE: &str = "  v0 = local_index
  v1 = workgroup_id.x
  v2 = workgroup_size.x
  v10 = imul.i32 v1, v2
  v3 = iadd.i32 v10, v0
  v4 = zext.i32.i64 v3
  v11 = const.i64 2
  v5 = shl.i64 v4, v11
  v12 = const.i64 0x10000000
  v6 = iadd.i64 v12, v5
";
