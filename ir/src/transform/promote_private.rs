//! Promotes private-memory slots to SSA values ("mem2reg" for per-lane scratch).
//!
//! Lifters that keep guest registers in private memory (AGX: one load or store
//! per register access) leave the engines a lot of memory traffic. Every
//! promotable slot (see `private_slots`) instead becomes a value: loads are
//! replaced by the slot's current value (narrow accesses by shifts, truncations
//! and `BitInsert` on it), stores by nothing, and joins get block parameters
//! where the slot is live (pruned SSA, see `slot_placement`). A slot starts as
//! 0, as the interpreter zeroes private memory at workgroup start.
//!
//! Why behaviour is unchanged: private memory belongs to one lane, so only that
//! lane's own loads observe its stores; the promoted accesses can never fault
//! (constant, in bounds, aligned) and the code that replaces them cannot either;
//! no block is added, so the watchdog's block count is the same. Removing
//! instructions shifts indices inside blocks, but lanes only stand inside a
//! block at its start or after a barrier (or stop for good at a fault), both of
//! which are kept, so the co-active sets of cross-lane operations are the same.

use std::collections::HashMap;

use cranelift_entity::packed_option::ReservedValue;
use cranelift_entity::{EntityRef, SecondaryMap};

use super::compact::{compact, map_uses};
use super::private_slots::{Slot, SlotAccess, Slots, const_bits, find_slots, int_type_for_bits};
use super::slot_placement::place_params;
use crate::analysis::{Cfg, DomTree};
use crate::entities::{Block, Inst, Value};
use crate::inst::{CastOp, IBinOp, InstKind};
use crate::kernel::Kernel;
use crate::types::Type;
use crate::verify::{VerifyError, verify};

/// What [`promote_private`] did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PromoteStats {
    /// Slots turned into values.
    pub slots: usize,
    /// Private loads and stores removed.
    pub loads: usize,
    pub stores: usize,
    /// Block parameters added.
    pub params: usize,
}

/// Promotes the private-memory slots of `kernel` to SSA values in place.
///
/// Nothing is promoted when any private access has a non-constant address, or
/// when the entry block is a branch target (it cannot take the parameters a
/// slot would need there). Accesses that could fault (misaligned, out of
/// bounds), vector accesses, and everything they overlap stay in memory.
/// Returns the verifier's error, with `kernel` untouched, if the input does
/// not verify.
pub fn promote_private(kernel: &mut Kernel) -> Result<PromoteStats, VerifyError> {
    verify(kernel)?;
    Ok(promote_verified(kernel))
}

fn promote_verified(kernel: &mut Kernel) -> PromoteStats {
    let cfg = Cfg::compute(kernel);
    let Some(entry) = kernel.entry() else {
        return PromoteStats::default();
    };
    if !cfg.preds(entry).is_empty() {
        return PromoteStats::default();
    }
    let slots = find_slots(kernel);
    if slots.slots.is_empty() {
        return PromoteStats::default();
    }
    let dom = DomTree::from_cfg(&cfg);
    let placed = place_params(kernel, &cfg, &dom, &slots);

    let mut params: Vec<Vec<Value>> = vec![Vec::new(); kernel.blocks.len()];
    for (index, list) in placed.iter().enumerate() {
        let block = Block::new(index);
        params[index] = list
            .iter()
            .map(|&s| kernel.add_block_param(block, slots.slots[s].ty))
            .collect();
    }

    let mut rw = Rewriter {
        kernel,
        slots: &slots,
        placed: &placed,
        cur: Vec::new(),
        undo: Vec::new(),
        alias: SecondaryMap::new(),
        zeros: HashMap::new(),
        dead_addrs: Vec::new(),
        stats: PromoteStats {
            slots: slots.slots.len(),
            params: placed.iter().map(Vec::len).sum(),
            ..PromoteStats::default()
        },
    };
    rw.start_entry(entry);
    rw.walk(&dom, entry, &params);
    rw.feed_unreachable(&dom);
    rw.substitute();
    rw.drop_dead_addresses();
    let stats = rw.stats;
    compact(kernel);
    stats
}

struct Rewriter<'a> {
    kernel: &'a mut Kernel,
    slots: &'a Slots,
    /// Per block: the slots of its added parameters, in order.
    placed: &'a [Vec<usize>],
    /// Current value of every slot at the rewrite position.
    cur: Vec<Value>,
    /// (slot, previous value) to restore when the dominator walk leaves a block.
    undo: Vec<(usize, Value)>,
    /// Results of removed loads -> the value that replaces them (never itself aliased).
    alias: SecondaryMap<Value, Option<Value>>,
    /// One zero per slot type, at the top of the entry block.
    zeros: HashMap<Type, Value>,
    /// Address values of removed accesses (their constants may now be dead).
    dead_addrs: Vec<Value>,
    stats: PromoteStats,
}

