//! AQL packet formats (HSA large model, little-endian): the 16-bit header and the
//! 64-byte kernel-dispatch, agent-dispatch and barrier packets.

use super::status::{AqlError, Status};

/// Every packet is 64 bytes.
pub const PACKET_SIZE: usize = 64;

/// Packet types (header bits 0–7).
#[repr(u8)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum PacketType {
    VendorSpecific = 0,
    /// Already processed, not yet handed back: the processor stalls on it.
    Invalid = 1,
    KernelDispatch = 2,
    BarrierAnd = 3,
    AgentDispatch = 4,
    BarrierOr = 5,
}

/// Header bit 8: launch only after every earlier packet of the queue completed.
pub const HEADER_BARRIER: u16 = 1 << 8;
const ACQUIRE_SHIFT: u16 = 9;
const RELEASE_SHIFT: u16 = 11;

/// Memory fence scope of a header (bits 9–10 acquire, 11–12 release).
#[repr(u8)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum FenceScope {
    None = 0,
    Agent = 1,
    System = 2,
}

impl FenceScope {
    fn from_bits(bits: u16) -> Option<FenceScope> {
        match bits {
            0 => Some(FenceScope::None),
            1 => Some(FenceScope::Agent),
            2 => Some(FenceScope::System),
            _ => None,
        }
    }
}

/// A decoded, valid header.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Header {
    pub ty: PacketType,
    pub barrier: bool,
    pub acquire: FenceScope,
    pub release: FenceScope,
}

impl Header {
    /// A header with SYSTEM acquire and release scopes (what rocrtst and tinygrad use).
    pub fn new(ty: PacketType, barrier: bool) -> Header {
        Header {
            ty,
            barrier,
            acquire: FenceScope::System,
            release: FenceScope::System,
        }
    }

    pub fn bits(self) -> u16 {
        u16::from(self.ty as u8)
            | if self.barrier { HEADER_BARRIER } else { 0 }
            | (self.acquire as u16) << ACQUIRE_SHIFT
            | (self.release as u16) << RELEASE_SHIFT
    }

    /// Decodes a header word. INVALID is decoded (the caller stalls on it); unknown
    /// types and fence scope 3 are INVALID_PACKET_FORMAT. Reserved bits 13–15 are
    /// ignored, as ROCR does.
    pub fn decode(bits: u16) -> Result<Header, AqlError> {
        let ty = match bits & 0xff {
            0 => PacketType::VendorSpecific,
            1 => PacketType::Invalid,
            2 => PacketType::KernelDispatch,
            3 => PacketType::BarrierAnd,
            4 => PacketType::AgentDispatch,
            5 => PacketType::BarrierOr,
            t => {
                return Err(AqlError::new(
                    Status::INVALID_PACKET_FORMAT,
                    format!("header {bits:#06x}: unknown packet type {t}"),
                ));
            }
        };
        let scope = |shift: u16, what: &str| {
            FenceScope::from_bits((bits >> shift) & 3).ok_or_else(|| {
                AqlError::new(
                    Status::INVALID_PACKET_FORMAT,
                    format!("header {bits:#06x}: {what} fence scope 3 is undefined"),
                )
            })
        };
        Ok(Header {
            ty,
            barrier: bits & HEADER_BARRIER != 0,
            acquire: scope(ACQUIRE_SHIFT, "acquire")?,
            release: scope(RELEASE_SHIFT, "release")?,
        })
    }
}

/// `hsa_kernel_dispatch_packet_t`.
#[repr(C, align(64))]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct KernelDispatchPacket {
    pub header: u16,
    /// Bits 0–1: dimensions (1–3); other bits 0.
    pub setup: u16,
    pub workgroup_size: [u16; 3],
    pub reserved0: u16,
    /// In work-items; need not be a multiple of the workgroup size.
    pub grid_size: [u32; 3],
    /// Bytes per work-item.
    pub private_segment_size: u32,
    /// Bytes per workgroup.
    pub group_segment_size: u32,
    /// Address of a registered [`super::CodeObject`] descriptor.
    pub kernel_object: u64,
    pub kernarg_address: u64,
    pub reserved2: u64,
    pub completion_signal: u64,
}

