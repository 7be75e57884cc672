//! Differential test of `transform::fold_constants` on random kernels full of
//! constants: every pure instruction kind with random float modes (flags,
//! flush, canonical NaN, rounding, saturation) on special values (NaN
//! payloads, signed zeros, denormals, infinities, extremes) mixed with
//! lane-dependent values; selects, branches and tables on known and unknown
//! conditions, joins and loops carrying constants in block parameters,
//! cross-lane operations, barriers, traps, faulting loads and runaway loops.
//! Each kernel must run identically (memory and fault) before and after on
//! the golden interpreter, verify, and be left alone by a second run. The
//! same kernels check `eliminate_common_subexpressions` (with duplicated
//! instructions) and `hoist_loop_invariants` (with uniform reads at random
//! offsets, some past the dispatch's uniforms or misaligned).

#[path = "support/rng.rs"]
mod rng;

mod promote_support;

use rng::Rng;
use std::collections::HashMap;

use cranelift_entity::packed_option::ReservedValue;
use promote_support::{BASE, fault_place, run};
use wavejit_ir::text::print;
use wavejit_ir::transform::{
    FoldStats, eliminate_common_subexpressions, fold_constants, hoist_loop_invariants,
};
use wavejit_ir::verify::verify;
use wavejit_ir::{
    AddrSpace, Block, BlockCall, Builtin, CastOp, Denorm, Dispatch, FBinOp, FUnOp, FloatCC,
    FloatFormat, FloatMode, IBinOp, IUnOp, InstKind, IntCC, Kernel, MemAccess, NanMode, ReduceOp,
    Round, ShuffleKind, SpecialFn, Terminator, Type, Value,
};

const LANES: u32 = 16;
/// Output bytes per lane (words picked at random inside).
const LANE_OUT: u64 = 256;
const MAX_DEPTH: u32 = 2;

const INTS: [Type; 5] = [Type::I1, Type::I8, Type::I16, Type::I32, Type::I64];
const FLOATS: [Type; 3] = [Type::F16, Type::F32, Type::F64];

/// Interesting bit patterns of `ty`.
fn special_bits(rng: &mut Rng, ty: Type) -> u64 {
    let pats: &[u64] = match ty {
        Type::F16 => &[
            0, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0x7d01, 0xfe12, 0x0001, 0x83ff,
            0x7bff, 0x0400, 0x3555,
        ],
        Type::F32 => &[
            0,
            0x8000_0000,
            0x3f80_0000,
            0xc020_0000,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            0x7f80_0123,
            0xffc0_4567,
            0x0000_0001,
            0x807f_ffff,
            0x7f7f_ffff,
            0x0080_0000,
            0x3eaa_aaab,
            0x4f00_0000,
            0xcf00_0001,
        ],
        Type::F64 => &[
            0,
            0x8000_0000_0000_0000,
            0x3ff0_0000_0000_0000,
            0x7ff0_0000_0000_0000,
            0x7ff8_0000_0000_0000,
            0x7ff0_0000_0000_0042,
            0x0000_0000_0000_0001,
            0x800f_ffff_ffff_ffff,
            0x7fef_ffff_ffff_ffff,
            0x43e0_0000_0000_0000,
            0x3fd5_5555_5555_5555,
        ],
        _ => &[
            0,
            1,
            2,
            3,
            7,
            31,
            32,
            0x7f,
            0x80,
            0xff,
            0x8000,
            0x7fff_ffff,
            u64::MAX,
        ],
    };
    let bits = if rng.chance(25) {
        rng.next()
    } else {
        rng.pick(pats)
    };
    bits & ty.mask()
}

fn random_mode(rng: &mut Rng, result: Option<Type>, flags_ok: bool) -> FloatMode {
    let denorm = |rng: &mut Rng| {
        if rng.chance(40) {
            Denorm::FlushKeepSign
        } else {
            Denorm::Preserve
        }
    };
    let nan = match result {
        Some(Type::F16) if rng.chance(30) => NanMode::Canonical(0x7e00),
        Some(Type::F32) if rng.chance(30) => {
            NanMode::Canonical(rng.pick(&[0x7fc0_0000, 0xffc0_0001]))
        }
        Some(Type::F64) if rng.chance(30) => NanMode::Canonical(0x7ff8_0000_0000_0000),
        _ => NanMode::Propagate,
    };
    let denorm_in = denorm(rng);
    let denorm_out = match denorm(rng) {
        Denorm::FlushKeepSign if rng.chance(30) => Denorm::FlushBeforeRounding,
        rule => rule,
    };
    FloatMode {
        denorm_in,
        denorm_out,
        nan,
        round: rng.pick(&Round::ALL),
        sat: result.is_some() && rng.chance(15),
        flags: flags_ok && rng.chance(35),
    }
}

