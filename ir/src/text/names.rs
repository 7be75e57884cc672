//! Spellings of every enum that appears in the text form, in both directions.
//! One table per enum so printer and parser cannot drift apart; the `match` in
//! each generated `name` function keeps the tables exhaustive, so the generated
//! `ALL` lists (used by test generators and tools) are complete too.

use crate::float_mode::Round;
use crate::inst::{
    AddrSpace, AtomicOp, CastOp, FBinOp, FUnOp, FloatCC, IBinOp, IUnOp, IntCC, ReduceOp, Scope,
    ShuffleKind, SpecialFn,
};

macro_rules! spellings {
    ($ty:ty, $name:ident, $parse:ident, { $($variant:path => $text:literal),+ $(,)? }) => {
        pub(crate) fn $name(x: $ty) -> &'static str {
            match x {
                $($variant => $text),+
            }
        }

        pub(crate) fn $parse(s: &str) -> Option<$ty> {
            match s {
                $($text => Some($variant)),+,
                _ => None,
            }
        }
    };
    ($ty:ty, $name:ident, $parse:ident, with_all, { $($variant:path => $text:literal),+ $(,)? }) => {
        spellings!($ty, $name, $parse, { $($variant => $text),+ });

        impl $ty {
            /// Every variant, in the order of the text form's table (whose
            /// exhaustive `match` keeps this list complete).
            pub const ALL: &'static [$ty] = &[$($variant),+];
        }
    };
}

spellings!(IBinOp, ibin_name, ibin_parse, with_all, {
    IBinOp::Add => "iadd",
    IBinOp::Sub => "isub",
    IBinOp::Mul => "imul",
    IBinOp::MulHiU => "umulhi",
    IBinOp::MulHiS => "smulhi",
    IBinOp::DivU => "udiv",
    IBinOp::DivS => "sdiv",
    IBinOp::RemU => "urem",
    IBinOp::RemS => "srem",
    IBinOp::And => "and",
    IBinOp::Or => "or",
    IBinOp::Xor => "xor",
    IBinOp::Shl => "shl",
    IBinOp::ShrU => "ushr",
    IBinOp::ShrS => "sshr",
    IBinOp::Rotl => "rotl",
    IBinOp::Rotr => "rotr",
    IBinOp::MinU => "umin",
    IBinOp::MinS => "smin",
    IBinOp::MaxU => "umax",
    IBinOp::MaxS => "smax",
    IBinOp::AddSatU => "uadd_sat",
    IBinOp::AddSatS => "sadd_sat",
    IBinOp::SubSatU => "usub_sat",
    IBinOp::SubSatS => "ssub_sat",
});

spellings!(IUnOp, iun_name, iun_parse, with_all, {
    IUnOp::Not => "not",
    IUnOp::Neg => "ineg",
    IUnOp::Abs => "iabs",
    IUnOp::Clz => "clz",
    IUnOp::Ctz => "ctz",
    IUnOp::Popcnt => "popcnt",
    IUnOp::Bitrev => "bitrev",
    IUnOp::Bswap => "bswap",
});

spellings!(IntCC, intcc_name, intcc_parse, with_all, {
    IntCC::Eq => "eq",
    IntCC::Ne => "ne",
    IntCC::Ult => "ult",
    IntCC::Ule => "ule",
    IntCC::Ugt => "ugt",
    IntCC::Uge => "uge",
    IntCC::Slt => "slt",
    IntCC::Sle => "sle",
    IntCC::Sgt => "sgt",
    IntCC::Sge => "sge",
});

spellings!(FloatCC, floatcc_name, floatcc_parse, with_all, {
    FloatCC::Eq => "eq",
    FloatCC::Ne => "ne",
    FloatCC::Lt => "lt",
    FloatCC::Le => "le",
    FloatCC::Gt => "gt",
    FloatCC::Ge => "ge",
    FloatCC::Ord => "ord",
    FloatCC::Uno => "uno",
    FloatCC::Ueq => "ueq",
    FloatCC::Une => "une",
    FloatCC::Ult => "ult",
    FloatCC::Ule => "ule",
    FloatCC::Ugt => "ugt",
    FloatCC::Uge => "uge",
});

