//! The typed decode result and the error contract of the AGX decoder and assembler.

use wavejit_frontend::agx::{
    AsmError, Condition, DecodeError, Encoding, Hint, ImmField, ModField, Opcode, OperandKind,
    assemble, assemble_line, decode, disasm, disasm_program,
};

fn bytes(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("test hex"))
        .collect()
}

#[test]
fn iadd_64bit_operands() {
    // iadd dr0, dr0, dr4
    let (i, len) = decode(&bytes("0e03408334000000"), 0).expect("decodes");
    assert_eq!((i.opcode, len, i.mnemonic()), (Opcode::Iadd, 8, "iadd"));
    let d = i.dests[0];
    assert_eq!(
        (d.kind, d.size, d.value, d.count),
        (OperandKind::Reg, 64, 0, 1)
    );
    assert_eq!((i.srcs[0].size, i.srcs[0].value), (64, 0));
    assert_eq!((i.srcs[1].size, i.srcs[1].value), (64, 8));
    assert_eq!(i.srcs[1].encoding, Encoding::Add);
    assert_eq!(i.modifier(ModField::Shift), Some(0));
    assert_eq!(i.modifier(ModField::Saturate), Some(0));
}

#[test]
fn float_source_modifiers_and_long_form() {
    // fadd r0, r10.neg, r11 (6-byte long form)
    let (i, len) = decode(&bytes("2a81546a2500"), 0).expect("decodes");
    assert_eq!((i.opcode, len), (Opcode::Fadd, 6));
    assert!(i.is_long());
    let a = i.srcs[0];
    assert_eq!((a.value, a.size, a.neg, a.abs), (20, 32, true, false));
    assert_eq!(a.reg_and_half(), (10, false));
    // fadd r1, ^r1, 0.234375 (short form, discard hint, float immediate)
    let (i, len) = decode(&bytes("2a05c2f2"), 0).expect("decodes");
    assert_eq!(len, 4);
    assert!(!i.is_long());
    assert_eq!(i.srcs[0].hint, Hint::Discard);
    assert_eq!(i.srcs[1].kind, OperandKind::FImm);
    assert_eq!(i.srcs[1].float_imm(), Some(0.234375));
}

#[test]
fn half_registers_and_sign_extension() {
    // iadd r5l, u12h.sx, 2
    let (i, _) = decode(&bytes("0e14192500000000"), 0).expect("decodes");
    assert_eq!(i.dests[0].reg_and_half(), (5, false));
    let u = i.srcs[0];
    assert_eq!((u.kind, u.size, u.sx), (OperandKind::Uniform, 16, true));
    assert_eq!(u.reg_and_half(), (12, true));
    assert_eq!((i.srcs[1].kind, i.srcs[1].value), (OperandKind::Imm, 2));
}

#[test]
fn conditions() {
    // csel r0l, 0.0, r0l, 0, r0l, fgtn
    let (i, _) = decode(&bytes("02000000040001e4"), 0).expect("decodes");
    assert_eq!(
        i.condition(),
        Some(Condition {
            float: true,
            code: 7
        })
    );
    // if r6, r4, 1, ult
    let (i, _) = decode(&bytes("52284c822400"), 0).expect("decodes");
    assert_eq!(i.opcode, Opcode::IfIcmp);
    assert_eq!(
        i.condition(),
        Some(Condition {
            float: false,
            code: 1
        })
    );
    assert_eq!(i.imm(ImmField::Nest), Some(1));
}

#[test]
fn branch_targets_are_relative_to_the_branch() {
    let (i, _) = decode(&bytes("20c01c010000"), 0x100).expect("decodes");
    assert_eq!(i.opcode, Opcode::JmpNone);
    assert_eq!(i.imm(ImmField::Offset), Some(284));
    assert_eq!(i.branch_target(), Some(0x100 + 284));
    let (i, _) = decode(&bytes("00c086fdffff"), 0x1000).expect("decodes");
    assert_eq!(i.branch_target(), Some(0x1000 - 634));
    let (i, _) = decode(&bytes("8800"), 0).expect("decodes");
    assert_eq!((i.opcode, i.branch_target()), (Opcode::Stop, None));
}

