//! A generator of random valid kernels for differential testing, driven by a
//! stream of choices (so proptest shrinks kernels by shrinking the stream).
//!
//! Kernels mix integer and float arithmetic of every type with random float
//! modes, divergent if/else, loops with per-lane trip counts, barriers (also in
//! loops), cross-lane operations, shared/private/uniform/global memory, atomics,
//! and lane-dependent faults. Global memory is written only at addresses owned by
//! the lane (its output slot) or by commutative atomics whose old value is unused,
//! so results do not depend on how workgroups interleave; everything inside a
//! workgroup follows the interpreter's schedule exactly and may race freely.
//!
//! [`case`] is the original generator; [`gang_case`] (in `gang.rs`) adds the
//! shapes and patterns of a SIMD gang core (partial gangs, masked and
//! gang-straddling faults, contiguous/uniform/scattered addresses, barriers in
//! loops, reductions, unstructured CFGs) on top of the same statements. Its
//! memory map adds areas with one writing lane per byte and a slot per
//! workgroup that only that workgroup's lanes touch, so the rule above holds.
#![allow(dead_code)]

mod gang;

pub use gang::{GANG, Layout, Site, Tags, gang_case};

use wavejit_ir::{
    AddrSpace, AtomicOp, Block, BlockCall, Builtin, CastOp, Denorm, Dispatch, FBinOp, FUnOp,
    FloatCC, FloatFormat, FloatMode, IBinOp, IUnOp, InstKind, IntCC, Kernel, MemAccess, NanMode,
    ReduceOp, Round, ShuffleKind, SpecialFn, Type, Value,
};

use crate::support::{BUF, RO};

/// Bytes of counters at the start of the writable buffer.
pub const COUNTERS: u64 = 64;
/// Output words per lane.
pub const OUT_WORDS: u64 = 12;
pub const RO_BYTES: usize = 512;
pub const SHARED_BYTES: u32 = 256;
pub const PRIVATE_BYTES: u32 = 32;

pub struct Case {
    pub kernel: Kernel,
    pub dispatch: Dispatch,
    pub rw: Vec<u8>,
    pub ro: Vec<u8>,
    /// What the generator emitted (gang patterns only; all zero for [`case`]).
    pub tags: Tags,
}

struct Gen<'c> {
    ch: &'c [u32],
    pos: usize,
    k: Kernel,
    cur: Block,
    pool: Vec<Value>,
    depth: u32,
    budget: u32,
    /// The lane's output base address (i64) and global id (i32).
    out: Value,
    gid: Value,
    /// Local index (i32): also `pool[0]`, which `cond` relies on.
    li: Value,
    /// Sizes behind the rare out-of-range offsets (`offset`'s `oob`).
    shared_size: u32,
    ro_bytes: u32,
    /// The memory map of a gang case (`None` for [`case`]).
    gang: Option<Layout>,
    tags: Tags,
}

const INT_TYPES: [Type; 4] = [Type::I8, Type::I16, Type::I32, Type::I64];
const FLOAT_TYPES: [Type; 3] = [Type::F16, Type::F32, Type::F64];

const IUN: [IUnOp; 8] = [
    IUnOp::Not,
    IUnOp::Neg,
    IUnOp::Abs,
    IUnOp::Clz,
    IUnOp::Ctz,
    IUnOp::Popcnt,
    IUnOp::Bitrev,
    IUnOp::Bswap,
];
const FBIN: [FBinOp; 9] = [
    FBinOp::Add,
    FBinOp::Sub,
    FBinOp::Mul,
    FBinOp::Div,
    FBinOp::Min,
    FBinOp::Max,
    FBinOp::Minimum,
    FBinOp::Maximum,
    FBinOp::Copysign,
];
const FCC: [FloatCC; 14] = [
    FloatCC::Eq,
    FloatCC::Ne,
    FloatCC::Lt,
    FloatCC::Le,
    FloatCC::Gt,
    FloatCC::Ge,
    FloatCC::Ord,
    FloatCC::Uno,
    FloatCC::Ueq,
    FloatCC::Une,
    FloatCC::Ult,
    FloatCC::Ule,
    FloatCC::Ugt,
    FloatCC::Uge,
];
const ATOMIC: [AtomicOp; 13] = [
    AtomicOp::Add,
    AtomicOp::Sub,
    AtomicOp::MinU,
    AtomicOp::MinS,
    AtomicOp::MaxU,
    AtomicOp::MaxS,
    AtomicOp::And,
    AtomicOp::Or,
    AtomicOp::Xor,
    AtomicOp::Xchg,
    AtomicOp::CmpXchg,
    AtomicOp::IncWrap,
    AtomicOp::DecWrap,
];
/// Atomics whose final memory does not depend on the order of lanes.
const COMMUTATIVE: [AtomicOp; 7] = [
    AtomicOp::Add,
    AtomicOp::MinU,
    AtomicOp::MinS,
    AtomicOp::MaxU,
    AtomicOp::MaxS,
    AtomicOp::And,
    AtomicOp::Or,
];
const REDUCE: [ReduceOp; 12] = [
    ReduceOp::Add,
    ReduceOp::Mul,
    ReduceOp::MinU,
    ReduceOp::MinS,
    ReduceOp::MaxU,
    ReduceOp::MaxS,
    ReduceOp::And,
    ReduceOp::Or,
    ReduceOp::Xor,
    ReduceOp::FAdd,
    ReduceOp::FMin,
    ReduceOp::FMax,
];

