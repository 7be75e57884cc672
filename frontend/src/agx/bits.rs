//! Bit-field helpers over an instruction held as a little-endian `u128`.

use super::spec::Ranges;

/// Total width in bits of a field.
pub(crate) fn width(ranges: Ranges) -> u32 {
    ranges.iter().map(|&(_, s)| u32::from(s)).sum()
}

/// Reads a field: ranges are concatenated low part first.
pub(crate) fn extract(raw: u128, ranges: Ranges) -> u64 {
    let mut out = 0u64;
    let mut n = 0u32;
    for &(start, size) in ranges {
        let part = (raw >> start) & ((1u128 << size) - 1);
        out |= (part as u64) << n;
        n += u32::from(size);
    }
    out
}

/// Places the low bits of `value` (and of `mask`) into the field's positions:
/// the inverse of [`extract`]. Returns (instruction mask, instruction value).
pub(crate) fn scatter(ranges: Ranges, mask: u64, value: u64) -> (u128, u128) {
    let mut m = 0u128;
    let mut v = 0u128;
    let mut n = 0u32;
    for &(start, size) in ranges {
        let part_mask = (1u128 << size) - 1;
        m |= ((u128::from(mask) >> n) & part_mask) << start;
        v |= ((u128::from(value) >> n) & part_mask) << start;
        n += u32::from(size);
    }
    (m, v)
}

/// Little-endian bytes to an integer (at most 16 bytes are read).
pub(crate) fn from_le(bytes: &[u8]) -> u128 {
    bytes
        .iter()
        .take(16)
        .enumerate()
        .fold(0, |acc, (i, &b)| acc | (u128::from(b) << (8 * i)))
}

/// Keeps only the first `len` bytes.
pub(crate) fn truncate(raw: u128, len: usize) -> u128 {
    if len >= 16 {
        raw
    } else {
        raw & ((1u128 << (8 * len)) - 1)
    }
}

/// Sign-extends the low `bits` bits of `value`.
pub(crate) fn sign_extend(value: u64, bits: u32) -> i64 {
    if bits == 0 || bits >= 64 {
        return value as i64;
    }
    let shift = 64 - bits;
    ((value << shift) as i64) >> shift
}
