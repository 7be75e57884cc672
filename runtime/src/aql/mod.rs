//! HSA AQL frontend: user-mode queues in host memory, a packet processor, signals,
//! error callbacks, a Rust API and a C ABI (`runtime/include/wavejit_aql.h`).
//!
//! - [`Agent`]: global memory, engine, ISA backends, registered code objects, limits.
//! - [`Queue`]: a power-of-two ring of 64-byte packets with 64-bit read/write
//!   indexes and a doorbell signal; its descriptor is `amd_queue_t`-compatible.
//! - The processor (`processor.rs`) follows the reference `aql-hsa.md` §4: in-order
//!   launch, stall on INVALID, INVALID written back before the read index moves,
//!   barrier bit, acquire/release fences, completion = release fence + decrement.
//! - [`Signal`]: int64 signals with waits (conditions, timeout, observed value).
//! - [`CodeObject`]: the wavejit kernel-object descriptor; an [`IsaBackend`] turns
//!   one into an IR kernel: IR text, and the RV32, ir3 and AGX lifters (`isa`).
//! - Partial workgroups: [`guard`] wraps kernels so lanes outside the grid exit.

pub mod agent;
pub mod bench;
pub mod code_object;
pub mod dispatch;
pub mod ffi;
pub mod guard;
pub mod isa;
pub mod loader;
mod notify;
pub mod packet;
mod pool;
pub mod processor;
pub mod queue;
pub mod ring;
pub mod signal;
pub mod status;

pub use agent::{Agent, AgentConfig, KernelObject};
pub use code_object::{
    ArgAbi, CODE_OBJECT_MAGIC, CODE_OBJECT_VERSION, CodeObject, Isa, MAX_CODE_SIZE,
};
pub use loader::{
    CodeObjectRef, FaultWording, FnBackend, IrTextBackend, IsaBackend, LoadedKernel, UniformItem,
    UniformLayout, UniformSource,
};
pub use packet::{
    AgentDispatchPacket, BarrierPacket, FenceScope, Header, KernelDispatchPacket, PACKET_SIZE,
    Packet, PacketType,
};
pub use processor::Outcome;
pub use queue::{ErrorCallback, Processing, Queue, QueueError, QueueOptions, QueueType};
pub use ring::{HsaQueue, QueueDescriptor};
pub use signal::{Condition, Signal};
pub use status::{AqlError, Status};
