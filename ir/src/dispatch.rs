//! What one dispatch of a kernel looks like, independent of the engine running it,
//! and the limits every engine checks before running one ([`Dispatch::check`]:
//! the one place, so that all engines refuse a dispatch alike).

use crate::entities::Block;
use crate::fault::{Fault, FaultKind, LaneId};
use crate::kernel::Kernel;

/// Default per-lane step limit (blocks entered); a runaway kernel faults after it.
pub const DEFAULT_STEP_LIMIT: u64 = 1 << 24;

/// Most lanes per workgroup (real APIs allow 1024-2048); engines hold a
/// workgroup's lane state at once.
pub const MAX_WORKGROUP_LANES: u32 = 1 << 16;
/// Most shared (workgroup) memory a kernel may declare, bytes (GPUs have
/// 32-64 KiB). The verifier refuses more.
pub const MAX_SHARED_BYTES: u32 = 1 << 20;
/// Most private memory per lane a kernel may declare, bytes (ir3's largest
/// PVT_MEM_PARAM is 130,560). The verifier refuses more.
pub const MAX_PRIVATE_BYTES: u32 = 1 << 20;
/// Most private memory of one workgroup's lanes together, bytes.
pub const MAX_WORKGROUP_PRIVATE_BYTES: u64 = 256 << 20;

/// Why a dispatch is refused before any lane runs.
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum DispatchError {
    #[error("wave size 0")]
    ZeroWaveSize,
    #[error(
        "workgroup of {}x{}x{} = {lanes} lanes exceeds the limit of {MAX_WORKGROUP_LANES} lanes",
        size[0], size[1], size[2]
    )]
    WorkgroupTooLarge { size: [u32; 3], lanes: u128 },
    #[error(
        "kernel declares {bytes} bytes of shared memory, over the limit of {MAX_SHARED_BYTES} bytes"
    )]
    SharedTooLarge { bytes: u32 },
    #[error(
        "kernel declares {bytes} bytes of private memory per lane, over the limit of \
         {MAX_PRIVATE_BYTES} bytes"
    )]
    PrivateTooLarge { bytes: u32 },
    #[error(
        "{lanes} lanes x {bytes} private bytes = {total} bytes per workgroup exceeds the limit \
         of {MAX_WORKGROUP_PRIVATE_BYTES} bytes"
    )]
    WorkgroupPrivateTooLarge { lanes: u32, bytes: u32, total: u64 },
}

/// A dispatch's grid: workgroups (RV32 blocks) and lanes per workgroup. A
/// kernel transformed for one shape ([`crate::transform::simplify_bits`]) is
/// valid for dispatches of that shape only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DispatchShape {
    pub num_workgroups: [u32; 3],
    pub workgroup_size: [u32; 3],
}

/// The shape and inputs of a dispatch.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dispatch {
    /// Number of workgroups along x, y, z.
    pub workgroups: [u32; 3],
    /// Lanes per workgroup along x, y, z.
    pub workgroup_size: [u32; 3],
    /// Lanes per wave (cross-lane operations see one wave).
    pub wave_size: u32,
    /// Read-only bytes of the uniform address space.
    pub uniforms: Vec<u8>,
    /// Per-lane limit on blocks entered before a watchdog fault.
    pub step_limit: u64,
}

impl Dispatch {
    pub fn new(workgroups: [u32; 3], workgroup_size: [u32; 3]) -> Dispatch {
        Dispatch {
            workgroups,
            workgroup_size,
            wave_size: 32,
            uniforms: Vec::new(),
            step_limit: DEFAULT_STEP_LIMIT,
        }
    }

    /// The dispatch's grid.
    pub fn shape(&self) -> DispatchShape {
        DispatchShape {
            num_workgroups: self.workgroups,
            workgroup_size: self.workgroup_size,
        }
    }

    /// Lanes per workgroup; saturates at `u32::MAX` (over every limit) instead
    /// of wrapping, e.g. to 0 for 65536x65536.
    pub fn lanes_per_workgroup(&self) -> u32 {
        u32::try_from(self.workgroup_lanes()).unwrap_or(u32::MAX)
    }

    fn workgroup_lanes(&self) -> u128 {
        self.workgroup_size.iter().map(|&n| u128::from(n)).product()
    }

    /// Checks the shape, and the memory `kernel` declares, against the limits
    /// above. A dispatch with no lanes passes: nothing runs.
    pub fn check_shape(&self, kernel: &Kernel) -> Result<(), DispatchError> {
        let lanes = self.workgroup_lanes();
        if lanes == 0 || self.workgroup_count() == 0 {
            return Ok(());
        }
        if self.wave_size == 0 {
            return Err(DispatchError::ZeroWaveSize);
        }
        if lanes > u128::from(MAX_WORKGROUP_LANES) {
            let size = self.workgroup_size;
            return Err(DispatchError::WorkgroupTooLarge { size, lanes });
        }
        if kernel.shared_size > MAX_SHARED_BYTES {
            let bytes = kernel.shared_size;
            return Err(DispatchError::SharedTooLarge { bytes });
        }
        let bytes = kernel.private_size;
        if bytes > MAX_PRIVATE_BYTES {
            return Err(DispatchError::PrivateTooLarge { bytes });
        }
        let lanes = self.lanes_per_workgroup();
        let total = u64::from(lanes) * u64::from(bytes);
        if total > MAX_WORKGROUP_PRIVATE_BYTES {
            return Err(DispatchError::WorkgroupPrivateTooLarge {
                lanes,
                bytes,
                total,
            });
        }
        Ok(())
    }

    /// [`Dispatch::check_shape`] as the fault every engine reports: on the first
    /// lane at `block0`, no instruction, kind [`FaultKind::Dispatch`].
    pub fn check(&self, kernel: &Kernel) -> Result<(), Fault> {
        self.check_shape(kernel).map_err(|e| Fault {
            kernel: kernel.name.clone(),
            block: Block::from_u32(0),
            inst: None,
            guest_pc: None,
            lane: LaneId {
                workgroup: [0; 3],
                local: [0; 3],
            },
            kind: FaultKind::Dispatch(e),
        })
    }

    pub fn workgroup_count(&self) -> u64 {
        self.workgroups.iter().map(|&n| u64::from(n)).product()
    }

    /// The local id (x, y, z) of a linear index in the workgroup.
    pub fn local_id(&self, index: u32) -> [u32; 3] {
        let [sx, sy, _] = self.workgroup_size;
        [index % sx, (index / sx) % sy, index / (sx * sy)]
    }

    /// The workgroup id (x, y, z) of a linear workgroup number.
    pub fn workgroup_id(&self, index: u64) -> [u32; 3] {
        let [gx, gy, _] = self.workgroups.map(u64::from);
        [
            (index % gx) as u32,
            ((index / gx) % gy) as u32,
            (index / (gx * gy)) as u32,
        ]
    }
}
