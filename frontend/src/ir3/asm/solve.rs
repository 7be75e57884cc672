//! Finding concrete bits for a complete template match.

use super::super::isa_decode::{self, Ctx, Scope};
use super::super::spec::Isa;
use super::super::tables::EXPR_FIELDS;
use super::compact;
use super::matcher::{Frame, State, field_defs, ones};

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
                return isa_decode::eval(&mut Ctx::default(), scope, e).is_ok_and(|v| v != 0);
            }
            let mut out = String::new();
            isa_decode::render_field(&mut Ctx::default(), scope, d.name, &mut out).is_ok()
                && compact(&out) == d.text
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
            if let Ok(v) = isa_decode::eval(&mut Ctx::default(), &scope, expr) {
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
pub(super) fn solve(st: &State, text: &str) -> Option<u64> {
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
    // Past MAX_SOLVED_BITS only words with at most two of these bits set are
    // tried: enough for fields the text shows by leaving them out (two zero
    // relative offsets, `hr<a0.x>, hc<a0.x>`, depend on 20 bits).
    dep &= !st.known;
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
            if isa_decode::render_word(st.isa, w).is_ok_and(|t| compact(&t) == text) {
                return Some(w);
            }
        }
        for fc in &free_combos {
            let w = word | scatter(*fc, free);
            if isa_decode::render_word(st.isa, w).is_ok_and(|t| compact(&t) == text) {
                return Some(w);
            }
        }
    }
    None
}
