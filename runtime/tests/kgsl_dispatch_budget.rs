//! Issue 14.5 through the KGSL ioctls: CP_EXEC_CS of a huge grid of a kernel
//! that never faults ends within the compute unit's dispatch budget and faults
//! the context (EDEADLK at the next wait and for later GPU_COMMANDs), instead
//! of holding GPU_COMMAND for hours. Budgets are set with
//! `Ir3Unit::set_budget`; nothing waits for the 30 s default.

mod kgsl_support;

use std::ptr;
use std::sync::mpsc;
use std::time::Duration;

use kgsl_support::{alloc_mapped, ioctl};
use wavejit_frontend::ir3::assemble;
use wavejit_ir::Budget;
use wavejit_runtime::kgsl::KgslDevice;
use wavejit_runtime::kgsl::ir3_unit::Ir3Unit;
use wavejit_runtime::kgsl::pm4::packet::op;
use wavejit_runtime::kgsl::pm4::{type4, type7};
use wavejit_runtime::kgsl::uapi::*;

fn context(dev: &mut KgslDevice) -> u32 {
    let mut c = DrawctxtCreate {
        flags: 0x0400_8A12,
        drawctxt_id: 0,
    };
    ioctl(dev, IOCTL_DRAWCTXT_CREATE, &mut c).expect("context");
    c.drawctxt_id
}

fn submit(dev: &mut KgslDevice, ctx: u32, ib: u64, words: &[u32]) -> Result<u32, i32> {
    // SAFETY: `ib` is a client mapping of 4096 bytes, more than any IB here.
    unsafe { ptr::copy_nonoverlapping(words.as_ptr(), ib as *mut u32, words.len()) };
    let mut cmd = CommandObject {
        gpuaddr: ib,
        size: 4 * words.len() as u64,
        flags: CMDLIST_IB,
        ..Default::default()
    };
    let mut g = GpuCommand {
        cmdlist: &mut cmd as *mut CommandObject as u64,
        cmdsize: 32,
        numcmds: 1,
        context_id: ctx,
        ..Default::default()
    };
    ioctl(dev, IOCTL_GPU_COMMAND, &mut g)?;
    Ok(g.timestamp)
}

fn wait(dev: &mut KgslDevice, ctx: u32, ts: u32) -> Result<(), i32> {
    let mut w = WaitTimestamp {
        context_id: ctx,
        timestamp: ts,
        timeout: u32::MAX,
    };
    ioctl(dev, IOCTL_DEVICE_WAITTIMESTAMP_CTXTID, &mut w)
}

/// An ir3 kernel that does a little arithmetic and never faults.
fn idle_kernel() -> Vec<u64> {
    assemble("mov.u32u32 r1.x, 1\nadd.u r1.y, r1.x, r0.x\nend\n").expect("kernel assembles")
}

/// CP_EXEC_CS of `groups` workgroups of 64 lanes of the kernel at `shader`
/// (`instrs` instructions), then a signal write of 7 at `signal`.
fn exec_cs_ib(shader: u64, instrs: usize, groups: [u32; 3], signal: u64) -> Vec<u32> {
    let mut w = vec![type7(op::SET_MARKER, 1), 8];
    w.extend([type4(0xab00, 1), 5]);
    w.extend([type4(0xb990, 7), (63 << 2) | 3, 64, 0, 1, 0, 1, 0]);
    w.extend([
        type4(0xa9b0, 6),
        (1 << 1) | (9 << 7) | (1 << 31),
        0x41,
        0,
        0,
        shader as u32,
        (shader >> 32) as u32,
    ]);
    w.extend([type4(0xa9bc, 1), instrs.div_ceil(16) as u32]);
    w.extend([type4(0xb997, 2), 0xc0 | (0xfc << 8) | (0xfc << 16), 0xfc]);
    w.extend([type7(op::EXEC_CS, 4), 0, groups[0], groups[1], groups[2]]);
    w.extend([
        type7(op::EVENT_WRITE, 4),
        4,
        signal as u32,
        (signal >> 32) as u32,
        7,
    ]);
    w
}

/// What the client saw: GPU_COMMAND's result, the context's fault text, the
/// next wait, a later GPU_COMMAND, and the signal word.
#[derive(Debug)]
struct Seen {
    submitted: Result<u32, i32>,
    fault: Option<String>,
    wait: Result<(), i32>,
    later: Result<u32, i32>,
    signal: u32,
}

