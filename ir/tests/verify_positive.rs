//! Representative well-formed kernels must verify, and the dominator analysis
//! must give the expected trees.

use wavejit_ir::analysis::{Cfg, DomTree};
use wavejit_ir::verify::{verify, verify_all};
use wavejit_ir::*;

fn global_store_i32(b: &mut Builder, addr: Value, v: Value) {
    b.ins(
        InstKind::Store(MemAccess::scalar(AddrSpace::Global, Type::I32)),
        &[addr, v],
    );
}

/// out[local_id.x] = local_id.x + 1
#[test]
fn straight_line_kernel_verifies() {
    let mut k = Kernel::new("straight");
    let entry = k.add_block();
    let mut b = Builder::new(&mut k, entry);
    let x = b.ins(InstKind::Builtin(Builtin::LocalId(0)), &[]);
    let one = b.iconst(Type::I32, 1);
    let y = b.ins(InstKind::IBinary(IBinOp::Add), &[x, one]);
    let wide = b.ins(
        InstKind::Cast {
            op: CastOp::Zext,
            to: Type::I64,
        },
        &[x],
    );
    let base = b.iconst(Type::I64, 0x1000);
    let addr = b.ins(InstKind::IBinary(IBinOp::Add), &[base, wide]);
    global_store_i32(&mut b, addr, y);
    b.exit();
    assert_eq!(verify(&k), Ok(()));
    assert!(verify_all(&k).is_empty());
}

/// if (x < 4) a = x * 2 else a = x + 7; join(a)
fn diamond() -> (Kernel, [Block; 4]) {
    let mut k = Kernel::new("diamond");
    let entry = k.add_block();
    let then = k.add_block();
    let other = k.add_block();
    let join = k.add_block();
    let a = k.add_block_param(join, Type::I32);
    let mut b = Builder::new(&mut k, entry);
    let x = b.ins(InstKind::Builtin(Builtin::LocalIndex), &[]);
    let four = b.iconst(Type::I32, 4);
    let c = b.ins(InstKind::Icmp(IntCC::Ult), &[x, four]);
    b.branch(c, BlockCall::new(then, &[]), BlockCall::new(other, &[]));
    b.switch_to(then);
    let two = b.iconst(Type::I32, 2);
    let t = b.ins(InstKind::IBinary(IBinOp::Mul), &[x, two]);
    b.jump(join, &[t]);
    b.switch_to(other);
    let seven = b.iconst(Type::I32, 7);
    let o = b.ins(InstKind::IBinary(IBinOp::Add), &[x, seven]);
    b.jump(join, &[o]);
    b.switch_to(join);
    let base = b.iconst(Type::I64, 0x2000);
    global_store_i32(&mut b, base, a);
    // x from the entry dominates the join too.
    global_store_i32(&mut b, base, x);
    b.exit();
    (k, [entry, then, other, join])
}

#[test]
fn diamond_verifies_and_join_is_dominated_by_entry_only() {
    let (k, [entry, then, other, join]) = diamond();
    assert_eq!(verify(&k), Ok(()));
    let dom = DomTree::compute(&k);
    assert_eq!(dom.idom(entry), None);
    assert_eq!(dom.idom(then), Some(entry));
    assert_eq!(dom.idom(other), Some(entry));
    assert_eq!(dom.idom(join), Some(entry));
    assert!(!dom.dominates(then, join));
    assert!(!dom.dominates(other, join));
    assert!(dom.dominates(entry, join));
    let cfg = Cfg::compute(&k);
    assert_eq!(cfg.succs(entry), &[then, other]);
    assert_eq!(cfg.preds(join), &[then, other]);
}

/// for (i = 0; i < n; i++) sum += i; store sum
#[test]
fn counted_loop_verifies() {
    let mut k = Kernel::new("loop");
    let entry = k.add_block();
    let header = k.add_block();
    let body = k.add_block();
    let exit = k.add_block();
    let i = k.add_block_param(header, Type::I32);
    let sum = k.add_block_param(header, Type::I32);
    let mut b = Builder::new(&mut k, entry);
    let n = b.ins(InstKind::Builtin(Builtin::WorkgroupSize(0)), &[]);
    let zero = b.iconst(Type::I32, 0);
    b.jump(header, &[zero, zero]);
    b.switch_to(header);
    let c = b.ins(InstKind::Icmp(IntCC::Slt), &[i, n]);
    b.branch(c, BlockCall::new(body, &[]), BlockCall::new(exit, &[]));
    b.switch_to(body);
    let sum2 = b.ins(InstKind::IBinary(IBinOp::Add), &[sum, i]);
    let one = b.iconst(Type::I32, 1);
    let i2 = b.ins(InstKind::IBinary(IBinOp::Add), &[i, one]);
    b.jump(header, &[i2, sum2]);
    b.switch_to(exit);
    let addr = b.iconst(Type::I64, 0x40);
    // The header's parameter dominates the exit.
    global_store_i32(&mut b, addr, sum);
    b.exit();
    assert_eq!(verify(&k), Ok(()));
    let dom = DomTree::compute(&k);
    assert_eq!(dom.rpo().first(), Some(&entry));
    assert_eq!(dom.idom(body), Some(header));
    assert_eq!(dom.idom(exit), Some(header));
    assert!(dom.dominates(header, body));
    assert!(!dom.dominates(body, header));
}

