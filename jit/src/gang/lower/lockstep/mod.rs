//! Lockstep lowering: a workgroup's lanes run barrier interval by barrier
//! interval (*epochs*), each epoch as one loop over the workgroup's chunks,
//! each chunk through the whole interval before the next (the work-group
//! loops of PoCL and COX).
//!
//! [`plan::LsPlan`] admits a kernel only when no two lanes touch the same
//! memory inside an epoch (so the order of lanes there cannot be seen) and
//! the control flow outside divergent regions is decided by scalars: every
//! lane of the workgroup then runs the same blocks outside regions, barriers
//! are where every chunk's pass ends, and nothing is parked or scheduled.
//! Uniform values are scalars (computed once per pass, not per lane), a
//! divergent region runs its blocks in pc order under execution masks held in
//! variables (the lowest-pc-first order of one wave), and per-lane values
//! that outlive a block live in the slab as in the scheduled core.
//!
//! Steps: an edge outside regions is one step of every live lane, counted
//! once in a scalar `u`; region edges count per lane in the steps array.
//! A lane's count is its entry plus both. The watchdog's test outside
//! regions is on `u` plus the largest per-lane count `m` (raised by a
//! region's longest path each time one runs); only when that could pass the
//! limit do the lanes of the chunk get their exact test.

pub(crate) mod plan;

use std::collections::HashMap;

use cranelift_codegen::ir::{self, InstBuilder, MemFlagsData, condcodes::IntCC as CC, types};
use cranelift_frontend::Variable;
use wavejit_ir::{self as wj, BlockCall, Builtin, CastOp, IBinOp, InstKind, Terminator, Type};

use super::{Chunk, GLower, Gv, St, guest};
use crate::error::JitError;
use crate::gang::abi::{PC_DEAD, off};
use crate::gang::helpers::wj_gang_watchdog;
use plan::{LsPlan, Start};

/// Lowering state of a lockstep kernel.
pub(crate) struct Lockstep {
    pub plan: LsPlan,
    /// The variable of every scalar value.
    vars: HashMap<wj::Value, Variable>,
    /// Steps every live lane took outside regions in this slot.
    u: Variable,
    /// Largest per-lane step count of the slot (an upper bound).
    m: Variable,
    /// `step_limit - u` while a region runs: the per-lane counts' limit.
    pub limit: Variable,
    /// The chunk's live lanes outside regions.
    alive: Vec<Variable>,
    /// The execution mask of every region block.
    masks: HashMap<wj::Block, Vec<Variable>>,
    /// Set when a chunk's pass reaches a barrier (the next epoch) or the end.
    next_epoch: Variable,
    u_next: Variable,
    m_next: Variable,
    /// The current epoch's scalars, each with the variable that keeps its
    /// value where a chunk's pass ended (the value every later epoch sees:
    /// a chunk skipped or stopped early leaves it alone).
    commit: Vec<(Variable, Variable)>,
}

/// `next_epoch` when the slot is done.
fn done_epoch(plan: &LsPlan) -> i64 {
    plan.epochs.len() as i64
}

impl GLower<'_, '_> {
    /// Whether `v` is computed as a scalar.
    pub(super) fn ls_scalar(&self, v: wj::Value) -> bool {
        self.ls
            .as_ref()
            .is_some_and(|ls| ls.plan.scalar.contains(&v))
    }

