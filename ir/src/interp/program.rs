//! The kernel resolved once per run into a flat form the scheduler walks: per block a
//! list of operations with argument/result slots as plain indices, and terminators
//! with their block-parameter moves. Malformed pieces (anything the verifier would
//! reject and that could make the interpreter index out of range) become
//! `Malformed` operations that fault the lane reaching them.

use cranelift_entity::EntityRef;

use crate::entities::{Block, Inst};
use crate::inst::{AtomicOp, BlockCall, Builtin, InstKind, MemAccess, Terminator};
use crate::kernel::Kernel;
use crate::types::Type;

/// What an operation does, decided once.
#[derive(Clone, Debug)]
pub(crate) enum OpKind {
    /// A constant, already masked to its type.
    Const(u64),
    /// Any other pure instruction, evaluated by `semantics::eval_pure`.
    Pure(InstKind),
    Builtin(Builtin),
    Load(MemAccess),
    Store(MemAccess),
    Atomic {
        space: crate::inst::AddrSpace,
        op: AtomicOp,
        ty: Type,
    },
    Barrier,
    /// Fences order nothing in a single-threaded interpreter.
    Fence,
    Trap(u32),
    /// A cross-lane instruction, evaluated by `semantics::wave::eval_wave`.
    Wave(InstKind),
    /// The instruction does not fit its signature or refers to missing values.
    Malformed,
}

/// One resolved instruction.
#[derive(Clone, Debug)]
pub(crate) struct Op {
    pub inst: Inst,
    pub kind: OpKind,
    pub args: Box<[usize]>,
    pub arg_tys: Box<[Type]>,
    pub results: Box<[usize]>,
}

/// A resolved control-flow edge: target block number and the parallel moves
/// `(source slot, parameter slot)` for its parameters.
#[derive(Clone, Debug)]
pub(crate) struct Edge {
    pub block: usize,
    pub moves: Box<[(usize, usize)]>,
}

#[derive(Clone, Debug)]
pub(crate) enum Term {
    Jump(Edge),
    Branch {
        cond: usize,
        then: Edge,
        otherwise: Edge,
    },
    Table {
        index: usize,
        targets: Box<[Edge]>,
        default: Edge,
    },
    Exit,
    Malformed,
}

#[derive(Clone, Debug)]
pub(crate) struct BlockCode {
    pub block: Block,
    pub ops: Box<[Op]>,
    pub term: Term,
}

/// The whole resolved kernel.
#[derive(Clone, Debug)]
pub(crate) struct Program {
    pub blocks: Box<[BlockCode]>,
    pub value_count: usize,
    /// False when the entry block has parameters (nothing can pass them).
    pub entry_ok: bool,
}

impl Program {
    pub fn new(kernel: &Kernel) -> Program {
        let blocks = kernel
            .blocks
            .iter()
            .map(|(block, data)| BlockCode {
                block,
                ops: data.insts.iter().map(|&i| resolve_op(kernel, i)).collect(),
                term: data
                    .term
                    .as_ref()
                    .and_then(|t| resolve_term(kernel, t))
                    .unwrap_or(Term::Malformed),
            })
            .collect();
        let entry_ok = kernel
            .blocks
            .values()
            .next()
            .is_some_and(|b| b.params.is_empty());
        Program {
            blocks,
            value_count: kernel.values.len(),
            entry_ok,
        }
    }
}

fn value_slot(kernel: &Kernel, v: crate::entities::Value) -> Option<(usize, Type)> {
    kernel.values.get(v).map(|d| (v.index(), d.ty))
}

fn resolve_op(kernel: &Kernel, inst: Inst) -> Op {
    let malformed = Op {
        inst,
        kind: OpKind::Malformed,
        args: Box::new([]),
        arg_tys: Box::new([]),
        results: Box::new([]),
    };
    let Some(data) = kernel.insts.get(inst) else {
        return malformed;
    };
    let Some(args): Option<Vec<(usize, Type)>> =
        data.args.iter().map(|&v| value_slot(kernel, v)).collect()
    else {
        return malformed;
    };
    let Some(results): Option<Vec<(usize, Type)>> = data
        .results
        .iter()
        .map(|&v| value_slot(kernel, v))
        .collect()
    else {
        return malformed;
    };
    let arg_tys: Vec<Type> = args.iter().map(|a| a.1).collect();
    let result_tys: Vec<Type> = results.iter().map(|r| r.1).collect();
    match data.kind.signature(&arg_tys) {
        Ok(expected) if expected == result_tys => {}
        _ => return malformed,
    }
    let kind = match &data.kind {
        InstKind::Const { ty, bits } => OpKind::Const(bits & ty.mask()),
        InstKind::Builtin(b) => OpKind::Builtin(*b),
        InstKind::Load(a) => OpKind::Load(*a),
        InstKind::Store(a) => OpKind::Store(*a),
        InstKind::Atomic { space, op, ty } => OpKind::Atomic {
            space: *space,
            op: *op,
            ty: *ty,
        },
        InstKind::Barrier => OpKind::Barrier,
        InstKind::Fence(_) => OpKind::Fence,
        InstKind::Trap { code } => OpKind::Trap(*code),
        k if k.is_cross_lane() => OpKind::Wave(k.clone()),
        k => OpKind::Pure(k.clone()),
    };
    Op {
        inst,
        kind,
        args: args.iter().map(|a| a.0).collect(),
        arg_tys: arg_tys.into(),
        results: results.iter().map(|r| r.0).collect(),
    }
}

fn resolve_term(kernel: &Kernel, term: &Terminator) -> Option<Term> {
    let typed = |v, ty: Type| value_slot(kernel, v).filter(|s| s.1 == ty).map(|s| s.0);
    Some(match term {
        Terminator::Jump(c) => Term::Jump(resolve_edge(kernel, c)?),
        Terminator::Branch {
            cond,
            then,
            otherwise,
        } => Term::Branch {
            cond: typed(*cond, Type::I1)?,
            then: resolve_edge(kernel, then)?,
            otherwise: resolve_edge(kernel, otherwise)?,
        },
        Terminator::Table {
            index,
            targets,
            default,
        } => Term::Table {
            index: typed(*index, Type::I32)?,
            targets: targets
                .iter()
                .map(|c| resolve_edge(kernel, c))
                .collect::<Option<_>>()?,
            default: resolve_edge(kernel, default)?,
        },
        Terminator::Exit => Term::Exit,
    })
}

fn resolve_edge(kernel: &Kernel, call: &BlockCall) -> Option<Edge> {
    let target = kernel.blocks.get(call.block)?;
    if target.params.len() != call.args.len() {
        return None;
    }
    let moves = call
        .args
        .iter()
        .zip(&target.params)
        .map(|(&a, &p)| {
            let (src, src_ty) = value_slot(kernel, a)?;
            let (dst, dst_ty) = value_slot(kernel, p)?;
            (src_ty == dst_ty).then_some((src, dst))
        })
        .collect::<Option<_>>()?;
    Some(Edge {
        block: call.block.index(),
        moves,
    })
}
