//! PM4 packet headers (a6xx type4 register writes and type7 opcodes) with the
//! odd-parity checks the command processor applies.

/// Odd parity over the nibbles of `v` (freedreno_pm4.h): 1 when popcount(v) is even.
pub fn parity(mut v: u32) -> u32 {
    v ^= v >> 16;
    v ^= v >> 8;
    v ^= v >> 4;
    (!0x6996u32 >> (v & 0xf)) & 1
}

/// A decoded packet header.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Header {
    /// Write `count` dwords to consecutive registers from `reg`.
    Type4 { reg: u32, count: u32 },
    /// Opcode `op` with `count` payload dwords.
    Type7 { op: u32, count: u32 },
    /// Pre-a5xx type-2 filler: one dword, skipped.
    Type2Nop,
}

/// Why a header word is not a valid a6xx packet.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    #[error("bad parity in type4 header {word:#010x}")]
    Type4Parity { word: u32 },
    #[error("bad parity in type7 header {word:#010x}")]
    Type7Parity { word: u32 },
    #[error("header {word:#010x} is not a type4 or type7 packet")]
    UnknownType { word: u32 },
}

pub fn type4(reg: u32, count: u32) -> u32 {
    0x4000_0000 | count | (parity(count) << 7) | ((reg & 0x3ffff) << 8) | (parity(reg) << 27)
}

pub fn type7(op: u32, count: u32) -> u32 {
    0x7000_0000 | count | (parity(count) << 15) | ((op & 0x7f) << 16) | (parity(op) << 23)
}

pub fn decode_header(word: u32) -> Result<Header, HeaderError> {
    match word >> 28 {
        4 => {
            let count = word & 0x7f;
            let reg = (word >> 8) & 0x3ffff;
            if (word >> 7) & 1 != parity(count) || (word >> 27) & 1 != parity(reg) {
                return Err(HeaderError::Type4Parity { word });
            }
            Ok(Header::Type4 { reg, count })
        }
        7 if (word >> 24) & 0xf == 0 => {
            let count = word & 0x3fff;
            let op = (word >> 16) & 0x7f;
            if (word >> 15) & 1 != parity(count) || (word >> 23) & 1 != parity(op) {
                return Err(HeaderError::Type7Parity { word });
            }
            Ok(Header::Type7 { op, count })
        }
        8 if word == 0x8000_0000 => Ok(Header::Type2Nop),
        _ => Err(HeaderError::UnknownType { word }),
    }
}

/// Type-7 opcodes (adreno_pm4.xml, a6xx).
pub mod op {
    pub const NOP: u32 = 0x10;
    pub const WAIT_MEM_WRITES: u32 = 0x12;
    pub const WAIT_FOR_ME: u32 = 0x13;
    pub const WAIT_MEM_GTE: u32 = 0x14;
    pub const WAIT_FOR_IDLE: u32 = 0x26;
    pub const RUN_OPENCL: u32 = 0x31;
    pub const LOAD_STATE6_GEOM: u32 = 0x32;
    pub const EXEC_CS: u32 = 0x33;
    pub const LOAD_STATE6_FRAG: u32 = 0x34;
    pub const LOAD_STATE6: u32 = 0x36;
    pub const WAIT_REG_MEM: u32 = 0x3c;
    pub const MEM_WRITE: u32 = 0x3d;
    pub const REG_TO_MEM: u32 = 0x3e;
    pub const INDIRECT_BUFFER: u32 = 0x3f;
    pub const EXEC_CS_INDIRECT: u32 = 0x41;
    pub const EVENT_WRITE: u32 = 0x46;
    pub const SET_MODE: u32 = 0x63;
    pub const SET_MARKER: u32 = 0x65;
    pub const REG_WRITE: u32 = 0x6d;
    pub const MEM_TO_MEM: u32 = 0x73;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_from_the_reference_capture_decode() {
        let cases = [
            (
                0x70b3_0004,
                Header::Type7 {
                    op: op::EXEC_CS,
                    count: 4,
                },
            ),
            (
                0x7034_8003,
                Header::Type7 {
                    op: op::LOAD_STATE6_FRAG,
                    count: 3,
                },
            ),
            (
                0x7026_8000,
                Header::Type7 {
                    op: op::WAIT_FOR_IDLE,
                    count: 0,
                },
            ),
            (
                0x7046_0004,
                Header::Type7 {
                    op: op::EVENT_WRITE,
                    count: 4,
                },
            ),
            (
                0x7046_0001,
                Header::Type7 {
                    op: op::EVENT_WRITE,
                    count: 1,
                },
            ),
            (
                0x70e5_0001,
                Header::Type7 {
                    op: op::SET_MARKER,
                    count: 1,
                },
            ),
            (
                0x70bc_8006,
                Header::Type7 {
                    op: op::WAIT_REG_MEM,
                    count: 6,
                },
            ),
            (
                0x703e_8003,
                Header::Type7 {
                    op: op::REG_TO_MEM,
                    count: 3,
                },
            ),
            (
                0x7092_8000,
                Header::Type7 {
                    op: op::WAIT_MEM_WRITES,
                    count: 0,
                },
            ),
            (
                0x70bf_8003,
                Header::Type7 {
                    op: op::INDIRECT_BUFFER,
                    count: 3,
                },
            ),
            (
                0x7031_0001,
                Header::Type7 {
                    op: op::RUN_OPENCL,
                    count: 1,
                },
            ),
            (
                0x40bb_0801,
                Header::Type4 {
                    reg: 0xbb08,
                    count: 1,
                },
            ),
            (
                0x48aa_0001,
                Header::Type4 {
                    reg: 0xaa00,
                    count: 1,
                },
            ),
            (
                0x40b9_908c,
                Header::Type4 {
                    reg: 0xb990,
                    count: 12,
                },
            ),
            (
                0x40a9_b08a,
                Header::Type4 {
                    reg: 0xa9b0,
                    count: 10,
                },
            ),
            (
                0x48b9_8385,
                Header::Type4 {
                    reg: 0xb983,
                    count: 5,
                },
            ),
            (
                0x48a9_bb01,
                Header::Type4 {
                    reg: 0xa9bb,
                    count: 1,
                },
            ),
        ];
        for (word, want) in cases {
            assert_eq!(decode_header(word), Ok(want), "{word:#x}");
            match want {
                Header::Type4 { reg, count } => assert_eq!(type4(reg, count), word),
                Header::Type7 { op, count } => assert_eq!(type7(op, count), word),
                Header::Type2Nop => {}
            }
        }
    }

    #[test]
    fn a_flipped_parity_bit_is_refused() {
        assert_eq!(
            decode_header(0x70b3_0004 ^ (1 << 15)),
            Err(HeaderError::Type7Parity { word: 0x70b3_8004 })
        );
        assert_eq!(
            decode_header(0x40bb_0801 ^ (1 << 27)),
            Err(HeaderError::Type4Parity { word: 0x48bb_0801 })
        );
        assert_eq!(
            decode_header(0xc000_0000),
            Err(HeaderError::UnknownType { word: 0xc000_0000 })
        );
        assert_eq!(decode_header(0x8000_0000), Ok(Header::Type2Nop));
    }
}