enum Step {
    Enter(Block),
    Leave(usize),
}

impl Rewriter<'_> {
    fn resolve(&self, v: Value) -> Value {
        self.alias[v].unwrap_or(v)
    }

    /// Puts the zero constants first in the entry block and starts every slot there.
    fn start_entry(&mut self, entry: Block) {
        let old = std::mem::take(&mut self.kernel.blocks[entry].insts);
        for slot in &self.slots.slots {
            if !self.zeros.contains_key(&slot.ty) {
                let inst = self.kernel.append_inst(
                    entry,
                    InstKind::Const {
                        ty: slot.ty,
                        bits: 0,
                    },
                    &[],
                );
                if let Some(&v) = self.kernel.insts[inst].results.first() {
                    self.zeros.insert(slot.ty, v);
                }
            }
        }
        self.kernel.blocks[entry].insts.extend(old);
        self.cur = self
            .slots
            .slots
            .iter()
            .map(|s| {
                self.zeros
                    .get(&s.ty)
                    .copied()
                    .unwrap_or_else(Value::reserved_value)
            })
            .collect();
    }

    /// Rewrites the reachable blocks in dominator-tree preorder, so a slot's
    /// current value on entry to a block is the one its idom left (or the block's
    /// parameter for the slot, where two definitions meet).
    fn walk(&mut self, dom: &DomTree, entry: Block, params: &[Vec<Value>]) {
        let mut children: Vec<Vec<Block>> = vec![Vec::new(); self.kernel.blocks.len()];
        for &b in dom.rpo() {
            if let Some(parent) = dom.idom(b) {
                children[parent.index()].push(b);
            }
        }
        let mut stack = vec![Step::Enter(entry)];
        while let Some(step) = stack.pop() {
            match step {
                Step::Leave(mark) => {
                    while self.undo.len() > mark {
                        if let Some((slot, old)) = self.undo.pop() {
                            self.cur[slot] = old;
                        }
                    }
                }
                Step::Enter(block) => {
                    stack.push(Step::Leave(self.undo.len()));
                    let slots = &self.placed[block.index()];
                    for (&slot, &param) in slots.iter().zip(&params[block.index()]) {
                        self.set(slot, param);
                    }
                    self.rewrite_block(block);
                    for &child in children[block.index()].iter().rev() {
                        stack.push(Step::Enter(child));
                    }
                }
            }
        }
    }

    fn set(&mut self, slot: usize, v: Value) {
        let old = std::mem::replace(&mut self.cur[slot], v);
        self.undo.push((slot, old));
    }

    fn rewrite_block(&mut self, block: Block) {
        let old = std::mem::take(&mut self.kernel.blocks[block].insts);
        for inst in old {
            let Some(&acc) = self.slots.accesses.get(&inst) else {
                self.kernel.blocks[block].insts.push(inst);
                continue;
            };
            let data = &self.kernel.insts[inst];
            let (addr, stored, result) = (
                data.args.first().copied(),
                data.args.get(1).copied(),
                data.results.first().copied(),
            );
            let stored = stored.map(|v| self.resolve(v));
            let srcloc = self.kernel.srclocs[inst].0;
            let mut at = Emit {
                kernel: &mut *self.kernel,
                block,
                srcloc,
            };
            let slot = self.slots.slots[acc.slot];
            if acc.store {
                let Some(v) = stored else {
                    continue;
                };
                let new = at.merge(slot, &acc, self.cur[acc.slot], v);
                self.set(acc.slot, new);
                self.stats.stores += 1;
            } else {
                let v = at.extract(slot, &acc, self.cur[acc.slot]);
                if let Some(r) = result {
                    self.alias[r] = Some(v);
                }
                self.stats.loads += 1;
            }
            self.dead_addrs.extend(addr);
        }
        self.pass_slots(block, |rw, slot| rw.cur[slot]);
    }

    /// Appends the slot values the targets of `block`'s terminator now expect.
    fn pass_slots(&mut self, block: Block, value: impl Fn(&Self, usize) -> Value) {
        let Some(mut term) = self.kernel.blocks[block].term.take() else {
            return;
        };
        for call in term.calls_mut() {
            if let Some(list) = self.placed.get(call.block.index()) {
                call.args.extend(list.iter().map(|&slot| value(self, slot)));
            }
        }
        self.kernel.blocks[block].term = Some(term);
    }

    /// Unreachable blocks keep their accesses (no lane runs them) but must pass
    /// well-typed arguments to reachable targets: zeros do.
    fn feed_unreachable(&mut self, dom: &DomTree) {
        let blocks: Vec<Block> = self.kernel.blocks.keys().collect();
        for block in blocks {
            if !dom.is_reachable(block) {
                self.pass_slots(block, |rw, slot| {
                    let ty = rw.slots.slots[slot].ty;
                    rw.zeros
                        .get(&ty)
                        .copied()
                        .unwrap_or_else(Value::reserved_value)
                });
            }
        }
    }

    /// Replaces every use of a removed load's result.
    fn substitute(&mut self) {
        let alias = &self.alias;
        let map = |v: &mut Value| *v = alias[*v].unwrap_or(*v);
        map_uses(self.kernel, map);
    }

    /// Removes the address constants only the removed accesses used.
    fn drop_dead_addresses(&mut self) {
        let kernel = &mut *self.kernel;
        let mut used: SecondaryMap<Value, bool> = SecondaryMap::new();
        for block in kernel.blocks.values() {
            for &inst in &block.insts {
                for &a in &kernel.insts[inst].args {
                    used[a] = true;
                }
            }
            if let Some(term) = &block.term {
                for v in term.uses() {
                    used[v] = true;
                }
            }
        }
        let mut dead: SecondaryMap<Inst, bool> = SecondaryMap::new();
        for &v in &self.dead_addrs {
            if used[v] || const_bits(kernel, v).is_none() {
                continue;
            }
            if let crate::kernel::ValueDef::Result { inst, .. } = kernel.values[v].def {
                dead[inst] = true;
            }
        }
        for block in kernel.blocks.values_mut() {
            block.insts.retain(|&i| !dead[i]);
        }
    }
}

