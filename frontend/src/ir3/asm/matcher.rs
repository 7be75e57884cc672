//! Template matching: turns text into partial bit assignments plus conditions on
//! the bits the text does not show.

use super::super::isa_decode::{TemplatePart, template_parts};
use super::super::spec::{Field, Isa, Kind};
use super::super::tables::ENUMS;
use super::literal_prefix;

/// One nested sub-encoding being matched: its leaf, bit offset in the word, and how
/// its params map onto the enclosing frame.
#[derive(Clone)]
pub(super) struct Frame {
    pub(super) leaf: u16,
    pub(super) base: u32,
    pub(super) parent: Option<usize>,
    pub(super) params: &'static [(&'static str, &'static str)],
}

/// A condition on bits the text does not show directly: a derived field whose
/// rendering must equal the text matched for it (`expr == None`), or the expression
/// of the override case whose template was matched (`expr == Some`).
#[derive(Clone)]
pub(super) struct Deferred {
    pub(super) frame: usize,
    pub(super) name: &'static str,
    pub(super) text: String,
    pub(super) expr: Option<u16>,
}

/// One way of reading the text so far: the bits it fixes (`val` where `known`),
/// the input position, the nested frames and the pending conditions.
#[derive(Clone)]
pub(super) struct State {
    pub(super) isa: &'static Isa,
    pub(super) val: u64,
    pub(super) known: u64,
    pub(super) pos: usize,
    pub(super) frames: Vec<Frame>,
    pub(super) deferred: Vec<Deferred>,
}

