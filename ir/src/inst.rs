//! Instruction kinds, their attributes, and their type signatures.
//!
//! An instruction is an [`InstKind`] (opcode plus attributes) applied to a list of
//! argument values; operands are not stored inside the kind, so printers, the
//! verifier and the engines walk arguments uniformly. [`InstKind::signature`] is the
//! single source of truth for arity and types.

use crate::entities::{Block, Value};
use crate::float_mode::FloatMode;
use crate::types::{FloatFormat, Type};

/// Integer binary operations. Both operands and the result have the same type.
/// Shift and rotate amounts are taken modulo the bit width. Division by zero is
/// defined as in RISC-V: `x / 0` = all ones (unsigned) or -1 (signed), `x % 0` = x;
/// signed overflow (`MIN / -1`) gives `MIN`, remainder 0.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum IBinOp {
    Add,
    Sub,
    Mul,
    /// High half of the unsigned double-width product.
    MulHiU,
    /// High half of the signed double-width product.
    MulHiS,
    DivU,
    DivS,
    RemU,
    RemS,
    And,
    Or,
    Xor,
    Shl,
    ShrU,
    ShrS,
    Rotl,
    Rotr,
    MinU,
    MinS,
    MaxU,
    MaxS,
    AddSatU,
    AddSatS,
    SubSatU,
    SubSatS,
}

/// Integer unary operations (result type = operand type).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum IUnOp {
    Not,
    Neg,
    /// Absolute value; `abs(MIN) = MIN`.
    Abs,
    /// Count leading zeros; `clz(0)` = bit width.
    Clz,
    /// Count trailing zeros; `ctz(0)` = bit width.
    Ctz,
    Popcnt,
    Bitrev,
    Bswap,
}

/// Integer comparison conditions.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum IntCC {
    Eq,
    Ne,
    Ult,
    Ule,
    Ugt,
    Uge,
    Slt,
    Sle,
    Sgt,
    Sge,
}

/// Float comparison conditions. Ordered conditions are false when either operand
/// is NaN; `U*` conditions are true then. `Lt/Le/Gt/Ge` signal invalid on any NaN
/// (IEEE signaling predicates); `Eq/Ne/Ord/Uno` and the `U*` forms only on sNaN.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum FloatCC {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Ord,
    Uno,
    Ueq,
    Une,
    Ult,
    Ule,
    Ugt,
    Uge,
}

/// Float binary operations (operands and result of one float type).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum FBinOp {
    Add,
    Sub,
    Mul,
    Div,
    /// GPU min: a NaN operand is ignored (both NaN gives NaN), and -0 < +0.
    Min,
    /// GPU max: a NaN operand is ignored (both NaN gives NaN), and -0 < +0.
    Max,
    /// IEEE 754-2019 minimum: NaN if either operand is NaN, -0 < +0.
    Minimum,
    /// IEEE 754-2019 maximum: NaN if either operand is NaN, -0 < +0.
    Maximum,
    /// Magnitude of the first operand, sign of the second (bitwise).
    Copysign,
}

/// Float unary operations with exact IEEE semantics.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum FUnOp {
    /// Sign flip (bitwise, before the result rules apply).
    Neg,
    /// Sign clear (bitwise, before the result rules apply).
    Abs,
    /// Correctly rounded square root (`round` attribute honoured).
    Sqrt,
    Floor,
    Ceil,
    Trunc,
    /// Round to integral, ties to even.
    Nearest,
}

/// Hardware special functions. Their exact results are defined in
/// `crate::semantics::special` (one place, shared by every engine).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum SpecialFn {
    Rcp,
    Rsqrt,
    Exp2,
    Log2,
    Sin,
    Cos,
}

/// Integer width changes and reinterpretation.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CastOp {
    /// Zero extension to a wider integer type (from `i1` gives 0/1).
    Zext,
    /// Sign extension to a wider integer type (from `i1` gives 0/-1).
    Sext,
    /// Truncation to a narrower integer type (to `i1` keeps bit 0).
    Trunc,
    /// Same-width reinterpretation between int and float (`i32` <-> `f32` ...).
    Bitcast,
}

