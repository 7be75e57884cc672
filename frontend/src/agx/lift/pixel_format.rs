//! Pixel-format conversions of device_load / device_store (agx.md §4.1) as IR
//! builders, and the exact Rust models that their constant tables come from.
//!
//! Loads expand memory codes to f32 (then f16 RNE for 16-bit registers); stores
//! read registers as f32 (f16 widened exactly) and encode. Every choice the
//! datasheet leaves open is marked [MODEL].

use std::sync::OnceLock;

use wavejit_ir::semantics::convert::fcvt;
use wavejit_ir::{
    CastOp, FBinOp, FloatCC, FloatFormat, FloatMode, IBinOp, InstKind, IntCC, Round, Type, Value,
};

use super::alu_float::{mode_in32, mode32, narrow_f16};
use super::ctx::Ctx;

// ------------------------------------------------------------ registers

/// A register's float data as f32: 32-bit registers hold f32 bits, 16-bit
/// registers f16 bits (widened exactly).
pub(crate) fn reg_to_f32(ctx: &mut Ctx, v: Value, reg_bits: u8) -> Value {
    if reg_bits == 16 {
        let v = ctx.resize(v, Type::I16, false);
        let h = ctx.cast(CastOp::Bitcast, Type::F16, v);
        ctx.b.ins(
            InstKind::Fcvt {
                from: FloatFormat::F16,
                to: FloatFormat::F32,
                mode: FloatMode::IEEE,
            },
            &[h],
        )
    } else {
        let v = ctx.resize(v, Type::I32, false);
        ctx.cast(CastOp::Bitcast, Type::F32, v)
    }
}

/// An f32 result as register bits: f16 RNE for 16-bit registers. [MODEL] The
/// norm and packed loads round twice into 16-bit registers (exact -> f32 ->
/// f16), as the float ALU's 16-bit destinations do; sRGB rounds once (its table).
pub(crate) fn f32_to_reg(ctx: &mut Ctx, v: Value, reg_bits: u8) -> Value {
    let v = if reg_bits == 16 {
        narrow_f16(ctx, v)
    } else {
        v
    };
    ctx.cast(CastOp::Bitcast, ctx.ty(v).as_int(), v)
}

fn f32_bits(ctx: &mut Ctx, x: Value) -> Value {
    ctx.cast(CastOp::Bitcast, Type::I32, x)
}

fn fbin(ctx: &mut Ctx, op: FBinOp, mode: FloatMode, a: Value, b: Value) -> Value {
    ctx.b.ins(InstKind::FBinary { op, mode }, &[a, b])
}

// ------------------------------------------------------------ norm

/// The code of 1.0 of a normalised format.
fn norm_scale(bits: u8, signed: bool) -> f32 {
    if signed {
        ((1u32 << (bits - 1)) - 1) as f32
    } else {
        ((1u64 << bits) - 1) as f32
    }
}

/// A normalised code (an i32 already extended per `signed`) as f32:
/// `code / scale` rounded once; the most negative signed code is -1.0 too.
pub(crate) fn norm_decode(ctx: &mut Ctx, code: Value, bits: u8, signed: bool) -> Value {
    let f = ctx.b.ins(
        InstKind::IToF {
            to: FloatFormat::F32,
            signed,
            mode: FloatMode::IEEE,
        },
        &[code],
    );
    let s = ctx.f32c(norm_scale(bits, signed));
    let v = fbin(ctx, FBinOp::Div, mode32(false), f, s);
    if signed {
        let m1 = ctx.f32c(-1.0);
        fbin(ctx, FBinOp::Max, mode32(false), v, m1)
    } else {
        v
    }
}

