//! Arity and type rules of every instruction: the one place the verifier, the
//! builder, the parser and the engines learn what an instruction takes and yields.

use crate::inst::{AddrSpace, AtomicOp, CastOp, IBinOp, InstKind, ReduceOp};
use crate::types::Type;

/// Why an instruction's arguments do not fit its kind.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("expects {expected} arguments, got {got}")]
    Arity { expected: usize, got: usize },
    #[error("argument {index} must be {expected}, got {got}")]
    ArgType {
        index: usize,
        expected: String,
        got: Type,
    },
    #[error("invalid attribute: {0}")]
    Attribute(String),
}

fn arity(args: &[Type], n: usize) -> Result<(), SignatureError> {
    if args.len() == n {
        Ok(())
    } else {
        Err(SignatureError::Arity {
            expected: n,
            got: args.len(),
        })
    }
}

/// `expected` is only rendered on failure (callers pass `format_args!`), so
/// well-typed instructions cost no allocation here.
fn want(
    args: &[Type],
    index: usize,
    ok: bool,
    expected: impl std::fmt::Display,
) -> Result<(), SignatureError> {
    if ok {
        Ok(())
    } else {
        Err(SignatureError::ArgType {
            index,
            expected: expected.to_string(),
            got: args[index],
        })
    }
}

fn exact(args: &[Type], index: usize, ty: Type) -> Result<(), SignatureError> {
    want(args, index, args[index] == ty, ty.name())
}

fn same_as_first(args: &[Type], index: usize) -> Result<(), SignatureError> {
    want(
        args,
        index,
        args[index] == args[0],
        format_args!("{} (same as argument 0)", args[0]),
    )
}

fn with_flags(ty: Type, flags: bool) -> Vec<Type> {
    if flags { vec![ty, Type::I32] } else { vec![ty] }
}

fn is_plain_int(t: Type) -> bool {
    t.is_int() && t != Type::I1
}

