//! Assembler for Mesa's AGX2 syntax, driven by the same tables as the decoder.
//!
//! Each instruction spec with the line's mnemonic is tried in table order. Its printed
//! items (destinations, sources, immediates, modifiers) are matched against the
//! comma-separated operands by a small backtracking search: an item may print nothing
//! (absent source, default enum value, clear flag), so each either consumes the next
//! operand or not. Every choice deposits bits with conflict checks. A complete candidate
//! uses the short form when no bit beyond it is set, and is accepted only if
//! disassembling it gives back the (normalised) input text, so
//! `disasm(assemble(text)) == text` holds by construction.

use super::bits::{scatter, sign_extend, width};
use super::decode::decode;
use super::error::AsmError;
use super::instr::Hint;
use super::minifloat;
use super::spec::{
    CaseSpec, EncMod, ImmSpec, InstrSpec, ModKind, ModSpec, OperandKind, OperandSpec, Ranges,
};
use super::tables::{INSTRS, Opcode};

/// Instructions Mesa's compiler always emits in the long form, even when the extension
/// bytes are zero (every lload/lstore/iter/iterproj/ldcf among Mesa's test vectors is
/// long). The short form prints the same text; the assembler follows Mesa here.
const PREFER_LONG: &[Opcode] = &[
    Opcode::Lload,
    Opcode::Lstore,
    Opcode::Iter,
    Opcode::Iterproj,
    Opcode::Ldcf,
];

/// Assembles one line of Mesa AGX syntax (comments after `;`, `//` or `#` and blank
/// lines give no bytes).
pub fn assemble_line(text: &str) -> Result<Vec<u8>, AsmError> {
    assemble_at(text, 1)
}

/// Assembles a program, one instruction per line; errors give line:col (1-based).
pub fn assemble(src: &str) -> Result<Vec<u8>, AsmError> {
    let mut out = Vec::new();
    for (i, line) in src.lines().enumerate() {
        out.extend(assemble_at(line, i + 1)?);
    }
    Ok(out)
}

/// One comma-separated operand: normalised text and 1-based column in the line.
struct Token {
    text: String,
    col: usize,
}

fn err(line: usize, col: usize, msg: String) -> AsmError {
    AsmError { line, col, msg }
}

fn assemble_at(raw_line: &str, line: usize) -> Result<Vec<u8>, AsmError> {
    let code = strip_comment(raw_line);
    let lead = code.len() - code.trim_start().len();
    let code = code.trim();
    if code.is_empty() {
        return Ok(Vec::new());
    }
    let mn_end = code.find(char::is_whitespace).unwrap_or(code.len());
    let mnemonic = &code[..mn_end];
    let tokens = split_operands(&code[mn_end..], lead + mn_end);
    if tokens.iter().any(|t| t.text.is_empty()) {
        let col = tokens
            .iter()
            .find(|t| t.text.is_empty())
            .map_or(1, |t| t.col);
        return Err(err(line, col, "empty operand".into()));
    }
    let canonical = canonical_text(mnemonic, &tokens);
    let candidates: Vec<&'static InstrSpec> =
        INSTRS.iter().filter(|s| s.display == mnemonic).collect();
    if candidates.is_empty() {
        return Err(err(
            line,
            lead + 1,
            format!("unknown mnemonic `{mnemonic}`"),
        ));
    }
    let mut furthest = 0;
    for spec in candidates {
        let mut search = Search {
            spec,
            items: items_of(spec),
            tokens: &tokens,
            canonical: &canonical,
            furthest: 0,
        };
        let start = Acc::default().deposit(spec.exact_mask, spec.exact_value);
        if let Some(bytes) = start.and_then(|acc| search.dfs(0, 0, acc)) {
            return Ok(bytes);
        }
        furthest = furthest.max(search.furthest);
    }
    match tokens.get(furthest) {
        Some(t) => Err(err(
            line,
            t.col,
            format!("cannot encode operand `{}` of `{mnemonic}`", t.text),
        )),
        None => Err(err(
            line,
            lead + code.len() + 1,
            format!(
                "operands of `{mnemonic}` match no encoding (missing or inconsistent operands)"
            ),
        )),
    }
}

fn strip_comment(line: &str) -> &str {
    let cut = [line.find(';'), line.find("//"), line.find('#')]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(line.len());
    &line[..cut]
}

