//! One run as a loop over the listed lanes.

use cranelift_codegen::ir::{InstBuilder, MemFlagsData, condcodes::IntCC, types};
use wavejit_ir::{Block, InstKind};

use super::{LaneCtx, Lower, SelfLoop};
use crate::abi::{LANE_SIZE, NO_FAULT, off};
use crate::error::JitError;
use crate::plan::Run;

/// Whether the lane goes on after an instruction.
pub(crate) enum Flow {
    Continue,
    /// The lane left the run (trap): the rest of the run is not emitted.
    Stop,
}

impl Lower<'_, '_> {
    /// Emits `for i in 0..n { lane = list[i]; body }`. `check` skips lanes that
    /// faulted earlier in the segment; `end_pc` is stored as the lane's pc after
    /// the run (segments that end at a sync instruction). With `self_loop` the
    /// run is the whole of `block` and the body loops while the lane branches
    /// back to it, the block's parameters in registers.
    pub(super) fn run(
        &mut self,
        block: Block,
        run: &Run,
        check: bool,
        end_pc: Option<u32>,
        self_loop: bool,
    ) -> Result<(), JitError> {
        let header = self.b.create_block();
        let body = self.b.create_block();
        let latch = self.b.create_block();
        let exit = self.b.create_block();
        let i = self.b.append_block_param(header, types::I32);
        self.hoist_uniform_loads(&run.insts);
        let zero = self.iconst(types::I32, 0);
        self.b.ins().jump(header, &[zero.into()]);

        self.b.switch_to_block(header);
        let n = self.n();
        let done = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, i, n);
        self.b.ins().brif(done, exit, &[], body, &[]);

        self.b.switch_to_block(body);
        let tr = MemFlagsData::trusted();
        let i64v = self.b.ins().uextend(types::I64, i);
        let lane_off = self.b.ins().ishl_imm_s(i64v, 2);
        let list = self.list();
        let lp = self.b.ins().iadd(list, lane_off);
        let lane32 = self.b.ins().load(types::I32, tr, lp, 0);
        let lane = self.b.ins().uextend(types::I64, lane32);
        let rec_off = self.b.ins().imul_imm_s(lane, LANE_SIZE);
        let lanes = self.batch_ptr(off::LANES);
        let rec = self.b.ins().iadd(lanes, rec_off);
        let reg_off = self.b.ins().ishl_imm_s(lane, 3);
        let slab = self.batch_ptr(off::REGS);
        let regs = self.b.ins().iadd(slab, reg_off);
        self.lc = Some(LaneCtx { rec, regs, latch });
        self.env.clear();
        if check {
            let f = self.b.ins().load(types::I32, tr, rec, off::FAULT);
            let faulted = self
                .b
                .ins()
                .icmp_imm_s(IntCC::NotEqual, f, i64::from(NO_FAULT as i32));
            let go = self.b.create_block();
            self.b.ins().brif(faulted, latch, &[], go, &[]);
            self.b.switch_to_block(go);
        }
        if self_loop {
            self.enter_self_loop(block)?;
        }
        let mut stopped = false;
        for &inst in &run.insts {
            if let Flow::Stop = self.inst(inst)? {
                stopped = true;
                break;
            }
        }
        if !stopped {
            if run.term {
                self.terminator(block)?;
            } else {
                if let Some(pc) = end_pc {
                    let c = self.iconst(types::I32, i64::from(pc as i32));
                    self.b.ins().store(tr, c, rec, off::PC);
                }
                self.b.ins().jump(latch, &[]);
            }
        }

