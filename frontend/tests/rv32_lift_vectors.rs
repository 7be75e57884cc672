//! The 2640 conversion vectors of `shared/data/lp_convert_vectors.tsv` through the
//! lifted custom instructions: one lane per row loads the input word, moves it to
//! f1, converts with the custom op, moves the result back and stores it.
//! Skips when the data is absent (fails under CI).

mod rv32_lift_common;

use std::collections::BTreeMap;

use rv32_lift_common::{run_with, words_of};
use wavejit_frontend::rv32::lift::LiftConfig;
use wavejit_frontend::rv32::*;

const VECTORS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/data/lp_convert_vectors.tsv"
);

const IN: u32 = 0x1_0000;
const OUT: u32 = 0x4_0000;

fn op_of(name: &str) -> Option<(LpFormat, LpDirection)> {
    let fmt = |s: &str| match s {
        "bf16" => Some(LpFormat::Bf16),
        "e4m3" => Some(LpFormat::E4m3),
        "e5m2" => Some(LpFormat::E5m2),
        "e2m1" => Some(LpFormat::E2m1),
        _ => None,
    };
    let rest = name.strip_prefix("fcvt.")?;
    match rest.split_once('.')? {
        ("s", f) => Some((fmt(f)?, LpDirection::Widen)),
        (f, "s") => Some((fmt(f)?, LpDirection::Narrow)),
        _ => None,
    }
}

/// lane = mhartid & 31 + 32 * warp: the local index; in = IN + 4*lane.
fn kernel(fmt: LpFormat, dir: LpDirection) -> Vec<u32> {
    let x = XReg;
    let p = [
        Instr::Csr {
            op: CsrOp::ReadSet,
            rd: x(5),
            csr: Csr::Mhartid,
            src: CsrSrc::Reg(XReg::ZERO),
        },
        Instr::OpImm {
            op: AluImmOp::Slli,
            rd: x(5),
            rs1: x(5),
            imm: 2,
        },
        Instr::Lui { rd: x(6), imm: IN },
        Instr::Op {
            op: AluOp::Add,
            rd: x(6),
            rs1: x(6),
            rs2: x(5),
        },
        Instr::Flw {
            rd: FReg(1),
            rs1: x(6),
            offset: 0,
        },
        Instr::LpConvert {
            fmt,
            dir,
            rd: FReg(2),
            rs1: FReg(1),
            rm_field: 0,
        },
        Instr::Lui { rd: x(7), imm: OUT },
        Instr::Op {
            op: AluOp::Add,
            rd: x(7),
            rs1: x(7),
            rs2: x(5),
        },
        Instr::Fsw {
            rs1: x(7),
            rs2: FReg(2),
            offset: 0,
        },
        Instr::Ebreak,
    ];
    words_of(&p)
}

fn is_f32_nan(bits: u32) -> bool {
    bits & 0x7f80_0000 == 0x7f80_0000 && bits & 0x007f_ffff != 0
}

#[test]
fn lp_convert_vectors_through_lifted_instructions() {
    let Ok(text) = std::fs::read_to_string(VECTORS) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "{VECTORS} missing under CI"
        );
        eprintln!("SKIP: {VECTORS} not found");
        return;
    };
    let mut groups: BTreeMap<String, Vec<(u32, u32, bool)>> = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let cols: Vec<&str> = line.split('\t').collect();
        assert!(cols.len() >= 3, "bad row {line:?}");
        let input = u32::from_str_radix(cols[1], 16).expect("hex input");
        let expected = u32::from_str_radix(cols[2], 16).expect("hex expected");
        let any_nan = cols.get(3).is_some_and(|n| n.contains("any NaN"));
        groups
            .entry(cols[0].to_string())
            .or_default()
            .push((input, expected, any_nan));
    }
    let mut matched = 0;
    for (name, rows) in &groups {
        let (fmt, dir) = op_of(name).unwrap_or_else(|| panic!("unknown op {name}"));
        let inputs: Vec<u32> = rows.iter().map(|r| r.0).collect();
        let lanes = rows.len() as u32;
        let o = run_with(
            &kernel(fmt, dir),
            &[(IN as usize, inputs)],
            [1, 1, 1],
            [lanes, 1, 1],
            LiftConfig::default(),
        );
        if let Err(e) = &o.result {
            panic!("{name}: fault {e}");
        }
        let got = o.mem.words(OUT as usize, rows.len());
        for (&(input, expected, any_nan), &g) in rows.iter().zip(&got) {
            if any_nan {
                assert!(is_f32_nan(g), "{name} {input:#x}: {g:#010x} is not a NaN");
            } else {
                assert_eq!(g, expected, "{name} input {input:#010x}");
            }
            matched += 1;
        }
    }
    assert_eq!(matched, 2640, "every vector row checked");
}

/// NaN and sign rules the vectors leave open (datasheet §7.3 recommendations).
#[test]
fn lp_convert_nan_rules() {
    let cases: [(LpFormat, u32, u32); 6] = [
        (LpFormat::E4m3, 0x7fc0_0000, 0x7f),
        (LpFormat::E4m3, 0xffc0_0000, 0xff),
        (LpFormat::E2m1, 0x7fc0_0000, 0x7),
        (LpFormat::E2m1, 0xffc0_0000, 0xf),
        (LpFormat::Bf16, 0x7fc0_0000, 0x7fc0),
        (LpFormat::E5m2, 0x7f80_0000, 0x7b),
    ];
    for (fmt, input, want) in cases {
        let o = run_with(
            &kernel(fmt, LpDirection::Narrow),
            &[(IN as usize, vec![input])],
            [1, 1, 1],
            [1, 1, 1],
            LiftConfig::default(),
        );
        assert!(o.result.is_ok());
        assert_eq!(o.mem.word(OUT as usize), want, "{fmt:?} of {input:#x}");
    }
}
