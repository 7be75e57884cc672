//! Integer narrowing: a `trunc.i64.i32` of 64-bit arithmetic whose low 32 bits
//! only depend on the low 32 bits of its operands is recomputed in 32 bits.
//!
//! Lifters widen to 64 bits where the ISA does (AGX `imadd` and shifts compute
//! in 64 bits, then keep the low half); engines run 32-bit arithmetic faster
//! (the JIT's vector runs take i32 and f32 only). The low 32 bits of `a + b`,
//! `a - b`, `a * b`, `a & b`, `a | b` and `a ^ b` are the same operation on the
//! low 32 bits of `a` and `b`; of `a << k` (0 <= k < 32) the same shift of the
//! low bits; of `zext(x) >> k` (logical, k < 32) the 32-bit `x >> k`. Leaves:
//! `zext`/`sext` of an `i32` (its low half is the `i32`) and constants.
//!
//! Only pure integer instructions that cannot fault are added (before the
//! `trunc`, in its block) and only uses of the `trunc` change, so every lane
//! computes the same values, enters the same blocks (the watchdog count) and
//! performs the same memory effects; the 64-bit instructions left without a
//! reader are removed by the dead-code pass.

use std::collections::HashMap;

use super::compact::{compact, map_uses};
use super::dead_code::{DeadCounts, remove_dead};
use super::private_slots::const_bits;
use crate::entities::{Block, Inst, Value};
use crate::inst::{CastOp, IBinOp, InstKind};
use crate::kernel::{Kernel, ValueDef};
use crate::types::Type;
use crate::verify::{VerifyError, verify};

/// What [`narrow_integers`] did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct NarrowStats {
    /// `trunc.i64.i32` instructions whose value is now computed in 32 bits.
    pub truncs: usize,
    /// 32-bit instructions added for them.
    pub added: usize,
    pub dead: DeadCounts,
}

/// Deepest expression narrowed below one `trunc` (bounds the work on long
/// chains; a deeper operand stays a `trunc` of the 64-bit value).
const MAX_DEPTH: u32 = 24;

/// Narrows `kernel` (see the module documentation), then removes what became
/// dead and compacts. Returns the verifier's error, with `kernel` untouched,
/// if the input does not verify.
pub fn narrow_integers(kernel: &mut Kernel) -> Result<NarrowStats, VerifyError> {
    verify(kernel)?;
    let mut stats = NarrowStats::default();
    let mut alias: HashMap<Value, Value> = HashMap::new();
    let blocks: Vec<Block> = kernel.blocks.keys().collect();
    for block in blocks {
        // 32-bit versions built in this block (they dominate what follows).
        let mut built: HashMap<Value, Value> = HashMap::new();
        let mut i = 0;
        while i < kernel.blocks[block].insts.len() {
            let inst = kernel.blocks[block].insts[i];
            i += 1;
            let Some(wide) = trunc_to_i32_of_i64(kernel, inst) else {
                continue;
            };
            let mut b = Narrower {
                kernel,
                block,
                at: i - 1,
                srcloc: inst,
                built: &mut built,
                added: 0,
            };
            let Some(narrow) = b.narrow(wide, 0) else {
                continue;
            };
            let added = b.added;
            // The new instructions went in before the `trunc`.
            i += added;
            stats.added += added;
            stats.truncs += 1;
            if let Some(&r) = kernel.insts[inst].results.first() {
                alias.insert(r, narrow);
            }
        }
    }
    map_uses(kernel, |v| {
        if let Some(&n) = alias.get(v) {
            *v = n;
        }
    });
    remove_dead(kernel, &mut stats.dead);
    compact(kernel);
    Ok(stats)
}

/// The `i64` argument of `inst` when it is `trunc.i64.i32`.
fn trunc_to_i32_of_i64(kernel: &Kernel, inst: Inst) -> Option<Value> {
    let data = &kernel.insts[inst];
    match data.kind {
        InstKind::Cast {
            op: CastOp::Trunc,
            to: Type::I32,
        } => {
            let &a = data.args.first()?;
            (kernel.value_type(a) == Type::I64).then_some(a)
        }
        _ => None,
    }
}

