//! Cat5 subgroup operations: `quad_shuffle.{brcst,horiz,vert,diag}` and
//! `brcst.active.wN`, with the semantics mesa's isaspec documents for them.
//!
//! A lane whose source lane is not executing reads its own value (the IR's
//! shuffle rule); the hardware leaves that case undefined.

use crate::ir3::field;
use wavejit_ir::{Builtin, IBinOp, InstKind, IntCC, ShuffleKind, Type};

use super::regs::As;
use super::{LiftError, Lifter};
use crate::ir3::Instr;

impl Lifter<'_> {
    /// One component only: mesa emits these per scalar, and what a wider write
    /// mask would do to the sources is not documented.
    fn single_component(&self, ins: &Instr) -> Result<(), LiftError> {
        match ins.get(field::WRMASK) {
            Some(1) => Ok(()),
            _ => Err(self.undocumented(
                ins,
                "subgroup ops with a write mask other than (x) are undocumented",
            )),
        }
    }

    /// `quad_shuffle.brcst dst, v, idx` reads lane `idx & 3` of the lane's quad;
    /// `.horiz` / `.vert` / `.diag` swap with lane ^ 1 / ^ 2 / ^ 3.
    pub(crate) fn lift_quad_shuffle(&mut self, ins: &Instr) -> Result<(), LiftError> {
        self.single_component(ins)?;
        let s1 = self.field_op(ins, field::SRC1)?;
        let v = self.src(ins, &s1, 0, As::U32)?;
        let all = self.iconst(Type::I1, 1);
        let r = match ins.encoding {
            "quad_shuffle.brcst" => {
                let s2 = self.field_op(ins, field::SRC2)?;
                let idx = self.src(ins, &s2, 0, As::U32)?;
                let idx = self.resize(idx, Type::I32, false);
                let three = self.iconst(Type::I32, 3);
                let not3 = self.iconst(Type::I32, !3u32 as u64);
                let lane = self.ins(InstKind::Builtin(Builtin::LaneId), &[]);
                let quad = self.ins(InstKind::IBinary(IBinOp::And), &[lane, not3]);
                let idx = self.ins(InstKind::IBinary(IBinOp::And), &[idx, three]);
                let src = self.ins(InstKind::IBinary(IBinOp::Or), &[quad, idx]);
                self.ins(InstKind::ReadLane, &[all, v, src])
            }
            name => {
                let x = match name {
                    "quad_shuffle.horiz" => 1,
                    "quad_shuffle.vert" => 2,
                    _ => 3,
                };
                let x = self.iconst(Type::I32, x);
                self.ins(InstKind::Shuffle(ShuffleKind::Xor), &[all, v, x])
            }
        };
        let d = self.field_op(ins, field::DST)?;
        self.dst(ins, &d, 0, r)
    }

    /// `brcst.active.wN dst, v`: in each cluster of N lanes, the upper N/2 lanes
    /// take `v` from the highest executing lane of the lower N/2; every other lane,
    /// and every lane of a cluster whose lower half is idle, keeps `dst`.
    pub(crate) fn lift_brcst_active(&mut self, ins: &Instr) -> Result<(), LiftError> {
        self.single_component(ins)?;
        let n = ins.get(field::CLUSTER_SIZE).unwrap_or(0);
        let n = match u64::try_from(n) {
            Ok(n @ 2..=128) if n.is_power_of_two() => n,
            _ => return Err(self.malformed(ins, format!("cluster size {n}"))),
        };
        let half = n / 2;
        let s1 = self.field_op(ins, field::SRC1)?;
        let v = self.src(ins, &s1, 0, As::U32)?;
        let d = self.field_op(ins, field::DST)?;
        let old = self.src(ins, &d, 0, As::U32)?;
        let all = self.iconst(Type::I1, 1);
        let lane = self.ins(InstKind::Builtin(Builtin::LaneId), &[]);
        let base_mask = self.iconst(Type::I32, !(n - 1) & 0xffff_ffff);
        let base = self.ins(InstKind::IBinary(IBinOp::And), &[lane, base_mask]);
        // Highest executing lane of the lower half: reading our own lane id from
        // lane t gives back t exactly when t is executing (an upper-half lane is
        // never t itself).
        let none = self.iconst(Type::I32, u32::MAX as u64);
        let mut from = none;
        for j in 0..half {
            let jc = self.iconst(Type::I32, j);
            let t = self.ins(InstKind::IBinary(IBinOp::Add), &[base, jc]);
            let seen = self.ins(InstKind::ReadLane, &[all, lane, t]);
            let active = self.ins(InstKind::Icmp(IntCC::Eq), &[seen, t]);
            from = self.ins(InstKind::Select, &[active, t, from]);
        }
        let got = self.ins(InstKind::ReadLane, &[all, v, from]);
        // The source and the destination may differ in width (`hr4.y` into a
        // full register); the destination keeps its own.
        let got = self.resize(got, self.ty(old), false);
        let low_bits = self.iconst(Type::I32, n - 1);
        let pos = self.ins(InstKind::IBinary(IBinOp::And), &[lane, low_bits]);
        let halfc = self.iconst(Type::I32, half);
        let upper = self.ins(InstKind::Icmp(IntCC::Uge), &[pos, halfc]);
        let found = self.ins(InstKind::Icmp(IntCC::Ne), &[from, none]);
        let take = self.ins(InstKind::IBinary(IBinOp::And), &[upper, found]);
        let r = self.ins(InstKind::Select, &[take, got, old]);
        self.dst(ins, &d, 0, r)
    }
}
