//! Guest state as SSA variables, and which of them each block needs as
//! parameters (live on entry and written somewhere in the kernel; state never
//! written is the launch constant 0 defined in the prologue).

use std::collections::{BTreeMap, BTreeSet};

use super::consts::ConstTracker;
use super::discover::{BlockEnd, GuestBlock, branch_outcome};
use crate::rv32::{Csr, CsrOp, Instr, XReg};

/// x1..x31 are variables 0..=30, f0..f31 are 31..=62.
pub const F_BASE: usize = 31;
pub const FFLAGS: usize = 63;
pub const FRM: usize = 64;
/// Instructions retired by the lane (cycle limit).
pub const ICOUNT: usize = 65;
pub const NVARS: usize = 66;

pub type VarSet = u128;

pub fn xvar(r: XReg) -> Option<usize> {
    (r.0 != 0).then(|| r.num() - 1)
}

pub fn bit(v: usize) -> VarSet {
    1u128 << v
}

pub const ALL_VARS: VarSet = (1u128 << NVARS) - 1;

/// Where control can go at the end of a guest block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dest {
    Block(u32),
    /// Computed `jalr`: the dispatch hub over known block starts.
    Hub,
    /// The lane ends (ebreak, or `ret` with ra == 0).
    Exit,
    /// The lane leaves resumably ([`super::resume`]): `fence.i`, or a jump to
    /// an aligned pc the lift has no block for. Uses the whole written state.
    Resume,
}

/// True for `jalr x0, 0(x1)`, the `ret` that ends a lane when ra == 0.
pub fn is_ret(instr: &Instr) -> bool {
    matches!(
        instr,
        Instr::Jalr {
            rd: XReg::ZERO,
            rs1: XReg::RA,
            offset: 0
        }
    )
}

/// Static target of a `jalr` from block-local constants.
pub fn static_jalr_target(block: &GuestBlock) -> Option<u32> {
    let mut consts = ConstTracker::default();
    for (pc, _, instr) in &block.instrs {
        if let Instr::Jalr { rs1, offset, .. } = *instr {
            return consts.get(rs1).map(|b| b.wrapping_add_signed(offset) & !1);
        }
        consts.step(*pc, instr);
    }
    None
}

/// Where a computed `jalr` goes when the range analysis knows its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// Always this block start.
    Block(u32),
    /// A `ret` whose ra is always 0: the lane ends.
    Exit,
}

/// Resolved `jalr`s by the start of the block they end.
pub type JalrTargets = BTreeMap<u32, Resolved>;

/// Successors of a block (same decisions as the emitter).
pub fn dests(
    block: &GuestBlock,
    known: &BTreeMap<u32, GuestBlock>,
    resolved: &JalrTargets,
) -> Vec<Dest> {
    let mut out = Vec::new();
    // A direct target without a block: a lane jumping there leaves (aligned
    // targets, lazy discovery) or traps (misaligned ones).
    let direct = |t: u32| {
        if known.contains_key(&t) {
            Some(Dest::Block(t))
        } else {
            t.is_multiple_of(4).then_some(Dest::Resume)
        }
    };
    match block.end {
        BlockEnd::Fallthrough(pc) => out.push(Dest::Block(pc)),
        BlockEnd::Bad { .. } => {}
        BlockEnd::Terminator => {
            let Some((pc, _, instr)) = block.instrs.last() else {
                return out;
            };
            let next = pc.wrapping_add(4);
            match *instr {
                Instr::Branch { .. } => {
                    let outcome = branch_outcome(instr);
                    if outcome != Some(false) {
                        out.extend(instr.direct_target(*pc).and_then(direct));
                    }
                    if outcome != Some(true) {
                        out.extend(direct(next));
                    }
                }
                Instr::Jal { .. } => out.extend(instr.direct_target(*pc).and_then(direct)),
                Instr::Jalr { .. } if resolved.contains_key(&block.start) => {
                    out.push(match resolved[&block.start] {
                        Resolved::Block(t) => Dest::Block(t),
                        Resolved::Exit => Dest::Exit,
                    });
                }
                Instr::Jalr { .. } => {
                    if is_ret(instr) {
                        out.push(Dest::Exit);
                    }
                    match static_jalr_target(block) {
                        Some(t) if known.contains_key(&t) => out.push(Dest::Block(t)),
                        // Through the hub, which knows no block there.
                        Some(t) => out.extend(direct(t)),
                        None => out.push(Dest::Hub),
                    }
                }
                Instr::Ebreak => out.push(Dest::Exit),
                Instr::FenceI => out.push(Dest::Resume),
                _ => {}
            }
        }
    }
    out
}

