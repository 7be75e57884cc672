//! Differential test of the RV32 disassembler against GNU objdump (binutils 2.40,
//! Debian package `binutils-riscv64-unknown-elf`).
//!
//! Generates seeded random valid encodings of every instruction class (all rounding
//! modes, every CSR form, alias-triggering operands such as x0/ra/equal registers and
//! special immediates), writes them as a raw binary, runs
//! `riscv64-unknown-elf-objdump -D -b binary -m riscv:rv32 [-M ...]` and compares the
//! instruction column line by line, including objdump's `# 0x...` address comments
//! (which depend on earlier lui/auipc, so whole programs are compared).
//!
//! objdump does not know the device's custom conversions and prints them as
//! `.4byte 0x...`; for those words that is what is expected (which also proves that
//! the encodings do not collide with a standard instruction in objdump's default ISA).
//!
//! Without objdump on PATH the test is skipped with a message, unless `CI` is set.

use std::path::PathBuf;
use std::process::Command;

use wavejit_frontend::rv32::{DecodeErrorKind, DisasmOptions, Instr, decode, disasm_program_with};

const OBJDUMP: &str = "riscv64-unknown-elf-objdump";

/// SplitMix64: tiny deterministic generator, good enough for test-case selection.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u32) -> u32 {
        (self.next() % u64::from(n)) as u32
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u32) as usize]
    }
    fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent
    }
    /// Register biased towards a few "hot" numbers (x0, ra, tp, a0, a1) so that alias
    /// forms trigger and lui/auipc values get consumed by later address uses.
    fn reg(&mut self) -> u32 {
        if self.chance(50) {
            self.pick(&[0, 1, 4, 10, 11])
        } else {
            self.below(32)
        }
    }
    /// 12-bit signed immediate biased towards alias triggers and extremes.
    fn imm12(&mut self) -> i32 {
        if self.chance(40) {
            self.pick(&[0, 1, -1, 255, 2047, -2048, 4, -4])
        } else {
            self.below(4096) as i32 - 2048
        }
    }
}

