//! Reads opcode words (`icmp.slt.i32`, `load.global.i32x2.s8`), immediates and
//! attributes back into an `InstKind`. The inverse of `spelling`.

use crate::float_mode::{Denorm, FloatMode, NanMode};
use crate::inst::{Builtin, InstKind, MemAccess};
use crate::types::{FloatFormat, Type};

use super::ParseError;
use super::lexer::Pos;
use super::names::*;
use super::spelling::float_format;

/// What follows the opcode word before the operands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Immediate {
    None,
    /// A constant literal of this type.
    Const(Type),
    /// A trap code.
    TrapCode,
}

/// An opcode word read into a kind (attributes still at their defaults).
pub(crate) struct Opcode {
    pub kind: InstKind,
    /// The type suffix: which argument it describes, the type, where it was written.
    pub ann: Option<(usize, Type, Pos)>,
    pub imm: Immediate,
}

/// One attribute as written: `sat`, `nan=0x7fc00000`, `align 8`.
pub(crate) struct Attr {
    pub name: String,
    pub pos: Pos,
    pub value: Option<(String, Pos)>,
}

/// Attributes that take a value (the `=` between them is optional).
pub(crate) fn takes_value(attr: &str) -> bool {
    matches!(attr, "nan" | "align")
}

/// The dot-separated parts of an opcode word with their positions.
struct Segments<'a> {
    word: &'a str,
    parts: Vec<(&'a str, Pos)>,
    next: usize,
    end: Pos,
}

impl<'a> Segments<'a> {
    fn new(word: &'a str, pos: Pos) -> Segments<'a> {
        let mut parts = Vec::new();
        let mut offset = 0;
        for part in word.split('.') {
            parts.push((part, pos.offset(offset)));
            offset += part.chars().count() + 1;
        }
        Segments {
            word,
            parts,
            next: 1,
            end: pos.offset(word.chars().count()),
        }
    }

    fn op(&self) -> &'a str {
        self.parts.first().map_or("", |p| p.0)
    }

    /// The next part, which must describe `what`.
    fn part(&mut self, what: &str) -> Result<(&'a str, Pos), ParseError> {
        match self.parts.get(self.next) {
            Some(&(s, pos)) => {
                self.next += 1;
                if s.is_empty() {
                    Err(pos.error(format!(
                        "`{}` has an empty part where {what} belongs",
                        self.word
                    )))
                } else {
                    Ok((s, pos))
                }
            }
            None => Err(self.end.error(format!(
                "`{}` is missing its {what} (e.g. `.{}`)",
                self.word,
                what_example(what)
            ))),
        }
    }

    fn lookup<T>(
        &mut self,
        what: &str,
        f: impl Fn(&str) -> Option<T>,
    ) -> Result<(T, Pos), ParseError> {
        let (s, pos) = self.part(what)?;
        f(s).map(|t| (t, pos))
            .ok_or_else(|| pos.error(format!("unknown {what} `{s}` in `{}`", self.word)))
    }

    fn ty(&mut self) -> Result<(Type, Pos), ParseError> {
        self.lookup("type", Type::from_name)
    }

    fn format(&mut self) -> Result<FloatFormat, ParseError> {
        Ok(self.lookup("float format", float_format)?.0)
    }

    fn finish(&self) -> Result<(), ParseError> {
        match self.parts.get(self.next) {
            Some(&(s, pos)) => Err(pos.error(format!("unexpected `.{s}` in `{}`", self.word))),
            None => Ok(()),
        }
    }
}

fn what_example(what: &str) -> &'static str {
    match what {
        "type" => "i32",
        "float format" => "f32",
        "dimension" => "x",
        "address space" => "global",
        "memory type" => "i32",
        "integer condition" => "slt",
        "float condition" => "lt",
        "fence scope" => "workgroup",
        "atomic operation" => "add",
        "reduction operator" => "add",
        "shuffle kind" => "xor",
        "scan kind" => "incl",
        "memory width" => "s8",
        _ => "..",
    }
}

/// `i32`, `i32x4`: element type and count.
fn parse_shape(s: &str) -> Option<(Type, u8)> {
    match s.split_once('x') {
        Some((ty, n)) => Some((Type::from_name(ty)?, n.parse().ok()?)),
        None => Some((Type::from_name(s)?, 1)),
    }
}

