//! Table-driven decoder: finds the first AGX2.xml instruction whose exact bits match
//! (XML order puts aliases before generic forms) and reads every field.

use super::bits::{extract, from_le, sign_extend, truncate, width};
use super::error::{DecodeError, hex};
use super::instr::{Hint, Instr, Operand};
use super::spec::{EncMod, Encoding, InstrSpec, ModKind, OperandKind, OperandSpec};
use super::tables::INSTRS;

/// Finds the matching instruction spec and its length (bits past the length are
/// ignored, as the short form reads them as zero).
pub(crate) fn match_spec(raw: u128) -> Option<(&'static InstrSpec, usize, u128)> {
    INSTRS.iter().find_map(|spec| {
        let len = spec.length_of(raw);
        let masked = truncate(raw, len);
        (masked & spec.exact_mask == spec.exact_value).then_some((spec, len, masked))
    })
}

/// For input that ends early: the first instruction whose exact bits agree on the bytes
/// that are present and which is longer than them.
fn truncated_match(raw: u128, have: usize) -> Option<(&'static InstrSpec, usize)> {
    let present = truncate(u128::MAX, have);
    INSTRS.iter().find_map(|spec| {
        let len = spec.length_of(raw);
        let m = spec.exact_mask & present;
        (len > have && raw & m == spec.exact_value & m).then_some((spec, len))
    })
}

/// Decodes one instruction at the start of `bytes`, located at address `pc`.
pub fn decode(bytes: &[u8], pc: u64) -> Result<(Instr, usize), DecodeError> {
    if bytes.is_empty() {
        return Err(DecodeError::Truncated {
            pc,
            opcode: "instruction",
            need: 2,
            have: 0,
            bytes: String::new(),
        });
    }
    let shown = &bytes[..bytes.len().min(12)];
    let raw = from_le(bytes);
    let Some((spec, len, masked)) = match_spec(raw) else {
        if let Some((spec, need)) = truncated_match(raw, bytes.len()) {
            return Err(DecodeError::Truncated {
                pc,
                opcode: spec.opcode.name(),
                need,
                have: bytes.len(),
                bytes: hex(bytes),
            });
        }
        return Err(DecodeError::Unknown {
            pc,
            bytes: hex(shown),
        });
    };
    let name = spec.opcode.name();
    if len > bytes.len() {
        return Err(DecodeError::Truncated {
            pc,
            opcode: name,
            need: len,
            have: bytes.len(),
            bytes: hex(bytes),
        });
    }
    let own = &bytes[..len];
    let unknown = masked & !spec.known;
    if unknown != 0 {
        return Err(DecodeError::UnknownBits {
            pc,
            opcode: name,
            mask: unknown,
            bytes: hex(own),
        });
    }
    let field_err = |what: String| DecodeError::BadField {
        pc,
        opcode: name,
        what,
        bytes: hex(own),
    };
    let operand = |op: &OperandSpec| -> Result<Operand, DecodeError> {
        let v = extract(masked, op.bits);
        decode_operand(op, v).map_err(|reason| match reason {
            OperandError::NoCase => DecodeError::BadOperand {
                pc,
                opcode: name,
                encoding: op.encoding.name(),
                value: v,
                bytes: hex(own),
            },
            OperandError::Field(what) => {
                field_err(format!("{} operand: {what}", op.encoding.name()))
            }
        })
    };
    let dests = spec
        .dests
        .iter()
        .map(operand)
        .collect::<Result<Vec<_>, _>>()?;
    let srcs = spec
        .srcs
        .iter()
        .map(operand)
        .collect::<Result<Vec<_>, _>>()?;
    let imms = spec
        .imms
        .iter()
        .map(|imm| {
            let v = extract(masked, imm.bits);
            let value = if imm.signed {
                sign_extend(v, width(imm.bits))
            } else {
                v as i64
            };
            (imm.field, value)
        })
        .collect();
    let mut mods = Vec::with_capacity(spec.mods.len());
    for m in spec.mods {
        let v = extract(masked, m.bits) as u32;
        if let ModKind::Enum(kind) = m.kind
            && kind.display(v).is_none()
        {
            return Err(field_err(format!(
                "value {v} of {} is not a defined {}",
                m.field.name(),
                kind.name()
            )));
        }
        mods.push((m.field, v));
    }
    let instr = Instr {
        opcode: spec.opcode,
        pc,
        len,
        raw: masked,
        dests,
        srcs,
        imms,
        mods,
    };
    Ok((instr, len))
}

