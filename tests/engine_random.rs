//! Differential test: random structured kernels (divergent if/else with shuffled
//! block layouts, loops with per-lane trip counts, cross-lane operations under
//! random masks, float rules, every memory space, barriers with shared atomics)
//! must give bit-identical memory on every engine. The first engine (the golden
//! interpreter) is the reference; every run must also finish without a fault.
//!
//! Kernels keep `REGS` i32 "registers" that are threaded through every block as
//! block parameters, so any control-flow shape stays valid SSA.

mod common;

use common::*;
use wavejit_ir::{
    AddrSpace, AtomicOp, Block, BlockCall, Builder, Builtin, CastOp, Denorm, Dispatch, FBinOp,
    FloatMode, IBinOp, IUnOp, InstKind, IntCC, Kernel, MemAccess, NanMode, ReduceOp, Round,
    ShuffleKind, Terminator, Type, Value,
};

const REGS: usize = 4;
const TRACE: u32 = 48;
const INPUT_WORDS: u32 = 64;
const EXTRA_UNIFORMS: usize = 32;
/// Buffer addresses (3 x 8 bytes) come first in the uniforms.
const UNIFORM_EXTRA_AT: u32 = 24;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// An i32 constant biased toward edge values.
    fn word(&mut self) -> u32 {
        match self.below(6) {
            0 => self.pick(&[0, 1, 2, 31, 32, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff]),
            1 => self.below(16) as u32,
            2 => self.pick(&[
                0x3f80_0000,
                0xbf80_0000,
                0x0000_0001,
                0x8040_0000,
                0x7fc0_0001,
            ]),
            _ => self.next() as u32,
        }
    }
}

struct Gen {
    rng: Rng,
    kernel: Kernel,
    cur: Block,
    regs: Vec<Value>,
    lid: Value,
    gid: Value,
    depth: u32,
    trace_used: u32,
    /// Lanes per workgroup (for the shared exchange).
    lanes: u32,
    /// Also generate statements that make some lanes fault.
    faulty: bool,
    next_trap: u32,
}

