//! Interpreter-specific behaviour: malformed kernels and dispatches never panic,
//! they fault with `MALFORMED_TRAP`. (Engine-agnostic behaviour is tested by the
//! root `tests/engine_*.rs` suites.)

use super::{Interpreter, MALFORMED_TRAP};
use crate::dispatch::{Dispatch, DispatchError};
use crate::engine::Engine;
use crate::entities::{Block, Inst, Value};
use crate::fault::{Fault, FaultKind, LaneId};
use crate::inst::{BlockCall, IBinOp, InstKind, Terminator};
use crate::kernel::{Builder, InstData, Kernel};
use crate::memory::NoGlobalMemory;
use crate::types::Type;

fn run(kernel: &Kernel, dispatch: &Dispatch) -> Result<(), Fault> {
    Interpreter::new().run(kernel, dispatch, &NoGlobalMemory)
}

fn small() -> Dispatch {
    let mut d = Dispatch::new([2, 1, 1], [4, 1, 1]);
    d.wave_size = 4;
    d
}

fn malformed_at(kernel: &str, block: u32, inst: Option<Inst>) -> Fault {
    Fault {
        kernel: kernel.into(),
        block: Block::from_u32(block),
        inst,
        guest_pc: None,
        lane: LaneId {
            workgroup: [0; 3],
            local: [0; 3],
        },
        kind: FaultKind::Trap {
            code: MALFORMED_TRAP,
        },
    }
}

#[test]
fn name_is_interp() {
    assert_eq!(Interpreter::new().name(), "interp");
}

#[test]
fn wrong_arity_faults_at_the_instruction() {
    let mut k = Kernel::new("arity");
    let entry = k.add_block();
    let mut b = Builder::new(&mut k, entry);
    let x = b.iconst(Type::I32, 1);
    b.inst(InstKind::IBinary(IBinOp::Add), &[x]);
    b.exit();
    let bad = Inst::from_u32(1);
    assert_eq!(run(&k, &small()), Err(malformed_at("arity", 0, Some(bad))));
}

#[test]
fn missing_terminator_faults_at_the_block() {
    let mut k = Kernel::new("unterminated");
    let entry = k.add_block();
    let next = k.add_block();
    let mut b = Builder::new(&mut k, entry);
    b.jump(next, &[]);
    assert_eq!(
        run(&k, &small()),
        Err(malformed_at("unterminated", 1, None))
    );
}

#[test]
fn block_call_arity_and_types_are_checked() {
    let mut k = Kernel::new("edge");
    let entry = k.add_block();
    let next = k.add_block();
    k.add_block_param(next, Type::I32);
    let mut b = Builder::new(&mut k, entry);
    b.jump(next, &[]);
    b.switch_to(next);
    b.exit();
    assert_eq!(run(&k, &small()), Err(malformed_at("edge", 0, None)));

    let mut k = Kernel::new("edge_ty");
    let entry = k.add_block();
    let next = k.add_block();
    k.add_block_param(next, Type::I32);
    let mut b = Builder::new(&mut k, entry);
    let wide = b.iconst(Type::I64, 1);
    b.jump(next, &[wide]);
    b.switch_to(next);
    b.exit();
    assert_eq!(run(&k, &small()), Err(malformed_at("edge_ty", 0, None)));
}