/// Builds 32-bit instructions at position `at` of `block`.
struct Narrower<'k, 'm> {
    kernel: &'k mut Kernel,
    block: Block,
    at: usize,
    /// The instruction whose guest pc the new ones carry.
    srcloc: Inst,
    built: &'m mut HashMap<Value, Value>,
    added: usize,
}

impl Narrower<'_, '_> {
    /// An `i32` holding the low 32 bits of the `i64` value `v`, built from
    /// 32-bit operations, or `None` when some part of `v` does not narrow.
    fn narrow(&mut self, v: Value, depth: u32) -> Option<Value> {
        if let Some(&n) = self.built.get(&v) {
            return Some(n);
        }
        if depth > MAX_DEPTH || self.kernel.value_type(v) != Type::I64 {
            return None;
        }
        let ValueDef::Result { inst, .. } = self.kernel.values[v].def else {
            return None;
        };
        let data = self.kernel.insts[inst].clone();
        let n = match data.kind {
            InstKind::Cast {
                op: CastOp::Zext | CastOp::Sext,
                ..
            } => {
                let &a = data.args.first()?;
                if self.kernel.value_type(a) != Type::I32 {
                    return None;
                }
                a
            }
            InstKind::Const { bits, .. } => self.emit(
                InstKind::Const {
                    ty: Type::I32,
                    bits: bits & 0xffff_ffff,
                },
                &[],
            )?,
            InstKind::IBinary(
                op @ (IBinOp::Add
                | IBinOp::Sub
                | IBinOp::Mul
                | IBinOp::And
                | IBinOp::Or
                | IBinOp::Xor),
            ) => {
                let (a, b) = (*data.args.first()?, *data.args.get(1)?);
                let a = self.narrow(a, depth + 1)?;
                let b = self.narrow(b, depth + 1)?;
                self.emit(InstKind::IBinary(op), &[a, b])?
            }
            InstKind::IBinary(op @ (IBinOp::Shl | IBinOp::ShrU)) => {
                let (a, k) = (*data.args.first()?, *data.args.get(1)?);
                // The amount is taken modulo 64; below 32 it is the same in
                // 32 bits.
                let k = const_bits(self.kernel, k)? % 64;
                if k >= 32 {
                    return None;
                }
                let a = if op == IBinOp::ShrU {
                    // Only a value whose high half is zero shifts its low
                    // half alone.
                    zext_source(self.kernel, a)?
                } else {
                    self.narrow(a, depth + 1)?
                };
                let k = self.emit(
                    InstKind::Const {
                        ty: Type::I32,
                        bits: k,
                    },
                    &[],
                )?;
                self.emit(InstKind::IBinary(op), &[a, k])?
            }
            _ => return None,
        };
        self.built.insert(v, n);
        Some(n)
    }

    /// Adds `kind(args)` before the `trunc`; its single result.
    fn emit(&mut self, kind: InstKind, args: &[Value]) -> Option<Value> {
        let inst = self.kernel.append_inst(self.block, kind, args);
        let insts = &mut self.kernel.blocks[self.block].insts;
        insts.pop();
        insts.insert(self.at, inst);
        self.at += 1;
        self.added += 1;
        self.kernel.srclocs[inst] = self.kernel.srclocs[self.srcloc];
        self.kernel.insts[inst].results.first().copied()
    }
}

/// `x` when `v` is `zext.i32.i64 x`.
fn zext_source(kernel: &Kernel, v: Value) -> Option<Value> {
    let ValueDef::Result { inst, .. } = kernel.values[v].def else {
        return None;
    };
    let data = &kernel.insts[inst];
    match data.kind {
        InstKind::Cast {
            op: CastOp::Zext, ..
        } => {
            let &x = data.args.first()?;
            (kernel.value_type(x) == Type::I32).then_some(x)
        }
        _ => None,
    }
}