        self.b.switch_to_block(latch);
        let next = self.b.ins().iadd_imm_s(i, 1);
        self.b.ins().jump(header, &[next.into()]);
        self.b.switch_to_block(exit);
        self.lc = None;
        self.looping = None;
        self.env.clear();
        self.hoisted.clear();
        Ok(())
    }

    /// Starts the per-lane loop of `block`: its parameters (read from the slab
    /// once) and the lane's step count become parameters of the loop's head.
    fn enter_self_loop(&mut self, block: Block) -> Result<(), JitError> {
        let params = self.kernel.blocks[block].params.clone();
        let top = self.b.create_block();
        let mut args = Vec::with_capacity(params.len() + 1);
        for &p in &params {
            let x = self.val(p)?;
            args.push(x.into());
        }
        let tr = MemFlagsData::trusted();
        let rec = self.lc()?.rec;
        let steps = self.b.ins().load(types::I64, tr, rec, off::STEPS);
        args.push(steps.into());
        let limit = self
            .b
            .ins()
            .load(types::I64, tr, self.batch, off::STEP_LIMIT);
        self.b.ins().jump(top, &args);
        self.b.switch_to_block(top);
        self.env.clear();
        for &p in &params {
            let ty = super::cl_ty(self.kernel.value_type(p));
            let x = self.b.append_block_param(top, ty);
            self.env.insert(p, x);
        }
        let steps = self.b.append_block_param(top, types::I64);
        self.looping = Some(SelfLoop {
            block,
            top,
            steps,
            limit,
        });
        Ok(())
    }

    /// Lowers one instruction for the current lane.
    fn inst(&mut self, inst: wavejit_ir::Inst) -> Result<Flow, JitError> {
        let data = self
            .kernel
            .insts
            .get(inst)
            .ok_or(JitError::Malformed("unknown instruction"))?;
        let kind = data.kind.clone();
        match kind {
            InstKind::Const { ty, bits } => {
                let x = self.iconst(super::cl_ty(ty), bits as i64);
                self.def(data.results[0], x)?;
            }
            InstKind::Builtin(bi) => self.builtin(inst, bi)?,
            InstKind::IBinary(_)
            | InstKind::IUnary(_)
            | InstKind::Icmp(_)
            | InstKind::Select
            | InstKind::Cast { .. } => self.int_inst(inst)?,
            InstKind::Load(a) => self.load(inst, &a)?,
            InstKind::Store(a) => self.store(inst, &a)?,
            InstKind::Atomic { space, op, ty } => self.atomic(inst, space, op, ty)?,
            InstKind::Fence(_) => {}
            InstKind::Trap { .. } => {
                let zero = self.iconst(types::I64, 0);
                self.fault(inst.as_u32(), zero)?;
                return Ok(Flow::Stop);
            }
            InstKind::Barrier
            | InstKind::Ballot
            | InstKind::VoteAny
            | InstKind::VoteAll
            | InstKind::FirstActive
            | InstKind::Elect
            | InstKind::ReadLane
            | InstKind::ReadFirst
            | InstKind::Shuffle(_)
            | InstKind::Reduce(_)
            | InstKind::Scan { .. } => {
                return Err(JitError::Malformed("sync instruction inside a segment"));
            }
            _ => self.float_inst(inst)?,
        }
        Ok(Flow::Continue)
    }

    fn builtin(&mut self, inst: wavejit_ir::Inst, bi: wavejit_ir::Builtin) -> Result<(), JitError> {
        use wavejit_ir::Builtin as B;
        let rec = self.lc()?.rec;
        let tr = MemFlagsData::trusted();
        let dim = |d: u8| i32::from(d.min(2)) * 4;
        let (base, offset) = match bi {
            B::LocalId(d) => (rec, off::LOCAL + dim(d)),
            B::WorkgroupId(d) => (rec, off::GROUP + dim(d)),
            B::WorkgroupSize(d) => (self.batch, off::WORKGROUP_SIZE + dim(d)),
            B::NumWorkgroups(d) => (self.batch, off::NUM_WORKGROUPS + dim(d)),
            B::LocalIndex => (rec, off::LOCAL_INDEX),
            B::LaneId => (rec, off::LANE_ID),
            B::WaveId => (rec, off::WAVE_ID),
            B::WaveSize => (self.batch, off::WAVE_SIZE),
        };
        let x = self.b.ins().load(types::I32, tr, base, offset);
        let r = self.kernel.insts[inst].results[0];
        self.def(r, x)
    }

    /// Float and rare instructions: inline fast paths, else `semantics::eval_pure`.
    fn float_inst(&mut self, inst: wavejit_ir::Inst) -> Result<(), JitError> {
        if self.float_inline(inst)? {
            return Ok(());
        }
        self.call_pure(inst)
    }
}
