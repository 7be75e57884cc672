//! Printer details: exact spellings, quoting, and robustness on malformed kernels.

use wavejit_ir::text::{parse, print};
use wavejit_ir::{
    AddrSpace, BlockCall, Builder, InstKind, Kernel, MemAccess, Terminator, Type, Value,
};

/// The instruction lines of a printed one-block kernel.
fn body(k: &Kernel) -> Vec<String> {
    print(k)
        .lines()
        .filter(|l| l.starts_with("  "))
        .map(|l| l.trim().to_string())
        .collect()
}

#[test]
fn constants_print_readably_and_exactly() {
    let mut k = Kernel::new("c");
    let b0 = k.add_block();
    let mut b = Builder::new(&mut k, b0);
    let cases: [(Type, u64, &str); 14] = [
        (Type::I32, 0xffff_ffff, "-1"),
        (Type::I32, 65536, "65536"),
        (Type::I32, 65537, "0x10001"),
        (Type::I8, 0x80, "-128"),
        (Type::I64, 0x8000_0000_0000_0000, "0x8000000000000000"),
        (Type::I1, 1, "1"),
        (Type::F32, 0x3f80_0000, "1.0"),
        (Type::F32, 0x8000_0000, "-0.0"),
        (Type::F32, 0x7f80_0000, "inf"),
        (Type::F32, 0x7fc0_0001, "0x7fc00001"),
        (Type::F32, 0x0000_0001, "1e-45"),
        (Type::F16, 0x7bff, "65504.0"),
        (Type::F16, 0x0001, "5.9604645e-8"),
        (Type::F64, 0x3fb9_9999_9999_999a, "0.1"),
    ];
    for (ty, bits, _) in cases {
        b.ins(InstKind::Const { ty, bits }, &[]);
    }
    b.exit();
    let lines = body(&k);
    for (i, (ty, _, lit)) in cases.iter().enumerate() {
        assert_eq!(lines[i], format!("v{i} = const.{ty} {lit}"));
    }
    let again = parse(&print(&k)).unwrap_or_else(|e| panic!("{e}"));
    assert!(again == k, "constants changed bits through the text form");
}

#[test]
fn kernel_names_are_quoted_when_needed() {
    for (name, header) in [
        (
            "plain_name.v2",
            "kernel @plain_name.v2 shared 0 private 0 {",
        ),
        ("", "kernel @\"\" shared 0 private 0 {"),
        ("a b", "kernel @\"a b\" shared 0 private 0 {"),
        (
            "q\"\\\n\u{1}",
            "kernel @\"q\\\"\\\\\\n\\u{1}\" shared 0 private 0 {",
        ),
        ("caf\u{e9}", "kernel @\"caf\u{e9}\" shared 0 private 0 {"),
    ] {
        let mut k = Kernel::new(name);
        let b0 = k.add_block();
        k.set_terminator(b0, Terminator::Exit);
        let text = print(&k);
        assert_eq!(text.lines().next(), Some(header));
        let back = parse(&text).unwrap_or_else(|e| panic!("{name:?}: {e}"));
        assert_eq!(back.name, name);
    }
}

#[test]
fn memory_access_spellings() {
    let mut k = Kernel::new("m");
    k.shared_size = 64;
    let b0 = k.add_block();
    let mut b = Builder::new(&mut k, b0);
    let addr = b.iconst(Type::I32, 0);
    let access = |ty, bits, count, signed, align| MemAccess {
        space: AddrSpace::Shared,
        ty,
        bits,
        count,
        signed,
        align,
    };
    b.inst(InstKind::Load(access(Type::I32, 32, 1, false, 4)), &[addr]);
    b.inst(InstKind::Load(access(Type::I32, 8, 1, true, 1)), &[addr]);
    b.inst(InstKind::Load(access(Type::I16, 16, 3, false, 8)), &[addr]);
    b.inst(InstKind::Load(access(Type::I64, 64, 1, true, 8)), &[addr]);
    b.exit();
    let lines = body(&k);
    assert_eq!(lines[1], "v1 = load.shared.i32 v0");
    assert_eq!(lines[2], "v2 = load.shared.i32.s8 v0");
    assert_eq!(lines[3], "v3, v4, v5 = load.shared.i16x3 v0 align 8");
    assert_eq!(lines[4], "v6 = load.shared.i64.s64 v0");
}

/// Malformed kernels print without panicking; what cannot be named is marked.
#[test]
fn malformed_kernels_print_without_panicking() {
    let mut k = Kernel::new("broken");
    let b0 = k.add_block();
    let b1 = k.add_block();
    let mut b = Builder::new(&mut k, b0);
    let x = b.iconst(Type::I32, 1);
    let dangling = Value::from_u32(999);
    b.inst(InstKind::IUnary(wavejit_ir::IUnOp::Not), &[dangling]);
    b.inst(InstKind::Barrier, &[x]); // wrong arity: kept as given
    k.set_terminator(
        b0,
        Terminator::Branch {
            cond: dangling,
            then: BlockCall::new(wavejit_ir::Block::from_u32(7), &[x]),
            otherwise: BlockCall::new(b1, &[]),
        },
    );
    // b1 has no terminator.
    let text = print(&k);
    assert!(text.contains("not.? v?999"), "{text}");
    assert!(text.contains("barrier v0"), "{text}");
    assert!(text.contains("br v?999, block7(v0), block1"), "{text}");
    assert!(parse(&text).is_err());
}

/// A block still being built (no terminator) survives the text form, so that
/// half-built kernels can be dumped; the verifier is what rejects them.
#[test]
fn unterminated_blocks_round_trip() {
    let text = "kernel @wip shared 0 private 0 {\nblock0:\n  v0 = lane_id\n\nblock1:\n}\n";
    let k = parse(text).unwrap_or_else(|e| panic!("{e}"));
    assert!(k.blocks.values().all(|b| b.term.is_none()));
    assert_eq!(print(&k), text);
    assert!(wavejit_ir::verify::verify(&k).is_err());
}

/// Loose spellings the parser accepts all print the same canonical text.
#[test]
fn loose_input_forms_are_canonicalized() {
    let canonical = "kernel @k shared 8 private 0 {\nblock0:\n  v0 = const.i32 0\n  v1, v2 = load.shared.f32x2 v0 align 8\n  v3 = fadd.f32 v1, v2 nan=0x7fc00000 rtz\n  exit\n}\n";
    let variants = [
        // CRLF line ends, tabs, comments, `=` optional on valued attributes, explicit defaults.
        "kernel @k private 0 shared 8 {\r\nblock0:\r\n\t%zero = const.i32 0x0\t; zero\r\n\t%a, %b = load.shared.f32x2 %zero align=8\r\n\t%c = fadd.f32 %a,%b rtz nan 0x7fc00000\r\n\texit\r\n}\r\n",
        "; leading comment\n\nkernel @\"k\" shared 0x8 {\nblock3:\n  v9 = const.i32 -0\n  v7, v8 = load.shared.f32x2 v9 align 8 ; vector\n  v1 = fadd.f32 v7, v8 rtz nan=0x7FC00000 ftz.in ftz.out\n  exit\n}",
    ];
    let k0 = parse(variants[0]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(print(&k0), canonical);
    // The second variant flushes denormals, which prints as `ftz`.
    let k1 = parse(variants[1]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        print(&k1),
        canonical.replace("nan=0x7fc00000 rtz", "ftz nan=0x7fc00000 rtz")
    );
}
