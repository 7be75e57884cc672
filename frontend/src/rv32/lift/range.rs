//! Unsigned value ranges of the x registers, per guest block and instruction.
//!
//! Used to prove that a load's address cannot fall in the ID window, so the load
//! needs no run-time window test (which splits the IR block: every block
//! boundary costs the engines a pass over the lanes). The analysis is sound for
//! every run: a range holds every value the register can have at that point on
//! any path, including paths through the `jalr` hub; anything it does not model
//! is the full range.

use std::collections::{BTreeMap, BTreeSet};

use super::DispatchShape;
use super::discover::GuestBlock;
use super::liveness::{Dest, JalrTargets, Resolved, dests, is_ret, static_jalr_target};
use super::mem::{ID_WINDOW_BASE, ID_WINDOW_SIZE};
use crate::rv32::{AluImmOp, AluOp, Csr, Instr, LoadKind, XReg};

/// The values `lo..=hi` (unsigned).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub lo: u32,
    pub hi: u32,
}

impl Range {
    pub const FULL: Range = Range {
        lo: 0,
        hi: u32::MAX,
    };

    pub fn exact(v: u32) -> Range {
        Range { lo: v, hi: v }
    }

    fn upto(hi: u32) -> Range {
        Range { lo: 0, hi }
    }

    fn hull(self, o: Range) -> Range {
        Range {
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
        }
    }

    /// The range of `lo..=hi` computed exactly in i64, reduced modulo 2^32; the
    /// full range when the reduction would split it.
    fn wrapped(lo: i64, hi: i64) -> Range {
        let span = 1i64 << 32;
        if lo.div_euclid(span) != hi.div_euclid(span) {
            return Range::FULL;
        }
        Range {
            lo: lo.rem_euclid(span) as u32,
            hi: hi.rem_euclid(span) as u32,
        }
    }

    /// Wrapping `self + imm` (imm sign-extended, as addi and address offsets).
    pub fn add_signed(self, imm: i32) -> Range {
        let k = i64::from(imm);
        Range::wrapped(i64::from(self.lo) + k, i64::from(self.hi) + k)
    }

    fn add(self, o: Range) -> Range {
        Range::wrapped(
            i64::from(self.lo) + i64::from(o.lo),
            i64::from(self.hi) + i64::from(o.hi),
        )
    }

    fn sub(self, o: Range) -> Range {
        Range::wrapped(
            i64::from(self.lo) - i64::from(o.hi),
            i64::from(self.hi) - i64::from(o.lo),
        )
    }

    fn shl(self, k: u32) -> Range {
        let k = k & 31;
        if self.hi > u32::MAX >> k {
            return Range::FULL;
        }
        Range {
            lo: self.lo << k,
            hi: self.hi << k,
        }
    }

    fn shr(self, k: u32) -> Range {
        let k = k & 31;
        Range {
            lo: self.lo >> k,
            hi: self.hi >> k,
        }
    }

    /// Arithmetic shift: the logical one while no value has the sign bit.
    fn sra(self, k: u32) -> Range {
        if self.hi < 1 << 31 {
            self.shr(k)
        } else {
            Range::FULL
        }
    }

    fn and(self, o: Range) -> Range {
        Range::upto(self.hi.min(o.hi))
    }

    /// Every value with no bit above the highest bit of `hi`.
    fn below_pow2(hi: u32) -> u32 {
        match hi.checked_ilog2() {
            Some(b) if b < 31 => (2u32 << b) - 1,
            Some(_) => u32::MAX,
            None => 0,
        }
    }

    /// a | b lies between max(a, b) and a + b, and sets no bit above both.
    fn or(self, o: Range) -> Range {
        let sum = self.hi.saturating_add(o.hi);
        Range {
            lo: self.lo.max(o.lo),
            hi: sum.min(Range::below_pow2(self.hi.max(o.hi))),
        }
    }