pub(super) fn ones(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

impl State {
    /// Sets `width` bits at absolute position `low`; `None` on conflict.
    fn set(mut self, low: u32, width: u32, value: u64) -> Option<State> {
        if low >= 64 || value & !ones(width) != 0 {
            return None;
        }
        let mask = ones(width) << low;
        let bits = value << low;
        if (self.val ^ bits) & self.known & mask != 0 {
            return None;
        }
        self.val = (self.val & !mask) | bits;
        self.known |= mask;
        Some(self)
    }

    pub(super) fn push_frame(
        mut self,
        leaf: u16,
        base: u32,
        parent: Option<usize>,
        params: &'static [(&'static str, &'static str)],
    ) -> Option<State> {
        let b = self.isa.bitset(leaf);
        let mask = b.mask << base;
        let bits = b.match_bits << base;
        if (self.val ^ bits) & self.known & mask != 0 {
            return None;
        }
        self.val = (self.val & !mask) | bits;
        self.known |= mask;
        self.frames.push(Frame {
            leaf,
            base,
            parent,
            params,
        });
        Some(self)
    }
}

/// Every field definition named `name` in the bitset chain of `leaf` (any case).
pub(super) fn field_defs(isa: &'static Isa, leaf: u16, name: &str) -> Vec<&'static Field> {
    let mut out: Vec<&'static Field> = Vec::new();
    let mut b = Some(leaf);
    while let Some(bi) = b {
        let bs = isa.bitset(bi);
        for case in bs.cases {
            for f in case
                .fields
                .iter()
                .filter(|f| f.kind != Kind::Assert && f.name == name)
            {
                let dup = out.iter().any(|o| {
                    o.low == f.low
                        && o.high == f.high
                        && o.kind == f.kind
                        && o.expr == f.expr
                        && o.params == f.params
                });
                if !dup {
                    out.push(f);
                }
            }
        }
        b = bs.parent;
    }
    out
}

/// Display templates of `leaf` (leaf cases first, then ancestors) with the asserts
/// of the case they belong to.
pub(super) fn templates(
    isa: &'static Isa,
    leaf: u16,
) -> Vec<(&'static str, &'static [Field], Option<u16>)> {
    let mut out = Vec::new();
    let mut b = Some(leaf);
    while let Some(bi) = b {
        let bs = isa.bitset(bi);
        for case in bs.cases {
            if let Some(d) = case.display {
                out.push((d, case.fields, case.expr));
            }
        }
        b = bs.parent;
    }
    out
}

pub(super) struct Matcher<'t> {
    pub(super) text: &'t str,
    pub(super) furthest: usize,
}

impl Matcher<'_> {
    fn rest(&self, pos: usize) -> &str {
        self.text.get(pos..).unwrap_or("")
    }

    fn advance(&mut self, mut st: State, n: usize) -> State {
        st.pos += n;
        self.furthest = self.furthest.max(st.pos);
        st
    }

    pub(super) fn match_frame(&mut self, st: State, frame: usize) -> Vec<State> {
        let leaf = st.frames[frame].leaf;
        let name = st.isa.name(leaf);
        let mut out = Vec::new();
        for (tmpl, case_fields, case_expr) in templates(st.isa, leaf) {
            if tmpl.contains("{NAME}") && !self.rest(st.pos).contains(name) {
                continue;
            }
            let base = st.frames[frame].base;
            let mut s = Some(st.clone());
            for a in case_fields.iter().filter(|f| f.kind == Kind::Assert) {
                s = s.and_then(|s| s.set(base + u32::from(a.low), a.width(), a.assert_val));
            }
            let Some(mut s) = s else { continue };
            if let Some(e) = case_expr {
                s.deferred.push(Deferred {
                    frame,
                    name: "",
                    text: String::new(),
                    expr: Some(e),
                });
            }
            let parts: Vec<TemplatePart> = template_parts(tmpl).collect();
            out.extend(self.match_parts(s, frame, &parts));
        }
        out
    }

    fn match_parts(&mut self, st: State, frame: usize, parts: &[TemplatePart]) -> Vec<State> {
        let Some((first, rest)) = parts.split_first() else {
            return vec![st];
        };
        let heads = match *first {
            TemplatePart::Literal(l) => match literal_prefix(self.rest(st.pos), l) {
                Some(n) => vec![self.advance(st, n)],
                None => Vec::new(),
            },
            TemplatePart::Field("NAME") => {
                let name = st.isa.name(st.frames[frame].leaf);
                if self.rest(st.pos).starts_with(name) {
                    vec![self.advance(st, name.len())]
                } else {
                    Vec::new()
                }
            }
            TemplatePart::Field(name) => self.match_field(st, frame, name, 0),
        };
        let mut out = Vec::new();
        for h in heads {
            out.extend(self.match_parts(h, frame, rest));
        }
        out
    }

    fn match_field(
        &mut self,
        st: State,
        frame: usize,
        name: &'static str,
        depth: u32,
    ) -> Vec<State> {
        let fr = st.frames[frame].clone();
        let defs = field_defs(st.isa, fr.leaf, name);
        if defs.is_empty() {
            if depth < 8
                && let Some(parent) = fr.parent
                && let Some((pname, _)) = fr.params.iter().find(|(_, alias)| *alias == name)
            {
                return self.match_field(st, parent, pname, depth + 1);
            }
            return Vec::new();
        }
        let mut out = Vec::new();
        for f in defs {
            if f.expr.is_some() {
                for (len, _) in self.lex(f, st.pos) {
                    let text = self.rest(st.pos)[..len].to_string();
                    let mut s = self.advance(st.clone(), len);
                    s.deferred.push(Deferred {
                        frame,
                        name,
                        text,
                        expr: None,
                    });
                    out.push(s);
                }
                continue;
            }
            let low = fr.base + u32::from(f.low);
            if let Kind::Bitset(root) = f.kind {
                for &leaf in st.isa.leaves_of(root) {
                    let Some(s) = st.clone().push_frame(leaf, low, Some(frame), f.params) else {
                        continue;
                    };
                    let idx = s.frames.len() - 1;
                    out.extend(self.match_frame(s, idx));
                }
                continue;
            }
            for (len, value) in self.lex(f, st.pos) {
                let Some(value) = value else { continue };
                if let Some(s) = st.clone().set(low, f.width(), value) {
                    out.push(self.advance(s, len));
                }
            }
        }
        out
    }

    /// Possible (length, raw value) readings of field `f` at `pos`.
    fn lex(&self, f: &Field, pos: usize) -> Vec<(usize, Option<u64>)> {
        let rest = self.rest(pos);
        let w = f.width();
        let mut out = Vec::new();
        match f.kind {
            Kind::Bool | Kind::BoolInv => {
                let on = u64::from(f.kind == Kind::Bool);
                match f.display {
                    Some(d) => {
                        if let Some(n) = literal_prefix(rest, d).filter(|n| *n > 0) {
                            out.push((n, Some(on)));
                        }
                        out.push((0, Some(1 - on)));
                    }
                    None => {
                        if rest.starts_with('0') || rest.starts_with('1') {
                            let v = u64::from(rest.starts_with('1'));
                            out.push((1, Some(if on == 1 { v } else { 1 - v })));
                        }
                    }
                }
            }
            Kind::Uint => {
                let n = digits(rest, 0);
                if n > 0 {
                    out.push((n, rest[..n].parse::<u64>().ok().filter(|v| *v <= ones(w))));
                }
            }
            Kind::Hex => {
                let n = rest.bytes().take_while(u8::is_ascii_hexdigit).count();
                if n > 0 {
                    out.push((
                        n,
                        u64::from_str_radix(&rest[..n], 16)
                            .ok()
                            .filter(|v| *v <= ones(w)),
                    ));
                }
            }
            Kind::Int | Kind::Branch => {
                let sign = usize::from(rest.starts_with('-'));
                let n = digits(rest, sign);
                if n > sign {
                    out.push((n, signed_bits(&rest[..n], w)));
                }
            }
            Kind::Offset => {
                if rest.starts_with('+') || rest.starts_with('-') {
                    let n = digits(rest, 1);
                    if n > 1 {
                        let t = rest[..n].trim_start_matches('+');
                        out.push((n, signed_bits(t, w).filter(|v| *v != 0)));
                    }
                }
                out.push((0, Some(0)));
            }
            Kind::Uoffset => {
                if rest.starts_with('+') {
                    let n = digits(rest, 1);
                    if n > 1 {
                        out.push((
                            n,
                            rest[1..n]
                                .parse::<u64>()
                                .ok()
                                .filter(|v| *v != 0 && *v <= ones(w)),
                        ));
                    }
                }
                out.push((0, Some(0)));
            }
            Kind::Float => {
                if let Some((n, x)) = lex_float(rest) {
                    let bits = match w {
                        16 => super::super::float::f64_to_f16_nearest(x).map(u64::from),
                        32 => parse_f32(&rest[..n]).map(|f| u64::from(f.to_bits())),
                        _ => None,
                    };
                    out.push((n, bits));
                }
            }
            Kind::Enum(e) => {
                for (v, d) in ENUMS[usize::from(e)].values {
                    if let Some(n) = literal_prefix(rest, d) {
                        out.push((n, Some(*v)));
                    }
                }
            }
            Kind::Bitset(_) | Kind::Assert => {}
        }
        out
    }
}

