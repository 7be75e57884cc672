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
//! (an over-approximation: a bit outside the mask is zero in every lane).
//! Builtins are bounded by the limits every engine checks before a lane runs
//! (`Dispatch::check`: at most [`MAX_WORKGROUP_LANES`] lanes per workgroup),
//! and, given the [`DispatchShape`] a kernel is lifted for, by that grid
//! (a dimension of size 1 makes its ids 0). The rewrites, each exact for
//! every operand value inside the masks:
//! - a pure instruction whose mask is 0 becomes the constant 0;
//! - `x & m` is `x` when every bit `x` may have is set in the constant `m`,
//!   and `(a | b) & m` is `b & m` when `a` has no bit of `m`;
//! - `a | b` and `a ^ b` are `a + b` when `a` and `b` share no bit (no carry);
//! - `(a | b) >> k` is `a >> k` when `b < 2^k` (and `a`, `b` share no bit);
//! - `(a << k) >> k` is `a` when no bit of `a` leaves through the shift;
//! - `x + 0`, `x | 0`, `x ^ 0`, `x - 0` are `x` for a zero mask operand.
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
use crate::inst::{Builtin, CastOp, IBinOp, InstKind};
use crate::kernel::{Kernel, ValueDef};
use crate::types::Type;
use crate::verify::{VerifyError, verify};

/// What [`simplify_bits`] did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct BitsStats {
    /// Instructions whose value is known to be 0, now constants.
    pub zeros: usize,
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
        self.zeros + self.identities + self.adds + self.narrowed
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
        let masks = may_be_set(kernel, shape);
        rewrite(kernel, &masks, &mut stats);
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

/// Mask of a builtin: the limits every dispatch is checked against, and
/// `shape` when the kernel is for one grid.
fn builtin_mask(b: Builtin, shape: Option<&DispatchShape>) -> u64 {
    let lanes_max = u64::from(MAX_WORKGROUP_LANES);
    let dim = |d: u8| usize::from(d).min(2);
    match (b, shape) {
        // A lane's index in its wave, and its wave's index, are at most its
        // index in the workgroup.
        (Builtin::LocalIndex | Builtin::LaneId | Builtin::WaveId, Some(s)) => {
            let n: u64 = s.workgroup_size.iter().map(|&x| u64::from(x)).product();
            below_or_at(n.saturating_sub(1))
        }
        (Builtin::LocalId(d), Some(s)) => {
            below_or_at(u64::from(s.workgroup_size[dim(d)]).saturating_sub(1))
        }
        (Builtin::WorkgroupId(d), Some(s)) => {
            below_or_at(u64::from(s.num_workgroups[dim(d)]).saturating_sub(1))
        }
        (Builtin::WorkgroupSize(d), Some(s)) => u64::from(s.workgroup_size[dim(d)]),
        (Builtin::NumWorkgroups(d), Some(s)) => u64::from(s.num_workgroups[dim(d)]),
        (Builtin::LocalIndex | Builtin::LocalId(_) | Builtin::LaneId | Builtin::WaveId, None) => {
            below_or_at(lanes_max - 1)
        }
        (Builtin::WorkgroupSize(_), None) => below_or_at(lanes_max),
        _ => u32::MAX.into(),
    }
}

