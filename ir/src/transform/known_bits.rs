//! Integer simplification from the bits a value can have set.
//!
//! Lifters rebuild a lane's index from how the ISA encodes it: RV32 kernels
//! read `mhartid = block << 13 | local` and take it apart again with `>> 13`
//! and `& (size - 1)`, then `or` the parts into a global index. Each of those
//! is an identity once it is known which bits the operands can have set, and
//! the result is the `group * size + local` shape whose lanes the JIT's gang
//! core recognises as consecutive (one vector access per four lanes instead
//! of an address per lane).
//!
//! The analysis gives every integer value a mask of the bits it may have set
//! (an over-approximation: a bit outside the mask is zero in every lane) and
//! an unsigned upper bound.
//! Builtins are bounded by the limits every engine checks before a lane runs
//! (`Dispatch::check`: at most [`MAX_WORKGROUP_LANES`] lanes per workgroup),
//! and, given the [`DispatchShape`] a kernel is lifted for, by that grid
//! (a dimension of size 1 makes its ids 0). The rewrites, each exact for
//! every operand value inside the masks:
//! - a pure instruction whose mask is 0 becomes the constant 0, and with a
//!   shape, `workgroup_size` and `num_workgroups` become its constants;
//! - an unsigned compare of a value with a constant is decided when the
//!   value's upper bound does (`gid < grid` for a grid the shape fills);
//! - `x & m` is `x` when every bit `x` may have is set in the constant `m`,
//!   and `(a | b) & m` is `b & m` when `a` has no bit of `m`;
//! - `a | b` and `a ^ b` are `a + b` when `a` and `b` share no bit (no carry);
//! - `(a | b) >> k` is `a >> k` when `b < 2^k` (and `a`, `b` share no bit);
//! - `(a << k) >> k` is `a` when no bit of `a` leaves through the shift;
//! - `x + 0`, `x | 0`, `x ^ 0`, `x - 0` are `x` for a zero mask operand
//!   (an arithmetic right shift of a value whose sign bit is clear has the
//!   logical one's mask, so the sign word of a bounded 64-bit offset is 0);
//! - `zext(zext(x))` is one `zext` of `x` (`sext` likewise; lifters widen
//!   booleans through 16 bits), and `trunc(zext(x))` back to `x`'s type is
//!   `x`.
//!
//! Only pure integer instructions change (operands, or the kind between
//! `or`/`xor` and `add`), so lanes compute the same values, enter the same
//! blocks (the watchdog count) and perform the same memory effects; what
//! becomes unused is removed by the dead-code pass.

use cranelift_entity::SecondaryMap;

use super::compact::{compact, map_uses};
use super::dead_code::{DeadCounts, remove_dead};
use crate::dispatch::{DispatchShape, MAX_WORKGROUP_LANES};
use crate::entities::{Inst, Value};
use crate::inst::{Builtin, CastOp, IBinOp, InstKind, IntCC};
use crate::kernel::{Kernel, ValueDef};
use crate::types::Type;
use crate::verify::{VerifyError, verify};

/// What [`simplify_bits`] did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct BitsStats {
    /// Instructions whose value is known (0 by its masks, a size or count
    /// of the shape), now constants.
    pub constants: usize,
    /// Unsigned compares with a constant decided by the other side's upper
    /// bound (a grid-bounds test the shape passes), now constants.
    pub compares: usize,
    /// Uses redirected to an operand (`x & m`, `(a << k) >> k`, `x + 0` ...).
    pub identities: usize,
    /// `or` / `xor` of disjoint bits turned into `add`.
    pub adds: usize,
    /// `and` / `ushr` of a disjoint sum reading one part only.
    pub narrowed: usize,
    pub dead: DeadCounts,
}

impl BitsStats {
    fn changes(&self) -> usize {
        self.constants + self.compares + self.identities + self.adds + self.narrowed
    }
}

/// Rounds of analysis and rewriting at most (each round enables the next
/// one's rewrites along a chain; real lifter output needs two or three).
const MAX_ROUNDS: usize = 8;

