//! Issue 14 item 11: the engines' own trap for a malformed kernel says what
//! it means instead of a bare `trap 0xffffffff`.

use wavejit_ir::interp::{Interpreter, MALFORMED_TRAP};
use wavejit_ir::{Dispatch, Engine, FaultKind, Kernel, NoGlobalMemory};

#[test]
fn a_kernel_without_blocks_faults_saying_it_is_malformed() {
    let fault = Interpreter
        .run(
            &Kernel::new("empty"),
            &Dispatch::new([1, 1, 1], [4, 1, 1]),
            &NoGlobalMemory,
        )
        .expect_err("no blocks to run");
    assert_eq!(
        fault.kind,
        FaultKind::Trap {
            code: MALFORMED_TRAP
        }
    );
    assert_eq!(
        fault.to_string(),
        "kernel `empty` faulted at (block0), lane workgroup (0,0,0) local (0,0,0): trap \
         0xffffffff: the kernel is malformed (it fails the verifier) or its lane state could \
         not be allocated"
    );
}
