//! The memory layout shared by compiled code and the Rust side of a batch.
//!
//! A batch runs `lanes` lanes (whole workgroups side by side). Every IR value has
//! one slot per lane in the register slab: value `v` of lane `l` lives at
//! `regs[v * lanes + l]` as its bits zero-extended to 64 (the IR's value
//! representation). Per-lane state and builtins live in [`LaneRec`].
//!
//! A leaf: it names no other module of the crate, so it can be read first.

use std::mem::offset_of;

/// Program counter of a lane that exited or faulted.
pub const PC_DEAD: u32 = u32::MAX;

/// `LaneRec::fault` when the lane has not faulted.
pub const NO_FAULT: u32 = u32::MAX;

/// `LaneRec::fault` of a watchdog fault (`fault_addr` holds the block entered).
pub const WATCHDOG_FAULT: u32 = u32::MAX - 1;

/// Per-lane record read and written by compiled code.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LaneRec {
    /// Linear pc (`plan::Plan::block_pc` + index in block), or [`PC_DEAD`].
    pub pc: u32,
    /// Index of the faulting instruction, [`WATCHDOG_FAULT`] or [`NO_FAULT`].
    pub fault: u32,
    /// Blocks entered so far (watchdog).
    pub steps: u64,
    /// Raw address of a faulting access, or the block entered for the watchdog.
    pub fault_addr: u64,
    /// Host address of the lane's workgroup-shared region.
    pub shared: u64,
    /// Host address of the lane's private region.
    pub private: u64,
    pub local_index: u32,
    pub local: [u32; 3],
    pub group: [u32; 3],
    pub lane_id: u32,
    pub wave_id: u32,
    pub _pad: u32,
}

impl LaneRec {
    pub const EMPTY: LaneRec = LaneRec {
        pc: PC_DEAD,
        fault: NO_FAULT,
        steps: 0,
        fault_addr: 0,
        shared: 0,
        private: 0,
        local_index: 0,
        local: [0; 3],
        group: [0; 3],
        lane_id: 0,
        wave_id: 0,
        _pad: 0,
    };
}

/// Batch-wide inputs of compiled code.
#[repr(C)]
pub struct BatchCtx {
    pub regs: *mut u64,
    pub lanes: *mut LaneRec,
    pub uniforms: *const u8,
    pub uniforms_len: u64,
    pub step_limit: u64,
    /// The runner's host context (`host::HostCtx`), for the helpers;
    /// compiled code only passes it on.
    pub host: *const u8,
    pub workgroup_size: [u32; 3],
    pub num_workgroups: [u32; 3],
    pub wave_size: u32,
    /// Segment starting at each linear pc, `u32::MAX` elsewhere.
    pub seg_of_pc: *const u32,
    /// One inline region cache per global access site (`plan::Plan::gc_site`):
    /// compiled code checks the region that served the site last and calls the
    /// helper only on a miss. Per site, because kernels usually alternate
    /// between buffers (saxpy reads x and y and writes y).
    pub gc: *mut GcEntry,
}

/// The region that last served a global access site (`len` 0: none).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct GcEntry {
    pub start: u64,
    pub len: u64,
    pub host: u64,
    pub writable: u64,
}

impl From<wavejit_ir::Region> for GcEntry {
    fn from(r: wavejit_ir::Region) -> GcEntry {
        GcEntry {
            start: r.start,
            len: r.len,
            host: r.host.as_ptr() as u64,
            writable: u64::from(r.writable),
        }
    }
}

pub const GC_ENTRY_SIZE: i64 = std::mem::size_of::<GcEntry>() as i64;

/// Signature of a compiled kernel: runs segment `seg` for the `n` lanes listed at
/// `list` (increasing), then goes on while they stay together below pc `limit`;
/// returns nonzero if some lane faulted.
pub type KernelFn =
    unsafe extern "C" fn(ctx: *mut BatchCtx, seg: u32, list: *const u32, n: u32, limit: u32) -> u32;

pub const LANE_SIZE: i64 = std::mem::size_of::<LaneRec>() as i64;

/// Field offsets for compiled code.
pub mod off {
    use super::*;
    pub const PC: i32 = offset_of!(LaneRec, pc) as i32;
    pub const FAULT: i32 = offset_of!(LaneRec, fault) as i32;
    pub const STEPS: i32 = offset_of!(LaneRec, steps) as i32;
    pub const FAULT_ADDR: i32 = offset_of!(LaneRec, fault_addr) as i32;
    pub const SHARED: i32 = offset_of!(LaneRec, shared) as i32;
    pub const PRIVATE: i32 = offset_of!(LaneRec, private) as i32;
    pub const LOCAL_INDEX: i32 = offset_of!(LaneRec, local_index) as i32;
    pub const LOCAL: i32 = offset_of!(LaneRec, local) as i32;
    pub const GROUP: i32 = offset_of!(LaneRec, group) as i32;
    pub const LANE_ID: i32 = offset_of!(LaneRec, lane_id) as i32;
    pub const WAVE_ID: i32 = offset_of!(LaneRec, wave_id) as i32;

    pub const REGS: i32 = offset_of!(BatchCtx, regs) as i32;
    pub const LANES: i32 = offset_of!(BatchCtx, lanes) as i32;
    pub const UNIFORMS: i32 = offset_of!(BatchCtx, uniforms) as i32;
    pub const UNIFORMS_LEN: i32 = offset_of!(BatchCtx, uniforms_len) as i32;
    pub const STEP_LIMIT: i32 = offset_of!(BatchCtx, step_limit) as i32;
    pub const HOST: i32 = offset_of!(BatchCtx, host) as i32;
    pub const WORKGROUP_SIZE: i32 = offset_of!(BatchCtx, workgroup_size) as i32;
    pub const NUM_WORKGROUPS: i32 = offset_of!(BatchCtx, num_workgroups) as i32;
    pub const WAVE_SIZE: i32 = offset_of!(BatchCtx, wave_size) as i32;
    pub const SEG_OF_PC: i32 = offset_of!(BatchCtx, seg_of_pc) as i32;
    pub const GC: i32 = offset_of!(BatchCtx, gc) as i32;
    pub const GC_START: i32 = offset_of!(GcEntry, start) as i32;
    pub const GC_LEN: i32 = offset_of!(GcEntry, len) as i32;
    pub const GC_HOST: i32 = offset_of!(GcEntry, host) as i32;
    pub const GC_WRITABLE: i32 = offset_of!(GcEntry, writable) as i32;
}
