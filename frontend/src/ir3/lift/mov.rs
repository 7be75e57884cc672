//! cat1: mov / cov (every type pair and rounding mode), mova / mova1, swz / gat /
//! sct and movmsk.

use crate::ir3::field;
use wavejit_ir::{FloatFormat, InstKind, Round, Type, Value};

use super::regs::{A0, A1, As};
use super::{LiftError, Lifter, a630_mode};
use crate::ir3::{Instr, Operand};

/// A cat1 type: the #type enum (0 f16, 1 f32, 2 u16, 3 u32, 4 s16, 5 s32, 6 u8,
/// 7 u8_32 / s8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct CatType {
    float: bool,
    signed: bool,
    bits: u32,
}

fn cat_type(t: i64) -> Option<CatType> {
    let (float, signed, bits) = match t {
        0 => (true, true, 16),
        1 => (true, true, 32),
        2 => (false, false, 16),
        3 => (false, false, 32),
        4 => (false, true, 16),
        5 => (false, true, 32),
        // 8-bit cov sources sign-extend: mesa converts int8 with `cov.u8s16` and
        // zero-extends uint8 with `and.b x, 0xff` because cov cannot (inferred
        // from mesa's lowering; tinygrad's int8 -> float relies on it).
        6 | 7 => (false, true, 8),
        _ => return None,
    };
    Some(CatType {
        float,
        signed,
        bits,
    })
}

fn round_of(r: i64) -> Round {
    match r {
        1 => Round::NearestEven,
        2 => Round::Up,
        3 => Round::Down,
        // ROUND = 0 is mesa's ROUND_ZERO.
        _ => Round::TowardZero,
    }
}

fn ity(bits: u32) -> Type {
    match bits {
        8 => Type::I8,
        16 => Type::I16,
        _ => Type::I32,
    }
}