fn r_type(f7: u32, rs2: u32, rs1: u32, f3: u32, rd: u32, op: u32) -> u32 {
    (f7 << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op
}
fn i_type(imm: i32, rs1: u32, f3: u32, rd: u32, op: u32) -> u32 {
    (((imm as u32) & 0xFFF) << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op
}
fn s_type(imm: i32, rs2: u32, rs1: u32, f3: u32, op: u32) -> u32 {
    let imm = imm as u32;
    (((imm >> 5) & 0x7F) << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | ((imm & 0x1F) << 7) | op
}
fn b_type(off: i32, rs2: u32, rs1: u32, f3: u32) -> u32 {
    let o = off as u32;
    (((o >> 12) & 1) << 31)
        | (((o >> 5) & 0x3F) << 25)
        | (rs2 << 20)
        | (rs1 << 15)
        | (f3 << 12)
        | (((o >> 1) & 0xF) << 8)
        | (((o >> 11) & 1) << 7)
        | 0x63
}
fn j_type(off: i32, rd: u32) -> u32 {
    let o = off as u32;
    (((o >> 20) & 1) << 31)
        | (((o >> 1) & 0x3FF) << 21)
        | (((o >> 11) & 1) << 20)
        | (((o >> 12) & 0xFF) << 12)
        | (rd << 7)
        | 0x6F
}

const VALID_RM: [u32; 6] = [0, 1, 2, 3, 4, 7];
const CSRS: [u32; 4] = [0x001, 0x002, 0x003, 0xF14];

type Gen = fn(&mut Rng) -> u32;

/// One generator per instruction class; names are reported in the coverage summary.
const CLASSES: &[(&str, Gen)] = &[
    ("lui", |r| {
        (r.next() as u32 & 0xFFFF_F000) | (r.reg() << 7) | 0x37
    }),
    ("auipc", |r| {
        let imm = if r.chance(30) {
            0
        } else {
            r.next() as u32 & 0xFFFF_F000
        };
        imm | (r.reg() << 7) | 0x17
    }),
    ("jal", |r| {
        let off = if r.chance(30) {
            r.below(64) as i32 * 2 - 64
        } else {
            (r.below(1 << 20) as i32 - (1 << 19)) * 2
        };
        let rd = r.pick(&[0, 1, 0, 1, 5, 10, 31]);
        j_type(off, rd)
    }),
    ("jalr", |r| {
        let rd = r.pick(&[0, 1, 5, 10]);
        let rs1 = r.pick(&[0, 1, 4, 10, 11, 17]);
        let imm = if r.chance(50) { 0 } else { r.imm12() };
        i_type(imm, rs1, 0, rd, 0x67)
    }),
    ("branch", |r| {
        let f3 = r.pick(&[0, 1, 4, 5, 6, 7]);
        let off = (r.below(4096) as i32 - 2048) * 2;
        b_type(off, r.reg(), r.reg(), f3)
    }),
    ("load", |r| {
        let f3 = r.pick(&[0, 1, 2, 4, 5]);
        i_type(r.imm12(), r.reg(), f3, r.reg(), 0x03)
    }),
    ("store", |r| {
        let f3 = r.pick(&[0, 1, 2]);
        s_type(r.imm12(), r.reg(), r.reg(), f3, 0x23)
    }),
    ("op-imm", |r| {
        let f3 = r.pick(&[0, 0, 2, 3, 4, 6, 7]);
        i_type(r.imm12(), r.reg(), f3, r.reg(), 0x13)
    }),
    ("shift-imm", |r| {
        let (f3, f7) = r.pick(&[(1, 0), (5, 0), (5, 0x20)]);
        r_type(f7, r.below(32), r.reg(), f3, r.reg(), 0x13)
    }),
    ("op", |r| {
        let f7 = r.pick(&[0, 0x20, 1]);
        let f3 = if f7 == 0x20 {
            r.pick(&[0, 5])
        } else {
            r.below(8)
        };
        r_type(f7, r.reg(), r.reg(), f3, r.reg(), 0x33)
    }),
    ("fence", |r| match r.below(4) {
        0 => 0x0FF0_000F,
        1 => 0x8330_000F,
        2 => 0x0000_100F,
        _ => (r.below(16) << 24) | (r.below(16) << 20) | 0x0F,
    }),
    ("ecall/ebreak", |r| r.pick(&[0x0000_0073, 0x0010_0073])),
    ("csr", |r| {
        loop {
            let csr = r.pick(&CSRS);
            let f3 = r.pick(&[1, 2, 3, 5, 6, 7]);
            let rs1 = if r.chance(40) { 0 } else { r.reg() };
            let writes = f3 == 1 || f3 == 5 || rs1 != 0;
            if csr == 0xF14 && writes {
                continue; // mhartid is read-only: such words are decode errors
            }
            break (csr << 20) | (rs1 << 15) | (f3 << 12) | (r.reg() << 7) | 0x73;
        }
    }),
    ("flw", |r| i_type(r.imm12(), r.reg(), 2, r.below(32), 0x07)),
    ("fsw", |r| s_type(r.imm12(), r.below(32), r.reg(), 2, 0x27)),
    ("fma", |r| {
        let op = r.pick(&[0x43, 0x47, 0x4B, 0x4F]);
        let rs3 = r.below(32);
        (rs3 << 27)
            | r_type(
                0,
                r.below(32),
                r.below(32),
                r.pick(&VALID_RM),
                r.below(32),
                op,
            )
    }),
    ("fp-arith", |r| {
        let f7 = r.pick(&[0x00, 0x04, 0x08, 0x0C]);
        r_type(
            f7,
            r.below(32),
            r.below(32),
            r.pick(&VALID_RM),
            r.below(32),
            0x53,
        )
    }),
    ("fsqrt", |r| {
        r_type(0x2C, 0, r.below(32), r.pick(&VALID_RM), r.below(32), 0x53)
    }),
    ("fsgnj", |r| {
        let rs1 = r.below(32);
        let rs2 = if r.chance(50) { rs1 } else { r.below(32) };
        r_type(0x10, rs2, rs1, r.below(3), r.below(32), 0x53)
    }),
    ("fmin/fmax", |r| {
        r_type(
            0x14,
            r.below(32),
            r.below(32),
            r.below(2),
            r.below(32),
            0x53,
        )
    }),
    ("fcmp", |r| {
        r_type(0x50, r.below(32), r.below(32), r.below(3), r.reg(), 0x53)
    }),
    ("fcvt-int", |r| {
        let f7 = r.pick(&[0x60, 0x68]);
        r_type(
            f7,
            r.below(2),
            r.below(32),
            r.pick(&VALID_RM),
            r.below(32),
            0x53,
        )
    }),
    ("fmv/fclass", |r| {
        let (f7, f3) = r.pick(&[(0x70, 0), (0x70, 1), (0x78, 0)]);
        r_type(f7, 0, r.below(32), f3, r.below(32), 0x53)
    }),
    ("lp-convert", |r| {
        let (f7, rs2) = r.pick(&[
            (0x22, 0),
            (0x22, 1),
            (0x24, 0),
            (0x24, 1),
            (0x24, 2),
            (0x24, 3),
            (0x26, 0),
            (0x26, 1),
        ]);
        let rm = if r.chance(70) { 0 } else { r.below(8) };
        r_type(f7, rs2, r.below(32), rm, r.below(32), 0x53)
    }),
];

/// Deterministic enumeration of the alias-relevant corners, so coverage does not
/// depend on luck: every CSR x funct3 x (rd, source) zero/non-zero form that the
/// device accepts, every valid rounding mode of every rm-bearing op, every custom
/// conversion with every rm field value, and the special operand patterns of
/// branches, jalr and the OP-IMM aliases.
fn exhaustive_forms() -> Vec<u32> {
    let mut words = Vec::new();
    for csr in CSRS {
        for f3 in [1, 2, 3, 5, 6, 7] {
            for rd in [0, 10] {
                for rs1 in [0, 11] {
                    let writes = f3 == 1 || f3 == 5 || rs1 != 0;
                    if csr == 0xF14 && writes {
                        continue;
                    }
                    words.push((csr << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | 0x73);
                }
            }
        }
    }
    for rm in VALID_RM {
        for op in [0x43, 0x47, 0x4B, 0x4F] {
            words.push((13 << 27) | r_type(0, 12, 11, rm, 10, op));
        }
        for f7 in [0x00, 0x04, 0x08, 0x0C] {
            words.push(r_type(f7, 12, 11, rm, 10, 0x53));
        }
        words.push(r_type(0x2C, 0, 11, rm, 10, 0x53));
        for (f7, rs2) in [(0x60, 0), (0x60, 1), (0x68, 0), (0x68, 1)] {
            words.push(r_type(f7, rs2, 11, rm, 10, 0x53));
        }
    }
    for (f7, rs2) in [
        (0x22, 0),
        (0x22, 1),
        (0x24, 0),
        (0x24, 1),
        (0x24, 2),
        (0x24, 3),
        (0x26, 0),
        (0x26, 1),
    ] {
        for rm in 0..8 {
            words.push(r_type(f7, rs2, 1, rm, 2, 0x53));
        }
    }
    for f3 in [0, 1, 4, 5, 6, 7] {
        for (rs1, rs2) in [(10, 11), (0, 11), (10, 0), (0, 0)] {
            words.push(b_type(-8, rs2, rs1, f3));
        }
    }
    for rd in [0, 1, 5] {
        for rs1 in [0, 1, 4, 10] {
            for imm in [0, 4] {
                words.push(i_type(imm, rs1, 0, rd, 0x67));
            }
        }
    }
    for f3 in [0, 2, 3, 4, 6, 7] {
        for (rd, rs1) in [(10, 11), (0, 0), (10, 0), (0, 11)] {
            for imm in [0, 1, -1, 255, 5] {
                words.push(i_type(imm, rs1, f3, rd, 0x13));
            }
        }
    }
    for f3 in 0..8 {
        for (rs1, rs2) in [(11, 12), (0, 12), (11, 0), (0, 0)] {
            words.push(r_type(0, rs2, rs1, f3, 10, 0x33));
        }
    }
    words.push(r_type(0x20, 12, 0, 0, 10, 0x33));
    words.push(r_type(0x20, 0, 0, 0, 10, 0x33));
    for pred in 0..16 {
        words.push((pred << 24) | ((15 - pred) << 20) | 0x0F);
    }
    words
}

fn objdump_available() -> bool {
    Command::new(OBJDUMP)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Returns true if the test may run; skips (or fails under CI) otherwise.
fn require_objdump() -> bool {
    if objdump_available() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{OBJDUMP} not found on PATH but CI is set (apt-get install binutils-riscv64-unknown-elf)"
    );
    eprintln!("SKIP: {OBJDUMP} not on PATH (apt-get install binutils-riscv64-unknown-elf)");
    false
}

fn temp_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("wavejit-rv32-{}-{name}", std::process::id()))
}

/// Runs objdump on `words` placed at `base` and returns the instruction column of
/// every line.
fn objdump_lines(words: &[u32], base: u32, m_opts: Option<&str>, tag: &str) -> Vec<String> {
    let path = temp_path(&format!("{tag}.bin"));
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(&path, &bytes).expect("write temp binary");
    let mut cmd = Command::new(OBJDUMP);
    cmd.args(["-D", "-b", "binary", "-m", "riscv:rv32"]);
    cmd.arg(format!("--adjust-vma={base:#x}"));
    if let Some(m) = m_opts {
        cmd.args(["-M", m]);
    }
    cmd.arg(&path);
    let out = cmd.output().expect("run objdump");
    let _ = std::fs::remove_file(&path);
    assert!(
        out.status.success(),
        "objdump failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            // "   1c:\td00300d3          \tfcvt.s.w\tft1,t1,rne"
            let (addr, rest) = line.split_once(":\t")?;
            if addr.trim().is_empty() || !addr.trim().chars().all(|c| c.is_ascii_hexdigit()) {
                return None;
            }
            let (_hex, text) = rest.split_once('\t')?;
            Some(text.to_string())
        })
        .collect()
}

/// What objdump should print for each word: our text, except `.4byte` for the custom
/// conversions it does not know.
fn expected_lines(words: &[u32], base: u32, opts: DisasmOptions) -> Vec<String> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let ours = disasm_program_with(&bytes, base, opts).expect("all generated words decode");
    ours.into_iter()
        .zip(words)
        .enumerate()
        .map(|(i, (text, &w))| {
            let pc = base.wrapping_add(i as u32 * 4);
            match decode(w, pc) {
                Ok(Instr::LpConvert { .. }) => format!(".4byte\t{w:#x}"),
                _ => text,
            }
        })
        .collect()
}

