//! Hand-written kernels run on the interpreter and the JIT (several batch widths
//! and thread counts); results must match bit for bit and hold the expected values.

mod support;

use support::{BUF, compare, u32s};
use wavejit_ir::{
    AddrSpace, Block, BlockCall, Builder, Builtin, CastOp, Dispatch, FaultKind, IBinOp, IUnOp,
    InstKind, IntCC, Kernel, MemAccess, Type, Value,
};

/// Global linear lane id (x only) as i32, and its i64 byte address `BUF + id * scale`.
fn lane_addr(b: &mut Builder, scale: u64) -> (Value, Value) {
    let wg = b.ins(InstKind::Builtin(Builtin::WorkgroupId(0)), &[]);
    let size = b.ins(InstKind::Builtin(Builtin::WorkgroupSize(0)), &[]);
    let local = b.ins(InstKind::Builtin(Builtin::LocalId(0)), &[]);
    let base = b.ins(InstKind::IBinary(IBinOp::Mul), &[wg, size]);
    let id = b.ins(InstKind::IBinary(IBinOp::Add), &[base, local]);
    let id64 = b.ins(
        InstKind::Cast {
            op: CastOp::Zext,
            to: Type::I64,
        },
        &[id],
    );
    let s = b.iconst(Type::I64, scale);
    let off = b.ins(InstKind::IBinary(IBinOp::Mul), &[id64, s]);
    let bufc = b.iconst(Type::I64, BUF);
    let addr = b.ins(InstKind::IBinary(IBinOp::Add), &[bufc, off]);
    (id, addr)
}

fn store(b: &mut Builder, space: AddrSpace, ty: Type, addr: Value, v: Value) {
    b.ins(InstKind::Store(MemAccess::scalar(space, ty)), &[addr, v]);
}

#[test]
fn straight_line_store() {
    let mut k = Kernel::new("store");
    let entry = k.add_block();
    let mut b = Builder::new(&mut k, entry);
    let (id, addr) = lane_addr(&mut b, 4);
    let three = b.iconst(Type::I32, 3);
    let one = b.iconst(Type::I32, 1);
    let m = b.ins(InstKind::IBinary(IBinOp::Mul), &[id, three]);
    let v = b.ins(InstKind::IBinary(IBinOp::Add), &[m, one]);
    store(&mut b, AddrSpace::Global, Type::I32, addr, v);
    b.exit();
    let d = Dispatch::new([4, 1, 1], [8, 1, 1]);
    let out = compare(&k, &d, &[0; 160], &[]);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    for (i, &v) in got.iter().take(32).enumerate() {
        assert_eq!(v, i as u32 * 3 + 1);
    }
    assert_eq!(got[32], 0);
}

