//! AGX 8-bit float immediates: sign bit 7, exponent bits 4..6, mantissa bits 0..3.

/// Value of an 8-bit float immediate: `±m/64` if the exponent is 0, else
/// `±(16+m)·2^(e−7)`.
pub fn decode(bits: u8) -> f32 {
    let sign = if bits & 0x80 != 0 { -1.0f32 } else { 1.0 };
    let exp = i32::from((bits >> 4) & 7);
    let mant = f32::from(bits & 0xF);
    if exp == 0 {
        sign * mant / 64.0
    } else {
        sign * (mant + 16.0) * 2f32.powi(exp - 7)
    }
}

/// Mesa's text for an immediate: integral values get `.0` (`1.0`, `-0.0`), others the
/// exact decimal (all minifloats have at most 6 significant digits).
pub fn format(bits: u8) -> String {
    let f = decode(bits);
    if f == f.trunc() {
        let sign = if f.is_sign_negative() { "-" } else { "" };
        format!("{sign}{}.0", f.abs() as u32)
    } else {
        format!("{f}")
    }
}

/// The encoding whose text is `text`, if any (first of equal texts).
pub fn parse(text: &str) -> Option<u8> {
    (0..=255u8).find(|&b| format(b) == text)
}