/// Interesting float bit patterns per width (zeros, denormals, NaNs, infinities).
fn special_float(ty: Type, k: u32) -> u64 {
    let f32s: [u32; 12] = [
        0,
        0x8000_0000,
        0x3f80_0000,
        0xbf80_0000,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0x7f80_0001,
        0x0000_0001,
        0x807f_ffff,
        0x7f7f_ffff,
        0x3f00_0000,
    ];
    let f16s: [u16; 12] = [
        0, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0x0001, 0x83ff, 0x7bff, 0x3800,
    ];
    let f64s: [u64; 12] = [
        0,
        0x8000_0000_0000_0000,
        0x3ff0_0000_0000_0000,
        0xbff0_0000_0000_0000,
        0x7ff0_0000_0000_0000,
        0xfff0_0000_0000_0000,
        0x7ff8_0000_0000_0000,
        0x7ff0_0000_0000_0001,
        1,
        0x800f_ffff_ffff_ffff,
        0x7fef_ffff_ffff_ffff,
        0x3fe0_0000_0000_0000,
    ];
    let i = (k % 12) as usize;
    match ty {
        Type::F16 => u64::from(f16s[i]),
        Type::F32 => u64::from(f32s[i]),
        _ => f64s[i],
    }
}

impl<'c> Gen<'c> {
    fn next(&mut self) -> u32 {
        let v = self.ch.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        v
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        let i = self.next() as usize % xs.len();
        xs[i]
    }

    fn ty(&self, v: Value) -> Type {
        self.k.value_type(v)
    }

    fn ins(&mut self, kind: InstKind, args: &[Value]) -> Vec<Value> {
        let i = self.k.append_inst(self.cur, kind, args);
        self.k.set_srcloc(i, 0x1000 + u64::from(i.as_u32()) * 4);
        self.k.insts[i].results.clone()
    }

    fn ins1(&mut self, kind: InstKind, args: &[Value]) -> Value {
        self.ins(kind, args)[0]
    }

    fn konst(&mut self, ty: Type, bits: u64) -> Value {
        self.ins1(
            InstKind::Const {
                ty,
                bits: bits & ty.mask(),
            },
            &[],
        )
    }

    /// A value of `ty` from the pool, or a fresh constant.
    fn val(&mut self, ty: Type) -> Value {
        let have: Vec<Value> = self
            .pool
            .iter()
            .copied()
            .filter(|&v| self.ty(v) == ty)
            .collect();
        let c = self.next();
        if !have.is_empty() && !c.is_multiple_of(8) {
            return have[(c as usize / 8) % have.len()];
        }
        let r = self.next();
        let bits = if ty.is_float() && r.is_multiple_of(2) {
            special_float(ty, r / 2)
        } else {
            u64::from(r) | (u64::from(self.next()) << 32)
        };
        self.konst(ty, bits)
    }

    fn push(&mut self, v: Value) {
        self.pool.push(v);
    }

    fn mode(&mut self) -> FloatMode {
        let c = self.next();
        if c.is_multiple_of(3) {
            return FloatMode::IEEE;
        }
        let d = |b: u32| {
            if b & 1 == 0 {
                Denorm::Preserve
            } else {
                Denorm::FlushKeepSign
            }
        };
        FloatMode {
            denorm_in: d(c >> 2),
            // Flushing before rounding is a result rule only.
            denorm_out: match (d(c >> 3), (c >> 12) & 1) {
                (Denorm::FlushKeepSign, 1) => Denorm::FlushBeforeRounding,
                (rule, _) => rule,
            },
            nan: if (c >> 4) & 1 == 0 {
                NanMode::Propagate
            } else {
                NanMode::Canonical(0x7fff_ffff_ffff_ffff)
            },
            round: Round::ALL[((c >> 5) % 5) as usize],
            sat: (c >> 8).is_multiple_of(4),
            flags: (c >> 10).is_multiple_of(4),
        }
    }

    /// Canonical NaN patterns must be a NaN of the result format; instructions
    /// without a float result (`None`) only propagate.
    fn fix_nan(mode: FloatMode, to: Option<FloatFormat>) -> FloatMode {
        let nan = match (mode.nan, to) {
            (NanMode::Canonical(_), Some(f)) => match f {
                FloatFormat::F16 => NanMode::Canonical(0x7e00),
                FloatFormat::Bf16 => NanMode::Canonical(0x7fc0),
                FloatFormat::F32 => NanMode::Canonical(0x7fc0_0000),
                FloatFormat::F64 => NanMode::Canonical(0x7ff8_0000_0000_0000),
                FloatFormat::E4m3 => NanMode::Canonical(0x7f),
                FloatFormat::E5m2 => NanMode::Canonical(0x7e),
                FloatFormat::E2m1 => NanMode::Propagate,
            },
            _ => NanMode::Propagate,
        };
        FloatMode { nan, ..mode }
    }

