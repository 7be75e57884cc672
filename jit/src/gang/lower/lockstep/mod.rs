//! Lockstep lowering: a workgroup's lanes run as one wave with the
//! kernel's own control flow, each block's lane work one loop over the
//! workgroup's chunks (the work-group loops of PoCL and COX).
//!
//! [`plan::LsPlan`] admits a kernel only when the waves of a workgroup
//! provably commute (`wavejit_ir::analysis::waves_commute`: running them as
//! one wave gives the interpreter's results, and no two lanes touch the same
//! memory inside a barrier interval), every divergent region is acyclic and
//! in pc order with its join above, and every branch outside regions is
//! decided by a scalar. Then every live lane runs the same blocks outside
//! regions, in the same order, so the control flow there is scalar code run
//! once per workgroup, a barrier is where all lanes already are (nothing to
//! do), uniform values are scalars, and a block's lanes run chunk by chunk
//! (the lanes of one interval commute, so chunk order is free). A divergent
//! branch writes its lanes' pcs; the region's blocks then run in pc order,
//! each for the lanes at its pc (the lowest-pc-first order of one wave),
//! until its join. Per-lane values that outlive a block live in the slab as
//! in the scheduled core.
//!
//! Steps: an edge outside regions is one step of every live lane, counted
//! once in a scalar `u`; region edges count per lane in the steps array.
//! A lane's count is its entry plus both. The watchdog's test outside
//! regions is on `u` plus the largest per-lane count `m` (raised by a
//! region's longest path each time one runs); only when that could pass the
//! limit are the lanes tested one by one.

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
    /// Whether steps are counted (i8): not when the kernel's static bound
    /// (`wavejit_ir::analysis::step_bound`) is within the step limit, so no
    /// lane can reach it.
    counting: Variable,
    bound: Option<u64>,
    /// Values the slab must hold (see [`Lockstep::spills`]).
    pub spill: std::collections::HashSet<wj::Value>,
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
        let mut scalars: Vec<wj::Value> = ls.plan.scalar.iter().copied().collect();
        scalars.sort();
        for v in scalars {
            let ty = scalar_ir_type(self.kernel.value_type(v));
            let var = self.b.declare_var(ty);
            let z = self.b.ins().iconst(ty, 0);
            self.b.def_var(var, z);
            ls.vars.insert(v, var);
        }
        for v in [ls.u, ls.m, ls.limit] {
            let z = self.b.ins().iconst(types::I32, 0);
            self.b.def_var(v, z);
        }
        let nodes = ls.plan.nodes.clone();
        let (counting, bound) = (ls.counting, ls.bound);
        let flag = match bound {
            Some(bound) if bound < u64::from(u32::MAX) => {
                let limit = self.ctx_load(types::I32, off::STEP_LIMIT);
                self.b
                    .ins()
                    .icmp_imm_u(CC::UnsignedLessThan, limit, bound as i64)
            }
            _ => self.iconst(types::I8, 1),
        };
        self.b.def_var(counting, flag);

        self.init_pcs()?;
        let ret = self.b.create_block();
        let slot_head = self.b.create_block();
        let slot_next = self.b.create_block();
        let zero = self.iconst(types::I32, 0);
        self.st_store(St::Slot, zero);
        // A step limit of 0 faults every lane at the entry (the runner
        // records it): nothing runs.
        let limit = self.ctx_load(types::I32, off::STEP_LIMIT);
        self.b.ins().brif(limit, slot_head, &[], ret, &[]);

        let blocks: HashMap<Start, ir::Block> =
            nodes.iter().map(|&n| (n, self.b.create_block())).collect();
        // slot_head: the slot's lanes are one wave.
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
        self.b.ins().jump(blocks[&nodes[0]], &[]);

        self.b.switch_to_block(slot_next);
        let slot = self.st_load(St::Slot);
        let slot = self.b.ins().iadd_imm_s(slot, 1);
        self.st_store(St::Slot, slot);
        self.b.ins().jump(slot_head, &[]);

        for &n in &nodes {
            self.b.switch_to_block(blocks[&n]);
            self.clear_chunk_values();
            self.ls_node(n, &blocks, slot_next)?;
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

    /// `for` every chunk of the slot: `body` with the chunk's mask, `mask`
    /// making it (given whether every lane of the slot is live, i8), for
    /// chunks where some lane is set.
    fn ls_chunks(
        &mut self,
        mask: impl FnMut(&mut Self, ir::Value) -> Result<Gv, JitError>,
        body: impl FnMut(&mut Self, &Gv) -> Result<(), JitError>,
    ) -> Result<(), JitError> {
        let zero = self.iconst(types::I32, 0);
        let n = self.st_load(St::N);
        self.ls_chunks_in(zero, n, mask, body)
    }

    /// [`GLower::ls_chunks`] for the chunks from lane `c0` (a multiple of
    /// the chunk's lanes) to below lane `c1` (i32).
    fn ls_chunks_in(
        &mut self,
        c0: ir::Value,
        c1: ir::Value,
        mut mask: impl FnMut(&mut Self, ir::Value) -> Result<Gv, JitError>,
        mut body: impl FnMut(&mut Self, &Gv) -> Result<(), JitError>,
    ) -> Result<(), JitError> {
        let clean = self.converged_and_clean();
        let head = self.b.create_block();
        let work = self.b.create_block();
        let go = self.b.create_block();
        let latch = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(head, &[c0.into()]);
        self.b.switch_to_block(head);
        let c = self.b.append_block_param(head, types::I32);
        let past = self.b.ins().icmp(CC::UnsignedGreaterThanOrEqual, c, c1);
        self.b.ins().brif(past, exit, &[], work, &[]);
        self.b.switch_to_block(work);
        self.clear_chunk_values();
        let base = self.st_load(St::Base);
        let lane0 = self.b.ins().iadd(base, c);
        let lane0 = self.b.ins().uextend(types::I64, lane0);
        self.ch = Some(Chunk {
            lane0,
            c,
            full: None,
            whole: None,
        });
        let m = mask(self, clean)?;
        let any = self.any_of(&m);
        self.b.ins().brif(any, go, &[], latch, &[]);
        self.b.switch_to_block(go);
        self.ls_enter(&m);
        body(self, &m)?;
        self.b.ins().jump(latch, &[]);
        self.b.switch_to_block(latch);
        self.clear_chunk_values();
        let step = super::chunk_lanes(self.g) as i64;
        let next = self.b.ins().iadd_imm_s(c, step);
        self.b.ins().jump(head, &[next.into()]);
        self.b.switch_to_block(exit);
        self.ch = None;
        self.clear_chunk_values();
        Ok(())
    }

    /// The chunk's live lanes: every lane that exists while the slot is
    /// `clean` (no lane exited or faulted), else those whose pc is not dead.
    fn ls_chunk_alive(&mut self, clean: ir::Value) -> Result<Gv, JitError> {
        let (all, _) = self.converged_mask(false)?;
        let lanes = self.b.create_block();
        let join = self.b.create_block();
        let out: Gv = (0..self.g)
            .map(|_| self.b.append_block_param(join, types::I32X4))
            .collect();
        let args: Vec<ir::BlockArg> = all.iter().map(|&x| x.into()).collect();
        self.b.ins().brif(clean, join, &args, lanes, &[]);
        self.b.switch_to_block(lanes);
        let live = self.pc_live(&all)?;
        let args: Vec<ir::BlockArg> = live.iter().map(|&x| x.into()).collect();
        self.b.ins().jump(join, &args);
        self.b.switch_to_block(join);
        Ok(out)
    }

    /// The chunk's lanes at pc `pc` (a region block's).
    fn ls_at(&mut self, pc: u32) -> Result<Gv, JitError> {
        let (lane0, c) = {
            let ch = self.chunk()?;
            (ch.lane0, ch.c)
        };
        let n = self.st_load(St::N);
        let left = self.lanes_left(c, n);
        let pcs = self.ctx_load(types::I64, off::PC);
        let pcv = self.splat(i64::from(pc), false);
        let mut out = Vec::with_capacity(self.g);
        for k in 0..self.g {
            let p = self.lane_ptr(pcs, lane0, k);
            let x = self.b.ins().load(types::I32X4, guest(), p, 0);
            let at = self.b.ins().icmp(CC::Equal, x, pcv);
            let v = self.valid(left, k);
            out.push(self.b.ins().band(at, v));
        }
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

    fn any_of(&mut self, m: &[ir::Value]) -> ir::Value {
        let mut a = m[0];
        for &x in &m[1..] {
            a = self.b.ins().bor(a, x);
        }
        self.b.ins().vany_true(a)
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

    /// Position `s` outside regions: its scalars, its lanes' runs chunk by
    /// chunk, then its terminator (or the position after its barrier).
    fn ls_node(
        &mut self,
        s: Start,
        blocks: &HashMap<Start, ir::Block>,
        slot_next: ir::Block,
    ) -> Result<(), JitError> {
        let (b, from) = s;
        let data = self.kernel.blocks[b].clone();
        let stop = LsPlan::barrier_in(self.kernel, b, from);
        let end = stop.unwrap_or(data.insts.len());
        // Scalars first: pure, and their operands are scalars defined before.
        for &i in &data.insts[from..end] {
            if matches!(self.kernel.insts[i].results[..], [r] if self.ls_scalar(r)) {
                self.ls_scalar_inst(i, slot_next)?;
            }
        }
        let term = data
            .term
            .clone()
            .ok_or(JitError::Malformed("no terminator"))?;
        let divergent = stop.is_none() && self.ls_ref()?.plan.regions.contains_key(&b);
        // A guarded region's branch needs no lane work: its lanes are an
        // interval of indices the region's loop computes.
        let guarded = divergent && self.ls_ref()?.plan.regions[&b].guard.is_some();
        let cond = match &term {
            Terminator::Branch { cond, .. } if guarded => Some(*cond),
            _ => None,
        };
        let lane_work = data.insts[from..end].iter().any(|&i| {
            let d = &self.kernel.insts[i];
            let skip = matches!(d.kind, InstKind::Const { .. })
                || matches!(d.results[..], [r] if self.ls_scalar(r) || Some(r) == cond)
                || (guarded && d.kind == InstKind::Builtin(Builtin::LocalIndex));
            !skip
        }) || (stop.is_none()
            && ((divergent && !guarded)
                || term.calls().iter().any(|c| {
                    self.kernel.blocks[c.block]
                        .params
                        .iter()
                        .any(|p| !self.ls_scalar(*p))
                })));
        if lane_work {
            let last = stop.is_none();
            self.ls_hoist(b, from, end, None)?;
            self.ls_chunks(
                |this, clean| this.ls_chunk_alive(clean),
                |this, _| this.ls_runs(b, from, end, last),
            )?;
            self.ls_unhoist();
        }
        let target = |s: Start| {
            blocks
                .get(&s)
                .copied()
                .ok_or(JitError::Malformed("lockstep position not planned"))
        };
        if let Some(k) = stop {
            // Every live lane is at the barrier: nothing to wait for.
            self.b.ins().jump(target((b, k + 1))?, &[]);
            return Ok(());
        }
        match &term {
            Terminator::Exit => {
                self.b.ins().jump(slot_next, &[]);
            }
            Terminator::Jump(call) => {
                self.ls_uniform_edge(call, target((call.block, 0))?, slot_next)?;
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
                    self.ls_uniform_edge(call, target((call.block, 0))?, slot_next)?;
                }
            }
            Terminator::Branch {
                then, otherwise, ..
            } => {
                let join = self.ls_ref()?.plan.regions[&b].join;
                let after = match join {
                    Some(j) => target((j, 0))?,
                    None => slot_next,
                };
                self.ls_region(b, [then.block, otherwise.block], after, slot_next)?;
            }
            Terminator::Table { .. } => return Err(JitError::Malformed("lockstep table")),
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

    /// The plan's segments of block `b` from instruction `from` to `end`.
    fn ls_segments(&self, b: wj::Block, from: usize, end: usize) -> Vec<usize> {
        let bpc = self.plan.block_pc[b] as usize;
        self.plan
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
            .collect()
    }

    /// Before a chunk loop over block `b`'s instructions `from..end`: its
    /// contiguous accesses' addresses and memory tests for all the loop's
    /// lanes at once (the slot's, or those below `span_end`), so a chunk
    /// only adds its offset (`mem::wave_sites`).
    fn ls_hoist(
        &mut self,
        b: wj::Block,
        from: usize,
        end: usize,
        span_end: Option<ir::Value>,
    ) -> Result<(), JitError> {
        self.span_end = span_end;
        let mut scalars = HashMap::new();
        let mut insts = Vec::new();
        for k in self.ls_segments(b, from, end) {
            let seg = self.plan.segments[k].clone();
            scalars.extend(self.segment_scalars(&seg)?);
            insts.extend(seg.runs.iter().flat_map(|r| r.insts.iter().copied()));
        }
        self.wave_scalars = scalars;
        self.wave_sites = self.wave_sites(&insts)?;
        Ok(())
    }

    fn ls_unhoist(&mut self) {
        self.span_end = None;
        self.wave_scalars.clear();
        self.wave_sites.clear();
    }

    /// The lane part of block `b`'s terminator, called by `run` with the
    /// chunk's values: block arguments the lanes hold; for a divergent
    /// branch also the lanes' pcs (the side each took); in a region, the
    /// region's edge (see [`GLower::ls_region_terminator`]).
    pub(super) fn ls_terminator(&mut self, b: wj::Block) -> Result<(), JitError> {
        let in_region = self.ls_ref()?.plan.in_region[b];
        let term = self.kernel.blocks[b]
            .term
            .clone()
            .ok_or(JitError::Malformed("no terminator"))?;
        if in_region {
            return self.ls_region_terminator(&term);
        }
        let mask = self.mask();
        let edges = self.edges(&term, &mask)?;
        self.ls_lane_args(&edges)?;
        if self.ls_ref()?.plan.regions.contains_key(&b) {
            self.set_edge_pcs(&edges)?;
        }
        Ok(())
    }

    /// Writes the arguments of every edge into the target parameters the
    /// lanes hold (scalar parameters move after the lane work).
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

    /// A region block's terminator for the chunk: arguments, pcs, one step
    /// per lane (with the watchdog); lanes that exit are dead after.
    fn ls_region_terminator(&mut self, term: &Terminator) -> Result<(), JitError> {
        let mask = self.mask();
        if let Terminator::Exit = term {
            let dead = self.splat(i64::from(PC_DEAD as i32), false);
            self.set_pcs(|_, _| Ok(dead))?;
            let zero = self.iconst(types::I32, 0);
            self.st_store(St::Conv, zero);
            return Ok(());
        }
        let edges = self.edges(term, &mask)?;
        let args = self.edge_args(&edges)?;
        for ((m, call), vals) in edges.iter().zip(&args) {
            self.write_edge_args(m, call, vals)?;
        }
        // The lanes' pcs for the region's next blocks (the join's lanes are
        // all the live ones: no pc needed).
        if edges
            .iter()
            .any(|(_, c)| self.ls_ref().is_ok_and(|l| l.plan.in_region[c.block]))
        {
            self.set_edge_pcs(&edges)?;
        }
        // Only while a lane could reach the limit.
        let counting = self.ls_var(|l| l.counting)?;
        let on = self.b.use_var(counting);
        let count = self.b.create_block();
        let join = self.b.create_block();
        self.b.ins().brif(on, count, &[], join, &[]);
        self.b.switch_to_block(count);
        self.cold(|this| this.count_steps(&edges))?;
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
        self.mask_cache = None;
        Ok(())
    }

    /// A uniform edge: scalar parameters move, one step for every live
    /// lane (the watchdog's test), then `target`.
    fn ls_uniform_edge(
        &mut self,
        call: &BlockCall,
        target: ir::Block,
        slot_next: ir::Block,
    ) -> Result<(), JitError> {
        self.ls_scalar_moves(call)?;
        let left = self.ls_step(&[(call.block, Sel::All)])?;
        self.b.ins().brif(left, target, &[], slot_next, &[]);
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

    /// One step of every live lane into `targets` (the lanes `Sel` picks
    /// enter each); returns whether the slot has a live lane left (i8).
    fn ls_step(&mut self, targets: &[(wj::Block, Sel)]) -> Result<ir::Value, JitError> {
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
        let counting = self.ls_var(|l| l.counting)?;
        let on = self.b.use_var(counting);
        let over = self.b.ins().band(over, on);
        let cold = self.b.create_block();
        let join = self.b.create_block();
        let left = self.b.append_block_param(join, types::I8);
        let yes = self.iconst(types::I8, 1);
        self.b.set_cold_block(cold);
        self.b.ins().brif(over, cold, &[], join, &[yes.into()]);
        self.b.switch_to_block(cold);
        self.clear_chunk_values();
        // Exact: lanes whose count passes the limit fault entering.
        let any = self.b.declare_var(types::I8);
        let no = self.iconst(types::I8, 0);
        self.b.def_var(any, no);
        let room = self.b.ins().isub(limit, uv);
        let room = self.b.ins().bxor_imm_s(room, i64::from(i32::MIN));
        let targets = targets.to_vec();
        self.ls_chunks(
            |this, _| {
                let (all, _) = this.converged_mask(false)?;
                this.pc_live(&all)
            },
            |this, alive| {
                let lane0 = this.chunk()?.lane0;
                let steps = this.ctx_load(types::I64, off::STEPS);
                let flip = this.splat(i64::from(i32::MIN), false);
                let roomv = this.b.ins().splat(types::I32X4, room);
                let mut over = Vec::with_capacity(this.g);
                for (k, &a) in alive.iter().enumerate() {
                    let p = this.lane_ptr(steps, lane0, k);
                    let s = this.b.ins().load(types::I32X4, guest(), p, 0);
                    let s = this.b.ins().bxor(s, flip);
                    let o = this.b.ins().icmp(CC::SignedGreaterThan, s, roomv);
                    over.push(this.b.ins().band(o, a));
                }
                for &(block, sel) in &targets {
                    let at = match sel {
                        Sel::All => None,
                        Sel::AtPc => Some(this.ls_at(this.plan.block_pc[block])?),
                        Sel::Guard(g, taken) => {
                            let range = this.ls_guard_interval(g)?;
                            Some(this.ls_guard_mask(g, range, taken)?)
                        }
                    };
                    let bits = this.scratch_at(0);
                    for (k, &o) in over.iter().enumerate() {
                        let hit = match &at {
                            Some(a) => this.b.ins().band(o, a[k]),
                            None => o,
                        };
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
                let live = this.pc_live(alive)?;
                let a = this.any_of(&live);
                let old = this.b.use_var(any);
                let new = this.b.ins().bor(old, a);
                this.b.def_var(any, new);
                Ok(())
            },
        )?;
        let zero = self.iconst(types::I32, 0);
        self.st_store(St::Conv, zero);
        let a = self.b.use_var(any);
        self.b.ins().jump(join, &[a.into()]);
        self.b.switch_to_block(join);
        Ok(left)
    }

    /// The chunk's lanes whose index passes guard `g` (or, not `taken`,
    /// fails it), given its interval `[lo, hi)` of lane indices (i32, both
    /// at most the slot's lanes, so signed compares are exact).
    fn ls_guard_mask(
        &mut self,
        g: plan::Guard,
        (lo, hi): (ir::Value, ir::Value),
        taken: bool,
    ) -> Result<Gv, JitError> {
        let c = self.chunk()?.c;
        let cv = self.b.ins().splat(types::I32X4, c);
        let hiv = self.b.ins().splat(types::I32X4, hi);
        let lov = self.b.ins().splat(types::I32X4, lo);
        let from_zero = matches!(g.cc, wj::IntCC::Ult | wj::IntCC::Ule);
        let mut out = Vec::with_capacity(self.g);
        for k in 0..self.g {
            let k4 = 4 * k as u32;
            let iota = self.vconst_i32([k4, k4 + 1, k4 + 2, k4 + 3]);
            let lid = self.b.ins().iadd(cv, iota);
            let below = self.b.ins().icmp(CC::SignedGreaterThan, hiv, lid);
            let x = if from_zero {
                below
            } else {
                let before = self.b.ins().icmp(CC::SignedGreaterThan, lov, lid);
                self.b.ins().band_not(below, before)
            };
            out.push(if taken { x } else { self.b.ins().bnot(x) });
        }
        Ok(out)
    }

    /// The interval `[lo, hi)` of lane indices that pass guard `g`, within
    /// the slot (i32 each).
    fn ls_guard_interval(&mut self, g: plan::Guard) -> Result<(ir::Value, ir::Value), JitError> {
        let bound = self.ls_scalar_val(g.bound)?;
        let b = self.b.ins().uextend(types::I64, bound);
        let n = self.st_load(St::N);
        let n = self.b.ins().uextend(types::I64, n);
        let zero = self.iconst(types::I64, 0);
        let b1 = self.b.ins().iadd_imm_s(b, 1);
        let (lo, hi) = match g.cc {
            wj::IntCC::Ult => (zero, b),
            wj::IntCC::Ule => (zero, b1),
            wj::IntCC::Ugt => (b1, n),
            wj::IntCC::Uge => (b, n),
            wj::IntCC::Eq => (b, b1),
            _ => return Err(JitError::Malformed("lockstep guard condition")),
        };
        let hi = self.b.ins().umin(hi, n);
        let lo = self.b.ins().umin(lo, hi);
        let lo = self.b.ins().ireduce(types::I32, lo);
        let hi = self.b.ins().ireduce(types::I32, hi);
        Ok((lo, hi))
    }

    /// A divergent branch (its lanes' pcs already set by the lane work):
    /// one step of every live lane to its side, the region's blocks in pc
    /// order for the lanes at each, then `after` (its join).
    fn ls_region(
        &mut self,
        b: wj::Block,
        sides: [wj::Block; 2],
        after: ir::Block,
        slot_next: ir::Block,
    ) -> Result<(), JitError> {
        let region = self.ls_ref()?.plan.regions[&b].clone();
        let targets: Vec<(wj::Block, Sel)> = match (region.guard, &region.blocks[..], region.join) {
            (Some(g), &[x], Some(j)) => vec![(x, Sel::Guard(g, true)), (j, Sel::Guard(g, false))],
            _ if sides[0] == sides[1] => vec![(sides[0], Sel::All)],
            _ => vec![(sides[0], Sel::AtPc), (sides[1], Sel::AtPc)],
        };
        let left = self.ls_step(&targets)?;
        let run = self.b.create_block();
        self.b.ins().brif(left, run, &[], slot_next, &[]);
        self.b.switch_to_block(run);
        self.clear_chunk_values();
        // Region edges count per lane against what is left of the limit.
        let (u, lim) = (self.ls_var(|l| l.u)?, self.ls_var(|l| l.limit)?);
        let uv = self.b.use_var(u);
        let limit = self.ctx_load(types::I32, off::STEP_LIMIT);
        let room = self.b.ins().isub(limit, uv);
        self.b.def_var(lim, room);
        if let (Some(g), &[x]) = (region.guard, &region.blocks[..]) {
            // Only the chunks holding the guard's interval of lanes.
            let (lo, hi) = self.ls_guard_interval(g)?;
            let l = super::chunk_lanes(self.g) as i64;
            let c0 = self.b.ins().band_imm_s(lo, -l);
            let len = self.kernel.blocks[x].insts.len();
            self.ls_hoist(x, 0, len, Some(hi))?;
            self.ls_chunks_in(
                c0,
                hi,
                |this, clean| {
                    let alive = this.ls_chunk_alive(clean)?;
                    let inside = this.ls_guard_mask(g, (lo, hi), true)?;
                    Ok(alive
                        .iter()
                        .zip(&inside)
                        .map(|(&a, &i)| this.b.ins().band(a, i))
                        .collect())
                },
                |this, _| this.ls_runs(x, 0, len, true),
            )?;
            self.ls_unhoist();
        } else {
            for &rb in &region.blocks {
                let pc = self.plan.block_pc[rb];
                let len = self.kernel.blocks[rb].insts.len();
                self.ls_hoist(rb, 0, len, None)?;
                self.ls_chunks(
                    |this, _| this.ls_at(pc),
                    |this, _| this.ls_runs(rb, 0, len, true),
                )?;
                self.ls_unhoist();
            }
        }
        let m = self.ls_var(|l| l.m)?;
        let mv = self.b.use_var(m);
        let mv = self.b.ins().iadd_imm_s(mv, i64::from(region.longest));
        self.b.def_var(m, mv);
        self.b.ins().jump(after, &[]);
        Ok(())
    }

    /// Scalar value `v` (a constant or a scalar's variable).
    pub(super) fn ls_scalar_val(&mut self, v: wj::Value) -> Result<ir::Value, JitError> {
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

    /// Writes the operands the first `stop` instructions of `run` read from
    /// outside it to the slab, for the chunk's active lanes: a redo reads
    /// them there, and lockstep keeps a block's values (scalars,
    /// recomputable values, other runs' results) out of it.
    pub(super) fn ls_flush_operands(
        &mut self,
        run: &crate::plan::Run,
        stop: usize,
    ) -> Result<(), JitError> {
        if self.ls.is_none() {
            return Ok(());
        }
        let own: std::collections::HashSet<wj::Value> = run
            .insts
            .iter()
            .flat_map(|&i| self.kernel.insts[i].results.iter().copied())
            .collect();
        let mut done = Vec::new();
        for &i in run.insts.iter().take(stop) {
            for &a in &self.kernel.insts[i].args.clone() {
                if own.contains(&a)
                    || done.contains(&a)
                    || crate::plan::const_bits(self.kernel, a).is_some()
                {
                    continue;
                }
                done.push(a);
                let g = self.val(a)?;
                let mask = self.load_mask();
                self.write_slab(a, &g, &mask)?;
            }
        }
        Ok(())
    }

    /// Computes scalar instruction `i` (a uniform load out of range faults
    /// every live lane of the slot, which then goes to `slot_next`).
    fn ls_scalar_inst(&mut self, i: wj::Inst, slot_next: ir::Block) -> Result<(), JitError> {
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
            InstKind::Load(a) => {
                let offset = crate::plan::const_bits(self.kernel, data.args[0])
                    .ok_or(JitError::Malformed("lockstep uniform load"))?;
                let st = scalar_ir_type(rty);
                let x = self.scalar_uniform(a, offset, st)?;
                let end = offset + u64::from(a.total_bytes());
                let len = self.ctx_load(types::I64, off::UNIFORMS_LEN);
                let short = self
                    .b
                    .ins()
                    .icmp_imm_u(CC::UnsignedLessThan, len, end as i64);
                let cold = self.b.create_block();
                let go = self.b.create_block();
                self.b.set_cold_block(cold);
                self.b.ins().brif(short, cold, &[], go, &[]);
                self.b.switch_to_block(cold);
                self.clear_chunk_values();
                // Each live lane faults as the load would make it.
                self.ls_chunks(
                    |this, clean| this.ls_chunk_alive(clean),
                    |this, _| {
                        this.call_chunk_helper(i, crate::gang::helpers::wj_gang_access as *const ())
                            .map(|_| ())
                    },
                )?;
                self.b.ins().jump(slot_next, &[]);
                self.b.switch_to_block(go);
                self.clear_chunk_values();
                x
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

/// Which lanes of the slot take an edge.
#[derive(Copy, Clone)]
enum Sel {
    /// Every live lane.
    All,
    /// The lanes at the target's pc.
    AtPc,
    /// The lanes passing the guard (`true`) or failing it.
    Guard(plan::Guard, bool),
}

impl Lockstep {
    pub(crate) fn new(
        plan: LsPlan,
        b: &mut cranelift_frontend::FunctionBuilder,
        bound: Option<u64>,
    ) -> Lockstep {
        let mut var = |ty| b.declare_var(ty);
        Lockstep {
            plan,
            vars: HashMap::new(),
            u: var(types::I32),
            m: var(types::I32),
            limit: var(types::I32),
            counting: var(types::I8),
            bound,
            spill: Default::default(),
        }
    }

    /// The values the slab must hold in lockstep: those read in another
    /// block or across a barrier (another chunk loop). A chunk's runs of one
    /// block share its values, and a redo writes the operands it reads
    /// first ([`GLower::ls_flush_operands`]).
    pub(crate) fn spills(kernel: &wj::Kernel) -> std::collections::HashSet<wj::Value> {
        // Where each value is defined and read: (block, barriers before).
        let mut def: HashMap<wj::Value, (wj::Block, usize)> = HashMap::new();
        let mut uses: Vec<(wj::Value, (wj::Block, usize))> = Vec::new();
        for (b, data) in kernel.blocks.iter() {
            let mut k = 0;
            for &i in &data.insts {
                let d = &kernel.insts[i];
                uses.extend(d.args.iter().map(|&a| (a, (b, k))));
                def.extend(d.results.iter().map(|&r| (r, (b, k))));
                if d.kind == InstKind::Barrier {
                    k += 1;
                }
            }
            if let Some(t) = &data.term {
                uses.extend(t.uses().into_iter().map(|a| (a, (b, k))));
                for c in t.calls() {
                    uses.extend(c.args.iter().map(|&a| (a, (b, k))));
                }
            }
        }
        let mut out = std::collections::HashSet::new();
        for (v, at) in uses {
            if def.get(&v).is_some_and(|&d| d != at) && crate::plan::const_bits(kernel, v).is_none()
            {
                out.insert(v);
            }
        }
        out
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