fn digits(s: &str, skip: usize) -> usize {
    skip + s
        .as_bytes()
        .iter()
        .skip(skip)
        .take_while(|b| b.is_ascii_digit())
        .count()
}

/// Two's complement bits of a signed decimal that fits `width` bits.
fn signed_bits(t: &str, width: u32) -> Option<u64> {
    let v: i64 = t.parse().ok()?;
    if width < 64 {
        let lim = 1i64 << (width - 1);
        if v < -lim || v >= lim {
            return None;
        }
    }
    Some((v as u64) & ones(width))
}

/// Direct decimal-to-single parse (avoids double rounding through f64).
fn parse_f32(t: &str) -> Option<f32> {
    match t {
        "-nan" => Some(-f32::NAN),
        _ => t.parse().ok(),
    }
}

/// `%f`-style float text (`-1.500000`, `inf`, `nan`).
fn lex_float(s: &str) -> Option<(usize, f64)> {
    for (word, x) in [
        ("-inf", f64::NEG_INFINITY),
        ("inf", f64::INFINITY),
        ("-nan", -f64::NAN),
        ("nan", f64::NAN),
    ] {
        if s.starts_with(word) {
            return Some((word.len(), x));
        }
    }
    let sign = usize::from(s.starts_with('-'));
    let int_end = digits(s, sign);
    if int_end == sign || !s[int_end..].starts_with('.') {
        return None;
    }
    let end = digits(s, int_end + 1);
    let x: f64 = s[..end].parse().ok()?;
    Some((end, x))
}