/// Submits a CP_EXEC_CS of `groups` on a device whose compute unit has
/// `budget`, on another thread; fails the test (instead of hanging it) if the
/// ioctls have not returned within two minutes (the budgets under test are
/// 200 ms or none).
fn huge_grid(budget: Budget, groups: [u32; 3]) -> Seen {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut cu = Ir3Unit::new(false);
        cu.set_budget(budget);
        let mut dev = KgslDevice::new(Box::new(cu)).expect("device");
        dev.set_fault_log(None);
        let ctx = context(&mut dev);
        let ib = alloc_mapped(&mut dev, 4096);
        let shader = alloc_mapped(&mut dev, 4096);
        let signal = alloc_mapped(&mut dev, 4096);
        let prog = idle_kernel();
        // SAFETY: `shader` is a 4096-byte client mapping; the kernel is 3 words.
        unsafe { ptr::copy_nonoverlapping(prog.as_ptr(), shader as *mut u64, prog.len()) };
        let words = exec_cs_ib(shader, prog.len(), groups, signal);
        let submitted = submit(&mut dev, ctx, ib, &words);
        let fault = dev.context_fault(ctx).map(str::to_string);
        let wait = wait(&mut dev, ctx, submitted.unwrap_or(0));
        let signal_write = [
            type7(op::EVENT_WRITE, 4),
            4,
            signal as u32,
            (signal >> 32) as u32,
            9,
        ];
        let later = submit(&mut dev, ctx, ib, &signal_write);
        // SAFETY: live client mapping.
        let signal = unsafe { ptr::read_volatile(signal as *const u32) };
        let _ = tx.send(Seen {
            submitted,
            fault,
            wait,
            later,
            signal,
        });
    });
    rx.recv_timeout(Duration::from_secs(120))
        .expect("GPU_COMMAND did not return within 120 s")
}

#[test]
fn a_huge_grid_ends_at_the_time_limit_and_faults_the_context() {
    let budget = Budget {
        time_limit: Some(Duration::from_millis(200)),
        max_work_items: u64::MAX,
        cancel: None,
    };
    // 2^32 - 1 workgroups of 64 lanes: years of work at emulator speed.
    let seen = huge_grid(budget, [u32::MAX, 1, 1]);
    assert!(seen.submitted.is_ok(), "{seen:?}");
    let fault = seen.fault.as_deref().expect("the context faulted");
    assert!(
        fault.contains("stopped before workgroup (")
            && fault.contains("dispatch ran past its time limit of 200 ms"),
        "{fault}"
    );
    assert_eq!(seen.wait, Err(libc::EDEADLK));
    assert_eq!(seen.later, Err(libc::EDEADLK));
    assert_eq!(seen.signal, 0, "the signal after the aborted dispatch");
}

#[test]
fn a_grid_over_the_work_item_budget_is_refused_at_once() {
    let budget = Budget {
        time_limit: None,
        max_work_items: 1 << 20,
        cancel: None,
    };
    // 2^20 groups of 64 (the grid that took 10.6 s): 2^26 work-items.
    let seen = huge_grid(budget, [1 << 10, 1 << 10, 1]);
    let fault = seen.fault.as_deref().expect("the context faulted");
    assert!(
        fault.contains(
            "dispatch refused: 67108864 work-items exceed the dispatch work-item budget of \
             1048576 (WAVEJIT_DISPATCH_MAX_WORK_ITEMS)"
        ),
        "{fault}"
    );
    assert_eq!(seen.wait, Err(libc::EDEADLK));
    assert_eq!(seen.later, Err(libc::EDEADLK));
    assert_eq!(seen.signal, 0);
}

#[test]
fn a_grid_within_the_budget_still_runs_and_signals() {
    let budget = Budget {
        time_limit: Some(Duration::from_secs(60)),
        max_work_items: 64 * 4,
        cancel: None,
    };
    let seen = huge_grid(budget, [4, 1, 1]);
    assert_eq!(seen.fault, None);
    assert_eq!(seen.wait, Ok(()));
    assert!(seen.later.is_ok(), "{seen:?}");
    assert_eq!(seen.signal, 9, "both submissions' signal writes ran");
}
