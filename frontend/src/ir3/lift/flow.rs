//! cat0: control flow. Planning (reachability, block leaders, return sites,
//! predicated regions) and lifting of branches, calls, predication and `end`.

use crate::ir3::FieldName;
use crate::ir3::field;
use std::collections::BTreeMap;

use wavejit_ir::{BlockCall, IBinOp, InstKind, IntCC, Terminator, Type, Value};

use super::regs::{P0, private};
use super::{LiftError, Lifter, decode, layout};
use crate::ir3::Instr;

/// The static shape of a program.
pub(crate) struct Plan {
    /// Decoded reachable instructions (`None`: unreachable).
    pub instrs: Vec<Option<Instr>>,
    pub leader: Vec<bool>,
    /// pc + 1 of every reachable `call`, in pc order.
    pub ret_sites: Vec<u64>,
    pub pred_end: BTreeMap<u64, u64>,
}

/// cat0 instructions that end a block.
fn ends_block(name: &str) -> bool {
    matches!(
        name,
        "br" | "brao"
            | "braa"
            | "brac"
            | "bany"
            | "ball"
            | "jump"
            | "call"
            | "ret"
            | "end"
            | "kill"
            | "getone"
            | "getlast"
            | "predt"
            | "predf"
    )
}

fn decode_at(words: &[u64], pc: usize) -> Result<Instr, LiftError> {
    let word = words[pc];
    decode(word).map_err(|e| LiftError::Undecodable {
        pc: pc as u64,
        word,
        reason: e.to_string(),
    })
}

pub(crate) fn plan(words: &[u64]) -> Result<Plan, LiftError> {
    let n = words.len();
    let mut instrs: Vec<Option<Instr>> = vec![None; n];
    let mut leader = vec![false; n];
    let mut pred_end = BTreeMap::new();
    let mut work = vec![0usize];
    if n == 0 {
        return Err(LiftError::FallsOffEnd { pc: 0 });
    }
    leader[0] = true;
    while let Some(pc) = work.pop() {
        if instrs[pc].is_some() {
            continue;
        }
        let ins = decode_at(words, pc)?;
        let mut succ: Vec<i64> = Vec::new();
        let next = pc as i64 + 1;
        let target = ins.branch_target(pc as i64).unwrap_or(next);
        match ins.encoding {
            "end" | "ret" => {}
            "jump" => succ.push(target),
            "br" | "brao" | "braa" | "brac" | "bany" | "ball" | "getone" | "getlast" | "call" => {
                succ.push(target);
                succ.push(next);
            }
            "predt" | "predf" => {
                let mut e = pc + 1;
                loop {
                    if e >= n {
                        return Err(LiftError::FallsOffEnd { pc: e as u64 });
                    }
                    let i = decode_at(words, e)?;
                    if matches!(i.encoding, "predt" | "predf" | "prede") {
                        break;
                    }
                    e += 1;
                }
                pred_end.insert(pc as u64, e as u64);
                succ.push(e as i64);
                succ.push(next);
            }
            _ => succ.push(next),
        }
        let ends = ends_block(ins.encoding);
        for &t in &succ {
            if t < 0 || t as usize >= n {
                if t == next && t as usize == n {
                    return Err(LiftError::FallsOffEnd { pc: t as u64 });
                }
                return Err(LiftError::BadTarget {
                    pc: pc as u64,
                    target: t,
                    len: n,
                });
            }
            let t = t as usize;
            if ends || t != pc + 1 {
                leader[t] = true;
            }
            work.push(t);
        }
        instrs[pc] = Some(ins);
    }
    let ret_sites = (0..n)
        .filter(|&pc| instrs[pc].as_ref().is_some_and(|i| i.encoding == "call"))
        .map(|pc| pc as u64 + 1)
        .collect();
    Ok(Plan {
        instrs,
        leader,
        ret_sites,
        pred_end,
    })
}

