//! Parsing one operand (`$r0_r1.sx`, `du54`, `0.5`, `cf3`, ...) and encoding it with
//! the cases of an operand encoding.

use super::super::bits::{scatter, sign_extend, width};
use super::super::instr::Hint;
use super::super::minifloat;
use super::super::spec::{CaseSpec, EncMod, OperandKind, OperandSpec, Ranges};
use super::lexer::parse_int;
use super::search::{Choice, mask_of};

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
        if k != kind || s != size || Some(half) != (step * i as i64).checked_add(first) {
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
        (true, None) => Some((kind, 64, n.checked_mul(2)?)),
        (false, None) => Some((kind, 32, n.checked_mul(2)?)),
        (false, Some(h)) => Some((kind, 16, n.checked_mul(2)? + h)),
    }
}

pub(super) fn operand_choices(op: &OperandSpec, token: Option<&str>, is_dest: bool) -> Vec<Choice> {
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

/// Whether `text` reads as a register, uniform, immediate or cf/ts/ss operand (such
/// names cannot be labels).
pub(super) fn looks_like_operand(text: &str) -> bool {
    parse_operand(text).is_some()
}