/// `s8`, `u16`: memory width and extension.
fn parse_extension(s: &str) -> Option<(bool, u8)> {
    let signed = match s.chars().next()? {
        's' => true,
        'u' => false,
        _ => return None,
    };
    Some((signed, s.get(1..)?.parse().ok()?))
}

fn access(seg: &mut Segments<'_>) -> Result<MemAccess, ParseError> {
    let (space, _) = seg.lookup("address space", space_parse)?;
    let ((ty, count), _) = seg.lookup("memory type", parse_shape)?;
    let mut a = MemAccess {
        space,
        ty,
        bits: ty.bits() as u8,
        count,
        signed: false,
        align: 0,
    };
    if seg.parts.get(seg.next).is_some() {
        let ((signed, bits), _) = seg.lookup("memory width", parse_extension)?;
        a.signed = signed;
        a.bits = bits;
    }
    a.align = a.elem_bytes();
    Ok(a)
}

/// Reads an opcode word at `pos`.
pub(crate) fn parse_opcode(word: &str, pos: Pos) -> Result<Opcode, ParseError> {
    use InstKind as K;
    let mut seg = Segments::new(word, pos);
    let op = seg.op();
    let mode = FloatMode::IEEE;
    let mut imm = Immediate::None;
    let mut ann = None;
    // Reads the type suffix that describes argument `index`.
    macro_rules! suffix {
        ($index:expr) => {{
            let (ty, p) = seg.ty()?;
            ann = Some(($index, ty, p));
            ty
        }};
    }
    let kind = match op {
        "const" => {
            let (ty, _) = seg.ty()?;
            imm = Immediate::Const(ty);
            K::Const { ty, bits: 0 }
        }
        "local_id" | "workgroup_id" | "workgroup_size" | "num_workgroups" => {
            let (d, _) = seg.lookup("dimension", dim_parse)?;
            K::Builtin(match op {
                "local_id" => Builtin::LocalId(d),
                "workgroup_id" => Builtin::WorkgroupId(d),
                "workgroup_size" => Builtin::WorkgroupSize(d),
                _ => Builtin::NumWorkgroups(d),
            })
        }
        "local_index" => K::Builtin(Builtin::LocalIndex),
        "lane_id" => K::Builtin(Builtin::LaneId),
        "wave_id" => K::Builtin(Builtin::WaveId),
        "wave_size" => K::Builtin(Builtin::WaveSize),
        "icmp" => {
            let (cc, _) = seg.lookup("integer condition", intcc_parse)?;
            suffix!(0);
            K::Icmp(cc)
        }
        "fcmp" => {
            let (cc, _) = seg.lookup("float condition", floatcc_parse)?;
            suffix!(0);
            K::Fcmp { cc, mode }
        }
        "select" => {
            suffix!(1);
            K::Select
        }
        "ubfe" | "sbfe" => {
            suffix!(0);
            K::BitExtract {
                signed: op == "sbfe",
            }
        }
        "bfi" => {
            suffix!(0);
            K::BitInsert
        }
        "fma" => {
            suffix!(0);
            K::Fma { mode }
        }
        "fclass" => {
            suffix!(0);
            K::Fclass { mode }
        }
        "pow_fixup" => K::PowFixup { mode },
        "fcvt" => {
            let from = seg.format()?;
            let to = seg.format()?;
            K::Fcvt { from, to, mode }
        }
        "ftos" | "ftou" => {
            let from = seg.format()?;
            let (to, _) = seg.ty()?;
            K::FToI {
                from,
                to,
                signed: op == "ftos",
                nan_to_max: false,
                mode,
            }
        }
        "stof" | "utof" => {
            suffix!(0);
            let to = seg.format()?;
            K::IToF {
                to,
                signed: op == "stof",
                mode,
            }
        }
        "load" => K::Load(access(&mut seg)?),
        "store" => K::Store(access(&mut seg)?),
        "atomic" => {
            let (op, _) = seg.lookup("atomic operation", atomic_parse)?;
            let (space, _) = seg.lookup("address space", space_parse)?;
            let (ty, _) = seg.ty()?;
            K::Atomic { space, op, ty }
        }
        "barrier" => K::Barrier,
        "fence" => K::Fence(seg.lookup("fence scope", scope_parse)?.0),
        "ballot" => K::Ballot,
        "vote_any" => K::VoteAny,
        "vote_all" => K::VoteAll,
        "first_active" => K::FirstActive,
        "elect" => K::Elect,
        "read_lane" => {
            suffix!(1);
            K::ReadLane
        }
        "read_first" => {
            suffix!(1);
            K::ReadFirst
        }
        "shuffle" => {
            let (k, _) = seg.lookup("shuffle kind", shuffle_parse)?;
            suffix!(1);
            K::Shuffle(k)
        }
        "reduce" => {
            let (r, _) = seg.lookup("reduction operator", reduce_parse)?;
            suffix!(1);
            K::Reduce(r)
        }
        "scan" => {
            let (inclusive, _) = seg.lookup("scan kind", |s| match s {
                "incl" => Some(true),
                "excl" => Some(false),
                _ => None,
            })?;
            let (r, _) = seg.lookup("reduction operator", reduce_parse)?;
            suffix!(1);
            K::Scan { op: r, inclusive }
        }
        "trap" => {
            imm = Immediate::TrapCode;
            K::Trap { code: 0 }
        }
        _ => {
            if let Some(o) = ibin_parse(op) {
                suffix!(0);
                K::IBinary(o)
            } else if let Some(o) = iun_parse(op) {
                suffix!(0);
                K::IUnary(o)
            } else if let Some(o) = cast_parse(op) {
                suffix!(0);
                let (to, _) = seg.ty()?;
                K::Cast { op: o, to }
            } else if let Some(o) = fbin_parse(op) {
                suffix!(0);
                K::FBinary { op: o, mode }
            } else if let Some(o) = fun_parse(op) {
                suffix!(0);
                K::FUnary { op: o, mode }
            } else if let Some(func) = special_parse(op) {
                suffix!(0);
                K::Special { func, mode }
            } else {
                return Err(pos.error(format!("unknown opcode `{op}`")));
            }
        }
    };
    seg.finish()?;
    Ok(Opcode { kind, ann, imm })
}