/// Address spaces of memory instructions.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum AddrSpace {
    /// Host-visible memory; 64-bit addresses checked against live allocations.
    Global,
    /// Workgroup-shared memory; 32-bit byte offset into the workgroup's region.
    Shared,
    /// The dispatch's read-only uniform/constant bytes; 32-bit byte offset.
    Uniform,
    /// Per-lane scratch; 32-bit byte offset into the lane's region.
    Private,
}

impl AddrSpace {
    pub const ALL: [AddrSpace; 4] = [
        AddrSpace::Global,
        AddrSpace::Shared,
        AddrSpace::Uniform,
        AddrSpace::Private,
    ];

    /// The type of an address in this space.
    pub fn addr_type(self) -> Type {
        match self {
            AddrSpace::Global => Type::I64,
            _ => Type::I32,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            AddrSpace::Global => "global",
            AddrSpace::Shared => "shared",
            AddrSpace::Uniform => "uniform",
            AddrSpace::Private => "private",
        }
    }

    pub fn from_name(s: &str) -> Option<AddrSpace> {
        AddrSpace::ALL.into_iter().find(|a| a.name() == s)
    }
}

/// Shape of a load or store: `count` consecutive elements of `bits` bits each, at an
/// address that must be a multiple of `align` bytes (a power of two).
/// A load of fewer bits than its result type extends (sign if `signed`, else zero);
/// a store of fewer bits truncates.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct MemAccess {
    pub space: AddrSpace,
    /// The type of each value loaded or stored.
    pub ty: Type,
    /// Bits per element in memory: 8, 16, 32 or 64, at most `ty.bits()`.
    pub bits: u8,
    /// Elements: 1 to 4.
    pub count: u8,
    pub signed: bool,
    /// Required alignment in bytes.
    pub align: u32,
}

impl MemAccess {
    /// A naturally aligned scalar access of a whole value of type `ty`.
    pub fn scalar(space: AddrSpace, ty: Type) -> MemAccess {
        let bits = ty.bytes() * 8;
        MemAccess {
            space,
            ty,
            bits: bits as u8,
            count: 1,
            signed: false,
            align: bits / 8,
        }
    }

    /// Bytes per element in memory.
    pub fn elem_bytes(&self) -> u32 {
        u32::from(self.bits) / 8
    }

    /// Total bytes touched.
    pub fn total_bytes(&self) -> u32 {
        self.elem_bytes() * u32::from(self.count)
    }
}

/// Atomic read-modify-write operations; all return the old value.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    Add,
    Sub,
    MinU,
    MinS,
    MaxU,
    MaxS,
    And,
    Or,
    Xor,
    Xchg,
    /// Arguments `(addr, expected, new)`; stores `new` only if the old value equals `expected`.
    CmpXchg,
    /// `old >= v ? 0 : old + 1` (unsigned; CUDA `atomicInc`).
    IncWrap,
    /// `(old == 0 || old > v) ? v : old - 1` (unsigned; CUDA `atomicDec`).
    DecWrap,
}

/// Memory fence scope.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    Workgroup,
    Device,
}

/// Dispatch builtins (all `i32`). `dim` fields are 0, 1, 2 for x, y, z.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    LocalId(u8),
    WorkgroupId(u8),
    WorkgroupSize(u8),
    /// Number of workgroups in the dispatch along `dim`.
    NumWorkgroups(u8),
    /// Linear index of the lane in its workgroup (x fastest).
    LocalIndex,
    /// Index of the lane in its wave.
    LaneId,
    /// Index of the wave in its workgroup.
    WaveId,
    WaveSize,
}

/// Reduction/scan operators of wave operations.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Add,
    Mul,
    MinU,
    MinS,
    MaxU,
    MaxS,
    And,
    Or,
    Xor,
    /// Float add, accumulated in increasing lane order with IEEE RNE.
    FAdd,
    /// Float min/max with the GPU policy of [`FBinOp::Min`] / [`FBinOp::Max`].
    FMin,
    FMax,
}

impl ReduceOp {
    pub fn is_float(self) -> bool {
        matches!(self, ReduceOp::FAdd | ReduceOp::FMin | ReduceOp::FMax)
    }
}

