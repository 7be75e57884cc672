//! The engine's behaviour around compilation: the kernel cache, interpreter
//! tiering and the fallback for kernels that do not verify.

mod support;

use support::{BUF, RO, run_on};
use wavejit_ir::interp::Interpreter;
use wavejit_ir::verify::VerifyError;
use wavejit_ir::{
    AddrSpace, Builder, Builtin, CastOp, Dispatch, Engine, IBinOp, InstKind, Kernel, MemAccess,
    Type,
};
use wavejit_jit::{Jit, JitConfig, Tier};

/// out[local] = local * k
fn kernel(k: u64) -> Kernel {
    let mut kern = Kernel::new("scale");
    let entry = kern.add_block();
    let mut b = Builder::new(&mut kern, entry);
    let local = b.ins(InstKind::Builtin(Builtin::LocalIndex), &[]);
    let kc = b.iconst(Type::I32, k);
    let v = b.ins(InstKind::IBinary(IBinOp::Mul), &[local, kc]);
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

fn config(interp_below: u64) -> JitConfig {
    JitConfig {
        core: wavejit_jit::Core::Gang,
        batch_lanes: 64,
        threads: 1,
        interp_below,
        vector_min_ops: 8,
        parallel_min_work: 0,
        optimize_after_lanes: u64::MAX,
        cache_bytes: wavejit_jit::DEFAULT_CACHE_BYTES,
        // These tests count the compilations of the kernels they run;
        // packing would compile packed copies (see `packed_workgroups_...`).
        pack_workgroups: false,
    }
}

#[test]
fn cache_hits_do_not_recompile() {
    let jit = Jit::new(config(0));
    assert_eq!(jit.name(), "jit");
    let d = Dispatch::new([2, 1, 1], [8, 1, 1]);
    let a = run_on(&jit, &kernel(3), &d, &[0; 64], &[], true);
    let b = run_on(&jit, &kernel(3), &d, &[0; 64], &[], true);
    assert_eq!(jit.compile_count(), 1);
    assert_eq!(a, b);
    assert_eq!(&a.memory[..8], &[0, 0, 0, 0, 3, 0, 0, 0]);
    // Another kernel, and the same kernel with another batch width, compile anew;
    // another workgroup shape of the same width reuses the code.
    run_on(&jit, &kernel(5), &d, &[0; 64], &[], true);
    assert_eq!(jit.compile_count(), 2);
    let shape = |x, y| Dispatch::new([1, 1, 1], [x, y, 1]);
    run_on(&jit, &kernel(3), &shape(4, 4), &[0; 256], &[], true);
    assert_eq!(jit.compile_count(), 2);
    run_on(&jit, &kernel(3), &shape(48, 1), &[0; 256], &[], true);
    assert_eq!(jit.compile_count(), 3);
    let c = jit.compile(&kernel(3), 64).map(|c| c.lanes());
    assert_eq!(c.ok(), Some(64));
    assert_eq!(jit.compile_count(), 3);
}

/// Kernels that left the short list of recent kernels are still found in the
/// cache, kernels that differ only in a constant are told apart, and each
/// dispatch runs its own kernel's code.
#[test]
fn recent_kernels_and_the_cache_agree() {
    let jit = Jit::new(config(0));
    let d = Dispatch::new([1, 1, 1], [8, 1, 1]);
    let first = jit.compile(&kernel(1), 64).ok();
    for k in 2..10 {
        let out = run_on(&jit, &kernel(k), &d, &[0; 64], &[], true);
        assert_eq!(&out.memory[4..8], &(k as u32).to_le_bytes());
    }
    assert_eq!(jit.compile_count(), 9);
    let again = jit.compile(&kernel(1), 64).ok();
    assert_eq!(jit.compile_count(), 9, "an old kernel was compiled again");
    assert!(matches!((first, again), (Some(a), Some(b)) if std::sync::Arc::ptr_eq(&a, &b)));
    for k in [9, 1, 9, 4] {
        let out = run_on(&jit, &kernel(k), &d, &[0; 64], &[], true);
        assert_eq!(&out.memory[28..32], &(7 * k as u32).to_le_bytes());
    }
    assert_eq!(jit.compile_count(), 9);
}

#[test]
fn tiny_dispatches_may_run_on_the_interpreter() {
    let d = Dispatch::new([1, 1, 1], [8, 1, 1]);
    let tiered = Jit::new(config(1_000_000));
    let got = run_on(&tiered, &kernel(7), &d, &[0; 32], &[], false);
    assert_eq!(tiered.compile_count(), 0);
    let want = run_on(&Interpreter, &kernel(7), &d, &[0; 32], &[], false);
    assert_eq!(got, want);
    // Once compiled (here explicitly), even tiny dispatches use the code.
    assert!(tiered.compile(&kernel(7), 8).is_ok());
    let again = run_on(&tiered, &kernel(7), &d, &[0; 32], &[], false);
    assert_eq!(again, want);
    assert_eq!(tiered.compile_count(), 1);
}

#[test]
fn unverified_kernels_get_the_interpreters_answer() {
    // A use of a value defined nowhere: the interpreter faults with its
    // malformed-kernel trap; the JIT must not compile it and reports the same.
    let mut k = kernel(1);
    let entry = wavejit_ir::Block::from_u32(0);
    let bogus = wavejit_ir::Value::from_u32(999);
    k.append_inst(entry, InstKind::IBinary(IBinOp::Add), &[bogus, bogus]);
    let jit = Jit::new(config(0));
    let d = Dispatch::new([1, 1, 1], [4, 1, 1]);
    let got = run_on(&jit, &k, &d, &[0; 16], &[], true);
    let want = run_on(&Interpreter, &k, &d, &[0; 16], &[], false);
    assert_eq!(got.fault, want.fault);
    assert!(got.fault.is_some());
    assert_eq!(jit.compile_count(), 0);
    // The refusal keeps the verifier's error as its source, for matching.
    let err = match jit.compile(&k, 4) {
        Ok(_) => panic!("an unverified kernel compiled"),
        Err(e) => e,
    };
    let source = std::error::Error::source(&err).and_then(|s| s.downcast_ref::<VerifyError>());
    let Some(verify) = source else {
        panic!("no VerifyError source: {err:?}");
    };
    assert_eq!(verify, &wavejit_ir::verify::verify(&k).unwrap_err());
    assert!(matches!(err, wavejit_jit::JitError::Unverified(_)));
}

/// Kernels start at the baseline tier and are recompiled optimized once they
/// have run `optimize_after_lanes` lanes; large dispatches compile optimized at
/// once; the results never change.
#[test]
fn kernels_tier_up_after_enough_lanes() {
    let jit = Jit::new(JitConfig {
        optimize_after_lanes: 40,
        ..config(0)
    });
    let small = Dispatch::new([2, 1, 1], [8, 1, 1]);
    let tier = |jit: &Jit| jit.compile(&kernel(3), 64).map(|c| c.tier()).ok();
    let mut outs = Vec::new();
    for runs in 1..=3 {
        outs.push(run_on(&jit, &kernel(3), &small, &[0; 64], &[], true));
        // 16 lanes per run: optimized once 48 >= 40 lanes ran.
        let want = if runs < 3 {
            Tier::Baseline
        } else {
            Tier::Optimized
        };
        assert_eq!(tier(&jit), Some(want), "after {runs} runs");
    }
    assert_eq!(jit.compile_count(), 2);
    outs.push(run_on(&jit, &kernel(3), &small, &[0; 64], &[], true));
    assert_eq!(jit.compile_count(), 2, "the optimized code was not reused");
    assert!(outs.iter().all(|o| *o == outs[0]));
    assert_eq!(&outs[0].memory[28..32], &21u32.to_le_bytes());

    let large = Dispatch::new([8, 1, 1], [8, 1, 1]);
    let direct = Jit::new(JitConfig {
        optimize_after_lanes: 64,
        ..config(0)
    });
    let out = run_on(&direct, &kernel(5), &large, &[0; 64], &[], true);
    assert_eq!(direct.compile_count(), 1);
    let c = direct.compile_at(&kernel(5), 64, Tier::Optimized).ok();
    assert_eq!(c.map(|c| c.tier()), Some(Tier::Optimized));
    assert_eq!(
        direct.compile_count(),
        1,
        "the large dispatch compiled baseline"
    );
    assert_eq!(&out.memory[28..32], &35u32.to_le_bytes());
    // `compile_for` picks what `run` would: optimized for the large dispatch,
    // baseline for the small one.
    let fresh = Jit::new(JitConfig {
        optimize_after_lanes: 64,
        ..config(0)
    });
    let tier_of = |d: &Dispatch| fresh.compile_for(&kernel(7), d).map(|c| c.tier()).ok();
    assert_eq!(tier_of(&small), Some(Tier::Baseline));
    assert_eq!(tier_of(&large), Some(Tier::Optimized));
    run_on(&fresh, &kernel(7), &large, &[0; 64], &[], true);
    assert_eq!(
        fresh.compile_count(),
        2,
        "run compiled again after compile_for"
    );
}

#[test]
fn a_batch_holds_whole_workgroups_within_the_memory_bound() {
    let jit = Jit::new(JitConfig {
        batch_lanes: 512,
        ..config(0)
    });
    let mut k = kernel(3);
    let d = Dispatch::new([64, 1, 1], [32, 1, 1]);
    // Sixteen workgroups of 32 lanes when memory does not limit them.
    assert_eq!(jit.batch_lanes_for(&k, &d), 512);
    // 1 MiB of shared memory each: 256 of them would fit, 16 are asked for.
    k.shared_size = 1 << 20;
    assert_eq!(jit.batch_lanes_for(&k, &d), 512);
    // 64 KiB of private memory per lane: 2 MiB + 1 MiB per workgroup, so
    // 85 would fit in 256 MiB; still 16.
    k.private_size = 64 << 10;
    assert_eq!(jit.batch_lanes_for(&k, &d), 512);
    // 1 MiB per lane: 33 MiB per workgroup, 7 of them fit.
    k.private_size = 1 << 20;
    assert_eq!(jit.batch_lanes_for(&k, &d), 7 * 32);
    // A workgroup over the bound by itself still runs, alone.
    let wide = Dispatch::new([2, 1, 1], [512, 1, 1]);
    assert_eq!(jit.batch_lanes_for(&k, &wide), 512);
    // A workgroup wider than the batch width is one batch.
    let wider = Dispatch::new([2, 1, 1], [1024, 1, 1]);
    k.private_size = 0;
    assert_eq!(jit.batch_lanes_for(&k, &wider), 1024);
}

/// out[group * size + local] = group << 8 | local, from the builtins packing
/// recomputes.
fn ids_kernel() -> Kernel {
    let mut kern = Kernel::new("ids");
    let entry = kern.add_block();
    let mut b = Builder::new(&mut kern, entry);
    let local = b.ins(InstKind::Builtin(Builtin::LocalIndex), &[]);
    let group = b.ins(InstKind::Builtin(Builtin::WorkgroupId(0)), &[]);
    let size = b.ins(InstKind::Builtin(Builtin::WorkgroupSize(0)), &[]);
    let eight = b.iconst(Type::I32, 8);
    let hi = b.ins(InstKind::IBinary(IBinOp::Shl), &[group, eight]);
    let v = b.ins(InstKind::IBinary(IBinOp::Or), &[hi, local]);
    let base = b.ins(InstKind::IBinary(IBinOp::Mul), &[group, size]);
    let gid = b.ins(InstKind::IBinary(IBinOp::Add), &[base, local]);
    let g64 = b.ins(
        InstKind::Cast {
            op: CastOp::Zext,
            to: Type::I64,
        },
        &[gid],
    );
    let four = b.iconst(Type::I64, 4);
    let off = b.ins(InstKind::IBinary(IBinOp::Mul), &[g64, four]);
    let buf = b.iconst(Type::I64, BUF);
    let addr = b.ins(InstKind::IBinary(IBinOp::Add), &[buf, off]);
    b.ins(
        InstKind::Store(MemAccess::scalar(AddrSpace::Global, Type::I32)),
        &[addr, v],
    );
    b.exit();
    kern
}

/// Sixteen workgroups of two lanes run as one packed workgroup of 32 lanes:
/// the same bytes as unpacked, a fault naming the original lane, and no
/// packing where the configured batch is narrower than the pack.
#[test]
fn packed_workgroups_keep_ids_and_faults() {
    let k = ids_kernel();
    let d = Dispatch::new([16, 1, 1], [2, 1, 1]);
    let packing = |batch_lanes| {
        Jit::new(JitConfig {
            batch_lanes,
            pack_workgroups: true,
            ..config(0)
        })
    };
    let jit = packing(64);
    let out = run_on(&jit, &k, &d, &[0; 128], &[], true);
    assert_eq!(jit.packed_dispatches(), 1);
    assert_eq!(out.fault, None);
    let word = |i: usize| u32::from_le_bytes(out.memory[4 * i..4 * i + 4].try_into().unwrap());
    assert_eq!(word(0), 0);
    assert_eq!(word(1), 1);
    assert_eq!(word(2), 0x100);
    assert_eq!(word(31), 0xf01);
    assert_eq!(out, run_on(&Interpreter, &k, &d, &[0; 128], &[], true));

    // 40 bytes: lane 10 (workgroup 5, local 0) is the first out of range.
    let faulted = run_on(&jit, &k, &d, &[0; 40], &[], true);
    let want = run_on(&Interpreter, &k, &d, &[0; 40], &[], true);
    let lane = faulted
        .fault
        .as_ref()
        .map(|f| (f.lane.workgroup, f.lane.local));
    assert_eq!(lane, Some(([5, 0, 0], [0, 0, 0])));
    assert_eq!(faulted.fault, want.fault);
    assert_eq!(jit.packed_dispatches(), 2);

    let narrow = packing(16);
    assert_eq!(run_on(&narrow, &k, &d, &[0; 128], &[], true), out);
    assert_eq!(narrow.packed_dispatches(), 0);
}

/// out[gid] = the loop's sum after `trips` iterations of acc = acc * 3 + i,
/// with a read of ro[gid] before the loop (a fault past the ro buffer).
fn loop_kernel(trips: u32) -> Kernel {
    let text = format!(
        "kernel @loop shared 0 private 0 {{
block0:
  v0 = local_index
  v1 = workgroup_id.x
  v2 = const.i32 16
  v3 = imul.i32 v1, v2
  v4 = iadd.i32 v3, v0
  v5 = zext.i32.i64 v4
  v6 = const.i64 2
  v7 = shl.i64 v5, v6
  v8 = const.i64 {RO}
  v9 = iadd.i64 v8, v7
  v10 = load.global.i32 v9
  v11 = const.i32 0
  jump block1(v10, v11)
block1(v12: i32, v13: i32):
  v14 = const.i32 3
  v15 = imul.i32 v12, v14
  v16 = iadd.i32 v15, v13
  v17 = const.i32 1
  v18 = iadd.i32 v13, v17
  v19 = const.i32 {trips}
  v20 = icmp.ult.i32 v18, v19
  br v20, block1(v16, v18), block2
block2:
  v21 = const.i64 {BUF}
  v22 = iadd.i64 v21, v7
  store.global.i32 v22, v16
  exit
}}
"
    );
    match wavejit_ir::text::parse(&text) {
        Ok(k) => k,
        Err(e) => panic!("{e}"),
    }
}