#[test]
fn dangling_references_fault_instead_of_indexing_out_of_range() {
    // An argument value that does not exist.
    let mut k = Kernel::new("dangling");
    let entry = k.add_block();
    let i = k.insts.push(InstData {
        kind: InstKind::IUnary(crate::inst::IUnOp::Not),
        args: vec![Value::from_u32(999)],
        results: vec![],
    });
    k.blocks[entry].insts.push(i);
    k.set_terminator(entry, Terminator::Exit);
    assert_eq!(run(&k, &small()), Err(malformed_at("dangling", 0, Some(i))));

    // An instruction id that does not exist.
    let mut k = Kernel::new("no_inst");
    let entry = k.add_block();
    let ghost = Inst::from_u32(42);
    k.blocks[entry].insts.push(ghost);
    k.set_terminator(entry, Terminator::Exit);
    assert_eq!(
        run(&k, &small()),
        Err(malformed_at("no_inst", 0, Some(ghost)))
    );

    // A jump to a block that does not exist.
    let mut k = Kernel::new("no_block");
    let entry = k.add_block();
    k.set_terminator(
        entry,
        Terminator::Jump(BlockCall::new(Block::from_u32(7), &[])),
    );
    assert_eq!(run(&k, &small()), Err(malformed_at("no_block", 0, None)));

    // A branch on an i32.
    let mut k = Kernel::new("cond_ty");
    let entry = k.add_block();
    let mut b = Builder::new(&mut k, entry);
    let c = b.iconst(Type::I32, 1);
    b.branch(c, BlockCall::new(entry, &[]), BlockCall::new(entry, &[]));
    assert_eq!(run(&k, &small()), Err(malformed_at("cond_ty", 0, None)));
}

#[test]
fn malformed_code_that_no_lane_reaches_is_harmless() {
    let mut k = Kernel::new("unreached");
    let entry = k.add_block();
    let dead = k.add_block();
    let mut b = Builder::new(&mut k, entry);
    b.exit();
    b.switch_to(dead);
    let x = b.iconst(Type::I32, 1);
    b.inst(InstKind::IBinary(IBinOp::Add), &[x]);
    assert_eq!(run(&k, &small()), Ok(()));
}

#[test]
fn malformed_kernels_and_dispatches() {
    assert_eq!(
        run(&Kernel::new("empty"), &small()),
        Err(malformed_at("empty", 0, None))
    );

    let mut k = Kernel::new("entry_params");
    let entry = k.add_block();
    k.add_block_param(entry, Type::I32);
    k.set_terminator(entry, Terminator::Exit);
    assert_eq!(
        run(&k, &small()),
        Err(malformed_at("entry_params", 0, None))
    );

    let mut k = Kernel::new("ok");
    let entry = k.add_block();
    k.set_terminator(entry, Terminator::Exit);
    // Dispatch shapes over the limits are refused before any lane runs, at
    // the same place, with the reason (`Dispatch::check`, as on every engine).
    let refused = |e: DispatchError| {
        let mut f = malformed_at("ok", 0, None);
        f.kind = FaultKind::Dispatch(e);
        Err(f)
    };
    let mut d = small();
    d.wave_size = 0;
    assert_eq!(run(&k, &d), refused(DispatchError::ZeroWaveSize));
    // Nothing to run is not an error.
    assert_eq!(run(&k, &Dispatch::new([0, 1, 1], [4, 1, 1])), Ok(()));
    assert_eq!(run(&k, &Dispatch::new([1, 1, 1], [4, 0, 1])), Ok(()));
    // More lanes per workgroup than the interpreter can index faults cleanly.
    let huge = Dispatch::new([1, 1, 1], [u32::MAX, u32::MAX, 2]);
    let lanes = u128::from(u32::MAX) * u128::from(u32::MAX) * 2;
    let size = huge.workgroup_size;
    assert_eq!(
        run(&k, &huge),
        refused(DispatchError::WorkgroupTooLarge { size, lanes })
    );
}

#[test]
fn step_limit_zero_faults_at_the_entry() {
    let mut k = Kernel::new("zero_limit");
    let entry = k.add_block();
    k.set_terminator(entry, Terminator::Exit);
    let mut d = small();
    d.step_limit = 0;
    let f = run(&k, &d).expect_err("the entry already counts one block");
    assert_eq!(f.kind, FaultKind::Watchdog { limit: 0 });
    assert_eq!((f.block, f.inst, f.lane.local), (entry, None, [0; 3]));
}