/// Every integer binary/unary op on every width, from lane-dependent operands.
#[test]
fn integer_ops_all_widths() {
    let bin = IBinOp::ALL;
    let un = IUnOp::ALL;
    let types = [Type::I8, Type::I16, Type::I32, Type::I64];
    let mut k = Kernel::new("intops");
    let entry = k.add_block();
    let mut b = Builder::new(&mut k, entry);
    let (id, addr) = lane_addr(&mut b, 8 * 256);
    // Operands: a mix of extremes picked by lane id bits.
    let id64 = b.ins(
        InstKind::Cast {
            op: CastOp::Zext,
            to: Type::I64,
        },
        &[id],
    );
    let k1 = b.iconst(Type::I64, 0x9E37_79B9_7F4A_7C15);
    let h = b.ins(InstKind::IBinary(IBinOp::Mul), &[id64, k1]);
    let c29 = b.iconst(Type::I64, 29);
    let h2 = b.ins(InstKind::IBinary(IBinOp::Rotl), &[h, c29]);
    let mut slot = 0u64;
    for ty in types {
        let a = if ty == Type::I64 {
            h
        } else {
            b.ins(
                InstKind::Cast {
                    op: CastOp::Trunc,
                    to: ty,
                },
                &[h],
            )
        };
        let bb = if ty == Type::I64 {
            h2
        } else {
            b.ins(
                InstKind::Cast {
                    op: CastOp::Trunc,
                    to: ty,
                },
                &[h2],
            )
        };
        // Make some divisors zero / -1 and some dividends MIN.
        let small = b.iconst(ty, 3);
        let bsm = b.ins(InstKind::IBinary(IBinOp::And), &[bb, small]);
        let one = b.iconst(ty, 1);
        let bneg = b.ins(InstKind::IBinary(IBinOp::Sub), &[bsm, one]);
        for &op in bin {
            for (x, y) in [(a, bb), (a, bneg)] {
                let r = b.ins(InstKind::IBinary(op), &[x, y]);
                let r64 = if ty == Type::I64 {
                    r
                } else {
                    b.ins(
                        InstKind::Cast {
                            op: CastOp::Zext,
                            to: Type::I64,
                        },
                        &[r],
                    )
                };
                let o = b.iconst(Type::I64, slot * 8);
                let p = b.ins(InstKind::IBinary(IBinOp::Add), &[addr, o]);
                store(&mut b, AddrSpace::Global, Type::I64, p, r64);
                slot += 1;
            }
        }
        for &op in un {
            let r = b.ins(InstKind::IUnary(op), &[a]);
            let r64 = if ty == Type::I64 {
                r
            } else {
                b.ins(
                    InstKind::Cast {
                        op: CastOp::Sext,
                        to: Type::I64,
                    },
                    &[r],
                )
            };
            let o = b.iconst(Type::I64, slot * 8);
            let p = b.ins(InstKind::IBinary(IBinOp::Add), &[addr, o]);
            store(&mut b, AddrSpace::Global, Type::I64, p, r64);
            slot += 1;
        }
        for cc in [IntCC::Eq, IntCC::Ult, IntCC::Sle, IntCC::Sgt, IntCC::Uge] {
            let c = b.ins(InstKind::Icmp(cc), &[a, bneg]);
            let s = b.ins(InstKind::Select, &[c, a, bb]);
            let r64 = if ty == Type::I64 {
                s
            } else {
                b.ins(
                    InstKind::Cast {
                        op: CastOp::Zext,
                        to: Type::I64,
                    },
                    &[s],
                )
            };
            let o = b.iconst(Type::I64, slot * 8);
            let p = b.ins(InstKind::IBinary(IBinOp::Add), &[addr, o]);
            store(&mut b, AddrSpace::Global, Type::I64, p, r64);
            slot += 1;
        }
    }
    assert!(slot <= 256, "{slot} slots");
    b.exit();
    let d = Dispatch::new([2, 1, 1], [16, 1, 1]);
    let out = compare(&k, &d, &vec![0; 32 * 256 * 8], &[]);
    assert_eq!(out.fault, None);
    // Spot-check a few values computed by hand: lane 0 has h = 0, so Add(0,0)=0 and
    // DivU(0, 0 - 1) on i8 = 0; and lane 1's i8 Add is (h + h2) as u8.
    assert!(out.memory.iter().any(|&x| x != 0));
}

/// Per-lane trip counts, divergent if/else, and a loop-carried block parameter.
#[test]
fn divergent_loop() {
    let mut k = Kernel::new("loop");
    let entry = k.add_block();
    let head = k.add_block();
    let body_odd = k.add_block();
    let body_even = k.add_block();
    let latch = k.add_block();
    let done = k.add_block();
    let i = k.add_block_param(head, Type::I32);
    let acc = k.add_block_param(head, Type::I32);
    let acc2 = k.add_block_param(latch, Type::I32);
    let mut b = Builder::new(&mut k, entry);
    let (id, addr) = lane_addr(&mut b, 4);
    let zero = b.iconst(Type::I32, 0);
    b.jump(head, &[zero, zero]);
    b.switch_to(head);
    let seven = b.iconst(Type::I32, 7);
    let n = b.ins(InstKind::IBinary(IBinOp::And), &[id, seven]);
    let more = b.ins(InstKind::Icmp(IntCC::Ult), &[i, n]);
    b.branch(
        more,
        BlockCall::new(body_odd, &[]),
        BlockCall::new(done, &[]),
    );
    b.switch_to(body_odd);
    let one = b.iconst(Type::I32, 1);
    let bit = b.ins(InstKind::IBinary(IBinOp::And), &[i, one]);
    let odd = b.ins(InstKind::Icmp(IntCC::Ne), &[bit, zero]);
    let x = b.ins(InstKind::IBinary(IBinOp::Add), &[acc, i]);
    b.branch(
        odd,
        BlockCall::new(latch, &[x]),
        BlockCall::new(body_even, &[]),
    );
    b.switch_to(body_even);
    let c10 = b.iconst(Type::I32, 10);
    let y = b.ins(InstKind::IBinary(IBinOp::Mul), &[acc, c10]);
    b.jump(latch, &[y]);
    b.switch_to(latch);
    let i1 = b.ins(InstKind::IBinary(IBinOp::Add), &[i, one]);
    b.jump(head, &[i1, acc2]);
    b.switch_to(done);
    store(&mut b, AddrSpace::Global, Type::I32, addr, acc);
    b.exit();
    let d = Dispatch::new([3, 1, 1], [16, 1, 1]);
    let out = compare(&k, &d, &[0; 48 * 4], &[]);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    for lane in 0..48u32 {
        let mut acc = 0u32;
        for i in 0..(lane & 7) {
            acc = if i & 1 == 1 { acc + i } else { acc * 10 };
        }
        assert_eq!(got[lane as usize], acc, "lane {lane}");
    }
}

