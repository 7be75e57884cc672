//! Differential test of `transform::promote_private` on random kernels that
//! keep their state in private memory the way lifters do: random scalar
//! accesses of every shape at constant offsets (overlapping, narrow, signed,
//! float), nested divergent if/else, loops with per-lane trip counts whose
//! counters live in private memory, early exits, cross-lane operations,
//! barriers, and optionally a dynamic-address access or accesses that fault.
//! The kernel must run identically (memory and fault) before and after.

#[path = "support/rng.rs"]
mod rng;

mod promote_support;

use cranelift_entity::packed_option::ReservedValue;
use promote_support::{BASE, private_accesses, promote_and_compare, run};
use rng::Rng;
use wavejit_ir::transform::promote_private;
use wavejit_ir::{
    AddrSpace, Block, BlockCall, Builtin, CastOp, Dispatch, IBinOp, InstKind, IntCC, Kernel,
    MemAccess, ReduceOp, ShuffleKind, Terminator, Type, Value, ValueDef,
};

/// Bytes of private memory the random accesses use; loop counters follow.
const REGION: u32 = 32;
const MAX_DEPTH: u32 = 3;
/// Output bytes per lane: 16 emitted words, then the region's final words.
const LANE_OUT: u64 = 128;
const LANES: u32 = 16;

struct Gen {
    rng: Rng,
    k: Kernel,
    cur: Block,
    /// i32 values usable at the current point (defined in dominating code).
    pool: Vec<Value>,
    lane: Value,
    out: Value,
    depth: u32,
    /// Only 4-byte-aligned i32 accesses (the AGX register shape) when false.
    mixed: bool,
    dynamic: bool,
    faulty: bool,
    statements: u32,
}

impl Gen {
    fn ins(&mut self, kind: InstKind, args: &[Value]) -> Value {
        let inst = self.k.append_inst(self.cur, kind, args);
        self.k.insts[inst]
            .results
            .first()
            .copied()
            .unwrap_or_else(Value::reserved_value)
    }
    fn iconst(&mut self, ty: Type, v: u64) -> Value {
        self.ins(
            InstKind::Const {
                ty,
                bits: v & ty.mask(),
            },
            &[],
        )
    }
    fn cast(&mut self, op: CastOp, to: Type, v: Value) -> Value {
        self.ins(InstKind::Cast { op, to }, &[v])
    }
    fn bin(&mut self, op: IBinOp, a: Value, b: Value) -> Value {
        self.ins(InstKind::IBinary(op), &[a, b])
    }
    fn pick(&mut self) -> Value {
        let i = self.rng.below(self.pool.len() as u64) as usize;
        self.pool[i]
    }
    fn terminate(&mut self, term: Terminator) {
        self.k.set_terminator(self.cur, term);
    }

    /// A random private access shape and offset.
    fn shape(&mut self) -> (u32, MemAccess) {
        let p = AddrSpace::Private;
        let mut m = MemAccess::scalar(p, Type::I32);
        if self.mixed {
            let (ty, bits) = match self.rng.below(12) {
                0 => (Type::I32, 16),
                1 => (Type::I32, 8),
                2 => (Type::I16, 16),
                3 => (Type::I16, 8),
                4 => (Type::I64, 64),
                5 => (Type::I64, 32),
                6 => (Type::F32, 32),
                7 => (Type::F64, 64),
                8 => (Type::I8, 8),
                _ => (Type::I32, 32),
            };
            m = MemAccess {
                ty,
                bits,
                signed: self.rng.chance(50),
                align: u32::from(bits) / 8,
                ..m
            };
            if self.rng.chance(20) {
                m.align = (m.align / 2).max(1);
            }
            if self.rng.chance(5) {
                m.count = 2;
            }
        }
        let slots = (REGION - m.total_bytes()) / m.align + 1;
        let mut offset = self.rng.below(u64::from(slots)) as u32 * m.align;
        if self.faulty && self.rng.chance(4) {
            offset = if m.align > 1 && self.rng.chance(50) {
                offset + 1
            } else {
                REGION + 64
            };
        }
        (offset, m)
    }

