//! Integer semantics on zero-extended bits of a type of `bits` width (8, 16, 32,
//! 64; bitwise ops and `Not` also on i1; other widths are clamped to 1..=64).
//! Results are masked to the width.
//!
//! - Add/Sub/Mul wrap; `MulHiU/MulHiS` are the high half of the double-width product.
//! - Division as RISC-V: `x / 0` = all ones (unsigned and signed, i.e. -1), `x % 0 = x`,
//!   `MIN / -1 = MIN` with remainder 0. Signed division truncates toward zero.
//! - Shift and rotate amounts are taken modulo the width (the amount is read as
//!   unsigned bits of the same type).
//! - Saturating add/sub clamp to the type's range.
//! - `Abs(MIN) = MIN`; `Clz(0) = Ctz(0) = width`; `Bitrev`/`Bswap` over the width
//!   (`Bswap` on i8 is the identity).
//! - `BitExtract`/`BitInsert`: `offset` is taken modulo the width, `width` (read as
//!   unsigned 32-bit) is clamped to the type's width; the field is the bits
//!   `[offset, min(offset + width, W))`, i.e. it stops at the top of the value.
//!   Extract: width 0 gives 0; signed extraction sign-extends from the field's
//!   top bit. Insert: those bits of `base` are replaced by the low bits of `insert`.

use crate::inst::{CastOp, IBinOp, IUnOp, IntCC};
use crate::types::Type;

#[inline]
fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Sign-extends the low `bits` bits of `v`.
#[inline]
pub fn sext(v: u64, bits: u32) -> i64 {
    if bits == 0 {
        0
    } else if bits >= 64 {
        v as i64
    } else {
        let s = 64 - bits;
        ((v << s) as i64) >> s
    }
}

/// `a op b` for a type of `bits` width.
#[inline]
pub fn ibinary(op: IBinOp, bits: u32, a: u64, b: u64) -> u64 {
    let bits = bits.clamp(1, 64);
    let m = mask(bits);
    let (a, b) = (a & m, b & m);
    let (sa, sb) = (sext(a, bits), sext(b, bits));
    let smin = sext(1u64 << (bits - 1), bits);
    let smax = (m >> 1) as i64;
    let sh = (b % u64::from(bits)) as u32;
    let r = match op {
        IBinOp::Add => a.wrapping_add(b),
        IBinOp::Sub => a.wrapping_sub(b),
        IBinOp::Mul => a.wrapping_mul(b),
        IBinOp::MulHiU => ((u128::from(a) * u128::from(b)) >> bits) as u64,
        IBinOp::MulHiS => ((i128::from(sa) * i128::from(sb)) >> bits) as u64,
        IBinOp::DivU => a.checked_div(b).unwrap_or(u64::MAX),
        IBinOp::RemU => a.checked_rem(b).unwrap_or(a),
        IBinOp::DivS => match (sa, sb) {
            (_, 0) => u64::MAX,
            (x, -1) if x == smin => smin as u64,
            (x, y) => (x / y) as u64,
        },
        IBinOp::RemS => match (sa, sb) {
            (x, 0) => x as u64,
            (x, -1) if x == smin => 0,
            (x, y) => (x % y) as u64,
        },
        IBinOp::And => a & b,
        IBinOp::Or => a | b,
        IBinOp::Xor => a ^ b,
        IBinOp::Shl => a << sh,
        IBinOp::ShrU => a >> sh,
        IBinOp::ShrS => (sa >> sh) as u64,
        IBinOp::Rotl => {
            if sh == 0 {
                a
            } else {
                (a << sh) | (a >> (bits - sh))
            }
        }
        IBinOp::Rotr => {
            if sh == 0 {
                a
            } else {
                (a >> sh) | (a << (bits - sh))
            }
        }
        IBinOp::MinU => a.min(b),
        IBinOp::MaxU => a.max(b),
        IBinOp::MinS => sa.min(sb) as u64,
        IBinOp::MaxS => sa.max(sb) as u64,
        IBinOp::AddSatU => (u128::from(a) + u128::from(b)).min(u128::from(m)) as u64,
        IBinOp::SubSatU => a.saturating_sub(b),
        IBinOp::AddSatS => {
            (i128::from(sa) + i128::from(sb)).clamp(i128::from(smin), i128::from(smax)) as u64
        }
        IBinOp::SubSatS => {
            (i128::from(sa) - i128::from(sb)).clamp(i128::from(smin), i128::from(smax)) as u64
        }
    };
    r & m
}

/// `op a` for a type of `bits` width.
#[inline]
pub fn iunary(op: IUnOp, bits: u32, a: u64) -> u64 {
    let bits = bits.clamp(1, 64);
    let m = mask(bits);
    let a = a & m;
    let r = match op {
        IUnOp::Not => !a,
        IUnOp::Neg => a.wrapping_neg(),
        IUnOp::Abs => sext(a, bits).unsigned_abs(),
        IUnOp::Clz => u64::from(a.leading_zeros() - (64 - bits)),
        IUnOp::Ctz => u64::from(a.trailing_zeros().min(bits)),
        IUnOp::Popcnt => u64::from(a.count_ones()),
        IUnOp::Bitrev => a.reverse_bits() >> (64 - bits),
        IUnOp::Bswap => a.swap_bytes() >> (64 - bits.max(8)),
    };
    r & m
}

/// `a cc b` for a type of `bits` width.
#[inline]
pub fn icmp(cc: IntCC, bits: u32, a: u64, b: u64) -> bool {
    let m = mask(bits);
    let (a, b) = (a & m, b & m);
    let (sa, sb) = (sext(a, bits), sext(b, bits));
    match cc {
        IntCC::Eq => a == b,
        IntCC::Ne => a != b,
        IntCC::Ult => a < b,
        IntCC::Ule => a <= b,
        IntCC::Ugt => a > b,
        IntCC::Uge => a >= b,
        IntCC::Slt => sa < sb,
        IntCC::Sle => sa <= sb,
        IntCC::Sgt => sa > sb,
        IntCC::Sge => sa >= sb,
    }
}

/// `Cast { op, to }` of a value of type `from`.
#[inline]
pub fn cast(op: CastOp, from: Type, to: Type, a: u64) -> u64 {
    let a = a & from.mask();
    match op {
        CastOp::Zext | CastOp::Bitcast => a & to.mask(),
        CastOp::Sext => (sext(a, from.bits()) as u64) & to.mask(),
        CastOp::Trunc => a & to.mask(),
    }
}

/// The field `[off, off + w)` of a `bits`-wide value, after the clamping rules.
#[inline]
fn field(bits: u32, offset: u64, width: u64) -> (u32, u32) {
    let bits = bits.clamp(1, 64);
    let off = (offset as u32) % bits;
    let w = (width as u32).min(bits).min(bits - off);
    (off, w)
}

/// `BitExtract { signed }` of a `bits`-wide value.
#[inline]
pub fn bit_extract(bits: u32, signed: bool, value: u64, offset: u64, width: u64) -> u64 {
    let (off, w) = field(bits, offset, width);
    if w == 0 {
        return 0;
    }
    let f = ((value & mask(bits)) >> off) & mask(w);
    let r = if signed { sext(f, w) as u64 } else { f };
    r & mask(bits)
}

/// `BitInsert` into a `bits`-wide value.
#[inline]
pub fn bit_insert(bits: u32, base: u64, insert: u64, offset: u64, width: u64) -> u64 {
    let (off, w) = field(bits, offset, width);
    let fm = mask(w) << off;
    ((base & !fm) | ((insert << off) & fm)) & mask(bits)
}
