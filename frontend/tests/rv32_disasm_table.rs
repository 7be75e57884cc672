//! Fixed RV32 decode/disassembly vectors that always run (no external tools).
//! Expected texts were produced by GNU objdump 2.40 (`-D -b binary -m riscv:rv32`,
//! default and `-M no-aliases`), each word disassembled as the first of a file.

use wavejit_frontend::rv32::{
    AluImmOp, Csr, CsrOp, CsrSrc, DecodeErrorKind, DisasmOptions, FReg, FmaOp, Instr, LpDirection,
    LpFormat, RoundingMode, XReg, decode, disasm, disasm_listing, disasm_program, disasm_with,
};

/// (word, pc, objdump default, objdump -M no-aliases)
const TABLE: &[(u32, u32, &str, &str)] = &[
    (0xF140_2373, 0, "csrr\tt1,mhartid", "csrrs\tt1,mhartid,zero"),
    (0x01F3_7313, 0, "and\tt1,t1,31", "andi\tt1,t1,31"),
    (0x0023_1393, 0, "sll\tt2,t1,0x2", "slli\tt2,t1,0x2"),
    (0x0000_1E37, 0, "lui\tt3,0x1", "lui\tt3,0x1"),
    (0x007E_0E33, 0, "add\tt3,t3,t2", "add\tt3,t3,t2"),
    (0x006E_2023, 0, "sw\tt1,0(t3)", "sw\tt1,0(t3)"),
    (0x0010_0073, 0, "ebreak", "ebreak"),
    (0x0000_0073, 0, "ecall", "ecall"),
    (
        0xD003_00D3,
        0,
        "fcvt.s.w\tft1,t1,rne",
        "fcvt.s.w\tft1,t1,rne",
    ),
    (
        0x1020_8253,
        0,
        "fmul.s\tft4,ft1,ft2,rne",
        "fmul.s\tft4,ft1,ft2,rne",
    ),
    (
        0xC002_93D3,
        0,
        "fcvt.w.s\tt2,ft5,rtz",
        "fcvt.w.s\tt2,ft5,rtz",
    ),
    (0xF004_80D3, 0, "fmv.w.x\tft1,s1", "fmv.w.x\tft1,s1"),
    (0x0000_006F, 0x2C, "j\t0x2c", "jal\tzero,0x2c"),
    (0x0080_00EF, 0x68, "jal\t0x70", "jal\tra,0x70"),
    (0x00B5_0463, 0x30, "beq\ta0,a1,0x38", "beq\ta0,a1,0x38"),
    (0xFE05_0EE3, 0x34, "beqz\ta0,0x30", "beq\ta0,zero,0x30"),
    (0x00B0_4463, 0x24, "bgtz\ta1,0x2c", "blt\tzero,a1,0x2c"),
    (0x00B0_5463, 0x34, "blez\ta1,0x3c", "bge\tzero,a1,0x3c"),
    (
        0x8000_0063,
        0x8,
        "beqz\tzero,0xfffff008",
        "beq\tzero,zero,0xfffff008",
    ),
    (0x0000_8067, 0, "ret", "jalr\tzero,0(ra)"),
    (0x0005_00E7, 0, "jalr\ta0", "jalr\tra,0(a0)"),
    (0x0045_0067, 0, "jr\t4(a0)", "jalr\tzero,4(a0)"),
    (0x0005_8567, 0, "jalr\ta0,a1", "jalr\ta0,0(a1)"),
    (0x0000_0067, 0, "jr\tzero # 0x0", "jalr\tzero,0(zero) # 0x0"),
    (0x0FF0_000F, 0, "fence", "fence\tiorw,iorw"),
    (0x00C0_000F, 0, "fence\tunknown,io", "fence\tunknown,io"),
    (0x0000_100F, 0, "fence.i", "fence.i"),
    (0x8330_000F, 0, "fence.tso", "fence.tso"),
    (0x0015_E073, 0, "csrs\tfflags,11", "csrrsi\tzero,fflags,11"),
    (0x0035_D573, 0, "csrrw\ta0,fcsr,11", "csrrwi\ta0,fcsr,11"),
    (0x0020_7073, 0, "csrc\tfrm,0", "csrrci\tzero,frm,0"),
    (0x0025_D073, 0, "fsrmi\tzero,11", "csrrwi\tzero,frm,11"),
    (0x0035_9073, 0, "fscsr\ta1", "csrrw\tzero,fcsr,a1"),
    (0x0010_2573, 0, "frflags\ta0", "csrrs\ta0,fflags,zero"),
    (0x20B5_9553, 0, "fneg.s\tfa0,fa1", "fsgnjn.s\tfa0,fa1,fa1"),
    (
        0x68C5_F543,
        0,
        "fmadd.s\tfa0,fa1,fa2,fa3",
        "fmadd.s\tfa0,fa1,fa2,fa3",
    ),
    (
        0x68C5_C54F,
        0,
        "fnmadd.s\tfa0,fa1,fa2,fa3,rmm",
        "fnmadd.s\tfa0,fa1,fa2,fa3,rmm",
    ),
    (
        0x5805_B553,
        0,
        "fsqrt.s\tfa0,fa1,rup",
        "fsqrt.s\tfa0,fa1,rup",
    ),
    (0xE005_9553, 0, "fclass.s\ta0,fa1", "fclass.s\ta0,fa1"),
    (0xD015_F553, 0, "fcvt.s.wu\tfa0,a1", "fcvt.s.wu\tfa0,a1"),
    (0x00C0_2533, 0, "sgtz\ta0,a2", "slt\ta0,zero,a2"),
    (0xFFF5_C513, 0, "not\ta0,a1", "xori\ta0,a1,-1"),
    (0x0FF5_F513, 0, "zext.b\ta0,a1", "andi\ta0,a1,255"),
    (0x4035_D513, 0, "sra\ta0,a1,0x3", "srai\ta0,a1,0x3"),
    (0x40C0_0533, 0, "neg\ta0,a2", "sub\ta0,zero,a2"),
    (0x0000_0013, 0, "nop", "addi\tzero,zero,0"),
    (0x0050_0513, 0, "li\ta0,5", "addi\ta0,zero,5"),
    (0x0005_8513, 0, "mv\ta0,a1", "addi\ta0,a1,0"),
    (0x0015_B513, 0, "seqz\ta0,a1", "sltiu\ta0,a1,1"),
    (0x02C5_C533, 0, "div\ta0,a1,a2", "div\ta0,a1,a2"),
    (0x0082_2503, 0, "lw\ta0,8(tp) # 0x8", "lw\ta0,8(tp) # 0x8"),
    (0xFEC5_AFA7, 0, "fsw\tfa2,-1(a1)", "fsw\tfa2,-1(a1)"),
    (0xFF85_A507, 0, "flw\tfa0,-8(a1)", "flw\tfa0,-8(a1)"),
    (0xA0C5_A553, 0, "feq.s\ta0,fa1,fa2", "feq.s\ta0,fa1,fa2"),
    (0x8000_0517, 0, "auipc\ta0,0x80000", "auipc\ta0,0x80000"),
];