    fn push_results(&mut self, rs: Vec<Value>) {
        for r in rs {
            self.push(r);
        }
    }

    fn stmt(&mut self) {
        if self.budget == 0 {
            return;
        }
        self.budget -= 1;
        // Gang cases draw from a wider range: 100..=128 are the gang patterns.
        let c = self.next() % if self.gang.is_some() { 129 } else { 100 };
        match c {
            0..=17 => self.int_binary(),
            18..=22 => {
                let ty = self.pick(&INT_TYPES);
                let op = self.pick(&IUN);
                let a = self.val(ty);
                let r = self.ins1(InstKind::IUnary(op), &[a]);
                self.push(r);
            }
            23..=27 => {
                let ty = self.pick(&[Type::I1, Type::I8, Type::I16, Type::I32, Type::I64]);
                let cc = self.pick(IntCC::ALL);
                let (a, b) = (self.val(ty), self.val(ty));
                let cnd = self.ins1(InstKind::Icmp(cc), &[a, b]);
                self.push(cnd);
                let t2 = self.pick(&[Type::I32, Type::I64, Type::F32, Type::I1]);
                let (x, y) = (self.val(t2), self.val(t2));
                let s = self.ins1(InstKind::Select, &[cnd, x, y]);
                self.push(s);
            }
            28..=32 => self.cast(),
            33..=47 => self.float(),
            48..=50 => {
                let ty = self.pick(&INT_TYPES);
                let (v, o, w) = (self.val(ty), self.val(Type::I32), self.val(Type::I32));
                let signed = self.next().is_multiple_of(2);
                let r = if self.next().is_multiple_of(2) {
                    self.ins1(InstKind::BitExtract { signed }, &[v, o, w])
                } else {
                    let ins = self.val(ty);
                    self.ins1(InstKind::BitInsert, &[v, ins, o, w])
                };
                self.push(r);
            }
            51..=54 if self.depth < 3 => self.if_else(),
            55 if self.depth < 3 => self.switch(),
            56 if self.depth < 3 => self.early_exit(),
            57..=60 if self.depth < 2 => self.looped(false),
            96..=97 if self.depth < 2 => self.do_while(),
            61..=63 => {
                self.ins(InstKind::Barrier, &[]);
            }
            64..=70 => self.cross_lane(),
            71..=77 => self.shared_mem(),
            78..=80 => self.private_mem(),
            81..=84 => self.global_mem(),
            85..=88 => self.atomics(),
            89 => self.maybe_trap(),
            90..=91 => {
                let off = self.next() % 72;
                let ty = self.pick(&[Type::I8, Type::I32, Type::I64]);
                let o = self.konst(Type::I32, u64::from(off & !(ty.bytes() - 1)));
                let r = self.ins1(
                    InstKind::Load(MemAccess::scalar(AddrSpace::Uniform, ty)),
                    &[o],
                );
                self.push(r);
            }
            92..=95 => {
                let which = self.pick(&[
                    Builtin::LocalId(1),
                    Builtin::WorkgroupId(1),
                    Builtin::NumWorkgroups(0),
                    Builtin::LaneId,
                    Builtin::WaveId,
                    Builtin::WaveSize,
                    Builtin::LocalIndex,
                    Builtin::WorkgroupSize(2),
                ]);
                let r = self.ins1(InstKind::Builtin(which), &[]);
                self.push(r);
            }
            100..=128 => self.gang_stmt(c - 100),
            _ => self.int_binary(),
        }
    }

    fn int_binary(&mut self) {
        let op = self.pick(IBinOp::ALL);
        let ty = if matches!(op, IBinOp::And | IBinOp::Or | IBinOp::Xor)
            && self.next().is_multiple_of(4)
        {
            Type::I1
        } else {
            self.pick(&INT_TYPES)
        };
        let (a, b) = (self.val(ty), self.val(ty));
        let r = self.ins1(InstKind::IBinary(op), &[a, b]);
        self.push(r);
    }

    fn cast(&mut self) {
        let all = [Type::I1, Type::I8, Type::I16, Type::I32, Type::I64];
        let from = self.pick(&all);
        let to = self.pick(&all);
        let a = self.val(from);
        let op = if to.bits() > from.bits() && to != Type::I1 {
            if self.next().is_multiple_of(2) {
                CastOp::Zext
            } else {
                CastOp::Sext
            }
        } else if to.bits() < from.bits() {
            CastOp::Trunc
        } else {
            // Same width: reinterpret between int and float.
            let ft = match from {
                Type::I16 => Type::F16,
                Type::I32 => Type::F32,
                Type::I64 => Type::F64,
                _ => return,
            };
            let r = self.ins1(
                InstKind::Cast {
                    op: CastOp::Bitcast,
                    to: ft,
                },
                &[a],
            );
            self.push(r);
            return;
        };
        let r = self.ins1(InstKind::Cast { op, to }, &[a]);
        self.push(r);
    }