    /// The whole function for a lockstep kernel.
    pub(super) fn ls_schedule(&mut self) -> Result<(), JitError> {
        let ls = self
            .ls
            .as_mut()
            .ok_or(JitError::Malformed("lockstep plan"))?;
        let g = self.g;
        // Variables: scalars, counters, masks.
        let mut scalars: Vec<wj::Value> = ls.plan.scalar.iter().copied().collect();
        scalars.sort();
        let b = &mut self.b;
        let zero_of = |b: &mut cranelift_frontend::FunctionBuilder, ty: ir::Type| {
            if ty.is_vector() {
                let z = b.ins().iconst(types::I32, 0);
                b.ins().splat(ty, z)
            } else {
                b.ins().iconst(ty, 0)
            }
        };
        for v in scalars {
            let ty = scalar_ir_type(self.kernel.value_type(v));
            let var = b.declare_var(ty);
            let z = zero_of(b, ty);
            b.def_var(var, z);
            ls.vars.insert(v, var);
        }
        let mut region_blocks: Vec<wj::Block> = ls
            .plan
            .regions
            .values()
            .flat_map(|r| r.blocks.iter().copied())
            .collect();
        region_blocks.sort();
        for rb in region_blocks {
            let vs: Vec<Variable> = (0..g).map(|_| b.declare_var(types::I32X4)).collect();
            for &v in &vs {
                let z = zero_of(b, types::I32X4);
                b.def_var(v, z);
            }
            ls.masks.insert(rb, vs);
        }
        for &v in ls.alive.iter() {
            let z = zero_of(b, types::I32X4);
            b.def_var(v, z);
        }
        for v in [ls.u, ls.m, ls.limit, ls.next_epoch, ls.u_next, ls.m_next] {
            let z = zero_of(b, types::I32);
            b.def_var(v, z);
        }
        let epochs = ls.plan.epochs.len();
        let done_id = done_epoch(&ls.plan);

        self.init_pcs()?;
        let ret = self.b.create_block();
        let slot_head = self.b.create_block();
        let slot_next = self.b.create_block();
        let dispatch = self.b.create_block();
        let zero = self.iconst(types::I32, 0);
        self.st_store(St::Slot, zero);
        self.b.ins().jump(slot_head, &[]);

        // slot_head: the slot's lanes are one "wave".
        self.b.switch_to_block(slot_head);
        let slot = self.st_load(St::Slot);
        let live = self.ctx_load(types::I32, off::LIVE_SLOTS);
        let past = self
            .b
            .ins()
            .icmp(CC::UnsignedGreaterThanOrEqual, slot, live);
        let start = self.b.create_block();
        self.b.ins().brif(past, ret, &[], start, &[]);
        self.b.switch_to_block(start);
        let wgl = self.ctx_load(types::I32, off::WG_LANES);
        let slot = self.st_load(St::Slot);
        let base = self.b.ins().imul(slot, wgl);
        self.st_store(St::Base, base);
        self.st_store(St::N, wgl);
        let zero = self.iconst(types::I32, 0);
        self.st_store(St::Lo, zero);
        let one = self.iconst(types::I32, 1);
        self.st_store(St::Conv, one);
        let (u, m) = (self.ls_var(|l| l.u)?, self.ls_var(|l| l.m)?);
        let zero = self.iconst(types::I32, 0);
        self.b.def_var(u, zero);
        let one = self.iconst(types::I32, 1);
        self.b.def_var(m, one);
        let e0 = self.iconst(types::I32, 0);
        self.b.ins().jump(dispatch, &[e0.into()]);

        self.b.switch_to_block(slot_next);
        let slot = self.st_load(St::Slot);
        let slot = self.b.ins().iadd_imm_s(slot, 1);
        self.st_store(St::Slot, slot);
        self.b.ins().jump(slot_head, &[]);

        // dispatch(epoch)
        self.b.switch_to_block(dispatch);
        let e = self.b.append_block_param(dispatch, types::I32);
        let epoch_blocks: Vec<ir::Block> = (0..epochs).map(|_| self.b.create_block()).collect();
        let calls: Vec<ir::BlockCall> = epoch_blocks
            .iter()
            .map(|&blk| self.b.func.dfg.block_call(blk, &[]))
            .collect();
        let dflt = self.b.func.dfg.block_call(slot_next, &[]);
        let jt = self
            .b
            .create_jump_table(ir::JumpTableData::new(dflt, &calls));
        self.b.ins().br_table(e, jt);
        let _ = done_id;

        for (k, &blk) in epoch_blocks.iter().enumerate() {
            self.b.switch_to_block(blk);
            self.ls_epoch(k, dispatch)?;
        }

        self.b.switch_to_block(ret);
        let f = self.ctx_load(types::I32, off::FAULTED);
        self.b.ins().return_(&[f]);
        Ok(())
    }

    fn ls_var(&self, f: impl Fn(&Lockstep) -> Variable) -> Result<Variable, JitError> {
        self.ls
            .as_deref()
            .map(f)
            .ok_or(JitError::Malformed("lockstep state"))
    }

    fn ls_ref(&self) -> Result<&Lockstep, JitError> {
        self.ls
            .as_deref()
            .ok_or(JitError::Malformed("lockstep state"))
    }

