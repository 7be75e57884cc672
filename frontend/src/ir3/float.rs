//! Float helpers matching C's behaviour for mesa's `%f` immediates.

/// IEEE half to single (exact).
pub(crate) fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let man = u32::from(h & 0x3ff);
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, m) => {
            // subnormal: value = m * 2^-24
            let v = m as f32 * f32::from_bits(0x3380_0000);
            return if sign != 0 { -v } else { v };
        }
        (31, 0) => sign | 0x7f80_0000,
        (31, m) => sign | 0x7fc0_0000 | (m << 13),
        (e, m) => sign | ((e + 112) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

/// Nearest IEEE half to `x` (ties to even; NaN gives the quiet NaN 0x7e00 with
/// its sign). Mesa prints half immediates with `%f`, so text is generally inexact.
pub(crate) fn f64_to_f16_nearest(x: f64) -> Option<u16> {
    let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
    if x.is_nan() {
        return Some(sign | 0x7e00);
    }
    let mag = x.abs();
    if mag.is_infinite() {
        return Some(sign | 0x7c00);
    }
    // finite magnitudes are 0x0000..=0x7bff in increasing order: binary search
    let (mut lo, mut hi) = (0u16, 0x7bffu16);
    if mag >= f64::from(f16_to_f32(hi)) {
        let max = f64::from(f16_to_f32(hi));
        // beyond the largest finite half, round to infinity past the midpoint
        let next = 65520.0;
        return Some(sign | if mag >= next && mag > max { 0x7c00 } else { hi });
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if f64::from(f16_to_f32(mid)) <= mag {
            lo = mid
        } else {
            hi = mid
        }
    }
    let (a, b) = (f64::from(f16_to_f32(lo)), f64::from(f16_to_f32(hi)));
    let pick = if mag - a < b - mag || (mag - a == b - mag && lo % 2 == 0) {
        lo
    } else {
        hi
    };
    Some(sign | pick)
}

/// C's `printf("%f", (double)x)`.
pub(crate) fn c_percent_f(x: f32) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() {
            "-nan".into()
        } else {
            "nan".into()
        };
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf".into() } else { "inf".into() };
    }
    format!("{:.6}", f64::from(x))
}
