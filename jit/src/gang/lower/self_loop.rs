//! A self-loop block iterated inside one chunk with its state in registers:
//! the block's parameters and the iteration mask are Cranelift block
//! parameters of the iteration loop, and the steps are one iteration count
//! checked against the chunk's least budget. Memory sees the state only
//! when a lane leaves (its steps and the loop's values the rest of the
//! kernel reads), when the loop ends (the leaving lanes' pcs, the
//! parameters), or before a helper that reads the slab (`wj_gang_redo`).
//!
//! Exactness: the plan runs a self-loop lane-major (nothing in it writes
//! memory other lanes see, and it leaves only to higher pcs), so a chunk's
//! iterations are the interpreter's for its lanes; the pcs of lanes still
//! iterating stay at the loop's pc in memory all along, which is what they
//! are, and helpers that stop a lane write its pc and clear it in the mask
//! slot, which the loop reads after every helper.

use cranelift_codegen::ir::{self, InstBuilder, MemFlagsData, condcodes::IntCC as CC, types};
use wavejit_ir::{self as wj, BlockCall, Terminator, Type};

use super::{GLower, Gv, Helper, guest};
use crate::error::JitError;
use crate::gang::abi::{PC_DEAD, off};
use crate::gang::helpers::{wide, wj_gang_watchdog};
use crate::plan::Run;

/// The self-loop being iterated in registers.
pub(super) struct HeldLoop {
    /// The loop block.
    pub(super) block: wj::Block,
    /// Its parameters, held in registers.
    params: Vec<wj::Value>,
    /// Values of the loop the rest of the kernel reads: written to the slab
    /// for the lanes that leave (nothing in the loop reads them there).
    pub(super) exports: Vec<wj::Value>,
    /// This iteration's number from 1 (i32).
    t: ir::Value,
    /// The least step budget of the chunk's lanes at the start (i32).
    budget: ir::Value,
    /// What the terminator decided: (lanes going round again, the
    /// parameters' next values, lanes leaving).
    next: Option<(Gv, Vec<Gv>, Gv)>,
}

impl GLower<'_, '_> {
    /// Whether `block`'s self-loop can hold its state in registers: a jump
    /// or a branch (a table goes through memory, see `iterate_chunk`).
    pub(super) fn holds_in_registers(&self, block: wj::Block) -> bool {
        matches!(
            self.kernel.blocks[block].term,
            Some(Terminator::Jump(_) | Terminator::Branch { .. })
        )
    }

    /// The register type of `v`'s vectors as block parameters.
    fn held_type(&self, v: wj::Value) -> ir::Type {
        let ty = self.kernel.value_type(v);
        if ty != Type::I1 && wide(ty) {
            types::I64X2
        } else {
            types::I32X4
        }
    }

    fn held_of(&mut self, v: wj::Value, x: ir::Value) -> ir::Value {
        if self.held_type(v) == types::I64X2 {
            self.i64x2_of(x)
        } else {
            self.i32x4_of(x)
        }
    }