struct Gen {
    rng: Rng,
    k: Kernel,
    cur: Block,
    /// Values usable at the current point, by type.
    pool: HashMap<Type, Vec<Value>>,
    lane: Value,
    out: Value,
    depth: u32,
    statements: u32,
    faulty: bool,
}

impl Gen {
    fn ins_all(&mut self, kind: InstKind, args: &[Value]) -> Vec<Value> {
        let inst = self.k.append_inst(self.cur, kind, args);
        self.k.insts[inst].results.clone()
    }
    fn ins(&mut self, kind: InstKind, args: &[Value]) -> Value {
        self.ins_all(kind, args)
            .first()
            .copied()
            .unwrap_or_else(Value::reserved_value)
    }
    fn konst(&mut self, ty: Type, bits: u64) -> Value {
        self.ins(
            InstKind::Const {
                ty,
                bits: bits & ty.mask(),
            },
            &[],
        )
    }
    fn add(&mut self, v: Value) {
        let ty = self.k.value_type(v);
        self.pool.entry(ty).or_default().push(v);
    }
    /// A value of `ty`: often a fresh special constant, else one from the pool.
    fn value(&mut self, ty: Type) -> Value {
        let have = self.pool.get(&ty).map_or(0, Vec::len);
        if have == 0 || self.rng.chance(30) {
            let bits = special_bits(&mut self.rng, ty);
            let v = self.konst(ty, bits);
            self.add(v);
            return v;
        }
        let i = self.rng.below(have as u64) as usize;
        self.pool[&ty][i]
    }
    fn snapshot(&self) -> HashMap<Type, usize> {
        self.pool.iter().map(|(&t, v)| (t, v.len())).collect()
    }
    fn restore(&mut self, snap: &HashMap<Type, usize>) {
        for (t, v) in self.pool.iter_mut() {
            v.truncate(snap.get(t).copied().unwrap_or(0));
        }
    }
    fn terminate(&mut self, term: Terminator) {
        self.k.set_terminator(self.cur, term);
    }