    /// `v` (i32) as a value of `ty`.
    fn convert_i32(&mut self, v: Value, ty: Type) -> Value {
        match ty {
            Type::I8 | Type::I16 => self.cast(CastOp::Trunc, ty, v),
            Type::I64 => {
                let w = self.cast(CastOp::Sext, Type::I64, v);
                let s = self.iconst(Type::I64, 29);
                self.bin(IBinOp::Rotl, w, s)
            }
            Type::F32 => self.cast(CastOp::Bitcast, ty, v),
            Type::F64 => {
                let w = self.cast(CastOp::Zext, Type::I64, v);
                let s = self.iconst(Type::I64, 32);
                let h = self.bin(IBinOp::Shl, w, s);
                let x = self.bin(IBinOp::Xor, h, w);
                self.cast(CastOp::Bitcast, ty, x)
            }
            _ => v,
        }
    }

    /// A value of `ty` folded into an i32.
    fn fold_into_i32(&mut self, v: Value, ty: Type) -> Value {
        match ty {
            Type::I8 | Type::I16 => self.cast(CastOp::Sext, Type::I32, v),
            Type::I64 | Type::F64 => {
                let w = if ty == Type::F64 {
                    self.cast(CastOp::Bitcast, Type::I64, v)
                } else {
                    v
                };
                let s = self.iconst(Type::I64, 32);
                let h = self.bin(IBinOp::ShrU, w, s);
                let x = self.bin(IBinOp::Xor, h, w);
                self.cast(CastOp::Trunc, Type::I32, x)
            }
            Type::F32 => self.cast(CastOp::Bitcast, Type::I32, v),
            _ => v,
        }
    }

    fn private_addr(&mut self, offset: u32) -> Value {
        if self.dynamic && self.rng.chance(10) {
            // In bounds and aligned for any shape: (x & 3) * 8 <= REGION - 8.
            let x = self.pick();
            let three = self.iconst(Type::I32, 3);
            let m = self.bin(IBinOp::And, x, three);
            return self.bin(IBinOp::Shl, m, three);
        }
        self.iconst(Type::I32, u64::from(offset))
    }

    fn store(&mut self) {
        let (offset, m) = self.shape();
        let addr = self.private_addr(offset);
        let mut args = vec![addr];
        for _ in 0..m.count {
            let v = self.pick();
            let v = self.convert_i32(v, m.ty);
            args.push(v);
        }
        self.ins(InstKind::Store(m), &args);
    }

    fn load(&mut self) {
        let (offset, m) = self.shape();
        let addr = self.private_addr(offset);
        let inst = self.k.append_inst(self.cur, InstKind::Load(m), &[addr]);
        let results = self.k.insts[inst].results.clone();
        for r in results {
            let v = self.fold_into_i32(r, m.ty);
            self.pool.push(v);
        }
    }

    fn arith(&mut self) {
        let ops = [
            IBinOp::Add,
            IBinOp::Sub,
            IBinOp::Mul,
            IBinOp::Xor,
            IBinOp::Shl,
            IBinOp::Rotl,
            IBinOp::MaxS,
        ];
        let op = ops[self.rng.below(ops.len() as u64) as usize];
        let (a, b) = (self.pick(), self.pick());
        let v = self.bin(op, a, b);
        self.pool.push(v);
    }

    fn cond(&mut self) -> Value {
        let ccs = [IntCC::Eq, IntCC::Ne, IntCC::Ult, IntCC::Sgt, IntCC::Uge];
        let cc = ccs[self.rng.below(ccs.len() as u64) as usize];
        let a = self.pick();
        let b = if self.rng.chance(50) {
            self.lane
        } else {
            self.pick()
        };
        self.ins(InstKind::Icmp(cc), &[a, b])
    }

    fn if_else(&mut self) {
        let c = self.cond();
        let then = self.k.add_block();
        let other = self.k.add_block();
        let join = self.k.add_block();
        self.terminate(Terminator::Branch {
            cond: c,
            then: BlockCall::new(then, &[]),
            otherwise: BlockCall::new(other, &[]),
        });
        let keep = self.pool.len();
        for arm in [then, other] {
            self.cur = arm;
            self.depth += 1;
            self.statements_block(4);
            self.depth -= 1;
            self.terminate(Terminator::Jump(BlockCall::new(join, &[])));
            self.pool.truncate(keep);
        }
        self.cur = join;
    }

