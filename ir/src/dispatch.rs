//! What one dispatch of a kernel looks like, independent of the engine running it.

/// Default per-lane step limit (blocks entered); a runaway kernel faults after it.
pub const DEFAULT_STEP_LIMIT: u64 = 1 << 24;

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

    pub fn lanes_per_workgroup(&self) -> u32 {
        self.workgroup_size.iter().product()
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
