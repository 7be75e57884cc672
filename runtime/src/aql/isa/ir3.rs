//! Adreno a6xx ir3 code objects, lifted by `wavejit_frontend::ir3::lift`.
//!
//! Code object: `code` = 64-bit little-endian instruction words; `entry` = byte
//! offset of the first instruction (a multiple of 8; branches are relative).
//! `group_segment_fixed_size` = workgroup-local bytes, `private_segment_fixed_size`
//! = ldp/stp bytes per fiber; wave size 64 (default) or 128 (a6xx THREADSIZE).
//!
//! Register state at entry, as mesa's a6xx compute shaders (and tinygrad's kernels)
//! are set up by HLSQ_CS_CNTL_0: local id x,y,z in r0.x..z (LOCALIDREGID 0),
//! workgroup id x,y,z in the shared registers r48.x..z (WGIDCONSTID 0xc0), no
//! linear local id; merged half/full registers; constant demotion on.
//!
//! Argument ABI (`ArgAbi::UniformCopy`): the const file `c0.x ..` holds the kernarg
//! bytes (at most 4096, the whole 256-vec4 file); buffers are 64-bit addresses in
//! const pairs, read with `ldg`/`stg`. No texture, sampler, IBO or UBO descriptors
//! are loaded.

use wavejit_frontend::ir3::lift::{self, CONST_BYTES, LiftConfig};

use super::cache::LiftCache;
use super::{copied_kernargs, invalid_code, wave_size};
use crate::aql::code_object::Isa;
use crate::aql::loader::{CodeObjectRef, IsaBackend, LoadedKernel, UniformLayout, UniformSource};
use crate::aql::status::AqlError;

const NAME: &str = "ir3";

/// regid of r0.x: the local id.
pub const LOCAL_ID_REGID: u32 = 0;
/// regid of r48.x: the workgroup id.
pub const WORKGROUP_ID_REGID: u32 = 0xc0;
/// regid meaning "not delivered".
const NONE_REGID: u32 = 0xfc;

#[derive(Default)]
pub struct Ir3Backend {
    cache: LiftCache<(u64, u32, LiftConfig)>,
}

impl Ir3Backend {
    /// Distinct kernels lifted so far.
    pub fn lifted_count(&self) -> usize {
        self.cache.len()
    }
}

/// The lift configuration of AQL ir3 code objects (see the module docs).
pub fn lift_config(private_size: u32, shared_size: u32) -> LiftConfig {
    LiftConfig {
        merged_regs: true,
        const_demotion: true,
        local_id_regid: LOCAL_ID_REGID,
        workgroup_id_regid: WORKGROUP_ID_REGID,
        linear_local_id_regid: NONE_REGID,
        private_size,
        shared_size,
        // No brac conditions set (AQL has no SP_CS_BOOLEAN_CF_MASK).
        boolean_cf_mask: 0,
        // Every descriptor table empty; the info block (TEXMEMOBJ / UAV /
        // bindless bases, all 0) follows the const file.
        uniforms: lift::DescriptorLayout::none(),
        // Lifted once per code object, for every grid the queue launches.
        shape: None,
    }
}

impl IsaBackend for Ir3Backend {
    fn isa(&self) -> Isa {
        Isa::Ir3
    }

    fn load(&self, object: CodeObjectRef<'_>) -> Result<LoadedKernel, AqlError> {
        let wave = wave_size(NAME, object, 64, &[64, 128])?;
        let len = copied_kernargs(NAME, object, CONST_BYTES)?;
        let code = object.code;
        if !code.len().is_multiple_of(8) {
            return Err(invalid_code(
                NAME,
                format!(
                    "{} code bytes are not whole 64-bit instructions",
                    code.len()
                ),
            ));
        }
        let entry = object.desc.entry;
        let first = usize::try_from(entry)
            .ok()
            .filter(|e| e.is_multiple_of(8) && *e < code.len())
            .ok_or_else(|| {
                invalid_code(
                    NAME,
                    format!(
                        "entry {entry:#x} is not an instruction (8-byte aligned, below {:#x})",
                        code.len()
                    ),
                )
            })?;
        let cfg = lift_config(
            object.desc.private_segment_fixed_size,
            object.desc.group_segment_fixed_size,
        );
        self.cache
            .get_or_lift(code, (entry, wave, cfg.clone()), || {
                let words: Vec<u64> = code[first..]
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
                    .collect();
                let kernel = lift::lift(&words, &cfg).map_err(|e| invalid_code(NAME, e))?;
                let mut uniforms = UniformLayout::default();
                uniforms.push(UniformSource::Kernargs { len }, 16);
                // Rest of the const file (zero) and the info block.
                uniforms.size = cfg.uniforms.image_bytes();
                Ok(LoadedKernel {
                    kernel,
                    uniforms,
                    wave_size: wave,
                    wording: None,
                })
            })
    }
}