/// Simplifies `kernel` (see the module documentation) for dispatches of
/// `shape` (or of any shape when `None`), then removes what became dead and
/// compacts. Returns the verifier's error, with `kernel` untouched, if the
/// input does not verify.
pub fn simplify_bits(
    kernel: &mut Kernel,
    shape: Option<&DispatchShape>,
) -> Result<BitsStats, VerifyError> {
    verify(kernel)?;
    let mut stats = BitsStats::default();
    for _ in 0..MAX_ROUNDS {
        let before = stats.changes();
        let known = analyze(kernel, shape);
        rewrite(kernel, &known, shape, &mut stats);
        // Aliased instructions lose their readers here, so a later round
        // does not count them again.
        remove_dead(kernel, &mut stats.dead);
        if stats.changes() == before {
            break;
        }
    }
    compact(kernel);
    Ok(stats)
}

/// Every bit up to the highest set bit of `x`: the mask of any value `<= x`.
fn below_or_at(x: u64) -> u64 {
    match x {
        0 => 0,
        _ => u64::MAX >> x.leading_zeros(),
    }
}

/// What is known of an integer value in every lane: the bits it may have
/// set, and an unsigned upper bound.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Known {
    mask: u64,
    hi: u64,
}

impl Known {
    /// At most `hi` (all bits up to its highest may be set).
    fn at_most(hi: u64) -> Known {
        Known {
            mask: below_or_at(hi),
            hi,
        }
    }

    /// Exactly `x`.
    fn exactly(x: u64) -> Known {
        Known { mask: x, hi: x }
    }

    /// Both facts (each holds, so their intersection does).
    fn and(self, o: Known) -> Known {
        let mask = self.mask & o.mask;
        Known {
            mask,
            hi: self.hi.min(o.hi).min(mask),
        }
    }
}

/// A builtin's value when the shape fixes it (sizes and counts are then
/// constants of the kernel).
fn builtin_value(b: Builtin, shape: &DispatchShape) -> Option<u64> {
    let dim = |d: u8| usize::from(d).min(2);
    match b {
        Builtin::WorkgroupSize(d) => Some(shape.workgroup_size[dim(d)].into()),
        Builtin::NumWorkgroups(d) => Some(shape.num_workgroups[dim(d)].into()),
        _ => None,
    }
}

/// What a builtin can be: the limits every dispatch is checked against, and
/// `shape` when the kernel is for one grid.
fn builtin_known(b: Builtin, shape: Option<&DispatchShape>) -> Known {
    let lanes_max = u64::from(MAX_WORKGROUP_LANES);
    let dim = |d: u8| usize::from(d).min(2);
    if let Some(x) = shape.and_then(|s| builtin_value(b, s)) {
        return Known::exactly(x);
    }
    let hi = match (b, shape) {
        // A lane's index in its wave, and its wave's index, are at most its
        // index in the workgroup.
        (Builtin::LocalIndex | Builtin::LaneId | Builtin::WaveId, Some(s)) => {
            let n: u64 = s.workgroup_size.iter().map(|&x| u64::from(x)).product();
            n.saturating_sub(1)
        }
        (Builtin::LocalId(d), Some(s)) => u64::from(s.workgroup_size[dim(d)]).saturating_sub(1),
        (Builtin::WorkgroupId(d), Some(s)) => u64::from(s.num_workgroups[dim(d)]).saturating_sub(1),
        (Builtin::LocalIndex | Builtin::LocalId(_) | Builtin::LaneId | Builtin::WaveId, None) => {
            lanes_max - 1
        }
        (Builtin::WorkgroupSize(_), None) => lanes_max,
        _ => u32::MAX.into(),
    };
    Known::at_most(hi)
}

