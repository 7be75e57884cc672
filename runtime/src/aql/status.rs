//! HSA status codes (hsa.h and hsa_ext_amd.h values) used by queue callbacks and
//! the C ABI.

use std::fmt;

/// An `hsa_status_t` value.
#[repr(transparent)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Status(pub u32);

impl Status {
    pub const SUCCESS: Status = Status(0);
    pub const ERROR: Status = Status(0x1000);
    pub const INVALID_ARGUMENT: Status = Status(0x1001);
    pub const INVALID_QUEUE_CREATION: Status = Status(0x1002);
    pub const INVALID_ALLOCATION: Status = Status(0x1003);
    pub const INVALID_SIGNAL: Status = Status(0x1006);
    pub const INVALID_QUEUE: Status = Status(0x1007);
    pub const OUT_OF_RESOURCES: Status = Status(0x1008);
    pub const INVALID_PACKET_FORMAT: Status = Status(0x1009);
    pub const INCOMPATIBLE_ARGUMENTS: Status = Status(0x100D);
    pub const INVALID_ISA: Status = Status(0x100F);
    pub const INVALID_CODE_OBJECT: Status = Status(0x1010);
    pub const EXCEPTION: Status = Status(0x1016);
    pub const FATAL: Status = Status(0x1026);
    /// hsa_ext_amd.h: a kernel touched memory outside its apertures.
    pub const MEMORY_APERTURE_VIOLATION: Status = Status(41);
    pub const ILLEGAL_INSTRUCTION: Status = Status(42);
    /// hsa_ext_amd.h: a kernel's memory access was refused.
    pub const MEMORY_FAULT: Status = Status(43);
    pub const OUT_OF_REGISTERS: Status = Status(45);

    /// The hsa.h name without the `HSA_STATUS_` prefix.
    pub fn name(self) -> &'static str {
        match self {
            Status::SUCCESS => "SUCCESS",
            Status::ERROR => "ERROR",
            Status::INVALID_ARGUMENT => "ERROR_INVALID_ARGUMENT",
            Status::INVALID_QUEUE_CREATION => "ERROR_INVALID_QUEUE_CREATION",
            Status::INVALID_ALLOCATION => "ERROR_INVALID_ALLOCATION",
            Status::INVALID_SIGNAL => "ERROR_INVALID_SIGNAL",
            Status::INVALID_QUEUE => "ERROR_INVALID_QUEUE",
            Status::OUT_OF_RESOURCES => "ERROR_OUT_OF_RESOURCES",
            Status::INVALID_PACKET_FORMAT => "ERROR_INVALID_PACKET_FORMAT",
            Status::INCOMPATIBLE_ARGUMENTS => "ERROR_INCOMPATIBLE_ARGUMENTS",
            Status::INVALID_ISA => "ERROR_INVALID_ISA",
            Status::INVALID_CODE_OBJECT => "ERROR_INVALID_CODE_OBJECT",
            Status::EXCEPTION => "ERROR_EXCEPTION",
            Status::FATAL => "ERROR_FATAL",
            Status::MEMORY_APERTURE_VIOLATION => "ERROR_MEMORY_APERTURE_VIOLATION",
            Status::ILLEGAL_INSTRUCTION => "ERROR_ILLEGAL_INSTRUCTION",
            Status::MEMORY_FAULT => "ERROR_MEMORY_FAULT",
            Status::OUT_OF_REGISTERS => "ERROR_OUT_OF_REGISTERS",
            _ => "unknown status",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({:#x})", self.name(), self.0)
    }
}

/// A failed operation: the HSA status plus what went wrong and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{status}: {message}")]
pub struct AqlError {
    pub status: Status,
    pub message: String,
}

impl AqlError {
    pub fn new(status: Status, message: impl Into<String>) -> AqlError {
        AqlError {
            status,
            message: message.into(),
        }
    }
}
