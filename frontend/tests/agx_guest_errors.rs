//! Issue 14 item 11: AGX errors in guest terms. A threadgroup access in a
//! launch without threadgroup memory is a lift error naming the pc and the
//! instruction (it reached users as an IR-verifier message); a trap names
//! the instruction it happened at and what it means (it printed only
//! `trap 0xa60003`).

mod agx_lift_support;

use agx_lift_support::{Mem, lift_src};
use wavejit_frontend::agx::assemble;
use wavejit_frontend::agx::lift::{
    AgxDispatch, LiftConfig, LiftError, TrapSite, describe_fault, lift, trap_code,
};
use wavejit_ir::interp::Interpreter;
use wavejit_ir::{Engine, FaultKind};

fn lift_with(src: &str, tg_mem: u32) -> Result<wavejit_ir::Kernel, LiftError> {
    let code = assemble(src).expect("assembles");
    lift(
        &code,
        &LiftConfig {
            threadgroup_memory: tg_mem,
            ..LiftConfig::default()
        },
    )
}

#[test]
fn threadgroup_access_without_threadgroup_memory_names_pc_and_instruction() {
    for (access, text) in [
        ("lstore r1, r0l, 0, i32, x", "lstore r1, r0l, 0, i32, x"),
        ("lload r1, r0l, 0, i32, x", "lload r1, r0l, 0, i32, x"),
        ("latomic r1, r1, r0l, add", "latomic r1, r1, r0l, add"),
    ] {
        let src = format!("ldimm r1, 1\n{access}\nstop\n");
        let e = lift_with(&src, 0).expect_err("refused without threadgroup memory");
        assert_eq!(
            e,
            LiftError::NoThreadgroupMemory {
                pc: 6,
                text: text.into()
            }
        );
        let msg = e.to_string();
        assert!(msg.contains(&format!("`{text}` at 0x6")), "{msg}");
        assert!(!msg.contains("block"), "IR terms leak: {msg}");
        // Declared, the same program lifts and passes the verifier.
        let k = lift_with(&src, 0x100).expect("lifts with threadgroup memory");
        wavejit_ir::verify::verify(&k).expect("verifies");
    }
}

/// Runs `src` on one lane on the interpreter; its fault in guest terms.
fn trap_text(src: &str) -> (Option<TrapSite>, String) {
    let code = assemble(src).expect("assembles");
    let kernel = lift_src(src, 0);
    let mem = Mem::new(&[vec![0; 16]]);
    let d = AgxDispatch::with_buffers([1, 1, 1], [1, 1, 1], &mem.addrs()).unwrap();
    let fault = Interpreter
        .run(&kernel, &d.dispatch().unwrap(), &mem)
        .expect_err("traps");
    assert!(matches!(fault.kind, FaultKind::Trap { .. }), "{fault}");
    (TrapSite::of(&code, &fault), describe_fault(&code, &fault))
}

#[test]
fn traps_name_the_instruction_and_what_they_mean() {
    let (site, text) = trap_text("ldimm r1, 0x40\nret r1\n");
    assert_eq!(
        site,
        Some(TrapSite {
            code: trap_code::BAD_TARGET,
            pc: 6,
            text: Some("ret r1".into())
        })
    );
    assert!(
        text.starts_with(
            "kernel `agx` faulted: `ret r1` at pc 0x6: `ret`/`call` to an address that is not \
             the start of an instruction the program can branch to (trap 0xa60003), lane"
        ),
        "{text}"
    );
    let (_, text) = trap_text("trap\n");
    assert!(
        text.contains("`trap` at pc 0x0: the program executed `trap` (trap 0xa60001)"),
        "{text}"
    );
    let (_, text) = trap_text("iadd r2, r2, 1\n");
    assert!(
        text.contains("`iadd r2, r2, 1` at pc 0x0: execution ran past the last instruction"),
        "{text}"
    );
}