enum OperandError {
    NoCase,
    Field(String),
}

/// Reads an operand field `v` with the first encoding case whose exact bits match.
fn decode_operand(op: &OperandSpec, v: u64) -> Result<Operand, OperandError> {
    let v32 = v as u32;
    let case = op
        .encoding
        .spec()
        .cases
        .iter()
        .find(|c| v32 & c.exact_mask == c.exact_value)
        .ok_or(OperandError::NoCase)?;
    let vv = u128::from(v);
    let mut out = Operand {
        encoding: op.encoding,
        kind: OperandKind::None,
        value: 0,
        size: 16,
        count: 1,
        hint: Hint::None,
        abs: false,
        neg: false,
        sx: false,
    };
    let Some(kind) = &case.kind else {
        return Ok(out);
    };
    let raw = extract(vv, kind.bits) << kind.shift;
    out.kind = kind.kind;
    out.value = if kind.signed {
        sign_extend(raw, width(kind.bits) + u32::from(kind.shift)) as i32
    } else {
        raw as i32
    };
    let (mut size32, mut size64) = (case.size32, case.size64);
    let (mut cache, mut lu) = (false, false);
    let mut count = 0u32;
    for &(m, bits) in case.mods {
        let x = extract(vv, bits) as u32;
        match m {
            EncMod::Cache => cache = x != 0,
            EncMod::Lu => lu = x != 0,
            EncMod::Size32 => size32 |= x != 0,
            EncMod::Size64 => size64 |= x != 0,
            EncMod::Abs => out.abs = x != 0,
            EncMod::Neg => out.neg = x != 0,
            EncMod::Sx => out.sx = x != 0,
            EncMod::Zx => out.sx = x == 0,
            EncMod::Mask => count = x.count_ones(),
            EncMod::Count => count = if x == 0 { 4 } else { x },
            EncMod::Hint => match x {
                0 => return Err(OperandError::Field("register hint 0 (missing hint)".into())),
                2 => cache = true,
                3 => lu = true,
                _ => {}
            },
        }
    }
    if case.count != 0 {
        count = u32::from(case.count);
    }
    out.count = count.max(1) as u8;
    out.size = if size64 {
        64
    } else if size32 {
        32
    } else {
        16
    };
    out.hint = match (cache, lu) {
        (true, true) => return Err(OperandError::Field("both cache and discard set".into())),
        (true, false) => Hint::Cache,
        (false, true) => Hint::Discard,
        (false, false) => Hint::None,
    };
    if out.kind == OperandKind::Reg
        && out.size == 32
        && matches!(op.encoding, Encoding::Dalu | Encoding::Alu | Encoding::Mul)
    {
        // The M1 ignores the low bit of a 32-bit ALU register (bitrev/ffs with an odd
        // destination, applegpu test_bitrev/test_ffs [HW]; sources follow applegpu's
        // decoder [MODEL]). Mesa rejects such words; they print as the even register.
        out.value &= !1;
    }
    if matches!(out.kind, OperandKind::Reg | OperandKind::Uniform)
        && out.size > 16
        && out.value & 1 == 1
    {
        return Err(OperandError::Field(format!(
            "{}-bit register with odd half index {}",
            out.size, out.value
        )));
    }
    Ok(out)
}