impl InstKind {
    /// Check `args` against this kind and return the result types.
    pub fn signature(&self, args: &[Type]) -> Result<Vec<Type>, SignatureError> {
        use InstKind::*;
        match self {
            Const { ty, .. } => {
                arity(args, 0)?;
                Ok(vec![*ty])
            }
            Builtin(b) => {
                arity(args, 0)?;
                if let crate::inst::Builtin::LocalId(d)
                | crate::inst::Builtin::WorkgroupId(d)
                | crate::inst::Builtin::WorkgroupSize(d)
                | crate::inst::Builtin::NumWorkgroups(d) = b
                    && *d > 2
                {
                    return Err(SignatureError::Attribute(format!(
                        "builtin dimension {d} is not 0, 1 or 2"
                    )));
                }
                Ok(vec![Type::I32])
            }
            IBinary(op) => {
                arity(args, 2)?;
                let bitwise = matches!(op, IBinOp::And | IBinOp::Or | IBinOp::Xor);
                want(
                    args,
                    0,
                    if bitwise {
                        args[0].is_int()
                    } else {
                        is_plain_int(args[0])
                    },
                    if bitwise {
                        "an integer or i1"
                    } else {
                        "an integer"
                    },
                )?;
                same_as_first(args, 1)?;
                Ok(vec![args[0]])
            }
            IUnary(op) => {
                arity(args, 1)?;
                let ok = if *op == crate::inst::IUnOp::Not {
                    args[0].is_int()
                } else {
                    is_plain_int(args[0])
                };
                want(args, 0, ok, "an integer")?;
                Ok(vec![args[0]])
            }
            Icmp(_) => {
                arity(args, 2)?;
                want(args, 0, args[0].is_int(), "an integer")?;
                same_as_first(args, 1)?;
                Ok(vec![Type::I1])
            }
            Select => {
                arity(args, 3)?;
                exact(args, 0, Type::I1)?;
                want(
                    args,
                    2,
                    args[2] == args[1],
                    format_args!("{} (same as argument 1)", args[1]),
                )?;
                Ok(vec![args[1]])
            }
            Cast { op, to } => {
                arity(args, 1)?;
                let from = args[0];
                let ok = match op {
                    CastOp::Zext | CastOp::Sext => {
                        from.is_int() && is_plain_int(*to) && to.bits() > from.bits()
                    }
                    CastOp::Trunc => from.is_int() && to.is_int() && to.bits() < from.bits(),
                    CastOp::Bitcast => {
                        from != *to
                            && from.bits() == to.bits()
                            && from != Type::I1
                            && *to != Type::I1
                    }
                };
                want(args, 0, ok, format_args!("a type that can {op:?} to {to}"))?;
                Ok(vec![*to])
            }
            BitExtract { .. } => {
                arity(args, 3)?;
                want(args, 0, is_plain_int(args[0]), "an integer")?;
                exact(args, 1, Type::I32)?;
                exact(args, 2, Type::I32)?;
                Ok(vec![args[0]])
            }
            BitInsert => {
                arity(args, 4)?;
                want(args, 0, is_plain_int(args[0]), "an integer")?;
                same_as_first(args, 1)?;
                exact(args, 2, Type::I32)?;
                exact(args, 3, Type::I32)?;
                Ok(vec![args[0]])
            }
            FBinary { mode, .. } => {
                arity(args, 2)?;
                want(args, 0, args[0].is_float(), "a float")?;
                same_as_first(args, 1)?;
                Ok(with_flags(args[0], mode.flags))
            }
            FUnary { mode, .. } | Special { mode, .. } => {
                arity(args, 1)?;
                want(args, 0, args[0].is_float(), "a float")?;
                Ok(with_flags(args[0], mode.flags))
            }
            Fma { mode } => {
                arity(args, 3)?;
                want(args, 0, args[0].is_float(), "a float")?;
                same_as_first(args, 1)?;
                same_as_first(args, 2)?;
                Ok(with_flags(args[0], mode.flags))
            }
            Fcmp { mode, .. } => {
                arity(args, 2)?;
                want(args, 0, args[0].is_float(), "a float")?;
                same_as_first(args, 1)?;
                Ok(with_flags(Type::I1, mode.flags))
            }
            Fclass { .. } => {
                arity(args, 1)?;
                want(args, 0, args[0].is_float(), "a float")?;
                Ok(vec![Type::I32])
            }
            PowFixup { mode } => {
                arity(args, 3)?;
                for i in 0..3 {
                    exact(args, i, Type::F32)?;
                }
                Ok(with_flags(Type::F32, mode.flags))
            }
            Fcvt { from, to, mode } => {
                arity(args, 1)?;
                if from == to {
                    return Err(SignatureError::Attribute(format!(
                        "conversion from {from} to itself"
                    )));
                }
                exact(args, 0, from.storage())?;
                Ok(with_flags(to.storage(), mode.flags))
            }
            FToI { from, to, mode, .. } => {
                arity(args, 1)?;
                if !is_plain_int(*to) {
                    return Err(SignatureError::Attribute(format!(
                        "float-to-int target {to} is not an integer"
                    )));
                }
                exact(args, 0, from.storage())?;
                Ok(with_flags(*to, mode.flags))
            }
            IToF { to, mode, .. } => {
                arity(args, 1)?;
                want(args, 0, is_plain_int(args[0]), "an integer")?;
                Ok(with_flags(to.storage(), mode.flags))
            }
            Load(a) => {
                check_access(a)?;
                arity(args, 1)?;
                exact(args, 0, a.space.addr_type())?;
                Ok(vec![a.ty; usize::from(a.count)])
            }
            Store(a) => {
                check_access(a)?;
                if a.space == AddrSpace::Uniform {
                    return Err(SignatureError::Attribute(
                        "stores to the uniform space are not allowed".into(),
                    ));
                }
                arity(args, 1 + usize::from(a.count))?;
                exact(args, 0, a.space.addr_type())?;
                for i in 1..args.len() {
                    exact(args, i, a.ty)?;
                }
                Ok(vec![])
            }
            Atomic { space, op, ty } => {
                if !matches!(space, AddrSpace::Global | AddrSpace::Shared) {
                    return Err(SignatureError::Attribute(format!(
                        "atomics need global or shared memory, not {}",
                        space.name()
                    )));
                }
                if !matches!(ty, Type::I32 | Type::I64) {
                    return Err(SignatureError::Attribute(format!(
                        "atomic type must be i32 or i64, not {ty}"
                    )));
                }
                let n = if *op == AtomicOp::CmpXchg { 3 } else { 2 };
                arity(args, n)?;
                exact(args, 0, space.addr_type())?;
                for i in 1..n {
                    exact(args, i, *ty)?;
                }
                Ok(vec![*ty])
            }
            Barrier | Fence(_) | Trap { .. } => {
                arity(args, 0)?;
                Ok(vec![])
            }
            Ballot => {
                arity(args, 2)?;
                exact(args, 0, Type::I1)?;
                exact(args, 1, Type::I1)?;
                Ok(vec![Type::I64])
            }
            VoteAny | VoteAll => {
                arity(args, 2)?;
                exact(args, 0, Type::I1)?;
                exact(args, 1, Type::I1)?;
                Ok(vec![Type::I1])
            }
            FirstActive => {
                arity(args, 1)?;
                exact(args, 0, Type::I1)?;
                Ok(vec![Type::I32])
            }
            Elect => {
                arity(args, 1)?;
                exact(args, 0, Type::I1)?;
                Ok(vec![Type::I1])
            }
            ReadLane | Shuffle(_) => {
                arity(args, 3)?;
                exact(args, 0, Type::I1)?;
                exact(args, 2, Type::I32)?;
                Ok(vec![args[1]])
            }
            ReadFirst => {
                arity(args, 2)?;
                exact(args, 0, Type::I1)?;
                Ok(vec![args[1]])
            }
            Reduce(op) | Scan { op, .. } => {
                arity(args, 2)?;
                exact(args, 0, Type::I1)?;
                let ok = if op.is_float() {
                    args[1].is_float()
                } else if matches!(op, ReduceOp::And | ReduceOp::Or | ReduceOp::Xor) {
                    args[1].is_int()
                } else {
                    is_plain_int(args[1])
                };
                want(args, 1, ok, "a type the reduction operator accepts")?;
                Ok(vec![args[1]])
            }
        }
    }

