//! Assembler for mesa's ir3 disassembly syntax, driven by the same display templates
//! the disassembler uses.
//!
//! A line is matched against every encoding's templates (literals, enums, numbers,
//! nested sub-encodings). Fields the text shows directly are set; fields that only
//! show up through derived values (e.g. `h` half markers, `(nopN)`, split offsets)
//! are solved for by trying the bits they depend on; bits the text does not
//! determine at all are tried with the fewest bits set first. A candidate is accepted
//! only if disassembling it reproduces the text exactly.

use super::engine::{self, Ctx, Scope, TemplatePart, template_parts};
use super::spec::{Field, Isa, Kind};
use super::tables::{ENUMS, EXPR_FIELDS};

/// Failure to assemble; `line`/`col` are 1-based positions in the source.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AsmError {
    #[error(
        "{line}:{col}: cannot parse instruction {text:?} (no encoding matches past this column)"
    )]
    NoMatch {
        line: usize,
        col: usize,
        text: String,
    },
    #[error("{line}:{col}: {text:?} matches an encoding but no bits reproduce it exactly")]
    Unencodable {
        line: usize,
        col: usize,
        text: String,
    },
    #[error("{line}:{col}: bad raw word {text:?}")]
    BadRaw {
        line: usize,
        col: usize,
        text: String,
    },
}

/// Assemble a program: one instruction per line; blank lines and `;` comments are
/// skipped.
pub(crate) fn assemble_source(isa: &'static Isa, source: &str) -> Result<Vec<u64>, AsmError> {
    let mut out = Vec::new();
    for (i, line) in source.lines().enumerate() {
        let code = line.split(';').next().unwrap_or("");
        if code.trim().is_empty() {
            continue;
        }
        out.push(assemble_at(isa, code, i + 1)?);
    }
    Ok(out)
}

/// Whitespace-normalized text plus, per byte, its column in the original line.
struct Normalized {
    text: String,
    cols: Vec<usize>,
}

fn normalize(line: &str) -> Normalized {
    let mut text = String::new();
    let mut cols = Vec::new();
    let mut pending_space = false;
    for (i, ch) in line.char_indices() {
        if ch.is_whitespace() {
            pending_space = !text.is_empty();
            continue;
        }
        if pending_space {
            text.push(' ');
            cols.push(i);
            pending_space = false;
        }
        text.push(ch);
        cols.extend(std::iter::repeat_n(i + 1, ch.len_utf8()));
    }
    Normalized { text, cols }
}

pub(crate) fn assemble_at(isa: &'static Isa, line: &str, line_no: usize) -> Result<u64, AsmError> {
    let norm = normalize(line);
    let col_of = |pos: usize| {
        norm.cols
            .get(pos)
            .copied()
            .unwrap_or_else(|| line.trim_end().len() + 1)
    };
    if let Some(hex) = norm.text.strip_prefix("raw ") {
        let digits = hex.strip_prefix("0x").or_else(|| hex.strip_prefix("0X"));
        return digits
            .filter(|d| !d.is_empty() && d.len() <= 16)
            .and_then(|d| u64::from_str_radix(d, 16).ok())
            .ok_or(AsmError::BadRaw {
                line: line_no,
                col: col_of(4),
                text: norm.text.clone(),
            });
    }
    let mut m = Matcher {
        text: &norm.text,
        furthest: 0,
    };
    let mut any_full = false;
    let mut best: Option<u64> = None;
    for &leaf in isa.leaves_of(isa.instruction_root) {
        let st = State {
            isa,
            val: 0,
            known: 0,
            pos: 0,
            frames: Vec::new(),
            deferred: Vec::new(),
        };
        let Some(st) = st.push_frame(leaf, 0, None, &[]) else {
            continue;
        };
        for cand in m.match_frame(st, 0) {
            if cand.pos != norm.text.len() {
                continue;
            }
            any_full = true;
            if let Some(word) = solve(&cand, &norm.text) {
                // Several templates can print the same text; like mesa's encoder,
                // prefer the word with the fewest bits set.
                best = Some(best.map_or(word, |b: u64| canonical(b, word)));
            }
        }
    }
    if let Some(word) = best {
        return Ok(word);
    }
    if any_full {
        Err(AsmError::Unencodable {
            line: line_no,
            col: col_of(0),
            text: norm.text,
        })
    } else {
        Err(AsmError::NoMatch {
            line: line_no,
            col: col_of(m.furthest),
            text: norm.text,
        })
    }
}

