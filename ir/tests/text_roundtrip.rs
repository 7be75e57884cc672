//! Round-trip property: random well-formed kernels built with `Builder`, covering
//! every instruction kind and attribute, print -> parse -> print identically, and
//! the parsed kernel equals the original after canonical renumbering.
//! A small deterministic generator (splitmix64) keeps the test dependency-free
//! and every failure reproducible from its seed.

use std::collections::HashSet;
use std::mem::discriminant;

use wavejit_ir::float_mode::{Denorm, FloatMode, NanMode, Round};
use wavejit_ir::text::{canonicalize, parse, print};
use wavejit_ir::verify::verify;
use wavejit_ir::{
    AddrSpace, AtomicOp, Block, BlockCall, Builder, Builtin, CastOp, FBinOp, FUnOp, FloatCC,
    FloatFormat, IBinOp, IUnOp, InstKind, IntCC, Kernel, MemAccess, ReduceOp, Scope, ShuffleKind,
    SpecialFn, Terminator, Type, Value,
};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

const INTS: [Type; 4] = [Type::I8, Type::I16, Type::I32, Type::I64];
const ALL_INTS: [Type; 5] = [Type::I1, Type::I8, Type::I16, Type::I32, Type::I64];
const FLOATS: [Type; 3] = [Type::F16, Type::F32, Type::F64];

/// Number of `InstKind` variants the generator produces (all of them).
const KIND_COUNT: usize = 35;

/// A quiet NaN of each format that has one (what the verifier accepts).
fn quiet_nan(f: FloatFormat) -> Option<u64> {
    match f {
        FloatFormat::F16 => Some(0x7e00),
        FloatFormat::Bf16 => Some(0x7fc0),
        FloatFormat::F32 => Some(0x7fc0_0000),
        FloatFormat::F64 => Some(0x7ff8_0000_0000_0000),
        FloatFormat::E4m3 => Some(0x7f),
        FloatFormat::E5m2 => Some(0x7e),
        FloatFormat::E2m1 => None,
    }
}

struct Gen {
    rng: Rng,
    /// Also produce what the signature accepts but the verifier rejects
    /// (canonical NaNs of any bits anywhere, `flags` on `fclass`, zero memory sizes):
    /// the text form must carry those too.
    loose: bool,
}

impl Gen {
    /// A float mode with every field random; `nan_format` is the format a
    /// canonical NaN must belong to (`None`: no canonical NaN allowed).
    fn mode(&mut self, nan_format: Option<FloatFormat>, flags_ok: bool) -> FloatMode {
        let r = &mut self.rng;
        let denorm = |r: &mut Rng| {
            if r.chance(30) {
                Denorm::FlushKeepSign
            } else {
                Denorm::Preserve
            }
        };
        let denorm_in = denorm(r);
        let denorm_out = match denorm(r) {
            Denorm::FlushKeepSign if r.chance(30) => Denorm::FlushBeforeRounding,
            rule => rule,
        };
        let nan = match nan_format.and_then(quiet_nan) {
            _ if self.loose && r.chance(30) => NanMode::Canonical(r.next() >> r.below(64)),
            Some(bits) if r.chance(30) => NanMode::Canonical(bits),
            _ => NanMode::Propagate,
        };
        FloatMode {
            denorm_in,
            denorm_out,
            nan,
            round: r.pick(&Round::ALL),
            sat: r.chance(20),
            flags: (flags_ok || self.loose) && r.chance(20),
        }
    }

    fn const_bits(&mut self, ty: Type) -> u64 {
        let r = &mut self.rng;
        let special: &[u64] = match ty {
            Type::F16 => &[0x7e00, 0x7c01, 0xfc00, 0x8000, 0x0001, 0x3c00],
            Type::F32 => &[
                0x7fc0_0000,
                0x7f80_0001,
                0xff80_0000,
                0x8000_0000,
                0x1,
                0x3dcc_cccd,
            ],
            Type::F64 => &[
                0x7ff8_0000_0000_0000,
                0xfff0_0000_0000_0000,
                0x8000_0000_0000_0000,
                1,
            ],
            _ => &[0, 1, u64::MAX, 0x8000_0000_0000_0000, 65536, 65537],
        };
        let bits = if r.chance(40) {
            r.pick(special)
        } else if r.chance(50) {
            r.next() % 300
        } else {
            r.next()
        };
        bits & ty.mask()
    }

