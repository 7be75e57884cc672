//! Typed view of a decoded instruction for the lifter.
//!
//! Every field mesa's isaspec defines for the matched encoding is kept (raw value,
//! by its XML name) so category-specific details (COND, TYPE, SIZE, WRMASK, SAMP,
//! BRTYPE, ...) are one lookup away, and register-like fields are converted into
//! [`Operand`]s with their modifiers.

use super::isa_decode::{self, Ctx, IsaDecodeError, Resolved, Scope, TemplatePart, sign_extend};
use super::spec::Isa;
use super::spec::{Field, Kind};
use super::tables::{DST_FIELDS, ENUMS, field};

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
    /// `c[a1.x + off]` destination of stc / ldg.k / ldc.k (offset as printed).
    ConstA1(u16),
    /// Integer immediate (already sign-extended where the field is signed); also
    /// sampler/texture indices and `c[imm]` const destinations, as printed.
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

/// Register ids of the special registers (`reg * 4 + comp`).
pub const REG_A0_X: u16 = 0xf4;
pub const REG_A1_X: u16 = 0xf5;
pub const REG_P0_X: u16 = 0xf8;

impl Operand {
    /// `(register number, component)` of a GPR operand, e.g. `r1.y` -> `(1, 1)`
    /// (for half operands the number counts half registers).
    pub fn gpr(&self) -> Option<(u16, u8)> {
        match self.kind {
            OperandKind::Gpr(id) => Some((id >> 2, (id & 3) as u8)),
            _ => None,
        }
    }
    /// A shared (per-wave uniform) register, r48.x..r55.w.
    pub fn is_shared(&self) -> bool {
        matches!(self.kind, OperandKind::Gpr(id) if (0xc0..0xe0).contains(&id))
    }
    /// One of the predicate registers p0.x..p0.w; returns the component.
    pub fn p0_comp(&self) -> Option<u8> {
        match self.kind {
            OperandKind::Gpr(id) if (REG_P0_X..REG_P0_X + 4).contains(&id) => {
                Some((id - REG_P0_X) as u8)
            }
            _ => None,
        }
    }
}

/// The name of an isaspec field. Only the generated constants of
/// [`field`](super::field) exist, so a misspelt field is a compile error
/// rather than a `None` at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FieldName(pub(crate) &'static str);