/// f32 to a normalised code (i32): clamp (NaN -> 0), multiply by the scale in
/// f32, round to nearest even. [MODEL] the hardware rounding is [UNK].
pub(crate) fn norm_encode(ctx: &mut Ctx, x: Value, bits: u8, signed: bool) -> Value {
    let fmode = mode32(false);
    let lo = ctx.f32c(if signed { -1.0 } else { 0.0 });
    let hi = ctx.f32c(1.0);
    let x1 = fbin(ctx, FBinOp::Max, fmode, x, lo);
    let x2 = fbin(ctx, FBinOp::Min, fmode, x1, hi);
    let nan = ctx.b.ins(
        InstKind::Fcmp {
            cc: FloatCC::Uno,
            mode: mode_in32(),
        },
        &[x, x],
    );
    let z = ctx.f32c(0.0);
    let x3 = ctx.select(nan, z, x2);
    let s = ctx.f32c(norm_scale(bits, signed));
    let y = fbin(ctx, FBinOp::Mul, fmode, x3, s);
    ctx.b.ins(
        InstKind::FToI {
            from: FloatFormat::F32,
            to: Type::I32,
            signed,
            nan_to_max: false,
            mode: FloatMode {
                round: Round::NearestEven,
                ..FloatMode::IEEE
            },
        },
        &[y],
    )
}

// ------------------------------------------------------------ sRGB (10)

/// sRGB EOTF (IEC 61966-2-1), evaluated in f64: encoded `c` in [0, 1] to linear.
pub(crate) fn srgb_eotf(c: f64) -> f64 {
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// sRGB OETF (the inverse direction), evaluated in f64: linear `x` in [0, 1].
pub(crate) fn srgb_oetf(x: f64) -> f64 {
    if x <= 0.003_130_8 {
        x * 12.92
    } else {
        1.055 * x.powf(1.0 / 2.4) - 0.055
    }
}

/// [MODEL] The 8-bit sRGB code of a linear f32: NaN and x <= 0 give 0, x >= 1
/// gives 255, otherwise `255 * oetf(x)` rounded to nearest even, like the unorm
/// stores (evaluated in f64, which decides every f32 input the same way as exact
/// arithmetic: the pixel-format tests check the distance to each boundary).
pub(crate) fn srgb_encode_model(x: f32) -> u32 {
    if x.is_nan() || x <= 0.0 {
        0
    } else if x >= 1.0 {
        255
    } else {
        (255.0 * srgb_oetf(f64::from(x))).round_ties_even() as u32
    }
}

/// Decoded sRGB bytes as register bits: f32 bits (32-bit registers) or f16 bits
/// (16-bit registers). [MODEL] both round the f64 EOTF once (RNE) to the
/// register format; the f16 table is not the f32 one narrowed.
fn srgb_decode_table(reg_bits: u8) -> &'static [u64; 256] {
    static F32: OnceLock<[u64; 256]> = OnceLock::new();
    static F16: OnceLock<[u64; 256]> = OnceLock::new();
    let narrow = reg_bits == 16;
    let cell = if narrow { &F16 } else { &F32 };
    cell.get_or_init(|| {
        std::array::from_fn(|b| {
            let v = srgb_eotf(b as f64 / 255.0);
            if narrow {
                fcvt(
                    FloatFormat::F64,
                    FloatFormat::F16,
                    v.to_bits(),
                    &FloatMode::IEEE,
                )
                .0
            } else {
                u64::from((v as f32).to_bits())
            }
        })
    })
}

/// `t[k]` (k = 1..=255): the f32 bits of the smallest non-negative f32 whose
/// [`srgb_encode_model`] code is at least k (`t[0]` = 0). The codes are
/// monotonic in the bits of non-negative floats, so the store is a search.
fn srgb_thresholds() -> &'static [u32; 256] {
    static T: OnceLock<[u32; 256]> = OnceLock::new();
    T.get_or_init(|| {
        let code = |u: u32| srgb_encode_model(f32::from_bits(u));
        std::array::from_fn(|k| {
            let k = k as u32;
            if k == 0 {
                return 0;
            }
            // Start at the inverse image of the rounding boundary, then step to
            // the exact first f32 (a few ulps at most).
            let mut u = (srgb_eotf((f64::from(k) - 0.5) / 255.0) as f32).to_bits();
            while u > 0 && code(u - 1) >= k {
                u -= 1;
            }
            while code(u) < k {
                u += 1;
            }
            u
        })
    })
}