#[test]
fn table_matches_objdump_default_and_no_aliases() {
    for &(word, pc, default, no_alias) in TABLE {
        assert_eq!(
            disasm(word, pc).as_deref(),
            Ok(default),
            "word {word:#010x}"
        );
        assert_eq!(
            disasm_with(word, pc, DisasmOptions::NO_ALIASES).as_deref(),
            Ok(no_alias),
            "word {word:#010x} (no-aliases)"
        );
    }
}

#[test]
fn numeric_register_names() {
    let numeric = DisasmOptions {
        aliases: true,
        numeric_regs: true,
    };
    assert_eq!(
        disasm_with(0x68C5_F543, 0, numeric).as_deref(),
        Ok("fmadd.s\tf10,f11,f12,f13")
    );
    assert_eq!(
        disasm_with(0xF140_2373, 0, numeric).as_deref(),
        Ok("csrr\tx6,mhartid")
    );
}

/// The eight custom conversions (words from the device qtests) and their names.
#[test]
fn custom_conversions_decode_and_print() {
    let cases: [(u32, LpFormat, LpDirection, u8, u8, &str); 8] = [
        (
            0x4410_8153,
            LpFormat::Bf16,
            LpDirection::Narrow,
            2,
            1,
            "fcvt.bf16.s\tft2,ft1",
        ),
        (
            0x4401_01D3,
            LpFormat::Bf16,
            LpDirection::Widen,
            3,
            2,
            "fcvt.s.bf16\tft3,ft2",
        ),
        (
            0x4810_8153,
            LpFormat::E4m3,
            LpDirection::Narrow,
            2,
            1,
            "fcvt.e4m3.s\tft2,ft1",
        ),
        (
            0x4801_01D3,
            LpFormat::E4m3,
            LpDirection::Widen,
            3,
            2,
            "fcvt.s.e4m3\tft3,ft2",
        ),
        (
            0x4830_8153,
            LpFormat::E5m2,
            LpDirection::Narrow,
            2,
            1,
            "fcvt.e5m2.s\tft2,ft1",
        ),
        (
            0x4821_01D3,
            LpFormat::E5m2,
            LpDirection::Widen,
            3,
            2,
            "fcvt.s.e5m2\tft3,ft2",
        ),
        (
            0x4C10_8153,
            LpFormat::E2m1,
            LpDirection::Narrow,
            2,
            1,
            "fcvt.e2m1.s\tft2,ft1",
        ),
        (
            0x4C01_01D3,
            LpFormat::E2m1,
            LpDirection::Widen,
            3,
            2,
            "fcvt.s.e2m1\tft3,ft2",
        ),
    ];
    for (word, fmt, dir, rd, rs1, text) in cases {
        assert_eq!(
            decode(word, 0x10),
            Ok(Instr::LpConvert {
                fmt,
                dir,
                rd: FReg(rd),
                rs1: FReg(rs1),
                rm_field: 0
            }),
            "word {word:#010x}"
        );
        assert_eq!(disasm(word, 0x10).as_deref(), Ok(text));
    }
    // A non-zero rm is ignored by the device but shown; 5/6 as objdump would name them.
    assert_eq!(
        disasm(0x4410_9153, 0).as_deref(),
        Ok("fcvt.bf16.s\tft2,ft1,rtz")
    );
    assert_eq!(
        disasm(0x4410_D153, 0).as_deref(),
        Ok("fcvt.bf16.s\tft2,ft1,unknown")
    );
    // rs2 values outside the defined operations are illegal.
    for word in [0x4420_8153u32, 0x4840_8153, 0x4C20_8153, 0x4A00_8153] {
        assert!(
            matches!(
                decode(word, 0),
                Err(e) if matches!(e.kind, DecodeErrorKind::InvalidEncoding(_))
            ),
            "{word:#010x} must be rejected"
        );
    }
}

