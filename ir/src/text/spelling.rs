//! How one instruction kind is spelled: its opcode word (`load.global.i32x2.s8`),
//! its immediate, its attributes, which argument its type suffix describes, and
//! the result types that suffix implies. Printer and parser both build on this.

use crate::float_mode::{Denorm, FloatMode, NanMode, Round};
use crate::inst::{Builtin, InstKind, MemAccess};
use crate::types::{FloatFormat, Type};

use super::names::*;

/// The argument whose type the opcode's type suffix names (`iadd.i32` names
/// argument 0, `select.i32` argument 1). The parser checks the suffix against it.
pub(crate) fn annotated_arg(kind: &InstKind) -> Option<usize> {
    use InstKind::*;
    match kind {
        IBinary(_)
        | IUnary(_)
        | Icmp(_)
        | Cast { .. }
        | BitExtract { .. }
        | BitInsert
        | FBinary { .. }
        | FUnary { .. }
        | Fma { .. }
        | Fcmp { .. }
        | Fclass { .. }
        | Special { .. }
        | IToF { .. } => Some(0),
        Select | ReadLane | ReadFirst | Shuffle(_) | Reduce(_) | Scan { .. } => Some(1),
        _ => None,
    }
}

fn with_flags(ty: Type, mode: &FloatMode) -> Vec<Type> {
    if mode.flags {
        vec![ty, Type::I32]
    } else {
        vec![ty]
    }
}

/// Result types of `kind` when its type suffix names `ann` (the type of
/// [`annotated_arg`]). For well-typed instructions this equals what
/// `InstKind::signature` returns, but it needs no argument types, so the parser
/// can type every value before resolving (possibly forward) references.
pub(crate) fn result_types(kind: &InstKind, ann: Option<Type>) -> Vec<Type> {
    use InstKind::*;
    let t = |f: fn(Type) -> Vec<Type>| ann.map(f).unwrap_or_default();
    match kind {
        Const { ty, .. } => vec![*ty],
        Builtin(_) | Fclass { .. } | FirstActive => vec![Type::I32],
        IBinary(_)
        | IUnary(_)
        | Select
        | BitExtract { .. }
        | BitInsert
        | ReadLane
        | ReadFirst
        | Shuffle(_)
        | Reduce(_)
        | Scan { .. } => t(|ty| vec![ty]),
        Icmp(_) | VoteAny | VoteAll | Elect => vec![Type::I1],
        Cast { to, .. } => vec![*to],
        FBinary { mode, .. } | FUnary { mode, .. } | Fma { mode } | Special { mode, .. } => {
            ann.map(|ty| with_flags(ty, mode)).unwrap_or_default()
        }
        Fcmp { mode, .. } => with_flags(Type::I1, mode),
        PowFixup { mode } => with_flags(Type::F32, mode),
        Fcvt { to, mode, .. } => with_flags(to.storage(), mode),
        FToI { to, mode, .. } => with_flags(*to, mode),
        IToF { to, mode, .. } => with_flags(to.storage(), mode),
        Load(a) => vec![a.ty; usize::from(a.count)],
        Atomic { ty, .. } => vec![*ty],
        Ballot => vec![Type::I64],
        Store(_) | Barrier | Fence(_) | Trap { .. } => vec![],
    }
}

fn ty_or_unknown(t: Option<Type>) -> &'static str {
    t.map_or("?", Type::name)
}

fn builtin_word(b: &Builtin) -> String {
    match b {
        Builtin::LocalId(d) => format!("local_id.{}", dim_name(*d)),
        Builtin::WorkgroupId(d) => format!("workgroup_id.{}", dim_name(*d)),
        Builtin::WorkgroupSize(d) => format!("workgroup_size.{}", dim_name(*d)),
        Builtin::NumWorkgroups(d) => format!("num_workgroups.{}", dim_name(*d)),
        Builtin::LocalIndex => "local_index".into(),
        Builtin::LaneId => "lane_id".into(),
        Builtin::WaveId => "wave_id".into(),
        Builtin::WaveSize => "wave_size".into(),
    }
}

/// `i32`, `i32x2`, `i32.s8`, `i16x4.u8`: element type, vector count (if not 1) and
/// memory width/extension (if it is not the whole unsigned value).
fn access_word(a: &MemAccess) -> String {
    let mut s = a.ty.name().to_string();
    if a.count != 1 {
        s.push_str(&format!("x{}", a.count));
    }
    if a.signed || u32::from(a.bits) != a.ty.bits() {
        s.push_str(&format!(".{}{}", if a.signed { 's' } else { 'u' }, a.bits));
    }
    s
}

