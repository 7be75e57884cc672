//! Kernel-dispatch packets: validation (with the statuses ROCR and rocrtst use)
//! and the translation into an IR dispatch.

use std::sync::Arc;

use wavejit_ir::{Dispatch, Fault, FaultKind, GlobalMemory, Kernel};

use super::agent::AgentInner;
use super::loader::{FaultWording, UniformSource};
use super::packet::{KernelDispatchPacket, PACKET_SIZE};
use super::signal::Signal;
use super::status::{AqlError, Status};

/// A validated dispatch, ready to run.
pub(crate) struct DispatchJob {
    /// `None` for a no-op (zero-size compatibility mode).
    pub work: Option<(Arc<Kernel>, Dispatch, Option<FaultWording>)>,
    pub completion: Option<Signal>,
}

fn err(status: Status, message: String) -> AqlError {
    AqlError::new(status, message)
}

/// Validates `p` (raw bytes `raw`) for `agent` and builds the job. Every check
/// names the field; the order puts rocrtst's single-field cases first.
pub(crate) fn prepare(
    agent: &AgentInner,
    p: &KernelDispatchPacket,
    raw: &[u8; PACKET_SIZE],
) -> Result<DispatchJob, AqlError> {
    let cfg = &agent.config;
    let Some(dims) = p.dimensions() else {
        return Err(err(
            Status::INCOMPATIBLE_ARGUMENTS,
            format!("setup {:#x}: dimensions must be 1, 2 or 3", p.setup),
        ));
    };
    let wg = p.workgroup_size.map(u32::from);
    let grid = p.grid_size;
    let completion = lookup_signal(p.completion_signal, "completion_signal")?;
    if wg.contains(&0) || grid.contains(&0) {
        if cfg.zero_size_is_noop {
            return Ok(DispatchJob {
                work: None,
                completion,
            });
        }
        return Err(err(
            Status::INVALID_ARGUMENT,
            format!("workgroup size {wg:?} or grid size {grid:?} has a 0"),
        ));
    }
    for d in dims as usize..3 {
        if wg[d] != 1 || grid[d] != 1 {
            return Err(err(
                Status::INCOMPATIBLE_ARGUMENTS,
                format!(
                    "{dims}-dimensional dispatch: unused dimension {d} has workgroup size {} and grid size {} (must be 1)",
                    wg[d], grid[d]
                ),
            ));
        }
    }
    let lanes: u32 = wg.iter().product();
    if lanes > cfg.max_workgroup_size {
        return Err(err(
            Status::INVALID_ARGUMENT,
            format!(
                "workgroup {wg:?} has {lanes} work-items, more than {}",
                cfg.max_workgroup_size
            ),
        ));
    }
    if let Some(d) = (0..3).find(|&d| grid[d] < wg[d]) {
        return Err(err(
            Status::INVALID_ARGUMENT,
            format!(
                "grid size {} is smaller than the workgroup size {} in dimension {d}",
                grid[d], wg[d]
            ),
        ));
    }
    if p.group_segment_size > cfg.max_group_segment {
        return Err(err(
            Status::INVALID_ALLOCATION,
            format!(
                "group_segment_size {:#x} exceeds the agent's {:#x} bytes",
                p.group_segment_size, cfg.max_group_segment
            ),
        ));
    }
    if p.private_segment_size > cfg.max_private_segment {
        return Err(err(
            Status::OUT_OF_RESOURCES,
            format!(
                "private_segment_size {:#x} exceeds the agent's {:#x} bytes per work-item",
                p.private_segment_size, cfg.max_private_segment
            ),
        ));
    }
    let object = agent.object(p.kernel_object)?;
    let partial = (0..3).any(|d| !grid[d].is_multiple_of(wg[d]));
    let variant = agent.variant(
        &object,
        p.group_segment_size,
        p.private_segment_size,
        partial,
    )?;
    let mut uniforms = vec![0u8; variant.uniforms.size as usize];
    for item in &variant.uniforms.items {
        let at = item.offset as usize;
        let dst = &mut uniforms[at..at + item.source.len() as usize];
        match item.source {
            UniformSource::Kernargs { len: 0 } => {}
            UniformSource::Kernargs { len } => {
                if p.kernarg_address == 0 {
                    return Err(err(
                        Status::INVALID_ARGUMENT,
                        format!("the kernel reads {len} kernarg bytes but kernarg_address is 0"),
                    ));
                }
                agent.memory.read(p.kernarg_address, dst).map_err(|cause| {
                    err(
                        Status::MEMORY_FAULT,
                        format!(
                            "reading {len} kernarg bytes at {:#x}: {cause}",
                            p.kernarg_address
                        ),
                    )
                })?;
            }
            UniformSource::KernargAddress => dst.copy_from_slice(&p.kernarg_address.to_le_bytes()),
            UniformSource::DispatchPacket => dst.copy_from_slice(raw),
            UniformSource::GridSize => {
                for (d, g) in grid.iter().enumerate() {
                    dst[4 * d..4 * d + 4].copy_from_slice(&g.to_le_bytes());
                }
            }
        }
    }
    let mut dispatch = Dispatch::new([0, 1, 2].map(|d| grid[d].div_ceil(wg[d])), wg);
    dispatch.wave_size = variant.wave_size;
    dispatch.uniforms = uniforms;
    dispatch.step_limit = cfg.step_limit;
    dispatch.budget = cfg.budget.clone();
    Ok(DispatchJob {
        work: Some((variant.kernel.clone(), dispatch, variant.wording.clone())),
        completion,
    })
}

/// The live signal of a non-zero handle (`None` for 0).
pub(crate) fn lookup_signal(handle: u64, field: &str) -> Result<Option<Signal>, AqlError> {
    if handle == 0 {
        return Ok(None);
    }
    Signal::from_handle(handle).map(Some).ok_or_else(|| {
        err(
            Status::INVALID_SIGNAL,
            format!("{field} {handle:#x} is not a live signal"),
        )
    })
}

/// The queue status of a kernel fault (ROCR's hardware-exception mapping: memory
/// violations → MEMORY_FAULT, traps, watchdog and dispatch-budget aborts →
/// EXCEPTION; a dispatch the engine refused before running it, including one
/// over the work-item budget → INVALID_ARGUMENT).
pub fn fault_status(fault: &Fault) -> Status {
    match fault.kind {
        FaultKind::Memory { .. } => Status::MEMORY_FAULT,
        FaultKind::Watchdog { .. } | FaultKind::Trap { .. } | FaultKind::Budget(_) => {
            Status::EXCEPTION
        }
        FaultKind::Dispatch(_) => Status::INVALID_ARGUMENT,
    }
}

/// Runs a prepared dispatch on `engine`.
pub(crate) fn run(
    agent: &AgentInner,
    kernel: &Kernel,
    dispatch: &Dispatch,
    wording: &Option<FaultWording>,
) -> Result<(), AqlError> {
    let memory: &dyn GlobalMemory = agent.memory.as_ref();
    agent
        .config
        .engine
        .run(kernel, dispatch, memory)
        .map_err(|fault| {
            let text = match wording {
                Some(wording) => wording.describe(&fault),
                None => fault.to_string(),
            };
            AqlError::new(fault_status(&fault), text)
        })
}