    fn xor(self, o: Range) -> Range {
        Range::upto(Range::below_pow2(self.hi.max(o.hi)))
    }

    fn mul(self, o: Range) -> Range {
        let hi = u64::from(self.hi) * u64::from(o.hi);
        match u32::try_from(hi) {
            Ok(hi) => Range {
                lo: self.lo * o.lo,
                hi,
            },
            Err(_) => Range::FULL,
        }
    }

    /// The shift amount when the range is one value.
    fn single(self) -> Option<u32> {
        (self.lo == self.hi).then_some(self.lo)
    }

    /// True if no value of the range lies in `base..base + size`.
    pub fn misses(self, base: u32, size: u32) -> bool {
        let end = u64::from(base) + u64::from(size);
        u64::from(self.hi) < u64::from(base) || u64::from(self.lo) >= end
    }

    /// True if every value of the range lies in `base..base + size`.
    pub fn within(self, base: u32, size: u32) -> bool {
        let end = u64::from(base) + u64::from(size);
        self.lo >= base && u64::from(self.hi) < end
    }
}

/// Ranges of x0..x31 at one point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeState {
    x: [Range; 32],
}

impl RangeState {
    /// Every register zero (the launch state).
    pub fn launch() -> RangeState {
        RangeState {
            x: [Range::exact(0); 32],
        }
    }

    /// Nothing known (x0 is still zero).
    pub fn unknown() -> RangeState {
        let mut x = [Range::FULL; 32];
        x[0] = Range::exact(0);
        RangeState { x }
    }

    pub fn get(&self, r: XReg) -> Range {
        self.x[r.num()]
    }

    /// The range of `x[rs1] + offset` (a load or store address).
    pub fn addr(&self, rs1: XReg, offset: i32) -> Range {
        self.get(rs1).add_signed(offset)
    }

    fn hull(&self, o: &RangeState) -> RangeState {
        RangeState {
            x: std::array::from_fn(|i| self.x[i].hull(o.x[i])),
        }
    }

    /// Updates the ranges after `instr` at `pc` (`shape`: the dispatch's, if
    /// the lift may assume it).
    pub fn step(&mut self, pc: u32, instr: &Instr, shape: Option<&DispatchShape>) {
        let Some(rd) = instr.reg_effects().x_dst else {
            return;
        };
        let r = match (shape, *instr) {
            (
                Some(s),
                Instr::Csr {
                    csr: Csr::Mhartid, ..
                },
            ) => hartid_range(s),
            (
                Some(s),
                Instr::Load {
                    kind: LoadKind::Word,
                    rs1,
                    offset,
                    ..
                },
            ) => self
                .addr(rs1, offset)
                .single()
                .and_then(|a| id_word_range(s, a))
                .unwrap_or(Range::FULL),
            _ => self.result(pc, instr),
        };
        if rd.0 != 0 {
            self.x[rd.num()] = r;
        }
    }