    /// One random pure instruction whose arguments fit its signature.
    fn pure_op(&mut self) {
        let int = self.rng.pick(&INTS[1..]);
        let flt = self.rng.pick(&FLOATS);
        let any = if self.rng.chance(50) { int } else { flt };
        let fmt = self.rng.pick(&FloatFormat::ALL);
        let fmt2 = self.rng.pick(&FloatFormat::ALL);
        let r = &mut self.rng;
        let (kind, tys): (InstKind, Vec<Type>) = match r.below(16) {
            0 | 1 => (InstKind::IBinary(r.pick(IBinOp::ALL)), vec![int, int]),
            2 => (InstKind::IUnary(r.pick(IUnOp::ALL)), vec![int]),
            3 => {
                let ccs = [
                    IntCC::Eq,
                    IntCC::Ne,
                    IntCC::Ult,
                    IntCC::Sle,
                    IntCC::Sgt,
                    IntCC::Uge,
                ];
                (InstKind::Icmp(r.pick(&ccs)), vec![int, int])
            }
            4 => (InstKind::Select, vec![Type::I1, any, any]),
            5 => {
                let from = r.pick(&INTS);
                let to = r.pick(&INTS);
                let op = match from.bits().cmp(&to.bits()) {
                    std::cmp::Ordering::Less if r.chance(50) => CastOp::Sext,
                    std::cmp::Ordering::Less => CastOp::Zext,
                    std::cmp::Ordering::Greater => CastOp::Trunc,
                    std::cmp::Ordering::Equal => return,
                };
                (InstKind::Cast { op, to }, vec![from])
            }
            6 => {
                let (from, to) = r.pick(&[
                    (Type::I16, Type::F16),
                    (Type::F16, Type::I16),
                    (Type::I32, Type::F32),
                    (Type::F32, Type::I32),
                    (Type::I64, Type::F64),
                    (Type::F64, Type::I64),
                ]);
                (
                    InstKind::Cast {
                        op: CastOp::Bitcast,
                        to,
                    },
                    vec![from],
                )
            }
            7 => {
                if r.chance(50) {
                    (
                        InstKind::BitExtract {
                            signed: r.chance(50),
                        },
                        vec![int, Type::I32, Type::I32],
                    )
                } else {
                    (InstKind::BitInsert, vec![int, int, Type::I32, Type::I32])
                }
            }
            8 | 9 => {
                let mode = random_mode(r, Some(flt), true);
                (
                    InstKind::FBinary {
                        op: r.pick(FBinOp::ALL),
                        mode,
                    },
                    vec![flt, flt],
                )
            }
            10 => {
                let mode = random_mode(r, Some(flt), true);
                (
                    InstKind::FUnary {
                        op: r.pick(FUnOp::ALL),
                        mode,
                    },
                    vec![flt],
                )
            }
            11 => {
                if r.chance(50) {
                    let mode = random_mode(r, Some(flt), true);
                    (InstKind::Fma { mode }, vec![flt, flt, flt])
                } else {
                    let mode = random_mode(r, Some(Type::F32), true);
                    (
                        InstKind::PowFixup { mode },
                        vec![Type::F32, Type::F32, Type::F32],
                    )
                }
            }
            12 => {
                let ccs = [
                    FloatCC::Eq,
                    FloatCC::Lt,
                    FloatCC::Ge,
                    FloatCC::Uno,
                    FloatCC::Une,
                    FloatCC::Ult,
                ];
                let mut mode = random_mode(r, None, true);
                mode.sat = false;
                if r.chance(30) {
                    mode.flags = false;
                    (InstKind::Fclass { mode }, vec![flt])
                } else {
                    (
                        InstKind::Fcmp {
                            cc: r.pick(&ccs),
                            mode,
                        },
                        vec![flt, flt],
                    )
                }
            }
            13 => {
                let mode = random_mode(r, Some(flt), true);
                (
                    InstKind::Special {
                        func: r.pick(SpecialFn::ALL),
                        mode,
                    },
                    vec![flt],
                )
            }
            14 => {
                let res = Some(fmt2.storage()).filter(|t| t.is_float());
                let mut mode = random_mode(r, res, true);
                mode.sat = r.chance(20);
                (
                    InstKind::Fcvt {
                        from: fmt,
                        to: fmt2,
                        mode,
                    },
                    vec![fmt.storage()],
                )
            }
            _ => {
                let mut mode = random_mode(r, None, true);
                mode.sat = false;
                if r.chance(50) {
                    (
                        InstKind::FToI {
                            from: fmt,
                            to: r.pick(&INTS[1..]),
                            signed: r.chance(50),
                            nan_to_max: r.chance(50),
                            mode,
                        },
                        vec![fmt.storage()],
                    )
                } else {
                    (
                        InstKind::IToF {
                            to: fmt,
                            signed: r.chance(50),
                            mode,
                        },
                        vec![r.pick(&INTS[1..])],
                    )
                }
            }
        };
        if kind.signature(&tys).is_err() {
            return;
        }
        let args: Vec<Value> = tys.iter().map(|&t| self.value(t)).collect();
        for v in self.ins_all(kind, &args) {
            self.add(v);
        }
    }

    fn cond(&mut self) -> Value {
        if self.rng.chance(50) {
            return self.value(Type::I1);
        }
        let a = self.value(Type::I32);
        let b = if self.rng.chance(50) {
            self.lane
        } else {
            self.value(Type::I32)
        };
        let cc = self.rng.pick(&[IntCC::Eq, IntCC::Ult, IntCC::Sgt]);
        self.ins(InstKind::Icmp(cc), &[a, b])
    }

    /// Types carried into a join: one to three of any type.
    fn join_types(&mut self) -> Vec<Type> {
        let n = 1 + self.rng.below(3);
        (0..n)
            .map(|_| {
                self.rng
                    .pick(&[Type::I1, Type::I32, Type::I64, Type::F32, Type::F16])
            })
            .collect()
    }

    /// Arguments for a join: often the same constant on every edge.
    fn join_args(&mut self, tys: &[Type], shared: &[Value]) -> Vec<Value> {
        tys.iter()
            .zip(shared)
            .map(|(&t, &s)| {
                if self.rng.chance(50) {
                    s
                } else {
                    self.value(t)
                }
            })
            .collect()
    }

