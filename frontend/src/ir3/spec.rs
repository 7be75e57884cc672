//! Types of the generated isaspec tables (`tables.rs`), mirroring mesa's isaspec model:
//! a hierarchy of bitsets, each with pattern bits, override cases and display templates.

/// How a field's bits are interpreted and printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Bool,
    BoolInv,
    Int,
    Uint,
    Hex,
    Offset,
    Uoffset,
    Branch,
    Float,
    /// Index into `ENUMS`.
    Enum(u16),
    /// Index of the root bitset the field's bits are decoded with.
    Bitset(u16),
    /// Bits that the chosen case expects to hold `assert_val` (not displayed).
    Assert,
}

#[derive(Debug)]
pub(crate) struct Field {
    pub name: &'static str,
    pub low: u8,
    pub high: u8,
    pub kind: Kind,
    pub display: Option<&'static str>,
    /// Derived fields have an expression instead of bits.
    pub expr: Option<u16>,
    /// (name in this scope, name in the sub-bitset scope)
    pub params: &'static [(&'static str, &'static str)],
    pub assert_val: u64,
}

impl Field {
    pub fn width(&self) -> u32 {
        u32::from(self.high - self.low) + 1
    }
    pub fn bit_mask(&self) -> u64 {
        let w = self.width();
        let ones = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
        ones << self.low
    }
    pub fn extract(&self, val: u64) -> u64 {
        (val & self.bit_mask()) >> self.low
    }
}

#[derive(Debug)]
pub(crate) struct Case {
    pub expr: Option<u16>,
    pub display: Option<&'static str>,
    pub fields: &'static [Field],
}

#[derive(Debug)]
pub(crate) struct Bitset {
    pub name: &'static str,
    pub size: u8,
    pub parent: Option<u16>,
    pub mask: u64,
    pub match_bits: u64,
    pub dontcare: u64,
    pub cases: &'static [Case],
}

#[derive(Debug)]
pub(crate) struct EnumDef {
    pub name: &'static str,
    pub values: &'static [(u64, &'static str)],
}

impl EnumDef {
    pub fn display(&self, v: u64) -> Option<&'static str> {
        self.values.iter().find(|(k, _)| *k == v).map(|(_, d)| *d)
    }
}

/// Why an expression could not be evaluated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExprError {
    #[error("field {0} is not defined here")]
    NoField(String),
    #[error("unknown expression {0}")]
    UnknownExpr(u16),
    #[error("division by zero")]
    DivByZero,
    #[error("{0}")]
    Nested(String),
}

/// Field lookup for the generated expression functions.
pub(crate) trait ExprEnv {
    fn field(&mut self, name: &str) -> Result<i64, ExprError>;
    fn gpu_id(&self) -> i64;
}

/// The tables of one GPU generation.
#[derive(Debug)]
pub(crate) struct Isa {
    /// Value of `ISA_GPU_ID()` in expressions.
    pub gpu_id: i64,
    pub bitsets: &'static [Bitset],
    /// (root bitset, its leaves), indices into `bitsets`.
    pub root_leaves: &'static [(u16, &'static [u16])],
    /// (bitset, field, expression): how mesa's encoder fills fields the text does
    /// not show.
    pub encode_hints: &'static [(u16, &'static str, u16)],
    pub instruction_root: u16,
}

impl Isa {
    pub fn bitset(&self, i: u16) -> &'static Bitset {
        &self.bitsets[usize::from(i)]
    }
    pub fn leaves_of(&self, root: u16) -> &'static [u16] {
        self.root_leaves
            .iter()
            .find(|(r, _)| *r == root)
            .map(|(_, l)| *l)
            .unwrap_or(&[])
    }
    pub fn name(&self, i: u16) -> &'static str {
        self.bitsets
            .get(usize::from(i))
            .map(|b| b.name)
            .unwrap_or("?")
    }
}