/// A tiered dispatch too small for the optimized tier by its lane count
/// moves there after its first batch when its loops make it long enough,
/// with the interpreter's bits and faults; a short loop stays at baseline.
#[test]
fn looping_dispatches_tier_up_after_their_first_batch() {
    let tiered = || {
        Jit::new(JitConfig {
            core: wavejit_jit::Core::Tiered,
            batch_lanes: 16,
            optimize_after_lanes: 400,
            ..config(0)
        })
    };
    let d = Dispatch::new([4, 1, 1], [16, 1, 1]);
    let ro: Vec<u8> = (0..64u32).flat_map(|i| (i * 7).to_le_bytes()).collect();
    // 16 lanes x 100 steps in the first batch project to 6,400 steps over
    // four batches, past the 4 x 400 per block (three blocks) asked for.
    let long = loop_kernel(100);
    let jit = tiered();
    let out = run_on(&jit, &long, &d, &[0; 256], &ro, true);
    assert_eq!(out, run_on(&Interpreter, &long, &d, &[0; 256], &ro, true));
    let word = |i: usize| u32::from_le_bytes(out.memory[4 * i..4 * i + 4].try_into().unwrap());
    let want = |gid: u32| (0..100u32).fold(gid * 7, |acc, i| acc.wrapping_mul(3).wrapping_add(i));
    assert_eq!((word(0), word(63)), (want(0), want(63)));
    assert_eq!(jit.compile_count(), 2);
    let c = jit.compile(&long, 16).map(|c| c.tier()).ok();
    assert_eq!(c, Some(Tier::Optimized));

    // A fault in the third batch (ro ends at lane 40) is the interpreter's.
    let jit = tiered();
    let faulted = run_on(&jit, &long, &d, &[0; 256], &ro[..160], true);
    let lane = faulted
        .fault
        .as_ref()
        .map(|f| (f.lane.workgroup, f.lane.local));
    assert_eq!(lane, Some(([2, 0, 0], [8, 0, 0])));
    let interp = run_on(&Interpreter, &long, &d, &[0; 256], &ro[..160], true);
    assert_eq!(faulted.fault, interp.fault);
    assert_eq!(jit.compile_count(), 2);

    // Two iterations: 16 x 2 x 4 steps stay below; nothing more compiles.
    let short = loop_kernel(2);
    let jit = tiered();
    let out = run_on(&jit, &short, &d, &[0; 256], &ro, true);
    assert_eq!(out, run_on(&Interpreter, &short, &d, &[0; 256], &ro, true));
    assert_eq!(jit.compile_count(), 1);
}
