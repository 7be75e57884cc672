//! Typed view of a decoded instruction for the lifter.
//!
//! Every field mesa's isaspec defines for the matched encoding is kept (raw value,
//! by its XML name) so category-specific details (COND, TYPE, SIZE, WRMASK, SAMP,
//! BRTYPE, ...) are one lookup away, and register-like fields are converted into
//! [`Operand`]s with their modifiers.

use super::engine::{self, Ctx, EngineError, Resolved, Scope, sign_extend};
use super::spec::Kind;
use super::tables::{BITSETS, ENUMS};

/// Instruction-level flags (sync bits and modifiers printed before the mnemonic).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    pub sy: bool,
    pub ss: bool,
    pub jp: bool,
    pub ul: bool,
    pub sat: bool,
    pub ei: bool,
    pub eq: bool,
}

/// Where an operand's value lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandKind {
    /// Register id `reg*4 + comp` (0xc0..0xdf shared, 0xf4 a0.x, 0xf5 a1.x, 0xf8.. p0).
    Gpr(u16),
    /// Const file `c<idx>.<comp>` as `idx*4 + comp`.
    Const(u16),
    /// `r<a0.x + off>`.
    RelGpr(i16),
    /// `c<a0.x + off>`.
    RelConst(i16),
    /// Integer immediate (already sign-extended where the field is signed).
    Imm(i64),
    /// Float immediate: raw bits and width (16 or 32).
    FloatImm { bits: u32, width: u8 },
    /// cat2 float lookup-table index (0.0, 0.5, 1.0, 2.0, e, pi, ...).
    Flut(u8),
    /// Any other sub-encoding (e.g. cat5 sampler/texture forms): leaf name and raw bits.
    Other { encoding: &'static str, bits: u64 },
}

/// One source or destination with its modifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operand {
    pub kind: OperandKind,
    pub half: bool,
    pub neg: bool,
    pub abs: bool,
    /// `(r)`: the register index increments with each repeat.
    pub repeat_inc: bool,
    pub last: bool,
}

/// Raw value of a named field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Uint(u64),
    Enum { value: u64, text: &'static str },
    Operand(Operand),
}

impl Value {
    /// Numeric view (bools 0/1, enums their value, operands `None`).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Bool(b) => Some(i64::from(*b)),
            Value::Int(i) => Some(*i),
            Value::Uint(u) => Some(*u as i64),
            Value::Enum { value, .. } => Some(*value as i64),
            Value::Operand(_) => None,
        }
    }
}

/// A decoded a630 instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instr {
    pub word: u64,
    /// Category 0..7 (bits 61..63).
    pub cat: u8,
    /// isaspec encoding (leaf bitset) name, e.g. `add.f`, `mov-gpr`, `ldg.a`, `brac`.
    pub encoding: &'static str,
    /// Mnemonic as mesa prints it, e.g. `cmps.f.lt`, `mova`, `cov.s32s16`, `ldg.a.u32`.
    pub mnemonic: String,
    pub flags: Flags,
    /// `(rptN)`.
    pub repeat: u8,
    /// `(nopN)` (cat2/cat3 encode it in the (r) bits when repeat is 0).
    pub nop: u8,
    pub dst: Option<Operand>,
    /// SRC1, SRC2, SRC3, SRC4 in order, as present in the encoding.
    pub srcs: Vec<Operand>,
    /// Every field of the encoding by its XML name (including derived fields).
    pub fields: Vec<(&'static str, Value)>,
}

