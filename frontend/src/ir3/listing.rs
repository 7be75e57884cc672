//! Whole-program listings as mesa's `isa_disasm` prints them: words nothing decodes
//! become mesa's raw line and the listing goes on; label mode (mesa's
//! `branch_labels`) names branch targets `lN` and puts an `lN:` line before each.

use super::isa_decode::{self, LabelCtx};
use super::{DecodeError, Gpu};

/// How to print a listing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ListingOptions {
    /// Branch-label mode: `#l45` targets and `l45:` lines instead of `#13`.
    pub labels: bool,
}

/// A program's text and the words that did not decode (with their offsets).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing {
    /// Output lines in order (label lines included).
    pub lines: Vec<String>,
    /// One [`DecodeError::AtOffset`] per undecodable word, in program order.
    pub undecodable: Vec<DecodeError>,
}

/// mesa's `print_raw` (its `no_match_cb`): `raw 0x` then the low and the high
/// 32-bit halves, each `%X` without padding, so 0xffffffff00000012 prints
/// `raw 0x12FFFFFFFF`. Copied as mesa prints it, ambiguity and all.
pub fn raw_line(word: u64) -> String {
    format!("raw 0x{:X}{:X}", word as u32, (word >> 32) as u32)
}

/// The listing of an a630 program.
pub fn disasm_listing(words: &[u64], opts: ListingOptions) -> Listing {
    disasm_listing_for(Gpu::A6xx, words, opts)
}

/// [`disasm_listing`] for another generation.
pub fn disasm_listing_for(gpu: Gpu, words: &[u64], opts: ListingOptions) -> Listing {
    let isa = gpu.isa();
    let num_instr = u32::try_from(words.len()).unwrap_or(u32::MAX);
    let mut labels = LabelCtx {
        num_instr,
        ..LabelCtx::default()
    };
    let mut texts = Vec::with_capacity(words.len());
    let mut undecodable = Vec::new();
    for (i, &word) in words.iter().enumerate() {
        let rendered = if opts.labels {
            labels.n = i as u32;
            isa_decode::render_word_labeled(isa, word, &mut labels)
        } else {
            isa_decode::render_word(isa, word)
        };
        texts.push(rendered.unwrap_or_else(|reason| {
            undecodable.push(DecodeError::AtOffset {
                word,
                offset: i * 8,
                reason,
            });
            raw_line(word)
        }));
    }
    let mut is_target = vec![false; words.len()];
    for &t in &labels.targets {
        is_target[t as usize] = true;
    }
    let mut lines = Vec::with_capacity(texts.len() + labels.targets.len());
    for (i, text) in texts.into_iter().enumerate() {
        if is_target[i] {
            lines.push(format!("l{i}:"));
        }
        lines.push(text);
    }
    Listing { lines, undecodable }
}
