//! Bindless descriptors: which descriptor an instruction with the BINDLESS flag
//! names, and where in memory it sits.
//!
//! Facts used (sources in ../shared/spec and mesa, read for facts only):
//! * a6xx.xml `SP_CS_BINDLESS_BASE[b]`, 5 bases on A6XX: ADDR in bits 2..63,
//!   DESC_SIZE in bits 0..1, and "the descriptor size is 2 << N dwords" (the
//!   pitch between consecutive indices; 16B = 1, 64B = 3). So descriptor `i` of
//!   base `b` sits at `ADDR + i * (8 << DESC_SIZE)` bytes.
//! * Turnip (mesa src/freedreno/vulkan/tu_descriptor_set.c, `descriptor_size`,
//!   `write_ubo_descriptor`): every descriptor slot is 16 dwords "to match how
//!   the hardware interprets indices passed to sample/load/store instructions
//!   in multiples of 16 dwords"; a UBO descriptor is the 2 dwords A6XX_UBO_0
//!   (base lo) / A6XX_UBO_1 (base hi | size in vec4 << 17) at the start of its
//!   slot; texture and IBO descriptors are 16-dword A6XX_TEX_CONST.
//! * cat6 a6xx encodings (ir3-cat6.xml): BASE 1..3, MODE 6..7 (0 imm, 1 uniform,
//!   2 nonuniform), BINDLESS 8; the index is the SSBO operand (ldc: SRC2).
//! * cat5 (ir3-cat5.xml): BASE = BASE_HI * 2 | BASE_LO; DESC_MODE says where the
//!   texture index comes from (see [`Lifter::cat5_bindless_texture`]).

use crate::ir3::field;
use wavejit_ir::{AddrSpace, IBinOp, InstKind, MemAccess, Type, Value};

use super::regs::{A1, As};
use super::{LiftError, Lifter, info};
use crate::ir3::{Instr, Operand};

impl Lifter<'_> {
    /// The BASE field of a bindless instruction: one of the 5 a630 bases.
    pub(crate) fn bindless_base(&self, ins: &Instr) -> Result<u32, LiftError> {
        let b = ins.get(field::BASE).unwrap_or(0);
        if !(0..i64::from(info::BINDLESS_BASES)).contains(&b) {
            return Err(self.malformed(
                ins,
                format!("bindless base {b} (a630 has {})", info::BINDLESS_BASES),
            ));
        }
        Ok(b as u32)
    }

    /// Byte address (i64) of descriptor `idx` (i32) of bindless base `base`.
    pub(crate) fn bindless_desc_addr(&mut self, base: u32, idx: Value) -> Value {
        let off = self.cfg.uniforms.info_off + info::BINDLESS_BASE + 8 * base;
        let ia = self.iconst(Type::I32, u64::from(off));
        let reg = self.ins(
            InstKind::Load(MemAccess::scalar(AddrSpace::Uniform, Type::I64)),
            &[ia],
        );
        let addr_mask = self.iconst(Type::I64, !3);
        let addr = self.ins(InstKind::IBinary(IBinOp::And), &[reg, addr_mask]);
        let three = self.iconst(Type::I64, 3);
        let size = self.ins(InstKind::IBinary(IBinOp::And), &[reg, three]);
        // 2 << DESC_SIZE dwords = 1 << (DESC_SIZE + 3) bytes.
        let shift = self.ins(InstKind::IBinary(IBinOp::Add), &[size, three]);
        let i = self.resize(idx, Type::I64, false);
        let pitch_off = self.ins(InstKind::IBinary(IBinOp::Shl), &[i, shift]);
        self.ins(InstKind::IBinary(IBinOp::Add), &[addr, pitch_off])
    }

    /// The descriptor index (i32) of a cat6 a6xx-encoding operand (`SSBO`, or
    /// ldc's `SRC2`): the immediate (MODE imm) or the register (uniform /
    /// nonuniform).
    pub(crate) fn cat6_desc_index(
        &mut self,
        ins: &Instr,
        op: &Operand,
    ) -> Result<Value, LiftError> {
        // [MODEL] MODE uniform only promises that the index is the same in
        // every active fiber; each fiber reads its own register, which is that
        // value whenever the promise holds.
        match ins.get(field::MODE).unwrap_or(0) {
            0..=2 => {}
            _ => {
                return Err(LiftError::Undocumented {
                    name: ins.mnemonic.clone(),
                    pc: self.pc,
                    word: ins.word,
                    why: "cat6 descriptor index MODE 3 is undocumented",
                });
            }
        }
        let v = self.src(ins, op, 0, As::U32)?;
        Ok(self.resize(v, Type::I32, false))
    }

    /// Base and texture index (i32) of a bindless cat5 instruction, by DESC_MODE
    /// (ir3-cat5.xml `#cat5-s2en-bindless-desc-mode`, a6xx forms):
    /// * 1, 3 (BINDLESS_A1_UNIFORM / _NONUNIFORM), 2, 5 (BINDLESS_NONUNIFORM /
    ///   _UNIFORM): texture and sampler index in the full register pair SRC3
    ///   (mesa builds it as collect(texture, sampler): .x is the texture);
    ///   a1.x, when used, only holds the sampler base.
    /// * 6 (BINDLESS_IMM): texture index = high 4 bits of the SRC3 field.
    /// * 7 (BINDLESS_A1_IMM): texture index = a1.x bits 3..10 (gen 6; the low 3
    ///   bits are the sampler base, the SRC3 field the sampler index).
    ///
    /// Samplers play no part in the integer-coordinate fetches lifted here.
    pub(crate) fn cat5_bindless_texture(&mut self, ins: &Instr) -> Result<(u32, Value), LiftError> {
        let base = self.bindless_base(ins)?;
        let src3_bits = (ins.word >> 21) & 0xff;
        let idx = match ins.get(field::DESC_MODE).unwrap_or(-1) {
            1 | 2 | 3 | 5 => {
                let mut s3 = self.field_op(ins, field::SRC3)?;
                s3.half = false;
                let v = self.src(ins, &s3, 0, As::U32)?;
                self.resize(v, Type::I32, false)
            }
            6 => self.iconst(Type::I32, src3_bits >> 4),
            7 => {
                let a1 = self.read_full(A1);
                let a1 = self.resize(a1, Type::I32, false);
                let three = self.iconst(Type::I32, 3);
                let t = self.ins(InstKind::IBinary(IBinOp::ShrU), &[a1, three]);
                let ff = self.iconst(Type::I32, 0xff);
                self.ins(InstKind::IBinary(IBinOp::And), &[t, ff])
            }
            m => {
                return Err(self.malformed(ins, format!("DESC_MODE {m} is not a bindless mode")));
            }
        };
        Ok((base, idx))
    }
}
