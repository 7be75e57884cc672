//! Terminators of a chunk: per-lane successor masks, block arguments written
//! under each edge's mask (all read before any is written), the new pcs, the
//! watchdog count (one step per lane per edge) and its faults.

use cranelift_codegen::ir::{self, InstBuilder, condcodes::IntCC as CC, types};
use wavejit_ir::{Block, BlockCall, InstKind, IntCC, Terminator, Type, ValueDef};

use super::{GLower, Gv, guest};
use crate::error::JitError;
use crate::gang::abi::{PC_DEAD, off};
use crate::gang::helpers::wj_gang_watchdog;
use crate::plan::const_bits;

impl GLower<'_, '_> {
    pub(super) fn terminator(&mut self, block: Block) -> Result<(), JitError> {
        let term = self.kernel.blocks[block]
            .term
            .clone()
            .ok_or(JitError::Malformed("block without terminator"))?;
        if matches!(term, Terminator::Exit) && self.quiet_exit {
            return Ok(());
        }
        if let Terminator::Exit = &term {
            let dead = self.splat(i64::from(PC_DEAD as i32), false);
            self.set_pcs(|_, _| Ok(dead))?;
            if self.chunk()?.full.is_some() {
                let exit = self.iconst(types::I32, i64::from(super::UNI_EXIT as i32));
                self.note_successor(exit)?;
            }
            return Ok(());
        }
        let mask = self.mask();
        let edges = self.edges(&term, &mask)?;
        let args = self.edge_args(&edges)?;
        for ((m, call), vals) in edges.iter().zip(&args) {
            self.write_edge_args(m, call, vals)?;
        }
        self.set_edge_pcs(&edges)?;
        if self.defers {
            // A deferring segment's edge is one step of the whole wave.
            let dfr = self.st_load(super::St::Deferring);
            let count = self.b.create_block();
            let done = self.b.create_block();
            self.b.ins().brif(dfr, done, &[], count, &[]);
            self.b.switch_to_block(count);
            self.cold(|this| this.count_steps(&edges))?;
            self.b.ins().jump(done, &[]);
            self.b.switch_to_block(done);
        } else {
            self.count_steps(&edges)?;
        }
        self.note_edges(&term, &edges)
    }

    /// New pcs: each edge's target where its mask holds.
    pub(super) fn set_edge_pcs(&mut self, edges: &[(Gv, BlockCall)]) -> Result<(), JitError> {
        let targets: Vec<ir::Value> = edges
            .iter()
            .map(|(_, call)| self.splat(i64::from(self.plan.block_pc[call.block]), false))
            .collect();
        // The edges' masks partition the execution mask (each active lane
        // takes one edge), and `set_pcs` keeps the inactive lanes' pcs: the
        // last edge's target needs no select.
        self.set_pcs(|this, k| {
            let Some((&last, rest)) = targets.split_last() else {
                return Err(JitError::Malformed("terminator without edges"));
            };
            let mut x = last;
            for ((m, _), &t) in edges.iter().zip(rest) {
                x = this.b.ins().bitselect(m[k], t, x);
            }
            Ok(x)
        })
    }

