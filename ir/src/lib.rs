//! The wavejit IR: one SSA IR with explicit per-lane masks that ir3, AGX and RV32
//! lift into, plus its verifier, text form, semantics and golden interpreter.
//!
//! The IR describes the program of one lane. Divergence is legal anywhere: every
//! lane follows its own path, and engines schedule lanes "lowest pc first" where
//! pc = (block number, instruction index). Cross-lane operations take an explicit
//! `i1` participation mask.

pub mod analysis;
pub mod dispatch;
pub mod engine;
pub mod entities;
pub mod fault;
pub mod float_mode;
pub mod host_float_env;
pub mod inst;
pub mod interp;
pub mod kernel;
pub mod memory;
pub mod semantics;
pub mod signature;
pub mod text;
pub mod transform;
pub mod types;
pub mod verify;

pub use dispatch::{Budget, BudgetExceeded, CancelFlag, Dispatch, DispatchError, DispatchShape};
pub use engine::Engine;
pub use entities::{Block, Inst, Value};
pub use fault::{Fault, FaultKind, LaneId};
pub use float_mode::{Denorm, FloatMode, NanMode, Round};
pub use inst::*;
pub use kernel::{BlockData, Builder, InstData, Kernel, SrcLoc, ValueData, ValueDef};
pub use memory::{Access, AccessCause, GlobalMemory, NoGlobalMemory, Pinned, Region};
pub use signature::SignatureError;
pub use types::{FloatFormat, Type};
