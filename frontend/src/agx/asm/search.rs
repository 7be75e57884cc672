//! Backtracking search over an instruction's printed items.

use super::super::bits::{scatter, sign_extend, width};
use super::super::decode::decode;
use super::super::spec::{ImmSpec, InstrSpec, ModKind, ModSpec, OperandSpec};
use super::super::tables::{INSTRS, Opcode};
use super::lexer::{Token, parse_int};
use super::operand::operand_choices;

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
pub(super) struct Choice {
    pub mask: u128,
    pub value: u128,
    pub consumes: bool,
}

/// Upper bound on search steps per instruction spec, so hostile input cannot make the
/// backtracking blow up (real lines need a few steps per printed item).
const STEP_BUDGET: usize = 20_000;

struct Search<'a> {
    spec: &'static InstrSpec,
    items: Vec<Item>,
    tokens: &'a [Token],
    canonical: &'a str,
    furthest: usize,
    steps: usize,
}

impl Search<'_> {
    fn dfs(&mut self, i: usize, t: usize, acc: Acc) -> Option<Vec<u8>> {
        self.steps += 1;
        if self.steps > STEP_BUDGET {
            return None;
        }
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

pub(super) fn mask_of(bits: u32) -> u64 {
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

/// Why no encoding was found.
pub(super) enum SearchError {
    UnknownMnemonic,
    /// Index of the furthest operand any candidate reached.
    NoEncoding {
        furthest: usize,
    },
}

/// Tries every instruction spec printed as `mnemonic`, in table order.
pub(super) fn assemble_tokens(
    mnemonic: &str,
    tokens: &[Token],
    canonical: &str,
) -> Result<Vec<u8>, SearchError> {
    let mut any = false;
    let mut furthest = 0;
    for spec in INSTRS.iter().filter(|s| s.display == mnemonic) {
        any = true;
        let mut search = Search {
            spec,
            items: items_of(spec),
            tokens,
            canonical,
            furthest: 0,
            steps: 0,
        };
        let start = Acc::default().deposit(spec.exact_mask, spec.exact_value);
        if let Some(bytes) = start.and_then(|acc| search.dfs(0, 0, acc)) {
            return Ok(bytes);
        }
        furthest = furthest.max(search.furthest);
    }
    if any {
        Err(SearchError::NoEncoding { furthest })
    } else {
        Err(SearchError::UnknownMnemonic)
    }
}