    /// (edge mask, call) of every edge of `term` under `mask` (none for an exit).
    pub(super) fn edges(
        &mut self,
        term: &Terminator,
        mask: &[ir::Value],
    ) -> Result<Vec<(Gv, BlockCall)>, JitError> {
        let mut edges: Vec<(Gv, BlockCall)> = Vec::new();
        match term {
            Terminator::Exit => {}
            Terminator::Jump(call) => edges.push((mask.to_vec(), call.clone())),
            Terminator::Branch {
                cond,
                then,
                otherwise,
            } => {
                let (t, f) = if let Some(eq) = self.negated_compare(*cond)? {
                    // `a != b` branches on `a == b` with the sides swapped
                    // (and `<u` on `>=u`, ...): x86 lowers these compares as
                    // their negation and a `not`, which folds into the masks.
                    let t: Gv = eq
                        .iter()
                        .zip(mask)
                        .map(|(&e, &m)| self.b.ins().band_not(m, e))
                        .collect();
                    let f: Gv = eq
                        .iter()
                        .zip(mask)
                        .map(|(&e, &m)| self.b.ins().band(e, m))
                        .collect();
                    (t, f)
                } else {
                    let c = self.val(*cond)?;
                    let t: Gv = c
                        .iter()
                        .zip(mask)
                        .map(|(&c, &m)| self.b.ins().band(c, m))
                        .collect();
                    let f: Gv = c
                        .iter()
                        .zip(mask)
                        .map(|(&c, &m)| self.b.ins().band_not(m, c))
                        .collect();
                    (t, f)
                };
                edges.push((t, then.clone()));
                edges.push((f, otherwise.clone()));
            }
            Terminator::Table {
                index,
                targets,
                default,
            } => {
                let idx = self.val(*index)?;
                let mut taken: Option<Gv> = None;
                for (t, call) in targets.iter().enumerate() {
                    let tv = self.splat(t as i64, false);
                    let m: Gv = idx
                        .iter()
                        .zip(mask)
                        .map(|(&x, &m)| {
                            let x = self.i32x4_of(x);
                            let eq = self.b.ins().icmp(CC::Equal, x, tv);
                            self.b.ins().band(eq, m)
                        })
                        .collect();
                    taken = Some(match taken {
                        None => m.clone(),
                        Some(acc) => acc
                            .iter()
                            .zip(&m)
                            .map(|(&a, &b)| self.b.ins().bor(a, b))
                            .collect(),
                    });
                    edges.push((m, call.clone()));
                }
                let rest: Gv = match taken {
                    None => mask.to_vec(),
                    Some(t) => mask
                        .iter()
                        .zip(&t)
                        .map(|(&m, &t)| self.b.ins().band_not(m, t))
                        .collect(),
                };
                edges.push((rest, default.clone()));
            }
        }
        Ok(edges)
    }

    /// Writes an edge's arguments `vals` into its target's parameters for
    /// the lanes of `m`.
    pub(super) fn write_edge_args(
        &mut self,
        m: &[ir::Value],
        call: &BlockCall,
        vals: &[Gv],
    ) -> Result<(), JitError> {
        let params = self
            .kernel
            .blocks
            .get(call.block)
            .ok_or(JitError::Malformed("branch to an unknown block"))?
            .params
            .clone();
        if params.len() != vals.len() {
            return Err(JitError::Malformed("block argument count"));
        }
        for (&p, g) in params.iter().zip(vals) {
            self.write_slab(p, g, m)?;
        }
        Ok(())
    }

    /// Every edge's arguments, all read before any parameter is written
    /// (a parallel move).
    pub(super) fn edge_args(
        &mut self,
        edges: &[(Gv, BlockCall)],
    ) -> Result<Vec<Vec<Gv>>, JitError> {
        let mut args: Vec<Vec<Gv>> = Vec::with_capacity(edges.len());
        for (_, call) in edges {
            let mut a = Vec::with_capacity(call.args.len());
            for &v in &call.args {
                a.push(self.val(v)?);
            }
            args.push(a);
        }
        Ok(args)
    }

    /// The chunk's part of the segment's uniform successor (see
    /// `GLower::note_successor`): a jump's target, or a branch's side when no
    /// active lane took the other.
    fn note_edges(&mut self, term: &Terminator, edges: &[(Gv, BlockCall)]) -> Result<(), JitError> {
        if self.chunk()?.full.is_none() {
            return Ok(());
        }
        let pc_of = |this: &mut Self, call: &BlockCall| {
            let pc = this.plan.block_pc[call.block];
            this.iconst(types::I32, i64::from(pc as i32))
        };
        let target = match term {
            Terminator::Jump(call) => pc_of(self, call),
            Terminator::Branch {
                then, otherwise, ..
            } => {
                let any = |this: &mut Self, m: &Gv| {
                    let mut a = m[0];
                    for &x in &m[1..] {
                        a = this.b.ins().bor(a, x);
                    }
                    this.b.ins().vany_true(a)
                };
                let took_then = any(self, &edges[0].0);
                let took_else = any(self, &edges[1].0);
                let t = pc_of(self, then);
                let e = pc_of(self, otherwise);
                let none = self.iconst(types::I32, i64::from(u32::MAX as i32));
                let side = self.b.ins().select(took_else, none, t);
                self.b.ins().select(took_then, side, e)
            }
            _ => return Ok(()),
        };
        self.note_successor(target)
    }