#[test]
fn typed_operands_for_the_lifter() {
    assert_eq!(
        decode(0xF140_2373, 0),
        Ok(Instr::Csr {
            op: CsrOp::ReadSet,
            rd: XReg(6),
            csr: Csr::Mhartid,
            src: CsrSrc::Reg(XReg::ZERO)
        })
    );
    // addi x9,x0,-3: sign-extended immediate.
    assert_eq!(
        decode(0xFFD0_0493, 0),
        Ok(Instr::OpImm {
            op: AluImmOp::Addi,
            rd: XReg(9),
            rs1: XReg::ZERO,
            imm: -3
        })
    );
    // lui x9,0x7f800: immediate already shifted into place.
    assert_eq!(
        decode(0x7F80_04B7, 0),
        Ok(Instr::Lui {
            rd: XReg(9),
            imm: 0x7F80_0000
        })
    );
    // beq a0,a1,-8 and jal ra,-1 MiB: signed offsets; targets relative to pc.
    let beq = decode(0xFEB5_0CE3, 0x100).map_err(|e| e.to_string());
    assert_eq!(
        beq.as_ref().map(|i| i.direct_target(0x100)),
        Ok(Some(0xF8)),
        "{beq:?}"
    );
    let jal = decode(0x8000_00EF, 0).map_err(|e| e.to_string());
    assert!(
        matches!(
            jal,
            Ok(Instr::Jal {
                rd: XReg::RA,
                offset: -0x10_0000
            })
        ),
        "{jal:?}"
    );
    // fmsub.s with dynamic rounding.
    assert_eq!(
        decode(0x68C5_F547, 0),
        Ok(Instr::Fma {
            op: FmaOp::Msub,
            rd: FReg(10),
            rs1: FReg(11),
            rs2: FReg(12),
            rs3: FReg(13),
            rm: RoundingMode::Dyn
        })
    );
    // Store offset split across two fields: sw a2,-1(a1).
    assert!(matches!(
        decode(0xFEC5_AFA3, 0),
        Ok(Instr::Store { offset: -1, .. })
    ));
    // Block terminators.
    assert!(matches!(decode(0x0010_0073, 0), Ok(i) if i.ends_block()));
    assert!(matches!(decode(0x0000_0013, 0), Ok(i) if !i.ends_block()));
}