    fn float_format(&mut self) -> FloatFormat {
        self.rng.pick(&FloatFormat::ALL)
    }

    /// A random instruction kind with the argument types it needs.
    fn kind(&mut self, which: usize) -> (InstKind, Vec<Type>) {
        use InstKind as K;
        let r = &mut self.rng;
        let float = r.pick(&FLOATS);
        let int = r.pick(&INTS);
        let any = r.pick(&Type::ALL);
        let mask = Type::I1;
        match which {
            0 => {
                let ty = any;
                (
                    K::Const {
                        ty,
                        bits: self.const_bits(ty),
                    },
                    vec![],
                )
            }
            1 => {
                let d = r.below(3) as u8;
                let b = r.pick(&[
                    Builtin::LocalId(d),
                    Builtin::WorkgroupId(d),
                    Builtin::WorkgroupSize(d),
                    Builtin::NumWorkgroups(d),
                    Builtin::LocalIndex,
                    Builtin::LaneId,
                    Builtin::WaveId,
                    Builtin::WaveSize,
                ]);
                (K::Builtin(b), vec![])
            }
            2 => {
                let op = r.pick(IBinOp::ALL);
                let ty = if matches!(op, IBinOp::And | IBinOp::Or | IBinOp::Xor) {
                    r.pick(&ALL_INTS)
                } else {
                    int
                };
                (K::IBinary(op), vec![ty, ty])
            }
            3 => {
                let op = r.pick(IUnOp::ALL);
                let ty = if op == IUnOp::Not {
                    r.pick(&ALL_INTS)
                } else {
                    int
                };
                (K::IUnary(op), vec![ty])
            }
            4 => {
                let ty = r.pick(&ALL_INTS);
                (K::Icmp(r.pick(IntCC::ALL)), vec![ty, ty])
            }
            5 => (K::Select, vec![Type::I1, any, any]),
            6 => {
                let (op, from, to) = match r.below(4) {
                    0 | 1 => {
                        let from = r.pick(&[Type::I1, Type::I8, Type::I16, Type::I32]);
                        let wider: Vec<Type> = INTS
                            .into_iter()
                            .filter(|t| t.bits() > from.bits())
                            .collect();
                        let op = if r.chance(50) {
                            CastOp::Zext
                        } else {
                            CastOp::Sext
                        };
                        (op, from, r.pick(&wider))
                    }
                    2 => {
                        let from = r.pick(&[Type::I8, Type::I16, Type::I32, Type::I64]);
                        let narrower: Vec<Type> = ALL_INTS
                            .into_iter()
                            .filter(|t| t.bits() < from.bits())
                            .collect();
                        (CastOp::Trunc, from, r.pick(&narrower))
                    }
                    _ => {
                        let (a, b) = r.pick(&[
                            (Type::I16, Type::F16),
                            (Type::I32, Type::F32),
                            (Type::I64, Type::F64),
                        ]);
                        if r.chance(50) {
                            (CastOp::Bitcast, a, b)
                        } else {
                            (CastOp::Bitcast, b, a)
                        }
                    }
                };
                (K::Cast { op, to }, vec![from])
            }
            7 => (
                K::BitExtract {
                    signed: r.chance(50),
                },
                vec![int, Type::I32, Type::I32],
            ),
            8 => (K::BitInsert, vec![int, int, Type::I32, Type::I32]),
            9 => {
                let op = r.pick(FBinOp::ALL);
                let mode = self.mode(FloatFormat::of_type(float), true);
                (K::FBinary { op, mode }, vec![float, float])
            }
            10 => {
                let op = r.pick(FUnOp::ALL);
                let mode = self.mode(FloatFormat::of_type(float), true);
                (K::FUnary { op, mode }, vec![float])
            }
            11 => {
                let mode = self.mode(FloatFormat::of_type(float), true);
                (K::Fma { mode }, vec![float, float, float])
            }
            12 => {
                let cc = r.pick(FloatCC::ALL);
                let mode = self.mode(None, true);
                (K::Fcmp { cc, mode }, vec![float, float])
            }
            13 => {
                let mode = self.mode(None, false);
                (K::Fclass { mode }, vec![float])
            }
            14 => {
                let func = r.pick(SpecialFn::ALL);
                let mode = self.mode(FloatFormat::of_type(float), true);
                (K::Special { func, mode }, vec![float])
            }
            15 => {
                let mode = self.mode(Some(FloatFormat::F32), true);
                (K::PowFixup { mode }, vec![Type::F32; 3])
            }
            16 => {
                let from = self.float_format();
                let mut to = self.float_format();
                while to == from {
                    to = self.float_format();
                }
                let mode = self.mode(Some(to), true);
                (K::Fcvt { from, to, mode }, vec![from.storage()])
            }
            17 => {
                let from = self.float_format();
                let signed = self.rng.chance(50);
                let nan_to_max = self.rng.chance(50);
                let mode = self.mode(None, true);
                (
                    K::FToI {
                        from,
                        to: int,
                        signed,
                        nan_to_max,
                        mode,
                    },
                    vec![from.storage()],
                )
            }
            18 => {
                let to = self.float_format();
                let signed = self.rng.chance(50);
                let mode = self.mode(Some(to), true);
                (K::IToF { to, signed, mode }, vec![int])
            }
            19 | 20 => {
                let store = which == 20;
                let spaces: &[AddrSpace] = if store {
                    &[AddrSpace::Global, AddrSpace::Shared, AddrSpace::Private]
                } else {
                    &AddrSpace::ALL
                };
                let space = r.pick(spaces);
                let ty = r.pick(&[
                    Type::I8,
                    Type::I16,
                    Type::I32,
                    Type::I64,
                    Type::F16,
                    Type::F32,
                    Type::F64,
                ]);
                let bits = if ty.is_float() {
                    ty.bits()
                } else {
                    r.pick(&[8u32, 16, 32, 64].map(|b| b.min(ty.bits())))
                };
                let a = MemAccess {
                    space,
                    ty,
                    bits: bits as u8,
                    count: 1 + r.below(4) as u8,
                    signed: r.chance(30),
                    align: 1 << r.below(5),
                };
                let mut args = vec![space.addr_type()];
                if store {
                    args.extend(std::iter::repeat_n(ty, usize::from(a.count)));
                    (K::Store(a), args)
                } else {
                    (K::Load(a), args)
                }
            }
            21 => {
                let space = r.pick(&[AddrSpace::Global, AddrSpace::Shared]);
                let op = r.pick(AtomicOp::ALL);
                let ty = r.pick(&[Type::I32, Type::I64]);
                let mut args = vec![space.addr_type(), ty];
                if op == AtomicOp::CmpXchg {
                    args.push(ty);
                }
                (K::Atomic { space, op, ty }, args)
            }
            22 => (K::Barrier, vec![]),
            23 => (K::Fence(r.pick(&[Scope::Workgroup, Scope::Device])), vec![]),
            24 => (K::Ballot, vec![mask, Type::I1]),
            25 => (K::VoteAny, vec![mask, Type::I1]),
            26 => (K::VoteAll, vec![mask, Type::I1]),
            27 => (K::FirstActive, vec![mask]),
            28 => (K::Elect, vec![mask]),
            29 => (K::ReadLane, vec![mask, any, Type::I32]),
            30 => (K::ReadFirst, vec![mask, any]),
            31 => (
                K::Shuffle(r.pick(ShuffleKind::ALL)),
                vec![mask, any, Type::I32],
            ),
            32 | 33 => {
                let op = r.pick(ReduceOp::ALL);
                let ty = if op.is_float() {
                    float
                } else if matches!(op, ReduceOp::And | ReduceOp::Or | ReduceOp::Xor) {
                    r.pick(&ALL_INTS)
                } else {
                    int
                };
                if which == 32 {
                    (K::Reduce(op), vec![mask, ty])
                } else {
                    let inclusive = r.chance(50);
                    (K::Scan { op, inclusive }, vec![mask, ty])
                }
            }
            _ => (
                K::Trap {
                    code: if r.chance(50) {
                        r.below(100) as u32
                    } else {
                        r.next() as u32
                    },
                },
                vec![],
            ),
        }
    }
}

