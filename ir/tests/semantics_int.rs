//! Integer rules of `semantics::int` and their dispatch through `eval_pure`.

use wavejit_ir::semantics::eval_pure;
use wavejit_ir::semantics::int::{bit_extract, bit_insert, ibinary, iunary};
use wavejit_ir::{CastOp, IBinOp, IUnOp, InstKind, IntCC, Type};

fn bin(op: IBinOp, ty: Type, a: u64, b: u64) -> u64 {
    let mut out = [0xdead];
    assert!(eval_pure(
        &InstKind::IBinary(op),
        &[ty, ty],
        &[a, b],
        &mut out
    ));
    out[0]
}

fn un(op: IUnOp, ty: Type, a: u64) -> u64 {
    let mut out = [0xdead];
    assert!(eval_pure(&InstKind::IUnary(op), &[ty], &[a], &mut out));
    out[0]
}

#[test]
fn division_by_zero_is_riscv() {
    assert_eq!(bin(IBinOp::DivU, Type::I32, 7, 0), 0xffff_ffff);
    assert_eq!(bin(IBinOp::DivS, Type::I32, 7, 0), 0xffff_ffff);
    assert_eq!(bin(IBinOp::RemU, Type::I32, 7, 0), 7);
    assert_eq!(bin(IBinOp::RemS, Type::I32, 0xffff_fff9, 0), 0xffff_fff9);
    assert_eq!(bin(IBinOp::DivU, Type::I64, 7, 0), u64::MAX);
    assert_eq!(bin(IBinOp::DivS, Type::I8, 0x80, 0), 0xff);
}

#[test]
fn signed_overflow_division() {
    assert_eq!(
        bin(IBinOp::DivS, Type::I32, 0x8000_0000, 0xffff_ffff),
        0x8000_0000
    );
    assert_eq!(bin(IBinOp::RemS, Type::I32, 0x8000_0000, 0xffff_ffff), 0);
    assert_eq!(bin(IBinOp::DivS, Type::I64, 1 << 63, u64::MAX), 1 << 63);
    assert_eq!(bin(IBinOp::DivS, Type::I16, 0x8000, 0xffff), 0x8000);
    // Truncation toward zero: -7 / 2 = -3, -7 % 2 = -1.
    assert_eq!(
        bin(IBinOp::DivS, Type::I32, (-7i32) as u32 as u64, 2),
        (-3i32) as u32 as u64
    );
    assert_eq!(
        bin(IBinOp::RemS, Type::I32, (-7i32) as u32 as u64, 2),
        0xffff_ffff
    );
}

#[test]
fn shifts_are_modulo_width() {
    assert_eq!(bin(IBinOp::Shl, Type::I32, 1, 33), 2);
    assert_eq!(bin(IBinOp::Shl, Type::I32, 1, 32), 1);
    assert_eq!(bin(IBinOp::ShrU, Type::I32, 0x8000_0000, 63), 1);
    assert_eq!(bin(IBinOp::ShrS, Type::I32, 0x8000_0000, 31), 0xffff_ffff);
    assert_eq!(bin(IBinOp::ShrS, Type::I8, 0x80, 9), 0xc0);
    assert_eq!(bin(IBinOp::Shl, Type::I16, 0x8001, 17), 0x0002);
    assert_eq!(bin(IBinOp::Rotl, Type::I32, 0x8000_0001, 1), 0x0000_0003);
    assert_eq!(bin(IBinOp::Rotr, Type::I32, 0x8000_0001, 33), 0xc000_0000);
    assert_eq!(bin(IBinOp::Rotl, Type::I8, 0x81, 8), 0x81);
    assert_eq!(bin(IBinOp::Rotl, Type::I64, 1 << 63, 1), 1);
}

#[test]
fn mul_high_halves() {
    assert_eq!(
        bin(IBinOp::MulHiU, Type::I32, 0xffff_ffff, 0xffff_ffff),
        0xffff_fffe
    );
    assert_eq!(bin(IBinOp::MulHiS, Type::I32, 0xffff_ffff, 0xffff_ffff), 0);
    assert_eq!(bin(IBinOp::MulHiS, Type::I32, 0x8000_0000, 2), 0xffff_ffff);
    assert_eq!(bin(IBinOp::MulHiU, Type::I64, u64::MAX, 2), 1);
    assert_eq!(bin(IBinOp::Mul, Type::I32, 0x1_0000, 0x1_0000), 0);
}