/// Shared memory reversed through a barrier inside a loop.
#[test]
fn barrier_in_loop_reverses_shared() {
    let mut k = Kernel::new("reverse");
    k.shared_size = 64 * 4;
    let entry = k.add_block();
    let head = k.add_block();
    let body = k.add_block();
    let done = k.add_block();
    let it = k.add_block_param(head, Type::I32);
    let val = k.add_block_param(head, Type::I32);
    let mut b = Builder::new(&mut k, entry);
    let (id, addr) = lane_addr(&mut b, 4);
    let local = b.ins(InstKind::Builtin(Builtin::LocalIndex), &[]);
    let zero = b.iconst(Type::I32, 0);
    b.jump(head, &[zero, id]);
    b.switch_to(head);
    let three = b.iconst(Type::I32, 3);
    let more = b.ins(InstKind::Icmp(IntCC::Ult), &[it, three]);
    b.branch(more, BlockCall::new(body, &[]), BlockCall::new(done, &[]));
    b.switch_to(body);
    let four = b.iconst(Type::I32, 4);
    let off = b.ins(InstKind::IBinary(IBinOp::Mul), &[local, four]);
    store(&mut b, AddrSpace::Shared, Type::I32, off, val);
    b.ins(InstKind::Barrier, &[]);
    let size = b.ins(InstKind::Builtin(Builtin::WorkgroupSize(0)), &[]);
    let one = b.iconst(Type::I32, 1);
    let last = b.ins(InstKind::IBinary(IBinOp::Sub), &[size, one]);
    let rev = b.ins(InstKind::IBinary(IBinOp::Sub), &[last, local]);
    let roff = b.ins(InstKind::IBinary(IBinOp::Mul), &[rev, four]);
    let got = b.ins(
        InstKind::Load(MemAccess::scalar(AddrSpace::Shared, Type::I32)),
        &[roff],
    );
    let got2 = b.ins(InstKind::IBinary(IBinOp::Add), &[got, one]);
    b.ins(InstKind::Barrier, &[]);
    let it1 = b.ins(InstKind::IBinary(IBinOp::Add), &[it, one]);
    b.jump(head, &[it1, got2]);
    b.switch_to(done);
    store(&mut b, AddrSpace::Global, Type::I32, addr, val);
    b.exit();
    let mut d = Dispatch::new([5, 1, 1], [12, 1, 1]);
    d.wave_size = 4;
    let out = compare(&k, &d, &[0; 60 * 4], &[]);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    for g in 0..5u32 {
        for l in 0..12u32 {
            // Three reversals: the value comes from the mirrored lane, +3.
            let want = g * 12 + (11 - l) + 3;
            assert_eq!(got[(g * 12 + l) as usize], want);
        }
    }
}

/// An out-of-bounds store in some lanes and a trap: the lowest lane's fault wins.
#[test]
fn faults_match_lowest_lane() {
    let mut k = Kernel::new("faults");
    let entry = k.add_block();
    let bad = k.add_block();
    let good = k.add_block();
    let mut b = Builder::new(&mut k, entry);
    let (id, addr) = lane_addr(&mut b, 4);
    let c = b.iconst(Type::I32, 21);
    let big = b.ins(InstKind::Icmp(IntCC::Ugt), &[id, c]);
    b.branch(big, BlockCall::new(bad, &[]), BlockCall::new(good, &[]));
    b.switch_to(bad);
    let c30 = b.iconst(Type::I32, 30);
    let is30 = b.ins(InstKind::Icmp(IntCC::Eq), &[id, c30]);
    let _ = is30;
    store(&mut b, AddrSpace::Global, Type::I32, addr, id);
    b.exit();
    b.switch_to(good);
    store(&mut b, AddrSpace::Global, Type::I32, addr, id);
    b.exit();
    // The buffer holds 24 words: lanes 24.. fault; lane 24 is the lowest.
    let d = Dispatch::new([4, 1, 1], [8, 1, 1]);
    let out = compare(&k, &d, &[0; 24 * 4], &[]);
    let f = out.fault.expect("a fault");
    assert_eq!(f.lane.workgroup, [3, 0, 0]);
    assert_eq!(f.lane.local, [0, 0, 0]);
    assert!(matches!(f.kind, FaultKind::Memory { write: true, .. }));
}