impl Gen {
    fn b(&mut self) -> Builder<'_> {
        Builder::new(&mut self.kernel, self.cur)
    }

    fn ins(&mut self, kind: InstKind, args: &[Value]) -> Value {
        self.b().ins(kind, args)
    }

    fn k32(&mut self, v: u32) -> Value {
        self.b().iconst(Type::I32, u64::from(v))
    }

    fn reg(&mut self) -> Value {
        let r = self.rng.below(REGS as u64) as usize;
        self.regs[r]
    }

    fn set_reg(&mut self, v: Value) {
        let r = self.rng.below(REGS as u64) as usize;
        self.regs[r] = v;
    }

    fn cast(&mut self, op: CastOp, to: Type, v: Value) -> Value {
        self.ins(InstKind::Cast { op, to }, &[v])
    }

    /// A new block whose first `REGS` parameters are the registers, plus `extra`.
    fn block(&mut self, extra: usize) -> (Block, Vec<Value>) {
        let b = self.kernel.add_block();
        let params = (0..REGS + extra)
            .map(|_| self.kernel.add_block_param(b, Type::I32))
            .collect();
        (b, params)
    }

    fn call_with_regs(&self, to: Block, extra: &[Value]) -> BlockCall {
        let mut args = self.regs.clone();
        args.extend_from_slice(extra);
        BlockCall::new(to, &args)
    }

    fn enter(&mut self, b: Block, params: &[Value]) {
        self.cur = b;
        self.regs = params[..REGS].to_vec();
    }

    /// An i1 from a register: a random bit, or a comparison of two registers.
    fn cond(&mut self) -> Value {
        if self.rng.chance(50) {
            let v = self.reg();
            let shift = self.rng.below(5);
            let bit = self.k32(1 << shift);
            let and = self.ins(InstKind::IBinary(IBinOp::And), &[v, bit]);
            let zero = self.k32(0);
            self.ins(InstKind::Icmp(IntCC::Ne), &[and, zero])
        } else {
            let (x, y) = (self.reg(), self.reg());
            let cc = self.rng.pick(IntCC::ALL);
            self.ins(InstKind::Icmp(cc), &[x, y])
        }
    }

    fn stmts(&mut self, n: u64) {
        for _ in 0..n {
            self.stmt();
        }
    }

    fn stmt(&mut self) {
        if self.faulty && self.rng.chance(6) {
            return self.fault_stmt();
        }
        match self.rng.below(100) {
            0..=24 => self.int_op(),
            25..=31 => self.unary_op(),
            32..=37 => self.select(),
            38..=45 => self.float_op(),
            46..=61 => self.cross_lane(),
            62..=67 => self.trace(),
            68..=71 => self.global_load(),
            72..=74 => self.private_roundtrip(),
            75..=77 => self.uniform_load(),
            78..=86 if self.depth < 3 => self.if_else(),
            87..=94 if self.depth < 3 => self.lp(),
            95..=99 if self.depth == 0 => self.shared_exchange(),
            _ => self.int_op(),
        }
    }

    fn int_op(&mut self) {
        let (x, y) = (self.reg(), self.reg());
        let y = if self.rng.chance(30) {
            let w = self.rng.word();
            self.k32(w)
        } else {
            y
        };
        let op = self.rng.pick(IBinOp::ALL);
        let v = self.ins(InstKind::IBinary(op), &[x, y]);
        self.set_reg(v);
    }

    fn unary_op(&mut self) {
        let x = self.reg();
        let op = self.rng.pick(IUnOp::ALL);
        let v = self.ins(InstKind::IUnary(op), &[x]);
        self.set_reg(v);
    }

    fn select(&mut self) {
        let c = self.cond();
        let (x, y) = (self.reg(), self.reg());
        let v = self.ins(InstKind::Select, &[c, x, y]);
        self.set_reg(v);
    }

    fn float_mode(&mut self) -> FloatMode {
        FloatMode {
            denorm_in: self.rng.pick(&[Denorm::Preserve, Denorm::FlushKeepSign]),
            denorm_out: self.rng.pick(&[Denorm::Preserve, Denorm::FlushKeepSign]),
            nan: if self.rng.chance(30) {
                NanMode::Canonical(0x7fc0_0000)
            } else {
                NanMode::Propagate
            },
            round: self.rng.pick(&Round::ALL),
            sat: self.rng.chance(15),
            flags: false,
        }
    }

    fn float_op(&mut self) {
        let (x, y) = (self.reg(), self.reg());
        let fx = self.cast(CastOp::Bitcast, Type::F32, x);
        let fy = self.cast(CastOp::Bitcast, Type::F32, y);
        let mode = self.float_mode();
        let r = match self.rng.below(4) {
            0 => {
                let z = self.reg();
                let fz = self.cast(CastOp::Bitcast, Type::F32, z);
                self.ins(InstKind::Fma { mode }, &[fx, fy, fz])
            }
            1 => {
                // Only the input rules and rounding apply to an integer result.
                let to = FloatMode {
                    denorm_out: Denorm::Preserve,
                    nan: NanMode::Propagate,
                    sat: false,
                    ..mode
                };
                let (signed, nan_to_max) = (self.rng.chance(50), self.rng.chance(50));
                let i = self.ins(
                    InstKind::FToI {
                        from: wavejit_ir::FloatFormat::F32,
                        to: Type::I32,
                        signed,
                        nan_to_max,
                        mode: to,
                    },
                    &[fx],
                );
                self.set_reg(i);
                return;
            }
            _ => {
                let op = self.rng.pick(&[
                    FBinOp::Add,
                    FBinOp::Sub,
                    FBinOp::Mul,
                    FBinOp::Div,
                    FBinOp::Min,
                    FBinOp::Max,
                    FBinOp::Minimum,
                    FBinOp::Maximum,
                    FBinOp::Copysign,
                ]);
                self.ins(InstKind::FBinary { op, mode }, &[fx, fy])
            }
        };
        let v = self.cast(CastOp::Bitcast, Type::I32, r);
        self.set_reg(v);
    }

    fn cross_lane(&mut self) {
        let mask = if self.rng.chance(30) {
            self.b().iconst(Type::I1, 1)
        } else {
            self.cond()
        };
        let v = self.reg();
        let r = match self.rng.below(11) {
            0 => {
                let c = self.cond();
                let bal = self.ins(InstKind::Ballot, &[mask, c]);
                self.cast(CastOp::Trunc, Type::I32, bal)
            }
            1 | 2 => {
                let c = self.cond();
                let kind = if self.rng.chance(50) {
                    InstKind::VoteAny
                } else {
                    InstKind::VoteAll
                };
                let x = self.ins(kind, &[mask, c]);
                self.cast(CastOp::Zext, Type::I32, x)
            }
            3 => self.ins(InstKind::FirstActive, &[mask]),
            4 => {
                let e = self.ins(InstKind::Elect, &[mask]);
                self.cast(CastOp::Zext, Type::I32, e)
            }
            5 => {
                let lane = self.lane_index();
                self.ins(InstKind::ReadLane, &[mask, v, lane])
            }
            6 => self.ins(InstKind::ReadFirst, &[mask, v]),
            7 => {
                let kind = self.rng.pick(&[
                    ShuffleKind::Index,
                    ShuffleKind::Xor,
                    ShuffleKind::Up,
                    ShuffleKind::Down,
                ]);
                let n = self.lane_index();
                self.ins(InstKind::Shuffle(kind), &[mask, v, n])
            }
            8 => {
                let op = self.int_reduce_op();
                self.ins(InstKind::Reduce(op), &[mask, v])
            }
            9 => {
                let op = self.int_reduce_op();
                let inclusive = self.rng.chance(50);
                self.ins(InstKind::Scan { op, inclusive }, &[mask, v])
            }
            _ => {
                let op = self
                    .rng
                    .pick(&[ReduceOp::FAdd, ReduceOp::FMin, ReduceOp::FMax]);
                let f = self.cast(CastOp::Bitcast, Type::F32, v);
                let r = if self.rng.chance(50) {
                    self.ins(InstKind::Reduce(op), &[mask, f])
                } else {
                    let inclusive = self.rng.chance(50);
                    self.ins(InstKind::Scan { op, inclusive }, &[mask, f])
                };
                self.cast(CastOp::Bitcast, Type::I32, r)
            }
        };
        self.set_reg(r);
    }

    fn int_reduce_op(&mut self) -> ReduceOp {
        self.rng.pick(&[
            ReduceOp::Add,
            ReduceOp::Mul,
            ReduceOp::MinU,
            ReduceOp::MinS,
            ReduceOp::MaxU,
            ReduceOp::MaxS,
            ReduceOp::And,
            ReduceOp::Or,
            ReduceOp::Xor,
        ])
    }

    /// A lane number or distance: small constant, or a register's low bits.
    fn lane_index(&mut self) -> Value {
        if self.rng.chance(50) {
            let k = self.rng.below(40) as u32;
            self.k32(k)
        } else {
            let v = self.reg();
            let bits = self.rng.pick(&[7, 31, 63]);
            let m = self.k32(bits);
            self.ins(InstKind::IBinary(IBinOp::And), &[v, m])
        }
    }

    /// trace[gid * TRACE + slot] = a register (each statement its own slot).
    fn trace(&mut self) {
        if self.trace_used == TRACE {
            return self.int_op();
        }
        let slot = self.trace_used;
        self.trace_used += 1;
        let v = self.reg();
        let gid = self.gid;
        let mut b = Builder::new(&mut self.kernel, self.cur);
        let t = c32(&mut b, TRACE);
        let base = bin(&mut b, IBinOp::Mul, gid, t);
        let s = c32(&mut b, slot);
        let ix = bin(&mut b, IBinOp::Add, base, s);
        store_out(&mut b, 2, ix, v);
    }

    fn global_load(&mut self) {
        let v = self.reg();
        let m = self.k32(INPUT_WORDS - 4);
        let ix = self.ins(InstKind::IBinary(IBinOp::MinU), &[v, m]);
        let count = self.rng.pick(&[1u8, 2, 4]);
        let mut b = Builder::new(&mut self.kernel, self.cur);
        let base = buffer(&mut b, 0);
        let addr = elem(&mut b, base, ix, 4);
        let access = MemAccess {
            count,
            align: 4,
            ..MemAccess::scalar(AddrSpace::Global, Type::I32)
        };
        let vals = b.inst(InstKind::Load(access), &[addr]);
        let pick = vals[self.rng.below(vals.len() as u64) as usize];
        self.set_reg(pick);
    }

    fn private_roundtrip(&mut self) {
        let v = self.reg();
        let (at, from) = (4 * self.rng.below(8) as u32, 4 * self.rng.below(8) as u32);
        let (at, from) = (self.k32(at), self.k32(from));
        let mut b = Builder::new(&mut self.kernel, self.cur);
        store(&mut b, AddrSpace::Private, at, v);
        let x = load(&mut b, AddrSpace::Private, Type::I32, from);
        self.set_reg(x);
    }

    fn uniform_load(&mut self) {
        let bits = self.rng.pick(&[8u8, 16, 32]);
        let max = EXTRA_UNIFORMS as u32 - u32::from(bits) / 8;
        let off = UNIFORM_EXTRA_AT + self.rng.below(u64::from(max) + 1) as u32;
        let access = MemAccess {
            space: AddrSpace::Uniform,
            ty: Type::I32,
            bits,
            count: 1,
            signed: self.rng.chance(50),
            align: 1,
        };
        let at = self.k32(off);
        let v = self.ins(InstKind::Load(access), &[at]);
        self.set_reg(v);
    }

    fn if_else(&mut self) {
        let c = self.cond();
        // Random layout order of the three blocks changes which lanes run first.
        let mut made: Vec<(Block, Vec<Value>)> = (0..3).map(|_| self.block(0)).collect();
        let perm = self.rng.pick(&[[0, 1, 2], [1, 0, 2], [2, 0, 1], [0, 2, 1]]);
        let (then, other, merge) = (
            made[perm[0]].clone(),
            made[perm[1]].clone(),
            made.remove(perm[2]),
        );
        let t = self.call_with_regs(then.0, &[]);
        let o = self.call_with_regs(other.0, &[]);
        self.kernel.set_terminator(
            self.cur,
            Terminator::Branch {
                cond: c,
                then: t,
                otherwise: o,
            },
        );
        self.depth += 1;
        for arm in [&then, &other] {
            self.enter(arm.0, &arm.1);
            let n = self.rng.below(5);
            self.stmts(n);
            let j = self.call_with_regs(merge.0, &[]);
            self.kernel.set_terminator(self.cur, Terminator::Jump(j));
        }
        self.depth -= 1;
        self.enter(merge.0, &merge.1);
    }

    fn lp(&mut self) {
        let v = self.reg();
        let three = self.k32(3);
        let trip = self.ins(InstKind::IBinary(IBinOp::And), &[v, three]);
        let (head, hp) = self.block(1);
        let order = self.rng.chance(70);
        let (body, bp, exit, ep) = if order {
            let (body, bp) = self.block(0);
            let (exit, ep) = self.block(0);
            (body, bp, exit, ep)
        } else {
            let (exit, ep) = self.block(0);
            let (body, bp) = self.block(0);
            (body, bp, exit, ep)
        };
        let zero = self.k32(0);
        let j = self.call_with_regs(head, &[zero]);
        self.kernel.set_terminator(self.cur, Terminator::Jump(j));
        self.enter(head, &hp);
        let i = hp[REGS];
        let go = self.ins(InstKind::Icmp(IntCC::Ult), &[i, trip]);
        let into = self.call_with_regs(body, &[]);
        let out = self.call_with_regs(exit, &[]);
        self.kernel.set_terminator(
            self.cur,
            Terminator::Branch {
                cond: go,
                then: into,
                otherwise: out,
            },
        );
        self.depth += 1;
        self.enter(body, &bp);
        let n = 1 + self.rng.below(5);
        self.stmts(n);
        let one = self.k32(1);
        let i2 = self.ins(InstKind::IBinary(IBinOp::Add), &[i, one]);
        let back = self.call_with_regs(head, &[i2]);
        self.kernel.set_terminator(self.cur, Terminator::Jump(back));
        self.depth -= 1;
        self.enter(exit, &ep);
    }

    /// Something that faults in some lanes only: a conditional trap, a load or
    /// store indexed past the 64-word input, a conditionally misaligned load, or
    /// a loop whose per-lane trip count can exceed the step limit.
    fn fault_stmt(&mut self) {
        match self.rng.below(5) {
            0 | 1 => {
                let c = self.cond();
                let code = self.next_trap;
                self.next_trap += 1;
                let (a, ap) = self.block(0);
                let (bb, bp) = self.block(0);
                let ((trap, tp), (cont, cp)) = if self.rng.chance(50) {
                    ((a, ap), (bb, bp))
                } else {
                    ((bb, bp), (a, ap))
                };
                let t = self.call_with_regs(trap, &[]);
                let o = self.call_with_regs(cont, &[]);
                self.kernel.set_terminator(
                    self.cur,
                    Terminator::Branch {
                        cond: c,
                        then: t,
                        otherwise: o,
                    },
                );
                self.enter(trap, &tp);
                self.ins(InstKind::Trap { code }, &[]);
                let j = self.call_with_regs(cont, &[]);
                self.kernel.set_terminator(self.cur, Terminator::Jump(j));
                self.enter(cont, &cp);
            }
            2 => {
                // Loads may land inside the input; stores never do (lanes
                // storing where others load would race, and racy results are
                // schedule-dependent), so a store always faults.
                let v = self.reg();
                let bits = self.rng.pick(&[127u32, 0x3ff, 0xffff]);
                let m = self.k32(bits);
                let ix = self.ins(InstKind::IBinary(IBinOp::And), &[v, m]);
                let store_it = self.rng.chance(30);
                let x = self.reg();
                let mut b = Builder::new(&mut self.kernel, self.cur);
                let base = buffer(&mut b, 0);
                if store_it {
                    let past = c32(&mut b, INPUT_WORDS);
                    let ix = bin(&mut b, IBinOp::Add, ix, past);
                    let addr = elem(&mut b, base, ix, 4);
                    store(&mut b, AddrSpace::Global, addr, x);
                } else {
                    let addr = elem(&mut b, base, ix, 4);
                    let y = load(&mut b, AddrSpace::Global, Type::I32, addr);
                    self.set_reg(y);
                }
            }
            3 => {
                let v = self.reg();
                let two = self.k32(2);
                let off = self.ins(InstKind::IBinary(IBinOp::And), &[v, two]);
                let mut b = Builder::new(&mut self.kernel, self.cur);
                let base = buffer(&mut b, 0);
                let wide = zext64(&mut b, off);
                let addr = bin(&mut b, IBinOp::Add, base, wide);
                let y = load(&mut b, AddrSpace::Global, Type::I32, addr);
                self.set_reg(y);
            }
            _ => {
                // A loop with an empty body and a trip count of up to 4095.
                let v = self.reg();
                let m = self.k32(0xfff);
                let trip = self.ins(InstKind::IBinary(IBinOp::And), &[v, m]);
                let (head, hp) = self.block(1);
                let (exit, ep) = self.block(0);
                let zero = self.k32(0);
                let j = self.call_with_regs(head, &[zero]);
                self.kernel.set_terminator(self.cur, Terminator::Jump(j));
                self.enter(head, &hp);
                let i = hp[REGS];
                let one = self.k32(1);
                let i2 = self.ins(InstKind::IBinary(IBinOp::Add), &[i, one]);
                let go = self.ins(InstKind::Icmp(IntCC::Ult), &[i2, trip]);
                let back = self.call_with_regs(head, &[i2]);
                let out = self.call_with_regs(exit, &[]);
                self.kernel.set_terminator(
                    self.cur,
                    Terminator::Branch {
                        cond: go,
                        then: back,
                        otherwise: out,
                    },
                );
                self.enter(exit, &ep);
            }
        }
    }

    /// Uniform control flow only: shared[lid] = r; shared atomic on the extra
    /// word; barrier; r' = shared[(lid + k) % n], r'' = the atomic word; barrier.
    fn shared_exchange(&mut self) {
        let v = self.reg();
        let a = self.reg();
        let lid = self.lid;
        let n = self.lanes;
        let k = self.rng.below(u64::from(n)) as u32;
        let op = self.rng.pick(&[
            AtomicOp::Add,
            AtomicOp::Xor,
            AtomicOp::MaxS,
            AtomicOp::MinU,
            AtomicOp::Or,
        ]);
        let mut b = Builder::new(&mut self.kernel, self.cur);
        let four = c32(&mut b, 4);
        let mine = bin(&mut b, IBinOp::Mul, lid, four);
        store(&mut b, AddrSpace::Shared, mine, v);
        let word = c32(&mut b, 4 * n);
        b.ins(
            InstKind::Atomic {
                space: AddrSpace::Shared,
                op,
                ty: Type::I32,
            },
            &[word, a],
        );
        b.ins(InstKind::Barrier, &[]);
        let kk = c32(&mut b, k);
        let nn = c32(&mut b, n);
        let s = bin(&mut b, IBinOp::Add, lid, kk);
        let other = bin(&mut b, IBinOp::RemU, s, nn);
        let theirs = bin(&mut b, IBinOp::Mul, other, four);
        let got = load(&mut b, AddrSpace::Shared, Type::I32, theirs);
        let acc = load(&mut b, AddrSpace::Shared, Type::I32, word);
        b.ins(InstKind::Barrier, &[]);
        self.set_reg(got);
        self.set_reg(acc);
    }
}