    /// Epoch `k`: every chunk's pass, then the next epoch (`dispatch`).
    fn ls_epoch(&mut self, k: usize, dispatch: ir::Block) -> Result<(), JitError> {
        let ep = self.ls_ref()?.plan.epochs[k].clone();
        let done_id = done_epoch(&self.ls_ref()?.plan);
        let (u, m) = (self.ls_var(|l| l.u)?, self.ls_var(|l| l.m)?);
        let (nx, un, mn) = (
            self.ls_var(|l| l.next_epoch)?,
            self.ls_var(|l| l.u_next)?,
            self.ls_var(|l| l.m_next)?,
        );
        // The values every pass starts from.
        let restore: Vec<(Variable, ir::Value)> = ep
            .restore
            .iter()
            .map(|v| {
                let var = self.ls_ref()?.vars[v];
                Ok((var, self.b.use_var(var)))
            })
            .collect::<Result<_, JitError>>()?;
        let mut commit = Vec::with_capacity(restore.len());
        for (&(var, x), v) in restore.iter().zip(&ep.restore) {
            let next = self
                .b
                .declare_var(scalar_ir_type(self.kernel.value_type(*v)));
            self.b.def_var(next, x);
            commit.push((var, next));
        }
        if let Some(ls) = self.ls.as_mut() {
            ls.commit = commit.clone();
        }
        let u0 = self.b.use_var(u);
        let m0 = self.b.use_var(m);
        let d = self.iconst(types::I32, done_id);
        self.b.def_var(nx, d);
        self.b.def_var(un, u0);
        self.b.def_var(mn, m0);
        let head = self.b.create_block();
        let body = self.b.create_block();
        let latch = self.b.create_block();
        let end = self.b.create_block();
        let zero = self.iconst(types::I32, 0);
        self.b.ins().jump(head, &[zero.into()]);
        self.b.switch_to_block(head);
        let c = self.b.append_block_param(head, types::I32);
        let n = self.st_load(St::N);
        let past = self.b.ins().icmp(CC::UnsignedGreaterThanOrEqual, c, n);
        self.b.ins().brif(past, end, &[], body, &[]);

        self.b.switch_to_block(body);
        self.clear_chunk_values();
        let base = self.st_load(St::Base);
        let lane0 = self.b.ins().iadd(base, c);
        let lane0 = self.b.ins().uextend(types::I64, lane0);
        self.ch = Some(Chunk {
            lane0,
            c,
            full: None,
        });
        for &(var, x) in &restore {
            self.b.def_var(var, x);
        }
        self.b.def_var(u, u0);
        self.b.def_var(m, m0);
        let alive = self.ls_chunk_alive()?;
        self.ls_set_alive(&alive)?;
        let any = self.any_of(&alive);
        let go = self.b.create_block();
        self.b.ins().brif(any, go, &[], latch, &[]);
        self.b.switch_to_block(go);
        // Every position of the epoch, a block each.
        let mut blocks: HashMap<Start, ir::Block> = HashMap::new();
        for &s in &ep.nodes {
            blocks.insert(s, self.b.create_block());
        }
        self.b.ins().jump(blocks[&ep.start], &[]);
        for &s in &ep.nodes {
            self.b.switch_to_block(blocks[&s]);
            self.clear_chunk_values();
            self.ls_node(s, &blocks, latch)?;
        }

        self.b.switch_to_block(latch);
        self.clear_chunk_values();
        let step = super::chunk_lanes(self.g) as i64;
        let next = self.b.ins().iadd_imm_s(c, step);
        self.b.ins().jump(head, &[next.into()]);

        self.b.switch_to_block(end);
        self.ch = None;
        let e = self.b.use_var(nx);
        let u1 = self.b.use_var(un);
        let m1 = self.b.use_var(mn);
        self.b.def_var(u, u1);
        self.b.def_var(m, m1);
        for (var, next) in commit {
            let x = self.b.use_var(next);
            self.b.def_var(var, x);
        }
        self.b.ins().jump(dispatch, &[e.into()]);
        Ok(())
    }

    /// Forgets the values of the code being left (they may not dominate
    /// the next block emitted).
    fn clear_chunk_values(&mut self) {
        self.env.clear();
        self.consts.clear();
        self.senv.clear();
        self.mask_cache = None;
        self.chunk_mask = None;
        self.redo = vec![None; self.g];
    }

    /// The chunk's lanes that exist and are live: every lane that exists
    /// while no lane of the slot exited and none of the batch faulted.
    fn ls_chunk_alive(&mut self) -> Result<Gv, JitError> {
        let (conv_mask, _) = self.converged_mask(false)?;
        let clean = self.converged_and_clean();
        let lanes = self.b.create_block();
        let join = self.b.create_block();
        let out: Gv = (0..self.g)
            .map(|_| self.b.append_block_param(join, types::I32X4))
            .collect();
        let args: Vec<ir::BlockArg> = conv_mask.iter().map(|&x| x.into()).collect();
        self.b.ins().brif(clean, join, &args, lanes, &[]);
        self.b.switch_to_block(lanes);
        let live = self.pc_live(&conv_mask)?;
        let args: Vec<ir::BlockArg> = live.iter().map(|&x| x.into()).collect();
        self.b.ins().jump(join, &args);
        self.b.switch_to_block(join);
        Ok(out)
    }

    /// `m` without the lanes whose pc is dead.
    fn pc_live(&mut self, m: &[ir::Value]) -> Result<Gv, JitError> {
        let lane0 = self.chunk()?.lane0;
        let pcs = self.ctx_load(types::I64, off::PC);
        let dead = self.iconst(types::I32, i64::from(PC_DEAD as i32));
        let dead = self.b.ins().splat(types::I32X4, dead);
        let mut out = Vec::with_capacity(self.g);
        for (k, &x) in m.iter().enumerate() {
            let p = self.lane_ptr(pcs, lane0, k);
            let pc = self.b.ins().load(types::I32X4, guest(), p, 0);
            let gone = self.b.ins().icmp(CC::Equal, pc, dead);
            out.push(self.b.ins().band_not(x, gone));
        }
        Ok(out)
    }

    /// `m`, without lanes faulted since it was made (only read when some
    /// lane of the batch has faulted).
    fn ls_live(&mut self, m: &[ir::Value]) -> Result<Gv, JitError> {
        let faulted = self.ctx_load(types::I32, off::FAULTED);
        let cold = self.b.create_block();
        let join = self.b.create_block();
        let out: Gv = (0..self.g)
            .map(|_| self.b.append_block_param(join, types::I32X4))
            .collect();
        let args: Vec<ir::BlockArg> = m.iter().map(|&x| x.into()).collect();
        self.b.set_cold_block(cold);
        self.b.ins().brif(faulted, cold, &[], join, &args);
        self.b.switch_to_block(cold);
        let live = self.pc_live(m)?;
        let args: Vec<ir::BlockArg> = live.iter().map(|&x| x.into()).collect();
        self.b.ins().jump(join, &args);
        self.b.switch_to_block(join);
        Ok(out)
    }

