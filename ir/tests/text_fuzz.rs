//! Fuzz target of the IR text parser: the seeds of `tests/fuzz_corpus/ir_text/`
//! first, then random and mutated texts. The parser never panics (it runs
//! directly: a panic fails the test; `WAVEJIT_FUZZ_TRACE=1` prints each input
//! first), whatever it accepts prints to a fixed point (print -> parse ->
//! print), and every kernel it accepts, verified or not, runs on the golden
//! interpreter under a step limit and a time budget without panicking, within
//! the budget, and without allocating what its declarations ask past the
//! engines' limits (issue 14 item 3).

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use wavejit_ir::interp::Interpreter;
use wavejit_ir::text::{parse, parse_module, print};
use wavejit_ir::{Budget, Dispatch, Engine, Kernel, NoGlobalMemory};

#[path = "../../frontend/tests/fuzz_support/mod.rs"]
mod fuzz_support;

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

/// Runs `kernel` on two workgroups of four lanes on the interpreter.
fn run(kernel: &Kernel) -> Result<(), String> {
    let mut d = Dispatch::new([2, 1, 1], [4, 1, 1]);
    d.wave_size = 4;
    d.step_limit = 1_000;
    d.uniforms = vec![0; 64];
    d.budget = Budget {
        time_limit: Some(Duration::from_millis(500)),
        max_work_items: 1 << 16,
        cancel: None,
    };
    let start = Instant::now();
    let _ = Interpreter.run(kernel, &d, &NoGlobalMemory);
    let took = start.elapsed();
    if took > Duration::from_secs(3) {
        return Err(format!("the interpreter took {took:?}"));
    }
    Ok(())
}

/// Parses `text`; on success the printout must be a fixed point and the kernel
/// must run.
fn check(text: &str) -> Result<bool, String> {
    if std::env::var_os("WAVEJIT_FUZZ_TRACE").is_some() {
        eprintln!("---- input\n{text}");
    }
    let Ok(kernel) = parse(text) else {
        return Ok(false);
    };
    let printed = print(&kernel);
    match parse(&printed) {
        Ok(again) if print(&again) == printed => {}
        Ok(_) => return Err(format!("not a fixed point:\n{printed}")),
        Err(e) => return Err(format!("printout does not parse ({e}):\n{printed}")),
    }
    let _ = wavejit_ir::verify::verify(&kernel);
    run(&kernel).map_err(|e| format!("{e}:\n{text}"))?;
    Ok(true)
}

/// The seeds: issue 14's texts and whatever else crashed once.
fn seeds() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_corpus/ir_text");
    let mut paths: Vec<_> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let t = fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p.display().to_string(), t)
        })
        .collect()
}

#[test]
fn seeds_parse_and_run_within_limits() {
    let seeds = seeds();
    assert!(seeds.len() >= 2, "seed corpus missing");
    for (name, text) in seeds {
        // Each seed is a kernel the parser accepts (what it exercises is the run).
        assert_eq!(check(&text), Ok(true), "{name}");
    }
}

fn mutated(seed: u64, rounds: usize) {
    let mut texts = corpus();
    assert!(
        texts.len() >= 24,
        "golden corpus missing ({} files)",
        texts.len()
    );
    texts.extend(seeds().into_iter().map(|(_, t)| t));
    let all: String = texts.join(" ");
    let words: Vec<&str> = all.split_whitespace().collect();
    let mut rng = Rng(seed);
    let (mut accepted, mut rejected) = (0, 0);
    for round in 0..rounds {
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
    assert!(accepted > rounds / 20, "only {accepted} mutants parsed");
    assert!(rejected > rounds / 20, "only {rejected} mutants rejected");
    fuzz_support::assert_peak_rss_bounded();
}

#[test]
fn mutated_golden_texts_never_panic() {
    mutated(0x5eed, 6000);
}

/// `WAVEJIT_LONG_CASES` mutants (default 200,000) from another seed.
#[test]
#[ignore]
fn mutated_golden_texts_never_panic_long() {
    let rounds = std::env::var("WAVEJIT_LONG_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000);
    mutated(0x5eed_0002, rounds);
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
        let _ = parse_module(&text);
    }
}