/// Values a block may use: the entry block's (it dominates every block) and its own.
struct Pool {
    entry: Vec<Value>,
    local: Vec<Value>,
}

impl Pool {
    fn of_type(&self, k: &Kernel, ty: Type) -> Vec<Value> {
        self.entry
            .iter()
            .chain(&self.local)
            .copied()
            .filter(|&v| k.value_type(v) == ty)
            .collect()
    }
}

/// A value of type `ty` usable in the builder's block (a new constant if none).
fn value_of(g: &mut Gen, b: &mut Builder<'_>, pool: &mut Pool, ty: Type) -> Value {
    let candidates = pool.of_type(b.kernel, ty);
    if !candidates.is_empty() && g.rng.chance(85) {
        return g.rng.pick(&candidates);
    }
    let bits = g.const_bits(ty);
    let v = b.ins(InstKind::Const { ty, bits }, &[]);
    pool.local.push(v);
    v
}

fn call(g: &mut Gen, b: &mut Builder<'_>, pool: &mut Pool, target: Block) -> BlockCall {
    let params: Vec<Type> = b.kernel.blocks[target]
        .params
        .iter()
        .map(|&p| b.kernel.value_type(p))
        .collect();
    let args: Vec<Value> = params
        .into_iter()
        .map(|ty| value_of(g, b, pool, ty))
        .collect();
    BlockCall::new(target, &args)
}

