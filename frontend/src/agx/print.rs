//! Mesa AGX2 syntax printer (the text of Mesa's `src/asahi/isa` disassembler, with
//! single spaces): mnemonic, then destinations, sources, immediates and modifiers in
//! XML order. Absent sources, default enum values and zero flags print nothing.

use std::fmt::{self, Write};

use super::instr::{Hint, Instr, Operand};
use super::minifloat;
use super::spec::{ModKind, OperandKind};

impl fmt::Display for Instr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let spec = self.opcode.spec();
        let mut tokens: Vec<String> = Vec::new();
        for d in &self.dests {
            tokens.push(if d.is_present() {
                operand_text(d)
            } else {
                "_".to_string()
            });
        }
        tokens.extend(
            self.srcs
                .iter()
                .filter(|s| s.is_present())
                .map(operand_text),
        );
        for (imm_spec, &(_, v)) in spec.imms.iter().zip(&self.imms) {
            tokens.push(if imm_spec.signed {
                (v as i32).to_string()
            } else {
                (v as u32).to_string()
            });
        }
        for (mod_spec, &(_, v)) in spec.mods.iter().zip(&self.mods) {
            match mod_spec.kind {
                ModKind::Length => {}
                ModKind::Flag(text) => {
                    if v != 0 {
                        tokens.push(text.to_string());
                    }
                }
                ModKind::Enum(kind) => {
                    // Decode rejects undefined values; print them raw if built by hand.
                    match kind.display(v) {
                        Some("") => {}
                        Some(text) => tokens.push(text.to_string()),
                        None => tokens.push(format!("<{}:{v}>", kind.name())),
                    }
                }
            }
        }
        f.write_str(spec.display)?;
        for (i, t) in tokens.iter().enumerate() {
            f.write_str(if i == 0 { " " } else { ", " })?;
            f.write_str(t)?;
        }
        Ok(())
    }
}

/// Text of one present operand, e.g. `$r0_r1.sx`, `du54`, `0.5`, `cf3`.
pub(crate) fn operand_text(op: &Operand) -> String {
    let mut s = String::new();
    match op.hint {
        Hint::Discard => s.push('^'),
        Hint::Cache => s.push('$'),
        Hint::None => {}
    }
    match op.kind {
        OperandKind::None => s.push('_'),
        OperandKind::Imm => {
            let _ = write!(s, "{}", op.value);
        }
        OperandKind::FImm => s.push_str(&minifloat::format(op.value as u8)),
        OperandKind::Cf => {
            let _ = write!(s, "cf{}", op.value);
        }
        OperandKind::Ts => {
            let _ = write!(s, "ts{}", op.value);
        }
        OperandKind::Ss => {
            let _ = write!(s, "ss{}", op.value);
        }
        OperandKind::Reg | OperandKind::Uniform => {
            let base = if op.kind == OperandKind::Reg {
                "r"
            } else {
                "u"
            };
            let step = u32::from(op.size / 16);
            for i in 0..u32::from(op.count) {
                if i > 0 {
                    s.push('_');
                }
                let reg = (op.value as u32).wrapping_add(i * step);
                if op.size == 64 {
                    s.push('d');
                }
                let _ = write!(s, "{base}{}", reg >> 1);
                if op.size == 16 {
                    s.push(if reg & 1 == 1 { 'h' } else { 'l' });
                }
            }
        }
    }
    if op.abs {
        s.push_str(".abs");
    }
    if op.neg {
        s.push_str(".neg");
    }
    if op.sx {
        s.push_str(".sx");
    }
    s
}