/// What every integer value is known to be (the type's range when nothing
/// is). Values are visited until nothing changes, so an operand defined in
/// a later block is never read before it is known (it starts at the type's
/// range: sound, only less precise).
fn analyze(kernel: &Kernel, shape: Option<&DispatchShape>) -> SecondaryMap<Value, Known> {
    let mut k: SecondaryMap<Value, Known> = SecondaryMap::with_default(Known::at_most(u64::MAX));
    for (v, data) in kernel.values.iter() {
        let full = if data.ty.is_int() { data.ty.mask() } else { 0 };
        k[v] = Known::at_most(full);
    }
    for _ in 0..MAX_ROUNDS {
        if !refine_results(kernel, &mut k, shape) {
            break;
        }
    }
    k
}

/// One round over every integer instruction result: what its operands now
/// say, intersected with what was known (sound every round). Returns
/// whether anything changed.
fn refine_results(
    kernel: &Kernel,
    k: &mut SecondaryMap<Value, Known>,
    shape: Option<&DispatchShape>,
) -> bool {
    let mut changed = false;
    for block in kernel.blocks.values() {
        for &inst in &block.insts {
            let data = &kernel.insts[inst];
            let &[r] = data.results.as_slice() else {
                continue;
            };
            if !kernel.value_type(r).is_int() {
                continue;
            }
            let new = inst_known(kernel, inst, k, shape).and(k[r]);
            if new != k[r] {
                k[r] = new;
                changed = true;
            }
        }
    }
    changed
}

/// An unsigned upper bound of every integer value of `kernel` in every lane
/// of any dispatch (the type's maximum when nothing is known; 0 for other
/// types). Unlike the rewrites' analysis this one also bounds block
/// parameters, by the join of their incoming arguments, refined round by
/// round from the type's range down (sound after every round), so a loop
/// variable halved every iteration from a constant is bounded by it.
pub fn value_bounds(kernel: &Kernel) -> SecondaryMap<Value, u64> {
    let mut k = analyze(kernel, None);
    // A shift by one per round needs as many rounds as the type has bits.
    for _ in 0..2 * 64 {
        let mut changed = false;
        let mut incoming: SecondaryMap<Value, Option<Known>> = SecondaryMap::new();
        for block in kernel.blocks.values() {
            let Some(term) = &block.term else { continue };
            for call in crate::analysis::block_calls(term) {
                let Some(target) = kernel.blocks.get(call.block) else {
                    continue;
                };
                for (&a, &p) in call.args.iter().zip(&target.params) {
                    let x = k[a];
                    incoming[p] = Some(match incoming[p] {
                        None => x,
                        Some(o) => Known {
                            mask: o.mask | x.mask,
                            hi: o.hi.max(x.hi),
                        },
                    });
                }
            }
        }
        for block in kernel.blocks.values() {
            for &p in &block.params {
                if !kernel.value_type(p).is_int() {
                    continue;
                }
                let Some(x) = incoming[p] else { continue };
                let new = x.and(k[p]);
                if new != k[p] {
                    k[p] = new;
                    changed = true;
                }
            }
        }
        changed |= refine_results(kernel, &mut k, None);
        if !changed {
            break;
        }
    }
    let mut out = SecondaryMap::new();
    for (v, data) in kernel.values.iter() {
        out[v] = if data.ty.is_int() { k[v].hi } else { 0 };
    }
    out
}

/// The constant an argument holds, if it is one.
fn konst(kernel: &Kernel, v: Value) -> Option<u64> {
    let ValueDef::Result { inst, .. } = kernel.values[v].def else {
        return None;
    };
    match kernel.insts[inst].kind {
        InstKind::Const { bits, ty } if ty.is_int() => Some(bits & ty.mask()),
        _ => None,
    }
}

/// Shift amount of a constant shift operand, modulo the width (the IR's rule).
fn shift_amount(kernel: &Kernel, v: Value, ty: Type) -> Option<u32> {
    konst(kernel, v).map(|k| (k % u64::from(ty.bits())) as u32)
}