    fn any_of(&mut self, m: &[ir::Value]) -> ir::Value {
        let mut a = m[0];
        for &x in &m[1..] {
            a = self.b.ins().bor(a, x);
        }
        self.b.ins().vany_true(a)
    }

    fn ls_alive(&mut self) -> Result<Gv, JitError> {
        let vars = self.ls_ref()?.alive.clone();
        Ok(vars.iter().map(|&v| self.b.use_var(v)).collect())
    }

    fn ls_set_alive(&mut self, m: &[ir::Value]) -> Result<(), JitError> {
        let vars = self.ls_ref()?.alive.clone();
        for (&v, &x) in vars.iter().zip(m) {
            self.b.def_var(v, x);
        }
        Ok(())
    }

    /// Makes `m` the chunk's execution mask for the block about to run.
    fn ls_enter(&mut self, m: &[ir::Value]) {
        self.clear_chunk_values();
        for (k, &x) in m.iter().enumerate() {
            self.b
                .ins()
                .stack_store(types::I64, x, self.mask_slot, 16 * k as i32);
        }
        self.mask_cache = Some(m.to_vec());
        self.chunk_mask = Some(m.to_vec());
    }

    /// Position `s` of an epoch outside regions: its scalars, its lanes'
    /// runs, then its terminator (or the barrier that ends the pass).
    fn ls_node(
        &mut self,
        s: Start,
        blocks: &HashMap<Start, ir::Block>,
        latch: ir::Block,
    ) -> Result<(), JitError> {
        let (b, from) = s;
        let data = self.kernel.blocks[b].clone();
        let stop = LsPlan::barrier_in(self.kernel, b, from);
        let end = stop.unwrap_or(data.insts.len());
        // Scalars first: pure, and their operands are scalars defined before.
        for &i in &data.insts[from..end] {
            if matches!(self.kernel.insts[i].results[..], [r] if self.ls_scalar(r)) {
                self.ls_scalar_inst(i)?;
            }
        }
        let term = data
            .term
            .clone()
            .ok_or(JitError::Malformed("no terminator"))?;
        let divergent = stop.is_none() && self.ls_ref()?.plan.regions.contains_key(&b);
        let lane_work = data.insts[from..end].iter().any(|&i| {
            let d = &self.kernel.insts[i];
            !matches!(d.kind, InstKind::Const { .. })
                && !matches!(d.results[..], [r] if self.ls_scalar(r))
        }) || (stop.is_none()
            && (divergent
                || term.calls().iter().any(|c| {
                    self.kernel.blocks[c.block]
                        .params
                        .iter()
                        .any(|p| !self.ls_scalar(*p))
                })));
        if divergent {
            // The region's masks start empty; the branch fills them.
            let region = self.ls_ref()?.plan.regions[&b].clone();
            let zero = self.splat(0, false);
            for rb in &region.blocks {
                let vars = self.ls_ref()?.masks[rb].clone();
                for v in vars {
                    self.b.def_var(v, zero);
                }
            }
            self.consts.clear();
        }
        if lane_work {
            let alive = self.ls_alive()?;
            let alive = self.ls_live(&alive)?;
            self.ls_set_alive(&alive)?;
            let any = self.any_of(&alive);
            let work = self.b.create_block();
            let after = self.b.create_block();
            self.b.ins().brif(any, work, &[], after, &[]);
            self.b.switch_to_block(work);
            self.ls_enter(&alive);
            self.ls_runs(b, from, end, stop.is_none())?;
            self.b.ins().jump(after, &[]);
            self.b.switch_to_block(after);
            self.clear_chunk_values();
        }
        if let Some(k) = stop {
            // The pass ends at the barrier: every chunk reaches it.
            let id = self.ls_ref()?.plan.epoch_of[&(b, k + 1)] as i64;
            self.ls_end_pass(id)?;
            self.b.ins().jump(latch, &[]);
            return Ok(());
        }
        match &term {
            Terminator::Exit => {
                let id = done_epoch(&self.ls_ref()?.plan);
                self.ls_end_pass(id)?;
                self.b.ins().jump(latch, &[]);
            }
            Terminator::Jump(call) => {
                self.ls_uniform_edge(call, blocks, latch)?;
            }
            Terminator::Branch {
                cond,
                then,
                otherwise,
            } if !divergent => {
                let c = self.ls_scalar_val(*cond)?;
                let t = self.b.create_block();
                let f = self.b.create_block();
                self.b.ins().brif(c, t, &[], f, &[]);
                for (blk, call) in [(t, then), (f, otherwise)] {
                    self.b.switch_to_block(blk);
                    self.clear_chunk_values();
                    self.ls_uniform_edge(call, blocks, latch)?;
                }
            }
            Terminator::Branch {
                then, otherwise, ..
            } => {
                self.ls_region_entry(b, [then, otherwise], blocks, latch)?;
            }
            Terminator::Table { .. } => return Err(JitError::Malformed("lockstep table")),
        }
        Ok(())
    }