    /// True for operations whose result depends on other lanes of the wave.
    pub fn is_cross_lane(&self) -> bool {
        use InstKind::*;
        matches!(
            self,
            Ballot
                | VoteAny
                | VoteAll
                | FirstActive
                | Elect
                | ReadLane
                | ReadFirst
                | Shuffle(_)
                | Reduce(_)
                | Scan { .. }
        )
    }

    /// True for operations with effects beyond their results (memory, sync, traps).
    pub fn has_side_effects(&self) -> bool {
        use InstKind::*;
        matches!(
            self,
            Store(_) | Atomic { .. } | Barrier | Fence(_) | Trap { .. }
        )
    }
}

fn check_access(a: &crate::inst::MemAccess) -> Result<(), SignatureError> {
    let bad = |m: String| Err(SignatureError::Attribute(m));
    if a.ty == Type::I1 {
        return bad("memory values cannot be i1".into());
    }
    if !matches!(a.bits, 8 | 16 | 32 | 64) || u32::from(a.bits) > a.ty.bits() {
        return bad(format!("{} memory bits for {} values", a.bits, a.ty));
    }
    if u32::from(a.bits) < a.ty.bits() && a.ty.is_float() {
        return bad(format!("{}-bit float access of {} values", a.bits, a.ty));
    }
    if !(1..=4).contains(&a.count) {
        return bad(format!("vector count {} is not 1 to 4", a.count));
    }
    if !a.align.is_power_of_two() {
        return bad(format!("alignment {} is not a power of two", a.align));
    }
    Ok(())
}