/// Compares one objdump flavour; returns the number of mismatching lines.
fn compare(
    words: &[u32],
    base: u32,
    opts: DisasmOptions,
    m_opts: Option<&str>,
    tag: &str,
) -> usize {
    let theirs = objdump_lines(words, base, m_opts, tag);
    let ours = expected_lines(words, base, opts);
    assert_eq!(
        theirs.len(),
        ours.len(),
        "[{tag}] objdump printed {} instruction lines for {} words",
        theirs.len(),
        ours.len()
    );
    let mut mismatches = 0;
    for (i, (t, o)) in theirs.iter().zip(&ours).enumerate() {
        if t != o {
            mismatches += 1;
            if mismatches <= 20 {
                let pc = base.wrapping_add(i as u32 * 4);
                eprintln!(
                    "[{tag}] pc {pc:#010x} word {:#010x}: objdump `{t}` ours `{o}`",
                    words[i]
                );
            }
        }
    }
    eprintln!(
        "[{tag}] {} words compared, {mismatches} mismatches",
        ours.len()
    );
    mismatches
}

const FLAVOURS: [(&str, DisasmOptions, Option<&str>); 4] = [
    ("default", DisasmOptions::OBJDUMP, None),
    ("no-aliases", DisasmOptions::NO_ALIASES, Some("no-aliases")),
    (
        "numeric",
        DisasmOptions {
            aliases: true,
            numeric_regs: true,
        },
        Some("numeric"),
    ),
    (
        "numeric,no-aliases",
        DisasmOptions {
            aliases: false,
            numeric_regs: true,
        },
        Some("numeric,no-aliases"),
    ),
];

