//! Shared by this crate's fuzz targets: a seeded generator, the case counts of
//! the CI run and of the `--ignored` long run, and the seed corpus.
#![allow(dead_code)]

use std::path::PathBuf;

/// SplitMix64: deterministic, so a failing case is reproduced by its seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// Cases of a long run: `WAVEJIT_LONG_CASES`, or `default`.
pub fn long_cases(default: usize) -> usize {
    std::env::var("WAVEJIT_LONG_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The seed corpus of `target`: every file of `tests/fuzz_corpus/<target>/`,
/// sorted by name, with its contents. Missing directory: a test failure (the
/// seeds are part of the target).
pub fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz_corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{}: no seeds", dir.display());
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p.display().to_string(), bytes)
        })
        .collect()
}

/// The hexadecimal numbers of a seed file, one per line; `#` starts a comment.
pub fn hex_lines(text: &[u8]) -> Vec<u64> {
    String::from_utf8_lossy(text)
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(|l| {
            let h = l.trim_start_matches("0x");
            u64::from_str_radix(h, 16).unwrap_or_else(|e| panic!("seed `{l}`: {e}"))
        })
        .collect()
}

/// Peak resident memory a fuzz run may reach: far above what the targets
/// need (tens of MiB), far below what an allocation sized by input would take.
pub const PEAK_RSS_LIMIT: u64 = 1 << 30;

/// Fails when the process's peak resident memory (VmHWM) passed
/// [`PEAK_RSS_LIMIT`]: no case may make the host allocate what its input asks
/// for without a bound. Skipped where /proc is not there.
pub fn assert_peak_rss_bounded() {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return;
    };
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    assert!(
        kib * 1024 <= PEAK_RSS_LIMIT,
        "peak resident memory {kib} KiB exceeds {PEAK_RSS_LIMIT} bytes"
    );
}

/// The end of a lifter target: prints the outcomes (`counts`: refused by the
/// lifter, faulted, ran), fails on any bad case (the first 20 shown), needs
/// enough programs to reach the engines, both ending cleanly and faulting,
/// and checks the memory bound.
pub fn finish_lift_target(cases: usize, counts: [usize; 3], bad: &[String]) {
    let [refused, faulted, ran] = counts;
    eprintln!("{cases} programs: {refused} refused by the lifter, {faulted} faulted, {ran} ran");
    assert!(
        bad.is_empty(),
        "{} programs fail:\n{}",
        bad.len(),
        bad[..bad.len().min(20)].join("\n")
    );
    assert!(ran + faulted > cases / 3 && ran > cases / 10 && faulted > cases / 20);
    assert_peak_rss_bounded();
}