#[test]
fn errors_name_word_pc_and_reason() {
    let cases: [(u32, DecodeErrorKind); 11] = [
        // fadd.s with rm 5 and 6 (reserved).
        (0x0000_D0D3, DecodeErrorKind::ReservedRoundingMode(5)),
        (0x0000_E0D3, DecodeErrorKind::ReservedRoundingMode(6)),
        // fmadd.s with rm 5.
        (0x68C5_D543, DecodeErrorKind::ReservedRoundingMode(5)),
        // csrr a0,cycle: CSR not implemented by the device.
        (0xC000_2573, DecodeErrorKind::UnsupportedCsr(0xC00)),
        // csrw mhartid,a1 and csrrsi a0,mhartid,11: writes to a read-only CSR.
        (0xF145_9073, DecodeErrorKind::ReadOnlyCsrWrite(0xF14)),
        (0xF145_E573, DecodeErrorKind::ReadOnlyCsrWrite(0xF14)),
        // c.nop pair (compressed) and an all-zero word.
        (0x0001_0001, DecodeErrorKind::Compressed),
        (0x0000_0000, DecodeErrorKind::Compressed),
        // amoadd.w (A extension) and fld (D extension) are outside the profile.
        (0x00B5_252F, DecodeErrorKind::UnsupportedOpcode(0x2F)),
        (
            0x0005_B507,
            DecodeErrorKind::InvalidEncoding("fp load (only flw)"),
        ),
        // slli with shamt[5] set (RV64 only).
        (
            0x0205_9513,
            DecodeErrorKind::InvalidEncoding("shift-immediate"),
        ),
    ];
    for (word, kind) in cases {
        let err = decode(word, 0x40);
        assert!(
            matches!(err, Err(e) if e.kind == kind && e.word == word && e.pc == 0x40),
            "{word:#010x}: {err:?}"
        );
    }
    // mret, wfi, fence with fm=0b0001, fence.i with rs1 set.
    for word in [0x3020_0073u32, 0x1050_0073, 0x1FF0_000F, 0x0000_908F] {
        assert!(decode(word, 0).is_err(), "{word:#010x} must be rejected");
    }
    let msg = decode(0x0000_D0D3, 0x1234)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert_eq!(
        msg,
        "illegal instruction 0x0000d0d3 at pc 0x00001234: reserved rounding mode 5"
    );
    // Reading mhartid with csrrs/csrrsi/csrrci and a zero source is legal.
    for word in [0xF140_2373u32, 0xF140_6573, 0xF140_7073] {
        assert!(decode(word, 0).is_ok(), "{word:#010x}");
    }
}

