//! A worker's batch buffers for each core, recycled across dispatches of one
//! compiled kernel (`compiled::Compiled` pools them; the runners fill them):
//! allocating and page-faulting in fresh buffers per dispatch costs more than
//! a small dispatch runs.

use crate::abi::LaneRec;

/// The lane core's batch buffers.
#[derive(Default)]
pub struct Buffers {
    pub(crate) regs: Vec<u64>,
    pub(crate) recs: Vec<LaneRec>,
    pub(crate) shared: Vec<u8>,
    pub(crate) private: Vec<u8>,
    pub(crate) parked: Vec<bool>,
    pub(crate) list: Vec<u32>,
    pub(crate) wave_min: Vec<u32>,
    /// Second lowest pc of each workgroup's current wave.
    pub(crate) wave_next: Vec<u32>,
}

impl Buffers {
    /// Heap bytes the buffers hold (what a pooled set costs while cached).
    pub fn bytes(&self) -> usize {
        use std::mem::size_of;
        self.regs.capacity() * size_of::<u64>()
            + self.recs.capacity() * size_of::<LaneRec>()
            + self.shared.capacity()
            + self.private.capacity()
            + self.parked.capacity()
            + (self.list.capacity() + self.wave_min.capacity() + self.wave_next.capacity())
                * size_of::<u32>()
    }
}

/// The gang core's batch buffers.
#[derive(Default)]
pub struct GangBuffers {
    pub(crate) regs: Vec<u64>,
    pub(crate) pc: Vec<u32>,
    pub(crate) steps: Vec<u32>,
    pub(crate) fault: Vec<u32>,
    pub(crate) fault_addr: Vec<u64>,
    pub(crate) local_index: Vec<u32>,
    pub(crate) local: [Vec<u32>; 3],
    pub(crate) lane_id: Vec<u32>,
    pub(crate) wave_id: Vec<u32>,
    pub(crate) wave_state: Vec<u32>,
    pub(crate) wave_steps: Vec<u32>,
    pub(crate) group: Vec<[u32; 4]>,
    pub(crate) shared: Vec<u8>,
    pub(crate) shared_ptr: Vec<u64>,
    pub(crate) private: Vec<u8>,
}

impl GangBuffers {
    /// Heap bytes the buffers hold (what a pooled set costs while cached).
    pub fn bytes(&self) -> usize {
        use std::mem::size_of;
        let words = self.pc.capacity()
            + self.steps.capacity()
            + self.fault.capacity()
            + self.local_index.capacity()
            + self.local.iter().map(Vec::capacity).sum::<usize>()
            + self.lane_id.capacity()
            + self.wave_id.capacity()
            + self.wave_state.capacity()
            + self.wave_steps.capacity();
        (self.regs.capacity() + self.fault_addr.capacity() + self.shared_ptr.capacity())
            * size_of::<u64>()
            + words * size_of::<u32>()
            + self.group.capacity() * size_of::<[u32; 4]>()
            + self.shared.capacity()
            + self.private.capacity()
    }
}