/// `hsa_agent_dispatch_packet_t`.
#[repr(C, align(64))]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct AgentDispatchPacket {
    pub header: u16,
    pub ty: u16,
    pub reserved0: u32,
    pub return_address: u64,
    pub arg: [u64; 4],
    pub reserved2: u64,
    pub completion_signal: u64,
}

/// `hsa_barrier_and_packet_t` / `hsa_barrier_or_packet_t` (same layout).
#[repr(C, align(64))]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct BarrierPacket {
    pub header: u16,
    pub reserved0: u16,
    pub reserved1: u32,
    /// Signal handles; 0 is satisfied in AND and never satisfied in OR.
    pub dep_signal: [u64; 5],
    pub reserved2: u64,
    pub completion_signal: u64,
}

/// Packets a producer can write into a queue.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Packet {
    KernelDispatch(KernelDispatchPacket),
    Barrier(BarrierPacket),
    AgentDispatch(AgentDispatchPacket),
    /// Any 64 bytes (header included), e.g. vendor-specific or deliberately bad packets.
    Raw([u8; PACKET_SIZE]),
}

impl Packet {
    /// The 64 bytes of the packet, header included.
    pub fn to_bytes(&self) -> [u8; PACKET_SIZE] {
        match self {
            Packet::KernelDispatch(p) => p.to_bytes(),
            Packet::Barrier(p) => p.to_bytes(),
            Packet::AgentDispatch(p) => p.to_bytes(),
            Packet::Raw(b) => *b,
        }
    }

    /// The first 32 bits (`header | setup << 16`), published last with release order.
    pub fn first_word(&self) -> u32 {
        let b = self.to_bytes();
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
}

/// Little-endian field access over a packet's bytes.
struct Bytes<'a>(&'a [u8; PACKET_SIZE]);

impl Bytes<'_> {
    fn u16(&self, at: usize) -> u16 {
        u16::from_le_bytes([self.0[at], self.0[at + 1]])
    }
    fn u32(&self, at: usize) -> u32 {
        let mut b = [0; 4];
        b.copy_from_slice(&self.0[at..at + 4]);
        u32::from_le_bytes(b)
    }
    fn u64(&self, at: usize) -> u64 {
        let mut b = [0; 8];
        b.copy_from_slice(&self.0[at..at + 8]);
        u64::from_le_bytes(b)
    }
}

struct Writer([u8; PACKET_SIZE]);

impl Writer {
    fn put(&mut self, at: usize, bytes: &[u8]) {
        self.0[at..at + bytes.len()].copy_from_slice(bytes);
    }
}

impl KernelDispatchPacket {
    pub fn from_bytes(b: &[u8; PACKET_SIZE]) -> KernelDispatchPacket {
        let r = Bytes(b);
        KernelDispatchPacket {
            header: r.u16(0),
            setup: r.u16(2),
            workgroup_size: [r.u16(4), r.u16(6), r.u16(8)],
            reserved0: r.u16(10),
            grid_size: [r.u32(12), r.u32(16), r.u32(20)],
            private_segment_size: r.u32(24),
            group_segment_size: r.u32(28),
            kernel_object: r.u64(32),
            kernarg_address: r.u64(40),
            reserved2: r.u64(48),
            completion_signal: r.u64(56),
        }
    }

    pub fn to_bytes(&self) -> [u8; PACKET_SIZE] {
        let mut w = Writer([0; PACKET_SIZE]);
        w.put(0, &self.header.to_le_bytes());
        w.put(2, &self.setup.to_le_bytes());
        for (i, s) in self.workgroup_size.iter().enumerate() {
            w.put(4 + 2 * i, &s.to_le_bytes());
        }
        w.put(10, &self.reserved0.to_le_bytes());
        for (i, s) in self.grid_size.iter().enumerate() {
            w.put(12 + 4 * i, &s.to_le_bytes());
        }
        w.put(24, &self.private_segment_size.to_le_bytes());
        w.put(28, &self.group_segment_size.to_le_bytes());
        w.put(32, &self.kernel_object.to_le_bytes());
        w.put(40, &self.kernarg_address.to_le_bytes());
        w.put(48, &self.reserved2.to_le_bytes());
        w.put(56, &self.completion_signal.to_le_bytes());
        w.0
    }

    /// Dimensions from `setup` (bits 0–1), if the other setup bits are clear.
    pub fn dimensions(&self) -> Option<u32> {
        let dims = u32::from(self.setup & 3);
        (self.setup >> 2 == 0 && dims != 0).then_some(dims)
    }
}