/// Outer loop over j with an inner loop over i; values of the outer header and
/// the outer body are used in the inner loop, after it, and in the outer latch.
fn nested_loops() -> (Kernel, [Block; 7]) {
    let mut k = Kernel::new("nested");
    let entry = k.add_block();
    let outer = k.add_block();
    let outer_body = k.add_block();
    let inner = k.add_block();
    let inner_body = k.add_block();
    let latch = k.add_block();
    let done = k.add_block();
    let j = k.add_block_param(outer, Type::I32);
    let acc = k.add_block_param(outer, Type::I32);
    let i = k.add_block_param(inner, Type::I32);
    let iacc = k.add_block_param(inner, Type::I32);

    let mut b = Builder::new(&mut k, entry);
    let n = b.iconst(Type::I32, 3);
    let zero = b.iconst(Type::I32, 0);
    b.jump(outer, &[zero, zero]);

    b.switch_to(outer);
    let more = b.ins(InstKind::Icmp(IntCC::Ult), &[j, n]);
    b.branch(
        more,
        BlockCall::new(outer_body, &[]),
        BlockCall::new(done, &[]),
    );

    b.switch_to(outer_body);
    let scale = b.ins(InstKind::IBinary(IBinOp::Mul), &[j, n]);
    b.jump(inner, &[zero, acc]);

    b.switch_to(inner);
    let more_i = b.ins(InstKind::Icmp(IntCC::Ult), &[i, n]);
    b.branch(
        more_i,
        BlockCall::new(inner_body, &[]),
        BlockCall::new(latch, &[]),
    );

    b.switch_to(inner_body);
    // Uses j (outer header) and scale (outer body) across the inner back-edge.
    let t = b.ins(InstKind::IBinary(IBinOp::Add), &[scale, i]);
    let t2 = b.ins(InstKind::IBinary(IBinOp::Xor), &[t, j]);
    let iacc2 = b.ins(InstKind::IBinary(IBinOp::Add), &[iacc, t2]);
    let one = b.iconst(Type::I32, 1);
    let i2 = b.ins(InstKind::IBinary(IBinOp::Add), &[i, one]);
    b.jump(inner, &[i2, iacc2]);

    b.switch_to(latch);
    // Uses the inner header's parameter after the inner loop, and scale.
    let acc2 = b.ins(InstKind::IBinary(IBinOp::Add), &[iacc, scale]);
    let one_j = b.iconst(Type::I32, 1);
    let j2 = b.ins(InstKind::IBinary(IBinOp::Add), &[j, one_j]);
    b.jump(outer, &[j2, acc2]);

    b.switch_to(done);
    let addr = b.iconst(Type::I64, 0x80);
    global_store_i32(&mut b, addr, acc);
    b.exit();
    (
        k,
        [entry, outer, outer_body, inner, inner_body, latch, done],
    )
}

#[test]
fn nested_loops_verify_with_dominance_across_back_edges() {
    let (k, [entry, outer, outer_body, inner, inner_body, latch, done]) = nested_loops();
    assert_eq!(verify(&k), Ok(()));
    let dom = DomTree::compute(&k);
    assert_eq!(dom.idom(outer), Some(entry));
    assert_eq!(dom.idom(outer_body), Some(outer));
    assert_eq!(dom.idom(inner), Some(outer_body));
    assert_eq!(dom.idom(inner_body), Some(inner));
    assert_eq!(dom.idom(latch), Some(inner));
    assert_eq!(dom.idom(done), Some(outer));
    assert!(dom.dominates(outer, latch));
    assert!(dom.dominates(outer_body, inner_body));
    assert!(!dom.dominates(inner_body, latch));
    assert!(!dom.dominates(latch, outer));
    assert_eq!(dom.rpo().len(), 7);
}

#[test]
fn table_jump_with_block_arguments_verifies() {
    let mut k = Kernel::new("table");
    let entry = k.add_block();
    let a = k.add_block();
    let c = k.add_block();
    let join = k.add_block();
    let p = k.add_block_param(a, Type::I64);
    let q = k.add_block_param(join, Type::I64);
    let mut b = Builder::new(&mut k, entry);
    let idx = b.ins(InstKind::Builtin(Builtin::LaneId), &[]);
    let v = b.iconst(Type::I64, 9);
    b.kernel.set_terminator(
        entry,
        Terminator::Table {
            index: idx,
            targets: vec![BlockCall::new(a, &[v]), BlockCall::new(c, &[])],
            default: BlockCall::new(join, &[v]),
        },
    );
    b.switch_to(a);
    b.jump(join, &[p]);
    b.switch_to(c);
    b.jump(join, &[v]);
    b.switch_to(join);
    global_store_i32(&mut b, q, idx);
    b.exit();
    assert_eq!(verify(&k), Ok(()));
    let dom = DomTree::compute(&k);
    assert_eq!(dom.idom(join), Some(entry));
}