    /// Records where the pass ended (the same for every chunk).
    fn ls_end_pass(&mut self, id: i64) -> Result<(), JitError> {
        let ls = self.ls_ref()?;
        let (nx, un, mn, u, m) = (ls.next_epoch, ls.u_next, ls.m_next, ls.u, ls.m);
        let id = self.iconst(types::I32, id);
        self.b.def_var(nx, id);
        let uv = self.b.use_var(u);
        let mv = self.b.use_var(m);
        self.b.def_var(un, uv);
        self.b.def_var(mn, mv);
        for (var, next) in self.ls_ref()?.commit.clone() {
            let x = self.b.use_var(var);
            self.b.def_var(next, x);
        }
        Ok(())
    }

    /// The runs of block `b`'s segments from instruction `from` to `end`
    /// (with the terminator's lane part when `term`), for the current mask.
    fn ls_runs(
        &mut self,
        b: wj::Block,
        from: usize,
        end: usize,
        term: bool,
    ) -> Result<(), JitError> {
        let bpc = self.plan.block_pc[b] as usize;
        let segs: Vec<usize> = self
            .plan
            .kinds
            .iter()
            .enumerate()
            .filter_map(|(pc, k)| match *k {
                crate::plan::PcKind::Segment(s)
                    if self.plan.segments[s as usize].block == b
                        && pc >= bpc + from
                        && pc <= bpc + end =>
                {
                    Some(s as usize)
                }
                _ => None,
            })
            .collect();
        for k in segs {
            let seg = self.plan.segments[k].clone();
            for (r, run) in seg.runs.iter().enumerate() {
                if run.term && !term {
                    return Err(JitError::Malformed("lockstep terminator past a barrier"));
                }
                self.unnoted = self.unnoted_results(seg.block, run);
                self.run(k, r, seg.block, run, None)?;
            }
        }
        Ok(())
    }

    /// The lane part of block `b`'s terminator, called by `run` with the
    /// chunk's values: block arguments the lanes hold, and for a divergent
    /// branch the masks of the region's blocks it enters.
    pub(super) fn ls_terminator(&mut self, b: wj::Block) -> Result<(), JitError> {
        let in_region = self.ls_ref()?.plan.in_region[b];
        let term = self.kernel.blocks[b]
            .term
            .clone()
            .ok_or(JitError::Malformed("no terminator"))?;
        if in_region {
            return self.ls_region_terminator(b, &term);
        }
        let mask = self.mask();
        let edges = self.edges(&term, &mask)?;
        self.ls_lane_args(&edges)?;
        if let Some(region) = self.ls_ref()?.plan.regions.get(&b).cloned() {
            for (m, call) in &edges {
                if region.blocks.contains(&call.block) {
                    self.ls_or_mask(call.block, m)?;
                }
            }
        }
        Ok(())
    }

    /// Writes the arguments of every edge into the target parameters the
    /// lanes hold (scalar parameters move after the pass's lane work).
    fn ls_lane_args(&mut self, edges: &[(Gv, BlockCall)]) -> Result<(), JitError> {
        let args = self.edge_args(edges)?;
        for ((m, call), vals) in edges.iter().zip(&args) {
            let params = self.kernel.blocks[call.block].params.clone();
            for (&p, g) in params.iter().zip(vals) {
                if !self.ls_scalar(p) {
                    self.write_slab(p, g, m)?;
                }
            }
        }
        Ok(())
    }

    fn ls_or_mask(&mut self, block: wj::Block, m: &[ir::Value]) -> Result<(), JitError> {
        let vars = self.ls_ref()?.masks[&block].clone();
        for (&v, &x) in vars.iter().zip(m) {
            let old = self.b.use_var(v);
            let new = self.b.ins().bor(old, x);
            self.b.def_var(v, new);
        }
        Ok(())
    }

    /// A region block's terminator for the chunk: arguments, the masks of
    /// the region blocks it enters, one step per lane (with the watchdog),
    /// and lanes that exit leave the chunk.
    fn ls_region_terminator(&mut self, _b: wj::Block, term: &Terminator) -> Result<(), JitError> {
        let mask = self.mask();
        if let Terminator::Exit = term {
            let dead = self.splat(i64::from(PC_DEAD as i32), false);
            self.set_pcs(|_, _| Ok(dead))?;
            let alive = self.ls_alive()?;
            let left: Gv = alive
                .iter()
                .zip(&mask)
                .map(|(&a, &m)| self.b.ins().band_not(a, m))
                .collect();
            self.ls_set_alive(&left)?;
            let zero = self.iconst(types::I32, 0);
            self.st_store(St::Conv, zero);
            return Ok(());
        }
        let edges = self.edges(term, &mask)?;
        let args = self.edge_args(&edges)?;
        for ((m, call), vals) in edges.iter().zip(&args) {
            self.write_edge_args(m, call, vals)?;
        }
        let targets: Vec<(Gv, wj::Block)> =
            edges.iter().map(|(m, c)| (m.clone(), c.block)).collect();
        for (m, t) in &targets {
            if self.ls_ref()?.masks.contains_key(t) {
                self.ls_or_mask(*t, m)?;
            }
        }
        self.count_steps(&edges)
    }