fn random_kernel(seed: u64, loose: bool) -> Kernel {
    let mut g = Gen {
        rng: Rng(seed),
        loose,
    };
    let names = [
        "k",
        "saxpy",
        "a.b-c_9",
        "",
        "with space",
        "quote\"and\\slash",
        "tab\there",
    ];
    let mut k = Kernel::new(g.rng.pick(&names));
    let min_size = if loose { 0 } else { 1 };
    k.shared_size = min_size.max(g.rng.below(4096) as u32);
    k.private_size = min_size.max(g.rng.below(256) as u32);
    let nblocks = 1 + g.rng.below(5);
    let blocks: Vec<Block> = (0..nblocks).map(|_| k.add_block()).collect();
    // Fill blocks in a shuffled order so the value arena is not in layout order.
    let mut order: Vec<usize> = (1..nblocks).collect();
    for i in (1..order.len()).rev() {
        let j = g.rng.below(i + 1);
        order.swap(i, j);
    }
    for &i in &order {
        for _ in 0..g.rng.below(3) {
            let ty = g.rng.pick(&Type::ALL);
            k.add_block_param(blocks[i], ty);
        }
    }
    let mut entry_values = Vec::new();
    order.insert(0, 0);
    for &i in &order {
        let block = blocks[i];
        let mut pool = Pool {
            entry: if i == 0 { vec![] } else { entry_values.clone() },
            local: k.blocks[block].params.clone(),
        };
        let mut b = Builder::new(&mut k, block);
        for _ in 0..g.rng.below(12) {
            let which = g.rng.below(KIND_COUNT);
            let (kind, arg_tys) = g.kind(which);
            let args: Vec<Value> = arg_tys
                .into_iter()
                .map(|ty| value_of(&mut g, &mut b, &mut pool, ty))
                .collect();
            let pc = g.rng.chance(40).then(|| g.rng.next() >> g.rng.below(64));
            b.set_srcloc(pc);
            let results = b.inst(kind, &args);
            b.set_srcloc(None);
            pool.local.extend(results);
        }
        let targets: Vec<Block> = blocks[1..].to_vec();
        match if targets.is_empty() {
            0
        } else {
            g.rng.below(4)
        } {
            0 => b.exit(),
            1 => {
                let t = g.rng.pick(&targets);
                let c = call(&mut g, &mut b, &mut pool, t);
                b.kernel.set_terminator(block, Terminator::Jump(c));
            }
            2 => {
                let cond = value_of(&mut g, &mut b, &mut pool, Type::I1);
                let t = g.rng.pick(&targets);
                let then = call(&mut g, &mut b, &mut pool, t);
                let t = g.rng.pick(&targets);
                let otherwise = call(&mut g, &mut b, &mut pool, t);
                b.branch(cond, then, otherwise);
            }
            _ => {
                let index = value_of(&mut g, &mut b, &mut pool, Type::I32);
                let n = g.rng.below(4);
                let mut calls = Vec::new();
                for _ in 0..n {
                    let t = g.rng.pick(&targets);
                    calls.push(call(&mut g, &mut b, &mut pool, t));
                }
                let t = g.rng.pick(&targets);
                let default = call(&mut g, &mut b, &mut pool, t);
                b.kernel.set_terminator(
                    block,
                    Terminator::Table {
                        index,
                        targets: calls,
                        default,
                    },
                );
            }
        }
        if i == 0 {
            entry_values = pool.local;
        }
    }
    k
}