/// `leaves[i]` where bit j of i is the i1 `bits[j]`: a tree of selects
/// (`leaves.len()` is `1 << bits.len()`).
fn select_tree(ctx: &mut Ctx, bits: &[Value], leaves: &[Value]) -> Value {
    let mut level = leaves.to_vec();
    for &bit in bits {
        let mut next = Vec::with_capacity(level.len() / 2);
        for pair in level.chunks_exact(2) {
            next.push(ctx.select(bit, pair[1], pair[0]));
        }
        level = next;
    }
    level[0]
}

/// Decodes sRGB bytes (i32 values 0..=255) to register bits.
///
/// [MODEL] The IR has no pow and no constant data, so the exact 256-entry
/// table is a binary select tree on the byte's bits (255 selects per byte;
/// the 256 constants are shared by the bytes of one instruction).
pub(crate) fn srgb_decode(ctx: &mut Ctx, bytes: &[Value], reg_bits: u8) -> Vec<Value> {
    let ty = if reg_bits == 16 { Type::I16 } else { Type::I32 };
    let leaves: Vec<Value> = srgb_decode_table(reg_bits)
        .iter()
        .map(|&bits| ctx.iconst(ty, bits))
        .collect();
    bytes
        .iter()
        .map(|&byte| {
            let bits: Vec<Value> = (0..8)
                .map(|j| {
                    let s = ctx.i32c(j);
                    let x = ctx.bin(IBinOp::ShrU, byte, s);
                    ctx.cast(CastOp::Trunc, Type::I1, x)
                })
                .collect();
            select_tree(ctx, &bits, &leaves)
        })
        .collect()
}

/// Encodes linear f32 values to sRGB codes (i32 0..=255) per
/// [`srgb_encode_model`]: an 8-step binary search of the code over the 255
/// threshold constants, each step comparing the f32 bits (as signed integers,
/// which orders non-negative floats and puts every negative one below 0).
pub(crate) fn srgb_encode(ctx: &mut Ctx, xs: &[Value]) -> Vec<Value> {
    let t = srgb_thresholds();
    let consts: Vec<Value> = t.iter().map(|&u| ctx.i32c(u)).collect();
    let mut out = Vec::with_capacity(xs.len());
    for &x in xs {
        let nan = ctx.b.ins(
            InstKind::Fcmp {
                cc: FloatCC::Uno,
                mode: FloatMode::IEEE,
            },
            &[x, x],
        );
        let raw = f32_bits(ctx, x);
        let zero = ctx.i32c(0);
        let xb = ctx.select(nan, zero, raw);
        // decided[j] = code bit (b + 1 + j), known after the steps above bit b.
        let mut decided: Vec<Value> = Vec::new();
        let mut code = ctx.i32c(0);
        for b in (0..8u32).rev() {
            let leaves: Vec<Value> = (0..1usize << (7 - b))
                .map(|p| consts[(p << (b + 1)) | (1 << b)])
                .collect();
            let threshold = select_tree(ctx, &decided, &leaves);
            let ge = ctx.icmp(IntCC::Sge, xb, threshold);
            let g = ctx.cast(CastOp::Zext, Type::I32, ge);
            let s = ctx.i32c(b);
            let bit = ctx.bin(IBinOp::Shl, g, s);
            code = ctx.bin(IBinOp::Or, code, bit);
            decided.insert(0, ge);
        }
        out.push(code);
    }
    out
}

// ------------------------------------------------------------ packed formats

/// `(w >> shift) & mask` on i32.
fn field(ctx: &mut Ctx, w: Value, shift: u32, mask: u32) -> Value {
    let s = ctx.i32c(shift);
    let x = ctx.bin(IBinOp::ShrU, w, s);
    let m = ctx.i32c(mask);
    ctx.bin(IBinOp::And, x, m)
}

fn f16_bits_to_f32(ctx: &mut Ctx, h: Value) -> Value {
    let h = ctx.resize(h, Type::I16, false);
    let h = ctx.cast(CastOp::Bitcast, Type::F16, h);
    ctx.b.ins(
        InstKind::Fcvt {
            from: FloatFormat::F16,
            to: FloatFormat::F32,
            mode: FloatMode::IEEE,
        },
        &[h],
    )
}