/// Which parts of the FP environment the kernel observes or changes.
#[derive(Clone, Copy, Debug, Default)]
pub struct FpEnv {
    /// fflags must be computed (read by a CSR instruction, or dumped at exit).
    pub track_flags: bool,
    /// frm is written somewhere, so `dyn` rounding is decided at run time.
    pub dynamic_frm: bool,
}

pub fn fp_env(blocks: &BTreeMap<u32, GuestBlock>, dump: bool) -> FpEnv {
    let mut env = FpEnv {
        track_flags: dump,
        dynamic_frm: false,
    };
    for b in blocks.values() {
        for (_, _, i) in &b.instrs {
            if let Some(a) = i.csr_access() {
                if a.reads && matches!(a.csr, Csr::Fflags | Csr::Fcsr) {
                    env.track_flags = true;
                }
                if a.writes && matches!(a.csr, Csr::Frm | Csr::Fcsr) {
                    env.dynamic_frm = true;
                }
            }
        }
    }
    env
}

/// (uses before definition, definitions) of one instruction's state variables.
fn inst_effects(instr: &Instr, env: FpEnv) -> (VarSet, VarSet) {
    let e = instr.reg_effects();
    let mut uses = 0;
    let mut defs = 0;
    for r in e.x_src.into_iter().flatten() {
        uses |= xvar(r).map_or(0, bit);
    }
    for r in e.f_src.into_iter().flatten() {
        uses |= bit(F_BASE + r.num());
    }
    if let Some(r) = e.x_dst {
        defs |= xvar(r).map_or(0, bit);
    }
    if let Some(r) = e.f_dst {
        defs |= bit(F_BASE + r.num());
    }
    if env.track_flags && instr.may_set_fflags() {
        uses |= bit(FFLAGS);
        defs |= bit(FFLAGS);
    }
    if env.dynamic_frm && instr.reads_frm() {
        uses |= bit(FRM);
    }
    if let Instr::Csr { op, csr, .. } = *instr {
        let vars = match csr {
            Csr::Fflags => bit(FFLAGS),
            Csr::Frm => bit(FRM),
            Csr::Fcsr => bit(FFLAGS) | bit(FRM),
            Csr::Mhartid => 0,
        };
        if let Some(a) = instr.csr_access() {
            // Set/clear are read-modify-write even when rd is x0.
            if a.reads || (a.writes && op != CsrOp::ReadWrite) {
                uses |= vars;
            }
            if a.writes {
                defs |= vars;
            }
        }
    }
    (uses, defs)
}

/// Every variable some instruction writes (plus the counter when some block
/// tests it).
pub fn written(blocks: &BTreeMap<u32, GuestBlock>, env: FpEnv, counted: bool) -> VarSet {
    let mut w = if counted { bit(ICOUNT) } else { 0 };
    for b in blocks.values() {
        for (_, _, i) in &b.instrs {
            w |= inst_effects(i, env).1;
        }
    }
    if !env.track_flags {
        w &= !bit(FFLAGS);
    }
    w
}

/// Live-in sets per block. `checked`: the blocks that test the instruction
/// counter at their end; other blocks only add to it, so it is live through
/// them exactly when a later test reads it.
pub fn live_in(
    blocks: &BTreeMap<u32, GuestBlock>,
    env: FpEnv,
    written: VarSet,
    exit_uses: VarSet,
    checked: &BTreeSet<u32>,
    resolved: &JalrTargets,
) -> BTreeMap<u32, VarSet> {
    let mut summary: BTreeMap<u32, (VarSet, VarSet, Vec<Dest>)> = BTreeMap::new();
    for (&pc, b) in blocks {
        let mut uses: VarSet = 0;
        let mut defs: VarSet = 0;
        if checked.contains(&pc) {
            uses |= bit(ICOUNT);
            defs |= bit(ICOUNT);
        }
        for (_, _, i) in &b.instrs {
            let (u, d) = inst_effects(i, env);
            uses |= u & !defs;
            defs |= d;
        }
        summary.insert(pc, (uses, defs, dests(b, blocks, resolved)));
    }
    let mut live: BTreeMap<u32, VarSet> = blocks.keys().map(|&pc| (pc, 0)).collect();
    loop {
        let mut changed = false;
        for (&pc, (uses, defs, ds)) in summary.iter().rev() {
            let mut out: VarSet = 0;
            for d in ds {
                out |= match d {
                    Dest::Block(t) => live.get(t).copied().unwrap_or(0),
                    Dest::Hub | Dest::Resume => written,
                    Dest::Exit => exit_uses,
                };
            }
            let inn = (uses | (out & !defs)) & written;
            if live.get(&pc) != Some(&inn) {
                live.insert(pc, inn);
                changed = true;
            }
        }
        if !changed {
            return live;
        }
    }
}