    /// Iterates self-loop `block` (the plan's `run`) for the current chunk
    /// with its state in registers, until no lane goes round.
    ///
    /// Steps: every lane active in an iteration takes one, whichever edge
    /// it takes, so a lane that leaves at iteration `t` has taken `t` more
    /// than at the start. The loop counts `t` as a scalar against the
    /// smallest budget (limit minus steps) of its lanes, checks lane by lane
    /// only from then on, and writes a lane's steps when it leaves.
    pub(super) fn iterate_chunk_held(
        &mut self,
        k: usize,
        block: wj::Block,
        run: &Run,
    ) -> Result<(), JitError> {
        let g = self.g;
        let head = self.b.create_block();
        let done = self.b.create_block();
        let lane0 = self.chunk()?.lane0;
        let params = self.kernel.blocks[block].params.clone();
        let first = self.mask();
        let budget = self.least_budget(&first)?;
        // Entry state: no iteration yet, the parameters (from the slab),
        // the mask.
        let zero = self.iconst(types::I32, 0);
        let mut entry: Vec<ir::BlockArg> = vec![zero.into()];
        for &p in &params {
            for x in self.val(p)? {
                entry.push(self.held_of(p, x).into());
            }
        }
        entry.extend(first.iter().map(|&m| ir::BlockArg::from(m)));
        self.b.ins().jump(head, &entry);

        self.b.switch_to_block(head);
        let take = |this: &mut Self, at: ir::Block, n: usize, ty: ir::Type| -> Gv {
            (0..n).map(|_| this.b.append_block_param(at, ty)).collect()
        };
        let iter = self.b.append_block_param(head, types::I32);
        let mut params_in = Vec::with_capacity(params.len());
        for &p in &params {
            let n = self.vecs(self.kernel.value_type(p));
            let ty = self.held_type(p);
            params_in.push(take(self, head, n, ty));
        }
        let mask_in = take(self, head, g, types::I32X4);
        let t = self.b.ins().iadd_imm_s(iter, 1);
        // Nothing computed in the last iteration holds in this one.
        self.env.clear();
        self.consts.clear();
        self.senv.clear();
        self.redo = vec![None; g];
        for (&p, v) in params.iter().zip(&params_in) {
            // I1 parameters are all-ones/zero lanes, as `val` gives them.
            self.env.insert(p, v.clone());
        }
        // Helpers read the mask from its slot.
        for (kk, &m) in mask_in.iter().enumerate() {
            self.b
                .ins()
                .stack_store(types::I64, m, self.mask_slot, 16 * kk as i32);
        }
        self.mask_cache = Some(mask_in.clone());
        self.chunk_mask = Some(mask_in.clone());
        self.held = Some(HeldLoop {
            block,
            params: params.clone(),
            t,
            budget,
            exports: Vec::new(),
            next: None,
        });
        let r = self.run(k, 0, block, run, None);
        let held = self.held.take();
        r?;
        let exports = held.as_ref().map(|h| h.exports.clone()).unwrap_or_default();
        let (again, params_out, left) = match held.and_then(|h| h.next) {
            Some(next) => next,
            // A trap ended the run: its lanes are stopped.
            None => {
                let zero = self.splat(0, false);
                (vec![zero; g], params_in.clone(), vec![zero; g])
            }
        };
        // The lanes leaving now have taken `t` steps more than at the start,
        // and their values of the loop are final.
        let mut any_left = left[0];
        for &m in &left[1..] {
            any_left = self.b.ins().bor(any_left, m);
        }
        let any_left = self.b.ins().vany_true(any_left);
        let count = self.b.create_block();
        let counted = self.b.create_block();
        self.b.ins().brif(any_left, count, &[], counted, &[]);
        self.b.switch_to_block(count);
        let steps = self.ctx_load(types::I64, off::STEPS);
        let tv = self.b.ins().splat(types::I32X4, t);
        for (kk, &m) in left.iter().enumerate() {
            let p = self.lane_ptr(steps, lane0, kk);
            let x = self.b.ins().load(types::I32X4, guest(), p, 0);
            let y = self.b.ins().iadd(x, tv);
            let y = self.b.ins().bitselect(m, y, x);
            self.b.ins().store(guest(), y, p, 0);
        }
        for v in exports {
            let g = self.val(v)?;
            self.write_slab(v, &g, &left)?;
        }
        self.b.ins().jump(counted, &[]);
        self.b.switch_to_block(counted);

        let mut any = again[0];
        for &m in &again[1..] {
            any = self.b.ins().bor(any, m);
        }
        let any = self.b.ins().vany_true(any);
        let mut state: Vec<ir::BlockArg> = Vec::new();
        for v in &params_out {
            state.extend(v.iter().map(|&x| ir::BlockArg::from(x)));
        }
        let mut round: Vec<ir::BlockArg> = vec![t.into()];
        round.extend(state.iter().cloned());
        round.extend(again.iter().map(|&m| ir::BlockArg::from(m)));
        self.b.ins().brif(any, head, &round, done, &state);

        // Done: the state goes to memory.
        self.b.switch_to_block(done);
        let mut params_done = Vec::with_capacity(params.len());
        for &p in &params {
            let n = self.vecs(self.kernel.value_type(p));
            let ty = self.held_type(p);
            params_done.push(take(self, done, n, ty));
        }
        self.env.clear();
        self.consts.clear();
        self.senv.clear();
        self.mask_cache = None;
        self.chunk_mask = None;
        // Each lane's parameters as of its last iteration (the lanes that
        // were never active keep theirs: `first` is a superset of the rest).
        for (&p, v) in params.iter().zip(&params_done) {
            if self.plan.spill[p] {
                self.write_slab(p, v, &first)?;
            }
        }
        // Every lane that started is now stopped (its pc dead) or has left
        // for the exit, whose pc it gets.
        if let Some(out) = self.exit_pc(block) {
            let pcs = self.ctx_load(types::I64, off::PC);
            let t = self.splat(i64::from(out), false);
            let dead = self.splat(i64::from(PC_DEAD as i32), false);
            for (kk, &m) in first.iter().enumerate() {
                let p = self.lane_ptr(pcs, lane0, kk);
                let x = self.b.ins().load(types::I32X4, guest(), p, 0);
                let live = self.b.ins().icmp(CC::NotEqual, x, dead);
                let m = self.b.ins().band(m, live);
                let y = self.b.ins().bitselect(m, t, x);
                self.b.ins().store(guest(), y, p, 0);
            }
        }
        Ok(())
    }