/// Appends replacement code at the end of a block being rebuilt.
struct Emit<'k> {
    kernel: &'k mut Kernel,
    block: Block,
    srcloc: Option<u64>,
}

impl Emit<'_> {
    fn ins(&mut self, kind: InstKind, args: &[Value]) -> Value {
        let inst = self.kernel.append_inst(self.block, kind, args);
        if let Some(pc) = self.srcloc {
            self.kernel.set_srcloc(inst, pc);
        }
        self.kernel.insts[inst]
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

    /// Integer `v` of type `from` truncated or extended to `to`.
    fn resize(&mut self, v: Value, from: Type, to: Type, signed: bool) -> Value {
        match from.bits().cmp(&to.bits()) {
            std::cmp::Ordering::Equal => v,
            std::cmp::Ordering::Greater => self.cast(CastOp::Trunc, to, v),
            std::cmp::Ordering::Less if signed => self.cast(CastOp::Sext, to, v),
            std::cmp::Ordering::Less => self.cast(CastOp::Zext, to, v),
        }
    }

    /// The value a load `acc` reads from a slot holding `cur`, exactly as the
    /// interpreter forms it from little-endian bytes.
    fn extract(&mut self, slot: Slot, acc: &SlotAccess, cur: Value) -> Value {
        if acc.is_whole(&slot) {
            return cur;
        }
        // Here the slot is an integer: find_slots gives other types only to
        // slots that every access moves whole.
        let mut x = cur;
        if acc.rel > 0 {
            let shift = self.iconst(slot.ty, 8 * u64::from(acc.rel));
            x = self.ins(InstKind::IBinary(IBinOp::ShrU), &[x, shift]);
        }
        let raw = int_type_for_bits(acc.mem.bits);
        x = self.resize(x, slot.ty, raw, false);
        let int = acc.mem.ty.as_int();
        x = self.resize(x, raw, int, acc.mem.signed);
        if acc.mem.ty.is_float() {
            x = self.cast(CastOp::Bitcast, acc.mem.ty, x);
        }
        x
    }

    /// The slot's value after a store `acc` of `v` into a slot holding `cur`.
    fn merge(&mut self, slot: Slot, acc: &SlotAccess, cur: Value, v: Value) -> Value {
        if acc.is_whole(&slot) {
            return v;
        }
        let mut y = v;
        let int = acc.mem.ty.as_int();
        if acc.mem.ty.is_float() {
            y = self.cast(CastOp::Bitcast, int, y);
        }
        let raw = int_type_for_bits(acc.mem.bits);
        y = self.resize(y, int, raw, false);
        if acc.covers(&slot) {
            return y;
        }
        y = self.resize(y, raw, slot.ty, false);
        let offset = self.iconst(Type::I32, 8 * u64::from(acc.rel));
        let width = self.iconst(Type::I32, u64::from(acc.mem.bits));
        self.ins(InstKind::BitInsert, &[cur, y, offset, width])
    }
}