    /// A uniform edge: scalar parameters move, one step for every live lane
    /// (the watchdog's test), then its target.
    fn ls_uniform_edge(
        &mut self,
        call: &BlockCall,
        blocks: &HashMap<Start, ir::Block>,
        latch: ir::Block,
    ) -> Result<(), JitError> {
        self.ls_scalar_moves(call)?;
        let alive = self.ls_alive()?;
        let any_left = self.ls_step(&[(alive, call.block)])?;
        let target = *blocks
            .get(&(call.block, 0))
            .ok_or(JitError::Malformed("lockstep edge to a block of no epoch"))?;
        self.b.ins().brif(any_left, target, &[], latch, &[]);
        Ok(())
    }

    /// Scalar parameters of `call`'s target take its arguments (all read
    /// first).
    fn ls_scalar_moves(&mut self, call: &BlockCall) -> Result<(), JitError> {
        let params = self.kernel.blocks[call.block].params.clone();
        let mut moves = Vec::new();
        for (&p, &a) in params.iter().zip(&call.args) {
            if self.ls_scalar(p) {
                let x = self.ls_scalar_val(a)?;
                moves.push((self.ls_ref()?.vars[&p], x));
            }
        }
        for (var, x) in moves {
            self.b.def_var(var, x);
        }
        Ok(())
    }

    /// One step of every live lane, entering the blocks of `edges` (their
    /// lanes); returns whether the chunk has a live lane left (i8).
    fn ls_step(&mut self, edges: &[(Gv, wj::Block)]) -> Result<ir::Value, JitError> {
        let (u, m) = (self.ls_var(|l| l.u)?, self.ls_var(|l| l.m)?);
        let uv = self.b.use_var(u);
        let uv = self.b.ins().iadd_imm_s(uv, 1);
        self.b.def_var(u, uv);
        let mv = self.b.use_var(m);
        let u64v = self.b.ins().uextend(types::I64, uv);
        let m64 = self.b.ins().uextend(types::I64, mv);
        let worst = self.b.ins().iadd(u64v, m64);
        let limit = self.ctx_load(types::I32, off::STEP_LIMIT);
        let limit64 = self.b.ins().uextend(types::I64, limit);
        let over = self.b.ins().icmp(CC::UnsignedGreaterThan, worst, limit64);
        let cold = self.b.create_block();
        let join = self.b.create_block();
        let left = self.b.append_block_param(join, types::I8);
        let yes = self.iconst(types::I8, 1);
        self.b.set_cold_block(cold);
        self.b.ins().brif(over, cold, &[], join, &[yes.into()]);
        self.b.switch_to_block(cold);
        let any = self.cold(|this| {
            // Exact: lanes whose count passes the limit fault entering.
            let lane0 = this.chunk()?.lane0;
            let steps = this.ctx_load(types::I64, off::STEPS);
            let room = this.b.ins().isub(limit, uv);
            let flip = this.splat(i64::from(i32::MIN), false);
            let room = this.b.ins().bxor_imm_s(room, i64::from(i32::MIN));
            let room = this.b.ins().splat(types::I32X4, room);
            let mut over = Vec::with_capacity(this.g);
            for k in 0..this.g {
                let p = this.lane_ptr(steps, lane0, k);
                let s = this.b.ins().load(types::I32X4, guest(), p, 0);
                let s = this.b.ins().bxor(s, flip);
                over.push(this.b.ins().icmp(CC::SignedGreaterThan, s, room));
            }
            for (mask, block) in edges {
                let bits = this.scratch_at(0);
                for (k, (&x, &o)) in mask.iter().zip(&over).enumerate() {
                    let hit = this.b.ins().band(x, o);
                    this.b
                        .ins()
                        .store(MemFlagsData::trusted(), hit, bits, 16 * k as i32);
                }
                let l32 = this.b.ins().ireduce(types::I32, lane0);
                let blk = this.iconst(types::I32, i64::from(block.as_u32()));
                let f = this.iconst(types::I64, wj_gang_watchdog as *const () as i64);
                let args = [this.ctx, l32, bits, blk];
                this.call_helper(super::Helper::Watchdog, f, &args);
            }
            let alive = this.ls_alive()?;
            let alive = this.pc_live(&alive)?;
            this.ls_set_alive(&alive)?;
            Ok(this.any_of(&alive))
        })?;
        self.b.ins().jump(join, &[any.into()]);
        self.b.switch_to_block(join);
        Ok(left)
    }