#[test]
fn memory_operands() {
    // load r0_r1_r2_r3, du8, 0, i32, xyzw, a
    let (i, _) = decode(&bytes("0501000d10c0f200"), 0).expect("decodes");
    let d = i.dests[0];
    assert_eq!(
        (d.kind, d.size, d.count, d.value),
        (OperandKind::Reg, 32, 4, 0)
    );
    let base = i.srcs[0];
    assert_eq!(
        (base.kind, base.size, base.value),
        (OperandKind::Uniform, 64, 16)
    );
    assert_eq!(i.modifier(ModField::Mask), Some(0xF));
    assert_eq!(i.modifier(ModField::Format), Some(2));
    assert_eq!(i.modifier_name(ModField::Format), Some("i32"));
    assert_eq!(i.modifier_name(ModField::Mask), Some("xyzw"));
    assert_eq!(i.modifier_name(ModField::Coherency), Some(""));
    assert_eq!(i.modifier_name(ModField::Length), None);
    // atomic _, r3, du10, r1.sx, add, coherent1, a: no destination
    let (i, _) = decode(&bytes("1500248c10500600"), 0).expect("decodes");
    assert_eq!(i.dests[0].kind, OperandKind::None);
    assert!(i.srcs[2].sx);
}

#[test]
fn pow_fixup_is_not_decoded_as_ffma() {
    // Metal pow() tail (applegpu issue #51): fmadd32 with bit 52 set.
    let (i, len) = decode(&bytes("3a81c0222cc61200"), 0).expect("decodes");
    assert_eq!((i.opcode, len), (Opcode::PowFixup, 8));
    assert_eq!(i.to_string(), "pow_fixup r0, ^r0, ^r1, ^r3");
    assert_eq!(assemble_line(&i.to_string()), Ok(bytes("3a81c0222cc61200")));
}