/// The preferred of two words that print the same text: fewer bits set, then the
/// smaller value.
fn canonical(a: u64, b: u64) -> u64 {
    if (b.count_ones(), b) < (a.count_ones(), a) {
        b
    } else {
        a
    }
}

/// One nested sub-encoding being matched: its leaf, bit offset in the word, and how
/// its params map onto the enclosing frame.
#[derive(Clone)]
struct Frame {
    leaf: u16,
    base: u32,
    parent: Option<usize>,
    params: &'static [(&'static str, &'static str)],
}

/// A condition on bits the text does not show directly: a derived field whose
/// rendering must equal the text matched for it (`expr == None`), or the expression
/// of the override case whose template was matched (`expr == Some`).
#[derive(Clone)]
struct Deferred {
    frame: usize,
    name: &'static str,
    text: String,
    expr: Option<u16>,
}

#[derive(Clone)]
struct State {
    isa: &'static Isa,
    val: u64,
    known: u64,
    pos: usize,
    frames: Vec<Frame>,
    deferred: Vec<Deferred>,
}

fn ones(width: u32) -> u64 {
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

    fn push_frame(
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
fn field_defs(isa: &'static Isa, leaf: u16, name: &str) -> Vec<&'static Field> {
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
fn templates(isa: &'static Isa, leaf: u16) -> Vec<(&'static str, &'static [Field], Option<u16>)> {
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

struct Matcher<'t> {
    text: &'t str,
    furthest: usize,
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

    fn match_frame(&mut self, st: State, frame: usize) -> Vec<State> {
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
            TemplatePart::Literal(l) => {
                if self.rest(st.pos).starts_with(l) {
                    vec![self.advance(st, l.len())]
                } else {
                    Vec::new()
                }
            }
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
                        if !d.is_empty() && rest.starts_with(d) {
                            out.push((d.len(), Some(on)));
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
                        16 => super::float::f64_to_f16_nearest(x).map(u64::from),
                        32 => parse_f32(&rest[..n]).map(|f| u64::from(f.to_bits())),
                        _ => None,
                    };
                    out.push((n, bits));
                }
            }
            Kind::Enum(e) => {
                for (v, d) in ENUMS[usize::from(e)].values {
                    if rest.starts_with(d) {
                        out.push((d.len(), Some(*v)));
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

/// Absolute bit mask of the stored bits that field `name` (as seen from `frame`)
/// depends on, following derived fields' expressions and params.
fn dependency_bits(st: &State, frame: usize, name: &str, depth: u32) -> u64 {
    if depth > 8 {
        return 0;
    }
    let fr = &st.frames[frame];
    let defs = field_defs(st.isa, fr.leaf, name);
    if defs.is_empty() {
        if let Some(parent) = fr.parent
            && let Some((pname, _)) = fr.params.iter().find(|(_, alias)| *alias == name)
        {
            return dependency_bits(st, parent, pname, depth + 1);
        }
        return 0;
    }
    let mut bits = 0;
    for f in defs {
        match f.expr {
            Some(e) => {
                for dep in EXPR_FIELDS.get(usize::from(e)).copied().unwrap_or(&[]) {
                    bits |= dependency_bits(st, frame, dep, depth + 1);
                }
            }
            None => bits |= f.bit_mask() << fr.base,
        }
    }
    bits
}

/// Calls `f` with the decode scope of `frame` for `word`.
fn with_scope<R>(
    isa: &'static Isa,
    frames: &[Frame],
    idx: usize,
    word: u64,
    f: &mut dyn FnMut(&Scope<'_>) -> R,
) -> R {
    let fr = &frames[idx];
    let size = u32::from(isa.bitset(fr.leaf).size);
    let val = (word >> fr.base) & ones(size);
    match fr.parent {
        None => f(&Scope {
            isa,
            bitset: fr.leaf,
            val,
            parent: None,
            params: &[],
        }),
        Some(p) => with_scope(isa, frames, p, word, &mut |ps: &Scope<'_>| {
            f(&Scope {
                isa,
                bitset: fr.leaf,
                val,
                parent: Some(ps),
                params: fr.params,
            })
        }),
    }
}

fn deferred_hold(st: &State, word: u64) -> bool {
    st.deferred.iter().all(|d| {
        with_scope(st.isa, &st.frames, d.frame, word, &mut |scope: &Scope<
            '_,
        >| {
            if let Some(e) = d.expr {
                return engine::eval(&mut Ctx::default(), scope, e).is_ok_and(|v| v != 0);
            }
            let mut out = String::new();
            engine::render_field(&mut Ctx::default(), scope, d.name, &mut out).is_ok()
                && out == d.text
        })
    })
}

/// Deposits the low bits of `combo` into the set bits of `mask`.
fn scatter(combo: u64, mask: u64) -> u64 {
    let mut out = 0;
    let mut m = mask;
    let mut i = 0;
    while m != 0 {
        let bit = m & m.wrapping_neg();
        if combo >> i & 1 != 0 {
            out |= bit;
        }
        m &= m - 1;
        i += 1;
    }
    out
}

/// Combinations of `n` bits, fewest set bits first; beyond `full_upto` bits only
/// combinations of at most two set bits are tried.
fn combos_by_popcount(n: u32, full_upto: u32) -> Vec<u64> {
    let mut v: Vec<u64> = if n <= full_upto {
        (0..1u64 << n).collect()
    } else {
        let mut v = vec![0u64];
        for i in 0..n {
            v.push(1 << i);
            for j in 0..i {
                v.push((1 << i) | (1 << j));
            }
        }
        v
    };
    v.sort_by_key(|c| (c.count_ones(), *c));
    v
}

const MAX_SOLVED_BITS: u32 = 16;

/// Fills undetermined fields the way mesa's encoder does (`ENCODE_HINTS`); returns
/// the word and the bits it decided.
fn apply_hints(st: &State, word: u64, free: u64) -> (u64, u64) {
    let Some(top) = st.frames.first() else {
        return (word, 0);
    };
    let mut w = word;
    let mut decided = 0u64;
    let mut b = Some(top.leaf);
    while let Some(bi) = b {
        for &(_, name, expr) in st.isa.encode_hints.iter().filter(|h| h.0 == bi) {
            let Some(f) = field_defs(st.isa, top.leaf, name)
                .into_iter()
                .find(|f| f.expr.is_none())
            else {
                continue;
            };
            let mask = f.bit_mask();
            if mask & !free != 0 {
                continue;
            }
            let scope = Scope {
                isa: st.isa,
                bitset: top.leaf,
                val: w,
                parent: None,
                params: &[],
            };
            if let Ok(v) = engine::eval(&mut Ctx::default(), &scope, expr) {
                w = (w & !mask) | (((v as u64) << f.low) & mask);
                decided |= mask;
            }
        }
        b = st.isa.bitset(bi).parent;
    }
    (w, decided)
}

/// Finds the word for a complete template match, or `None` if no assignment of the
/// undetermined bits reproduces `text`.
fn solve(st: &State, text: &str) -> Option<u64> {
    let top = st.isa.bitset(st.frames.first()?.leaf);
    let mut dep = 0u64;
    for d in &st.deferred {
        match d.expr {
            Some(e) => {
                for name in EXPR_FIELDS.get(usize::from(e)).copied().unwrap_or(&[]) {
                    dep |= dependency_bits(st, d.frame, name, 0);
                }
            }
            None => dep |= dependency_bits(st, d.frame, d.name, 0),
        }
    }
    dep &= !st.known;
    if dep.count_ones() > MAX_SOLVED_BITS {
        return None;
    }
    let free = !st.known & !dep & !top.mask & !top.dontcare;
    let free_combos = combos_by_popcount(free.count_ones(), 12);
    for combo in combos_by_popcount(dep.count_ones(), MAX_SOLVED_BITS) {
        let word = st.val | scatter(combo, dep);
        if !deferred_hold(st, word) {
            continue;
        }
        let (hinted, hinted_bits) = apply_hints(st, word, free);
        let rest = free & !hinted_bits;
        let rest_combos = combos_by_popcount(rest.count_ones(), 12);
        for fc in &rest_combos {
            let w = hinted | scatter(*fc, rest);
            if engine::render_word(st.isa, w).is_ok_and(|t| t == text) {
                return Some(w);
            }
        }
        for fc in &free_combos {
            let w = word | scatter(*fc, free);
            if engine::render_word(st.isa, w).is_ok_and(|t| t == text) {
                return Some(w);
            }
        }
    }
    None
}