#[test]
fn watchdog_and_trap() {
    // An endless loop hits the watchdog.
    let mut k = Kernel::new("spin");
    let entry = k.add_block();
    let spin = k.add_block();
    let mut b = Builder::new(&mut k, entry);
    b.jump(spin, &[]);
    b.switch_to(spin);
    b.jump(spin, &[]);
    let mut d = Dispatch::new([2, 1, 1], [4, 1, 1]);
    d.step_limit = 100;
    let out = compare(&k, &d, &[], &[]);
    let f = out.fault.expect("watchdog");
    assert_eq!(f.kind, FaultKind::Watchdog { limit: 100 });
    assert_eq!(f.block, Block::from_u32(1));

    let mut k = Kernel::new("trap");
    let entry = k.add_block();
    let mut b = Builder::new(&mut k, entry);
    b.set_srcloc(Some(0x40));
    b.ins(InstKind::Trap { code: 7 }, &[]);
    b.exit();
    let out = compare(&k, &Dispatch::new([1, 1, 1], [4, 1, 1]), &[], &[]);
    let f = out.fault.expect("trap");
    assert_eq!(f.kind, FaultKind::Trap { code: 7 });
    assert_eq!(f.guest_pc, Some(0x40));
}

/// Step limit 0 faults every lane on entry; the lowest one is reported.
#[test]
fn zero_step_limit_faults_on_entry() {
    let mut k = Kernel::new("entry");
    let entry = k.add_block();
    Builder::new(&mut k, entry).exit();
    let mut d = Dispatch::new([2, 1, 1], [3, 1, 1]);
    d.step_limit = 0;
    let f = compare(&k, &d, &[], &[]).fault.expect("watchdog");
    assert_eq!(f.kind, FaultKind::Watchdog { limit: 0 });
    assert_eq!((f.lane.workgroup, f.lane.local), ([0; 3], [0; 3]));
    assert_eq!(f.inst, None);
}

/// A 3-D workgroup with a 128-lane wave: ballot sees lanes 0..63 only, builtins
/// follow x-fastest order.
#[test]
fn wide_wave_in_a_3d_workgroup() {
    let mut k = Kernel::new("wide");
    let entry = k.add_block();
    let mut b = Builder::new(&mut k, entry);
    let li = b.ins(InstKind::Builtin(Builtin::LocalIndex), &[]);
    let z = b.ins(InstKind::Builtin(Builtin::LocalId(2)), &[]);
    let one = b.iconst(Type::I32, 1);
    let odd = b.ins(InstKind::IBinary(IBinOp::And), &[li, one]);
    let t = b.iconst(Type::I1, 1);
    let c = b.ins(
        InstKind::Cast {
            op: CastOp::Trunc,
            to: Type::I1,
        },
        &[odd],
    );
    let ballot = b.ins(InstKind::Ballot, &[t, c]);
    let zz = b.ins(
        InstKind::Cast {
            op: CastOp::Zext,
            to: Type::I64,
        },
        &[z],
    );
    let mixed = b.ins(InstKind::IBinary(IBinOp::Xor), &[ballot, zz]);
    let l64 = b.ins(
        InstKind::Cast {
            op: CastOp::Zext,
            to: Type::I64,
        },
        &[li],
    );
    let eight = b.iconst(Type::I64, 8);
    let off = b.ins(InstKind::IBinary(IBinOp::Mul), &[l64, eight]);
    let base = b.iconst(Type::I64, BUF);
    let addr = b.ins(InstKind::IBinary(IBinOp::Add), &[base, off]);
    store(&mut b, AddrSpace::Global, Type::I64, addr, mixed);
    b.exit();
    let mut d = Dispatch::new([1, 1, 1], [5, 4, 8]);
    d.wave_size = 128;
    let out = compare(&k, &d, &[0; 160 * 8], &[]);
    assert_eq!(out.fault, None);
    let words: Vec<u64> = out
        .memory
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect();
    let odd_bits = 0xaaaa_aaaa_aaaa_aaaa_u64;
    assert_eq!(words[0], odd_bits);
    // Lane 20 has z = 1; lanes 128..160 form the second (32-lane) wave.
    assert_eq!(words[20], odd_bits ^ 1);
    assert_eq!(words[128], 0xaaaa_aaaa ^ 6);
}

/// Signed compares of i1 read 1 as -1 (found by reading the semantics; the
/// generator now compares i1 values too).
#[test]
fn signed_compare_of_i1() {
    let mut k = Kernel::new("i1cmp");
    let entry = k.add_block();
    let mut b = Builder::new(&mut k, entry);
    let (id, addr) = lane_addr(&mut b, 8);
    let one = b.iconst(Type::I32, 1);
    let bit = b.ins(InstKind::IBinary(IBinOp::And), &[id, one]);
    let x = b.ins(
        InstKind::Cast {
            op: CastOp::Trunc,
            to: Type::I1,
        },
        &[bit],
    );
    let zero = b.iconst(Type::I1, 0);
    let mut word = b.iconst(Type::I64, 0);
    for (k, cc) in [IntCC::Slt, IntCC::Sle, IntCC::Sgt, IntCC::Sge, IntCC::Ult]
        .into_iter()
        .enumerate()
    {
        let r = b.ins(InstKind::Icmp(cc), &[x, zero]);
        let r64 = b.ins(
            InstKind::Cast {
                op: CastOp::Zext,
                to: Type::I64,
            },
            &[r],
        );
        let sh = b.iconst(Type::I64, k as u64);
        let r64 = b.ins(InstKind::IBinary(IBinOp::Shl), &[r64, sh]);
        word = b.ins(InstKind::IBinary(IBinOp::Or), &[word, r64]);
    }
    store(&mut b, AddrSpace::Global, Type::I64, addr, word);
    b.exit();
    let out = compare(&k, &Dispatch::new([1, 1, 1], [2, 1, 1]), &[0; 16], &[]);
    // Lane 0: x = 0 = zero: Sle, Sge. Lane 1: x = -1 < 0: Slt, Sle.
    assert_eq!(out.memory[0], 0b01010);
    assert_eq!(out.memory[8], 0b00011);
}

