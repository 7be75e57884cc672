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

/// Single to half with round-to-nearest-even; `None` when not exactly representable.
pub(crate) fn f32_to_f16_exact(x: f32) -> Option<u16> {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    if x == 0.0 {
        return Some(sign);
    }
    // brute force over the 2^15 magnitudes is cheap enough and obviously exact
    (0u16..0x7c00)
        .map(|m| m | sign)
        .find(|&h| f16_to_f32(h).to_bits() == bits)
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