    fn counted_loop(&mut self) {
        let counter = self.iconst(Type::I32, u64::from(REGION + 4 * self.depth));
        let zero = self.iconst(Type::I32, 0);
        self.ins(
            InstKind::Store(MemAccess::scalar(AddrSpace::Private, Type::I32)),
            &[counter, zero],
        );
        let x = self.pick();
        let three = self.iconst(Type::I32, 3);
        let limit = self.bin(IBinOp::And, x, three);
        let header = self.k.add_block();
        let body = self.k.add_block();
        let after = self.k.add_block();
        self.terminate(Terminator::Jump(BlockCall::new(header, &[])));
        self.cur = header;
        let load = InstKind::Load(MemAccess::scalar(AddrSpace::Private, Type::I32));
        let c = self.ins(load.clone(), &[counter]);
        let go = self.ins(InstKind::Icmp(IntCC::Ult), &[c, limit]);
        self.terminate(Terminator::Branch {
            cond: go,
            then: BlockCall::new(body, &[]),
            otherwise: BlockCall::new(after, &[]),
        });
        let keep = self.pool.len();
        self.cur = body;
        self.pool.push(c);
        self.depth += 1;
        self.statements_block(4);
        self.depth -= 1;
        let c = self.ins(load, &[counter]);
        let one = self.iconst(Type::I32, 1);
        let c1 = self.bin(IBinOp::Add, c, one);
        self.ins(
            InstKind::Store(MemAccess::scalar(AddrSpace::Private, Type::I32)),
            &[counter, c1],
        );
        self.terminate(Terminator::Jump(BlockCall::new(header, &[])));
        self.pool.truncate(keep);
        self.cur = after;
    }

    fn cross_lane(&mut self) {
        let mask = self.cond();
        let v = self.pick();
        let r = if self.rng.chance(50) {
            self.ins(InstKind::Reduce(ReduceOp::Add), &[mask, v])
        } else {
            let n = 1 + self.rng.below(3);
            let n = self.iconst(Type::I32, n);
            self.ins(InstKind::Shuffle(ShuffleKind::Xor), &[mask, v, n])
        };
        self.pool.push(r);
    }

    fn emit(&mut self) {
        let word = self.rng.below(16);
        let off = self.iconst(Type::I64, 4 * word);
        let addr = self.bin(IBinOp::Add, self.out, off);
        let v = self.pick();
        self.ins(
            InstKind::Store(MemAccess::scalar(AddrSpace::Global, Type::I32)),
            &[addr, v],
        );
    }

    fn early_exit(&mut self) {
        let c = self.cond();
        let gone = self.k.add_block();
        let stay = self.k.add_block();
        self.terminate(Terminator::Branch {
            cond: c,
            then: BlockCall::new(gone, &[]),
            otherwise: BlockCall::new(stay, &[]),
        });
        self.cur = gone;
        self.dump();
        self.terminate(Terminator::Exit);
        self.cur = stay;
    }

    /// Stores the region's words to the lane's output.
    fn dump(&mut self) {
        for w in 0..REGION / 4 {
            let a = self.iconst(Type::I32, u64::from(4 * w));
            let v = self.ins(
                InstKind::Load(MemAccess::scalar(AddrSpace::Private, Type::I32)),
                &[a],
            );
            let off = self.iconst(Type::I64, 64 + 4 * u64::from(w));
            let addr = self.bin(IBinOp::Add, self.out, off);
            self.ins(
                InstKind::Store(MemAccess::scalar(AddrSpace::Global, Type::I32)),
                &[addr, v],
            );
        }
    }

    fn statements_block(&mut self, n: u64) {
        let count = 1 + self.rng.below(n);
        for _ in 0..count {
            if self.statements == 0 {
                return;
            }
            self.statements -= 1;
            match self.rng.below(20) {
                0..=4 => self.store(),
                5..=9 => self.load(),
                10..=12 => self.arith(),
                13 if self.depth < MAX_DEPTH => self.if_else(),
                14 if self.depth < MAX_DEPTH => self.counted_loop(),
                15 => self.cross_lane(),
                16 => {
                    self.ins(InstKind::Barrier, &[]);
                }
                17 => self.early_exit(),
                _ => self.emit(),
            }
        }
    }
}