#[test]
fn saturating_add_sub() {
    assert_eq!(
        bin(IBinOp::AddSatU, Type::I32, 0xffff_fff0, 0x20),
        0xffff_ffff
    );
    assert_eq!(bin(IBinOp::SubSatU, Type::I32, 5, 6), 0);
    assert_eq!(
        bin(IBinOp::AddSatS, Type::I32, 0x7fff_fff0, 0x20),
        0x7fff_ffff
    );
    assert_eq!(
        bin(IBinOp::AddSatS, Type::I32, 0x8000_0010, 0xffff_ffe0),
        0x8000_0000
    );
    assert_eq!(bin(IBinOp::SubSatS, Type::I32, 0x8000_0000, 1), 0x8000_0000);
    assert_eq!(bin(IBinOp::SubSatS, Type::I8, 0x7f, 0xff), 0x7f);
    assert_eq!(bin(IBinOp::AddSatU, Type::I64, u64::MAX, 1), u64::MAX);
    assert_eq!(bin(IBinOp::AddSatS, Type::I16, 0x0001, 0x0002), 0x0003);
}

#[test]
fn min_max_signedness() {
    assert_eq!(bin(IBinOp::MinU, Type::I32, 0xffff_ffff, 1), 1);
    assert_eq!(bin(IBinOp::MinS, Type::I32, 0xffff_ffff, 1), 0xffff_ffff);
    assert_eq!(bin(IBinOp::MaxS, Type::I8, 0x80, 0x7f), 0x7f);
    assert_eq!(bin(IBinOp::MaxU, Type::I8, 0x80, 0x7f), 0x80);
}

#[test]
fn unary_edges() {
    assert_eq!(un(IUnOp::Clz, Type::I32, 0), 32);
    assert_eq!(un(IUnOp::Ctz, Type::I32, 0), 32);
    assert_eq!(un(IUnOp::Clz, Type::I8, 1), 7);
    assert_eq!(un(IUnOp::Clz, Type::I64, 0), 64);
    assert_eq!(un(IUnOp::Ctz, Type::I16, 0x8000), 15);
    assert_eq!(un(IUnOp::Abs, Type::I32, 0x8000_0000), 0x8000_0000);
    assert_eq!(un(IUnOp::Abs, Type::I32, 0xffff_fffb), 5);
    assert_eq!(un(IUnOp::Neg, Type::I16, 1), 0xffff);
    assert_eq!(un(IUnOp::Not, Type::I1, 1), 0);
    assert_eq!(un(IUnOp::Not, Type::I1, 0), 1);
    assert_eq!(un(IUnOp::Popcnt, Type::I32, 0xf0f0_0001), 9);
    assert_eq!(un(IUnOp::Bitrev, Type::I32, 1), 0x8000_0000);
    assert_eq!(un(IUnOp::Bitrev, Type::I8, 0x01), 0x80);
    assert_eq!(un(IUnOp::Bswap, Type::I32, 0x1122_3344), 0x4433_2211);
    assert_eq!(un(IUnOp::Bswap, Type::I16, 0x1122), 0x2211);
    assert_eq!(un(IUnOp::Bswap, Type::I8, 0x12), 0x12);
}

#[test]
fn bit_extract_edges() {
    // Width 0 gives 0; width 32 at offset 0 is the whole value.
    assert_eq!(bit_extract(32, false, 0xdead_beef, 4, 0), 0);
    assert_eq!(bit_extract(32, true, 0xdead_beef, 4, 0), 0);
    assert_eq!(bit_extract(32, false, 0xdead_beef, 0, 32), 0xdead_beef);
    assert_eq!(bit_extract(32, true, 0xdead_beef, 0, 32), 0xdead_beef);
    // Field stops at the top of the value.
    assert_eq!(bit_extract(32, false, 0xdead_beef, 28, 8), 0xd);
    assert_eq!(bit_extract(32, true, 0xdead_beef, 28, 8), 0xffff_fffd);
    assert_eq!(bit_extract(32, false, 0xdead_beef, 4, 8), 0xee);
    assert_eq!(bit_extract(32, true, 0xdead_beef, 4, 8), 0xffff_ffee);
    assert_eq!(bit_extract(32, true, 0xdead_beef, 4, 3), 0xffff_fffe);
    // Offset modulo the width; width clamped.
    assert_eq!(bit_extract(32, false, 0xdead_beef, 36, 4), 0xe);
    assert_eq!(
        bit_extract(32, false, 0xdead_beef, 0, 0xffff_ffff),
        0xdead_beef
    );
    assert_eq!(
        bit_extract(64, true, 0x8000_0000_0000_0000, 63, 1),
        u64::MAX
    );
}