impl Instr {
    pub fn field(&self, name: &str) -> Option<&Value> {
        self.fields.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
    /// Numeric value of a field (see [`Value::as_i64`]).
    pub fn get(&self, name: &str) -> Option<i64> {
        self.field(name).and_then(Value::as_i64)
    }
    /// Branch target for cat0 branches: `pc + IMMED` (in instructions).
    pub fn branch_target(&self, pc: i64) -> Option<i64> {
        if self.cat == 0 {
            self.get("IMMED").map(|i| pc + i)
        } else {
            None
        }
    }
}

/// Names of every field visible in the scope (leaf first, first definition wins).
fn visible_fields(ctx: &mut Ctx, scope: &Scope<'_>) -> Result<Vec<&'static str>, EngineError> {
    let mut names: Vec<&'static str> = Vec::new();
    let mut b = Some(scope.bitset);
    while let Some(bi) = b {
        let bs = &BITSETS[usize::from(bi)];
        for case in bs.cases {
            let holds = match case.expr {
                None => true,
                Some(e) => engine::eval(ctx, scope, e)? != 0,
            };
            if !holds {
                continue;
            }
            for f in case.fields {
                if f.kind != Kind::Assert && !names.contains(&f.name) {
                    names.push(f.name);
                }
            }
        }
        b = bs.parent;
    }
    Ok(names)
}

fn value_of(ctx: &mut Ctx, r: &Resolved<'_>) -> Result<Value, EngineError> {
    let f = r.field;
    let v = r.value;
    Ok(match f.kind {
        Kind::Bool | Kind::Assert => Value::Bool(v != 0),
        Kind::BoolInv => Value::Bool(v == 0),
        Kind::Int | Kind::Offset | Kind::Branch => {
            Value::Int(sign_extend(v, engine::field_width(f)))
        }
        Kind::Uint | Kind::Hex | Kind::Uoffset | Kind::Float => Value::Uint(v),
        Kind::Enum(e) => {
            let en = &ENUMS[usize::from(e)];
            let text = en.display(v).ok_or(EngineError::BadEnum {
                field: f.name,
                enum_name: en.name,
                value: v,
            })?;
            Value::Enum { value: v, text }
        }
        Kind::Bitset(root) => {
            let leaf = engine::find_leaf(root, v)?;
            let sub = Scope {
                bitset: leaf,
                val: v,
                parent: Some(r.scope),
                params: f.params,
            };
            Value::Operand(operand(ctx, &sub)?)
        }
    })
}

fn lookup(ctx: &mut Ctx, scope: &Scope<'_>, name: &str) -> Result<Option<u64>, EngineError> {
    Ok(engine::resolve(ctx, scope, name)?.map(|r| r.value))
}

/// Converts a register/immediate sub-encoding into an operand.
fn operand(ctx: &mut Ctx, scope: &Scope<'_>) -> Result<Operand, EngineError> {
    let name = BITSETS[usize::from(scope.bitset)].name;
    let mut op = Operand {
        kind: OperandKind::Other {
            encoding: name,
            bits: scope.val,
        },
        half: false,
        neg: false,
        abs: false,
        repeat_inc: false,
        last: false,
    };
    if let Some(an) = lookup(ctx, scope, "ABSNEG")? {
        op.neg = an & 1 != 0;
        op.abs = an & 2 != 0;
    }
    op.repeat_inc = lookup(ctx, scope, "SRC_R")?.unwrap_or(0) != 0;
    op.last = lookup(ctx, scope, "LAST")?.unwrap_or(0) != 0;
    op.half = lookup(ctx, scope, "HALF")?.unwrap_or(0) != 0;
    op.kind = operand_kind(ctx, scope, name)?;
    Ok(op)
}

fn operand_kind(
    ctx: &mut Ctx,
    scope: &Scope<'_>,
    name: &'static str,
) -> Result<OperandKind, EngineError> {
    let reg = |v: u64| OperandKind::Gpr(v as u16);
    Ok(match name {
        "#reg-gpr" | "#dst-gpr-cat2" => reg(scope.val),
        "#reg-const" => OperandKind::Const(scope.val as u16),
        "#reg-relative-gpr" => OperandKind::RelGpr(sign_extend(scope.val, 10) as i16),
        "#reg-relative-const" => OperandKind::RelConst(sign_extend(scope.val, 10) as i16),
        n if n.contains("flut") => OperandKind::Flut((scope.val & 0x3ff) as u8),
        _ => {
            // Generic: look through the sub-encoding's own fields for a register or
            // immediate payload.
            for fname in ["SRC", "CONST", "DST", "IMMED", "OFFSET"] {
                let Some(r) = engine::resolve(ctx, scope, fname)? else {
                    continue;
                };
                if !std::ptr::eq(r.scope, scope) && r.scope.bitset != scope.bitset {
                    continue;
                }
                let f = r.field;
                return Ok(match f.kind {
                    Kind::Bitset(_) => match value_of(ctx, &r)? {
                        Value::Operand(o) => o.kind,
                        _ => OperandKind::Other {
                            encoding: name,
                            bits: scope.val,
                        },
                    },
                    Kind::Float => OperandKind::FloatImm {
                        bits: r.value as u32,
                        width: f.width() as u8,
                    },
                    Kind::Int => OperandKind::Imm(sign_extend(r.value, engine::field_width(f))),
                    _ if fname == "OFFSET" && name.contains("dst") => {
                        OperandKind::RelGpr(r.value as i16)
                    }
                    _ => OperandKind::Imm(r.value as i64),
                });
            }
            OperandKind::Other {
                encoding: name,
                bits: scope.val,
            }
        }
    })
}

/// Decode `word` into an [`Instr`]; also renders it so anything mesa could not print
/// is rejected too.
pub(crate) fn build(word: u64) -> Result<Instr, EngineError> {
    let text = engine::render_word(word)?;
    let scope = engine::instruction_scope(word)?;
    let mut ctx = Ctx::default();
    let leaf = &BITSETS[usize::from(scope.bitset)];
    let mut fields = Vec::new();
    for name in visible_fields(&mut ctx, &scope)? {
        if let Some(r) = engine::resolve(&mut ctx, &scope, name)? {
            fields.push((name, value_of(&mut ctx, &r)?));
        }
    }
    let get = |n: &str| {
        fields
            .iter()
            .find(|(k, _)| *k == n)
            .and_then(|(_, v)| v.as_i64())
            .unwrap_or(0)
    };
    let flags = Flags {
        sy: get("SY") != 0,
        ss: get("SS") != 0,
        jp: get("JP") != 0,
        ul: get("UL") != 0,
        sat: get("SAT") != 0,
        ei: get("EI") != 0,
        eq: get("EQ") != 0,
    };
    let nop_encoded = leaf_has_nop(&fields);
    let repeat = get("REPEAT") as u8;
    let nop = if nop_encoded {
        (get("SRC1_R") | (get("SRC2_R") << 1)) as u8
    } else {
        0
    };
    let op_of = |n: &str| match fields.iter().find(|(k, _)| *k == n) {
        Some((_, Value::Operand(o))) => Some(*o),
        _ => None,
    };
    let mut dst = op_of("DST");
    if let Some(d) = dst.as_mut() {
        d.half |= get("DST_HALF") != 0 || get("TYPE_HALF") != 0;
    }
    let mut srcs = Vec::new();
    for (i, n) in ["SRC1", "SRC2", "SRC3", "SRC4"].iter().enumerate() {
        if let Some(mut o) = op_of(n) {
            let neg_name = format!("SRC{}_NEG", i + 1);
            o.neg |= get(&neg_name) != 0;
            if !nop_encoded {
                o.repeat_inc |= get(&format!("SRC{}_R", i + 1)) != 0;
            }
            srcs.push(o);
        }
    }
    if srcs.is_empty()
        && let Some(o) = op_of("SRC")
    {
        srcs.push(o);
    }
    Ok(Instr {
        word,
        cat: (word >> 61) as u8,
        encoding: leaf.name,
        mnemonic: mnemonic_of(&text),
        flags,
        repeat,
        nop,
        dst,
        srcs,
        fields,
    })
}

/// cat2/cat3: the (r) bits mean (nopN) when repeat is 0.
fn leaf_has_nop(fields: &[(&'static str, Value)]) -> bool {
    let g = |n: &str| {
        fields
            .iter()
            .find(|(k, _)| *k == n)
            .and_then(|(_, v)| v.as_i64())
    };
    let (Some(r1), Some(rpt)) = (g("SRC1_R"), g("REPEAT")) else {
        return false;
    };
    let r2 = g("SRC2_R").unwrap_or(0);
    fields.iter().any(|(k, _)| *k == "FULL" || *k == "SRC3") && rpt == 0 && (r1 | r2) != 0
}

/// First word after the leading `(flag)` prefixes.
fn mnemonic_of(text: &str) -> String {
    let mut t = text;
    while let Some(rest) = t.strip_prefix('(') {
        match rest.find(')') {
            Some(i) => t = rest[i + 1..].trim_start(),
            None => break,
        }
    }
    t.split_whitespace().next().unwrap_or("").to_string()
}
