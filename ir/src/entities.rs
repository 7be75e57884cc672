//! Typed handles into a kernel's arenas (Cranelift's entity pattern).

use cranelift_entity::entity_impl;

/// An SSA value: a block parameter or an instruction result.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(u32);
entity_impl!(Value, "v");

/// A basic block. Block numbers are also layout order: the "pc" that per-lane
/// divergence compares ("lowest pc first") is (block number, instruction index).
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Block(u32);
entity_impl!(Block, "block");

/// An instruction (not a terminator).
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Inst(u32);
entity_impl!(Inst, "inst");