/// The bits every integer value may have set (the type's mask when nothing
/// is known). Values are visited until nothing changes, so an operand
/// defined in a later block is never read before it is known (it starts at
/// the type's mask: sound, only less precise).
fn may_be_set(kernel: &Kernel, shape: Option<&DispatchShape>) -> SecondaryMap<Value, u64> {
    let mut m: SecondaryMap<Value, u64> = SecondaryMap::with_default(u64::MAX);
    for (v, data) in kernel.values.iter() {
        m[v] = if data.ty.is_int() { data.ty.mask() } else { 0 };
    }
    for _ in 0..MAX_ROUNDS {
        let mut changed = false;
        for block in kernel.blocks.values() {
            for &inst in &block.insts {
                let data = &kernel.insts[inst];
                let &[r] = data.results.as_slice() else {
                    continue;
                };
                let ty = kernel.value_type(r);
                if !ty.is_int() {
                    continue;
                }
                let new = inst_mask(kernel, inst, &m, shape) & m[r] & ty.mask();
                if new != m[r] {
                    m[r] = new;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    m
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

fn inst_mask(
    kernel: &Kernel,
    inst: Inst,
    m: &SecondaryMap<Value, u64>,
    shape: Option<&DispatchShape>,
) -> u64 {
    let data = &kernel.insts[inst];
    let Some(&r) = data.results.first() else {
        return 0;
    };
    let ty = kernel.value_type(r);
    let full = ty.mask();
    let arg = |k: usize| data.args.get(k).map_or(full, |&a| m[a]);
    match &data.kind {
        InstKind::Const { bits, .. } => bits & full,
        InstKind::Builtin(b) => builtin_mask(*b, shape),
        InstKind::IBinary(op) => {
            let (a, b) = (arg(0), arg(1));
            let sum = |x: u64, y: u64| match x.checked_add(y) {
                Some(s) if s <= full => below_or_at(s),
                _ => full,
            };
            match op {
                IBinOp::And => a & b,
                IBinOp::Or | IBinOp::Xor => a | b,
                IBinOp::Add if a & b == 0 => a | b,
                IBinOp::Add => sum(a, b),
                IBinOp::Mul if a == 0 || b == 0 => 0,
                IBinOp::Mul => match a.checked_mul(b) {
                    Some(p) if p <= full => below_or_at(p),
                    _ => full,
                },
                IBinOp::Shl => match shift_amount(kernel, data.args[1], ty) {
                    Some(k) => (a << k) & full,
                    None => full,
                },
                IBinOp::ShrU => match shift_amount(kernel, data.args[1], ty) {
                    Some(k) => a >> k,
                    None => below_or_at(a),
                },
                // The quotient is at most the dividend (x / 0 is all ones).
                IBinOp::DivU if konst(kernel, data.args[1]).is_some_and(|c| c != 0) => {
                    below_or_at(a)
                }
                // The remainder is at most the dividend (x % 0 is x).
                IBinOp::RemU => below_or_at(a),
                IBinOp::MinU => below_or_at(a.min(b)),
                IBinOp::MaxU => below_or_at(a | b),
                _ => full,
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
                // Sign bit clear: the same bits.
                CastOp::Sext if src_bits < 64 && a >> (src_bits - 1) == 0 => a,
                CastOp::Trunc => a & full,
                _ => full,
            }
        }
        InstKind::Select => arg(1) | arg(2),
        _ => full,
    }
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
    /// Its result is always 0.
    Zero,
    /// Its result always equals this value.
    Alias(Value),
    /// `or` / `xor` of disjoint bits: an `add`.
    Add,
    /// The same operation with this first operand.
    First(Value),
}

fn decide(kernel: &Kernel, inst: Inst, m: &SecondaryMap<Value, u64>) -> Option<Rewrite> {
    let data = &kernel.insts[inst];
    let &[r] = data.results.as_slice() else {
        return None;
    };
    let ty = kernel.value_type(r);
    // `i1` has bitwise operations but no `add`.
    if !ty.is_int() || ty == Type::I1 {
        return None;
    }
    let pure = matches!(
        data.kind,
        InstKind::Builtin(_) | InstKind::IBinary(_) | InstKind::Cast { .. } | InstKind::Select
    );
    if pure && m[r] == 0 && !matches!(data.kind, InstKind::Const { .. }) {
        return Some(Rewrite::Zero);
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

fn rewrite(kernel: &mut Kernel, m: &SecondaryMap<Value, u64>, stats: &mut BitsStats) {
    let mut alias: SecondaryMap<Value, Option<Value>> = SecondaryMap::new();
    let insts: Vec<Inst> = kernel
        .blocks
        .values()
        .flat_map(|b| b.insts.iter().copied())
        .collect();
    for inst in insts {
        let Some(change) = decide(kernel, inst, m) else {
            continue;
        };
        let r = kernel.insts[inst].results[0];
        let ty = kernel.value_type(r);
        let data = &mut kernel.insts[inst];
        match change {
            Rewrite::Zero => {
                data.kind = InstKind::Const { ty, bits: 0 };
                data.args.clear();
                stats.zeros += 1;
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
