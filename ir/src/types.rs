//! Value types of the IR. Every value is one lane's scalar; vectors exist only as
//! several results of one memory instruction.

use std::fmt;

/// The type of an SSA value (per lane).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Type {
    /// Per-lane boolean: branch conditions, predicates, masks.
    I1,
    I8,
    I16,
    I32,
    I64,
    F16,
    F32,
    F64,
}

impl Type {
    pub const ALL: [Type; 8] = [
        Type::I1,
        Type::I8,
        Type::I16,
        Type::I32,
        Type::I64,
        Type::F16,
        Type::F32,
        Type::F64,
    ];

    /// Width in bits (1 for `i1`).
    pub fn bits(self) -> u32 {
        match self {
            Type::I1 => 1,
            Type::I8 => 8,
            Type::I16 | Type::F16 => 16,
            Type::I32 | Type::F32 => 32,
            Type::I64 | Type::F64 => 64,
        }
    }

    /// Storage size in bytes (`i1` is stored as one byte).
    pub fn bytes(self) -> u32 {
        self.bits().div_ceil(8)
    }

    pub fn is_int(self) -> bool {
        matches!(
            self,
            Type::I1 | Type::I8 | Type::I16 | Type::I32 | Type::I64
        )
    }

    pub fn is_float(self) -> bool {
        matches!(self, Type::F16 | Type::F32 | Type::F64)
    }

    /// Mask of the meaningful bits of a value of this type held in a `u64`.
    pub fn mask(self) -> u64 {
        match self.bits() {
            64 => u64::MAX,
            n => (1u64 << n) - 1,
        }
    }

    /// The integer type of the same width (`f32` -> `i32`); ints map to themselves.
    pub fn as_int(self) -> Type {
        match self {
            Type::F16 => Type::I16,
            Type::F32 => Type::I32,
            Type::F64 => Type::I64,
            t => t,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Type::I1 => "i1",
            Type::I8 => "i8",
            Type::I16 => "i16",
            Type::I32 => "i32",
            Type::I64 => "i64",
            Type::F16 => "f16",
            Type::F32 => "f32",
            Type::F64 => "f64",
        }
    }

    pub fn from_name(s: &str) -> Option<Type> {
        Type::ALL.into_iter().find(|t| t.name() == s)
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Float formats that conversions understand. Formats without an IR type of their own
/// travel as raw bits in an integer value: bf16 in `i16`, fp8 in `i8`, fp4 in the low
/// nibble of an `i8` (high nibble zero).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum FloatFormat {
    F16,
    Bf16,
    F32,
    F64,
    /// OCP fp8 e4m3 ("fn": no infinities, one NaN pattern per sign, max 448).
    E4m3,
    /// OCP fp8 e5m2 (IEEE-like, max 57344).
    E5m2,
    /// OCP fp4 e2m1 (no inf/NaN, max 6).
    E2m1,
}

impl FloatFormat {
    pub const ALL: [FloatFormat; 7] = [
        FloatFormat::F16,
        FloatFormat::Bf16,
        FloatFormat::F32,
        FloatFormat::F64,
        FloatFormat::E4m3,
        FloatFormat::E5m2,
        FloatFormat::E2m1,
    ];

    /// The IR type that carries a value of this format.
    pub fn storage(self) -> Type {
        match self {
            FloatFormat::F16 => Type::F16,
            FloatFormat::Bf16 => Type::I16,
            FloatFormat::F32 => Type::F32,
            FloatFormat::F64 => Type::F64,
            FloatFormat::E4m3 | FloatFormat::E5m2 | FloatFormat::E2m1 => Type::I8,
        }
    }

    /// The format of an IR float type.
    pub fn of_type(ty: Type) -> Option<FloatFormat> {
        match ty {
            Type::F16 => Some(FloatFormat::F16),
            Type::F32 => Some(FloatFormat::F32),
            Type::F64 => Some(FloatFormat::F64),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FloatFormat::F16 => "f16",
            FloatFormat::Bf16 => "bf16",
            FloatFormat::F32 => "f32",
            FloatFormat::F64 => "f64",
            FloatFormat::E4m3 => "e4m3",
            FloatFormat::E5m2 => "e5m2",
            FloatFormat::E2m1 => "e2m1",
        }
    }

    pub fn from_name(s: &str) -> Option<FloatFormat> {
        FloatFormat::ALL.into_iter().find(|f| f.name() == s)
    }
}

impl fmt::Display for FloatFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
