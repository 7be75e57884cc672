//! The memory layout shared by gang code and the Rust side of a batch (it
//! names only the lane core's ABI: the pc and fault codes and the region cache
//! entry are the same in both cores).
//!
//! Per-lane state is struct-of-arrays so compiled code reads and writes it a
//! vector at a time: `pc[l]`, `steps[l]`, the builtins. Every IR value has a
//! slab area of `lanes * 8` bytes at `value * lanes * 8`; a value whose gang
//! form is 32-bit lanes (every type of at most 32 bits) keeps lane `l` at
//! `+ 4 * l`, a 64-bit one at `+ 8 * l`, always as the IR's bits (`i1` as 0/1,
//! narrow types zero-extended). Arrays are padded by [`PAD`] lanes so a chunk
//! that runs past the last lane of a batch reads memory of its own.

use std::mem::offset_of;

pub use crate::abi::{NO_FAULT, PC_DEAD, WATCHDOG_FAULT};
/// Set in the pc of a lane parked at a barrier (the pc stays in the low bits):
/// parked and dead lanes both compare above every runnable pc.
pub const PARKED: u32 = 1 << 31;
/// A wave's state word ([`GangCtx::wave_state`]) when its lanes' pcs are in
/// the pc array. A converged wave (every lane at one pc) parks as one word
/// instead, `pc | PARKED`, so parking and releasing it touch no lane; once
/// released it holds the runnable pc (below this value) until it is visited,
/// and its lanes' pcs were already written.
pub const WAVE_LANES: u32 = PARKED - 1;
/// A wave's state word when every lane of it has exited.
pub const WAVE_DONE: u32 = u32::MAX;
/// Lanes of padding after every per-lane array.
pub const PAD: usize = 16;

/// Entries of the pc array for `lanes` lanes: padded, and whole vectors (the
/// compiled code sets them all at the start of a batch).
pub fn pc_lanes(lanes: usize) -> usize {
    (lanes + PAD).next_multiple_of(4)
}

/// Batch-wide inputs of gang code.
#[repr(C)]
pub struct GangCtx {
    /// The value slab.
    pub regs: *mut u8,
    pub pc: *mut u32,
    pub steps: *mut u32,
    pub fault: *mut u32,
    pub fault_addr: *mut u64,
    pub local_index: *const u32,
    pub local_x: *const u32,
    pub local_y: *const u32,
    pub local_z: *const u32,
    pub lane_id: *const u32,
    pub wave_id: *const u32,
    /// Workgroup id of every slot, four words each (x, y, z, unused).
    pub group: *const u32,
    /// Host address of every slot's shared memory.
    pub shared: *const u64,
    /// Host address of lane 0's private memory (lane `l` at `l * private_size`).
    pub private: *mut u8,
    pub private_size: u64,
    pub uniforms: *const u8,
    pub uniforms_len: u64,
    pub workgroup_size: [u32; 3],
    pub num_workgroups: [u32; 3],
    pub wave_size: u32,
    /// The dispatch's step limit (gang code runs only limits below `u32::MAX`).
    pub step_limit: u32,
    pub wg_lanes: u32,
    /// Workgroup slots of this batch holding a workgroup.
    pub live_slots: u32,
    /// Entry (segment or sync position) of every linear pc, `u32::MAX` inside segments.
    pub entry_of_pc: *const u32,
    /// Inline region caches, one per global access site (as `crate::abi::GcEntry`).
    pub gc: *mut GcEntry,
    /// The runner's host context (`gang::host::GangHost`), for the helpers.
    pub host: *const u8,
    /// Set to 1 when a lane faults.
    pub faulted: u32,
    /// Waves per slot (`wg_lanes / wave_size`, rounded up).
    pub waves_per_slot: u32,
    /// One state word per wave of the batch, slot by slot ([`WAVE_LANES`]):
    /// set by the compiled code at the start of a batch.
    pub wave_state: *mut u32,
    /// Two words per wave of the batch: the deferred steps and the largest
    /// step count of a wave parked as one word (the compiled code's
    /// `St::Defer` and `St::MaxSteps`, kept while it is parked).
    pub wave_steps: *mut u32,
}

pub use crate::abi::GcEntry;

/// A compiled gang kernel: runs rounds of every live slot's waves (each until
/// none of its lanes is runnable), releasing parked lanes between rounds,
/// until no lane is parked; returns nonzero if a lane faulted.
pub type GangFn = unsafe extern "C" fn(ctx: *mut GangCtx) -> u32;

/// Field offsets for compiled code.
pub mod off {
    use super::*;
    pub const REGS: i32 = offset_of!(GangCtx, regs) as i32;
    pub const PC: i32 = offset_of!(GangCtx, pc) as i32;
    pub const STEPS: i32 = offset_of!(GangCtx, steps) as i32;
    pub const LOCAL_INDEX: i32 = offset_of!(GangCtx, local_index) as i32;
    pub const LOCAL_X: i32 = offset_of!(GangCtx, local_x) as i32;
    pub const LANE_ID: i32 = offset_of!(GangCtx, lane_id) as i32;
    pub const WAVE_ID: i32 = offset_of!(GangCtx, wave_id) as i32;
    pub const GROUP: i32 = offset_of!(GangCtx, group) as i32;
    pub const SHARED: i32 = offset_of!(GangCtx, shared) as i32;
    pub const UNIFORMS: i32 = offset_of!(GangCtx, uniforms) as i32;
    pub const UNIFORMS_LEN: i32 = offset_of!(GangCtx, uniforms_len) as i32;
    pub const WORKGROUP_SIZE: i32 = offset_of!(GangCtx, workgroup_size) as i32;
    pub const NUM_WORKGROUPS: i32 = offset_of!(GangCtx, num_workgroups) as i32;
    pub const WAVE_SIZE: i32 = offset_of!(GangCtx, wave_size) as i32;
    pub const STEP_LIMIT: i32 = offset_of!(GangCtx, step_limit) as i32;
    pub const WG_LANES: i32 = offset_of!(GangCtx, wg_lanes) as i32;
    pub const LIVE_SLOTS: i32 = offset_of!(GangCtx, live_slots) as i32;
    pub const ENTRY_OF_PC: i32 = offset_of!(GangCtx, entry_of_pc) as i32;
    pub const GC: i32 = offset_of!(GangCtx, gc) as i32;
    pub const FAULTED: i32 = offset_of!(GangCtx, faulted) as i32;
    pub const WAVES_PER_SLOT: i32 = offset_of!(GangCtx, waves_per_slot) as i32;
    pub const WAVE_STATE: i32 = offset_of!(GangCtx, wave_state) as i32;
    pub const WAVE_STEPS: i32 = offset_of!(GangCtx, wave_steps) as i32;
}
