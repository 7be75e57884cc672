//! Apple AGX (G13) code objects, lifted by `wavejit_frontend::agx::lift`.
//!
//! Code object: `code` = raw instruction bytes, pc = byte offset; `entry` = pc of
//! the first instruction; `group_segment_fixed_size` = threadgroup memory. Waves
//! (SIMD-groups) of 32; all 128 GPRs available. No preamble (its uniform stores
//! would need a per-dispatch writable file): a code object is the main program.
//!
//! Argument ABI (`ArgAbi::UniformCopy`): the uniform file `u0l ..` holds the
//! kernarg bytes (at most 1024, the 512 halves), so kernarg qword `i` is buffer
//! `i`'s address in `u(2i)_u(2i+1)` (`du(2i)` in loads and stores) as Metal binds
//! `buffer(i)`; other uniforms are the following kernarg words. The grid size in
//! threads follows the file, where the lifted kernel expects it.

use std::sync::Arc;

use wavejit_frontend::agx::lift::{self, GRID_OFFSET, LiftConfig, UNIFORM_FILE_BYTES};
use wavejit_ir::Fault;

use super::cache::LiftCache;
use super::{copied_kernargs, invalid_code, wave_size};
use crate::aql::code_object::Isa;
use crate::aql::loader::{
    CodeObjectRef, FaultWording, IsaBackend, LoadedKernel, UniformLayout, UniformSource,
};
use crate::aql::status::AqlError;

const NAME: &str = "agx";

#[derive(Default)]
pub struct AgxBackend {
    cache: LiftCache<(u64, u32)>,
}

impl AgxBackend {
    /// Distinct kernels lifted so far.
    pub fn lifted_count(&self) -> usize {
        self.cache.len()
    }
}

impl IsaBackend for AgxBackend {
    fn isa(&self) -> Isa {
        Isa::Agx
    }

    fn load(&self, object: CodeObjectRef<'_>) -> Result<LoadedKernel, AqlError> {
        let wave = wave_size(NAME, object, 32, &[32])?;
        let len = copied_kernargs(NAME, object, UNIFORM_FILE_BYTES)?;
        let entry = object.desc.entry;
        let shared = object.desc.group_segment_fixed_size;
        let code = object.code;
        self.cache.get_or_lift(code, (entry, shared), || {
            let cfg = LiftConfig {
                name: format!("agx@{entry:#x}"),
                entry,
                threadgroup_memory: shared,
                ..LiftConfig::default()
            };
            let kernel = lift::lift(code, &cfg).map_err(|e| invalid_code(NAME, e))?;
            let mut uniforms = UniformLayout::default();
            uniforms.push(UniformSource::Kernargs { len }, 16);
            uniforms.size = UNIFORM_FILE_BYTES;
            let grid = uniforms.push(UniformSource::GridSize, 16);
            debug_assert_eq!(grid, GRID_OFFSET);
            // A fault names the AGX instruction at its pc and what a trap
            // means (the code is kept for that).
            let guest: Arc<[u8]> = Arc::from(code);
            let wording = FaultWording(Arc::new(move |f: &Fault| lift::describe_fault(&guest, f)));
            Ok(LoadedKernel {
                kernel,
                uniforms,
                wave_size: wave,
                wording: Some(wording),
            })
        })
    }
}