    /// Branch or table into 2-3 arms that meet in a join with parameters.
    fn diverge(&mut self) {
        let arms = if self.rng.chance(30) { 3 } else { 2 };
        let blocks: Vec<Block> = (0..arms).map(|_| self.k.add_block()).collect();
        let join = self.k.add_block();
        let tys = self.join_types();
        let params: Vec<Value> = tys
            .iter()
            .map(|&t| self.k.add_block_param(join, t))
            .collect();
        let shared: Vec<Value> = tys.iter().map(|&t| self.value(t)).collect();
        if arms == 2 {
            let c = self.cond();
            self.terminate(Terminator::Branch {
                cond: c,
                then: BlockCall::new(blocks[0], &[]),
                otherwise: BlockCall::new(blocks[1], &[]),
            });
        } else {
            let idx = if self.rng.chance(50) {
                let bits = self.rng.below(4);
                self.konst(Type::I32, bits)
            } else {
                let three = self.konst(Type::I32, 3);
                self.ins(InstKind::IBinary(IBinOp::And), &[self.lane, three])
            };
            self.terminate(Terminator::Table {
                index: idx,
                targets: vec![
                    BlockCall::new(blocks[0], &[]),
                    BlockCall::new(blocks[1], &[]),
                ],
                default: BlockCall::new(blocks[2], &[]),
            });
        }
        let snap = self.snapshot();
        for &arm in &blocks {
            self.cur = arm;
            self.depth += 1;
            self.statements_block(3);
            self.depth -= 1;
            let args = self.join_args(&tys, &shared);
            self.terminate(Terminator::Jump(BlockCall::new(join, &args)));
            self.restore(&snap);
        }
        self.cur = join;
        for p in params {
            self.add(p);
        }
    }

    /// A loop with a counter (per-lane or constant trip count) and carried
    /// values that may stay constant around it.
    fn counted_loop(&mut self) {
        let header = self.k.add_block();
        let body = self.k.add_block();
        let after = self.k.add_block();
        let tys = self.join_types();
        let i = self.k.add_block_param(header, Type::I32);
        let carried: Vec<Value> = tys
            .iter()
            .map(|&t| self.k.add_block_param(header, t))
            .collect();
        let zero = self.konst(Type::I32, 0);
        let init: Vec<Value> = tys.iter().map(|&t| self.value(t)).collect();
        let limit = if self.rng.chance(50) {
            let n = self.rng.below(4);
            self.konst(Type::I32, n)
        } else {
            let three = self.konst(Type::I32, 3);
            self.ins(InstKind::IBinary(IBinOp::And), &[self.lane, three])
        };
        let mut args = vec![zero];
        args.extend(&init);
        self.terminate(Terminator::Jump(BlockCall::new(header, &args)));
        self.cur = header;
        let go = self.ins(InstKind::Icmp(IntCC::Ult), &[i, limit]);
        self.terminate(Terminator::Branch {
            cond: go,
            then: BlockCall::new(body, &[]),
            otherwise: BlockCall::new(after, &[]),
        });
        let snap = self.snapshot();
        self.cur = body;
        self.add(i);
        for &c in &carried {
            self.add(c);
        }
        self.depth += 1;
        self.statements_block(3);
        self.depth -= 1;
        let one = self.konst(Type::I32, 1);
        let i2 = self.ins(InstKind::IBinary(IBinOp::Add), &[i, one]);
        let mut back = vec![i2];
        for (k, &t) in tys.iter().enumerate() {
            // Unchanged, the initial constant again, or something new.
            back.push(match self.rng.below(3) {
                0 => carried[k],
                1 => init[k],
                _ => self.value(t),
            });
        }
        self.terminate(Terminator::Jump(BlockCall::new(header, &back)));
        self.restore(&snap);
        self.cur = after;
        self.add(i);
        for c in carried {
            self.add(c);
        }
    }