#[test]
fn directed_random_encodings_match_objdump() {
    if !require_objdump() {
        return;
    }
    const PER_CLASS: usize = 250;
    let mut rng = Rng(0x5EED_2026_0001);
    let mut words = Vec::new();
    for _ in 0..PER_CLASS {
        for (_, generate) in CLASSES {
            words.push(generate(&mut rng));
        }
    }
    let directed = words.len();
    let corners = exhaustive_forms();
    words.extend(&corners);
    // Every generated word must be accepted by the decoder.
    for (i, &w) in words.iter().enumerate() {
        let class = CLASSES
            .get(i % CLASSES.len())
            .filter(|_| i < directed)
            .map_or("corner", |c| c.0);
        assert!(
            decode(w, 0).is_ok(),
            "{class} generator produced undecodable {w:#010x}: {:?}",
            decode(w, 0)
        );
    }
    let mut total = 0;
    for (tag, opts, m) in FLAVOURS {
        total += compare(&words, 0, opts, m, tag);
    }
    // A high base makes branch/jal targets and auipc sums wrap around 2^32.
    total += compare(
        &words,
        0xFFFF_F000,
        DisasmOptions::OBJDUMP,
        None,
        "default@0xfffff000",
    );
    eprintln!(
        "{} classes x {PER_CLASS} = {directed} random + {} corner words, 5 flavours: {total} mismatches",
        CLASSES.len(),
        corners.len()
    );
    assert_eq!(
        total, 0,
        "disassembly differs from objdump (first mismatches above)"
    );
}