/// Splits `rest` (text after the mnemonic, starting at byte `offset` of the line) on
/// commas, normalising integers to decimal, float immediates to Mesa's spelling and
/// inner whitespace to single spaces.
fn split_operands(rest: &str, offset: usize) -> Vec<Token> {
    if rest.trim().is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut start = 0;
    for piece in rest.split(',') {
        let lead = piece.len() - piece.trim_start().len();
        let text = piece.split_whitespace().collect::<Vec<_>>().join(" ");
        out.push(Token {
            text: normalise(&text),
            col: offset + start + lead + 1,
        });
        start += piece.len() + 1;
    }
    out
}

fn normalise(text: &str) -> String {
    if let Some(v) = parse_int(text) {
        return v.to_string();
    }
    if text.contains('.')
        && let Ok(f) = text.parse::<f32>()
        && let Some(code) = (0..=255u8).find(|&b| {
            let g = minifloat::decode(b);
            g == f && g.is_sign_negative() == f.is_sign_negative()
        })
    {
        return minifloat::format(code);
    }
    text.to_string()
}

fn parse_int(text: &str) -> Option<i64> {
    let (neg, body) = match text.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, text),
    };
    let v = if let Some(h) = body.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()?
    } else if !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit()) {
        body.parse::<i64>().ok()?
    } else {
        return None;
    };
    Some(if neg { -v } else { v })
}

fn canonical_text(mnemonic: &str, tokens: &[Token]) -> String {
    let mut s = mnemonic.to_string();
    for (i, t) in tokens.iter().enumerate() {
        s.push_str(if i == 0 { " " } else { ", " });
        s.push_str(&t.text);
    }
    s
}

