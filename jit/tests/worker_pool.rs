//! The JIT's pooled worker threads: dispatches on several threads give the
//! one-thread bits, and a process forked after the pool started (tinygrad's
//! multiprocessing does this) still runs dispatches instead of waiting for
//! threads it does not have. One test per binary: `fork` copies only the
//! calling thread, so nothing else of the harness should be running.

mod support;

use std::time::{Duration, Instant};

use support::{BUF, PROLOGUE, TestMemory, parse, u32s};
use wavejit_ir::{Dispatch, Engine, Kernel};
use wavejit_jit::{Jit, JitConfig};

const GROUPS: u32 = 256;

/// y[i] = i * 3 + 1 over 256 workgroups of 256 lanes (128 batches of 512).
fn kernel() -> Kernel {
    parse(&format!(
        "kernel @k shared 0 private 0 {{\nblock0:\n{PROLOGUE}  v20 = const.i32 3\n  \
         v21 = imul.i32 v3, v20\n  v22 = const.i32 1\n  v23 = iadd.i32 v21, v22\n  \
         store.global.i32 v6, v23\n  exit\n}}\n"
    ))
}

/// Runs the kernel over fresh memory; true when every word is right.
fn runs_right(jit: &Jit, k: &Kernel) -> bool {
    let n = (GROUPS * 256) as usize;
    let mem = TestMemory::new(&vec![0; 4 * n], &[], true);
    let d = Dispatch::new([GROUPS, 1, 1], [256, 1, 1]);
    if jit.run(k, &d, &mem).is_err() {
        return false;
    }
    let got = u32s(&mem.rw_bytes());
    got.len() >= n && (0..n).all(|i| got[i] == (i as u32).wrapping_mul(3).wrapping_add(1))
}

#[test]
fn pooled_threads_run_dispatches_and_a_forked_child_runs_them_without_the_pool() {
    let _ = BUF;
    let jit = Jit::new(JitConfig {
        threads: 2,
        parallel_min_work: 0,
        ..JitConfig::default()
    });
    let k = kernel();
    // The first dispatch starts the pool; later ones reuse it.
    for _ in 0..20 {
        assert!(
            runs_right(&jit, &k),
            "a two-thread dispatch gave wrong words"
        );
    }
    // SAFETY: the child only runs the JIT and leaves with `_exit` (no atexit
    // handlers, no unwinding into the harness); glibc's malloc is fork-safe.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let ok = runs_right(&jit, &k) && runs_right(&jit, &k);
        // SAFETY: ends the child without running the parent's destructors.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    // The child either finishes or hangs (waiting for pool threads it lacks).
    let start = Instant::now();
    let mut status = 0;
    loop {
        // SAFETY: `pid` is our child; `status` is a valid out pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            break;
        }
        if start.elapsed() > Duration::from_secs(60) {
            // SAFETY: our own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("the forked child's dispatch did not finish in 60 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        libc::WIFEXITED(status),
        "the forked child died: {status:#x}"
    );
    assert_eq!(
        libc::WEXITSTATUS(status),
        0,
        "the forked child got wrong words"
    );
    // The parent's pool still works after the fork.
    assert!(runs_right(&jit, &k));
}