/// A random kernel for workgroups of `lanes` lanes.
fn generate(seed: u64, lanes: u32, faulty: bool) -> Kernel {
    let mut kernel = Kernel::new(format!("random_{seed}"));
    kernel.shared_size = 4 * lanes + 4;
    kernel.private_size = 32;
    let entry = kernel.add_block();
    let (lid, gid, regs) = {
        let mut b = Builder::new(&mut kernel, entry);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let gid = global_id(&mut b);
        let lane = builtin(&mut b, Builtin::LaneId);
        let m = c32(&mut b, INPUT_WORDS - 1);
        let ix = bin(&mut b, IBinOp::And, gid, m);
        let x = load_in(&mut b, 0, ix, Type::I32);
        let k = c32(&mut b, (seed as u32).wrapping_mul(0x9e37_79b9));
        (lid, gid, vec![lid, lane, x, k])
    };
    let mut g = Gen {
        rng: Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1),
        kernel,
        cur: entry,
        regs,
        lid,
        gid,
        depth: 0,
        trace_used: 0,
        lanes,
        faulty,
        next_trap: 1,
    };
    let n = 6 + g.rng.below(14);
    g.stmts(n);
    let mut b = Builder::new(&mut g.kernel, g.cur);
    let r = c32(&mut b, REGS as u32);
    let base = bin(&mut b, IBinOp::Mul, gid, r);
    for (j, &v) in g.regs.iter().enumerate() {
        let o = c32(&mut b, j as u32);
        let ix = bin(&mut b, IBinOp::Add, base, o);
        store_out(&mut b, 1, ix, v);
    }
    b.exit();
    if let Err(e) = wavejit_ir::verify::verify(&g.kernel) {
        panic!("generated kernel {seed} does not verify: {e}");
    }
    g.kernel
}

