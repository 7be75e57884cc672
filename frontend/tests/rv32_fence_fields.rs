//! FENCE / FENCE.I with non-zero reserved fields (rd, rs1, fm, FENCE.I's imm) run as
//! the plain instruction (the ISA manual: base implementations ignore them), while
//! the objdump-compatible decoder still reports them (objdump prints `.4byte`).

mod rv32_lift_common;
use rv32_lift_common::run;
use wavejit_frontend::rv32::{Instr, decode, decode_for_execution};

/// The issue-13 encodings: fence with rd = 1, with rs1 = 10, with fm = 1; fence.i
/// with imm = 1, rd = 1, rs1 = 10.
const WORDS: [u32; 6] = [
    0x0ff0_008f,
    0x0ff5_000f,
    0x1230_000f,
    0x0010_100f,
    0x0000_108f,
    0x0005_100f,
];

#[test]
fn reserved_fence_fields_execute() {
    for w in WORDS {
        // addi x5, x0, 7 ; <w> ; sw x5, 0x100(x0) ; ebreak
        let o = run(&[0x0070_0293, w, 0x1050_2023, 0x0010_0073], 1);
        if let Err(e) = &o.result {
            panic!("{w:#010x}: {e} ({:?})", o.trap());
        }
        assert_eq!(o.mem.word(0x100), 7, "{w:#010x}");
    }
}

#[test]
fn execution_decoding_ignores_the_fields_disassembly_does_not() {
    for w in WORDS {
        assert!(decode(w, 0).is_err(), "{w:#010x}: objdump prints .4byte");
        let i = decode_for_execution(w, 0).unwrap_or_else(|e| panic!("{w:#010x}: {e}"));
        let fence_i = w & 0x7000 != 0;
        assert_eq!(matches!(i, Instr::FenceI), fence_i, "{w:#010x}: {i:?}");
    }
    // fm = 1 is a normal fence with the encoded sets (pred r, succ rw).
    match decode_for_execution(0x1230_000f, 0) {
        Ok(Instr::Fence { pred, succ }) => assert_eq!((pred.0, succ.0), (2, 3)),
        other => panic!("{other:?}"),
    }
    // Other MISC-MEM funct3 values stay illegal.
    assert!(decode_for_execution(0x0000_200f, 0).is_err());
}
