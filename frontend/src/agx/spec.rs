//! Shapes of the generated AGX2.xml tables (`tables.rs`). Bit ranges are
//! `(start, size)` pairs listed low bits first, as in the XML `bit=` attribute.

pub use super::tables::Encoding;
use super::tables::{EnumKind, ImmField, ModField, Opcode};

/// A field made of one or more bit ranges, concatenated low part first.
pub(crate) type Ranges = &'static [(u8, u8)];

/// Modifier bits inside an operand encoding case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EncMod {
    Cache,
    Size32,
    Size64,
    Hint,
    Abs,
    Neg,
    Sx,
    Zx,
    Mask,
    Count,
    Lu,
}

/// What an operand field holds once an encoding case matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OperandKind {
    /// Absent operand (an encoding case without a value); printed `_` for destinations.
    None,
    /// General-purpose register; `value` is a 16-bit half index.
    Reg,
    /// Uniform register; `value` is a 16-bit half index.
    Uniform,
    /// Integer immediate.
    Imm,
    /// 8-bit float immediate (raw minifloat bits in `value`).
    FImm,
    /// Coefficient register (fragment interpolation).
    Cf,
    /// Texture state index.
    Ts,
    /// Sampler state index.
    Ss,
}

#[derive(Debug)]
pub(crate) struct CaseKind {
    pub kind: OperandKind,
    pub bits: Ranges,
    pub shift: u8,
    pub signed: bool,
}

#[derive(Debug)]
pub(crate) struct CaseSpec {
    pub exact_mask: u32,
    pub exact_value: u32,
    pub kind: Option<CaseKind>,
    pub mods: &'static [(EncMod, Ranges)],
    /// Property `size16` (informational: it does not change how Mesa prints).
    #[allow(dead_code)]
    pub size16: bool,
    pub size32: bool,
    pub size64: bool,
    /// Property `count` (0 = not given).
    pub count: u8,
}

#[derive(Debug)]
pub(crate) struct EncodingSpec {
    #[allow(dead_code)]
    pub encoding: Encoding,
    pub cases: &'static [CaseSpec],
}

#[derive(Debug)]
pub(crate) struct EnumSpec {
    #[allow(dead_code)]
    pub kind: EnumKind,
    pub values: &'static [(u32, Option<&'static str>)],
}

#[derive(Debug)]
pub(crate) struct OperandSpec {
    pub encoding: Encoding,
    pub bits: Ranges,
}

#[derive(Debug)]
pub(crate) struct ImmSpec {
    pub field: ImmField,
    pub bits: Ranges,
    pub signed: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ModKind {
    /// Printed as its display text when nonzero.
    Flag(&'static str),
    /// Printed through an enumeration (default value prints nothing).
    Enum(EnumKind),
    /// The L bit choosing the long form; never printed.
    Length,
}

#[derive(Debug)]
pub(crate) struct ModSpec {
    pub field: ModField,
    pub kind: ModKind,
    pub bits: Ranges,
}

#[derive(Debug)]
pub(crate) struct InstrSpec {
    pub opcode: Opcode,
    pub display: &'static str,
    pub length_bit: u8,
    pub short_len: u8,
    pub long_len: u8,
    pub exact_mask: u128,
    pub exact_value: u128,
    /// Every bit some field or exact pattern accounts for; others must be zero.
    pub known: u128,
    pub dests: &'static [OperandSpec],
    pub srcs: &'static [OperandSpec],
    pub imms: &'static [ImmSpec],
    pub mods: &'static [ModSpec],
}

impl InstrSpec {
    /// Length in bytes of an instruction whose bits are `raw`.
    pub fn length_of(&self, raw: u128) -> usize {
        if self.short_len != self.long_len && (raw >> self.length_bit) & 1 == 1 {
            usize::from(self.long_len)
        } else {
            usize::from(self.short_len)
        }
    }
}

impl Opcode {
    pub(crate) fn spec(self) -> &'static InstrSpec {
        &super::tables::INSTRS[self as usize]
    }
}

impl Encoding {
    pub(crate) fn spec(self) -> &'static EncodingSpec {
        &super::tables::ENCODINGS[self as usize]
    }
}

impl EnumKind {
    pub(crate) fn spec(self) -> &'static EnumSpec {
        &super::tables::ENUMS[self as usize]
    }

    /// Mesa's display text of `value`: `Some("")` for the default value (printed as
    /// nothing), `None` if the value is not defined.
    pub fn display(self, value: u32) -> Option<&'static str> {
        self.spec()
            .values
            .iter()
            .find(|(v, _)| *v == value)
            .map(|(_, d)| d.unwrap_or(""))
    }
}