#[test]
fn bit_insert_edges() {
    assert_eq!(bit_insert(32, 0xdead_beef, 0x1234_5678, 8, 0), 0xdead_beef);
    assert_eq!(bit_insert(32, 0xdead_beef, 0x1234_5678, 0, 32), 0x1234_5678);
    assert_eq!(bit_insert(32, 0xdead_beef, 0x5, 4, 4), 0xdead_be5f);
    assert_eq!(bit_insert(32, 0xdead_beef, 0xff, 28, 8), 0xfead_beef);
    assert_eq!(bit_insert(32, 0, 0xf, 36, 4), 0xf0);
    assert_eq!(bit_insert(16, 0xffff, 0, 4, 100), 0x000f);
}

#[test]
fn eval_dispatch_of_bit_fields_icmp_select_cast() {
    let mut out = [0];
    let k = InstKind::BitExtract { signed: true };
    assert!(eval_pure(
        &k,
        &[Type::I32, Type::I32, Type::I32],
        &[0xf0, 4, 4],
        &mut out
    ));
    assert_eq!(out[0], 0xffff_ffff);
    let k = InstKind::BitInsert;
    let tys = [Type::I32, Type::I32, Type::I32, Type::I32];
    assert!(eval_pure(&k, &tys, &[0, 3, 30, 32], &mut out));
    assert_eq!(out[0], 0xc000_0000);
    assert!(eval_pure(
        &InstKind::Icmp(IntCC::Slt),
        &[Type::I32, Type::I32],
        &[0xffff_ffff, 0],
        &mut out
    ));
    assert_eq!(out[0], 1);
    assert!(eval_pure(
        &InstKind::Icmp(IntCC::Ult),
        &[Type::I32, Type::I32],
        &[0xffff_ffff, 0],
        &mut out
    ));
    assert_eq!(out[0], 0);
    assert!(eval_pure(
        &InstKind::Select,
        &[Type::I1, Type::I32, Type::I32],
        &[0, 5, 9],
        &mut out
    ));
    assert_eq!(out[0], 9);
    let sext = InstKind::Cast {
        op: CastOp::Sext,
        to: Type::I64,
    };
    assert!(eval_pure(&sext, &[Type::I1], &[1], &mut out));
    assert_eq!(out[0], u64::MAX);
    let zext = InstKind::Cast {
        op: CastOp::Zext,
        to: Type::I32,
    };
    assert!(eval_pure(&zext, &[Type::I8], &[0x80], &mut out));
    assert_eq!(out[0], 0x80);
    let trunc = InstKind::Cast {
        op: CastOp::Trunc,
        to: Type::I1,
    };
    assert!(eval_pure(&trunc, &[Type::I32], &[0x2], &mut out));
    assert_eq!(out[0], 0);
    let bc = InstKind::Cast {
        op: CastOp::Bitcast,
        to: Type::F32,
    };
    assert!(eval_pure(&bc, &[Type::I32], &[0x3f80_0000], &mut out));
    assert_eq!(out[0], 0x3f80_0000);
    let c = InstKind::Const {
        ty: Type::I8,
        bits: 0x1ff,
    };
    assert!(eval_pure(&c, &[], &[], &mut out));
    assert_eq!(out[0], 0xff);
}

#[test]
fn impure_kinds_are_refused() {
    let mut out = [7];
    assert!(!eval_pure(&InstKind::Barrier, &[], &[], &mut out));
    assert!(!eval_pure(
        &InstKind::Builtin(wavejit_ir::Builtin::LaneId),
        &[],
        &[],
        &mut out
    ));
    assert_eq!(out[0], 7);
}

#[test]
fn direct_functions_match_dispatch() {
    assert_eq!(ibinary(IBinOp::Sub, 8, 0, 1), 0xff);
    assert_eq!(iunary(IUnOp::Clz, 16, 0), 16);
}

#[test]
fn short_argument_slices_are_refused() {
    let mut out = [7];
    let k = InstKind::IBinary(IBinOp::Add);
    assert!(!eval_pure(&k, &[Type::I32], &[1], &mut out));
    assert!(!eval_pure(&k, &[Type::I32, Type::I32], &[1], &mut out));
    assert!(!eval_pure(
        &InstKind::BitInsert,
        &[Type::I32; 3],
        &[1, 2, 3],
        &mut out
    ));
    assert_eq!(out[0], 7);
}