    /// The smallest step budget (limit minus steps taken) of the lanes in
    /// `mask`, as an i32 scalar (unsigned; `u32::MAX` for no lane).
    fn least_budget(&mut self, mask: &[ir::Value]) -> Result<ir::Value, JitError> {
        let lane0 = self.chunk()?.lane0;
        let steps = self.ctx_load(types::I64, off::STEPS);
        let limit = self.ctx_load(types::I32, off::STEP_LIMIT);
        let limit = self.b.ins().splat(types::I32X4, limit);
        let none = self.splat(-1, false);
        let mut least = none;
        for (kk, &m) in mask.iter().enumerate() {
            let p = self.lane_ptr(steps, lane0, kk);
            let s = self.b.ins().load(types::I32X4, guest(), p, 0);
            let b = self.b.ins().isub(limit, s);
            let b = self.b.ins().bitselect(m, b, none);
            least = self.b.ins().umin(least, b);
        }
        Ok(self.horizontal_umin(least))
    }

    /// The pc a lane leaving self-loop `block` goes to (none: a jump to
    /// itself, or a branch with both sides back).
    fn exit_pc(&self, block: wj::Block) -> Option<u32> {
        match &self.kernel.blocks[block].term {
            Some(Terminator::Branch {
                then, otherwise, ..
            }) => [then, otherwise]
                .into_iter()
                .find(|c| c.block != block)
                .map(|c| self.plan.block_pc[c.block]),
            _ => None,
        }
    }

    /// The terminator of the held self-loop for the current chunk: the
    /// leaving edge's arguments go to the slab and its lanes are counted;
    /// the back edges' arguments become the parameters' next values.
    pub(super) fn held_terminator(&mut self, block: wj::Block) -> Result<(), JitError> {
        let term = self.kernel.blocks[block]
            .term
            .clone()
            .ok_or(JitError::Malformed("block without terminator"))?;
        if !matches!(term, Terminator::Jump(_) | Terminator::Branch { .. }) {
            return Err(JitError::Malformed("held self-loop terminator"));
        }
        let mask = self.mask();
        let edges = self.edges(&term, &mask)?;
        let args = self.edge_args(&edges)?;
        let params = self.kernel.blocks[block].params.clone();
        let mut next: Vec<Gv> = Vec::with_capacity(params.len());
        for &p in &params {
            let v = self.val(p)?;
            next.push(v.into_iter().map(|x| self.held_of(p, x)).collect());
        }
        for ((m, call), vals) in edges.iter().zip(&args) {
            if call.block != block {
                self.write_edge_args(m, call, vals)?;
            }
        }
        let after = self.held_watchdog(&edges)?;
        let zero = self.splat(0, false);
        let mut again: Gv = vec![zero; self.g];
        let mut left: Gv = vec![zero; self.g];
        for ((m, call), vals) in edges.iter().zip(&args) {
            let m: Gv = m
                .iter()
                .zip(&after)
                .map(|(&m, &a)| self.b.ins().band(m, a))
                .collect();
            let acc = if call.block == block {
                &mut again
            } else {
                &mut left
            };
            for (a, &x) in acc.iter_mut().zip(&m) {
                *a = self.b.ins().bor(*a, x);
            }
            if call.block != block {
                continue;
            }
            if vals.len() != params.len() {
                return Err(JitError::Malformed("block argument count"));
            }
            for ((&p, cur), v) in params.iter().zip(next.iter_mut()).zip(vals) {
                let wide_mask = self.held_type(p) == types::I64X2;
                let m = if wide_mask {
                    self.wide_mask(&m)
                } else {
                    m.clone()
                };
                for ((c, &x), &mm) in cur.iter_mut().zip(v).zip(&m) {
                    let x = self.held_of(p, x);
                    *c = self.b.ins().bitselect(mm, x, *c);
                }
            }
        }
        if let Some(h) = self.held.as_mut() {
            h.next = Some((again, next, left));
        }
        Ok(())
    }