fn inst_known(
    kernel: &Kernel,
    inst: Inst,
    k: &SecondaryMap<Value, Known>,
    shape: Option<&DispatchShape>,
) -> Known {
    let data = &kernel.insts[inst];
    let Some(&r) = data.results.first() else {
        return Known::exactly(0);
    };
    let ty = kernel.value_type(r);
    let full = ty.mask();
    let any = Known::at_most(full);
    let arg = |i: usize| data.args.get(i).map_or(any, |&a| k[a]);
    // An upper bound that may wrap in the type: nothing known then.
    let bounded = |hi: Option<u64>| match hi {
        Some(h) if h <= full => Known::at_most(h),
        _ => any,
    };
    match &data.kind {
        InstKind::Const { bits, .. } => Known::exactly(bits & full),
        InstKind::Builtin(b) => builtin_known(*b, shape),
        InstKind::IBinary(op) => {
            let (a, b) = (arg(0), arg(1));
            let amount = || shift_amount(kernel, data.args[1], ty);
            match op {
                IBinOp::And => Known {
                    mask: a.mask & b.mask,
                    hi: a.hi.min(b.hi),
                },
                // Below the next power of two of the larger bound.
                IBinOp::Or | IBinOp::Xor => Known::at_most(below_or_at(a.hi | b.hi)).and(Known {
                    mask: a.mask | b.mask,
                    hi: full,
                }),
                // Disjoint bits: no carry, so an `or`.
                IBinOp::Add if a.mask & b.mask == 0 => Known {
                    mask: a.mask | b.mask,
                    hi: a.hi.saturating_add(b.hi).min(full),
                },
                IBinOp::Add => bounded(a.hi.checked_add(b.hi)),
                IBinOp::Mul if a.hi == 0 || b.hi == 0 => Known::exactly(0),
                IBinOp::Mul => bounded(a.hi.checked_mul(b.hi)),
                IBinOp::Shl => match amount() {
                    Some(s) => {
                        let mask = (a.mask << s) & full;
                        match a.hi.checked_shl(s).filter(|h| h >> s == a.hi) {
                            Some(h) if h <= full => Known { mask, hi: h },
                            _ => Known { mask, hi: full },
                        }
                    }
                    None => any,
                },
                // With the sign bit clear, an arithmetic shift is the logical one.
                IBinOp::ShrU | IBinOp::ShrS
                    if *op == IBinOp::ShrU || a.mask >> (ty.bits() - 1) == 0 =>
                {
                    match amount() {
                        Some(s) => Known {
                            mask: a.mask >> s,
                            hi: a.hi >> s,
                        },
                        None => Known::at_most(a.hi),
                    }
                }
                // The quotient is at most the dividend (x / 0 is all ones).
                IBinOp::DivU => match konst(kernel, data.args[1]) {
                    Some(c) if c != 0 => Known::at_most(a.hi / c),
                    _ => any,
                },
                // The remainder is at most the dividend (x % 0 is x), and
                // below a divisor that is not 0.
                IBinOp::RemU => match konst(kernel, data.args[1]) {
                    Some(c) if c != 0 => Known::at_most(a.hi.min(c - 1)),
                    _ => Known::at_most(a.hi),
                },
                IBinOp::MinU => Known::at_most(a.hi.min(b.hi)),
                IBinOp::MaxU => Known::at_most(a.hi.max(b.hi)),
                _ => any,
            }
        }
        InstKind::Cast { op, .. } => {
            let a = arg(0);
            let src_bits = data
                .args
                .first()
                .map_or(64, |&x| kernel.value_type(x).bits());
            match op {
                CastOp::Zext => a,
                // Sign bit clear: the same value.
                CastOp::Sext if src_bits < 64 && a.mask >> (src_bits - 1) == 0 => a,
                CastOp::Trunc if a.hi <= full => a,
                CastOp::Trunc => Known {
                    mask: a.mask & full,
                    hi: full,
                },
                _ => any,
            }
        }
        InstKind::Select => {
            let (x, y) = (arg(1), arg(2));
            Known {
                mask: x.mask | y.mask,
                hi: x.hi.max(y.hi),
            }
        }
        _ => any,
    }
}

