//! Fuzz-style robustness: random and mutated texts never make the parser panic,
//! and whatever it accepts prints to a fixed point (print -> parse -> print).

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use wavejit_ir::text::{parse, parse_module, print};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// The golden inputs and outputs: realistic texts to mutate.
fn corpus() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut texts = Vec::new();
    for sub in ["in", "out"] {
        let Ok(rd) = fs::read_dir(root.join(sub)) else {
            continue;
        };
        let mut paths: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            if let Ok(t) = fs::read_to_string(&p) {
                texts.push(t);
            }
        }
    }
    texts
}

const SNIPPETS: [&str; 24] = [
    "v",
    "v0",
    "v99",
    "%x",
    "block",
    "block1",
    "(",
    ")",
    "[",
    "]",
    ",",
    ":",
    "=",
    "@",
    "@0x",
    "\"",
    "\n",
    ";",
    "0x",
    "-",
    ".",
    "i32",
    "flags",
    "\u{e9}\u{2028}\u{1f600}",
];

/// One random edit: delete, insert, duplicate or swap lines, replace a word, truncate.
fn mutate(rng: &mut Rng, text: &str, words: &[&str]) -> String {
    let chars: Vec<char> = text.chars().collect();
    let at = rng.below(chars.len() + 1);
    let s: String = match rng.below(7) {
        0 => {
            let end = (at + 1 + rng.below(8)).min(chars.len());
            chars[..at].iter().chain(&chars[end..]).collect()
        }
        1 => {
            let ins = SNIPPETS[rng.below(SNIPPETS.len())];
            chars[..at].iter().collect::<String>() + ins + &chars[at..].iter().collect::<String>()
        }
        2 => {
            let ins = char::from_u32(rng.below(0x250) as u32).unwrap_or('?');
            chars[..at]
                .iter()
                .chain([ins].iter())
                .chain(&chars[at..])
                .collect()
        }
        3 => {
            let mut lines: Vec<&str> = text.lines().collect();
            if !lines.is_empty() {
                let i = rng.below(lines.len());
                let j = rng.below(lines.len());
                lines.swap(i, j);
            }
            lines.join("\n")
        }
        4 => {
            let mut lines: Vec<&str> = text.lines().collect();
            if !lines.is_empty() {
                let i = rng.below(lines.len());
                lines.insert(rng.below(lines.len()), lines[i]);
            }
            lines.join("\n")
        }
        5 => {
            let mut toks: Vec<&str> = text.split(' ').collect();
            if !toks.is_empty() && !words.is_empty() {
                let i = rng.below(toks.len());
                toks[i] = words[rng.below(words.len())];
            }
            toks.join(" ")
        }
        _ => chars[..at].iter().collect(),
    };
    s
}

/// Parses `text`; on success the printout must be a fixed point.
fn check(text: &str) -> Result<bool, String> {
    let outcome = catch_unwind(AssertUnwindSafe(|| parse(text)))
        .map_err(|_| format!("parse panicked on:\n{text}"))?;
    let Ok(kernel) = outcome else {
        return Ok(false);
    };
    let printed = catch_unwind(AssertUnwindSafe(|| print(&kernel)))
        .map_err(|_| format!("print panicked on the parse of:\n{text}"))?;
    match parse(&printed) {
        Ok(again) if print(&again) == printed => Ok(true),
        Ok(_) => Err(format!("not a fixed point:\n{printed}")),
        Err(e) => Err(format!("printout does not parse ({e}):\n{printed}")),
    }
}

#[test]
fn mutated_golden_texts_never_panic() {
    let texts = corpus();
    assert!(
        texts.len() >= 24,
        "golden corpus missing ({} files)",
        texts.len()
    );
    let all: String = texts.join(" ");
    let words: Vec<&str> = all.split_whitespace().collect();
    let mut rng = Rng(0x5eed);
    let (mut accepted, mut rejected) = (0, 0);
    for round in 0..6000 {
        let base = &texts[rng.below(texts.len())];
        let mut text = mutate(&mut rng, base, &words);
        for _ in 0..rng.below(3) {
            text = mutate(&mut rng, &text, &words);
        }
        match check(&text) {
            Ok(true) => accepted += 1,
            Ok(false) => rejected += 1,
            Err(e) => panic!("round {round}: {e}"),
        }
    }
    // Both outcomes must be exercised for the test to mean anything.
    assert!(accepted > 300, "only {accepted} mutants parsed");
    assert!(rejected > 300, "only {rejected} mutants rejected");
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng(42);
    let alphabet: Vec<char> = "kernel@block v0123456789=,:()[]{}\n;\"\\.%-+xe "
        .chars()
        .collect();
    for _ in 0..3000 {
        let len = rng.below(200);
        let text: String = (0..len)
            .map(|_| {
                if rng.below(10) == 0 {
                    char::from_u32(rng.below(0x11_0000) as u32).unwrap_or('\u{fffd}')
                } else {
                    alphabet[rng.below(alphabet.len())]
                }
            })
            .collect();
        if let Err(e) = check(&text) {
            panic!("{e}");
        }
        let _ = catch_unwind(|| parse_module(&text))
            .unwrap_or_else(|_| panic!("parse_module panicked on:\n{text}"));
    }
}