    /// A loop whose exit condition is a known false: only the watchdog ends it.
    fn runaway_loop(&mut self) {
        let header = self.k.add_block();
        let after = self.k.add_block();
        let c = self.konst(Type::I32, 5);
        let go = self.ins(InstKind::Icmp(IntCC::Ne), &[c, self.lane]);
        let n = self.k.add_block_param(header, Type::I32);
        let z = self.konst(Type::I32, 0);
        self.terminate(Terminator::Jump(BlockCall::new(header, &[z])));
        self.cur = header;
        let one = self.konst(Type::I32, 1);
        let n2 = self.ins(InstKind::IBinary(IBinOp::Add), &[n, one]);
        let t = self.konst(Type::I1, 1);
        let stay = self.ins(InstKind::Select, &[go, t, t]);
        self.emit_value(n2);
        self.terminate(Terminator::Branch {
            cond: stay,
            then: BlockCall::new(header, &[n2]),
            otherwise: BlockCall::new(after, &[]),
        });
        self.cur = after;
    }

    fn cross_lane(&mut self) {
        let mask = self.cond();
        let ty = self.rng.pick(&[Type::I32, Type::I64]);
        let v = self.value(ty);
        let r = if self.rng.chance(50) {
            self.ins(InstKind::Reduce(ReduceOp::Add), &[mask, v])
        } else {
            let n = 1 + self.rng.below(3);
            let n = self.konst(Type::I32, n);
            self.ins(InstKind::Shuffle(ShuffleKind::Xor), &[mask, v, n])
        };
        self.add(r);
    }

    fn emit_value(&mut self, v: Value) {
        let mut v = v;
        let mut ty = self.k.value_type(v);
        if ty == Type::I1 {
            v = self.ins(
                InstKind::Cast {
                    op: CastOp::Zext,
                    to: Type::I32,
                },
                &[v],
            );
            ty = Type::I32;
        }
        let bytes = u64::from(ty.bytes());
        let slot = self.rng.below(LANE_OUT / bytes) * bytes;
        let off = self.konst(Type::I64, slot);
        let addr = self.ins(InstKind::IBinary(IBinOp::Add), &[self.out, off]);
        self.ins(
            InstKind::Store(MemAccess::scalar(AddrSpace::Global, ty)),
            &[addr, v],
        );
    }

    fn emit(&mut self) {
        let ty = self.rng.pick(&[
            Type::I1,
            Type::I8,
            Type::I16,
            Type::I32,
            Type::I64,
            Type::F16,
            Type::F32,
            Type::F64,
        ]);
        let v = self.value(ty);
        self.emit_value(v);
    }

    fn fault(&mut self) {
        let c = self.cond();
        let bad = self.k.add_block();
        let good = self.k.add_block();
        self.terminate(Terminator::Branch {
            cond: c,
            then: BlockCall::new(bad, &[]),
            otherwise: BlockCall::new(good, &[]),
        });
        self.cur = bad;
        if self.rng.chance(50) {
            self.ins(InstKind::Trap { code: 0x77 }, &[]);
        } else {
            let far = self.konst(Type::I64, 0x4000_0000);
            self.ins(
                InstKind::Load(MemAccess::scalar(AddrSpace::Global, Type::I32)),
                &[far],
            );
        }
        self.terminate(Terminator::Jump(BlockCall::new(good, &[])));
        self.cur = good;
    }

    fn statements_block(&mut self, n: u64) {
        let count = 1 + self.rng.below(n);
        for _ in 0..count {
            if self.statements == 0 {
                return;
            }
            self.statements -= 1;
            match self.rng.below(24) {
                0..=10 => self.pure_op(),
                11 if self.depth < MAX_DEPTH => self.diverge(),
                12 if self.depth < MAX_DEPTH => self.counted_loop(),
                13 => self.cross_lane(),
                14 => {
                    self.ins(InstKind::Barrier, &[]);
                }
                15 if self.faulty => self.fault(),
                16 if self.faulty && self.rng.chance(20) => self.runaway_loop(),
                _ => self.emit(),
            }
        }
    }
}