#[test]
fn random_kernels_agree_on_every_engine() {
    let engines = engines();
    let mut meta = Rng(0x5eed_1234_abcd_0001);
    // More cases on demand: WAVEJIT_RANDOM_CASES=5000 cargo test --release ...
    let cases = std::env::var("WAVEJIT_RANDOM_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60u64);
    for seed in 0..cases {
        let groups = 1 + meta.below(3) as u32;
        let lanes = 1 + meta.below(40) as u32;
        let wave = meta.pick(&[1u32, 2, 3, 4, 8, 16, 32]);
        let kernel = generate(seed, lanes, false);
        let mut d = Dispatch::new([groups, 1, 1], [lanes, 1, 1]);
        d.wave_size = wave;
        let total = (groups * lanes) as usize;
        let input: Vec<u32> = (0..INPUT_WORDS).map(|_| meta.word()).collect();
        let extra: Vec<u8> = (0..EXTRA_UNIFORMS).map(|_| meta.next() as u8).collect();
        let bufs = [
            u32_bytes(&input),
            u32_bytes(&vec![0xdead_beef; total * REGS]),
            u32_bytes(&vec![0xdead_beef; total * TRACE as usize]),
        ];
        let mut reference: Option<(String, Vec<Vec<u8>>)> = None;
        for e in &engines {
            let run = run_with(e.as_ref(), &kernel, d.clone(), &bufs, &extra);
            if let Err(f) = &run.result {
                panic!(
                    "engine {}: seed {seed} ({groups}x{lanes}, wave {wave}) faulted: {f}",
                    e.name()
                );
            }
            match &reference {
                None => reference = Some((e.name().to_string(), run.bufs[1..].to_vec())),
                Some((name, want)) => {
                    for (k, (got, want)) in run.bufs[1..].iter().zip(want).enumerate() {
                        if got != want {
                            let first = got
                                .chunks(4)
                                .zip(want.chunks(4))
                                .position(|(a, b)| a != b)
                                .unwrap_or(0);
                            panic!(
                                "seed {seed} ({groups}x{lanes}, wave {wave}): engine {} differs \
                                 from {name} in buffer {} at word {first}",
                                e.name(),
                                k + 1
                            );
                        }
                    }
                }
            }
        }
        // Every lane reached the exit block and stored its registers.
        let (_, out) = reference.expect("at least one engine");
        let unwritten = [0xef, 0xbe, 0xad, 0xde].repeat(REGS);
        let lanes_done = out[0].chunks(4 * REGS).filter(|r| *r != unwritten).count();
        assert_eq!(
            lanes_done, total,
            "seed {seed}: lanes that stored their registers"
        );
    }
}

/// A fault with global addresses made relative to buffer 0, so that runs with
/// different allocations compare equal.
fn normalized(f: &wavejit_ir::Fault, base: u64) -> wavejit_ir::Fault {
    let mut f = f.clone();
    if let wavejit_ir::FaultKind::Memory {
        space: AddrSpace::Global,
        addr,
        ..
    } = &mut f.kind
    {
        *addr = addr.wrapping_sub(base);
    }
    f
}

/// Random kernels in which some lanes trap, access memory out of bounds or
/// misaligned, or spin past the step limit: every engine reports the same fault
/// (the lowest faulting lane), and the same memory when nothing faults.
#[test]
fn random_faulting_kernels_report_the_same_fault() {
    let engines = engines();
    let mut meta = Rng(0xfa17_0000_0000_0001);
    let cases = std::env::var("WAVEJIT_RANDOM_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60u64);
    let mut faulted = 0;
    for seed in 0..cases {
        let groups = 1 + meta.below(3) as u32;
        let lanes = 1 + meta.below(40) as u32;
        let wave = meta.pick(&[1u32, 2, 3, 4, 8, 16, 32]);
        let kernel = generate(seed + 1_000_000, lanes, true);
        let mut d = Dispatch::new([groups, 1, 1], [lanes, 1, 1]);
        d.wave_size = wave;
        d.step_limit = 3000;
        let total = (groups * lanes) as usize;
        let input: Vec<u32> = (0..INPUT_WORDS).map(|_| meta.word()).collect();
        let extra: Vec<u8> = (0..EXTRA_UNIFORMS).map(|_| meta.next() as u8).collect();
        let bufs = [
            u32_bytes(&input),
            u32_bytes(&vec![0xdead_beef; total * REGS]),
            u32_bytes(&vec![0xdead_beef; total * TRACE as usize]),
        ];
        let mut reference = None;
        for e in &engines {
            let run = run_with(e.as_ref(), &kernel, d.clone(), &bufs, &extra);
            let outcome = match &run.result {
                Ok(()) => Ok(run.bufs.clone()),
                Err(f) => Err(normalized(f, run.addrs[0])),
            };
            match &reference {
                None => reference = Some((e.name().to_string(), outcome)),
                Some((name, want)) => assert!(
                    outcome == *want,
                    "seed {seed} ({groups}x{lanes}, wave {wave}): engine {} gives {:?}, {name} \
                     gives {:?}",
                    e.name(),
                    outcome.as_ref().err(),
                    want.as_ref().err()
                ),
            }
        }
        if matches!(reference, Some((_, Err(_)))) {
            faulted += 1;
        }
    }
    // The generator must actually produce faults (and non-faulting runs).
    assert!(
        faulted * 5 >= cases && faulted < cases,
        "{faulted} of {cases} runs faulted"
    );
}