    fn float(&mut self) {
        let ty = self.pick(&FLOAT_TYPES);
        let mode = self.mode();
        let fmt = FloatFormat::of_type(ty);
        let mode = Self::fix_nan(mode, fmt);
        let c = self.next() % 12;
        let rs = match c {
            0..=2 => {
                let op = self.pick(&FBIN);
                let (a, b) = (self.val(ty), self.val(ty));
                self.ins(InstKind::FBinary { op, mode }, &[a, b])
            }
            3 => {
                let op = self.pick(FUnOp::ALL);
                let a = self.val(ty);
                self.ins(InstKind::FUnary { op, mode }, &[a])
            }
            4 => {
                let (a, b, d) = (self.val(ty), self.val(ty), self.val(ty));
                self.ins(InstKind::Fma { mode }, &[a, b, d])
            }
            5 => {
                let cc = self.pick(&FCC);
                let mode = Self::fix_nan(mode, None);
                let (a, b) = (self.val(ty), self.val(ty));
                self.ins(InstKind::Fcmp { cc, mode }, &[a, b])
            }
            6 => {
                let a = self.val(ty);
                let mode = FloatMode {
                    flags: false,
                    ..Self::fix_nan(mode, None)
                };
                self.ins(InstKind::Fclass { mode }, &[a])
            }
            7 => {
                let func = self.pick(SpecialFn::ALL);
                let a = self.val(ty);
                self.ins(InstKind::Special { func, mode }, &[a])
            }
            8 => {
                let from = self.pick(&FloatFormat::ALL);
                let to = self.pick(&FloatFormat::ALL);
                if from == to {
                    return;
                }
                let mode = Self::fix_nan(mode, Some(to));
                let a = self.val(from.storage());
                self.ins(InstKind::Fcvt { from, to, mode }, &[a])
            }
            9 => {
                let from = self.pick(&FloatFormat::ALL);
                let to = self.pick(&INT_TYPES);
                let signed = self.next().is_multiple_of(2);
                let nan_to_max = self.next().is_multiple_of(2);
                let a = self.val(from.storage());
                let mode = Self::fix_nan(mode, None);
                self.ins(
                    InstKind::FToI {
                        from,
                        to,
                        signed,
                        nan_to_max,
                        mode,
                    },
                    &[a],
                )
            }
            11 => {
                let (a, b, d) = (
                    self.val(Type::F32),
                    self.val(Type::F32),
                    self.val(Type::F32),
                );
                let mode = Self::fix_nan(mode, Some(FloatFormat::F32));
                self.ins(InstKind::PowFixup { mode }, &[a, b, d])
            }
            _ => {
                let to = self.pick(&FloatFormat::ALL);
                let signed = self.next().is_multiple_of(2);
                let from = self.pick(&INT_TYPES);
                let a = self.val(from);
                let mode = Self::fix_nan(mode, Some(to));
                self.ins(InstKind::IToF { to, signed, mode }, &[a])
            }
        };
        self.push_results(rs);
    }

    /// A lane-dependent condition.
    fn cond(&mut self) -> Value {
        let x = self.val(Type::I32);
        let lane = self.pool[0];
        let mixed = self.ins1(InstKind::IBinary(IBinOp::Xor), &[x, lane]);
        let sh = self.next() % 4;
        let bit = self.konst(Type::I32, 1u64 << sh);
        let m = self.ins1(InstKind::IBinary(IBinOp::And), &[mixed, bit]);
        let z = self.konst(Type::I32, 0);
        self.ins1(InstKind::Icmp(IntCC::Ne), &[m, z])
    }

    fn body(&mut self, n: u32) {
        self.depth += 1;
        for _ in 0..n {
            self.stmt();
        }
        self.depth -= 1;
    }

    fn if_else(&mut self) {
        let cnd = if self.next().is_multiple_of(4) {
            self.val(Type::I1)
        } else {
            self.cond()
        };
        let ty = self.pick(&[Type::I32, Type::I64, Type::F32, Type::I1, Type::I16]);
        let then = self.k.add_block();
        let other = self.k.add_block();
        let merge = self.k.add_block();
        let p = self.k.add_block_param(merge, ty);
        self.k.set_terminator(
            self.cur,
            wavejit_ir::Terminator::Branch {
                cond: cnd,
                then: BlockCall::new(then, &[]),
                otherwise: BlockCall::new(other, &[]),
            },
        );
        let saved = self.pool.clone();
        for blk in [then, other] {
            self.cur = blk;
            let n = 1 + self.next() % 4;
            self.body(n);
            let v = self.val(ty);
            self.k.set_terminator(
                self.cur,
                wavejit_ir::Terminator::Jump(BlockCall::new(merge, &[v])),
            );
            self.pool = saved.clone();
        }
        self.cur = merge;
        self.push(p);
    }