fn random_kernel(seed: u64, faulty: bool) -> Kernel {
    let mut k = Kernel::new(format!("fold{seed}"));
    let entry = k.add_block();
    let mut g = Gen {
        rng: Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1),
        k,
        cur: entry,
        pool: HashMap::new(),
        lane: Value::reserved_value(),
        out: Value::reserved_value(),
        depth: 0,
        statements: 50,
        faulty,
    };
    let local = g.ins(InstKind::Builtin(Builtin::LocalIndex), &[]);
    let wg = g.ins(InstKind::Builtin(Builtin::WorkgroupId(0)), &[]);
    let lanes = g.konst(Type::I32, u64::from(LANES));
    let first = g.ins(InstKind::IBinary(IBinOp::Mul), &[wg, lanes]);
    let global = g.ins(InstKind::IBinary(IBinOp::Add), &[first, local]);
    let g64 = g.ins(
        InstKind::Cast {
            op: CastOp::Zext,
            to: Type::I64,
        },
        &[global],
    );
    let size = g.konst(Type::I64, LANE_OUT);
    let rel = g.ins(InstKind::IBinary(IBinOp::Mul), &[g64, size]);
    let base = g.konst(Type::I64, BASE);
    g.out = g.ins(InstKind::IBinary(IBinOp::Add), &[base, rel]);
    g.lane = local;
    g.add(local);
    g.add(global);
    g.add(g64);
    // Lane-dependent values of the other types, so folding meets both kinds.
    for (op, ty) in [
        (CastOp::Trunc, Type::I8),
        (CastOp::Trunc, Type::I16),
        (CastOp::Trunc, Type::I1),
    ] {
        let v = g.ins(InstKind::Cast { op, to: ty }, &[local]);
        g.add(v);
    }
    let f = g.ins(
        InstKind::IToF {
            to: FloatFormat::F32,
            signed: false,
            mode: FloatMode::IEEE,
        },
        &[local],
    );
    g.add(f);
    while g.statements > 0 {
        g.statements_block(8);
    }
    for _ in 0..6 {
        g.emit();
    }
    g.terminate(Terminator::Exit);
    g.k
}

/// Two workgroups; the wave size varies with the seed, since it decides
/// which lanes run cross-lane operations together.
fn dispatch(seed: u64) -> Dispatch {
    let mut d = Dispatch::new([2, 1, 1], [LANES, 1, 1]);
    d.wave_size = [8, 4, 16, 1, 32][(seed % 5) as usize];
    d.step_limit = 300;
    d
}

fn fold_and_compare(k: &Kernel, d: &Dispatch) -> FoldStats {
    verify(k).unwrap_or_else(|e| panic!("generated kernel does not verify: {e}\n{}", print(k)));
    let mut folded = k.clone();
    let stats = fold_constants(&mut folded).expect("verified input");
    if let Err(e) = verify(&folded) {
        panic!(
            "{}: folded kernel does not verify: {e}\n{}",
            k.name,
            print(&folded)
        );
    }
    let before = run(k, d);
    let after = run(&folded, d);
    assert_eq!(
        before.0.clone().map_err(|f| fault_place(k, f)),
        after.0.clone().map_err(|f| fault_place(&folded, f)),
        "{}: fault differs\n{}\n{}",
        k.name,
        print(k),
        print(&folded)
    );
    assert!(
        before.1 == after.1,
        "{}: memory differs\n{}\n{}",
        k.name,
        print(k),
        print(&folded)
    );
    let mut again = folded.clone();
    let second = fold_constants(&mut again).expect("verifies");
    assert_eq!(
        second,
        FoldStats::default(),
        "{}: a second run folds nothing",
        k.name
    );
    assert_eq!(again, folded);
    stats
}

#[test]
fn random_kernels_behave_the_same_after_folding() {
    let (mut ops_before, mut ops_after) = (0, 0);
    let mut total = FoldStats::default();
    let mut faults = 0;
    let mut watchdogs = 0;
    for seed in 0..1000u64 {
        let k = random_kernel(seed, seed % 3 == 2);
        let d = dispatch(seed);
        let stats = fold_and_compare(&k, &d);
        let mut folded = k.clone();
        let _ = fold_constants(&mut folded);
        ops_before += k.op_count();
        ops_after += folded.op_count();
        match run(&k, &d).0 {
            Err(f) if matches!(f.kind, wavejit_ir::FaultKind::Watchdog { .. }) => watchdogs += 1,
            Err(_) => faults += 1,
            Ok(()) => {}
        }
        total.folded.insts += stats.folded.insts;
        total.folded.selects += stats.folded.selects;
        total.folded.identities += stats.folded.identities;
        total.folded.params += stats.folded.params;
        total.folded.terminators += stats.folded.terminators;
        total.dead.insts += stats.dead.insts;
        total.dead.params += stats.dead.params;
        total.dead.unreachable_blocks += stats.dead.unreachable_blocks;
        total.dead.unreachable_insts += stats.dead.unreachable_insts;
    }
    eprintln!(
        "ops {ops_before} -> {ops_after}; {total:?}; {faults} faulting, {watchdogs} watchdog kernels"
    );
    assert!(total.folded.insts > 2000, "constants fold");
    assert!(total.folded.selects > 50);
    assert!(total.folded.identities > 50);
    assert!(total.folded.params > 50, "joins and loops carry constants");
    assert!(total.folded.terminators > 50);
    assert!(total.dead.params > 50);
    assert!(total.dead.unreachable_blocks > 20);
    assert!(total.dead.unreachable_insts > 100);
    assert!(faults > 10, "faults are compared too");
    assert!(watchdogs > 5, "runaway loops are compared too");
    assert!(ops_after * 10 < ops_before * 9, "at least 10% fewer ops");
}