/// f32 special values: NaNs with payloads (quiet, signalling, negative),
/// infinities, zeros, subnormals and ordinary numbers.
const SPECIAL_F32: [u32; 16] = [
    0x7fc0_0001,
    0x7f80_0123,
    0xffc0_4000,
    0x7f80_0000,
    0xff80_0000,
    0x0000_0000,
    0x8000_0000,
    0x0000_0001,
    0x807f_ffff,
    0x3fc0_0000, // 1.5
    0x4000_0000, // 2.0
    0xbf80_0000, // -1.0
    0x7f7f_ffff,
    0x0080_0000,
    0x3e80_0000,
    0xc2c8_0000,
];

/// A long pure f32/i32 stretch (vector runs in the configurations that enable
/// them) over special values with every float mode the vector path handles,
/// on workgroups whose size is not a multiple of the vector width.
#[test]
fn vector_runs_keep_the_float_rules() {
    use wavejit_ir::{Denorm, FBinOp, FUnOp, FloatMode, NanMode, Round};
    let ftz = FloatMode {
        denorm_in: Denorm::FlushKeepSign,
        denorm_out: Denorm::FlushKeepSign,
        nan: NanMode::Propagate,
        round: Round::NearestEven,
        sat: false,
        flags: false,
    };
    let canon = FloatMode {
        nan: NanMode::Canonical(0x7fc0_0000),
        ..FloatMode::IEEE
    };
    let both = FloatMode {
        nan: NanMode::Canonical(0xffff_ffff),
        ..ftz
    };
    let modes = [FloatMode::IEEE, ftz, canon, both];
    let mut k = Kernel::new("vector_rules");
    let entry = k.add_block();
    let mut b = Builder::new(&mut k, entry);
    let (id, _) = lane_addr(&mut b, 4);
    // a = special[id % 16], b = special[(id * 5 + 3) % 16] from the read-only buffer.
    let load = |b: &mut Builder, idx: Value| {
        let m = b.iconst(Type::I32, 15);
        let i = b.ins(InstKind::IBinary(IBinOp::And), &[idx, m]);
        let i64v = b.ins(
            InstKind::Cast {
                op: CastOp::Zext,
                to: Type::I64,
            },
            &[i],
        );
        let four = b.iconst(Type::I64, 4);
        let off = b.ins(InstKind::IBinary(IBinOp::Mul), &[i64v, four]);
        let ro = b.iconst(Type::I64, support::RO);
        let addr = b.ins(InstKind::IBinary(IBinOp::Add), &[ro, off]);
        b.ins(
            InstKind::Load(MemAccess::scalar(AddrSpace::Global, Type::F32)),
            &[addr],
        )
    };
    let x = load(&mut b, id);
    let five = b.iconst(Type::I32, 5);
    let three = b.iconst(Type::I32, 3);
    let t = b.ins(InstKind::IBinary(IBinOp::Mul), &[id, five]);
    let t = b.ins(InstKind::IBinary(IBinOp::Add), &[t, three]);
    let y = load(&mut b, t);
    let mut outs = Vec::new();
    for mode in modes {
        for op in [FBinOp::Add, FBinOp::Sub, FBinOp::Mul, FBinOp::Div] {
            outs.push(b.ins(InstKind::FBinary { op, mode }, &[x, y]));
        }
        for op in [FUnOp::Neg, FUnOp::Abs, FUnOp::Sqrt] {
            outs.push(b.ins(InstKind::FUnary { op, mode }, &[y]));
        }
        outs.push(b.ins(InstKind::Fma { mode }, &[x, y, x]));
    }
    // Integer ops on the float bits, shifts by constants (amount modulo 32).
    let bits = b.ins(
        InstKind::Cast {
            op: CastOp::Bitcast,
            to: Type::I32,
        },
        &[x],
    );
    let c = b.iconst(Type::I32, 0x9e37_79b9);
    let h = b.ins(InstKind::IBinary(IBinOp::Mul), &[bits, c]);
    let s = b.iconst(Type::I32, 45);
    let h = b.ins(InstKind::IBinary(IBinOp::ShrS), &[h, s]);
    let h = b.ins(InstKind::IBinary(IBinOp::Xor), &[h, id]);
    let s = b.iconst(Type::I32, 7);
    let h = b.ins(InstKind::IBinary(IBinOp::Shl), &[h, s]);
    let h = b.ins(InstKind::IBinary(IBinOp::ShrU), &[h, three]);
    let h = b.ins(InstKind::IBinary(IBinOp::Sub), &[h, bits]);
    let h = b.ins(InstKind::IBinary(IBinOp::Or), &[h, five]);
    outs.push(b.ins(InstKind::IBinary(IBinOp::And), &[h, c]));
    let per_lane = outs.len() as u64;
    let s = b.iconst(Type::I32, per_lane);
    let base = b.ins(InstKind::IBinary(IBinOp::Mul), &[id, s]);
    for (j, &v) in outs.iter().enumerate() {
        let jc = b.iconst(Type::I32, j as u64);
        let slot = b.ins(InstKind::IBinary(IBinOp::Add), &[base, jc]);
        let s64 = b.ins(
            InstKind::Cast {
                op: CastOp::Zext,
                to: Type::I64,
            },
            &[slot],
        );
        let four = b.iconst(Type::I64, 4);
        let off = b.ins(InstKind::IBinary(IBinOp::Mul), &[s64, four]);
        let bufc = b.iconst(Type::I64, BUF);
        let addr = b.ins(InstKind::IBinary(IBinOp::Add), &[bufc, off]);
        let ty = k_ty(j, outs.len());
        store(&mut b, AddrSpace::Global, ty, addr, v);
    }
    b.exit();
    let lanes = 2 * 37;
    let d = Dispatch::new([2, 1, 1], [37, 1, 1]);
    let ro: Vec<u8> = SPECIAL_F32.iter().flat_map(|v| v.to_le_bytes()).collect();
    let out = compare(&k, &d, &vec![0; lanes * per_lane as usize * 4], &ro);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    let at = |lane: usize, j: usize| got[lane * per_lane as usize + j];
    // Lane 9: x = 1.5, y = special[(9*5+3)%16 = 0] = quiet NaN with payload 1.
    assert_eq!(at(9, 0), 0x7fc0_0001, "NaN operand propagates quieted");
    assert_eq!(at(9, 16), 0x7fc0_0000, "canonical NaN");
    assert_eq!(at(9, 24), 0xffff_ffff, "the canonical pattern as given");
    // Lane 3: x = +inf, y = special[18%16 = 2] = -qNaN 0xffc04000.
    assert_eq!(at(3, 0), 0xffc0_4000);
    // Lane 10: x = 2.0, y = special[53%16 = 5] = +0: 2/0 = +inf, sqrt(+0) = +0.
    assert_eq!(at(10, 3), 0x7f80_0000);
    assert_eq!(at(10, 6), 0);
    // Lane 4: x = -inf, y = special[23%16 = 7] = smallest subnormal: IEEE keeps
    // it (x*y = -inf); FTZ: -inf * +0 is invalid -> default NaN.
    assert_eq!(at(4, 2), 0xff80_0000);
    assert_eq!(at(4, 8 + 2), 0x7fc0_0000);
    // FTZ flushes a subnormal negation to -0.
    assert_eq!(at(4, 8 + 4), 0x8000_0000);
}