/// The float components (f32) of a packed word: rgb10a2 (8) gives 4, rg11b10f
/// (12/14) and rgb9e5 (13/15) give 3.
pub(crate) fn packed_decode(ctx: &mut Ctx, code: u32, w: Value) -> Vec<Value> {
    let fmode = FloatMode::IEEE;
    let mut comps = Vec::new();
    match code {
        8 => {
            for (shift, bits) in [(0u32, 10u32), (10, 10), (20, 10), (30, 2)] {
                let x = field(ctx, w, shift, (1 << bits) - 1);
                let f = ctx.b.ins(
                    InstKind::IToF {
                        to: FloatFormat::F32,
                        signed: false,
                        mode: fmode,
                    },
                    &[x],
                );
                let s = ctx.f32c(((1u32 << bits) - 1) as f32);
                comps.push(fbin(ctx, FBinOp::Div, fmode, f, s));
            }
        }
        12 | 14 => {
            // f11 (5-bit exponent, 6-bit mantissa) and f10 are f16 with fewer
            // mantissa bits: shift them into place.
            for (shift, mask, up) in [(0u32, 0x7ffu32, 4u32), (11, 0x7ff, 4), (22, 0x3ff, 5)] {
                let x = field(ctx, w, shift, mask);
                let u = ctx.i32c(up);
                let h = ctx.bin(IBinOp::Shl, x, u);
                comps.push(f16_bits_to_f32(ctx, h));
            }
        }
        _ => {
            // rgb9e5: m * 2^(e - 24), exact in f32.
            let e = field(ctx, w, 27, 0x1f);
            let bias = ctx.i32c(103);
            let be = ctx.bin(IBinOp::Add, e, bias);
            let k23 = ctx.i32c(23);
            let sbits = ctx.bin(IBinOp::Shl, be, k23);
            let scale = ctx.cast(CastOp::Bitcast, Type::F32, sbits);
            for shift in [0u32, 9, 18] {
                let m = field(ctx, w, shift, 0x1ff);
                let f = ctx.b.ins(
                    InstKind::IToF {
                        to: FloatFormat::F32,
                        signed: false,
                        mode: fmode,
                    },
                    &[m],
                );
                comps.push(fbin(ctx, FBinOp::Mul, fmode, f, scale));
            }
        }
    }
    comps
}

/// `x >> s` (u32, `s` in 1..=31) rounded to nearest even on the dropped bits,
/// or truncated when `rtz`.
fn round_shift(ctx: &mut Ctx, x: Value, s: Value, rtz: bool) -> Value {
    let q = ctx.bin(IBinOp::ShrU, x, s);
    if rtz {
        return q;
    }
    let one = ctx.i32c(1);
    let unit = ctx.bin(IBinOp::Shl, one, s);
    let low = ctx.bin(IBinOp::Sub, unit, one);
    let rem = ctx.bin(IBinOp::And, x, low);
    let half = ctx.bin(IBinOp::ShrU, unit, one);
    let above = ctx.icmp(IntCC::Ugt, rem, half);
    let tie = ctx.icmp(IntCC::Eq, rem, half);
    let odd = ctx.cast(CastOp::Trunc, Type::I1, q);
    let tie_up = ctx.bin(IBinOp::And, tie, odd);
    let up = ctx.bin(IBinOp::Or, above, tie_up);
    let inc = ctx.cast(CastOp::Zext, Type::I32, up);
    ctx.bin(IBinOp::Add, q, inc)
}

/// The significand of f32 bits `x` (hidden bit included for normal numbers)
/// and whether the exponent field is non-zero.
fn significand(ctx: &mut Ctx, x: Value, exp: Value) -> Value {
    let man_mask = ctx.i32c(0x7f_ffff);
    let man = ctx.bin(IBinOp::And, x, man_mask);
    let zero = ctx.i32c(0);
    let normal = ctx.icmp(IntCC::Ne, exp, zero);
    let hidden = ctx.i32c(0x80_0000);
    let h = ctx.select(normal, hidden, zero);
    ctx.bin(IBinOp::Or, man, h)
}