#[test]
fn random_kernels_round_trip() {
    let mut kinds = HashSet::new();
    let mut terms = HashSet::new();
    let mut insts = 0;
    for seed in 0..600u64 {
        let k = random_kernel(seed, false);
        if let Err(e) = verify(&k) {
            panic!(
                "seed {seed}: generator built an invalid kernel: {e}\n{}",
                print(&k)
            );
        }
        let text = print(&k);
        let parsed = parse(&text).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        assert_eq!(
            print(&parsed),
            text,
            "seed {seed}: print/parse/print differs"
        );
        assert!(
            parsed == canonicalize(&k),
            "seed {seed}: parse(print(k)) != canonicalize(k)\n{text}"
        );
        assert!(
            verify(&parsed).is_ok(),
            "seed {seed}: parsed kernel fails verify"
        );
        for data in k.insts.values() {
            kinds.insert(discriminant(&data.kind));
            insts += 1;
        }
        for block in k.blocks.values() {
            if let Some(t) = &block.term {
                terms.insert(discriminant(t));
            }
        }
    }
    assert_eq!(
        kinds.len(),
        KIND_COUNT,
        "not every instruction kind was generated"
    );
    assert_eq!(terms.len(), 4, "not every terminator kind was generated");
    assert!(insts > 5000, "only {insts} instructions generated");
}

/// Canonicalization is what the parser undoes: a kernel already in canonical
/// numbering is its own canonical form, and canonicalizing twice changes nothing.
#[test]
fn canonicalize_is_idempotent() {
    for seed in 1000..1100u64 {
        let once = canonicalize(&random_kernel(seed, seed % 2 == 0));
        assert!(canonicalize(&once) == once, "seed {seed}");
    }
}

/// Kernels the verifier would reject for attribute reasons still round-trip:
/// the text form is lossless for everything the signature accepts.
#[test]
fn loose_attributes_round_trip() {
    let mut rejected_by_verifier = 0;
    for seed in 5000..5300u64 {
        let k = random_kernel(seed, true);
        if verify(&k).is_err() {
            rejected_by_verifier += 1;
        }
        let text = print(&k);
        let parsed = parse(&text).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        assert_eq!(print(&parsed), text, "seed {seed}");
        assert!(parsed == canonicalize(&k), "seed {seed}");
    }
    assert!(
        rejected_by_verifier > 30,
        "only {rejected_by_verifier} loose kernels were outside the verifier's rules"
    );
}