#[test]
fn unassigned_bits_are_errors() {
    // ffma with bit 53 set: no field covers it.
    let err = decode(&bytes("3a81c0222cc62200"), 0x20).expect_err("must fail");
    match &err {
        DecodeError::UnknownBits {
            pc, opcode, mask, ..
        } => {
            assert_eq!((*pc, *opcode, *mask), (0x20, "ffma", 1u128 << 53));
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(err.to_string().contains("3a81c0222cc62200"), "{err}");
}

#[test]
fn truncated_and_empty_input() {
    // A load cut after 4 bytes: its L bit (47) is missing, so at least 6 are needed.
    let err = decode(&bytes("0501000d"), 8).expect_err("must fail");
    assert!(
        matches!(
            err,
            DecodeError::Truncated {
                pc: 8,
                opcode: "load",
                need: 6,
                have: 4,
                ..
            }
        ),
        "{err:?}"
    );
    // With the L bit present the full long length is known.
    let err = decode(&bytes("0501000d10c0"), 0).expect_err("must fail");
    assert!(
        matches!(
            err,
            DecodeError::Truncated {
                need: 8,
                have: 6,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(decode(&[], 0).is_err());
    assert!(disasm(&[0x88]).is_err());
}

#[test]
fn program_errors_name_offset_and_bytes() {
    // stop, then an ffma with an unassigned bit at offset 2.
    let mut prog = bytes("8800");
    prog.extend(bytes("3a81c0222cc62200"));
    let err = disasm_program(&prog).expect_err("must fail");
    let msg = err.to_string();
    assert!(
        msg.contains("0x2") && msg.contains("3a81c0222cc62200"),
        "{msg}"
    );
    assert_eq!(
        disasm_program(&bytes("68008800")).expect("decodes"),
        vec!["barrier".to_string(), "stop".to_string()]
    );
}

#[test]
fn undefined_enum_values_are_errors() {
    // wait uses group bit 8 only; mov r1, <sr 3> has no SR name.
    let err = decode(&bytes("72050300"), 0).expect_err("SR 3 is undefined");
    assert!(err.to_string().contains("sr"), "{err}");
}

#[test]
fn assembler_errors_carry_line_and_column() {
    assert_eq!(
        assemble_line("fadd r0, r1, bogus"),
        Err(AsmError {
            line: 1,
            col: 14,
            msg: "cannot encode operand `bogus` of `fadd`".into()
        })
    );
    let e = assemble("stop\n  frob r0").expect_err("unknown mnemonic");
    assert_eq!((e.line, e.col), (2, 3));
    let e = assemble("stop\nfadd r0, r1").expect_err("missing operand");
    assert_eq!(e.line, 2);
    // Mixed source sizes are fine; integer sources have no .abs.
    assert!(assemble_line("iadd r0, r1.sx, r3h").is_ok());
    let e = assemble_line("iadd r0, r1.sx, r3h.abs").expect_err("no abs on iadd");
    assert_eq!((e.line, e.col), (1, 17));
}

#[test]
fn assembler_accepts_hex_and_comments() {
    assert_eq!(
        assemble_line("ldimm r0l, 0x10 ; c"),
        assemble_line("ldimm r0l, 16")
    );
    assert_eq!(assemble("# only a comment\n\n"), Ok(vec![]));
    assert_eq!(
        assemble_line("  csel   r0l,0.0 , r0l, 0, r0l,  fgtn"),
        Ok(bytes("02000000040001e4"))
    );
}

#[test]
fn labels_resolve_to_offsets_from_the_branch() {
    let src = "\
top:
    mov r0, r1          ; 6 bytes
    jmp_none end        ; at 6: end is at 18, so +12
    jmp_any top         ; at 12: -12
end: stop
    call r1
";
    let bytes = assemble(src).expect("assembles");
    let lines = disasm_program(&bytes).expect("decodes");
    assert_eq!(
        lines,
        vec![
            "mov r0, r1",
            "jmp_none 12",
            "jmp_any -12",
            "stop",
            "call r1"
        ]
    );
    let e = assemble("jmp_none nowhere").expect_err("undefined label");
    assert_eq!(
        (e.line, e.col, e.msg.as_str()),
        (1, 10, "undefined label `nowhere`")
    );
    let e = assemble("r1: stop").expect_err("label shaped like a register");
    assert_eq!((e.line, e.col), (1, 1));
    let e = assemble("a: stop\na: stop").expect_err("duplicate label");
    assert_eq!(e.line, 2);
}

#[test]
fn hostile_assembler_input_is_an_error_not_a_panic() {
    for line in [
        "mov r4611686018427387904, r0",
        "mov r0, r9223372036854775807h",
        "fadd r0, r1, 99999999999999999999999",
        "load r0_r2, du8, 0, i32, xy, a",
        "ldimm r0, -1",
        "jmp_none 4294967296",
        "mov ,",
        "csel",
        ",,,",
        "ffma r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11, r12, r13, r14",
        "smpf r0, du54, r5, r4l, r0, u64l, r15, shadow, shadow, shadow, shadow, shadow, a, a",
        "iter r0_r1, cf1, cf0, 0, sample, elide, kill, elide, kill, elide, kill, sample",
    ] {
        assert!(assemble_line(line).is_err(), "{line}");
    }
}

#[test]
fn device_store_immediate_index_extension_follows_bit_25() {
    use wavejit_frontend::agx::{Opcode, OperandKind, decode};
    // [MODEL] AGX2.xml's memindex: bit 25 (the register form's zx bit) = 1 zero-extends
    // the 16-bit immediate, 0 sign-extends it. Mesa's encoder agrees: it inlines a
    // 16-bit immediate index only as agx_abs(...) (integer abs = not sx), which sets bit
    // 25, for values that must read unsigned. applegpu sign-extends every immediate
    // (its memory hwtests are not run), so the hardware has not decided this.
    let zx = [0x45, 0xf8, 0x48, 0x07, 0x03, 0xc4, 0x20, 0xbe];
    let (i, _) = decode(&zx, 0).unwrap();
    assert_eq!(i.opcode, Opcode::Store);
    let index = i.srcs[2];
    assert_eq!((index.kind, index.value), (OperandKind::Imm, 48692));
    let mut sx = zx;
    sx[3] &= !0x02; // bit 25 clear
    let (i, _) = decode(&sx, 0).unwrap();
    assert_eq!(
        (i.srcs[2].kind, i.srcs[2].value),
        (OperandKind::Imm, -16844)
    );
}