    /// A per-lane table jump over up to three targets plus a default, joining
    /// in a block with one parameter.
    fn switch(&mut self) {
        let x = self.val(Type::I32);
        let lane = self.pool[0];
        let idx = self.ins1(InstKind::IBinary(IBinOp::Xor), &[x, lane]);
        let three = self.konst(Type::I32, 3);
        let idx = self.ins1(InstKind::IBinary(IBinOp::And), &[idx, three]);
        let ty = self.pick(&[Type::I32, Type::I64]);
        let n = 1 + self.next() % 3;
        let merge = self.k.add_block();
        let p = self.k.add_block_param(merge, ty);
        let targets: Vec<Block> = (0..=n).map(|_| self.k.add_block()).collect();
        let calls: Vec<BlockCall> = targets[..n as usize]
            .iter()
            .map(|&t| BlockCall::new(t, &[]))
            .collect();
        self.k.set_terminator(
            self.cur,
            wavejit_ir::Terminator::Table {
                index: idx,
                targets: calls,
                default: BlockCall::new(targets[n as usize], &[]),
            },
        );
        let saved = self.pool.clone();
        for t in targets {
            self.cur = t;
            let m = self.next() % 3;
            self.body(m);
            let v = self.val(ty);
            self.k.set_terminator(
                self.cur,
                wavejit_ir::Terminator::Jump(BlockCall::new(merge, &[v])),
            );
            self.pool = saved.clone();
        }
        self.cur = merge;
        self.push(p);
    }

    /// Some lanes store a marker to their output and exit early.
    fn early_exit(&mut self) {
        let cnd = self.cond();
        let leave = self.k.add_block();
        let cont = self.k.add_block();
        self.k.set_terminator(
            self.cur,
            wavejit_ir::Terminator::Branch {
                cond: cnd,
                then: BlockCall::new(leave, &[]),
                otherwise: BlockCall::new(cont, &[]),
            },
        );
        self.cur = leave;
        let tag = u64::from(self.next() % 0x1000);
        let marker = self.konst(Type::I64, 0xdead_0000 + tag);
        self.ins(
            InstKind::Store(MemAccess::scalar(AddrSpace::Global, Type::I64)),
            &[self.out, marker],
        );
        self.k.set_terminator(leave, wavejit_ir::Terminator::Exit);
        self.cur = cont;
    }

    /// A loop's lane-dependent trip bound (0..=3), the type of the value it
    /// carries and that value's start.
    fn loop_start(&mut self) -> (Value, Type, Value) {
        let x = self.val(Type::I32);
        let lane = self.pool[0];
        let mixed = self.ins1(InstKind::IBinary(IBinOp::Add), &[x, lane]);
        let three = self.konst(Type::I32, 3);
        let n = self.ins1(InstKind::IBinary(IBinOp::And), &[mixed, three]);
        let ty = self.pick(&[Type::I32, Type::I64, Type::F32]);
        (n, ty, self.val(ty))
    }

    /// `barrier`: a barrier opens the body (a barrier in a divergent loop).
    fn looped(&mut self, barrier: bool) {
        // Trip count 0..=3 plus a lane-dependent part.
        let (n, ty, init) = self.loop_start();
        let head = self.k.add_block();
        let body = self.k.add_block();
        let exit = self.k.add_block();
        let i = self.k.add_block_param(head, Type::I32);
        let acc = self.k.add_block_param(head, ty);
        let zero = self.konst(Type::I32, 0);
        self.k.set_terminator(
            self.cur,
            wavejit_ir::Terminator::Jump(BlockCall::new(head, &[zero, init])),
        );
        self.cur = head;
        let more = self.ins1(InstKind::Icmp(IntCC::Ult), &[i, n]);
        self.k.set_terminator(
            head,
            wavejit_ir::Terminator::Branch {
                cond: more,
                then: BlockCall::new(body, &[]),
                otherwise: BlockCall::new(exit, &[]),
            },
        );
        let saved = self.pool.clone();
        self.cur = body;
        if barrier {
            self.ins(InstKind::Barrier, &[]);
            self.tags.barrier_divergent_loop += 1;
        }
        self.push(i);
        self.push(acc);
        let n_stmts = 1 + self.next() % 5;
        self.body(n_stmts);
        let next_acc = self.val(ty);
        let one = self.konst(Type::I32, 1);
        let i1 = self.ins1(InstKind::IBinary(IBinOp::Add), &[i, one]);
        self.k.set_terminator(
            self.cur,
            wavejit_ir::Terminator::Jump(BlockCall::new(head, &[i1, next_acc])),
        );
        self.pool = saved;
        self.cur = exit;
        self.push(acc);
    }

    /// A bottom-tested loop in one block that branches to itself (1..=4 trips,
    /// lane-dependent). Its body is straight-line: without stores, barriers
    /// or cross-lane operations the JIT runs it per lane to the end.
    fn do_while(&mut self) {
        let (n, ty, init) = self.loop_start();
        let body = self.k.add_block();
        let exit = self.k.add_block();
        let i = self.k.add_block_param(body, Type::I32);
        let acc = self.k.add_block_param(body, ty);
        let zero = self.konst(Type::I32, 0);
        self.k.set_terminator(
            self.cur,
            wavejit_ir::Terminator::Jump(BlockCall::new(body, &[zero, init])),
        );
        let saved = self.pool.clone();
        self.cur = body;
        self.push(i);
        self.push(acc);
        // `body` adds one: at depth 3 nothing nests, so the loop stays one block.
        let depth = std::mem::replace(&mut self.depth, 2);
        let n_stmts = 1 + self.next() % 5;
        self.body(n_stmts);
        self.depth = depth;
        let next_acc = self.val(ty);
        let one = self.konst(Type::I32, 1);
        let i1 = self.ins1(InstKind::IBinary(IBinOp::Add), &[i, one]);
        let more = self.ins1(InstKind::Icmp(IntCC::Ule), &[i1, n]);
        self.k.set_terminator(
            self.cur,
            wavejit_ir::Terminator::Branch {
                cond: more,
                then: BlockCall::new(body, &[i1, next_acc]),
                otherwise: BlockCall::new(exit, &[]),
            },
        );
        self.pool = saved;
        self.cur = exit;
        // The exit block reads the loop's final parameters and last values.
        self.push(acc);
        self.push(next_acc);
    }