/// The opcode word of `kind`; `ann` is the type of [`annotated_arg`] (`None` prints `?`).
pub(crate) fn opcode_word(kind: &InstKind, ann: Option<Type>) -> String {
    use InstKind::*;
    let t = ty_or_unknown(ann);
    match kind {
        Const { ty, .. } => format!("const.{ty}"),
        Builtin(b) => builtin_word(b),
        IBinary(op) => format!("{}.{t}", ibin_name(*op)),
        IUnary(op) => format!("{}.{t}", iun_name(*op)),
        Icmp(cc) => format!("icmp.{}.{t}", intcc_name(*cc)),
        Select => format!("select.{t}"),
        Cast { op, to } => format!("{}.{t}.{to}", cast_name(*op)),
        BitExtract { signed } => format!("{}.{t}", if *signed { "sbfe" } else { "ubfe" }),
        BitInsert => format!("bfi.{t}"),
        FBinary { op, .. } => format!("{}.{t}", fbin_name(*op)),
        FUnary { op, .. } => format!("{}.{t}", fun_name(*op)),
        Fma { .. } => format!("fma.{t}"),
        Fcmp { cc, .. } => format!("fcmp.{}.{t}", floatcc_name(*cc)),
        Fclass { .. } => format!("fclass.{t}"),
        Special { func, .. } => format!("{}.{t}", special_name(*func)),
        PowFixup { .. } => "pow_fixup".into(),
        Fcvt { from, to, .. } => format!("fcvt.{from}.{to}"),
        FToI {
            from, to, signed, ..
        } => format!("{}.{from}.{to}", if *signed { "ftos" } else { "ftou" }),
        IToF { to, signed, .. } => format!("{}.{t}.{to}", if *signed { "stof" } else { "utof" }),
        Load(a) => format!("load.{}.{}", space_name(a.space), access_word(a)),
        Store(a) => format!("store.{}.{}", space_name(a.space), access_word(a)),
        Atomic { space, op, ty } => {
            format!("atomic.{}.{}.{ty}", atomic_name(*op), space_name(*space))
        }
        Barrier => "barrier".into(),
        Fence(scope) => format!("fence.{}", scope_name(*scope)),
        Ballot => "ballot".into(),
        VoteAny => "vote_any".into(),
        VoteAll => "vote_all".into(),
        FirstActive => "first_active".into(),
        Elect => "elect".into(),
        ReadLane => format!("read_lane.{t}"),
        ReadFirst => format!("read_first.{t}"),
        Shuffle(k) => format!("shuffle.{}.{t}", shuffle_name(*k)),
        Reduce(op) => format!("reduce.{}.{t}", reduce_name(*op)),
        Scan { op, inclusive } => format!(
            "scan.{}.{}.{t}",
            if *inclusive { "incl" } else { "excl" },
            reduce_name(*op)
        ),
        Trap { .. } => "trap".into(),
    }
}

/// The immediate printed right after the opcode (constants, trap codes).
pub(crate) fn immediate(kind: &InstKind) -> Option<String> {
    match kind {
        InstKind::Const { ty, bits } => Some(const_literal(*ty, *bits)),
        InstKind::Trap { code } => Some(code.to_string()),
        _ => None,
    }
}

/// Integers in signed decimal when small (`-1`, `42`), else raw hex bits; floats
/// as the shortest decimal that reads back to the same bits (`1.5`, `-0.0`,
/// `1e-45`, `inf`), NaNs as raw hex bits to keep their payload. Bits outside the
/// type's width (malformed constants) print as raw hex.
pub(crate) fn const_literal(ty: Type, bits: u64) -> String {
    if bits & !ty.mask() != 0 {
        return format!("{bits:#x}");
    }
    match ty {
        Type::I1 => bits.to_string(),
        Type::F16 => {
            let v = half::f16::from_bits(bits as u16);
            if v.is_nan() {
                format!("{bits:#x}")
            } else {
                format!("{:?}", v.to_f32())
            }
        }
        Type::F32 => {
            let v = f32::from_bits(bits as u32);
            if v.is_nan() {
                format!("{bits:#x}")
            } else {
                format!("{v:?}")
            }
        }
        Type::F64 => {
            let v = f64::from_bits(bits);
            if v.is_nan() {
                format!("{bits:#x}")
            } else {
                format!("{v:?}")
            }
        }
        Type::I8 | Type::I16 | Type::I32 | Type::I64 => {
            let shift = 64 - ty.bits();
            let signed = ((bits << shift) as i64) >> shift;
            if (-65536..=65536).contains(&signed) {
                signed.to_string()
            } else {
                format!("{bits:#x}")
            }
        }
    }
}

fn float_mode_attrs(mode: &FloatMode, out: &mut Vec<String>) {
    let flush_in = mode.denorm_in == Denorm::FlushKeepSign;
    let flush_out = mode.denorm_out == Denorm::FlushKeepSign;
    match (flush_in, flush_out) {
        (true, true) => out.push("ftz".into()),
        (true, false) => out.push("ftz.in".into()),
        (false, true) => out.push("ftz.out".into()),
        (false, false) => {}
    }
    if mode.denorm_out == Denorm::FlushBeforeRounding {
        out.push("ftz.tiny".into());
    }
    if let NanMode::Canonical(bits) = mode.nan {
        out.push(format!("nan={bits:#x}"));
    }
    if mode.round != Round::NearestEven {
        out.push(round_name(mode.round).into());
    }
    if mode.sat {
        out.push("sat".into());
    }
    if mode.flags {
        out.push("flags".into());
    }
}

/// The non-default attributes of `kind`, in canonical order.
pub(crate) fn attributes(kind: &InstKind) -> Vec<String> {
    use InstKind::*;
    let mut out = Vec::new();
    match kind {
        FToI {
            nan_to_max, mode, ..
        } => {
            if *nan_to_max {
                out.push("nan_max".into());
            }
            float_mode_attrs(mode, &mut out);
        }
        FBinary { mode, .. }
        | FUnary { mode, .. }
        | Fma { mode }
        | Fcmp { mode, .. }
        | Fclass { mode }
        | Special { mode, .. }
        | PowFixup { mode }
        | Fcvt { mode, .. }
        | IToF { mode, .. } => float_mode_attrs(mode, &mut out),
        Load(a) | Store(a) if a.align != a.elem_bytes() => {
            out.push(format!("align {}", a.align));
        }
        _ => {}
    }
    out
}

/// Float-format names accepted after `fcvt`/`ftos`/`stof`.
pub(crate) fn float_format(s: &str) -> Option<FloatFormat> {
    FloatFormat::from_name(s)
}