/// Printed items of an instruction, in print order.
#[derive(Clone, Copy)]
enum Item {
    Dest(&'static OperandSpec),
    Src(&'static OperandSpec),
    Imm(&'static ImmSpec),
    Mod(&'static ModSpec),
}

fn items_of(spec: &'static InstrSpec) -> Vec<Item> {
    let mut items: Vec<Item> = spec.dests.iter().map(Item::Dest).collect();
    items.extend(spec.srcs.iter().map(Item::Src));
    items.extend(spec.imms.iter().map(Item::Imm));
    items.extend(
        spec.mods
            .iter()
            .filter(|m| m.kind != ModKind::Length)
            .map(Item::Mod),
    );
    items
}

/// Bits fixed so far (mask) and their values.
#[derive(Clone, Copy, Default)]
struct Acc {
    mask: u128,
    value: u128,
}

impl Acc {
    fn deposit(self, mask: u128, value: u128) -> Option<Acc> {
        let value = value & mask;
        if (self.mask & mask) & (self.value ^ value) != 0 {
            return None;
        }
        Some(Acc {
            mask: self.mask | mask,
            value: self.value | value,
        })
    }
}

/// One way to encode an item: bits to deposit and whether it used the operand.
struct Choice {
    mask: u128,
    value: u128,
    consumes: bool,
}

struct Search<'a> {
    spec: &'static InstrSpec,
    items: Vec<Item>,
    tokens: &'a [Token],
    canonical: &'a str,
    furthest: usize,
}

impl Search<'_> {
    fn dfs(&mut self, i: usize, t: usize, acc: Acc) -> Option<Vec<u8>> {
        let Some(&item) = self.items.get(i) else {
            return if t == self.tokens.len() {
                self.finish(acc)
            } else {
                None
            };
        };
        let token = self.tokens.get(t).map(|x| x.text.as_str());
        for choice in choices(item, token) {
            let Some(next) = acc.deposit(choice.mask, choice.value) else {
                continue;
            };
            let nt = t + usize::from(choice.consumes);
            self.furthest = self.furthest.max(nt);
            if let Some(bytes) = self.dfs(i + 1, nt, next) {
                return Some(bytes);
            }
        }
        None
    }

    /// Picks the length, sets the L bit, and checks the round trip.
    fn finish(&self, acc: Acc) -> Option<Vec<u8>> {
        let spec = self.spec;
        let short_bits = u32::from(spec.short_len) * 8;
        let needs_long = (short_bits < 128 && acc.value >> short_bits != 0)
            || PREFER_LONG.contains(&spec.opcode);
        let (len, acc) = if spec.short_len == spec.long_len {
            (usize::from(spec.short_len), acc)
        } else if needs_long {
            let l = 1u128 << spec.length_bit;
            (usize::from(spec.long_len), acc.deposit(l, l)?)
        } else {
            (
                usize::from(spec.short_len),
                acc.deposit(1u128 << spec.length_bit, 0)?,
            )
        };
        if len < 16 && acc.value >> (len * 8) != 0 {
            return None;
        }
        let bytes: Vec<u8> = (0..len).map(|i| (acc.value >> (8 * i)) as u8).collect();
        let (instr, got_len) = decode(&bytes, 0).ok()?;
        (got_len == len && instr.opcode == spec.opcode && instr.to_string() == self.canonical)
            .then_some(bytes)
    }
}

fn choices(item: Item, token: Option<&str>) -> Vec<Choice> {
    match item {
        Item::Dest(op) => operand_choices(op, token, true),
        Item::Src(op) => operand_choices(op, token, false),
        Item::Imm(imm) => token.and_then(|t| imm_choice(imm, t)).into_iter().collect(),
        Item::Mod(m) => mod_choices(m, token),
    }
}

fn mask_of(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

fn imm_choice(imm: &ImmSpec, token: &str) -> Option<Choice> {
    let v = parse_int(token)?;
    let w = width(imm.bits);
    let raw = (v as u64) & mask_of(w);
    let ok = if imm.signed {
        sign_extend(raw, w) == v
    } else {
        v >= 0 && raw as i64 == v
    };
    ok.then(|| {
        let (mask, value) = scatter(imm.bits, mask_of(w), raw);
        Choice {
            mask,
            value,
            consumes: true,
        }
    })
}

fn mod_choices(m: &ModSpec, token: Option<&str>) -> Vec<Choice> {
    let w = width(m.bits);
    let full = mask_of(w);
    let make = |v: u64, consumes: bool| {
        let (mask, value) = scatter(m.bits, full, v);
        Choice {
            mask,
            value,
            consumes,
        }
    };
    let mut out = Vec::new();
    match m.kind {
        ModKind::Length => {}
        ModKind::Flag(text) => {
            if token == Some(text) {
                out.push(make(1, true));
            }
            out.push(make(0, false));
        }
        ModKind::Enum(kind) => {
            let values = kind.spec().values;
            for &(v, d) in values {
                if u64::from(v) <= full && d.is_some() && d == token {
                    out.push(make(u64::from(v), true));
                }
            }
            for &(v, d) in values {
                if u64::from(v) <= full && d.is_none_or(str::is_empty) {
                    out.push(make(u64::from(v), false));
                }
            }
        }
    }
    out
}

/// A register/uniform/immediate operand as written.
struct Parsed {
    kind: OperandKind,
    value: i64,
    size: u8,
    count: u8,
    hint: Hint,
    abs: bool,
    neg: bool,
    sx: bool,
}

fn parse_operand(token: &str) -> Option<Parsed> {
    let (hint, mut body) = if let Some(b) = token.strip_prefix('^') {
        (Hint::Discard, b)
    } else if let Some(b) = token.strip_prefix('$') {
        (Hint::Cache, b)
    } else {
        (Hint::None, token)
    };
    let (mut abs, mut neg, mut sx) = (false, false, false);
    loop {
        if let Some(b) = body.strip_suffix(".abs") {
            abs = true;
            body = b;
        } else if let Some(b) = body.strip_suffix(".neg") {
            neg = true;
            body = b;
        } else if let Some(b) = body.strip_suffix(".sx") {
            sx = true;
            body = b;
        } else {
            break;
        }
    }
    let mut p = Parsed {
        kind: OperandKind::Imm,
        value: 0,
        size: 16,
        count: 1,
        hint,
        abs,
        neg,
        sx,
    };
    if let Some(v) = parse_int(body) {
        p.value = v;
        return Some(p);
    }
    if body.contains('.') {
        p.kind = OperandKind::FImm;
        p.value = i64::from(minifloat::parse(body)?);
        return Some(p);
    }
    for (prefix, kind) in [
        ("cf", OperandKind::Cf),
        ("ts", OperandKind::Ts),
        ("ss", OperandKind::Ss),
    ] {
        if let Some(n) = body.strip_prefix(prefix).and_then(parse_int) {
            p.kind = kind;
            p.value = n;
            return Some(p);
        }
    }
    let regs: Vec<(OperandKind, u8, i64)> =
        body.split('_').map(parse_reg).collect::<Option<Vec<_>>>()?;
    let &(kind, size, first) = regs.first()?;
    let step = i64::from(size / 16);
    for (i, &(k, s, half)) in regs.iter().enumerate() {
        if k != kind || s != size || half != first + step * i as i64 {
            return None;
        }
    }
    p.kind = kind;
    p.size = size;
    p.value = first;
    p.count = u8::try_from(regs.len()).ok()?;
    Some(p)
}

/// `r5`, `r5h`, `dr4`, `u9l`, `du54` -> (kind, size, half index).
fn parse_reg(part: &str) -> Option<(OperandKind, u8, i64)> {
    let (wide, rest) = match part.strip_prefix('d') {
        Some(r) => (true, r),
        None => (false, part),
    };
    let (kind, rest) = if let Some(r) = rest.strip_prefix('r') {
        (OperandKind::Reg, r)
    } else if let Some(r) = rest.strip_prefix('u') {
        (OperandKind::Uniform, r)
    } else {
        return None;
    };
    let (digits, half) = if let Some(d) = rest.strip_suffix('l') {
        (d, Some(0))
    } else if let Some(d) = rest.strip_suffix('h') {
        (d, Some(1))
    } else {
        (rest, None)
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: i64 = digits.parse().ok()?;
    match (wide, half) {
        (true, Some(_)) => None,
        (true, None) => Some((kind, 64, 2 * n)),
        (false, None) => Some((kind, 32, 2 * n)),
        (false, Some(h)) => Some((kind, 16, 2 * n + h)),
    }
}

fn operand_choices(op: &OperandSpec, token: Option<&str>, is_dest: bool) -> Vec<Choice> {
    let cases = op.encoding.spec().cases;
    let mut out = Vec::new();
    let absent = |out: &mut Vec<Choice>, consumes: bool| {
        for case in cases.iter().filter(|c| c.kind.is_none()) {
            push_field(
                out,
                op.bits,
                u64::from(case.exact_mask),
                u64::from(case.exact_value),
                consumes,
            );
        }
    };
    if is_dest {
        if token == Some("_") {
            absent(&mut out, true);
        }
    } else {
        // An absent source prints nothing.
        absent(&mut out, false);
    }
    let Some(parsed) = token.and_then(parse_operand) else {
        return out;
    };
    let mut found = Vec::new();
    for case in cases {
        encode_case(case, &parsed, &mut found);
    }
    let mut present = Vec::new();
    for (m, v) in found {
        push_field(&mut present, op.bits, m, v, true);
    }
    present.extend(out);
    present
}

fn push_field(out: &mut Vec<Choice>, bits: Ranges, m: u64, v: u64, consumes: bool) {
    let (mask, value) = scatter(bits, m, v);
    out.push(Choice {
        mask,
        value,
        consumes,
    });
}

/// Field-relative (mask, value) pairs encoding `p` with `case` (several when the size
/// bits allow alternatives).
fn encode_case(case: &CaseSpec, p: &Parsed, out: &mut Vec<(u64, u64)>) {
    let Some(kind) = &case.kind else { return };
    if kind.kind != p.kind {
        return;
    }
    let is_reg = matches!(p.kind, OperandKind::Reg | OperandKind::Uniform);
    let mut f = Field::default();
    let Some(()) = f.put(u64::from(case.exact_mask), u64::from(case.exact_value)) else {
        return;
    };
    // The value, stored right-shifted by the case's shift.
    let w = width(kind.bits);
    let shift = u32::from(kind.shift);
    if p.value & ((1i64 << shift) - 1) != 0 {
        return;
    }
    let v = p.value >> shift;
    let fits = if kind.signed {
        sign_extend((v as u64) & mask_of(w), w) == v
    } else {
        v >= 0 && (v as u64) <= mask_of(w)
    };
    if !fits {
        return;
    }
    let (km, kv) = scatter(kind.bits, mask_of(w), (v as u64) & mask_of(w));
    let Some(()) = f.put(km as u64, kv as u64) else {
        return;
    };
    let has = |m: EncMod| case.mods.iter().find(|(x, _)| *x == m).map(|&(_, r)| r);
    let mut set = |m: EncMod, v: u64| -> Option<()> {
        let r = has(m)?;
        let (mm, vv) = scatter(r, mask_of(width(r)), v);
        f.put(mm as u64, vv as u64)
    };
    // Hint prefixes.
    let hint_ok = if has(EncMod::Hint).is_some() {
        set(
            EncMod::Hint,
            match p.hint {
                Hint::None => 1,
                Hint::Cache => 2,
                Hint::Discard => 3,
            },
        )
        .is_some()
    } else {
        let cache_ok = match (has(EncMod::Cache).is_some(), p.hint == Hint::Cache) {
            (true, c) => set(EncMod::Cache, u64::from(c)).is_some(),
            (false, c) => !c,
        };
        let lu_ok = match (has(EncMod::Lu).is_some(), p.hint == Hint::Discard) {
            (true, d) => set(EncMod::Lu, u64::from(d)).is_some(),
            (false, d) => !d,
        };
        cache_ok && lu_ok
    };
    if !hint_ok {
        return;
    }
    // Source modifiers.
    for (m, want) in [(EncMod::Abs, p.abs), (EncMod::Neg, p.neg)] {
        let ok = if has(m).is_some() {
            set(m, u64::from(want)).is_some()
        } else {
            !want
        };
        if !ok {
            return;
        }
    }
    let sx_ok = if has(EncMod::Sx).is_some() {
        set(EncMod::Sx, u64::from(p.sx)).is_some()
    } else if has(EncMod::Zx).is_some() {
        set(EncMod::Zx, u64::from(!p.sx)).is_some()
    } else {
        !p.sx
    };
    if !sx_ok {
        return;
    }
    // Register count.
    let count_ok = if case.count != 0 {
        p.count == case.count
    } else if has(EncMod::Count).is_some() {
        (1..=4).contains(&p.count) && set(EncMod::Count, u64::from(p.count % 4)).is_some()
    } else if has(EncMod::Mask).is_some() {
        true // fixed by the instruction's printed mask; checked by the round trip
    } else {
        p.count == 1
    };
    if !count_ok {
        return;
    }
    // Size: properties are fixed, modifier bits are chosen.
    let size = if is_reg { p.size } else { 16 };
    let (m64, m32) = (has(EncMod::Size64).is_some(), has(EncMod::Size32).is_some());
    let mut options: Vec<(Option<u64>, Option<u64>)> = Vec::new();
    let opt = |present: bool, v: u64| present.then_some(v);
    match size {
        64 if case.size64 => options.push((opt(m64, 0), opt(m32, 0))),
        64 if m64 => {
            options.push((Some(1), opt(m32, 1)));
            if m32 {
                options.push((Some(1), Some(0)));
            }
        }
        32 if !case.size64 && (case.size32 || m32) => {
            options.push((opt(m64, 0), opt(m32, u64::from(!case.size32))))
        }
        16 if !case.size64 && !case.size32 => options.push((opt(m64, 0), opt(m32, 0))),
        _ => {}
    }
    if !is_reg && options.is_empty() {
        options.push((opt(m64, 0), opt(m32, 0)));
    }
    for (s64, s32) in options {
        let mut g = f;
        let mut ok = true;
        for (m, v) in [(EncMod::Size64, s64), (EncMod::Size32, s32)] {
            if let (Some(v), Some(r)) = (v, has(m)) {
                let (mm, vv) = scatter(r, mask_of(width(r)), v);
                ok &= g.put(mm as u64, vv as u64).is_some();
            }
        }
        if ok {
            out.push((g.mask, g.value));
        }
    }
}

/// Conflict-checked bits of one operand field.
#[derive(Clone, Copy, Default)]
struct Field {
    mask: u64,
    value: u64,
}

impl Field {
    fn put(&mut self, mask: u64, value: u64) -> Option<()> {
        let value = value & mask;
        if (self.mask & mask) & (self.value ^ value) != 0 {
            return None;
        }
        self.mask |= mask;
        self.value |= value;
        Some(())
    }
}