    /// When `cond` is a 32-bit compare that x86 computes as the negation of
    /// another (`ne`, `ult`, `ugt`, `sle`, `sge`) and the current chunk holds
    /// its operands (computed in this run, or constants), the other's
    /// vectors.
    fn negated_compare(&mut self, cond: wavejit_ir::Value) -> Result<Option<Gv>, JitError> {
        let ValueDef::Result { inst, .. } = self.kernel.values[cond].def else {
            return Ok(None);
        };
        let data = &self.kernel.insts[inst];
        let (InstKind::Icmp(cc), [a, b]) = (&data.kind, &data.args[..]) else {
            return Ok(None);
        };
        let negated = match cc {
            IntCC::Ne => CC::Equal,
            IntCC::Ult => CC::UnsignedGreaterThanOrEqual,
            IntCC::Ugt => CC::UnsignedLessThanOrEqual,
            IntCC::Sle => CC::SignedGreaterThan,
            IntCC::Sge => CC::SignedLessThan,
            _ => return Ok(None),
        };
        let (a, b) = (*a, *b);
        let held = |this: &Self, v: wavejit_ir::Value| {
            this.env.contains_key(&v) || const_bits(this.kernel, v).is_some()
        };
        if self.kernel.value_type(a) != Type::I32 || !held(self, a) || !held(self, b) {
            return Ok(None);
        }
        let (x, y) = (self.val(a)?, self.val(b)?);
        let r = x
            .iter()
            .zip(&y)
            .map(|(&x, &y)| {
                let (x, y) = (self.i32x4_of(x), self.i32x4_of(y));
                self.b.ins().icmp(negated, x, y)
            })
            .collect();
        Ok(Some(r))
    }

    /// One step for every active lane; lanes past the limit fault entering
    /// their edge's block.
    pub(super) fn count_steps(&mut self, edges: &[(Gv, BlockCall)]) -> Result<(), JitError> {
        let lane0 = self.chunk()?.lane0;
        let mask = self.mask();
        let steps = self.ctx_load(types::I64, off::STEPS);
        // Unsigned `steps > limit` as a signed compare of both with the top
        // bit flipped (x86 has no unsigned vector compare).
        let limit = match self.ls.as_ref() {
            // What is left of the limit after the lockstep edges.
            Some(ls) => self.b.use_var(ls.limit),
            None => self.ctx_load(types::I32, off::STEP_LIMIT),
        };
        let limit = self.b.ins().bxor_imm_s(limit, i64::from(i32::MIN));
        let limit = self.b.ins().splat(types::I32X4, limit);
        let flip = self.splat(i64::from(i32::MIN), false);
        let mut over_any = None;
        let mut over = Vec::with_capacity(self.g);
        for (k, &m) in mask.iter().enumerate() {
            // mask lanes are all ones: subtracting adds one.
            let s = if let Some(held) = self.loop_steps.as_mut() {
                // Held in registers while a chunk iterates a self-loop.
                held[k] = self.b.ins().isub(held[k], m);
                held[k]
            } else {
                let p = self.lane_ptr(steps, lane0, k);
                let s = self.b.ins().load(types::I32X4, guest(), p, 0);
                let s = self.b.ins().isub(s, m);
                self.b.ins().store(guest(), s, p, 0);
                s
            };
            let flipped = self.b.ins().bxor(s, flip);
            let o = self.b.ins().icmp(CC::SignedGreaterThan, flipped, limit);
            let o = self.b.ins().band(o, m);
            over_any = Some(match over_any {
                None => o,
                Some(a) => self.b.ins().bor(a, o),
            });
            over.push(o);
        }
        let Some(any) = over_any else {
            return Ok(());
        };
        let any = self.b.ins().vany_true(any);
        let cold = self.b.create_block();
        let join = self.b.create_block();
        self.b.set_cold_block(cold);
        self.b.ins().brif(any, cold, &[], join, &[]);
        self.b.switch_to_block(cold);
        self.cold(|this| {
            for (m, call) in edges {
                let hit: Gv = m
                    .iter()
                    .zip(&over)
                    .map(|(&m, &o)| this.b.ins().band(m, o))
                    .collect();
                let bits = this.scratch_at(0);
                for (k, &h) in hit.iter().enumerate() {
                    this.b.ins().store(
                        cranelift_codegen::ir::MemFlagsData::trusted(),
                        h,
                        bits,
                        16 * k as i32,
                    );
                }
                let lane0 = this.b.ins().ireduce(types::I32, lane0);
                let blk = this.iconst(types::I32, i64::from(call.block.as_u32()));
                let f = this.iconst(types::I64, wj_gang_watchdog as *const () as i64);
                let call_args = [this.ctx, lane0, bits, blk];
                this.call_helper(super::Helper::Watchdog, f, &call_args);
                this.mask_cache = None;
            }
            Ok(())
        })?;
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
        Ok(())
    }
}