    fn cross_lane(&mut self) {
        let mask = if self.next().is_multiple_of(3) {
            self.konst(Type::I1, 1)
        } else {
            self.val(Type::I1)
        };
        let c = self.next() % 9;
        let r = match c {
            0 => {
                let x = self.val(Type::I1);
                self.ins1(InstKind::Ballot, &[mask, x])
            }
            1 => {
                let x = self.val(Type::I1);
                let k = if self.next().is_multiple_of(2) {
                    InstKind::VoteAny
                } else {
                    InstKind::VoteAll
                };
                self.ins1(k, &[mask, x])
            }
            2 => self.ins1(InstKind::FirstActive, &[mask]),
            3 => self.ins1(InstKind::Elect, &[mask]),
            4 | 5 => {
                let ty = self.pick(&[Type::I32, Type::I64, Type::F32, Type::I8]);
                let v = self.val(ty);
                let n = self.val(Type::I32);
                let seven = self.konst(Type::I32, 7);
                let n = self.ins1(InstKind::IBinary(IBinOp::And), &[n, seven]);
                let kind = if c == 4 {
                    InstKind::ReadLane
                } else {
                    InstKind::Shuffle(self.pick(&[
                        ShuffleKind::Index,
                        ShuffleKind::Xor,
                        ShuffleKind::Up,
                        ShuffleKind::Down,
                    ]))
                };
                self.ins1(kind, &[mask, v, n])
            }
            6 => {
                let ty = self.pick(&[Type::I32, Type::F64, Type::I16]);
                let v = self.val(ty);
                self.ins1(InstKind::ReadFirst, &[mask, v])
            }
            _ => {
                let op = self.pick(&REDUCE);
                let ty = if op.is_float() {
                    self.pick(&FLOAT_TYPES)
                } else {
                    self.pick(&INT_TYPES)
                };
                let v = self.val(ty);
                if c == 7 {
                    self.ins1(InstKind::Reduce(op), &[mask, v])
                } else {
                    let inclusive = self.next().is_multiple_of(2);
                    self.ins1(InstKind::Scan { op, inclusive }, &[mask, v])
                }
            }
        };
        self.push(r);
    }

    /// An i32 offset `(x & mask) * elem` inside `limit` bytes; rarely misaligned
    /// or out of range (moved up by `oob`, the size of the space).
    fn offset(&mut self, limit: u32, elem: u32, oob: u32) -> Value {
        let x = self.val(Type::I32);
        let c = self.next();
        let slots = (limit / elem).max(1);
        // The largest power of two not above `slots`.
        let pow2 = 1u32 << (31 - slots.leading_zeros());
        let m = self.konst(Type::I32, u64::from(pow2 - 1));
        let idx = self.ins1(InstKind::IBinary(IBinOp::And), &[x, m]);
        let s = self.konst(Type::I32, u64::from(elem));
        let off = self.ins1(InstKind::IBinary(IBinOp::Mul), &[idx, s]);
        let bump = match c % 32 {
            0 => 1,
            1 => oob,
            _ => return off,
        };
        let k = self.konst(Type::I32, u64::from(bump));
        self.ins1(InstKind::IBinary(IBinOp::Add), &[off, k])
    }

    fn shared_mem(&mut self) {
        let ty = self.pick(&[Type::I32, Type::I64, Type::F32, Type::I16]);
        let off = self.offset(SHARED_BYTES, 8, self.shared_size);
        let c = self.next();
        if c % 5 == 4 && ty.is_int() {
            // Narrow or vector stores.
            let mut a = MemAccess::scalar(AddrSpace::Shared, ty);
            let mut args = vec![off, self.val(ty)];
            if ty.bits() > 8 && c.is_multiple_of(2) {
                a.bits = 8;
                a.align = 1;
            } else {
                a.count = 2;
                args.push(self.val(ty));
            }
            self.ins(InstKind::Store(a), &args);
            return;
        }
        if self.next().is_multiple_of(2) {
            let v = self.val(ty);
            self.ins(
                InstKind::Store(MemAccess::scalar(AddrSpace::Shared, ty)),
                &[off, v],
            );
        } else {
            let mut a = MemAccess::scalar(AddrSpace::Shared, ty);
            if ty == Type::I32 && self.next().is_multiple_of(2) {
                a.bits = 16;
                a.signed = self.next().is_multiple_of(2);
                a.align = 2;
            }
            if ty == Type::I16 && self.next().is_multiple_of(3) {
                a.count = 2;
            }
            let rs = self.ins(InstKind::Load(a), &[off]);
            self.push_results(rs);
        }
    }