spellings!(FBinOp, fbin_name, fbin_parse, with_all, {
    FBinOp::Add => "fadd",
    FBinOp::Sub => "fsub",
    FBinOp::Mul => "fmul",
    FBinOp::Div => "fdiv",
    FBinOp::Min => "fmin",
    FBinOp::Max => "fmax",
    FBinOp::Minimum => "fminimum",
    FBinOp::Maximum => "fmaximum",
    FBinOp::Copysign => "fcopysign",
});

spellings!(FUnOp, fun_name, fun_parse, with_all, {
    FUnOp::Neg => "fneg",
    FUnOp::Abs => "fabs",
    FUnOp::Sqrt => "fsqrt",
    FUnOp::Floor => "ffloor",
    FUnOp::Ceil => "fceil",
    FUnOp::Trunc => "ftrunc",
    FUnOp::Nearest => "fnearest",
});

spellings!(SpecialFn, special_name, special_parse, with_all, {
    SpecialFn::Rcp => "rcp",
    SpecialFn::Rsqrt => "rsqrt",
    SpecialFn::Exp2 => "exp2",
    SpecialFn::Log2 => "log2",
    SpecialFn::Sin => "sin",
    SpecialFn::Cos => "cos",
});

spellings!(CastOp, cast_name, cast_parse, {
    CastOp::Zext => "zext",
    CastOp::Sext => "sext",
    CastOp::Trunc => "trunc",
    CastOp::Bitcast => "bitcast",
});

spellings!(AtomicOp, atomic_name, atomic_parse, with_all, {
    AtomicOp::Add => "add",
    AtomicOp::Sub => "sub",
    AtomicOp::MinU => "umin",
    AtomicOp::MinS => "smin",
    AtomicOp::MaxU => "umax",
    AtomicOp::MaxS => "smax",
    AtomicOp::And => "and",
    AtomicOp::Or => "or",
    AtomicOp::Xor => "xor",
    AtomicOp::Xchg => "xchg",
    AtomicOp::CmpXchg => "cmpxchg",
    AtomicOp::IncWrap => "inc_wrap",
    AtomicOp::DecWrap => "dec_wrap",
});

spellings!(ReduceOp, reduce_name, reduce_parse, with_all, {
    ReduceOp::Add => "add",
    ReduceOp::Mul => "mul",
    ReduceOp::MinU => "umin",
    ReduceOp::MinS => "smin",
    ReduceOp::MaxU => "umax",
    ReduceOp::MaxS => "smax",
    ReduceOp::And => "and",
    ReduceOp::Or => "or",
    ReduceOp::Xor => "xor",
    ReduceOp::FAdd => "fadd",
    ReduceOp::FMin => "fmin",
    ReduceOp::FMax => "fmax",
});

spellings!(ShuffleKind, shuffle_name, shuffle_parse, with_all, {
    ShuffleKind::Index => "idx",
    ShuffleKind::Xor => "xor",
    ShuffleKind::Up => "up",
    ShuffleKind::Down => "down",
});

spellings!(Scope, scope_name, scope_parse, {
    Scope::Workgroup => "workgroup",
    Scope::Device => "device",
});

spellings!(AddrSpace, space_name, space_parse, {
    AddrSpace::Global => "global",
    AddrSpace::Shared => "shared",
    AddrSpace::Uniform => "uniform",
    AddrSpace::Private => "private",
});

spellings!(Round, round_name, round_parse, {
    Round::NearestEven => "rne",
    Round::TowardZero => "rtz",
    Round::Down => "rdn",
    Round::Up => "rup",
    Round::NearestAway => "rmm",
});

/// Builtin dimension spelling: x, y, z; other (invalid) dimensions as numbers so
/// that even a malformed kernel prints without loss.
pub(crate) fn dim_name(d: u8) -> String {
    match d {
        0 => "x".into(),
        1 => "y".into(),
        2 => "z".into(),
        n => n.to_string(),
    }
}

pub(crate) fn dim_parse(s: &str) -> Option<u8> {
    match s {
        "x" => Some(0),
        "y" => Some(1),
        "z" => Some(2),
        _ => s.parse().ok(),
    }
}