impl BarrierPacket {
    pub fn from_bytes(b: &[u8; PACKET_SIZE]) -> BarrierPacket {
        let r = Bytes(b);
        BarrierPacket {
            header: r.u16(0),
            reserved0: r.u16(2),
            reserved1: r.u32(4),
            dep_signal: [r.u64(8), r.u64(16), r.u64(24), r.u64(32), r.u64(40)],
            reserved2: r.u64(48),
            completion_signal: r.u64(56),
        }
    }

    pub fn to_bytes(&self) -> [u8; PACKET_SIZE] {
        let mut w = Writer([0; PACKET_SIZE]);
        w.put(0, &self.header.to_le_bytes());
        w.put(2, &self.reserved0.to_le_bytes());
        w.put(4, &self.reserved1.to_le_bytes());
        for (i, d) in self.dep_signal.iter().enumerate() {
            w.put(8 + 8 * i, &d.to_le_bytes());
        }
        w.put(48, &self.reserved2.to_le_bytes());
        w.put(56, &self.completion_signal.to_le_bytes());
        w.0
    }
}

impl AgentDispatchPacket {
    pub fn to_bytes(&self) -> [u8; PACKET_SIZE] {
        let mut w = Writer([0; PACKET_SIZE]);
        w.put(0, &self.header.to_le_bytes());
        w.put(2, &self.ty.to_le_bytes());
        w.put(4, &self.reserved0.to_le_bytes());
        w.put(8, &self.return_address.to_le_bytes());
        for (i, a) in self.arg.iter().enumerate() {
            w.put(16 + 8 * i, &a.to_le_bytes());
        }
        w.put(48, &self.reserved2.to_le_bytes());
        w.put(56, &self.completion_signal.to_le_bytes());
        w.0
    }
}

/// The completion signal of any packet type (bytes 56–63).
pub fn completion_signal_of(b: &[u8; PACKET_SIZE]) -> u64 {
    Bytes(b).u64(56)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_hsa_h() {
        assert_eq!(std::mem::size_of::<KernelDispatchPacket>(), 64);
        assert_eq!(std::mem::size_of::<BarrierPacket>(), 64);
        assert_eq!(std::mem::size_of::<AgentDispatchPacket>(), 64);
        assert_eq!(std::mem::offset_of!(KernelDispatchPacket, grid_size), 12);
        assert_eq!(
            std::mem::offset_of!(KernelDispatchPacket, kernel_object),
            32
        );
        assert_eq!(std::mem::offset_of!(BarrierPacket, dep_signal), 8);
        assert_eq!(std::mem::offset_of!(AgentDispatchPacket, arg), 16);
    }

    #[test]
    fn byte_form_equals_memory_form() {
        let p = KernelDispatchPacket {
            header: 0x1502,
            setup: 3,
            workgroup_size: [8, 4, 2],
            reserved0: 0,
            grid_size: [100, 7, 3],
            private_segment_size: 16,
            group_segment_size: 256,
            kernel_object: 0x1122_3344_5566_7788,
            kernarg_address: 0x99aa,
            reserved2: 0,
            completion_signal: 0xdead_beef,
        };
        // SAFETY: KernelDispatchPacket is repr(C) plain old data of exactly 64 bytes.
        let raw: [u8; 64] = unsafe { std::mem::transmute(p) };
        assert_eq!(raw, p.to_bytes());
        assert_eq!(KernelDispatchPacket::from_bytes(&raw), p);
        assert_eq!(completion_signal_of(&raw), 0xdead_beef);
    }

    #[test]
    fn tinygrad_header_decodes() {
        let h = Header::decode(0x1502).map_err(|e| e.to_string());
        assert_eq!(h, Ok(Header::new(PacketType::KernelDispatch, true)));
        assert_eq!(Header::new(PacketType::KernelDispatch, true).bits(), 0x1502);
        let bad = Header::decode(0xffff).map(|_| ()).map_err(|e| e.status);
        assert_eq!(bad, Err(Status::INVALID_PACKET_FORMAT));
        let scope3 = Header::decode(0x0602).map(|_| ()).map_err(|e| e.status);
        assert_eq!(scope3, Err(Status::INVALID_PACKET_FORMAT));
    }
}
