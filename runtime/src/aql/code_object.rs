//! The wavejit code-object descriptor: what a kernel-dispatch packet's
//! `kernel_object` points to on a wavejit agent.
//!
//! It plays the role of AMD's 64-byte kernel descriptor for the non-AMD ISAs: the
//! ISA, the code, the entry and how kernel arguments reach the kernel. The
//! descriptor (and the code it points to) must be registered with the agent before
//! packets name it; registration copies both, so they may be freed or reused
//! afterwards (each registration gets its own handle).

use super::status::{AqlError, Status};

/// `'W' 'J' 'C' 'O'` read as a little-endian u32.
pub const CODE_OBJECT_MAGIC: u32 = u32::from_le_bytes(*b"WJCO");
/// The descriptor version this runtime reads.
pub const CODE_OBJECT_VERSION: u16 = 1;
/// Largest `code_size` registration copies (64 MiB; the lifters stop far below:
/// RV32 at 2^18 instructions). A larger size is INVALID_CODE_OBJECT, so no copy
/// is sized by the client's word alone.
pub const MAX_CODE_SIZE: u64 = 64 << 20;

/// The instruction set of a code object.
#[repr(u16)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Isa {
    /// wavejit IR in its text form (`wavejit_ir::text`), for tests and tools.
    IrText = 0,
    /// Apple AGX (G13) machine code.
    Agx = 1,
    /// Adreno ir3 machine code.
    Ir3 = 2,
    /// The RV32 GPGPU ISA.
    Rv32 = 3,
}

impl Isa {
    pub fn from_raw(raw: u16) -> Option<Isa> {
        match raw {
            0 => Some(Isa::IrText),
            1 => Some(Isa::Agx),
            2 => Some(Isa::Ir3),
            3 => Some(Isa::Rv32),
            _ => None,
        }
    }
}

/// How the kernarg segment reaches the kernel (a request; each ISA backend
/// documents which it supports and what its uniform layout is).
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ArgAbi {
    /// The first `kernarg_size` bytes of the kernarg segment are copied into the
    /// uniform space at offset 0.
    UniformCopy = 0,
    /// The kernarg segment's address (u64) is at uniform offset 0; the kernel reads
    /// the arguments from global memory.
    UniformPointer = 1,
}

impl ArgAbi {
    pub fn from_raw(raw: u32) -> Option<ArgAbi> {
        match raw {
            0 => Some(ArgAbi::UniformCopy),
            1 => Some(ArgAbi::UniformPointer),
            _ => None,
        }
    }
}

/// The descriptor, 64 bytes and 64-byte aligned like AMD's `kernel_descriptor_t`.
/// C name: `wj_aql_code_object_t`.
#[repr(C, align(64))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct CodeObject {
    /// [`CODE_OBJECT_MAGIC`].
    pub magic: u32,
    /// [`CODE_OBJECT_VERSION`].
    pub version: u16,
    /// An [`Isa`] value.
    pub isa: u16,
    /// An [`ArgAbi`] value.
    pub arg_abi: u32,
    /// Bytes of kernel arguments the kernel reads.
    pub kernarg_size: u32,
    /// Host address of the code (IR text: UTF-8 text, no terminator needed).
    pub code: u64,
    /// Bytes of code.
    pub code_size: u64,
    /// Machine ISAs: byte offset of the entry point in the code. IR text: index of
    /// the kernel in the module.
    pub entry: u64,
    /// Group (shared) bytes per workgroup the kernel needs at least.
    pub group_segment_fixed_size: u32,
    /// Private bytes per work-item the kernel needs at least.
    pub private_segment_fixed_size: u32,
    /// Lanes per wave the code was compiled for (0 = the ISA's default).
    pub wave_size: u32,
    /// Must be 0.
    pub reserved: [u32; 3],
}

impl CodeObject {
    /// A descriptor for `code` (which must outlive registration).
    pub fn new(isa: Isa, arg_abi: ArgAbi, code: &[u8], kernarg_size: u32) -> CodeObject {
        CodeObject {
            magic: CODE_OBJECT_MAGIC,
            version: CODE_OBJECT_VERSION,
            isa: isa as u16,
            arg_abi: arg_abi as u32,
            kernarg_size,
            code: code.as_ptr() as u64,
            code_size: code.len() as u64,
            entry: 0,
            group_segment_fixed_size: 0,
            private_segment_fixed_size: 0,
            wave_size: 0,
            reserved: [0; 3],
        }
    }

    /// Checks the fixed fields; the ISA itself is checked against the agent's
    /// backends at dispatch (INVALID_ISA).
    pub fn validate(&self) -> Result<(Isa, ArgAbi), AqlError> {
        let bad = |what: String| Err(AqlError::new(Status::INVALID_CODE_OBJECT, what));
        if self.magic != CODE_OBJECT_MAGIC {
            return bad(format!("magic {:#010x} is not 'WJCO'", self.magic));
        }
        if self.version != CODE_OBJECT_VERSION {
            return bad(format!("version {} is not supported", self.version));
        }
        if self.reserved != [0; 3] {
            return bad("reserved words are not zero".into());
        }
        let Some(abi) = ArgAbi::from_raw(self.arg_abi) else {
            return bad(format!("argument ABI {} is unknown", self.arg_abi));
        };
        let Some(isa) = Isa::from_raw(self.isa) else {
            return Err(AqlError::new(
                Status::INVALID_ISA,
                format!("ISA id {} is unknown", self.isa),
            ));
        };
        if self.code == 0 || self.code_size == 0 {
            return bad("no code".into());
        }
        if self.code_size > MAX_CODE_SIZE {
            return bad(format!(
                "code_size {} exceeds the limit of {MAX_CODE_SIZE} bytes",
                self.code_size
            ));
        }
        Ok((isa, abi))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_is_64_bytes() {
        assert_eq!(std::mem::size_of::<CodeObject>(), 64);
        assert_eq!(std::mem::align_of::<CodeObject>(), 64);
        assert_eq!(std::mem::offset_of!(CodeObject, code), 16);
        assert_eq!(std::mem::offset_of!(CodeObject, reserved), 52);
        assert_eq!(CODE_OBJECT_MAGIC, 0x4f43_4a57);
    }

    #[test]
    fn validation_names_the_field() {
        let code = b"x";
        let good = CodeObject::new(Isa::IrText, ArgAbi::UniformCopy, code, 0);
        assert_eq!(good.validate(), Ok((Isa::IrText, ArgAbi::UniformCopy)));
        let mut bad = good;
        bad.magic = 0;
        let e = bad.validate().err();
        assert_eq!(
            e.as_ref().map(|e| e.status),
            Some(Status::INVALID_CODE_OBJECT)
        );
        assert!(e.is_some_and(|e| e.message.contains("magic")));
        let mut isa = good;
        isa.isa = 9;
        assert_eq!(
            isa.validate().map_err(|e| e.status),
            Err(Status::INVALID_ISA)
        );
    }
}