impl Lifter<'_> {
    pub(crate) fn lift_cat1(&mut self, ins: &Instr, i: u32) -> Result<(), LiftError> {
        match ins.encoding {
            "swz" | "gat" | "sct" => return self.lift_parallel_move(ins, i),
            "movmsk" => return self.lift_movmsk(ins),
            _ => {}
        }
        let (Some(st), Some(dt)) = (
            cat_type(ins.get(field::SRC_TYPE).unwrap_or(-1)),
            cat_type(ins.get(field::DST_TYPE).unwrap_or(-1)),
        ) else {
            return Err(self.malformed(ins, "unknown type".into()));
        };
        let src = *ins
            .srcs
            .first()
            .ok_or_else(|| self.malformed(ins, "no source".into()))?;
        let dst = *ins
            .dsts
            .first()
            .ok_or_else(|| self.malformed(ins, "no destination".into()))?;
        let round = round_of(ins.get(field::ROUND).unwrap_or(0));
        let v = self.cov_value(ins, &src, i, st, dt, round)?;
        self.write_cov(ins, &dst, i, v)
    }

    /// Reads a cat1 source of type `st` and converts it to `dt`; the result is
    /// the destination register's raw bits.
    fn cov_value(
        &mut self,
        ins: &Instr,
        src: &Operand,
        i: u32,
        st: CatType,
        dt: CatType,
        round: Round,
    ) -> Result<Value, LiftError> {
        let raw = self.src(
            ins,
            src,
            i,
            As {
                half: src.half,
                float: st.float,
            },
        )?;
        let dst_bits = if dt.bits == 32 { 32 } else { 16 };
        if st == dt {
            // A plain copy (no float rules).
            return Ok(self.resize(raw, ity(dst_bits), false));
        }
        Ok(match (st.float, dt.float) {
            (true, true) => {
                let (from, to) = if st.bits == 32 {
                    (FloatFormat::F32, FloatFormat::F16)
                } else {
                    (FloatFormat::F16, FloatFormat::F32)
                };
                let fin = self.resize(
                    raw,
                    if st.bits == 32 { Type::F32 } else { Type::F16 },
                    false,
                );
                let mut mode = a630_mode(dt.bits == 16, false);
                mode.round = round;
                let r = self.ins(InstKind::Fcvt { from, to, mode }, &[fin]);
                self.resize(r, ity(dst_bits), false)
            }
            (true, false) => {
                let from = if st.bits == 32 {
                    FloatFormat::F32
                } else {
                    FloatFormat::F16
                };
                let fin = self.resize(
                    raw,
                    if st.bits == 32 { Type::F32 } else { Type::F16 },
                    false,
                );
                let mut mode = a630_mode(st.bits == 16, false);
                mode.round = round;
                mode.nan = wavejit_ir::NanMode::Propagate;
                let r = self.ins(
                    InstKind::FToI {
                        from,
                        to: ity(dt.bits),
                        signed: dt.signed,
                        nan_to_max: false,
                        mode,
                    },
                    &[fin],
                );
                self.resize(r, ity(dst_bits), dt.signed)
            }
            (false, true) => {
                let x = self.int_source(raw, st);
                let to = if dt.bits == 32 {
                    FloatFormat::F32
                } else {
                    FloatFormat::F16
                };
                let mut mode = a630_mode(dt.bits == 16, false);
                mode.round = round;
                let r = self.ins(
                    InstKind::IToF {
                        to,
                        signed: st.signed,
                        mode,
                    },
                    &[x],
                );
                self.resize(r, ity(dst_bits), false)
            }
            (false, false) => {
                let x = self.int_source(raw, st);
                let x = if dt.bits == 8 {
                    self.resize(x, Type::I8, false)
                } else {
                    x
                };
                self.resize(x, ity(dst_bits), dt.signed && dt.bits == 8)
            }
        })
    }

    /// The integer value of a source register of type `st`, extended to 32 bits.
    fn int_source(&mut self, raw: Value, st: CatType) -> Value {
        let narrow = self.resize(raw, ity(st.bits), false);
        self.resize(narrow, Type::I32, st.signed)
    }

    fn write_cov(&mut self, ins: &Instr, dst: &Operand, i: u32, v: Value) -> Result<(), LiftError> {
        if let crate::ir3::OperandKind::Gpr(r) = dst.kind
            && (u32::from(r) == A0 || u32::from(r) == A1)
        {
            // mova / mova1 load the 16-bit address registers.
            return self.dst(ins, dst, i, v);
        }
        self.dst(ins, dst, i, v)
    }

    /// swz / gat / sct: read every source, then write every destination.
    fn lift_parallel_move(&mut self, ins: &Instr, i: u32) -> Result<(), LiftError> {
        let (Some(st), Some(dt)) = (
            cat_type(ins.get(field::SRC_TYPE).unwrap_or(-1)),
            cat_type(ins.get(field::DST_TYPE).unwrap_or(-1)),
        ) else {
            return Err(self.malformed(ins, "unknown type".into()));
        };
        let round = round_of(ins.get(field::ROUND).unwrap_or(0));
        let mut vals = Vec::new();
        let srcs = ins.srcs.clone();
        for s in &srcs {
            vals.push(self.cov_value(ins, s, i, st, dt, round)?);
        }
        let dsts: Vec<Operand> = match ins.encoding {
            // gat: four sources into dst .. dst+3.
            "gat" => {
                let d = *ins
                    .dsts
                    .first()
                    .ok_or_else(|| self.malformed(ins, "no destination".into()))?;
                (0..vals.len()).map(|k| bump(d, k as u16)).collect()
            }
            _ => ins.dsts.clone(),
        };
        let vals: Vec<Value> = if ins.encoding == "sct" {
            // sct: src .. src+3 into four destinations.
            let s = *srcs
                .first()
                .ok_or_else(|| self.malformed(ins, "no source".into()))?;
            let mut v = Vec::new();
            for k in 0..dsts.len() {
                v.push(self.cov_value(ins, &bump(s, k as u16), i, st, dt, round)?);
            }
            v
        } else {
            vals
        };
        if vals.len() != dsts.len() {
            return Err(self.malformed(
                ins,
                format!("{} sources for {} destinations", vals.len(), dsts.len()),
            ));
        }
        for (d, v) in dsts.iter().zip(vals) {
            self.dst(ins, d, i, v)?;
        }
        Ok(())
    }

    /// movmsk.wN: the wave's active-fiber mask, 32 bits per register.
    fn lift_movmsk(&mut self, ins: &Instr) -> Result<(), LiftError> {
        let d = *ins
            .dsts
            .first()
            .ok_or_else(|| self.malformed(ins, "no destination".into()))?;
        let m = self.iconst(Type::I1, 1);
        let t = self.iconst(Type::I1, 1);
        let bits = self.ins(InstKind::Ballot, &[m, t]);
        for k in 0..=u32::from(ins.repeat) {
            let v = if k < 2 {
                let sh = self.iconst(Type::I64, u64::from(k * 32));
                let s = self.ins(InstKind::IBinary(wavejit_ir::IBinOp::ShrU), &[bits, sh]);
                self.resize(s, Type::I32, false)
            } else {
                self.iconst(Type::I32, 0)
            };
            self.dst(ins, &d, k, v)?;
        }
        Ok(())
    }
}

/// The register `k` components after `op`.
fn bump(mut op: Operand, k: u16) -> Operand {
    if let crate::ir3::OperandKind::Gpr(r) = op.kind {
        op.kind = crate::ir3::OperandKind::Gpr(r + k);
    }
    op
}
