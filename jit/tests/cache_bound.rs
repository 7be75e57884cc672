//! The kernel cache's byte budget (`JitConfig::cache_bytes`): many distinct
//! kernels keep it bounded, results stay right, and an evicted kernel
//! recompiles to the same bits (issue 14, item 4).

mod support;

use support::{BUF, run_on};
use wavejit_ir::{
    AddrSpace, Builder, Builtin, CastOp, Dispatch, IBinOp, InstKind, Kernel, MemAccess, Type,
};
use wavejit_jit::{Core, Jit, JitConfig};

/// out[local] = local * k + (local ^ k): trivially different per `k`.
fn kernel(k: u64) -> Kernel {
    let mut kern = Kernel::new("cache");
    let entry = kern.add_block();
    let mut b = Builder::new(&mut kern, entry);
    let local = b.ins(InstKind::Builtin(Builtin::LocalIndex), &[]);
    let kc = b.iconst(Type::I32, k);
    let mul = b.ins(InstKind::IBinary(IBinOp::Mul), &[local, kc]);
    let xor = b.ins(InstKind::IBinary(IBinOp::Xor), &[local, kc]);
    let v = b.ins(InstKind::IBinary(IBinOp::Add), &[mul, xor]);
    let l64 = b.ins(
        InstKind::Cast {
            op: CastOp::Zext,
            to: Type::I64,
        },
        &[local],
    );
    let four = b.iconst(Type::I64, 4);
    let off = b.ins(InstKind::IBinary(IBinOp::Mul), &[l64, four]);
    let base = b.iconst(Type::I64, BUF);
    let addr = b.ins(InstKind::IBinary(IBinOp::Add), &[base, off]);
    b.ins(
        InstKind::Store(MemAccess::scalar(AddrSpace::Global, Type::I32)),
        &[addr, v],
    );
    b.exit();
    kern
}

const LANES: u32 = 16;

fn expected(k: u64) -> Vec<u8> {
    let k = k as u32;
    (0..LANES)
        .flat_map(|l| (l.wrapping_mul(k).wrapping_add(l ^ k)).to_le_bytes())
        .collect()
}

fn jit(core: Core, cache_bytes: usize) -> Jit {
    Jit::new(JitConfig {
        core,
        batch_lanes: 64,
        threads: 1,
        interp_below: 0,
        parallel_min_work: u64::MAX,
        optimize_after_lanes: u64::MAX,
        cache_bytes,
        ..JitConfig::default()
    })
}

fn run(jit: &Jit, k: u64) -> Vec<u8> {
    let d = Dispatch::new([1, 1, 1], [LANES, 1, 1]);
    let out = run_on(jit, &kernel(k), &d, &[0; 4 * LANES as usize], &[], true);
    assert!(out.fault.is_none(), "kernel {k}: {:?}", out.fault);
    out.memory
}

const BOUND: usize = 256 << 10;

#[test]
fn three_thousand_kernels_stay_within_the_budget() {
    // The gang core's compiles cost several times the lane core's (minutes
    // for 3,000 in a debug build); the budget code is the same for both.
    for (core, kernels) in [(Core::Lanes, 3000), (Core::Gang, 300)] {
        let jit = jit(core, BOUND);
        for k in 0..kernels {
            assert_eq!(run(&jit, k), expected(k), "{core:?} kernel {k}");
            let held = jit.cache_bytes();
            assert!(held <= BOUND, "{core:?} after kernel {k}: {held} > {BOUND}");
        }
        assert_eq!(jit.compile_count(), kernels as usize, "{core:?}");
        // Each compilation holds at least a page of code: far fewer than
        // 3,000 fit in 256 KiB, and the rest were dropped.
        let cached = jit.cached_kernels();
        assert!((1..64).contains(&cached), "{core:?}: {cached} cached");
        assert_eq!(jit.evictions(), kernels as usize - cached, "{core:?}");
    }
}

#[test]
fn an_evicted_kernel_recompiles_to_the_same_bits() {
    for core in [Core::Lanes, Core::Gang] {
        let jit = jit(core, BOUND);
        let first = run(&jit, 7);
        assert_eq!(first, expected(7));
        for k in 1000..1100 {
            run(&jit, k);
        }
        assert!(jit.evictions() > 0, "{core:?}");
        let before = jit.compile_count();
        assert_eq!(run(&jit, 7), first, "{core:?}");
        assert_eq!(
            jit.compile_count(),
            before + 1,
            "{core:?}: kernel 7 was not evicted"
        );
    }
}

#[test]
fn a_kernel_larger_than_the_budget_still_runs_and_is_the_only_one_kept() {
    let jit = jit(Core::Lanes, 1);
    for k in [3, 4, 3] {
        assert_eq!(run(&jit, k), expected(k));
        assert_eq!(jit.cached_kernels(), 1);
    }
    assert_eq!(jit.compile_count(), 3);
}

#[test]
fn a_handed_out_compilation_outlives_its_eviction() {
    assert_eq!(wavejit_jit::DEFAULT_CACHE_BYTES, 256 << 20);
    let jit = jit(Core::Lanes, 1);
    // A running dispatch holds its compilation the same way: by `Arc`.
    let held = jit.compile(&kernel(5), 64).expect("compiles");
    let weak = std::sync::Arc::downgrade(&held);
    run(&jit, 6);
    assert_eq!(jit.evictions(), 1);
    assert_eq!(jit.cached_kernels(), 1);
    assert!(weak.upgrade().is_some(), "evicted code freed while held");
    drop(held);
    assert!(
        weak.upgrade().is_none(),
        "the cache still holds evicted code"
    );
}