/// f32 to an unsigned small float with a 5-bit exponent (bias 15) and `mbits`
/// mantissa bits (6: f11, 5: f10), as i32 bits.
///
/// [MODEL] negatives and -0 give 0 (also -inf); NaN of either sign gives the
/// quiet NaN (exponent 31, top mantissa bit); +inf gives inf. Finite values
/// round to nearest even (overflow -> inf), or toward zero when `rtz`
/// (overflow -> the largest finite value). f32 denormals round to 0 either way.
pub(crate) fn float_to_uf(ctx: &mut Ctx, x: Value, mbits: u32, rtz: bool) -> Value {
    let drop = 23 - mbits;
    let inf = 0x1f << mbits;
    let nan_code = inf | (1 << (mbits - 1));
    let xb = f32_bits(ctx, x);
    let abs_mask = ctx.i32c(0x7fff_ffff);
    let mag = ctx.bin(IBinOp::And, xb, abs_mask);
    let inf32 = ctx.i32c(0x7f80_0000);
    let is_nan = ctx.icmp(IntCC::Ugt, mag, inf32);
    let is_inf = ctx.icmp(IntCC::Eq, mag, inf32);
    let zero = ctx.i32c(0);
    let neg = ctx.icmp(IntCC::Slt, xb, zero);
    let k23 = ctx.i32c(23);
    let exp = ctx.bin(IBinOp::ShrU, mag, k23);
    // Normal results (f32 exponent > 112 = 127 - 15): rebias and drop the low
    // mantissa bits; a rounding carry moves into the exponent by itself.
    let k112 = ctx.i32c(112);
    let normal = ctx.icmp(IntCC::Ugt, exp, k112);
    let rebias = ctx.i32c(112 << 23);
    let rebiased = ctx.bin(IBinOp::Sub, mag, rebias);
    // Denormal results: the significand in units of 2^(-14 - mbits).
    let sig = significand(ctx, mag, exp);
    let top = ctx.i32c(113 + drop);
    let den_shift = ctx.bin(IBinOp::Sub, top, exp);
    let k31 = ctx.i32c(31);
    let den_shift = ctx.bin(IBinOp::MinU, den_shift, k31);
    let src = ctx.select(normal, rebiased, sig);
    let dropc = ctx.i32c(drop);
    let s = ctx.select(normal, dropc, den_shift);
    let q = round_shift(ctx, src, s, rtz);
    let limit = ctx.i32c(if rtz { inf - 1 } else { inf });
    let q = ctx.bin(IBinOp::MinU, q, limit);
    let infc = ctx.i32c(inf);
    let q = ctx.select(is_inf, infc, q);
    let q = ctx.select(neg, zero, q);
    let nanc = ctx.i32c(nan_code);
    ctx.select(is_nan, nanc, q)
}

