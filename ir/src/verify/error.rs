//! What the verifier reports: the kernel, where (block, instruction or
//! terminator) and which rule was broken.

use std::fmt;

use crate::entities::{Block, Inst, Value};
use crate::kernel::ValueDef;
use crate::signature::SignatureError;
use crate::types::{FloatFormat, Type};

/// One broken rule. Displays as
/// ``kernel `k`, block3, inst7 (v12 = IBinary(Add) v3, v4): argument 1 must be i32, got f32``.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("kernel `{kernel}`{location}: {rule}")]
pub struct VerifyError {
    pub kernel: String,
    pub location: Location,
    pub rule: Rule,
}

/// Where a rule was broken. Displays with a leading `", "` (empty for the
/// whole kernel) so that it reads after the kernel name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// The kernel as a whole.
    Kernel,
    /// A block header: its parameters or its instruction list.
    Block(Block),
    /// An instruction; `block` is `None` for an instruction placed in no block.
    /// `text` is a short rendering: results, kind (Debug) and arguments.
    Inst {
        block: Option<Block>,
        inst: Inst,
        text: String,
    },
    /// The terminator of a block.
    Terminator(Block),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Kernel => Ok(()),
            Location::Block(block) => write!(f, ", {block}"),
            Location::Inst {
                block: Some(block),
                inst,
                text,
            } => write!(f, ", {block}, {inst} ({text})"),
            Location::Inst {
                block: None,
                inst,
                text,
            } => write!(f, ", {inst} ({text})"),
            Location::Terminator(block) => write!(f, ", {block}, terminator"),
        }
    }
}

/// Which operand or definition slot a rule is about.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// Argument `n` of an instruction.
    Arg(usize),
    /// Result `n` of an instruction.
    Result(usize),
    /// Parameter `n` of a block.
    Param(usize),
    /// The condition of a branch.
    Cond,
    /// The index of a table jump.
    Index,
    /// Argument `index` passed to block `target` by a terminator.
    CallArg { target: Block, index: usize },
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Role::Arg(n) => write!(f, "argument {n}"),
            Role::Result(n) => write!(f, "result {n}"),
            Role::Param(n) => write!(f, "parameter {n}"),
            Role::Cond => f.write_str("branch condition"),
            Role::Index => f.write_str("table index"),
            Role::CallArg { target, index } => write!(f, "argument {index} to {target}"),
        }
    }
}

/// A value's definition as the verifier saw it, for messages.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DefText(pub ValueDef);

impl fmt::Display for DefText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            ValueDef::Param { block, index } => write!(f, "parameter {index} of {block}"),
            ValueDef::Result { inst, index } => write!(f, "result {index} of {inst}"),
        }
    }
}

/// The rules of a well-formed kernel, one variant each.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Rule {
    #[error("kernel has no blocks")]
    NoBlocks,
    #[error(
        "kernel declares {bytes} bytes of shared memory, over the limit of {} bytes",
        crate::dispatch::MAX_SHARED_BYTES
    )]
    SharedTooLarge { bytes: u32 },
    #[error(
        "kernel declares {bytes} bytes of private memory per lane, over the limit of {} bytes",
        crate::dispatch::MAX_PRIVATE_BYTES
    )]
    PrivateTooLarge { bytes: u32 },
    #[error("entry block must have no parameters, has {count}")]
    EntryHasParams { count: usize },
    #[error("block has no terminator")]
    NoTerminator,
    #[error("instruction {index} of the block is {inst}, which does not exist")]
    MissingInst { index: usize, inst: Inst },
    #[error("instruction is already placed in {first}")]
    InstPlacedTwice { first: Block },
    #[error("instruction is not placed in any block")]
    InstNotPlaced,
    #[error("{role} ({value}) does not exist")]
    MissingValue { role: Role, value: Value },
    #[error("target {block} does not exist")]
    MissingBlock { block: Block },
    #[error("{role} ({value}) records its definition as {recorded}")]
    WrongDef {
        role: Role,
        value: Value,
        recorded: DefText,
    },
    #[error("{role} ({value}) is already defined as {first}")]
    DefinedTwice {
        role: Role,
        value: Value,
        first: DefText,
    },
    /// The argument types do not fit the instruction kind.
    #[error("{0}")]
    Signature(SignatureError),
    #[error("signature gives {expected} results, instruction has {got}")]
    ResultCount { expected: usize, got: usize },
    #[error("result {index} ({value}) is {got}, signature gives {expected}")]
    ResultType {
        index: usize,
        value: Value,
        expected: Type,
        got: Type,
    },
    #[error("constant bits {bits:#x} do not fit {ty} (mask {:#x})", ty.mask())]
    ConstBits { ty: Type, bits: u64 },
    #[error("canonical NaN {bits:#x} does not fit {format}")]
    CanonicalNanWidth { bits: u64, format: FloatFormat },
    #[error("canonical NaN {bits:#x} is not a NaN of {format}")]
    CanonicalNotNan { bits: u64, format: FloatFormat },
    #[error("canonical NaN requested but {format} has no NaN")]
    FormatHasNoNan { format: FloatFormat },
    #[error("canonical NaN on an instruction without a float result")]
    CanonicalWithoutFloatResult,
    #[error("instruction does not produce exception flags")]
    FlagsUnsupported,
    #[error("flushing before rounding is a result rule, not an input rule")]
    FlushBeforeRoundingOnInput,
    #[error("kernel declares no shared memory")]
    NoSharedMemory,
    #[error("kernel declares no private memory")]
    NoPrivateMemory,
    #[error("branch condition ({value}) must be i1, got {got}")]
    CondNotI1 { value: Value, got: Type },
    #[error("table index ({value}) must be i32, got {got}")]
    IndexNotI32 { value: Value, got: Type },
    #[error("call to {target} passes {got} arguments, {target} has {expected} parameters")]
    CallArity {
        target: Block,
        expected: usize,
        got: usize,
    },
    #[error("{role} ({value}) must be {expected}, got {got}")]
    CallArgType {
        role: Role,
        value: Value,
        expected: Type,
        got: Type,
    },
    #[error("{role} ({value}) is not defined in any block")]
    Undefined { role: Role, value: Value },
    #[error("{role} ({value}) is used before its definition in this block")]
    UseBeforeDef { role: Role, value: Value },
    #[error("{role} ({value}) is defined in {def_block}, which does not dominate this block")]
    NotDominated {
        role: Role,
        value: Value,
        def_block: Block,
    },
}
