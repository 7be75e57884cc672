//! Rough timing of the JIT against the interpreter on a float loop (not a
//! benchmark suite; run with `--release -- --ignored --nocapture`).

mod support;

use std::time::Instant;

use support::{BUF, TestMemory};
use wavejit_ir::interp::Interpreter;
use wavejit_ir::{
    AddrSpace, BlockCall, Builder, Builtin, CastOp, Dispatch, Engine, FBinOp, FloatMode, IBinOp,
    InstKind, IntCC, Kernel, MemAccess, Type,
};
use wavejit_jit::{Jit, JitConfig};

/// out[gid] = iterate x = x * 0.999 + 0.5 for `iters` steps.
fn kernel(iters: u32) -> Kernel {
    let mut k = Kernel::new("floatloop");
    let entry = k.add_block();
    let head = k.add_block();
    let body = k.add_block();
    let done = k.add_block();
    let i = k.add_block_param(head, Type::I32);
    let x = k.add_block_param(head, Type::F32);
    let mut b = Builder::new(&mut k, entry);
    let wg = b.ins(InstKind::Builtin(Builtin::WorkgroupId(0)), &[]);
    let size = b.ins(InstKind::Builtin(Builtin::WorkgroupSize(0)), &[]);
    let local = b.ins(InstKind::Builtin(Builtin::LocalId(0)), &[]);
    let base = b.ins(InstKind::IBinary(IBinOp::Mul), &[wg, size]);
    let gid = b.ins(InstKind::IBinary(IBinOp::Add), &[base, local]);
    let zero = b.iconst(Type::I32, 0);
    let x0 = b.ins(
        InstKind::IToF {
            to: wavejit_ir::FloatFormat::F32,
            signed: false,
            mode: FloatMode::IEEE,
        },
        &[gid],
    );
    b.jump(head, &[zero, x0]);
    b.switch_to(head);
    let n = b.iconst(Type::I32, u64::from(iters));
    let more = b.ins(InstKind::Icmp(IntCC::Ult), &[i, n]);
    b.branch(more, BlockCall::new(body, &[]), BlockCall::new(done, &[]));
    b.switch_to(body);
    let k1 = b.f32const(0.999);
    let k2 = b.f32const(0.5);
    let fb = |op| InstKind::FBinary {
        op,
        mode: FloatMode::IEEE,
    };
    let m = b.ins(fb(FBinOp::Mul), &[x, k1]);
    let a = b.ins(fb(FBinOp::Add), &[m, k2]);
    let one = b.iconst(Type::I32, 1);
    let i1 = b.ins(InstKind::IBinary(IBinOp::Add), &[i, one]);
    b.jump(head, &[i1, a]);
    b.switch_to(done);
    let g64 = b.ins(
        InstKind::Cast {
            op: CastOp::Zext,
            to: Type::I64,
        },
        &[gid],
    );
    let four = b.iconst(Type::I64, 4);
    let off = b.ins(InstKind::IBinary(IBinOp::Mul), &[g64, four]);
    let bufc = b.iconst(Type::I64, BUF);
    let addr = b.ins(InstKind::IBinary(IBinOp::Add), &[bufc, off]);
    b.ins(
        InstKind::Store(MemAccess::scalar(AddrSpace::Global, Type::F32)),
        &[addr, x],
    );
    b.exit();
    k
}

#[test]
#[ignore]
fn float_loop_timing() {
    let iters = 200;
    let k = kernel(iters);
    let d = Dispatch::new([64, 1, 1], [256, 1, 1]);
    let lanes = 64 * 256u64;
    let ops = lanes * u64::from(iters) * 5;
    let time = |e: &dyn Engine, name: &str| {
        let mem = TestMemory::new(&vec![0; lanes as usize * 4], &[], true);
        let t = Instant::now();
        let r = e.run(&k, &d, &mem);
        let s = t.elapsed().as_secs_f64();
        eprintln!(
            "{name}: {:.1} ms, {:.0} M lane-ops/s ({r:?})",
            s * 1e3,
            ops as f64 / s / 1e6
        );
        mem.rw_bytes()
    };
    let want = time(&Interpreter, "interp");
    for threads in [1, 2] {
        let jit = Jit::new(JitConfig {
            threads,
            ..JitConfig::default()
        });
        let first = time(&jit, &format!("jit {threads}t (with compile)"));
        let again = time(&jit, &format!("jit {threads}t (cached)"));
        assert_eq!(first, want);
        assert_eq!(again, want);
    }
}