    fn private_mem(&mut self) {
        let ty = self.pick(&[Type::I32, Type::I64, Type::I8]);
        let off = self.offset(PRIVATE_BYTES, 8, PRIVATE_BYTES);
        if self.next().is_multiple_of(2) {
            let v = self.val(ty);
            self.ins(
                InstKind::Store(MemAccess::scalar(AddrSpace::Private, ty)),
                &[off, v],
            );
        } else {
            let r = self.ins1(
                InstKind::Load(MemAccess::scalar(AddrSpace::Private, ty)),
                &[off],
            );
            self.push(r);
        }
    }

    fn global_mem(&mut self) {
        if self.next().is_multiple_of(2) {
            // Read-only buffer, anywhere (sometimes past its end).
            let off = self.offset(RO_BYTES as u32, 8, self.ro_bytes);
            let off64 = self.ins1(
                InstKind::Cast {
                    op: CastOp::Zext,
                    to: Type::I64,
                },
                &[off],
            );
            let base = self.konst(Type::I64, RO);
            let addr = self.ins1(InstKind::IBinary(IBinOp::Add), &[base, off64]);
            let ty = self.pick(&[Type::I32, Type::I64, Type::F64]);
            let mut a = MemAccess::scalar(AddrSpace::Global, ty);
            if ty == Type::I32 && self.next().is_multiple_of(2) {
                a.count = 2;
            }
            let rs = self.ins(InstKind::Load(a), &[addr]);
            self.push_results(rs);
        } else {
            // The lane's own output words (the last one is scratch).
            let w = OUT_WORDS - 1;
            let o = self.konst(Type::I64, w * 8);
            let addr = self.ins1(InstKind::IBinary(IBinOp::Add), &[self.out, o]);
            let ty = self.pick(&[Type::I32, Type::I64]);
            if self.next().is_multiple_of(2) {
                let v = self.val(ty);
                self.ins(
                    InstKind::Store(MemAccess::scalar(AddrSpace::Global, ty)),
                    &[addr, v],
                );
            } else {
                let r = self.ins1(
                    InstKind::Load(MemAccess::scalar(AddrSpace::Global, ty)),
                    &[addr],
                );
                self.push(r);
            }
        }
    }

    fn atomics(&mut self) {
        let ty = self.pick(&[Type::I32, Type::I64]);
        let c = self.next() % 3;
        if c == 0 {
            // Shared: any op, old value used (the workgroup's order is exact).
            let op = self.pick(&ATOMIC);
            let off = self.offset(SHARED_BYTES, 8, self.shared_size);
            let mut args = vec![off, self.val(ty)];
            if op == AtomicOp::CmpXchg {
                args.push(self.val(ty));
            }
            let r = self.ins1(
                InstKind::Atomic {
                    space: AddrSpace::Shared,
                    op,
                    ty,
                },
                &args,
            );
            self.push(r);
        } else if c == 1 {
            // Global counters, old value unused: each counter has one fixed
            // commutative op and width, so the final value does not depend on
            // the order (mixing ops or widths would).
            let slot = self.next() % (COUNTERS as u32 / 8);
            let op = COMMUTATIVE[slot as usize % COMMUTATIVE.len()];
            let ty = if slot < 4 { Type::I32 } else { Type::I64 };
            let addr = self.konst(Type::I64, BUF + u64::from(slot) * 8);
            let v = self.val(ty);
            self.ins(
                InstKind::Atomic {
                    space: AddrSpace::Global,
                    op,
                    ty,
                },
                &[addr, v],
            );
        } else {
            // The lane's own scratch word: any op, old value used.
            let op = self.pick(&ATOMIC);
            let o = self.konst(Type::I64, (OUT_WORDS - 1) * 8);
            let addr = self.ins1(InstKind::IBinary(IBinOp::Add), &[self.out, o]);
            let mut args = vec![addr, self.val(ty)];
            if op == AtomicOp::CmpXchg {
                args.push(self.val(ty));
            }
            let r = self.ins1(
                InstKind::Atomic {
                    space: AddrSpace::Global,
                    op,
                    ty,
                },
                &args,
            );
            self.push(r);
        }
    }

    fn maybe_trap(&mut self) {
        if self.depth >= 3 {
            return;
        }
        let cnd = self.cond();
        let extra = self.next() % 4;
        let more = self.konst(Type::I32, u64::from(extra));
        let _ = more;
        let trap = self.k.add_block();
        let cont = self.k.add_block();
        self.k.set_terminator(
            self.cur,
            wavejit_ir::Terminator::Branch {
                cond: cnd,
                then: BlockCall::new(trap, &[]),
                otherwise: BlockCall::new(cont, &[]),
            },
        );
        self.cur = trap;
        let code = self.next() % 100;
        self.ins(InstKind::Trap { code }, &[]);
        self.k.set_terminator(trap, wavejit_ir::Terminator::Exit);
        self.cur = cont;
    }