/// `transform::eliminate_common_subexpressions` on the same random kernels,
/// each also with a copy of every other pure instruction and builtin placed
/// right after it (so merges happen beside the constants the generator
/// repeats): the same memory and fault on the interpreter, a kernel that
/// verifies, and nothing left to merge on a second run.
#[test]
fn random_kernels_behave_the_same_after_merging_common_subexpressions() {
    let mut merged = 0;
    for seed in 0..600u64 {
        let mut k = random_kernel(seed, seed % 3 == 2);
        duplicate_some(&mut k, seed);
        verify(&k)
            .unwrap_or_else(|e| panic!("duplicated kernel does not verify: {e}\n{}", print(&k)));
        let d = dispatch(seed);
        let mut cse = k.clone();
        merged += eliminate_common_subexpressions(&mut cse).expect("verified input");
        verify(&cse)
            .unwrap_or_else(|e| panic!("{}: does not verify: {e}\n{}", k.name, print(&cse)));
        let before = run(&k, &d);
        let after = run(&cse, &d);
        assert_eq!(
            before.0.clone().map_err(|f| fault_place(&k, f)),
            after.0.clone().map_err(|f| fault_place(&cse, f)),
            "{}: fault differs\n{}\n{}",
            k.name,
            print(&k),
            print(&cse)
        );
        assert!(
            before.1 == after.1,
            "{}: memory differs\n{}\n{}",
            k.name,
            print(&k),
            print(&cse)
        );
        let mut again = cse.clone();
        assert_eq!(
            eliminate_common_subexpressions(&mut again),
            Ok(0),
            "{}",
            k.name
        );
    }
    eprintln!("{merged} instructions merged");
    assert!(merged > 5000, "{merged} merged");
}

/// Places a copy of every other instruction that has results and no memory
/// effect right after it (its results new values nobody reads yet; uses
/// after it are pointed at the copy's, half of them).
fn duplicate_some(k: &mut Kernel, seed: u64) {
    let mut rng = Rng(seed ^ 0x5eed_0000_0001);
    let blocks: Vec<Block> = k.blocks.keys().collect();
    for b in blocks {
        let old = k.blocks[b].insts.clone();
        let mut new = Vec::with_capacity(old.len() * 2);
        let mut renamed: HashMap<Value, Value> = HashMap::new();
        for inst in old {
            let rename = |v: &mut Value, renamed: &HashMap<Value, Value>| {
                if let Some(&n) = renamed.get(v) {
                    *v = n;
                }
            };
            for a in k.insts[inst].args.iter_mut() {
                rename(a, &renamed);
            }
            new.push(inst);
            let data = k.insts[inst].clone();
            let copyable = !data.results.is_empty()
                && matches!(
                    data.kind,
                    InstKind::Const { .. }
                        | InstKind::Builtin(_)
                        | InstKind::IBinary(_)
                        | InstKind::IUnary(_)
                        | InstKind::Icmp(_)
                        | InstKind::FBinary { .. }
                        | InstKind::FUnary { .. }
                        | InstKind::Fcmp { .. }
                        | InstKind::Fma { .. }
                        | InstKind::Select
                        | InstKind::Cast { .. }
                );
            if copyable && rng.below(2) == 0 {
                let results: Vec<Value> = data
                    .results
                    .iter()
                    .map(|&r| k.values.push(k.values[r]))
                    .collect();
                let copy = k.insts.push(wavejit_ir::InstData {
                    kind: data.kind.clone(),
                    args: data.args.clone(),
                    results: results.clone(),
                });
                for (i, &r) in results.iter().enumerate() {
                    k.values[r].def = wavejit_ir::ValueDef::Result {
                        inst: copy,
                        index: i as u32,
                    };
                }
                new.push(copy);
                if rng.below(2) == 0 {
                    for (&o, &n) in data.results.iter().zip(&results) {
                        renamed.insert(o, n);
                    }
                }
            }
        }
        k.blocks[b].insts = new;
        if let Some(t) = k.blocks[b].term.as_mut() {
            t.uses_mut(|v| {
                if let Some(&n) = renamed.get(v) {
                    *v = n;
                }
            });
        }
    }
}