/// An unsigned compare with a constant that the other side's upper bound
/// decides: `x < c` is true for every lane when `x <= hi < c`, ...
fn decide_compare(
    kernel: &Kernel,
    cc: IntCC,
    args: &[Value],
    known: &SecondaryMap<Value, Known>,
) -> Option<Rewrite> {
    let &[a, b] = args else {
        return None;
    };
    let (x, c, flipped) = match (konst(kernel, a), konst(kernel, b)) {
        (None, Some(c)) => (known[a].hi, c, false),
        (Some(c), None) => (known[b].hi, c, true),
        _ => return None,
    };
    // `c op x` is `x op' c` with the sides swapped.
    let cc = match (cc, flipped) {
        (cc, false) => cc,
        (IntCC::Ult, true) => IntCC::Ugt,
        (IntCC::Ule, true) => IntCC::Uge,
        (IntCC::Ugt, true) => IntCC::Ult,
        (IntCC::Uge, true) => IntCC::Ule,
        _ => return None,
    };
    let holds = match cc {
        IntCC::Ult if x < c => true,
        IntCC::Ule if x <= c => true,
        IntCC::Ugt if x <= c => false,
        IntCC::Uge if x < c => false,
        _ => return None,
    };
    Some(Rewrite::Decided(holds))
}

/// The instruction defining `v`, its kind and arguments.
fn def_of(kernel: &Kernel, v: Value) -> Option<(Inst, &InstKind, &[Value])> {
    let ValueDef::Result { inst, .. } = kernel.values[v].def else {
        return None;
    };
    let d = &kernel.insts[inst];
    Some((inst, &d.kind, d.args.as_slice()))
}

/// The two parts of `v` when it is `a + b`, `a | b` or `a ^ b` of parts that
/// share no bit (so it equals `a | b`).
fn disjoint_parts(kernel: &Kernel, v: Value, m: &SecondaryMap<Value, u64>) -> Option<[Value; 2]> {
    match def_of(kernel, v)? {
        (_, InstKind::IBinary(IBinOp::Add | IBinOp::Or | IBinOp::Xor), &[a, b])
            if m[a] & m[b] == 0 =>
        {
            Some([a, b])
        }
        _ => None,
    }
}

/// What to do with one instruction.
enum Rewrite {
    /// Its result is always this constant.
    Const(u64),
    /// A compare whose result is always this.
    Decided(bool),
    /// Its result always equals this value.
    Alias(Value),
    /// `or` / `xor` of disjoint bits: an `add`.
    Add,
    /// The same operation with this first operand.
    First(Value),
}

