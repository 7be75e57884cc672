//! The decoded instruction: a typed view of every AGX2.xml field, meant for the lifter.

use super::spec::{Encoding, ModKind, OperandKind};
use super::tables::{ImmField, ModField, Opcode};

/// Register-cache hint carried by a register operand (`$` = cache, `^` = discard).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Hint {
    /// Plain access.
    #[default]
    None,
    /// `$`: keep the value in the register cache.
    Cache,
    /// `^`: last use; the register need not be written back (later reads undefined).
    Discard,
}

/// One source or destination operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Operand {
    /// The XML encoding the field was read with (alu, float, memory, membase, ...).
    pub encoding: Encoding,
    /// What the field holds.
    pub kind: OperandKind,
    /// Registers/uniforms: 16-bit half index of the first register (32/64-bit registers
    /// have an even index; `r3` is 6, `r3h` is 7). Immediates: the value (sign-extended
    /// for signed fields). Float immediates: raw 8-bit minifloat. cf/ts/ss: the index.
    pub value: i32,
    /// Register width in bits: 16, 32 or 64.
    pub size: u8,
    /// Number of consecutive registers (memory and vector operands), at least 1.
    pub count: u8,
    /// Register-cache hint.
    pub hint: Hint,
    /// Float source modifiers (`abs` is applied before `neg`).
    pub abs: bool,
    pub neg: bool,
    /// Integer source: sign-extend from its size (Mesa `.sx`).
    pub sx: bool,
}

impl Operand {
    /// Whether the operand is present.
    pub fn is_present(&self) -> bool {
        self.kind != OperandKind::None
    }

    /// For a 16-bit register/uniform: the 32-bit register number and whether it is the
    /// high half. For wider registers: the (first) register number and `false`.
    pub fn reg_and_half(&self) -> (u32, bool) {
        let v = self.value as u32;
        (v >> 1, self.size == 16 && v & 1 == 1)
    }

    /// Float immediate value (8-bit minifloat), if this is one.
    pub fn float_imm(&self) -> Option<f32> {
        (self.kind == OperandKind::FImm).then(|| super::minifloat::decode(self.value as u8))
    }
}

/// A decoded instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instr {
    /// Which AGX2.xml instruction matched.
    pub opcode: Opcode,
    /// Address of the first byte.
    pub pc: u64,
    /// Length in bytes (2..=12).
    pub len: usize,
    /// The instruction bits (little-endian; bytes past `len` are zero).
    pub raw: u128,
    /// Destinations in XML order (absent ones have kind `None`).
    pub dests: Vec<Operand>,
    /// Sources in XML order (absent ones have kind `None`).
    pub srcs: Vec<Operand>,
    /// Immediate fields in XML order (signed fields sign-extended).
    pub imms: Vec<(ImmField, i64)>,
    /// Modifier fields in XML order, raw values (including `length`, the L bit).
    pub mods: Vec<(ModField, u32)>,
}

/// A comparison condition (`icond` or `fcond` code 0..=15; bit 3 = inverted).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Condition {
    /// Float compare (`fcond`) rather than integer (`icond`).
    pub float: bool,
    /// Condition code; see the AGX2.xml `icond`/`fcond` enums.
    pub code: u8,
}

impl Instr {
    /// Mesa mnemonic (`csel`, `load`, `mov`, ...).
    pub fn mnemonic(&self) -> &'static str {
        self.opcode.spec().display
    }

    /// Raw value of a modifier field, if the instruction has it.
    pub fn modifier(&self, field: ModField) -> Option<u32> {
        self.mods.iter().find(|(f, _)| *f == field).map(|&(_, v)| v)
    }

    /// Mesa's name for an enumerated modifier's value (`"xyzw"`, `"i32"`, `"fgtn"`;
    /// `""` for a default value). `None` if absent or not an enumeration.
    pub fn modifier_name(&self, field: ModField) -> Option<&'static str> {
        let spec = self.opcode.spec();
        let (m, &(_, v)) = spec
            .mods
            .iter()
            .zip(&self.mods)
            .find(|(m, _)| m.field == field)?;
        match m.kind {
            ModKind::Enum(kind) => kind.display(v),
            ModKind::Flag(_) | ModKind::Length => None,
        }
    }

    /// Value of an immediate field, if the instruction has it.
    pub fn imm(&self, field: ImmField) -> Option<i64> {
        self.imms.iter().find(|(f, _)| *f == field).map(|&(_, v)| v)
    }

    /// Absolute target of a direct branch or call (offset is relative to this
    /// instruction's first byte).
    pub fn branch_target(&self) -> Option<u64> {
        match self.opcode {
            Opcode::JmpAny | Opcode::JmpNone | Opcode::Call => self
                .imm(ImmField::Offset)
                .map(|off| self.pc.wrapping_add(off as u64)),
            _ => None,
        }
    }

    /// Compare condition of csel, ballots and the exec-mask control-flow instructions.
    pub fn condition(&self) -> Option<Condition> {
        let float = matches!(
            self.opcode,
            Opcode::Fcsel
                | Opcode::FcmpBallot
                | Opcode::IfFcmp
                | Opcode::ElseFcmp
                | Opcode::WhileFcmp
        );
        let code = self
            .modifier(ModField::Condition)
            .or_else(|| self.modifier(ModField::Cond))?;
        Some(Condition {
            float,
            code: code as u8,
        })
    }

    /// Whether the long form (L bit) was used.
    pub fn is_long(&self) -> bool {
        let spec = self.opcode.spec();
        spec.short_len != spec.long_len && self.len == usize::from(spec.long_len)
    }
}