    /// The held loop's step check for this iteration's edges: lane by lane
    /// (and the watchdog faults) only once `t` is past the least budget.
    /// Returns the mask without the lanes it stopped.
    fn held_watchdog(&mut self, edges: &[(Gv, BlockCall)]) -> Result<Gv, JitError> {
        let (t, budget) = match &self.held {
            Some(h) => (h.t, h.budget),
            None => return Err(JitError::Malformed("held watchdog outside a held loop")),
        };
        let mask = self.mask();
        let over = self.b.ins().icmp(CC::UnsignedGreaterThan, t, budget);
        let cold = self.b.create_block();
        let join = self.b.create_block();
        let after: Gv = (0..self.g)
            .map(|_| self.b.append_block_param(join, types::I32X4))
            .collect();
        let fast: Vec<ir::BlockArg> = mask.iter().map(|&m| m.into()).collect();
        self.b.set_cold_block(cold);
        self.b.ins().brif(over, cold, &[], join, &fast);
        self.b.switch_to_block(cold);
        let slow = self.cold(|this| {
            let lane0 = this.chunk()?.lane0;
            let steps = this.ctx_load(types::I64, off::STEPS);
            let limit = this.ctx_load(types::I32, off::STEP_LIMIT);
            let limit = this.b.ins().splat(types::I32X4, limit);
            let tv = this.b.ins().splat(types::I32X4, t);
            let mut o = Vec::with_capacity(this.g);
            for (kk, &m) in mask.iter().enumerate() {
                let p = this.lane_ptr(steps, lane0, kk);
                let s = this.b.ins().load(types::I32X4, guest(), p, 0);
                let s = this.b.ins().iadd(s, tv);
                let x = this.b.ins().icmp(CC::UnsignedGreaterThan, s, limit);
                o.push(this.b.ins().band(x, m));
            }
            let lane0 = this.b.ins().ireduce(types::I32, lane0);
            for (m, call) in edges {
                let bits = this.scratch_at(0);
                for (kk, (&m, &o)) in m.iter().zip(&o).enumerate() {
                    let hit = this.b.ins().band(m, o);
                    this.b
                        .ins()
                        .store(MemFlagsData::trusted(), hit, bits, 16 * kk as i32);
                }
                let blk = this.iconst(types::I32, i64::from(call.block.as_u32()));
                let f = this.iconst(types::I64, wj_gang_watchdog as *const () as i64);
                let call_args = [this.ctx, lane0, bits, blk];
                this.call_helper(Helper::Watchdog, f, &call_args);
            }
            let mut slow: Vec<ir::BlockArg> = Vec::with_capacity(this.g);
            for (kk, (&m, &o)) in mask.iter().zip(&o).enumerate() {
                let a = this.b.ins().band_not(m, o);
                this.b
                    .ins()
                    .stack_store(types::I64, a, this.mask_slot, 16 * kk as i32);
                slow.push(a.into());
            }
            Ok(slow)
        })?;
        self.b.ins().jump(join, &slow);
        self.b.switch_to_block(join);
        self.mask_cache = Some(after.clone());
        Ok(after)
    }

    /// Before a helper reads the slab: the held parameters' current values
    /// for the chunk's active lanes.
    pub(super) fn flush_held(&mut self) -> Result<(), JitError> {
        let Some(params) = self.held.as_ref().map(|h| h.params.clone()) else {
            return Ok(());
        };
        let mask = self.mask();
        for p in params {
            let v = self.val(p)?;
            self.write_slab(p, &v, &mask)?;
        }
        Ok(())
    }
}
