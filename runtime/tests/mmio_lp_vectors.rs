//! `shared/data/lp_convert_vectors.tsv` through the device and the JIT: one lane
//! per vector row runs the custom conversion on its input word. Skips when the
//! data is absent (fails under CI).

use std::collections::BTreeMap;

use wavejit_frontend::rv32::*;
use wavejit_runtime::mmio::regs::*;
use wavejit_runtime::mmio::{DeviceConfig, GpgpuDevice};

const VECTORS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/data/lp_convert_vectors.tsv"
);

fn op_of(name: &str) -> Option<(LpFormat, LpDirection)> {
    let fmt = |s: &str| match s {
        "bf16" => Some(LpFormat::Bf16),
        "e4m3" => Some(LpFormat::E4m3),
        "e5m2" => Some(LpFormat::E5m2),
        "e2m1" => Some(LpFormat::E2m1),
        _ => None,
    };
    match name.strip_prefix("fcvt.")?.split_once('.')? {
        ("s", f) => Some((fmt(f)?, LpDirection::Widen)),
        (f, "s") => Some((fmt(f)?, LpDirection::Narrow)),
        _ => None,
    }
}

/// Lane i (threadIdx.x from the ID window): f1 = in[i]; f2 = cvt(f1); out[i] = f2.
fn kernel(fmt: LpFormat, dir: LpDirection) -> Vec<u32> {
    let x = XReg;
    let p = [
        Instr::Lui {
            rd: x(5),
            imm: 0x8000_0000,
        },
        Instr::Load {
            kind: LoadKind::Word,
            rd: x(5),
            rs1: x(5),
            offset: 0,
        },
        Instr::OpImm {
            op: AluImmOp::Slli,
            rd: x(5),
            rs1: x(5),
            imm: 2,
        },
        Instr::Lui {
            rd: x(6),
            imm: 0x10_0000,
        },
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
        Instr::Lui {
            rd: x(7),
            imm: 0x20_0000,
        },
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
    p.iter().map(|i| encode(i).expect("encodes")).collect()
}

#[test]
fn lp_vectors_on_the_device_jit() {
    let Ok(text) = std::fs::read_to_string(VECTORS) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "{VECTORS} missing under CI"
        );
        eprintln!("SKIP: {VECTORS} not found");
        return;
    };
    let mut groups: BTreeMap<&str, Vec<(u32, u32, bool)>> = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let c: Vec<&str> = line.split('\t').collect();
        let input = u32::from_str_radix(c[1], 16).expect("hex");
        let want = u32::from_str_radix(c[2], 16).expect("hex");
        let any_nan = c.get(3).is_some_and(|n| n.contains("any NaN"));
        groups.entry(c[0]).or_default().push((input, want, any_nan));
    }
    let mut d = GpgpuDevice::new(DeviceConfig::default()).expect("device");
    let mut checked = 0;
    for (name, rows) in groups {
        let (fmt, dir) = op_of(name).unwrap_or_else(|| panic!("op {name}"));
        let inputs: Vec<u32> = rows.iter().map(|r| r.0).collect();
        d.vram().write_u32s(0, &kernel(fmt, dir)).expect("code");
        d.vram().write_u32s(0x10_0000, &inputs).expect("inputs");
        let mut w = |off: u64, v: u32| d.mmio_write(0, off, 4, u64::from(v));
        w(GLOBAL_CTRL, 1);
        w(KERNEL_ADDR_LO, 0);
        w(GRID_DIM_X, 1);
        w(GRID_DIM_X + 4, 1);
        w(GRID_DIM_X + 8, 1);
        w(BLOCK_DIM_X, rows.len() as u32);
        w(BLOCK_DIM_X + 4, 1);
        w(BLOCK_DIM_X + 8, 1);
        w(DISPATCH, 1);
        assert_eq!(d.mmio_read(0, ERROR_STATUS, 4), 0, "{:?}", d.last_fault());
        assert_eq!(d.last_report().map(|r| r.engine), Some("jit"));
        let got = d.vram().read_u32s(0x20_0000, rows.len()).expect("outputs");
        for (&(input, want, any_nan), &g) in rows.iter().zip(&got) {
            if any_nan {
                assert!(f32::from_bits(g).is_nan(), "{name} {input:#x}: {g:#x}");
            } else {
                assert_eq!(g, want, "{name} {input:#010x}");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 2640);
}