/// The `simple_kernel` of device qtest 13, including objdump's address comment on
/// the store (lui t3,0x1 + sw t1,0(t3) → 0x1000; the intervening add does not reset
/// it in objdump).
#[test]
fn program_listing_with_address_comments() {
    let words = [
        0xF140_2373u32,
        0x01F3_7313,
        0x0023_1393,
        0x0000_1E37,
        0x007E_0E33,
        0x006E_2023,
        0x0010_0073,
    ];
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let expected = [
        "csrr\tt1,mhartid",
        "and\tt1,t1,31",
        "sll\tt2,t1,0x2",
        "lui\tt3,0x1",
        "add\tt3,t3,t2",
        "sw\tt1,0(t3) # 0x1000",
        "ebreak",
    ];
    assert_eq!(
        disasm_program(&bytes, 0),
        Ok(expected.map(String::from).to_vec())
    );

    // auipc a0,0 at 0x84; addi a0,a0,16 → 0x94, then the value is consumed.
    let bytes: Vec<u8> = [0x0000_0517u32, 0x0105_0513, 0x0105_0513]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    assert_eq!(
        disasm_program(&bytes, 0x84),
        Ok(vec![
            "auipc\ta0,0x0".to_string(),
            "add\ta0,a0,16 # 0x94".to_string(),
            "add\ta0,a0,16".to_string(),
        ])
    );
}

#[test]
fn program_errors_and_lenient_listing() {
    // Second word illegal: the error names its pc.
    let bytes: Vec<u8> = [0x0000_0013u32, 0x0000_D0D3]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    let err = disasm_program(&bytes, 0x100).err();
    assert!(
        matches!(err, Some(e) if e.pc == 0x104 && e.word == 0x0000_D0D3),
        "{err:?}"
    );
    // Trailing partial word.
    let mut bytes = 0x0000_0013u32.to_le_bytes().to_vec();
    bytes.extend([0xAA, 0xBB]);
    let err = disasm_program(&bytes, 0).err();
    assert!(
        matches!(err, Some(e) if e.pc == 4 && e.kind == DecodeErrorKind::Truncated(2) && e.word == 0xBBAA),
        "{err:?}"
    );
    assert_eq!(
        disasm_listing(&bytes, 0, DisasmOptions::OBJDUMP),
        vec![(0, "nop".to_string()), (4, ".byte\t0xaa,0xbb".to_string())]
    );
    let bad = 0x0000_D0D3u32.to_le_bytes();
    assert_eq!(
        disasm_listing(&bad, 8, DisasmOptions::OBJDUMP),
        vec![(8, ".4byte\t0xd0d3".to_string())]
    );
}

/// Every kernel word of the 17 device qtests decodes (the kernels are listed in
/// shared/data/gpgpu_qtests.md; the distinct words are inlined here).
#[test]
fn qtest_kernel_words_decode() {
    let words = [
        0xF140_2373u32,
        0x01F3_7313,
        0x0023_1393,
        0x0000_1E37,
        0x007E_0E33,
        0x006E_2023,
        0x0010_0073,
        0xD003_00D3,
        0x0020_0493,
        0xD004_8153,
        0x0010_0493,
        0xD004_81D3,
        0x1020_8253,
        0x0032_02D3,
        0xC002_93D3,
        0x0023_1413,
        0x008E_0E33,
        0x007E_2023,
        0x02A0_0493,
        0xD004_80D3,
        0x4410_8153,
        0x4401_01D3,
        0xC001_9553,
        0x4810_8153,
        0x4801_01D3,
        0xC001_95D3,
        0x0033_1413,
        0x00AE_2023,
        0x00BE_2223,
        0x0040_0493,
        0x4830_8153,
        0x4821_01D3,
        0x4C10_8153,
        0x4C01_01D3,
        0xFFD0_0493,
        0xC001_9653,
        0xFFE0_0493,
        0xC001_96D3,
        0x0043_1413,
        0x00CE_2423,
        0x00DE_2623,
        0x0000_0493,
        0x0640_0493,
        0x3E80_0493,
        0x7F80_04B7,
        0xF004_80D3,
        0xC001_9753,
        0x00EE_2823,
    ];
    for w in words {
        assert!(decode(w, 0).is_ok(), "{w:#010x}: {:?}", decode(w, 0));
    }
    assert_eq!(
        disasm(0xC001_9753, 0).as_deref(),
        Ok("fcvt.w.s\ta4,ft3,rtz")
    );
}
