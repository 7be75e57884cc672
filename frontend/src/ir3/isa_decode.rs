//! Table-driven isaspec interpreter: classifies bits against the generated bitset
//! hierarchy, resolves fields (including override cases, derived fields and params)
//! and renders display templates exactly like mesa's `isa_decode`.

// Fx hashing: a decode makes thousands of memo lookups on small keys.
use rustc_hash::FxHashMap as HashMap;
use std::fmt::Write as _;

use super::spec::{ExprEnv, ExprError, Field, Isa, Kind};
use super::tables::{ENUMS, eval_expr};

/// Failure inside the table interpreter (wrapped into `DecodeError` by the caller).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IsaDecodeError {
    #[error("no {root} encoding matches bits {val:#x}")]
    NoMatch { root: &'static str, val: u64 },
    #[error("bits {val:#x} match both {a} and {b}")]
    Ambiguous {
        a: &'static str,
        b: &'static str,
        val: u64,
    },
    #[error("field {field} has no display for value {value} in enum {enum_name}")]
    BadEnum {
        field: &'static str,
        enum_name: &'static str,
        value: u64,
    },
    #[error("{bitset} has no display template")]
    NoDisplay { bitset: &'static str },
    #[error("{bitset} references unknown field {field}")]
    NoField { bitset: &'static str, field: String },
    #[error("float field {field} has unsupported width {width}")]
    FloatWidth { field: &'static str, width: u32 },
    #[error("expression: {0}")]
    Expr(#[from] ExprError),
}

/// One level of decoding: a leaf bitset applied to some bits, with access to the
/// enclosing scope through `params`.
#[derive(Clone, Copy)]
pub(crate) struct Scope<'a> {
    pub isa: &'static Isa,
    pub bitset: u16,
    pub val: u64,
    pub parent: Option<&'a Scope<'a>>,
    pub params: &'static [(&'static str, &'static str)],
}

/// A resolved field: its definition, value and the scope it was found in.
pub(crate) struct Resolved<'a> {
    pub field: &'static Field,
    pub value: u64,
    pub scope: &'a Scope<'a>,
}

/// Evaluation state, as in mesa's decoder: results are memoized per scope, an
/// expression that is already being evaluated evaluates to 0 (breaks cycles), and
/// while evaluating an override's expression that override's own fields are visible
/// (the case whose expression is on top of the stack is assumed to hold).
#[derive(Default)]
pub(crate) struct Ctx {
    stack: Vec<u16>,
    cache: HashMap<(ScopeKey, u16), i64>,
    /// Branch-label mode (mesa's `branch_labels`): where this word sits.
    pub labels: Option<LabelCtx>,
}

/// Instruction index and program length for label mode, and the targets found.
#[derive(Default)]
pub(crate) struct LabelCtx {
    pub n: u32,
    pub num_instr: u32,
    pub targets: Vec<u32>,
}

/// (bitset, bits, params address) of a scope and each of its ancestors.
type ScopeKey = Vec<(u16, u64, usize)>;

fn scope_key(scope: &Scope<'_>) -> ScopeKey {
    let mut key = Vec::with_capacity(4);
    let mut s = Some(scope);
    while let Some(sc) = s {
        key.push((sc.bitset, sc.val, sc.params.as_ptr() as usize));
        s = sc.parent;
    }
    key
}

/// The unique leaf of `root` whose fixed bits match `val`.
pub(crate) fn find_leaf(isa: &'static Isa, root: u16, val: u64) -> Result<u16, IsaDecodeError> {
    let mut found: Option<u16> = None;
    for &leaf in isa.leaves_of(root) {
        let b = isa.bitset(leaf);
        if val & b.mask != b.match_bits {
            continue;
        }
        if let Some(prev) = found {
            return Err(IsaDecodeError::Ambiguous {
                a: isa.name(prev),
                b: b.name,
                val,
            });
        }
        found = Some(leaf);
    }
    found.ok_or(IsaDecodeError::NoMatch {
        root: isa.name(root),
        val,
    })
}

struct Env<'c, 'a> {
    ctx: &'c mut Ctx,
    scope: &'a Scope<'a>,
}

impl ExprEnv for Env<'_, '_> {
    fn field(&mut self, name: &str) -> Result<i64, ExprError> {
        match resolve(self.ctx, self.scope, name) {
            Ok(Some(r)) => Ok(r.value as i64),
            Ok(None) => Err(ExprError::NoField(name.to_string())),
            Err(IsaDecodeError::Expr(e)) => Err(e),
            Err(e) => Err(ExprError::Nested(e.to_string())),
        }
    }
    fn gpu_id(&self) -> i64 {
        self.scope.isa.gpu_id
    }
}

pub(crate) fn eval(ctx: &mut Ctx, scope: &Scope<'_>, expr: u16) -> Result<i64, IsaDecodeError> {
    let key = (scope_key(scope), expr);
    if let Some(v) = ctx.cache.get(&key) {
        return Ok(*v);
    }
    if ctx.stack.contains(&expr) {
        return Ok(0);
    }
    ctx.stack.push(expr);
    let r = eval_expr(expr, &mut Env { ctx, scope });
    ctx.stack.pop();
    let v = r?;
    ctx.cache.insert(key, v);
    Ok(v)
}

fn case_holds(ctx: &mut Ctx, scope: &Scope<'_>, expr: Option<u16>) -> Result<bool, IsaDecodeError> {
    match expr {
        None => Ok(true),
        Some(e) if ctx.stack.last() == Some(&e) => Ok(true),
        Some(e) => Ok(eval(ctx, scope, e)? != 0),
    }
}

fn find_field(
    ctx: &mut Ctx,
    scope: &Scope<'_>,
    name: &str,
) -> Result<Option<&'static Field>, IsaDecodeError> {
    let mut b = Some(scope.bitset);
    while let Some(bi) = b {
        let bs = scope.isa.bitset(bi);
        for case in bs.cases {
            if !case_holds(ctx, scope, case.expr)? {
                continue;
            }
            if let Some(f) = case
                .fields
                .iter()
                .find(|f| f.kind != Kind::Assert && f.name == name)
            {
                return Ok(Some(f));
            }
        }
        b = bs.parent;
    }
    Ok(None)
}

pub(crate) fn resolve<'a>(
    ctx: &mut Ctx,
    scope: &'a Scope<'a>,
    name: &str,
) -> Result<Option<Resolved<'a>>, IsaDecodeError> {
    if let Some(field) = find_field(ctx, scope, name)? {
        let value = match field.expr {
            Some(e) => eval(ctx, scope, e)? as u64,
            None => field.extract(scope.val),
        };
        return Ok(Some(Resolved {
            field,
            value,
            scope,
        }));
    }
    for (pname, alias) in scope.params {
        if *alias == name
            && let Some(parent) = scope.parent
        {
            return resolve(ctx, parent, pname);
        }
    }
    Ok(None)
}

