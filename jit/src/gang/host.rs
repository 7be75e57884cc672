//! What the gang helpers see of a running batch: the lane core's host context
//! and the batch's shape.

use wavejit_ir::Dispatch;

use crate::host::HostCtx;

/// What the gang helpers need while a batch runs (one per worker thread).
pub struct GangHost<'a> {
    pub hc: HostCtx<'a>,
    pub dispatch: &'a Dispatch,
    /// Lanes per batch.
    pub lanes: usize,
    /// Lanes per chunk of the compiled code.
    pub chunk: usize,
    /// Bytes of shared memory per slot and private memory per lane.
    pub shared_bytes: usize,
    pub private_bytes: usize,
}

/// Lanes per slot of `kernel`: used by helpers to find a lane's slot.
pub fn slot_of(host: &GangHost<'_>, lane: usize) -> usize {
    lane / (host.dispatch.lanes_per_workgroup().max(1) as usize)
}