#[test]
fn random_kernels_behave_the_same_after_hoisting_loop_invariants() {
    let (mut moved, mut reads_moved, mut reads_kept) = (0, 0, 0);
    for seed in 0..600u64 {
        let mut k = random_kernel(seed, seed % 3 == 2);
        add_uniform_reads(&mut k, seed);
        verify(&k)
            .unwrap_or_else(|e| panic!("kernel with reads does not verify: {e}\n{}", print(&k)));
        let mut d = dispatch(seed);
        // 0 to 40 bytes: some reads fault, some lanes never reach theirs.
        d.uniforms = (0..(seed % 11) * 4).map(|b| b as u8).collect();
        let mut hoisted = k.clone();
        moved += hoist_loop_invariants(&mut hoisted).expect("verified input");
        verify(&hoisted)
            .unwrap_or_else(|e| panic!("{}: does not verify: {e}\n{}", k.name, print(&hoisted)));
        let before = run(&k, &d);
        let after = run(&hoisted, &d);
        assert_eq!(
            before.0.clone().map_err(|f| fault_place(&k, f)),
            after.0.clone().map_err(|f| fault_place(&hoisted, f)),
            "{}: fault differs\n{}\n{}",
            k.name,
            print(&k),
            print(&hoisted)
        );
        assert!(
            before.1 == after.1,
            "{}: memory differs\n{}\n{}",
            k.name,
            print(&k),
            print(&hoisted)
        );
        // Where each uniform read ended up: in a block of its own or not.
        for (b, data) in hoisted.blocks.iter() {
            for &i in &data.insts {
                if matches!(&hoisted.insts[i].kind, InstKind::Load(a) if a.space == AddrSpace::Uniform)
                {
                    if k.blocks[b].insts.contains(&i) {
                        reads_kept += 1;
                    } else {
                        reads_moved += 1;
                    }
                }
            }
        }
    }
    eprintln!("{moved} instructions moved; uniform reads: {reads_moved} moved, {reads_kept} kept");
    assert!(moved > 2000, "{moved} moved");
    assert!(
        reads_moved > 50 && reads_kept > 50,
        "{reads_moved} / {reads_kept}"
    );
}

/// Puts a uniform read at a constant offset (0 to 40, some misaligned) at a
/// random place of about half the blocks, the entry's first.
fn add_uniform_reads(k: &mut Kernel, seed: u64) {
    let mut rng = Rng(seed ^ 0x5eed_0000_0002);
    let blocks: Vec<Block> = k.blocks.keys().collect();
    for b in blocks {
        if b.as_u32() != 0 && rng.below(2) == 0 {
            continue;
        }
        let off = if rng.below(8) == 0 {
            rng.below(40)
        } else {
            rng.below(11) * 4
        };
        let c = k.values.push(wavejit_ir::ValueData {
            ty: Type::I32,
            def: wavejit_ir::ValueDef::Param { block: b, index: 0 },
        });
        let r = k.values.push(wavejit_ir::ValueData {
            ty: Type::I32,
            def: wavejit_ir::ValueDef::Param { block: b, index: 0 },
        });
        let ci = k.insts.push(wavejit_ir::InstData {
            kind: InstKind::Const {
                ty: Type::I32,
                bits: off,
            },
            args: vec![],
            results: vec![c],
        });
        let li = k.insts.push(wavejit_ir::InstData {
            kind: InstKind::Load(MemAccess::scalar(AddrSpace::Uniform, Type::I32)),
            args: vec![c],
            results: vec![r],
        });
        k.values[c].def = wavejit_ir::ValueDef::Result { inst: ci, index: 0 };
        k.values[r].def = wavejit_ir::ValueDef::Result { inst: li, index: 0 };
        let insts = &mut k.blocks[b].insts;
        let at = rng.below(insts.len() as u64 + 1) as usize;
        insts.splice(at..at, [ci, li]);
    }
}