/// The template of the first case (leaf first, then ancestors) whose expression holds
/// and that has a display.
pub(crate) fn find_display(
    ctx: &mut Ctx,
    scope: &Scope<'_>,
) -> Result<&'static str, IsaDecodeError> {
    let mut b = Some(scope.bitset);
    while let Some(bi) = b {
        let bs = scope.isa.bitset(bi);
        for case in bs.cases {
            if !case_holds(ctx, scope, case.expr)? {
                continue;
            }
            if let Some(d) = case.display {
                return Ok(d);
            }
        }
        b = bs.parent;
    }
    Err(IsaDecodeError::NoDisplay {
        bitset: scope.isa.name(scope.bitset),
    })
}

/// Splits a display template into literal text and `{FIELD}` references.
pub(crate) fn template_parts(t: &'static str) -> impl Iterator<Item = TemplatePart> {
    let mut rest = t;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        if let Some(inner) = rest.strip_prefix('{')
            && let Some(end) = inner.find('}')
        {
            let name = &inner[..end];
            rest = &inner[end + 1..];
            return Some(TemplatePart::Field(name));
        }
        let end = rest[1..].find('{').map(|i| i + 1).unwrap_or(rest.len());
        let lit = &rest[..end];
        rest = &rest[end..];
        Some(TemplatePart::Literal(lit))
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TemplatePart {
    Literal(&'static str),
    Field(&'static str),
}

pub(crate) fn render(
    ctx: &mut Ctx,
    scope: &Scope<'_>,
    out: &mut String,
) -> Result<(), IsaDecodeError> {
    let tmpl = find_display(ctx, scope)?;
    for part in template_parts(tmpl) {
        match part {
            TemplatePart::Literal(l) => out.push_str(l),
            TemplatePart::Field("NAME") => out.push_str(scope.isa.name(scope.bitset)),
            TemplatePart::Field(name) => render_field(ctx, scope, name, out)?,
        }
    }
    Ok(())
}

pub(crate) fn sign_extend(v: u64, width: u32) -> i64 {
    if width >= 64 {
        v as i64
    } else {
        let shift = 64 - width;
        ((v << shift) as i64) >> shift
    }
}

pub(crate) fn field_width(f: &Field) -> u32 {
    f.width()
}

pub(crate) fn render_field(
    ctx: &mut Ctx,
    scope: &Scope<'_>,
    name: &str,
    out: &mut String,
) -> Result<(), IsaDecodeError> {
    let r = resolve(ctx, scope, name)?.ok_or_else(|| IsaDecodeError::NoField {
        bitset: scope.isa.name(scope.bitset),
        field: name.to_string(),
    })?;
    let f = r.field;
    let v = r.value;
    let w = field_width(f);
    match f.kind {
        Kind::Bool | Kind::BoolInv => {
            let set = (v != 0) == (f.kind == Kind::Bool);
            match f.display {
                Some(d) if set => out.push_str(d),
                Some(_) => {}
                None => {
                    let _ = write!(out, "{}", u8::from(set));
                }
            }
        }
        Kind::Int | Kind::Branch => {
            let s = sign_extend(v, w);
            // Label mode, mesa's rule: `int offset = sext(val) + n` names a label
            // only when 0 <= offset < num_instr (its unsigned compare rejects
            // negatives); otherwise the number prints.
            let label = ctx
                .labels
                .as_mut()
                .filter(|_| f.kind == Kind::Branch)
                .and_then(|l| {
                    let offset = s.wrapping_add(i64::from(l.n)) as i32;
                    let t = u32::try_from(offset).ok().filter(|&t| t < l.num_instr)?;
                    l.targets.push(t);
                    Some(t)
                });
            let _ = match label {
                Some(t) => write!(out, "l{t}"),
                None => write!(out, "{s}"),
            };
        }
        Kind::Uint => {
            let _ = write!(out, "{v}");
        }
        Kind::Hex => {
            let _ = write!(out, "{v:x}");
        }
        Kind::Offset => {
            let s = sign_extend(v, w);
            if s != 0 {
                let _ = write!(out, "{s:+}");
            }
        }
        Kind::Uoffset => {
            if v != 0 {
                let _ = write!(out, "+{v}");
            }
        }
        Kind::Float => {
            let x = match w {
                16 => super::float::f16_to_f32(v as u16),
                32 => f32::from_bits(v as u32),
                _ => {
                    return Err(IsaDecodeError::FloatWidth {
                        field: f.name,
                        width: w,
                    });
                }
            };
            out.push_str(&super::float::c_percent_f(x));
        }
        Kind::Enum(e) => {
            let en = &ENUMS[usize::from(e)];
            let d = en.display(v).ok_or(IsaDecodeError::BadEnum {
                field: f.name,
                enum_name: en.name,
                value: v,
            })?;
            out.push_str(d);
        }
        Kind::Bitset(root) => {
            let leaf = find_leaf(scope.isa, root, v)?;
            let sub = Scope {
                isa: scope.isa,
                bitset: leaf,
                val: v,
                parent: Some(r.scope),
                params: f.params,
            };
            render(ctx, &sub, out)?;
        }
        Kind::Assert => {}
    }
    Ok(())
}

/// Top-level: classify a 64-bit instruction word.
pub(crate) fn instruction_scope(
    isa: &'static Isa,
    word: u64,
) -> Result<Scope<'static>, IsaDecodeError> {
    let leaf = find_leaf(isa, isa.instruction_root, word)?;
    Ok(Scope {
        isa,
        bitset: leaf,
        val: word,
        parent: None,
        params: &[],
    })
}

/// Render one instruction word with the mesa templates.
pub(crate) fn render_word(isa: &'static Isa, word: u64) -> Result<String, IsaDecodeError> {
    let scope = instruction_scope(isa, word)?;
    let mut out = String::new();
    render(&mut Ctx::default(), &scope, &mut out)?;
    Ok(out)
}

/// [`render_word`] in label mode for instruction `labels.n`; branch targets it
/// names are appended to `labels.targets`.
pub(crate) fn render_word_labeled(
    isa: &'static Isa,
    word: u64,
    labels: &mut LabelCtx,
) -> Result<String, IsaDecodeError> {
    let scope = instruction_scope(isa, word)?;
    let mut out = String::new();
    let mut ctx = Ctx {
        labels: Some(std::mem::take(labels)),
        ..Ctx::default()
    };
    let r = render(&mut ctx, &scope, &mut out);
    *labels = ctx.labels.take().unwrap_or_default();
    r.map(|()| out)
}