    /// A divergent branch: one step of every live lane to its side, then the
    /// region's blocks in pc order under their masks, then its join.
    fn ls_region_entry(
        &mut self,
        b: wj::Block,
        sides: [&BlockCall; 2],
        blocks: &HashMap<Start, ir::Block>,
        latch: ir::Block,
    ) -> Result<(), JitError> {
        let region = self.ls_ref()?.plan.regions[&b].clone();
        // Each side's lanes: the region block's mask, or the rest for the join.
        let alive = self.ls_alive()?;
        let mut entered: Option<Gv> = None;
        let mut edges: Vec<(Gv, wj::Block)> = Vec::new();
        let mut seen: Vec<wj::Block> = Vec::new();
        for call in sides {
            if region.blocks.contains(&call.block) && !seen.contains(&call.block) {
                seen.push(call.block);
                let vars = self.ls_ref()?.masks[&call.block].clone();
                let m: Gv = vars.iter().map(|&v| self.b.use_var(v)).collect();
                entered = Some(match entered {
                    None => m.clone(),
                    Some(e) => e
                        .iter()
                        .zip(&m)
                        .map(|(&a, &x)| self.b.ins().bor(a, x))
                        .collect(),
                });
                edges.push((m, call.block));
            }
        }
        for call in sides {
            if !region.blocks.contains(&call.block) {
                let rest: Gv = match &entered {
                    None => alive.clone(),
                    Some(e) => alive
                        .iter()
                        .zip(e)
                        .map(|(&a, &x)| self.b.ins().band_not(a, x))
                        .collect(),
                };
                edges.push((rest, call.block));
                break;
            }
        }
        let any_left = self.ls_step(&edges)?;
        let run = self.b.create_block();
        self.b.ins().brif(any_left, run, &[], latch, &[]);
        self.b.switch_to_block(run);
        self.clear_chunk_values();
        // Region edges count per lane against what is left of the limit.
        let (u, lim) = (self.ls_var(|l| l.u)?, self.ls_var(|l| l.limit)?);
        let uv = self.b.use_var(u);
        let limit = self.ctx_load(types::I32, off::STEP_LIMIT);
        let left = self.b.ins().isub(limit, uv);
        self.b.def_var(lim, left);
        for &rb in &region.blocks {
            let vars = self.ls_ref()?.masks[&rb].clone();
            let m: Gv = vars.iter().map(|&v| self.b.use_var(v)).collect();
            let m = self.ls_live(&m)?;
            let any = self.any_of(&m);
            let work = self.b.create_block();
            let next = self.b.create_block();
            self.b.ins().brif(any, work, &[], next, &[]);
            self.b.switch_to_block(work);
            self.ls_enter(&m);
            let len = self.kernel.blocks[rb].insts.len();
            self.ls_runs(rb, 0, len, true)?;
            self.b.ins().jump(next, &[]);
            self.b.switch_to_block(next);
            self.clear_chunk_values();
        }
        let m = self.ls_var(|l| l.m)?;
        let mv = self.b.use_var(m);
        let mv = self.b.ins().iadd_imm_s(mv, i64::from(region.longest));
        self.b.def_var(m, mv);
        match region.join {
            Some(j) => {
                let target = *blocks
                    .get(&(j, 0))
                    .ok_or(JitError::Malformed("lockstep join of no epoch"))?;
                self.b.ins().jump(target, &[]);
            }
            None => {
                // Every lane exited inside the region.
                let id = done_epoch(&self.ls_ref()?.plan);
                self.ls_end_pass(id)?;
                self.b.ins().jump(latch, &[]);
            }
        }
        Ok(())
    }

    /// Scalar value `v` (a constant or a scalar's variable).
    fn ls_scalar_val(&mut self, v: wj::Value) -> Result<ir::Value, JitError> {
        let ty = scalar_ir_type(self.kernel.value_type(v));
        if let Some(bits) = crate::plan::const_bits(self.kernel, v) {
            let bits = if self.kernel.value_type(v) == Type::I1 {
                (bits & 1) as i64
            } else {
                bits as i64
            };
            return Ok(self.iconst(ty, bits));
        }
        let var = *self
            .ls_ref()?
            .vars
            .get(&v)
            .ok_or(JitError::Malformed("lockstep value is not a scalar"))?;
        Ok(self.b.use_var(var))
    }

    /// Scalar `v` as the chunk's vectors.
    pub(super) fn ls_splat(&mut self, v: wj::Value) -> Result<Gv, JitError> {
        let ty = self.kernel.value_type(v);
        let x = self.ls_scalar_val(v)?;
        Ok(match ty {
            Type::I64 => vec![self.b.ins().splat(types::I64X2, x); 2 * self.g],
            Type::I1 => {
                let w = self.b.ins().uextend(types::I32, x);
                let w = self.b.ins().ineg(w);
                vec![self.b.ins().splat(types::I32X4, w); self.g]
            }
            _ => vec![self.b.ins().splat(types::I32X4, x); self.g],
        })
    }

    /// Writes scalars the run reads to the slab for the chunk's active
    /// lanes (a redo reads its operands there).
    pub(super) fn ls_flush_scalars(&mut self, run: &crate::plan::Run) -> Result<(), JitError> {
        if self.ls.is_none() {
            return Ok(());
        }
        let mut done = Vec::new();
        for &i in &run.insts {
            for &a in &self.kernel.insts[i].args.clone() {
                if self.ls_scalar(a) && !done.contains(&a) {
                    done.push(a);
                    let g = self.ls_splat(a)?;
                    let mask = self.load_mask();
                    self.write_slab(a, &g, &mask)?;
                }
            }
        }
        Ok(())
    }

