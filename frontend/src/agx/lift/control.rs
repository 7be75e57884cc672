//! Control flow (agx.md §3): the r0l nesting counter and exec recomputation,
//! SIMD-group-uniform branches, call/ret, stop and trap.

use std::collections::BTreeSet;

use wavejit_ir::{Block, BlockCall, IBinOp, InstKind, IntCC, Terminator, Type, Value};

use super::cond::{float_cond, int_cond};
use super::ctx::Ctx;
use super::error::LiftError;
use super::trap_code;
use crate::agx::{ImmField, Instr, ModField, Opcode};

/// Half index of r0l (the nesting counter) and of r1 (the link register).
const R0L: i32 = 0;
const R1: i32 = 2;

pub(crate) fn lift(ctx: &mut Ctx, instr: &Instr) -> Result<(), LiftError> {
    use Opcode::*;
    let next = instr.pc + instr.len as u64;
    match instr.opcode {
        Stop => {
            ctx.terminate(Terminator::Exit);
            Ok(())
        }
        Trap => {
            ctx.trap_and_exit(trap_code::TRAP);
            Ok(())
        }
        JmpAny | JmpNone => {
            let e = ctx.exec();
            let t = ctx.i1c(true);
            let any = ctx.b.ins(InstKind::VoteAny, &[t, e]);
            let cond = if instr.opcode == JmpAny {
                any
            } else {
                ctx.not1(any)
            };
            let target = instr
                .branch_target()
                .ok_or_else(|| ctx.unsupported(instr, "branch without offset"))?;
            let taken = ctx.block_at(target)?;
            let fall = ctx.block_at(next)?;
            ctx.terminate(Terminator::Branch {
                cond,
                then: BlockCall::new(taken, &[]),
                otherwise: BlockCall::new(fall, &[]),
            });
            Ok(())
        }
        Call => {
            // r1 = return address in every lane (whether inactive lanes get it is unknown).
            let ret = ctx.i32c(next as u32);
            ctx.write_reg_raw(R1, 32, ret)?;
            let target = instr
                .branch_target()
                .ok_or_else(|| ctx.unsupported(instr, "call without offset"))?;
            let block = ctx.block_at(target)?;
            ctx.jump_to(block);
            Ok(())
        }
        CallReg => {
            let op = instr.srcs[0];
            let addr = ctx.read_int(&op, Type::I32, false)?;
            let addr = uniform_value(ctx, addr);
            let ret = ctx.i32c(next as u32);
            ctx.write_reg_raw(R1, 32, ret)?;
            let targets = ctx.program.call_targets.clone();
            indirect(ctx, addr, &targets)
        }
        Ret => {
            let op = instr.srcs[0];
            let addr = ctx.read_int(&op, Type::I32, false)?;
            let addr = uniform_value(ctx, addr);
            let targets = ctx.program.return_points.clone();
            indirect(ctx, addr, &targets)
        }
        _ => exec_op(ctx, instr),
    }
}

/// The value in the first active lane (any lane's own value if none is active):
/// `ret`/`call rN` jump for the whole SIMD-group.
fn uniform_value(ctx: &mut Ctx, v: Value) -> Value {
    let e = ctx.exec();
    ctx.b.ins(InstKind::ReadFirst, &[e, v])
}

/// Jumps to the block at byte address `addr`, which must be one of `targets`;
/// anything else traps.
fn indirect(ctx: &mut Ctx, addr: Value, targets: &BTreeSet<u64>) -> Result<(), LiftError> {
    let pc = ctx.pc;
    let bad = ctx.new_block();
    let here = ctx.b.block;
    ctx.b.switch_to(bad);
    ctx.b.set_srcloc(Some(pc));
    ctx.trap_and_exit(trap_code::BAD_TARGET);
    ctx.b.switch_to(here);
    // Index = addr rotated right by one: odd addresses become huge and miss.
    let one = ctx.i32c(1);
    let index = ctx.bin(IBinOp::Rotr, addr, one);
    let count = targets.iter().next_back().map_or(0, |&t| t / 2 + 1);
    let mut calls: Vec<BlockCall> = (0..count).map(|_| BlockCall::new(bad, &[])).collect();
    for &t in targets {
        let block: Block = ctx.block_at(t)?;
        calls[(t / 2) as usize] = BlockCall::new(block, &[]);
    }
    ctx.terminate(Terminator::Table {
        index,
        targets: calls,
        default: BlockCall::new(bad, &[]),
    });
    Ok(())
}

/// if/else/while (integer and float compare), pop_exec, update_exec: a per-lane
/// function of (r0l, cc) evaluated in every lane, then `exec = (r0l == 0)`.
fn exec_op(ctx: &mut Ctx, instr: &Instr) -> Result<(), LiftError> {
    use Opcode::*;
    let n = instr.imm(ImmField::Nest).unwrap_or(0) as u64;
    let v = ctx.read_reg(R0L, 16)?;
    let nv = ctx.iconst(Type::I16, n);
    let zero = ctx.i16c(0);
    let one = ctx.i16c(1);
    let cc = |ctx: &mut Ctx| -> Result<Value, LiftError> {
        let code = instr.modifier(ModField::Cond).unwrap_or(0) as u8;
        let (a, b) = (instr.srcs[0], instr.srcs[1]);
        match instr.opcode {
            IfFcmp | ElseFcmp | WhileFcmp => float_cond(ctx, instr, code, &a, &b),
            _ => int_cond(ctx, instr, code, &a, &b),
        }
    };
    let new = match instr.opcode {
        IfIcmp | IfFcmp => {
            // v != 0: v + n; else !cc: 1; else 0.
            let c = cc(ctx)?;
            let off = ctx.select(c, zero, one);
            let nz = ctx.icmp(IntCC::Ne, v, zero);
            let inc = ctx.bin(IBinOp::Add, v, nv);
            ctx.select(nz, inc, off)
        }
        ElseIcmp | ElseFcmp => {
            // v == 0: n; v == 1: cc ? 0 : 1; else v.
            let c = cc(ctx)?;
            let flip = ctx.select(c, zero, one);
            let is1 = ctx.icmp(IntCC::Eq, v, one);
            let r = ctx.select(is1, flip, v);
            let is0 = ctx.icmp(IntCC::Eq, v, zero);
            ctx.select(is0, nv, r)
        }
        WhileIcmp | WhileFcmp => {
            // v < n: cc ? 0 : n; else v.
            let c = cc(ctx)?;
            let r = ctx.select(c, zero, nv);
            let lt = ctx.icmp(IntCC::Ult, v, nv);
            ctx.select(lt, r, v)
        }
        PopExec => {
            // max(0, v - n)
            let sub = ctx.bin(IBinOp::Sub, v, nv);
            let ge = ctx.icmp(IntCC::Uge, v, nv);
            ctx.select(ge, sub, zero)
        }
        UpdateExec => v,
        _ => return Err(ctx.unsupported(instr, "not a control-flow instruction")),
    };
    ctx.write_reg_raw(R0L, 16, new)?;
    let active = ctx.icmp(IntCC::Eq, new, zero);
    ctx.set_exec(active);
    Ok(())
}