/// Parses `123` or `0x7b` (no sign).
pub(crate) fn parse_u64(s: &str) -> Option<u64> {
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        if hex.is_empty() || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        u64::from_str_radix(hex, 16).ok()
    } else if !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()) {
        s.parse().ok()
    } else {
        None
    }
}

/// Reads a constant literal of type `ty` into raw bits (see `spelling::const_literal`).
pub(crate) fn parse_const(ty: Type, s: &str) -> Result<u64, String> {
    let raw_hex = s.starts_with("0x") || s.starts_with("0X");
    if ty.is_float() && !raw_hex {
        let bits = match ty {
            Type::F16 => s
                .parse::<f64>()
                .ok()
                .map(|v| u64::from(half::f16::from_f64(v).to_bits())),
            Type::F32 => s.parse::<f32>().ok().map(|v| u64::from(v.to_bits())),
            _ => s.parse::<f64>().ok().map(f64::to_bits),
        };
        return bits.ok_or_else(|| format!("`{s}` is not a {ty} literal"));
    }
    let not_int = || format!("`{s}` is not a {ty} literal");
    let too_big = || format!("constant `{s}` does not fit {ty}");
    if let Some(magnitude) = s.strip_prefix('-') {
        if ty.is_float() {
            return Err(not_int());
        }
        let m = parse_u64(magnitude).ok_or_else(not_int)?;
        if m > 1u64 << (ty.bits() - 1) {
            return Err(too_big());
        }
        return Ok(m.wrapping_neg() & ty.mask());
    }
    let v = parse_u64(s).ok_or_else(not_int)?;
    if v & !ty.mask() != 0 {
        return Err(too_big());
    }
    Ok(v)
}

/// Which float-mode field an attribute sets, for conflict messages.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Field {
    DenormIn,
    DenormOut,
    Nan,
    Round,
    Sat,
    Flags,
    NanToMax,
    Align,
}

