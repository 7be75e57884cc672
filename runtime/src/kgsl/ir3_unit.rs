//! The compute unit behind CP_EXEC_CS: lifts the ir3 kernel at SP_CS_BASE into
//! the wavejit IR (cached by content: shader bytes + the state the lift depends
//! on, never by address) and runs it on the JIT (which itself falls back to the
//! interpreter for kernels it cannot take).

use std::hash::BuildHasher;
use std::sync::Arc;

use rustc_hash::{FxBuildHasher, FxHashMap};
use wavejit_frontend::ir3::lift::{self, DescriptorLayout, LiftConfig};
use wavejit_ir::{Budget, Dispatch, DispatchShape, Engine, Kernel};
use wavejit_jit::Jit;

use super::pm4::{ComputeCause, ComputeError, ComputeUnit, CsDispatch};
use super::profile::{self, Phase};
use crate::memory::AddressSpace;

/// Environment override forcing MERGEDREGS aliasing for clients (tinygrad 0.14.0)
/// that launch merged-register kernels with SP_CS_CNTL_0.MERGEDREGS clear.
pub const MERGEDREGS_ENV: &str = "WAVEJIT_IR3_MERGEDREGS";

/// Largest shader CP_EXEC_CS reads, bytes: 4 MiB = 2^19 instructions.
/// SP_CS_INSTR_SIZE is a client's register (28 bits of 128-byte units on a6xx,
/// i.e. up to 32 GiB; tinygrad's largest kernels are ~150 KB), so the copy of
/// the shader is bounded here rather than by the register.
pub const MAX_SHADER_BYTES: u64 = 4 << 20;

/// A lifted kernel with the exact words it came from (hash collisions are told
/// apart by comparing them).
type Lifted = (Vec<u64>, Arc<Kernel>);

/// Runs lifted ir3 kernels.
pub struct Ir3Unit {
    jit: Jit,
    /// Fx-hashed: every submission looks its shader up (SipHash over a
    /// shader's words and the lift config was half a percent of tinygrad's
    /// test_ops).
    cache: FxHashMap<(u64, LiftConfig), Vec<Lifted>>,
    force_merged: bool,
    budget: Budget,
}

impl Default for Ir3Unit {
    fn default() -> Self {
        Ir3Unit::new(std::env::var(MERGEDREGS_ENV).is_ok_and(|v| v == "1"))
    }
}

impl Ir3Unit {
    /// `force_merged`: alias half registers onto full ones even when the
    /// dispatch's MERGEDREGS bit is clear.
    pub fn new(force_merged: bool) -> Ir3Unit {
        Ir3Unit {
            jit: Jit::default(),
            cache: FxHashMap::default(),
            force_merged,
            budget: Budget::from_env(),
        }
    }

    /// The budget of every CP_EXEC_CS dispatch (default [`Budget::from_env`]):
    /// past it the dispatch faults, which faults the submitting context, so a
    /// huge grid cannot hold GPU_COMMAND (and the device lock) indefinitely.
    pub fn set_budget(&mut self, budget: Budget) {
        self.budget = budget;
    }

    /// How many distinct kernels were lifted so far.
    pub fn lifted_count(&self) -> usize {
        self.cache.values().map(Vec::len).sum()
    }

    fn kernel(
        &mut self,
        words: Vec<u64>,
        cfg: &LiftConfig,
    ) -> Result<Arc<Kernel>, lift::LiftError> {
        let key = (FxBuildHasher.hash_one(&words), cfg.clone());
        if let Some(k) = self
            .cache
            .get(&key)
            .and_then(|v| v.iter().find(|(w, _)| *w == words))
        {
            return Ok(k.1.clone());
        }
        let k = Arc::new(lift::lift(&words, cfg)?);
        self.cache.entry(key).or_default().push((words, k.clone()));
        Ok(k)
    }
}

/// The uniform image of `d` (`lift::uniform_image`: const file, descriptors,
/// base registers).
fn uniforms(d: &CsDispatch) -> (Vec<u8>, DescriptorLayout) {
    let s = &d.state;
    let bound = lift::Descriptors {
        textures: &s.textures,
        samplers: &s.samplers,
        uavs: &s.uavs,
        ubos: &s.ubos,
        texmemobj_base: d.texmemobj_base,
        uav_base: d.uav_base,
        bindless_base: d.bindless_base,
    };
    lift::uniform_image(&s.consts, &bound)
}

impl ComputeUnit for Ir3Unit {
    fn exec_cs(&mut self, d: &CsDispatch, mem: &AddressSpace) -> Result<(), ComputeError> {
        let merged = d.merged_regs || self.force_merged;
        let mode = match (d.merged_regs, self.force_merged) {
            (true, _) => "merged registers (SP_CS_CNTL_0.MERGEDREGS set)",
            (false, true) => {
                "merged registers (forced by WAVEJIT_IR3_MERGEDREGS=1; MERGEDREGS bit clear)"
            }
            (false, false) => "separate half registers (SP_CS_CNTL_0.MERGEDREGS clear)",
        };
        let where_ = format!("ir3 kernel at {:#x}, {mode}", d.shader_addr);
        if d.shader_len > MAX_SHADER_BYTES {
            let cause = ComputeCause::ShaderTooLarge {
                bytes: d.shader_len,
                instr_size: d.shader_len / 128,
                limit: MAX_SHADER_BYTES,
            };
            return Err(ComputeError::new(where_, cause));
        }
        let kernel_timer = profile::start(Phase::Kernel);
        let bytes = mem
            .read_bytes(d.shader_addr, d.shader_len as usize)
            .map_err(|e| {
                ComputeError::new(&where_, ComputeCause::ShaderUnreadable(e.to_string()))
            })?;
        let words: Vec<u64> = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect();
        drop(kernel_timer);
        let uniforms_timer = profile::start(Phase::Uniforms);
        let (uniforms, layout) = uniforms(d);
        drop(uniforms_timer);
        let kernel_timer = profile::start(Phase::Kernel);
        let cfg = LiftConfig {
            merged_regs: merged,
            const_demotion: d.const_demotion,
            local_id_regid: d.local_id_regid,
            workgroup_id_regid: d.workgroup_id_regid,
            linear_local_id_regid: d.linear_local_id_regid,
            private_size: d.private_size,
            shared_size: d.shared_size,
            boolean_cf_mask: d.boolean_cf_mask,
            uniforms: layout,
            // Lifted (and cached) per launch shape, as the RV32 and AGX
            // lifts are.
            shape: Some(DispatchShape {
                num_workgroups: d.groups,
                workgroup_size: d.local_size,
            }),
        };
        let kernel = self
            .kernel(words, &cfg)
            .map_err(|e| ComputeError::new(&where_, e))?;
        drop(kernel_timer);
        let dispatch = Dispatch {
            workgroups: d.groups,
            workgroup_size: d.local_size,
            wave_size: d.wave_size,
            uniforms,
            step_limit: wavejit_ir::dispatch::DEFAULT_STEP_LIMIT,
            budget: self.budget.clone(),
        };
        let _run_timer = profile::start_run(&kernel, &dispatch);
        self.jit
            .run(&kernel, &dispatch, mem)
            .map_err(|f| ComputeError::new(where_, f))
    }
}
