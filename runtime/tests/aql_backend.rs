//! Plugging an ISA backend in: a code object for an ISA without a backend fails
//! with INVALID_ISA until one is registered; the backend's own uniform layout
//! (grid size and kernarg address here) reaches the kernel.

mod aql_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use aql_support::*;
use wavejit_runtime::aql::{
    AqlError, ArgAbi, CodeObject, FnBackend, Isa, LoadedKernel, Outcome, Packet, Processing,
    Signal, Status, UniformLayout, UniformSource,
};

/// A stand-in "RV32 lifter": the code is IR text; uniforms are the grid size at 0
/// and the kernarg address at 16. The kernel stores grid.x to *kernarg.
const STANDIN: &str = "kernel @standin {
block0:
  v0 = const.i32 0
  v1 = load.uniform.i32 v0
  v2 = const.i32 16
  v3 = load.uniform.i64 v2
  store.global.i32 v3, v1
  exit
}
";

#[test]
fn backend_registered_later_turns_invalid_isa_into_a_run() {
    let agent = interp_agent();
    let desc = CodeObject::new(Isa::Rv32, ArgAbi::UniformPointer, STANDIN.as_bytes(), 0);
    let k = agent
        .register_code(&desc, STANDIN.as_bytes())
        .expect("registers");
    let out = agent.memory().alloc(4).expect("alloc");

    let q = queue(&agent, 4, Processing::Manual);
    let p = dispatch(k, 1, [7, 1, 1], [7, 1, 1], out, None);
    q.submit(&Packet::KernelDispatch(p)).expect("submit");
    assert_eq!(q.process(), Outcome::Error);
    assert_eq!(q.error().map(|e| e.status), Some(Status::INVALID_ISA));

    let loads = Arc::new(AtomicUsize::new(0));
    let counter = loads.clone();
    agent.register_backend(Arc::new(FnBackend::new(Isa::Rv32, move |obj| {
        counter.fetch_add(1, Ordering::Relaxed);
        let text = std::str::from_utf8(obj.code)
            .map_err(|e| AqlError::new(Status::INVALID_CODE_OBJECT, e.to_string()))?;
        let kernel = wavejit_ir::text::parse(text)
            .map_err(|e| AqlError::new(Status::INVALID_CODE_OBJECT, e.to_string()))?;
        let mut uniforms = UniformLayout::default();
        assert_eq!(uniforms.push(UniformSource::GridSize, 16), 0);
        assert_eq!(uniforms.push(UniformSource::KernargAddress, 16), 16);
        Ok(LoadedKernel {
            kernel,
            uniforms,
            wave_size: 16,
            wording: None,
        })
    })));
    assert!(agent.supports(Isa::Rv32));

    let q = queue(&agent, 4, Processing::Manual);
    let done = Signal::new(2);
    for grid in [7, 5] {
        let p = dispatch(k, 1, [grid, 1, 1], [5, 1, 1], out, Some(&done));
        q.submit(&Packet::KernelDispatch(p)).expect("submit");
        assert_eq!(q.process(), Outcome::Idle, "{:?}", q.error());
        assert_eq!(agent.memory().read_u32s(out, 1).expect("read"), [grid]);
    }
    assert_eq!(done.load(Ordering::Acquire), 0);
    assert_eq!(loads.load(Ordering::Relaxed), 1, "loaded once, then cached");
}

#[test]
fn backend_errors_reach_the_callback() {
    let agent = interp_agent();
    agent.register_backend(Arc::new(FnBackend::new(Isa::Agx, |obj| {
        Err(AqlError::new(
            Status::INVALID_CODE_OBJECT,
            format!("cannot decode word {:#010x} at offset 0", obj.code[0]),
        ))
    })));
    let code = [0xabu8, 0, 0, 0];
    let desc = CodeObject::new(Isa::Agx, ArgAbi::UniformCopy, &code, 0);
    let k = agent.register_code(&desc, &code).expect("registers");
    let log = ErrorLog::default();
    let q = agent
        .create_queue(log.options(4, Processing::Manual))
        .expect("queue");
    q.submit(&one(k, None)).expect("submit");
    assert_eq!(q.process(), Outcome::Error);
    let errors = log.errors();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].status, Status::INVALID_CODE_OBJECT);
    assert!(
        errors[0].message.contains("0x000000ab"),
        "{}",
        errors[0].message
    );
}