fn decide(
    kernel: &Kernel,
    inst: Inst,
    known: &SecondaryMap<Value, Known>,
    m: &SecondaryMap<Value, u64>,
    shape: Option<&DispatchShape>,
) -> Option<Rewrite> {
    let data = &kernel.insts[inst];
    let &[r] = data.results.as_slice() else {
        return None;
    };
    let ty = kernel.value_type(r);
    if let InstKind::Icmp(cc) = data.kind {
        return decide_compare(kernel, cc, &data.args, known);
    }
    if let (InstKind::Builtin(b), Some(s)) = (&data.kind, shape)
        && let Some(x) = builtin_value(*b, s)
    {
        return Some(Rewrite::Const(x & ty.mask()));
    }
    // `i1` has bitwise operations but no `add`.
    if !ty.is_int() || ty == Type::I1 {
        return None;
    }
    let pure = matches!(
        data.kind,
        InstKind::Builtin(_) | InstKind::IBinary(_) | InstKind::Cast { .. } | InstKind::Select
    );
    if pure && m[r] == 0 && !matches!(data.kind, InstKind::Const { .. }) {
        return Some(Rewrite::Const(0));
    }
    if let InstKind::Cast { op: outer, to } = data.kind
        && let Some((_, InstKind::Cast { op: inner, .. }, &[x])) = def_of(kernel, data.args[0])
    {
        let from = kernel.value_type(x);
        return match (outer, *inner) {
            // A widening of a widening of the same kind is one widening.
            (CastOp::Zext, CastOp::Zext) | (CastOp::Sext, CastOp::Sext) => Some(Rewrite::First(x)),
            // Narrowing a widened value back to its type gives it back.
            (CastOp::Trunc, CastOp::Zext | CastOp::Sext) if from == to => Some(Rewrite::Alias(x)),
            _ => None,
        };
    }
    let InstKind::IBinary(op) = data.kind else {
        return None;
    };
    let &[a, b] = data.args.as_slice() else {
        return None;
    };
    match op {
        IBinOp::Add | IBinOp::Or | IBinOp::Xor if m[b] == 0 => Some(Rewrite::Alias(a)),
        IBinOp::Add | IBinOp::Or | IBinOp::Xor if m[a] == 0 => Some(Rewrite::Alias(b)),
        IBinOp::Sub if m[b] == 0 => Some(Rewrite::Alias(a)),
        IBinOp::Or | IBinOp::Xor if m[a] & m[b] == 0 => Some(Rewrite::Add),
        IBinOp::And => {
            let c = konst(kernel, b)?;
            if m[a] & !c == 0 {
                return Some(Rewrite::Alias(a));
            }
            // `(x | y) & c` reads only the part with bits in `c`.
            let [x, y] = disjoint_parts(kernel, a, m)?;
            match (m[x] & c == 0, m[y] & c == 0) {
                (true, false) => Some(Rewrite::First(y)),
                (false, true) => Some(Rewrite::First(x)),
                _ => None,
            }
        }
        IBinOp::ShrU => {
            let k = shift_amount(kernel, b, ty)?;
            if let Some((_, InstKind::IBinary(IBinOp::Shl), &[x, s])) = def_of(kernel, a)
                && shift_amount(kernel, s, ty) == Some(k)
                && k > 0
                && m[x] >> (ty.bits() - k) == 0
            {
                return Some(Rewrite::Alias(x));
            }
            let [x, y] = disjoint_parts(kernel, a, m)?;
            match (m[x] >> k == 0, m[y] >> k == 0) {
                (true, false) => Some(Rewrite::First(y)),
                (false, true) => Some(Rewrite::First(x)),
                _ => None,
            }
        }
        _ => None,
    }
}

fn rewrite(
    kernel: &mut Kernel,
    known: &SecondaryMap<Value, Known>,
    shape: Option<&DispatchShape>,
    stats: &mut BitsStats,
) {
    let mut m: SecondaryMap<Value, u64> = SecondaryMap::new();
    for (v, k) in known.iter() {
        m[v] = k.mask;
    }
    let mut alias: SecondaryMap<Value, Option<Value>> = SecondaryMap::new();
    let insts: Vec<Inst> = kernel
        .blocks
        .values()
        .flat_map(|b| b.insts.iter().copied())
        .collect();
    for inst in insts {
        let Some(change) = decide(kernel, inst, known, &m, shape) else {
            continue;
        };
        let r = kernel.insts[inst].results[0];
        let ty = kernel.value_type(r);
        let data = &mut kernel.insts[inst];
        match change {
            Rewrite::Const(bits) => {
                data.kind = InstKind::Const { ty, bits };
                data.args.clear();
                stats.constants += 1;
            }
            Rewrite::Decided(holds) => {
                data.kind = InstKind::Const {
                    ty,
                    bits: u64::from(holds),
                };
                data.args.clear();
                stats.compares += 1;
            }
            Rewrite::Alias(v) => {
                alias[r] = Some(v);
                stats.identities += 1;
            }
            Rewrite::Add => {
                data.kind = InstKind::IBinary(IBinOp::Add);
                stats.adds += 1;
            }
            Rewrite::First(v) => {
                data.args[0] = v;
                stats.narrowed += 1;
            }
        }
    }
    // Chains of aliases resolve to their end (each points to an operand,
    // defined earlier, so they cannot loop).
    let resolve = |mut v: Value| {
        while let Some(n) = alias[v] {
            v = n;
        }
        v
    };
    map_uses(kernel, |v| *v = resolve(*v));
}