#[test]
fn arbitrary_words_accepted_by_decoder_match_objdump() {
    if !require_objdump() {
        return;
    }
    // Uniformly random 32-bit words (low bits forced to 0b11): whatever the decoder
    // accepts must print exactly as objdump prints it.
    let mut rng = Rng(0x5EED_2026_0002);
    let mut accepted = Vec::new();
    let mut tried = 0;
    while accepted.len() < 3000 {
        tried += 1;
        let w = (rng.next() as u32) | 0b11;
        if decode(w, 0).is_ok() {
            accepted.push(w);
        }
    }
    eprintln!("{tried} random words tried, {} accepted", accepted.len());
    let mut total = 0;
    for (tag, opts, m) in FLAVOURS {
        total += compare(&accepted, 0, opts, m, &format!("random-{tag}"));
    }
    assert_eq!(
        total, 0,
        "disassembly differs from objdump (first mismatches above)"
    );
}

/// Mnemonics (objdump `-M no-aliases`) of everything the device profile contains.
const PROFILE_MNEMONICS: &[&str] = &[
    "lui",
    "auipc",
    "jal",
    "jalr",
    "beq",
    "bne",
    "blt",
    "bge",
    "bltu",
    "bgeu",
    "lb",
    "lh",
    "lw",
    "lbu",
    "lhu",
    "sb",
    "sh",
    "sw",
    "addi",
    "slti",
    "sltiu",
    "xori",
    "ori",
    "andi",
    "slli",
    "srli",
    "srai",
    "add",
    "sub",
    "sll",
    "slt",
    "sltu",
    "xor",
    "srl",
    "sra",
    "or",
    "and",
    "mul",
    "mulh",
    "mulhsu",
    "mulhu",
    "div",
    "divu",
    "rem",
    "remu",
    "fence",
    "fence.tso",
    "fence.i",
    "ecall",
    "ebreak",
    "csrrw",
    "csrrs",
    "csrrc",
    "csrrwi",
    "csrrsi",
    "csrrci",
    "flw",
    "fsw",
    "fmadd.s",
    "fmsub.s",
    "fnmsub.s",
    "fnmadd.s",
    "fadd.s",
    "fsub.s",
    "fmul.s",
    "fdiv.s",
    "fsqrt.s",
    "fsgnj.s",
    "fsgnjn.s",
    "fsgnjx.s",
    "fmin.s",
    "fmax.s",
    "feq.s",
    "flt.s",
    "fle.s",
    "fclass.s",
    "fcvt.w.s",
    "fcvt.wu.s",
    "fcvt.s.w",
    "fcvt.s.wu",
    "fmv.x.w",
    "fmv.w.x",
];

#[test]
fn rejected_words_are_outside_the_profile() {
    if !require_objdump() {
        return;
    }
    // The decoder must not over-reject: a random 32-bit word it refuses may be an
    // instruction of another extension (A, D, C, privileged ...) but never one of the
    // profile's own mnemonics, except for the checks objdump does not make (CSR
    // number/read-only, reserved rounding modes, RV32 shift amounts).
    let mut rng = Rng(0x5EED_2026_0003);
    let mut rejected = Vec::new();
    while rejected.len() < 3000 {
        let w = (rng.next() as u32) | 0b11;
        match decode(w, 0) {
            // objdump would consume 48/64-bit encodings as longer units.
            Err(e) if e.kind != DecodeErrorKind::LongEncoding => rejected.push((w, e.kind)),
            _ => {}
        }
    }
    let words: Vec<u32> = rejected.iter().map(|&(w, _)| w).collect();
    let theirs = objdump_lines(&words, 0, Some("no-aliases"), "rejected");
    assert_eq!(theirs.len(), words.len());
    let mut in_profile = 0;
    let mut other_isa = 0;
    for ((word, kind), text) in rejected.iter().zip(&theirs) {
        let mnemonic = text.split('\t').next().unwrap_or("");
        if !PROFILE_MNEMONICS.contains(&mnemonic) {
            if !mnemonic.starts_with('.') {
                other_isa += 1;
            }
            continue;
        }
        let explained = matches!(
            kind,
            DecodeErrorKind::UnsupportedCsr(_)
                | DecodeErrorKind::ReadOnlyCsrWrite(_)
                | DecodeErrorKind::ReservedRoundingMode(_)
                // objdump accepts RV64 shift amounts (shamt[5] = 1) even for rv32.
                | DecodeErrorKind::InvalidEncoding("shift-immediate")
        );
        if !explained {
            in_profile += 1;
            eprintln!("over-rejected {word:#010x} ({kind}): objdump `{text}`");
        }
    }
    eprintln!(
        "{} rejected words: {other_isa} are other-extension instructions, {in_profile} wrongly rejected",
        rejected.len()
    );
    assert_eq!(in_profile, 0);
}