/// Which lane a shuffle reads.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ShuffleKind {
    /// Lane `idx`.
    Index,
    /// Lane `self ^ idx`.
    Xor,
    /// Lane `self - idx`.
    Up,
    /// Lane `self + idx`.
    Down,
}

/// An instruction's opcode and attributes. The comment on each variant gives its
/// arguments; `mask` is the explicit `i1` participation mask of cross-lane
/// operations: a lane takes part when it is executing the instruction (co-active in
/// its wave) and its `mask` is true.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum InstKind {
    /// `() -> ty`: a constant given as raw bits (floats by their bit pattern).
    Const { ty: Type, bits: u64 },
    /// `() -> i32`
    Builtin(Builtin),
    /// `(a, b) -> T` for integer `T` (bitwise ops also on `i1`).
    IBinary(IBinOp),
    /// `(a) -> T`
    IUnary(IUnOp),
    /// `(a, b) -> i1`
    Icmp(IntCC),
    /// `(cond: i1, a, b) -> T`: a where cond, else b.
    Select,
    /// `(a) -> to`
    Cast { op: CastOp, to: Type },
    /// `(value, offset: i32, width: i32) -> T`: extract `width` bits at `offset`
    /// (offset modulo the type's width, width read unsigned and clamped to it, the
    /// field ending at the top of the value; width 0 gives 0), sign-extended from the
    /// field's top bit if `signed`. Exact rule: `semantics::int::bit_extract`.
    BitExtract { signed: bool },
    /// `(base, insert, offset: i32, width: i32) -> T`: replace `width` bits of `base` at `offset`
    /// (same field rule as `BitExtract`; `semantics::int::bit_insert`).
    BitInsert,
    /// `(a, b) -> T (+ i32 flags)` for float `T`
    FBinary { op: FBinOp, mode: FloatMode },
    /// `(a) -> T (+ flags)`
    FUnary { op: FUnOp, mode: FloatMode },
    /// `(a, b, c) -> T (+ flags)`: a*b+c with a single rounding.
    Fma { mode: FloatMode },
    /// `(a, b) -> i1 (+ flags)`: `mode.denorm_in` applies to the operands.
    Fcmp { cc: FloatCC, mode: FloatMode },
    /// `(a) -> i32`: RISC-V `fclass` bits of the operand (after `mode.denorm_in`).
    Fclass { mode: FloatMode },
    /// `(a) -> T (+ flags)`
    Special { func: SpecialFn, mode: FloatMode },
    /// `(a: f32, b: f32, c: f32) -> f32`: AGX pow_fixup (see `semantics::pow_fixup`).
    PowFixup { mode: FloatMode },
    /// `(a: from.storage()) -> to.storage() (+ flags)`: float format conversion with
    /// `mode.round`; `mode.sat` clamps to the largest finite value of `to` instead of
    /// overflowing to infinity (and is the only overflow behaviour of e4m3/e2m1).
    Fcvt {
        from: FloatFormat,
        to: FloatFormat,
        mode: FloatMode,
    },
    /// `(a: from.storage()) -> to (+ flags)`: float to integer with `mode.round`,
    /// saturating to the integer range; NaN gives the maximum if `nan_to_max`, else 0.
    FToI {
        from: FloatFormat,
        to: Type,
        signed: bool,
        nan_to_max: bool,
        mode: FloatMode,
    },
    /// `(a: int) -> to.storage() (+ flags)`: integer to float with `mode.round`.
    IToF {
        to: FloatFormat,
        signed: bool,
        mode: FloatMode,
    },
    /// `(addr, ...) -> count results of access.ty`
    Load(MemAccess),
    /// `(addr, v0 .. v[count-1]) -> ()`
    Store(MemAccess),
    /// `(addr, v) -> old` or `(addr, expected, new) -> old` for `CmpXchg`; `ty` is i32 or i64;
    /// space is global or shared.
    Atomic {
        space: AddrSpace,
        op: AtomicOp,
        ty: Type,
    },
    /// `() -> ()`: workgroup barrier; every live lane of the workgroup arrives before
    /// any continues. Implies a workgroup memory fence.
    Barrier,
    /// `() -> ()`
    Fence(Scope),
    /// `(mask, cond: i1) -> i64`: bit n set when lane n participates and `cond` holds.
    Ballot,
    /// `(mask, cond: i1) -> i1`: cond holds in some participating lane.
    VoteAny,
    /// `(mask, cond: i1) -> i1`: cond holds in every participating lane (true if none).
    VoteAll,
    /// `(mask) -> i32`: lowest participating lane index, or -1 if none.
    FirstActive,
    /// `(mask) -> i1`: true in the lowest participating lane only.
    Elect,
    /// `(mask, v, lane: i32) -> T`: the value of `v` in lane `lane`.
    /// If that lane is outside the wave or not participating, the lane's own value
    /// (as `Shuffle(Index)`; see `semantics::wave`).
    ReadLane,
    /// `(mask, v) -> T`: the value of `v` in the lowest participating lane
    /// (the lane's own value if none participates).
    ReadFirst,
    /// `(mask, v, n: i32) -> T`: the value of `v` in the lane chosen by `kind`.
    /// If that lane is outside the wave or not participating, the lane's own value.
    Shuffle(ShuffleKind),
    /// `(mask, v) -> T`: reduction over participating lanes (identity if none).
    Reduce(ReduceOp),
    /// `(mask, v) -> T`: prefix over participating lanes in lane order; a
    /// non-participating lane gets the prefix of the participating lanes below it.
    Scan { op: ReduceOp, inclusive: bool },
    /// `() -> ()`: stop the dispatch with a trap fault naming this lane and `code`.
    Trap { code: u32 },
}