    /// Computes scalar instruction `i`.
    fn ls_scalar_inst(&mut self, i: wj::Inst) -> Result<(), JitError> {
        let data = self.kernel.insts[i].clone();
        let [r] = data.results[..] else {
            return Err(JitError::Malformed("lockstep scalar results"));
        };
        let rty = self.kernel.value_type(r);
        let arg = |this: &mut Self, k: usize| -> Result<ir::Value, JitError> {
            let a = *data
                .args
                .get(k)
                .ok_or(JitError::Malformed("lockstep scalar operand"))?;
            this.ls_scalar_val(a)
        };
        let x = match &data.kind {
            InstKind::Builtin(b) => {
                let dim = |d: u8| 4 * i32::from(d.min(2));
                match b {
                    Builtin::WorkgroupId(d) => {
                        let p = self.group_words();
                        self.b
                            .ins()
                            .load(types::I32, MemFlagsData::trusted(), p, dim(*d))
                    }
                    Builtin::WorkgroupSize(d) => {
                        self.ctx_load(types::I32, off::WORKGROUP_SIZE + dim(*d))
                    }
                    Builtin::NumWorkgroups(d) => {
                        self.ctx_load(types::I32, off::NUM_WORKGROUPS + dim(*d))
                    }
                    Builtin::WaveSize => self.ctx_load(types::I32, off::WAVE_SIZE),
                    _ => return Err(JitError::Malformed("lockstep lane builtin")),
                }
            }
            InstKind::IBinary(op) => {
                let (a, b) = (arg(self, 0)?, arg(self, 1)?);
                let ins = self.b.ins();
                match op {
                    IBinOp::Add => ins.iadd(a, b),
                    IBinOp::Sub => ins.isub(a, b),
                    IBinOp::Mul => ins.imul(a, b),
                    IBinOp::And => ins.band(a, b),
                    IBinOp::Or => ins.bor(a, b),
                    IBinOp::Xor => ins.bxor(a, b),
                    IBinOp::Shl => ins.ishl(a, b),
                    IBinOp::ShrU => ins.ushr(a, b),
                    IBinOp::ShrS => ins.sshr(a, b),
                    IBinOp::MinU => ins.umin(a, b),
                    IBinOp::MinS => ins.smin(a, b),
                    IBinOp::MaxU => ins.umax(a, b),
                    IBinOp::MaxS => ins.smax(a, b),
                    _ => return Err(JitError::Malformed("lockstep scalar operation")),
                }
            }
            InstKind::Icmp(cc) => {
                let (a, b) = (arg(self, 0)?, arg(self, 1)?);
                self.b.ins().icmp(int_cc(*cc), a, b)
            }
            InstKind::Select => {
                let (c, a, b) = (arg(self, 0)?, arg(self, 1)?, arg(self, 2)?);
                self.b.ins().select(c, a, b)
            }
            InstKind::Cast { op, to } => {
                let a = arg(self, 0)?;
                let to = scalar_ir_type(*to);
                match op {
                    CastOp::Zext => self.b.ins().uextend(to, a),
                    CastOp::Sext => self.b.ins().sextend(to, a),
                    CastOp::Trunc => self.b.ins().ireduce(to, a),
                    CastOp::Bitcast => return Err(JitError::Malformed("lockstep bitcast")),
                }
            }
            _ => return Err(JitError::Malformed("lockstep scalar instruction")),
        };
        let _ = rty;
        let var = self.ls_ref()?.vars[&r];
        self.b.def_var(var, x);
        Ok(())
    }
}

impl Lockstep {
    pub(crate) fn new(
        plan: LsPlan,
        b: &mut cranelift_frontend::FunctionBuilder,
        g: usize,
    ) -> Lockstep {
        let mut var = |ty| b.declare_var(ty);
        Lockstep {
            plan,
            vars: HashMap::new(),
            u: var(types::I32),
            m: var(types::I32),
            limit: var(types::I32),
            alive: (0..g).map(|_| var(types::I32X4)).collect(),
            masks: HashMap::new(),
            next_epoch: var(types::I32),
            u_next: var(types::I32),
            m_next: var(types::I32),
            commit: Vec::new(),
        }
    }
}

/// The Cranelift type of a scalar of IR type `ty` (`i1` as a 0/1 byte).
fn scalar_ir_type(ty: Type) -> ir::Type {
    match ty {
        Type::I1 => types::I8,
        Type::I64 => types::I64,
        _ => types::I32,
    }
}

fn int_cc(cc: wj::IntCC) -> CC {
    use wj::IntCC as I;
    match cc {
        I::Eq => CC::Equal,
        I::Ne => CC::NotEqual,
        I::Ult => CC::UnsignedLessThan,
        I::Ule => CC::UnsignedLessThanOrEqual,
        I::Ugt => CC::UnsignedGreaterThan,
        I::Uge => CC::UnsignedGreaterThanOrEqual,
        I::Slt => CC::SignedLessThan,
        I::Sle => CC::SignedLessThanOrEqual,
        I::Sgt => CC::SignedGreaterThan,
        I::Sge => CC::SignedGreaterThanOrEqual,
    }
}
