//! RV32 GPGPU code objects (`shared/reference/rv32-gpgpu.md`), lifted by
//! `wavejit_frontend::rv32::lift` as the MMIO device does it.
//!
//! Code object: `code` = little-endian instruction words, core pc = byte offset in
//! the code; `entry` = pc of the first instruction (4-byte aligned).
//!
//! Dispatch model (as the device's DISPATCH): one lane per hart, waves of 32
//! (warps), workgroups = blocks; `mhartid = block_linear << 13 | local_index`; the
//! ID window at 0x8000_0000 reads threadIdx/blockIdx/blockDim/gridDim (gridDim =
//! workgroups, rounded up for partial grids whose extra lanes never run). A lane
//! ends at `ebreak` or `ret` with ra == 0; 100,000 retired instructions per lane at
//! most (then a trap: EXCEPTION).
//!
//! Argument ABI: the datasheet's cores are given no argument pointer — every
//! register is 0 at launch, the ID window holds only IDs, and the device's
//! KERNEL_ARGS register is "reserved, not used by the engine". A kernel addresses
//! 32-bit core addresses, which are global addresses below 4 GiB (zero-extended),
//! and finds its arguments where it was built to look, like the datasheet's tests
//! that write to VRAM 0x1000. So on AQL the kernarg segment is the argument block
//! at that fixed core address (allocate it and the buffers with
//! `AddressSpace::alloc_at` below 4 GiB); nothing is copied into uniforms, and
//! `arg_abi`/`kernarg_size` are not used.

use std::sync::Arc;

use wavejit_frontend::rv32::lift::{self, DEFAULT_CYCLE_LIMIT, LiftConfig};
use wavejit_ir::{Fault, FaultKind};

use super::cache::LiftCache;
use super::{invalid_code, wave_size};
use crate::aql::code_object::Isa;
use crate::aql::loader::{CodeObjectRef, FaultWording, IsaBackend, LoadedKernel, UniformLayout};
use crate::aql::status::AqlError;

const NAME: &str = "rv32";

/// The RV32 backend.
pub struct Rv32Backend {
    /// Instructions a lane may retire (`None`: the agent's step limit only).
    pub cycle_limit: Option<u32>,
    cache: LiftCache<(u32, Option<u32>)>,
}

impl Default for Rv32Backend {
    fn default() -> Self {
        Rv32Backend::new(Some(DEFAULT_CYCLE_LIMIT))
    }
}

impl Rv32Backend {
    pub fn new(cycle_limit: Option<u32>) -> Rv32Backend {
        Rv32Backend {
            cycle_limit,
            cache: LiftCache::default(),
        }
    }

    /// Distinct kernels lifted so far.
    pub fn lifted_count(&self) -> usize {
        self.cache.len()
    }
}

fn fetch(code: &[u8], pc: u32) -> Option<u32> {
    let at = usize::try_from(pc).ok()?;
    let bytes = code.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

impl IsaBackend for Rv32Backend {
    fn isa(&self) -> Isa {
        Isa::Rv32
    }

    fn load(&self, object: CodeObjectRef<'_>) -> Result<LoadedKernel, AqlError> {
        // The engine's warp is fixed at 32 lanes (datasheet §1).
        let wave = wave_size(NAME, object, 32, &[32])?;
        let entry = u32::try_from(object.desc.entry).map_err(|_| {
            invalid_code(
                NAME,
                format!(
                    "entry {:#x} is outside the 32-bit core address space",
                    object.desc.entry
                ),
            )
        })?;
        let code = object.code;
        self.cache.get_or_lift(code, (entry, self.cycle_limit), || {
            let opts = LiftConfig {
                name: format!("rv32@{entry:#x}"),
                cycle_limit: self.cycle_limit,
                ..LiftConfig::default()
            };
            let lifted = lift::lift(&|pc| fetch(code, pc), entry, &opts)
                .map_err(|e| invalid_code(NAME, e))?;
            // A trap's code indexes the lift's trap sites: name the cause,
            // pc and word instead of the bare code.
            let traps = Arc::new(lifted.traps);
            let wording = FaultWording(Arc::new(move |f: &Fault| match f.kind {
                FaultKind::Trap { code } => match traps.get(code as usize) {
                    Some(site) => format!("{f}: rv32 {site}"),
                    None => f.to_string(),
                },
                _ => f.to_string(),
            }));
            Ok(LoadedKernel {
                kernel: lifted.kernel,
                uniforms: UniformLayout::default(),
                wave_size: wave,
                wording: Some(wording),
            })
        })
    }
}