/// Stores are f32 for the float results, i32 for the last (integer) one.
fn k_ty(j: usize, n: usize) -> Type {
    if j + 1 == n { Type::I32 } else { Type::F32 }
}

/// Uniform loads at constant offsets (read once per run by the JIT): in range
/// every lane gets the bits; past the end every lane faults at the load, and
/// the lowest lane's fault is reported.
#[test]
fn uniform_loads_at_constant_offsets() {
    let build = |off: u64| {
        let mut k = Kernel::new("uniform_const");
        let entry = k.add_block();
        let mut b = Builder::new(&mut k, entry);
        let (id, addr) = lane_addr(&mut b, 4);
        let o = b.iconst(Type::I32, off);
        let u = b.ins(
            InstKind::Load(MemAccess::scalar(AddrSpace::Uniform, Type::I32)),
            &[o],
        );
        let v = b.ins(InstKind::IBinary(IBinOp::Add), &[u, id]);
        store(&mut b, AddrSpace::Global, Type::I32, addr, v);
        b.exit();
        k
    };
    let mut d = Dispatch::new([2, 1, 1], [5, 1, 1]);
    d.uniforms = vec![1, 0, 0, 0, 0x10, 0x20, 0x30, 0x40, 9, 9];
    let out = compare(&build(4), &d, &[0; 40], &[]);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    for (i, &v) in got.iter().enumerate() {
        assert_eq!(v, 0x4030_2010 + i as u32);
    }
    let out = compare(&build(8), &d, &[0; 40], &[]);
    let fault = out.fault.expect("a load past the uniforms must fault");
    assert_eq!(fault.lane.local, [0, 0, 0]);
    assert_eq!(fault.lane.workgroup, [0, 0, 0]);
    assert!(matches!(
        fault.kind,
        FaultKind::Memory {
            addr: 8,
            size: 4,
            ..
        }
    ));
}