/// Where control goes, with the arguments for the target's block parameters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BlockCall {
    pub block: Block,
    pub args: Vec<Value>,
}

impl BlockCall {
    pub fn new(block: Block, args: &[Value]) -> BlockCall {
        BlockCall {
            block,
            args: args.to_vec(),
        }
    }
}

/// How a block ends.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Terminator {
    Jump(BlockCall),
    /// Per lane: `then` where `cond` (i1) holds, else `otherwise`.
    Branch {
        cond: Value,
        then: BlockCall,
        otherwise: BlockCall,
    },
    /// Per lane: `targets[index]`, or `default` when `index` (i32, unsigned) is out of range.
    Table {
        index: Value,
        targets: Vec<BlockCall>,
        default: BlockCall,
    },
    /// The lane has finished.
    Exit,
}

impl Terminator {
    /// Every successor edge.
    pub fn calls(&self) -> Vec<&BlockCall> {
        match self {
            Terminator::Jump(c) => vec![c],
            Terminator::Branch {
                then, otherwise, ..
            } => vec![then, otherwise],
            Terminator::Table {
                targets, default, ..
            } => targets.iter().chain(std::iter::once(default)).collect(),
            Terminator::Exit => vec![],
        }
    }

    /// Every successor edge, mutably (same order as [`Terminator::calls`]).
    pub fn calls_mut(&mut self) -> Vec<&mut BlockCall> {
        match self {
            Terminator::Jump(c) => vec![c],
            Terminator::Branch {
                then, otherwise, ..
            } => vec![then, otherwise],
            Terminator::Table {
                targets, default, ..
            } => targets.iter_mut().chain(std::iter::once(default)).collect(),
            Terminator::Exit => vec![],
        }
    }

    /// Applies `f` to every value the terminator reads (the values of
    /// [`Terminator::uses`]), for rewriting them in place.
    pub fn uses_mut(&mut self, mut f: impl FnMut(&mut Value)) {
        match self {
            Terminator::Branch { cond, .. } => f(cond),
            Terminator::Table { index, .. } => f(index),
            Terminator::Jump(_) | Terminator::Exit => {}
        }
        for call in self.calls_mut() {
            call.args.iter_mut().for_each(&mut f);
        }
    }

    /// Values the terminator reads, including block-call arguments.
    pub fn uses(&self) -> Vec<Value> {
        let mut v = match self {
            Terminator::Branch { cond, .. } => vec![*cond],
            Terminator::Table { index, .. } => vec![*index],
            _ => vec![],
        };
        for c in self.calls() {
            v.extend_from_slice(&c.args);
        }
        v
    }
}