impl Lifter<'_> {
    /// `p0.<comp>`, inverted if `inv`, as an i1.
    fn pred(&mut self, comp: i64, inv: bool) -> Value {
        let p = self.read_full(P0 + (comp as u32 & 3));
        let z = self.iconst(Type::I32, 0);
        let cc = if inv { IntCC::Eq } else { IntCC::Ne };
        self.ins(InstKind::Icmp(cc), &[p, z])
    }

    fn true_mask(&mut self) -> Value {
        self.iconst(Type::I1, 1)
    }

    /// Ends the block: lanes where `cond` holds go to pc `then`, the others to `other`.
    fn branch_pcs(&mut self, cond: Value, then: u64, other: u64) -> Result<(), LiftError> {
        let t = self.block_at(then)?;
        let o = self.block_at(other)?;
        self.flush_all();
        self.terminate(Terminator::Branch {
            cond,
            then: BlockCall::new(t, &[]),
            otherwise: BlockCall::new(o, &[]),
        });
        Ok(())
    }

    pub(crate) fn lift_flow(&mut self, ins: &Instr) -> Result<(), LiftError> {
        let pc = self.pc;
        let next = pc + 1;
        let target = ins.branch_target(pc as i64).unwrap_or(next as i64) as u64;
        let g = |n: FieldName| ins.get(n).unwrap_or(0);
        match ins.encoding {
            "nop" | "shpe" | "prede" => {}
            // Every fiber runs the preamble itself; its results (uniform by
            // construction) are then the same as running it once per wave.
            "shps" => {}
            "end" => {
                self.flush_all();
                self.terminate(Terminator::Exit);
            }
            "jump" => self.goto(target)?,
            "br" => {
                let c = self.pred(g(field::COMP1), g(field::INV1) != 0);
                self.branch_pcs(c, target, next)?;
            }
            "brao" | "braa" => {
                let a = self.pred(g(field::COMP1), g(field::INV1) != 0);
                let b = self.pred(g(field::COMP2), g(field::INV2) != 0);
                let op = if ins.encoding == "brao" {
                    IBinOp::Or
                } else {
                    IBinOp::And
                };
                let c = self.ins(InstKind::IBinary(op), &[a, b]);
                self.branch_pcs(c, target, next)?;
            }
            "bany" | "ball" => {
                let p = self.pred(g(field::COMP1), g(field::INV1) != 0);
                let m = self.true_mask();
                let kind = if ins.encoding == "bany" {
                    InstKind::VoteAny
                } else {
                    InstKind::VoteAll
                };
                let c = self.ins(kind, &[m, p]);
                self.branch_pcs(c, target, next)?;
            }
            // brac.N: a uniform branch on bit N of SP_CS_BOOLEAN_CF_MASK, which is
            // constant for the dispatch, so the lift decides it (set: the
            // condition is true and the branch is taken).
            "brac" => {
                let n = g(field::INDEX);
                if !(0..32).contains(&n) {
                    return Err(self.malformed(ins, format!("brac index {n}")));
                }
                if self.cfg.boolean_cf_mask >> n & 1 != 0 {
                    self.goto(target)?;
                } else {
                    self.goto(next)?;
                }
            }
            // brax has no a630 form; bkt's semantics are unpublished.
            "brax" | "bkt" => {
                return Err(LiftError::Undocumented {
                    name: ins.mnemonic.clone(),
                    pc,
                    word: ins.word,
                    why: "branch semantics are undocumented (mesa never emits it for compute)",
                });
            }
            "getone" => {
                // One elected fiber falls through; the others jump.
                let m = self.true_mask();
                let e = self.ins(InstKind::Elect, &[m]);
                self.branch_pcs(e, next, target)?;
            }
            "getlast" => {
                let c = self.getlast_jumps();
                self.branch_pcs(c, target, next)?;
            }
            "predt" | "predf" => {
                // Fibers whose latched p0.x disables the region skip to its end:
                // they would execute it without effect.
                let end = self.pred_end.get(&pc).copied().ok_or(LiftError::Internal {
                    pc,
                    what: "predicated region without end".into(),
                })?;
                let skip = self.pred(0, ins.encoding == "predt");
                self.branch_pcs(skip, end, next)?;
            }
            "kill" => {
                let c = self.pred(g(field::COMP1), g(field::INV1) != 0);
                let exit = self.extra_block(0)?;
                let cont = self.block_at(next)?;
                self.flush_all();
                self.terminate(Terminator::Branch {
                    cond: c,
                    then: BlockCall::new(exit, &[]),
                    otherwise: BlockCall::new(cont, &[]),
                });
                self.enter(exit);
                self.terminate(Terminator::Exit);
            }
            "call" => self.lift_call(target, next)?,
            "ret" => self.lift_ret()?,
            _ => {
                return Err(LiftError::Unsupported {
                    name: ins.mnemonic.clone(),
                    pc,
                    word: ins.word,
                });
            }
        }
        Ok(())
    }

    /// getlast (cluster of 8): fibers of the first cluster with an active fiber
    /// jump, except that cluster's last active fiber.
    fn getlast_jumps(&mut self) -> Value {
        let m = self.true_mask();
        let t = self.true_mask();
        let active = self.ins(InstKind::Ballot, &[m, t]);
        let lane = self.ins(InstKind::Builtin(wavejit_ir::Builtin::LaneId), &[]);
        let lane64 = self.resize(lane, Type::I64, false);
        let first = self.ins(InstKind::IUnary(wavejit_ir::IUnOp::Ctz), &[active]);
        let three = self.iconst(Type::I64, 3);
        let cluster = self.ins(InstKind::IBinary(IBinOp::ShrU), &[first, three]);
        let my_cluster = self.ins(InstKind::IBinary(IBinOp::ShrU), &[lane64, three]);
        let same = self.ins(InstKind::Icmp(IntCC::Eq), &[cluster, my_cluster]);
        let base = self.ins(InstKind::IBinary(IBinOp::Shl), &[cluster, three]);
        let bits = self.ins(InstKind::IBinary(IBinOp::ShrU), &[active, base]);
        let ff = self.iconst(Type::I64, 0xff);
        let bits = self.ins(InstKind::IBinary(IBinOp::And), &[bits, ff]);
        let lz = self.ins(InstKind::IUnary(wavejit_ir::IUnOp::Clz), &[bits]);
        let c63 = self.iconst(Type::I64, 63);
        let hi = self.ins(InstKind::IBinary(IBinOp::Sub), &[c63, lz]);
        let last = self.ins(InstKind::IBinary(IBinOp::Add), &[base, hi]);
        let not_last = self.ins(InstKind::Icmp(IntCC::Ne), &[lane64, last]);
        self.ins(InstKind::IBinary(IBinOp::And), &[same, not_last])
    }

    fn call_depth_addr(&mut self) -> Value {
        self.iconst(Type::I32, u64::from(layout::CALL_STACK))
    }

    fn lift_call(&mut self, target: u64, next: u64) -> Result<(), LiftError> {
        let site = self
            .ret_sites
            .iter()
            .position(|&s| s == next)
            .ok_or(LiftError::Internal {
                pc: self.pc,
                what: "call without return site".into(),
            })?;
        let da = self.call_depth_addr();
        let depth = self.ins(InstKind::Load(private(Type::I32)), &[da]);
        // Overflow traps rather than corrupting the file.
        let lim = self.iconst(Type::I32, u64::from(layout::CALL_DEPTH));
        let ok = self.ins(InstKind::Icmp(IntCC::Ult), &[depth, lim]);
        let safe = self.ins(InstKind::Select, &[ok, depth, lim]);
        let four = self.iconst(Type::I32, 4);
        let off = self.ins(InstKind::IBinary(IBinOp::Mul), &[safe, four]);
        let base = self.iconst(Type::I32, u64::from(layout::CALL_STACK + 4));
        let slot = self.ins(InstKind::IBinary(IBinOp::Add), &[off, base]);
        let s = self.iconst(Type::I32, site as u64);
        self.ins(InstKind::Store(private(Type::I32)), &[slot, s]);
        let one = self.iconst(Type::I32, 1);
        let nd = self.ins(InstKind::IBinary(IBinOp::Add), &[safe, one]);
        self.ins(InstKind::Store(private(Type::I32)), &[da, nd]);
        self.goto(target)
    }

    fn lift_ret(&mut self) -> Result<(), LiftError> {
        let da = self.call_depth_addr();
        let depth = self.ins(InstKind::Load(private(Type::I32)), &[da]);
        let one = self.iconst(Type::I32, 1);
        let nd = self.ins(InstKind::IBinary(IBinOp::Sub), &[depth, one]);
        self.ins(InstKind::Store(private(Type::I32)), &[da, nd]);
        let four = self.iconst(Type::I32, 4);
        let off = self.ins(InstKind::IBinary(IBinOp::Mul), &[nd, four]);
        let base = self.iconst(Type::I32, u64::from(layout::CALL_STACK + 4));
        let slot = self.ins(InstKind::IBinary(IBinOp::Add), &[off, base]);
        // An empty stack reads past the entries: out of range, so the default
        // (a trap block would need a pc; the lane ends) is taken.
        let idx = self.ins(InstKind::Load(private(Type::I32)), &[slot]);
        let mut targets = Vec::new();
        for s in self.ret_sites.clone() {
            targets.push(BlockCall::new(self.block_at(s)?, &[]));
        }
        self.flush_all();
        let Some(default) = targets.first().cloned() else {
            // ret without any call: the fiber ends.
            self.terminate(Terminator::Exit);
            return Ok(());
        };
        self.terminate(Terminator::Table {
            index: idx,
            targets,
            default,
        });
        Ok(())
    }
}