/// Runs `body(x, y)` for x = special[id % 16], y = special[(id * 5 + 3) % 16]
/// over two workgroups of 37 lanes and stores its results (f32 or i32) per
/// lane; compares the interpreter and the JIT and returns the words.
fn run_on_specials(
    name: &str,
    body: impl Fn(&mut Builder, Value, Value) -> Vec<Value>,
) -> Vec<u32> {
    let mut k = Kernel::new(name);
    let entry = k.add_block();
    let mut b = Builder::new(&mut k, entry);
    let (id, _) = lane_addr(&mut b, 4);
    let load = |b: &mut Builder, idx: Value| {
        let m = b.iconst(Type::I32, 15);
        let i = b.ins(InstKind::IBinary(IBinOp::And), &[idx, m]);
        let four = b.iconst(Type::I32, 4);
        let off = b.ins(InstKind::IBinary(IBinOp::Mul), &[i, four]);
        let o64 = b.ins(
            InstKind::Cast {
                op: CastOp::Zext,
                to: Type::I64,
            },
            &[off],
        );
        let ro = b.iconst(Type::I64, support::RO);
        let addr = b.ins(InstKind::IBinary(IBinOp::Add), &[ro, o64]);
        b.ins(
            InstKind::Load(MemAccess::scalar(AddrSpace::Global, Type::F32)),
            &[addr],
        )
    };
    let x = load(&mut b, id);
    let five = b.iconst(Type::I32, 5);
    let three = b.iconst(Type::I32, 3);
    let t = b.ins(InstKind::IBinary(IBinOp::Mul), &[id, five]);
    let t = b.ins(InstKind::IBinary(IBinOp::Add), &[t, three]);
    let y = load(&mut b, t);
    let outs = body(&mut b, x, y);
    let n = outs.len() as u64;
    for (j, &v) in outs.iter().enumerate() {
        let nc = b.iconst(Type::I32, n);
        let base = b.ins(InstKind::IBinary(IBinOp::Mul), &[id, nc]);
        let jc = b.iconst(Type::I32, j as u64);
        let slot = b.ins(InstKind::IBinary(IBinOp::Add), &[base, jc]);
        let s64 = b.ins(
            InstKind::Cast {
                op: CastOp::Zext,
                to: Type::I64,
            },
            &[slot],
        );
        let four = b.iconst(Type::I64, 4);
        let off = b.ins(InstKind::IBinary(IBinOp::Mul), &[s64, four]);
        let bufc = b.iconst(Type::I64, BUF);
        let addr = b.ins(InstKind::IBinary(IBinOp::Add), &[bufc, off]);
        let ty = b_ty(&b, v);
        store(&mut b, AddrSpace::Global, ty, addr, v);
    }
    b.exit();
    let d = Dispatch::new([2, 1, 1], [37, 1, 1]);
    let ro: Vec<u8> = SPECIAL_F32.iter().flat_map(|v| v.to_le_bytes()).collect();
    let out = compare(&k, &d, &vec![0; 74 * n as usize * 4], &ro);
    assert_eq!(out.fault, None);
    u32s(&out.memory)
}

fn b_ty(b: &Builder, v: Value) -> Type {
    b.kernel.value_type(v)
}