impl FieldName {
    /// The name as the XML spells it.
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

/// Raw value of a named field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldValue {
    Bool(bool),
    Int(i64),
    Uint(u64),
    Enum { value: u64, text: &'static str },
    Operand(Operand),
}

impl FieldValue {
    /// Numeric view (bools 0/1, enums their value, immediate operands their value,
    /// other operands `None`).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            FieldValue::Bool(b) => Some(i64::from(*b)),
            FieldValue::Int(i) => Some(*i),
            FieldValue::Uint(u) => Some(*u as i64),
            FieldValue::Enum { value, .. } => Some(*value as i64),
            FieldValue::Operand(o) => match o.kind {
                OperandKind::Imm(i) => Some(i),
                _ => None,
            },
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
    /// Destinations: `DST`, or `DST0`, `DST1`, ... (swz/sct write several).
    pub dsts: Vec<Operand>,
    /// Sources in encoding order: `SRC`, `SRC0`, `SRC1` .. `SRC4`; absent ones
    /// (e.g. a cat5 source the word does not use) are left out.
    pub srcs: Vec<Operand>,
    /// Every field of the encoding by its XML name (including derived fields).
    pub fields: Vec<(&'static str, FieldValue)>,
}

impl Instr {
    /// The first destination.
    pub fn dst(&self) -> Option<&Operand> {
        self.dsts.first()
    }
    pub fn field(&self, name: FieldName) -> Option<&FieldValue> {
        self.fields
            .iter()
            .find(|(n, _)| *n == name.0)
            .map(|(_, v)| v)
    }
    /// Numeric value of a field (see [`FieldValue::as_i64`]).
    pub fn get(&self, name: FieldName) -> Option<i64> {
        self.field(name).and_then(FieldValue::as_i64)
    }
    /// Branch target for cat0 branches: `pc + IMMED` (in instructions).
    pub fn branch_target(&self, pc: i64) -> Option<i64> {
        if self.cat == 0 {
            self.get(field::IMMED).map(|i| pc + i)
        } else {
            None
        }
    }
}

/// Names of every field defined anywhere in the scope's bitset chain (any case).
fn all_field_names(scope: &Scope<'_>) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::new();
    let mut b = Some(scope.bitset);
    while let Some(bi) = b {
        let bs = scope.isa.bitset(bi);
        for case in bs.cases {
            for f in case.fields {
                if f.kind != Kind::Assert && !names.contains(&f.name) {
                    names.push(f.name);
                }
            }
        }
        b = bs.parent;
    }
    names
}

/// Every field that applies to this word, resolved the way the disassembler does
/// (fields of override cases that do not apply fail to resolve and are left out).
fn resolved_fields(
    ctx: &mut Ctx,
    scope: &Scope<'_>,
) -> Result<Vec<(&'static str, FieldValue)>, IsaDecodeError> {
    let mut out = Vec::new();
    for name in all_field_names(scope) {
        let Ok(Some(r)) = isa_decode::resolve(ctx, scope, name) else {
            continue;
        };
        if let Some(v) = value_of(ctx, &r)? {
            out.push((name, v));
        }
    }
    Ok(out)
}

fn value_of(ctx: &mut Ctx, r: &Resolved<'_>) -> Result<Option<FieldValue>, IsaDecodeError> {
    let f = r.field;
    let v = r.value;
    Ok(Some(match f.kind {
        Kind::Bool | Kind::Assert => FieldValue::Bool(v != 0),
        Kind::BoolInv => FieldValue::Bool(v == 0),
        Kind::Int | Kind::Offset | Kind::Branch => {
            FieldValue::Int(sign_extend(v, isa_decode::field_width(f)))
        }
        Kind::Uint | Kind::Hex | Kind::Uoffset | Kind::Float => FieldValue::Uint(v),
        // The disassembler already rejected values it had to print; a value without
        // a name, or a sub-encoding that does not decode, in a field this word does
        // not display is reported raw / left out.
        Kind::Enum(e) => match ENUMS[usize::from(e)].display(v) {
            Some(text) => FieldValue::Enum { value: v, text },
            None => FieldValue::Uint(v),
        },
        Kind::Bitset(root) => {
            let Ok(leaf) = isa_decode::find_leaf(r.scope.isa, root, v) else {
                return Ok(None);
            };
            let sub = Scope {
                isa: r.scope.isa,
                bitset: leaf,
                val: v,
                parent: Some(r.scope),
                params: f.params,
            };
            match operand(ctx, &sub) {
                Ok(Some(o)) => FieldValue::Operand(o),
                Ok(None) | Err(_) => return Ok(None),
            }
        }
    }))
}

fn lookup(ctx: &mut Ctx, scope: &Scope<'_>, name: &str) -> Result<Option<u64>, IsaDecodeError> {
    Ok(isa_decode::resolve(ctx, scope, name)?.map(|r| r.value))
}

/// Converts a register/immediate sub-encoding into an operand; `None` when the
/// encoding prints nothing for this word (e.g. an absent cat5 source).
fn operand(ctx: &mut Ctx, scope: &Scope<'_>) -> Result<Option<Operand>, IsaDecodeError> {
    let mut text = String::new();
    isa_decode::render(ctx, scope, &mut text)?;
    if text.is_empty() {
        return Ok(None);
    }
    let name = scope.isa.name(scope.bitset);
    let tmpl = isa_decode::find_display(ctx, scope)?;
    let shown = |f: &str| tmpl.contains(&format!("{{{f}}}"));
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
    if shown("ABSNEG")
        && let Some(an) = lookup(ctx, scope, "ABSNEG")?
    {
        op.neg = an & 1 != 0;
        op.abs = an & 2 != 0;
    }
    op.repeat_inc = shown("SRC_R") && lookup(ctx, scope, "SRC_R")?.unwrap_or(0) != 0;
    op.last = shown("LAST") && lookup(ctx, scope, "LAST")?.unwrap_or(0) != 0;
    for h in ["HALF", "SRC_HALF", "DST_HALF"] {
        op.half |= shown(h) && lookup(ctx, scope, h)?.unwrap_or(0) != 0;
    }
    match name {
        "#reg-gpr" | "#dst-gpr-cat2" => op.kind = OperandKind::Gpr(scope.val as u16),
        "#reg-const" => op.kind = OperandKind::Const(scope.val as u16),
        "#reg-relative-gpr" => op.kind = OperandKind::RelGpr(sign_extend(scope.val, 10) as i16),
        "#reg-relative-const" => op.kind = OperandKind::RelConst(sign_extend(scope.val, 10) as i16),
        _ => template_operand(ctx, scope, tmpl, &text, &mut op)?,
    }
    Ok(Some(op))
}

/// Template fields that modify an operand rather than carry its value.
const MODIFIERS: &[&str] = &["ABSNEG", "SRC_R", "LAST", "HALF", "SRC_HALF", "DST_HALF"];

fn immediate_kind(name: &str, f: &Field, v: u64) -> OperandKind {
    match f.kind {
        Kind::Float => OperandKind::FloatImm {
            bits: v as u32,
            width: f.width() as u8,
        },
        Kind::Enum(_) if name == "IMMED" => OperandKind::Flut(v as u8),
        Kind::Int => OperandKind::Imm(sign_extend(v, isa_decode::field_width(f))),
        _ => OperandKind::Imm(v as i64),
    }
}

/// Reads the operand off the template mesa prints for this word: a nested register
/// encoding, `r{GPR}.{SWIZ}` / `c{GPR}.{SWIZ}`, an immediate, or a relative offset.
fn template_operand(
    ctx: &mut Ctx,
    scope: &Scope<'_>,
    tmpl: &'static str,
    text: &str,
    op: &mut Operand,
) -> Result<(), IsaDecodeError> {
    let mut prev_lit = "";
    for part in isa_decode::template_parts(tmpl) {
        let name = match part {
            TemplatePart::Literal(l) => {
                prev_lit = l;
                continue;
            }
            TemplatePart::Field(n) => n,
        };
        if MODIFIERS.contains(&name) {
            continue;
        }
        let Some(r) = isa_decode::resolve(ctx, scope, name)? else {
            continue;
        };
        if !std::ptr::eq(r.scope, scope) {
            continue; // a param of the enclosing instruction (modifier), not the payload
        }
        let f = r.field;
        let v = r.value;
        match f.kind {
            Kind::Bitset(_) => {
                if let Some(FieldValue::Operand(sub)) = value_of(ctx, &r)? {
                    op.kind = sub.kind;
                    op.half |= sub.half;
                    op.neg |= sub.neg;
                    op.abs |= sub.abs;
                    op.repeat_inc |= sub.repeat_inc;
                    op.last |= sub.last;
                    return Ok(());
                }
            }
            _ if name == "GPR" => {
                let swiz = lookup(ctx, scope, "SWIZ")?.unwrap_or(0);
                let id = (v * 4 + swiz) as u16;
                op.kind = if prev_lit.ends_with('c') {
                    OperandKind::Const(id)
                } else {
                    OperandKind::Gpr(id)
                };
                return Ok(());
            }
            _ if name == "CONST" => {
                let swiz = lookup(ctx, scope, "SWIZ")?.unwrap_or(0);
                op.kind = OperandKind::Const((v * 4 + swiz) as u16);
                return Ok(());
            }
            _ if name == "OFFSET" && prev_lit.ends_with("a1.x") => {
                op.kind = OperandKind::ConstA1(v as u16);
                return Ok(());
            }
            _ if name == "OFFSET" && prev_lit.ends_with("a0.x + ") => {
                let off = sign_extend(v, isa_decode::field_width(f)) as i16;
                op.kind = if prev_lit.ends_with("c<a0.x + ") {
                    OperandKind::RelConst(off)
                } else {
                    OperandKind::RelGpr(off)
                };
                return Ok(());
            }
            _ if prev_lit.ends_with('h') || prev_lit.ends_with("h(") => {
                // `h(imm)` / `h(flut)`: a half-precision immediate
                op.half = true;
                op.kind = immediate_kind(name, f, v);
                return Ok(());
            }
            Kind::Float => {
                op.kind = OperandKind::FloatImm {
                    bits: v as u32,
                    width: f.width() as u8,
                };
                return Ok(());
            }
            Kind::Enum(_) if name == "IMMED" => {
                op.kind = OperandKind::Flut(v as u8);
                return Ok(());
            }
            Kind::Int => {
                op.kind = OperandKind::Imm(sign_extend(v, isa_decode::field_width(f)));
                return Ok(());
            }
            Kind::Uint | Kind::Hex | Kind::Enum(_) => {
                op.kind = OperandKind::Imm(v as i64);
                return Ok(());
            }
            _ => {}
        }
    }
    if text.ends_with("r<a0.x>") {
        op.kind = OperandKind::RelGpr(0);
    } else if text.ends_with("c<a0.x>") {
        op.kind = OperandKind::RelConst(0);
    }
    Ok(())
}

/// Decode `word` into an [`Instr`]; also renders it so anything mesa could not print
/// is rejected too.
pub(crate) fn build(isa: &'static Isa, word: u64) -> Result<Instr, IsaDecodeError> {
    let text = isa_decode::render_word(isa, word)?;
    let scope = isa_decode::instruction_scope(isa, word)?;
    let mut ctx = Ctx::default();
    let leaf = isa.bitset(scope.bitset);
    let fields = resolved_fields(&mut ctx, &scope)?;
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
    // The derived NOP field exists exactly when the (nopN) override applies
    // (cat2/cat3 with REPEAT == 0 and an (r) bit set); the (r) bits are then no
    // repeat increments.
    let nop_encoded = fields.iter().any(|(k, _)| *k == "NOP");
    let repeat = get("REPEAT") as u8;
    let nop = get("NOP") as u8;
    let op_of = |n: &str| match fields.iter().find(|(k, _)| *k == n) {
        Some((_, FieldValue::Operand(o))) => Some(*o),
        _ => None,
    };
    // `{X_HALF}{OPERAND}` in the instruction's template marks that operand half.
    let tmpl = isa_decode::find_display(&mut ctx, &scope)?;
    let parts: Vec<TemplatePart> = isa_decode::template_parts(tmpl).collect();
    let half_marked = |n: &str| {
        parts.windows(2).any(|w| match (w[0], w[1]) {
            (TemplatePart::Field(h), TemplatePart::Field(f)) => {
                f == n && h.contains("HALF") && get(h) != 0
            }
            _ => false,
        })
    };
    // Fields that encode a destination although named SRC* (ldib.b's SRC1).
    let mut dst_named: Vec<&str> = vec!["DST", "DST0", "DST1", "DST2", "DST3"];
    let mut b = Some(scope.bitset);
    while let Some(bi) = b {
        let bs = isa.bitset(bi);
        dst_named.extend(
            DST_FIELDS
                .iter()
                .filter(|(n, _)| *n == bs.name)
                .map(|(_, f)| *f),
        );
        b = bs.parent;
    }
    let mut dsts = Vec::new();
    for &n in &dst_named {
        if let Some(mut d) = op_of(n) {
            d.half |= half_marked(n);
            dsts.push(d);
        }
    }
    let mut srcs = Vec::new();
    for n in ["SRC", "SRC0", "SRC1", "SRC2", "SRC3", "SRC4"] {
        if dst_named.contains(&n) {
            continue;
        }
        let Some(mut o) = op_of(n) else { continue };
        o.half |= half_marked(n);
        o.neg |= get(&format!("{n}_NEG")) != 0;
        if !nop_encoded {
            o.repeat_inc |= get(&format!("{n}_R")) != 0;
        }
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
        dsts,
        srcs,
        fields,
    })
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
