//! Terminators: per-lane successor choice, parallel block-argument moves, the
//! watchdog count, and the lane's next pc.

use cranelift_codegen::ir::{self, InstBuilder, MemFlagsData, condcodes::IntCC as CC, types};
use wavejit_ir::{Block, BlockCall, Terminator};

use super::Lower;
use crate::abi::{PC_DEAD, WATCHDOG_FAULT, off};
use crate::error::JitError;

impl Lower<'_, '_> {
    pub(super) fn terminator(&mut self, block: Block) -> Result<(), JitError> {
        let term = self.kernel.blocks[block]
            .term
            .clone()
            .ok_or(JitError::Malformed("block without terminator"))?;
        let (rec, latch) = {
            let lc = self.lc()?;
            (lc.rec, lc.latch)
        };
        // Read every value the terminator uses up front: the edges are emitted in
        // sibling blocks, and a value first loaded in one would not reach another.
        for v in term.uses() {
            self.val(v)?;
        }
        let tr = MemFlagsData::trusted();
        match term {
            Terminator::Exit => {
                let dead = self.iconst(types::I32, i64::from(PC_DEAD as i32));
                self.b.ins().store(tr, dead, rec, off::PC);
                self.b.ins().jump(latch, &[]);
            }
            Terminator::Jump(call) => self.edge(&call)?,
            Terminator::Branch {
                cond,
                then,
                otherwise,
            } => {
                let c = self.val(cond)?;
                let (t, f) = (self.b.create_block(), self.b.create_block());
                self.b.ins().brif(c, t, &[], f, &[]);
                self.b.switch_to_block(t);
                self.edge(&then)?;
                self.b.switch_to_block(f);
                self.edge(&otherwise)?;
            }
            Terminator::Table {
                index,
                targets,
                default,
            } => {
                let idx = self.val(index)?;
                let blocks: Vec<ir::Block> =
                    targets.iter().map(|_| self.b.create_block()).collect();
                let dflt = self.b.create_block();
                let calls: Vec<ir::BlockCall> = blocks
                    .iter()
                    .map(|&b| self.b.func.dfg.block_call(b, &[]))
                    .collect();
                let dcall = self.b.func.dfg.block_call(dflt, &[]);
                let jt = self
                    .b
                    .create_jump_table(ir::JumpTableData::new(dcall, &calls));
                self.b.ins().br_table(idx, jt);
                for (blk, call) in blocks.iter().zip(&targets) {
                    self.b.switch_to_block(*blk);
                    self.edge(call)?;
                }
                self.b.switch_to_block(dflt);
                self.edge(&default)?;
            }
        }
        Ok(())
    }

    /// Takes `call` for the current lane: moves the arguments (all read before any
    /// is written), enters the block, counts the step.
    fn edge(&mut self, call: &BlockCall) -> Result<(), JitError> {
        let (rec, regs, latch) = {
            let lc = self.lc()?;
            (lc.rec, lc.regs, lc.latch)
        };
        let params = self
            .kernel
            .blocks
            .get(call.block)
            .ok_or(JitError::Malformed("branch to an unknown block"))?
            .params
            .clone();
        if params.len() != call.args.len() {
            return Err(JitError::Malformed("block argument count"));
        }
        let mut vals = Vec::with_capacity(call.args.len());
        for &a in &call.args {
            vals.push(self.val(a)?);
        }
        let tr = MemFlagsData::trusted();
        if let Some(l) = self.looping {
            if call.block == l.block {
                // Back edge of a per-lane loop: everything stays in registers.
                let steps = self.count_step(call)?;
                let mut args: Vec<ir::BlockArg> = vals.into_iter().map(Into::into).collect();
                args.push(steps.into());
                self.b.ins().jump(l.top, &args);
                return Ok(());
            }
            // Leaving the loop: later blocks read its parameters from the slab.
            for p in self.kernel.blocks[l.block].params.clone() {
                let x = self.val(p)?;
                let off = self.slot(p);
                self.b.ins().store(tr, x, regs, off);
            }
        }
        for (&p, x) in params.iter().zip(vals) {
            let off = self.slot(p);
            self.b.ins().store(tr, x, regs, off);
        }
        let pc = self.iconst(types::I32, i64::from(self.plan.block_pc[call.block] as i32));
        self.b.ins().store(tr, pc, rec, off::PC);
        self.count_step(call)?;
        self.b.ins().jump(latch, &[]);
        Ok(())
    }

    /// Counts the lane's step for taking `call` (a watchdog fault past the
    /// dispatch's limit) and returns the new count; it is stored in the lane's
    /// record unless this is a per-lane loop's back edge.
    fn count_step(&mut self, call: &BlockCall) -> Result<ir::Value, JitError> {
        let rec = self.lc()?.rec;
        let tr = MemFlagsData::trusted();
        let back = self.looping.filter(|l| l.block == call.block);
        let (steps, limit) = match self.looping {
            Some(l) => (l.steps, l.limit),
            None => {
                let steps = self.b.ins().load(types::I64, tr, rec, off::STEPS);
                let limit = self
                    .b
                    .ins()
                    .load(types::I64, tr, self.batch, off::STEP_LIMIT);
                (steps, limit)
            }
        };
        let steps = self.b.ins().iadd_imm_s(steps, 1);
        if back.is_none() {
            self.b.ins().store(tr, steps, rec, off::STEPS);
        }
        let over = self.b.ins().icmp(CC::UnsignedGreaterThan, steps, limit);
        let target = self.iconst(types::I64, i64::from(call.block.as_u32()));
        self.fault_if(over, WATCHDOG_FAULT, target)?;
        Ok(steps)
    }
}