    /// The range of the x result of `instr` (full for what is not modelled).
    fn result(&self, pc: u32, instr: &Instr) -> Range {
        let next = pc.wrapping_add(4);
        match *instr {
            Instr::Lui { imm, .. } => Range::exact(imm),
            Instr::Auipc { imm, .. } => Range::exact(pc.wrapping_add(imm)),
            Instr::Jal { .. } | Instr::Jalr { .. } => Range::exact(next),
            Instr::Load { kind, .. } => match kind {
                LoadKind::ByteUnsigned => Range::upto(0xff),
                LoadKind::HalfUnsigned => Range::upto(0xffff),
                _ => Range::FULL,
            },
            Instr::OpImm { op, rs1, imm, .. } => {
                let a = self.get(rs1);
                let k = Range::exact(imm as u32);
                match op {
                    AluImmOp::Addi => a.add_signed(imm),
                    AluImmOp::Slti | AluImmOp::Sltiu => Range::upto(1),
                    AluImmOp::Xori => a.xor(k),
                    AluImmOp::Ori => a.or(k),
                    AluImmOp::Andi => a.and(k),
                    AluImmOp::Slli => a.shl(imm as u32),
                    AluImmOp::Srli => a.shr(imm as u32),
                    AluImmOp::Srai => a.sra(imm as u32),
                }
            }
            Instr::Op { op, rs1, rs2, .. } => {
                let (a, b) = (self.get(rs1), self.get(rs2));
                match op {
                    AluOp::Add => a.add(b),
                    AluOp::Sub => a.sub(b),
                    AluOp::Slt | AluOp::Sltu => Range::upto(1),
                    AluOp::Xor => a.xor(b),
                    AluOp::Or => a.or(b),
                    AluOp::And => a.and(b),
                    AluOp::Mul => a.mul(b),
                    AluOp::Sll => b.single().map_or(Range::FULL, |k| a.shl(k)),
                    AluOp::Srl => b.single().map_or(Range::FULL, |k| a.shr(k)),
                    AluOp::Sra => b.single().map_or(Range::FULL, |k| a.sra(k)),
                    _ => Range::FULL,
                }
            }
            Instr::Csr {
                csr: Csr::Fflags, ..
            } => Range::upto(0x1f),
            Instr::Csr { csr: Csr::Frm, .. } => Range::upto(7),
            Instr::Csr { csr: Csr::Fcsr, .. } => Range::upto(0xff),
            _ => Range::FULL,
        }
    }
}

/// The computed `jalr`s (no block-local constant target) whose target the
/// ranges at the `jalr` decide: one known block start, or for a `ret` with ra
/// always 0 the lane's end. `ranges`: entry ranges computed with no `jalr`
/// resolved, which hold on every path; so the resolved targets are the only
/// ones a lane can take.
pub fn jalr_targets(
    blocks: &BTreeMap<u32, GuestBlock>,
    ranges: &BTreeMap<u32, RangeState>,
    shape: Option<&DispatchShape>,
) -> JalrTargets {
    decided_jalrs(blocks, ranges, shape)
        .filter(|(_, r)| match r {
            Resolved::Block(t) => blocks.contains_key(t),
            Resolved::Exit => true,
        })
        .collect()
}

/// Targets the ranges decide for computed `jalr`s that discovery did not reach
/// (their base register was set in another block, or is the launch value 0):
/// code a lane will run, so the lift discovers again from them.
pub fn undiscovered_jalr_targets(
    blocks: &BTreeMap<u32, GuestBlock>,
    ranges: &BTreeMap<u32, RangeState>,
    shape: Option<&DispatchShape>,
) -> BTreeSet<u32> {
    decided_jalrs(blocks, ranges, shape)
        .filter_map(|(_, r)| match r {
            Resolved::Block(t) if !blocks.contains_key(&t) => Some(t),
            _ => None,
        })
        .collect()
}

/// Every computed `jalr` (by the start of its block) with its decided target,
/// whether or not a block starts there.
fn decided_jalrs<'a>(
    blocks: &'a BTreeMap<u32, GuestBlock>,
    ranges: &'a BTreeMap<u32, RangeState>,
    shape: Option<&'a DispatchShape>,
) -> impl Iterator<Item = (u32, Resolved)> + 'a {
    blocks.iter().filter_map(move |(&start, b)| {
        let (_, _, last) = b.instrs.last()?;
        let Instr::Jalr { rs1, offset, .. } = *last else {
            return None;
        };
        if static_jalr_target(b).is_some() {
            return None;
        }
        let mut s = ranges.get(&start)?.clone();
        for &(pc, _, ref instr) in &b.instrs[..b.instrs.len() - 1] {
            s.step(pc, instr, shape);
        }
        let base = s.get(rs1);
        if is_ret(last) && base == Range::exact(0) {
            return Some((start, Resolved::Exit));
        }
        // A ret with ra possibly 0 may end the lane instead.
        if is_ret(last) && base.lo == 0 {
            return None;
        }
        let t = base.add_signed(offset).single()? & !1;
        Some((start, Resolved::Block(t)))
    })
}