/// Applies the written attributes to `kind`; `opcode` names it in messages.
pub(crate) fn apply_attributes(
    kind: &mut InstKind,
    attrs: &[Attr],
    opcode: &str,
) -> Result<(), ParseError> {
    let mut set: Vec<(Field, &str)> = Vec::new();
    let mut claim = |field: Field, attr: &Attr| -> Result<(), ParseError> {
        if let Some((_, earlier)) = set.iter().find(|(f, _)| *f == field) {
            return Err(attr.pos.error(format!(
                "attribute `{}` conflicts with `{earlier}` given before",
                attr.name
            )));
        }
        set.push((field, attr_name_static(field, &attr.name)));
        Ok(())
    };
    for attr in attrs {
        let no_value = |attr: &Attr| match &attr.value {
            Some((_, p)) => Err(p.error(format!("attribute `{}` takes no value", attr.name))),
            None => Ok(()),
        };
        let number = |attr: &Attr| -> Result<u64, ParseError> {
            match &attr.value {
                Some((s, p)) => {
                    parse_u64(s).ok_or_else(|| p.error(format!("`{s}` is not a number")))
                }
                None => Err(attr.pos.error(format!(
                    "attribute `{}` needs a value, e.g. `{}`",
                    attr.name,
                    if attr.name == "nan" {
                        "nan=0x7fc00000"
                    } else {
                        "align 4"
                    }
                ))),
            }
        };
        let unknown = || {
            attr.pos
                .error(format!("unknown attribute `{}` for `{opcode}`", attr.name))
        };
        match kind {
            InstKind::Load(a) | InstKind::Store(a) => {
                if attr.name != "align" {
                    return Err(unknown());
                }
                claim(Field::Align, attr)?;
                let n = number(attr)?;
                a.align = u32::try_from(n).map_err(|_| {
                    attr.pos
                        .error(format!("alignment {n} does not fit 32 bits"))
                })?;
            }
            InstKind::FToI {
                nan_to_max, mode, ..
            } if attr.name == "nan_max" => {
                let _ = mode;
                no_value(attr)?;
                claim(Field::NanToMax, attr)?;
                *nan_to_max = true;
            }
            _ => {
                let Some(mode) = float_mode_mut(kind) else {
                    return Err(attr.pos.error(format!(
                        "`{opcode}` takes no attributes, found `{}`",
                        attr.name
                    )));
                };
                match attr.name.as_str() {
                    "ftz" | "ftz.in" | "ftz.out" => {
                        no_value(attr)?;
                        if attr.name != "ftz.out" {
                            claim(Field::DenormIn, attr)?;
                            mode.denorm_in = Denorm::FlushKeepSign;
                        }
                        if attr.name != "ftz.in" {
                            claim(Field::DenormOut, attr)?;
                            mode.denorm_out = Denorm::FlushKeepSign;
                        }
                    }
                    "ftz.tiny" => {
                        no_value(attr)?;
                        claim(Field::DenormOut, attr)?;
                        mode.denorm_out = Denorm::FlushBeforeRounding;
                    }
                    "nan" => {
                        claim(Field::Nan, attr)?;
                        mode.nan = NanMode::Canonical(number(attr)?);
                    }
                    "sat" => {
                        no_value(attr)?;
                        claim(Field::Sat, attr)?;
                        mode.sat = true;
                    }
                    "flags" => {
                        no_value(attr)?;
                        claim(Field::Flags, attr)?;
                        mode.flags = true;
                    }
                    name => match round_parse(name) {
                        Some(r) => {
                            no_value(attr)?;
                            claim(Field::Round, attr)?;
                            mode.round = r;
                        }
                        None => return Err(unknown()),
                    },
                }
            }
        }
    }
    Ok(())
}

/// A `'static` spelling of the attribute that set `field` (for messages).
fn attr_name_static(field: Field, written: &str) -> &'static str {
    match (field, written) {
        (Field::DenormIn | Field::DenormOut, "ftz") => "ftz",
        (Field::DenormIn, _) => "ftz.in",
        (Field::DenormOut, "ftz.tiny") => "ftz.tiny",
        (Field::DenormOut, _) => "ftz.out",
        (Field::Nan, _) => "nan",
        (Field::Round, w) => round_parse(w).map_or("rounding", round_name),
        (Field::Sat, _) => "sat",
        (Field::Flags, _) => "flags",
        (Field::NanToMax, _) => "nan_max",
        (Field::Align, _) => "align",
    }
}

fn float_mode_mut(kind: &mut InstKind) -> Option<&mut FloatMode> {
    use InstKind::*;
    match kind {
        FBinary { mode, .. }
        | FUnary { mode, .. }
        | Fma { mode }
        | Fcmp { mode, .. }
        | Fclass { mode }
        | Special { mode, .. }
        | PowFixup { mode }
        | Fcvt { mode, .. }
        | FToI { mode, .. }
        | IToF { mode, .. } => Some(mode),
        _ => None,
    }
}