    /// Stores up to `OUT_WORDS - 1` pool values (newest first) to the lane's output.
    fn finish(&mut self) {
        let vals: Vec<Value> = self
            .pool
            .iter()
            .rev()
            .take(OUT_WORDS as usize - 1)
            .copied()
            .collect();
        for (j, v) in vals.into_iter().enumerate() {
            let ty = self.ty(v);
            let bits = match ty {
                Type::F16 => self.ins1(
                    InstKind::Cast {
                        op: CastOp::Bitcast,
                        to: Type::I16,
                    },
                    &[v],
                ),
                Type::F32 => self.ins1(
                    InstKind::Cast {
                        op: CastOp::Bitcast,
                        to: Type::I32,
                    },
                    &[v],
                ),
                Type::F64 => self.ins1(
                    InstKind::Cast {
                        op: CastOp::Bitcast,
                        to: Type::I64,
                    },
                    &[v],
                ),
                _ => v,
            };
            let w = if self.ty(bits) == Type::I64 {
                bits
            } else {
                self.ins1(
                    InstKind::Cast {
                        op: CastOp::Zext,
                        to: Type::I64,
                    },
                    &[bits],
                )
            };
            let o = self.konst(Type::I64, j as u64 * 8);
            let addr = self.ins1(InstKind::IBinary(IBinOp::Add), &[self.out, o]);
            self.ins(
                InstKind::Store(MemAccess::scalar(AddrSpace::Global, Type::I64)),
                &[addr, w],
            );
        }
        self.k
            .set_terminator(self.cur, wavejit_ir::Terminator::Exit);
    }
}

/// Builds a case from a choice stream.
pub fn case(ch: &[u32]) -> Case {
    let c0 = ch.first().copied().unwrap_or(0);
    let c1 = ch.get(1).copied().unwrap_or(0);
    let groups = [1 + c0 % 4, 1 + (c0 >> 4) % 2, 1];
    let wg = [1 + (c1 % 12), 1 + (c1 >> 4) % 3, 1];
    let mut dispatch = Dispatch::new(groups, wg);
    dispatch.wave_size = [1, 2, 4, 8, 16, 32, 64][((c1 >> 8) % 7) as usize];
    dispatch.uniforms = (0..72u32).map(|i| (i * 37 + c0) as u8).collect();
    if (c0 >> 8) % 16 == 0 {
        dispatch.step_limit = u64::from(2 + (c0 >> 12) % 40);
    }
    let lanes = u64::from(groups[0] * groups[1] * wg[0] * wg[1]);

    let mut k = Kernel::new("random");
    k.shared_size = SHARED_BYTES;
    k.private_size = PRIVATE_BYTES;
    let entry = k.add_block();
    let mut g = Gen {
        ch: ch.get(2..).unwrap_or(&[]),
        pos: 0,
        k,
        cur: entry,
        pool: Vec::new(),
        depth: 0,
        budget: 60,
        out: Value::from_u32(0),
        gid: Value::from_u32(0),
        li: Value::from_u32(0),
        shared_size: SHARED_BYTES,
        ro_bytes: RO_BYTES as u32,
        gang: None,
        tags: Tags::default(),
    };
    // gid = (wg.y * nwg.x + wg.x) * lanes_per_wg + local_index
    let li = g.ins1(InstKind::Builtin(Builtin::LocalIndex), &[]);
    let wx = g.ins1(InstKind::Builtin(Builtin::WorkgroupId(0)), &[]);
    let wy = g.ins1(InstKind::Builtin(Builtin::WorkgroupId(1)), &[]);
    let nx = g.ins1(InstKind::Builtin(Builtin::NumWorkgroups(0)), &[]);
    let sx = g.ins1(InstKind::Builtin(Builtin::WorkgroupSize(0)), &[]);
    let sy = g.ins1(InstKind::Builtin(Builtin::WorkgroupSize(1)), &[]);
    let row = g.ins1(InstKind::IBinary(IBinOp::Mul), &[wy, nx]);
    let wgl = g.ins1(InstKind::IBinary(IBinOp::Add), &[row, wx]);
    let per = g.ins1(InstKind::IBinary(IBinOp::Mul), &[sx, sy]);
    let base = g.ins1(InstKind::IBinary(IBinOp::Mul), &[wgl, per]);
    let gid = g.ins1(InstKind::IBinary(IBinOp::Add), &[base, li]);
    let gid64 = g.ins1(
        InstKind::Cast {
            op: CastOp::Zext,
            to: Type::I64,
        },
        &[gid],
    );
    let stride = g.konst(Type::I64, OUT_WORDS * 8);
    let off = g.ins1(InstKind::IBinary(IBinOp::Mul), &[gid64, stride]);
    let start = g.konst(Type::I64, BUF + COUNTERS);
    let out = g.ins1(InstKind::IBinary(IBinOp::Add), &[start, off]);
    g.out = out;
    g.gid = gid;
    g.li = li;
    g.pool = vec![li, gid, wx];
    let n = 4 + g.next() % 40;
    for _ in 0..n {
        g.stmt();
    }
    g.finish();
    let rw = vec![0u8; (COUNTERS + lanes * OUT_WORDS * 8) as usize];
    let ro = (0..RO_BYTES).map(|i| (i as u32 * 101 + c1) as u8).collect();
    Case {
        kernel: g.k,
        dispatch,
        rw,
        ro,
        tags: g.tags,
    }
}