/// Unreachable blocks are verified but exempt from dominance; barriers may sit
/// in divergent code; a jump back to the entry block is allowed.
#[test]
fn unreachable_blocks_barriers_and_entry_loops_verify() {
    let mut k = Kernel::new("odd");
    k.shared_size = 64;
    let entry = k.add_block();
    let divergent = k.add_block();
    let dead = k.add_block();
    let mut b = Builder::new(&mut k, entry);
    let x = b.ins(InstKind::Builtin(Builtin::LocalIndex), &[]);
    let zero = b.iconst(Type::I32, 0);
    let c = b.ins(InstKind::Icmp(IntCC::Eq), &[x, zero]);
    b.branch(
        c,
        BlockCall::new(divergent, &[]),
        BlockCall::new(entry, &[]),
    );
    b.switch_to(divergent);
    b.ins(InstKind::Barrier, &[]);
    b.ins(
        InstKind::Store(MemAccess::scalar(AddrSpace::Shared, Type::I32)),
        &[zero, x],
    );
    b.exit();
    b.switch_to(dead);
    // Uses x from the entry, which does not dominate an unreachable block.
    let y = b.ins(InstKind::IBinary(IBinOp::Add), &[x, x]);
    b.jump(dead, &[]);
    let _ = y;
    assert_eq!(verify(&k), Ok(()));
    let dom = DomTree::compute(&k);
    assert!(!dom.is_reachable(dead));
    assert_eq!(dom.idom(dead), None);
    assert!(!dom.dominates(entry, dead));
    assert!(dom.dominates(dead, dead));
    assert_eq!(dom.rpo(), &[entry, divergent]);
}

#[test]
fn float_modes_with_valid_canonical_nans_and_flags_verify() {
    let mut k = Kernel::new("floats");
    k.private_size = 16;
    let entry = k.add_block();
    let mut b = Builder::new(&mut k, entry);
    let x = b.f32const(1.5);
    let mode = |bits| FloatMode {
        nan: NanMode::Canonical(bits),
        flags: true,
        ..FloatMode::IEEE
    };
    let r = b.inst(
        InstKind::FBinary {
            op: FBinOp::Add,
            mode: mode(0x7fc0_0000),
        },
        &[x, x],
    );
    assert_eq!(r.len(), 2);
    let h = b.ins(
        InstKind::Fcvt {
            from: FloatFormat::F32,
            to: FloatFormat::F16,
            mode: mode(0x7e00),
        },
        &[x],
    );
    let bf = b.ins(
        InstKind::Fcvt {
            from: FloatFormat::F16,
            to: FloatFormat::Bf16,
            mode: mode(0xffc1),
        },
        &[h],
    );
    let e4 = b.ins(
        InstKind::Fcvt {
            from: FloatFormat::Bf16,
            to: FloatFormat::E4m3,
            mode: mode(0xff),
        },
        &[bf],
    );
    b.ins(
        InstKind::Fcvt {
            from: FloatFormat::E4m3,
            to: FloatFormat::E5m2,
            mode: mode(0x7d),
        },
        &[e4],
    );
    let d = b.ins(
        InstKind::Fcvt {
            from: FloatFormat::F32,
            to: FloatFormat::F64,
            mode: mode(0x7ff8_0000_0000_0001),
        },
        &[x],
    );
    b.ins(
        InstKind::Fcmp {
            cc: FloatCC::Lt,
            mode: FloatMode {
                flags: true,
                ..FloatMode::IEEE
            },
        },
        &[d, d],
    );
    b.ins(
        InstKind::Fclass {
            mode: FloatMode::IEEE,
        },
        &[x],
    );
    let off = b.iconst(Type::I32, 4);
    b.ins(
        InstKind::Store(MemAccess::scalar(AddrSpace::Private, Type::F32)),
        &[off, r[0]],
    );
    b.exit();
    assert_eq!(verify(&k), Ok(()));
}

/// A long chain of blocks: the verifier must stay fast and not recurse.
#[test]
fn long_block_chain_verifies() {
    let mut k = Kernel::new("chain");
    let blocks: Vec<Block> = (0..20_000).map(|_| k.add_block()).collect();
    let mut b = Builder::new(&mut k, blocks[0]);
    let mut v = b.iconst(Type::I32, 0);
    let first = v;
    for w in blocks.windows(2) {
        b.switch_to(w[0]);
        v = b.ins(InstKind::IBinary(IBinOp::Add), &[v, first]);
        b.jump(w[1], &[]);
    }
    b.switch_to(blocks[blocks.len() - 1]);
    b.exit();
    assert_eq!(verify(&k), Ok(()));
    let dom = DomTree::compute(&k);
    assert_eq!(dom.idom(blocks[19_999]), Some(blocks[19_998]));
    assert!(dom.dominates(blocks[1], blocks[19_999]));
}