fn random_kernel(seed: u64, mixed: bool, dynamic: bool, faulty: bool) -> Kernel {
    let mut k = Kernel::new(format!("random{seed}"));
    k.private_size = REGION + 4 * MAX_DEPTH;
    let entry = k.add_block();
    let mut g = Gen {
        rng: Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1),
        k,
        cur: entry,
        pool: Vec::new(),
        lane: Value::reserved_value(),
        out: Value::reserved_value(),
        depth: 0,
        mixed,
        dynamic,
        faulty,
        statements: 40,
    };
    let local = g.ins(InstKind::Builtin(Builtin::LocalIndex), &[]);
    let wg = g.ins(InstKind::Builtin(Builtin::WorkgroupId(0)), &[]);
    let lanes = g.iconst(Type::I32, u64::from(LANES));
    let first = g.bin(IBinOp::Mul, wg, lanes);
    let global = g.bin(IBinOp::Add, first, local);
    let g64 = g.cast(CastOp::Zext, Type::I64, global);
    let size = g.iconst(Type::I64, LANE_OUT);
    let rel = g.bin(IBinOp::Mul, g64, size);
    let base = g.iconst(Type::I64, BASE);
    g.out = g.bin(IBinOp::Add, base, rel);
    g.lane = local;
    let seedv = g.iconst(Type::I32, seed);
    g.pool = vec![local, global, seedv];
    while g.statements > 0 {
        g.statements_block(8);
    }
    g.dump();
    g.terminate(Terminator::Exit);
    g.k
}

/// A private access whose address is not a constant.
fn has_dynamic_access(k: &Kernel) -> bool {
    k.blocks.values().flat_map(|b| &b.insts).any(|&i| {
        let data = &k.insts[i];
        let private = matches!(
            data.kind,
            InstKind::Load(m) | InstKind::Store(m) if m.space == AddrSpace::Private
        );
        let constant = data.args.first().is_some_and(|&a| match k.values[a].def {
            ValueDef::Result { inst, .. } => matches!(k.insts[inst].kind, InstKind::Const { .. }),
            ValueDef::Param { .. } => false,
        });
        private && !constant
    })
}

fn dispatch() -> Dispatch {
    let mut d = Dispatch::new([2, 1, 1], [LANES, 1, 1]);
    d.wave_size = 8;
    d
}

#[test]
fn random_kernels_behave_the_same_after_promotion() {
    let mut removed = 0;
    let mut before = 0;
    let mut params = 0;
    let mut dynamic_seen = 0;
    let mut faults = 0;
    for seed in 0..400u64 {
        let mixed = seed % 2 == 1;
        let dynamic = seed % 7 == 3;
        let faulty = seed % 5 == 4;
        let k = random_kernel(seed, mixed, dynamic, faulty);
        let (mut promoted, stats) = promote_and_compare(&k, &dispatch());
        if has_dynamic_access(&k) {
            assert_eq!(
                promoted, k,
                "seed {seed}: a dynamic access leaves all in memory"
            );
            dynamic_seen += 1;
        }
        faults += usize::from(run(&k, &dispatch()).0.is_err());
        before += private_accesses(&k);
        removed += stats.loads + stats.stores;
        params += stats.params;
        // A second run finds nothing left to promote.
        let again = promote_private(&mut promoted).expect("verifies");
        assert_eq!(again.loads + again.stores, 0, "seed {seed}");
    }
    eprintln!(
        "private accesses: {before}, removed {removed}, block params added {params}, \
         {faults} faulting and {dynamic_seen} dynamic kernels"
    );
    assert!(faults > 10, "faults are compared too");
    assert!(
        dynamic_seen > 10,
        "{dynamic_seen} kernels with a dynamic access"
    );
    assert!(removed * 2 > before, "most accesses are promoted");
    assert!(params > 100, "loops and joins need parameters");
}

#[test]
fn aligned_i32_kernels_keep_no_private_access() {
    // The AGX register shape with no fault or dynamic access: everything goes.
    for seed in 1000..1100u64 {
        let k = random_kernel(seed, false, false, false);
        let (promoted, _) = promote_and_compare(&k, &dispatch());
        assert_eq!(private_accesses(&promoted), 0, "seed {seed}");
    }
}