/// `0..=n-1` for a count `n` that fits (nothing runs when it is 0).
fn below(n: u64) -> Range {
    u32::try_from(n.saturating_sub(1)).map_or(Range::FULL, Range::upto)
}

/// mhartid = block_linear << 13 | local index.
fn hartid_range(s: &DispatchShape) -> Range {
    let count = |d: [u32; 3]| d.iter().map(|&v| u64::from(v)).product::<u64>();
    below(count(s.num_workgroups))
        .shl(13)
        .or(below(count(s.workgroup_size)))
}

/// The range of the aligned ID-window word at `addr`, if `addr` is one.
fn id_word_range(s: &DispatchShape, addr: u32) -> Option<Range> {
    let off = addr.wrapping_sub(ID_WINDOW_BASE);
    if off >= ID_WINDOW_SIZE || !off.is_multiple_of(4) {
        return None;
    }
    let local = s
        .workgroup_size
        .iter()
        .map(|&v| u64::from(v))
        .product::<u64>();
    let d = (off as usize % 16) / 4;
    Some(match (off / 16, d) {
        (0, 0) => below(local),
        (1, 0..=2) => below(u64::from(s.num_workgroups[d])),
        (2, 0..=2) => Range::exact(s.workgroup_size[d]),
        (3, 0..=2) => Range::exact(s.num_workgroups[d]),
        // Offsets without an ID read 0.
        _ => Range::exact(0),
    })
}

/// Growths of a block's entry state before growing ranges jump to full.
const WIDEN_AFTER: u32 = 4;