/// Three f32 to an rgb9e5 word (EXT_texture_shared_exponent: N = 9, B = 15,
/// Emax = 31), with integer arithmetic on the f32 bits.
///
/// [MODEL] Components are clamped to [0, 65408] (NaN, negatives and -0 -> 0,
/// +inf -> 65408). The shared exponent is `max(0, floor(log2(max)) + 16)`, plus
/// one when the largest component's mantissa rounds up to 512. Mantissas round
/// to nearest even (format 13; the extension's floor(x + 0.5) rounds ties up,
/// the hardware's tie rule is [UNK]) or toward zero (`rtz`, format 15).
pub(crate) fn floats_to_rgb9e5(ctx: &mut Ctx, xs: [Value; 3], rtz: bool) -> Value {
    let zero = ctx.i32c(0);
    let abs_mask = ctx.i32c(0x7fff_ffff);
    let inf32 = ctx.i32c(0x7f80_0000);
    let max_bits = ctx.i32c(0x477f_8000); // 65408.0 = 511 * 2^7
    let clamped: Vec<Value> = xs
        .iter()
        .map(|&x| {
            let xb = f32_bits(ctx, x);
            let mag = ctx.bin(IBinOp::And, xb, abs_mask);
            let nan = ctx.icmp(IntCC::Ugt, mag, inf32);
            let neg = ctx.icmp(IntCC::Slt, xb, zero);
            let bad = ctx.bin(IBinOp::Or, nan, neg);
            let c = ctx.select(bad, zero, xb);
            ctx.bin(IBinOp::MinU, c, max_bits)
        })
        .collect();
    let m01 = ctx.bin(IBinOp::MaxU, clamped[0], clamped[1]);
    let maxc = ctx.bin(IBinOp::MaxU, m01, clamped[2]);
    let k23 = ctx.i32c(23);
    let k111 = ctx.i32c(111);
    let emax = ctx.bin(IBinOp::ShrU, maxc, k23);
    let e = ctx.bin(IBinOp::MaxU, emax, k111);
    let e = ctx.bin(IBinOp::Sub, e, k111);
    // c / 2^(e - 24) = significand >> (126 + e - exponent field); the shift is
    // at least 15 and is capped at 31 (the result is 0 from 25 on).
    let mantissa = |ctx: &mut Ctx, c: Value, e: Value| {
        let ec = ctx.bin(IBinOp::ShrU, c, k23);
        let sig = significand(ctx, c, ec);
        let k126 = ctx.i32c(126);
        let s = ctx.bin(IBinOp::Add, k126, e);
        let s = ctx.bin(IBinOp::Sub, s, ec);
        let k31 = ctx.i32c(31);
        let s = ctx.bin(IBinOp::MinU, s, k31);
        round_shift(ctx, sig, s, rtz)
    };
    let maxm = mantissa(ctx, maxc, e);
    let k512 = ctx.i32c(512);
    let bump = ctx.icmp(IntCC::Eq, maxm, k512);
    let bump = ctx.cast(CastOp::Zext, Type::I32, bump);
    let e = ctx.bin(IBinOp::Add, e, bump);
    let mut word = ctx.i32c(0);
    for (i, &c) in clamped.iter().enumerate() {
        let m = mantissa(ctx, c, e);
        let s = ctx.i32c(9 * i as u32);
        let m = ctx.bin(IBinOp::Shl, m, s);
        word = ctx.bin(IBinOp::Or, word, m);
    }
    let k27 = ctx.i32c(27);
    let ef = ctx.bin(IBinOp::Shl, e, k27);
    ctx.bin(IBinOp::Or, word, ef)
}

/// Packs f32 components into the 32-bit word of packed format `code`.
/// [MODEL] Components the store does not supply (fewer registers than the
/// format has) are +0.0.
pub(crate) fn packed_encode(ctx: &mut Ctx, code: u32, comps: &[Value]) -> Value {
    let n = if code == 8 { 4 } else { 3 };
    let zero = ctx.f32c(0.0);
    let c: Vec<Value> = (0..n)
        .map(|i| comps.get(i).copied().unwrap_or(zero))
        .collect();
    match code {
        8 => {
            let mut word = ctx.i32c(0);
            for (i, (shift, bits)) in [(0u32, 10u8), (10, 10), (20, 10), (30, 2)]
                .into_iter()
                .enumerate()
            {
                let q = norm_encode(ctx, c[i], bits, false);
                let s = ctx.i32c(shift);
                let q = ctx.bin(IBinOp::Shl, q, s);
                word = ctx.bin(IBinOp::Or, word, q);
            }
            word
        }
        12 | 14 => {
            let rtz = code == 14;
            let r = float_to_uf(ctx, c[0], 6, rtz);
            let g = float_to_uf(ctx, c[1], 6, rtz);
            let b = float_to_uf(ctx, c[2], 5, rtz);
            let k11 = ctx.i32c(11);
            let k22 = ctx.i32c(22);
            let g = ctx.bin(IBinOp::Shl, g, k11);
            let b = ctx.bin(IBinOp::Shl, b, k22);
            let rg = ctx.bin(IBinOp::Or, r, g);
            ctx.bin(IBinOp::Or, rg, b)
        }
        _ => floats_to_rgb9e5(ctx, [c[0], c[1], c[2]], code == 15),
    }
}