/// Vector runs test NaN only where a NaN could escape: chains of arithmetic,
/// results read by a negation or by integer code, and unused results.
#[test]
fn vector_nan_tests_cover_every_escape() {
    use wavejit_ir::{FBinOp, FUnOp, FloatMode};
    let fb = |op| InstKind::FBinary {
        op,
        mode: FloatMode::IEEE,
    };
    let words = run_on_specials("nan_escape", |b, x, y| {
        // A long enough chain to become a vector run at every threshold used.
        let mut chain = b.ins(fb(FBinOp::Add), &[x, y]);
        for _ in 0..20 {
            chain = b.ins(fb(FBinOp::Mul), &[chain, y]);
            chain = b.ins(fb(FBinOp::Sub), &[chain, x]);
        }
        let unused = b.ins(fb(FBinOp::Div), &[x, y]);
        let _ = unused;
        let s = b.ins(fb(FBinOp::Sub), &[x, x]);
        let neg = b.ins(
            InstKind::FUnary {
                op: FUnOp::Neg,
                mode: FloatMode::IEEE,
            },
            &[s],
        );
        let d = b.ins(fb(FBinOp::Div), &[y, x]);
        let bits = b.ins(
            InstKind::Cast {
                op: CastOp::Bitcast,
                to: Type::I32,
            },
            &[d],
        );
        let one = b.iconst(Type::I32, 1);
        let int = b.ins(InstKind::IBinary(IBinOp::Add), &[bits, one]);
        vec![chain, neg, int]
    });
    // Lane 9: x = 1.5, y = qNaN payload 1: the chain keeps that NaN, -(x - x)
    // is -0, y/x is the quiet NaN, + 1 as an integer.
    assert_eq!(words[9 * 3], 0x7fc0_0001);
    assert_eq!(words[9 * 3 + 1], 0x8000_0000);
    assert_eq!(words[9 * 3 + 2], 0x7fc0_0002);
    // Lane 1: x = sNaN 0x7f800123: x - x is its quieted form, negated.
    assert_eq!(words[3 + 1], 0xffc0_0123);
    // Lane 3: x = +inf: inf - inf is the positive default NaN (the host's is
    // negative), negated.
    assert_eq!(words[3 * 3 + 1], 0xffc0_0000);
    // The same negation as the only float result (no other NaN test in the
    // iteration could send the lanes to the exact path).
    let words = run_on_specials("neg_only", |b, x, _| {
        let s = b.ins(fb(FBinOp::Sub), &[x, x]);
        let n = b.ins(
            InstKind::FUnary {
                op: FUnOp::Neg,
                mode: FloatMode::IEEE,
            },
            &[s],
        );
        vec![n]
    });
    assert_eq!(words[3], 0xffc0_0000);
    assert_eq!(words[9], 0x8000_0000);
}

/// `ftz.tiny` (flush before rounding): inline for every result but those of
/// exactly the smallest normal magnitude, which take the exact helper path.
#[test]
fn flush_before_rounding_inline_and_at_the_smallest_normal() {
    let text = "kernel @tiny shared 0 private 0 {
block0:
  v40 = local_index
  v41 = workgroup_id.x
  v42 = const.i32 16
  v43 = imul.i32 v41, v42
  v0 = iadd.i32 v43, v40
  v1 = zext.i32.i64 v0
  v2 = const.i64 3
  v3 = shl.i64 v1, v2
  v4 = const.i64 0x20000000
  v5 = iadd.i64 v4, v3
  v6 = load.global.f32 v5
  v7 = const.i64 4
  v8 = iadd.i64 v5, v7
  v9 = load.global.f32 v8
  v10 = const.f32 -0.0
  v11 = fma.f32 v6, v9, v10 ftz.in ftz.tiny nan=0x7fc00000
  v12 = fmul.f32 v6, v9 ftz.in ftz.tiny nan=0x7fc00000
  v13 = const.i64 2
  v14 = shl.i64 v1, v13
  v15 = const.i64 0x10000000
  v16 = iadd.i64 v15, v14
  store.global.f32 v16, v11
  v17 = const.i64 128
  v18 = iadd.i64 v16, v17
  store.global.f32 v18, v12
  exit
}
";
    let k = match wavejit_ir::text::parse(text) {
        Ok(k) => k,
        Err(e) => panic!("{e}"),
    };
    // (a, b) -> a * b under the rule.
    let cases: [(u32, u32, u32); 8] = [
        (0x3f7f_ffff, 0x0080_0000, 0),           // tiny, rounds up to 2^-126
        (0xbf7f_ffff, 0x0080_0000, 0x8000_0000), // the same, negative
        (0x3f80_0000, 0x0080_0000, 0x0080_0000), // exactly 2^-126
        (0x3f80_0001, 0x0080_0000, 0x0080_0001), // just above
        (0x3f00_0000, 0x0080_0000, 0),           // subnormal after rounding
        (0x4000_0000, 0x4040_0000, 0x40c0_0000), // 2 * 3
        (0x7f80_0000, 0x0000_0000, 0x7fc0_0000), // inf * 0: canonical NaN
        (0x0000_0001, 0x7f00_0000, 0),           // subnormal input flushed
    ];
    // 32 lanes in two workgroups of 16 (one vector iteration each): the NaN
    // case (which sends its whole iteration to the exact helper) only in the
    // second, so the first shows the smallest-normal test of its own.
    let case_of = |lane: usize| {
        if lane < 16 && lane % 8 == 6 {
            cases[0]
        } else {
            cases[lane % 8]
        }
    };
    let ro: Vec<u8> = (0..32)
        .flat_map(|l| {
            let (a, b, _) = case_of(l);
            [a.to_le_bytes(), b.to_le_bytes()].concat()
        })
        .collect();
    let d = Dispatch::new([2, 1, 1], [16, 1, 1]);
    let out = compare(&k, &d, &[0; 256], &ro);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    for lane in 0..32 {
        let (a, b, want) = case_of(lane);
        assert_eq!(got[lane], want, "fma {a:#x} * {b:#x}");
        assert_eq!(got[32 + lane], want, "fmul {a:#x} * {b:#x}");
    }
}