/// Entry ranges of every block (a block no path reaches gets `unknown`).
pub fn entry_ranges(
    blocks: &BTreeMap<u32, GuestBlock>,
    entry: u32,
    shape: Option<&DispatchShape>,
    resolved: &JalrTargets,
) -> BTreeMap<u32, RangeState> {
    let succs: BTreeMap<u32, Vec<Dest>> = blocks
        .iter()
        .map(|(&pc, b)| (pc, dests(b, blocks, resolved)))
        .collect();
    let mut state: BTreeMap<u32, RangeState> = BTreeMap::new();
    let mut growths: BTreeMap<u32, u32> = BTreeMap::new();
    let mut hub: Option<RangeState> = None;
    // Blocks to (re)visit; a set, so a hub that enters every block costs
    // no quadratic membership tests.
    let mut work: BTreeSet<u32> = BTreeSet::new();
    if blocks.contains_key(&entry) {
        state.insert(entry, RangeState::launch());
        work.insert(entry);
    }
    while let Some(pc) = work.pop_first() {
        let (Some(b), Some(s)) = (blocks.get(&pc), state.get(&pc)) else {
            continue;
        };
        let mut out = s.clone();
        for &(ipc, _, ref instr) in &b.instrs {
            out.step(ipc, instr, shape);
        }
        let mut targets: Vec<(u32, RangeState)> = Vec::new();
        for d in succs.get(&pc).map_or(&[][..], Vec::as_slice) {
            match d {
                Dest::Block(t) => targets.push((*t, out.clone())),
                Dest::Hub => {
                    let h = hub.as_ref().map_or_else(|| out.clone(), |h| h.hull(&out));
                    if hub.as_ref() != Some(&h) {
                        hub = Some(h.clone());
                        // The hub can enter every block.
                        targets.extend(blocks.keys().map(|&t| (t, h.clone())));
                    }
                }
                Dest::Exit | Dest::Resume => {}
            }
        }
        for (t, incoming) in targets {
            if !blocks.contains_key(&t) {
                continue;
            }
            let merged = match state.get(&t) {
                None => incoming,
                Some(old) => {
                    let mut m = old.hull(&incoming);
                    if &m == old {
                        continue;
                    }
                    let g = growths.entry(t).or_insert(0);
                    *g += 1;
                    if *g > WIDEN_AFTER {
                        for i in 0..32 {
                            if m.x[i] != old.x[i] {
                                m.x[i] = Range::FULL;
                            }
                        }
                    }
                    m
                }
            };
            state.insert(t, merged);
            work.insert(t);
        }
    }
    blocks
        .keys()
        .map(|&pc| (pc, state.remove(&pc).unwrap_or_else(RangeState::unknown)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::Range;

    /// xorshift64*: a fixed sequence, so failures reproduce.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u32 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
        }
        /// Mostly small ranges at small, large and wrapping positions.
        fn range(&mut self) -> Range {
            let lo = match self.next() % 3 {
                0 => self.next() % 64,
                1 => self.next(),
                _ => u32::MAX - self.next() % 64,
            };
            let width = match self.next() % 3 {
                0 => 0,
                1 => self.next() % 300,
                _ => self.next(),
            };
            Range {
                lo,
                hi: lo.saturating_add(width),
            }
        }
        fn inside(&mut self, r: Range) -> u32 {
            let span = u64::from(r.hi - r.lo) + 1;
            r.lo + (u64::from(self.next()) % span) as u32
        }
    }

    fn holds(r: Range, v: u32) -> bool {
        r.lo <= v && v <= r.hi
    }

    /// Every operation's range holds the results of values from its operands'
    /// ranges (including the endpoints).
    #[test]
    fn operations_are_sound() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..20_000 {
            let (a, b) = (rng.range(), rng.range());
            let k = rng.next() % 32;
            let imm = rng.next() as i32 >> (rng.next() % 32);
            for pick in 0..4 {
                let x = match pick {
                    0 => a.lo,
                    1 => a.hi,
                    _ => rng.inside(a),
                };
                let y = match pick {
                    0 => b.hi,
                    1 => b.lo,
                    _ => rng.inside(b),
                };
                let cases = [
                    ("add", a.add(b), x.wrapping_add(y)),
                    ("sub", a.sub(b), x.wrapping_sub(y)),
                    ("addi", a.add_signed(imm), x.wrapping_add_signed(imm)),
                    ("and", a.and(b), x & y),
                    ("or", a.or(b), x | y),
                    ("xor", a.xor(b), x ^ y),
                    ("mul", a.mul(b), x.wrapping_mul(y)),
                    ("shl", a.shl(k), x << k),
                    ("shr", a.shr(k), x >> k),
                    ("sra", a.sra(k), ((x as i32) >> k) as u32),
                ];
                for (name, r, v) in cases {
                    assert!(
                        holds(r, v),
                        "{name}: {a:?} {b:?} k={k} imm={imm}: {v:#x} outside {r:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn window_tests() {
        let w = |lo, hi| Range { lo, hi };
        assert!(w(0, 0x7fff_ffff).misses(0x8000_0000, 0x1000));
        assert!(w(0x8000_1000, u32::MAX).misses(0x8000_0000, 0x1000));
        assert!(!w(0x7fff_ffff, 0x8000_0000).misses(0x8000_0000, 0x1000));
        assert!(!w(0x8000_0fff, 0x8000_1000).misses(0x8000_0000, 0x1000));
        assert!(w(0x8000_0000, 0x8000_0fff).within(0x8000_0000, 0x1000));
        assert!(!w(0x8000_0000, 0x8000_1000).within(0x8000_0000, 0x1000));
        // A sum that wraps for some values only is the full range; one that
        // wraps for all is exact.
        assert_eq!(w(0x10, 0x20).add_signed(-0x18), Range::FULL);
        assert_eq!(w(0x10, 0x20).add_signed(-0x30), w(0xffff_ffe0, 0xffff_fff0));
    }
}
