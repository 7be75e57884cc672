//! The fake KGSL driver through its ioctl interface, as a client sees it.

use std::ptr;

use wavejit_runtime::AddressSpace;
use wavejit_runtime::kgsl::KgslDevice;
use wavejit_runtime::kgsl::pm4::packet::op;
use wavejit_runtime::kgsl::pm4::{ComputeError, ComputeUnit, CsDispatch, type4, type7};
use wavejit_runtime::kgsl::uapi::*;

struct NoKernels;
impl ComputeUnit for NoKernels {
    fn exec_cs(&mut self, _: &CsDispatch, _: &AddressSpace) -> Result<(), ComputeError> {
        Err(ComputeError(
            "kernel `k` faulted at pc 0x10: read of 4 bytes at 0x0 refused".into(),
        ))
    }
}

fn ioctl<T>(dev: &mut KgslDevice, req: u64, arg: &mut T) -> Result<(), i32> {
    dev.ioctl(req, arg as *mut T as u64)
}

/// Allocates an object the way tinygrad does and maps it through the memfd.
fn alloc_mapped(dev: &mut KgslDevice, size: u64) -> (u32, u64) {
    let mut a = GpuobjAlloc {
        size,
        flags: 0x100C_0000,
        ..Default::default()
    };
    ioctl(dev, IOCTL_GPUOBJ_ALLOC, &mut a).unwrap();
    assert_eq!(a.mmapsize, size.div_ceil(4096) * 4096);
    // SAFETY: maps the object's pages of the device memfd, as the client does.
    let p = unsafe {
        libc::mmap(
            ptr::null_mut(),
            a.mmapsize as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            dev.memfd(),
            (u64::from(a.id) << 12) as libc::off_t,
        )
    };
    assert_ne!(p, libc::MAP_FAILED);
    (a.id, p as u64)
}

fn context(dev: &mut KgslDevice) -> u32 {
    let mut c = DrawctxtCreate {
        flags: 0x0400_8A12,
        drawctxt_id: 0,
    };
    ioctl(dev, IOCTL_DRAWCTXT_CREATE, &mut c).unwrap();
    assert_ne!(c.drawctxt_id, 0);
    c.drawctxt_id
}

fn submit(dev: &mut KgslDevice, ctx: u32, ib: u64, words: &[u32]) -> Result<u32, i32> {
    // SAFETY: `ib` is a client mapping of at least words.len()*4 bytes.
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

fn read_u32(addr: u64) -> u32 {
    // SAFETY: test addresses are live client mappings.
    unsafe { ptr::read_volatile(addr as *const u32) }
}

#[test]
fn device_info_reports_a630() {
    let mut dev = KgslDevice::new(Box::new(NoKernels)).unwrap();
    let mut info = DevInfo::default();
    let mut p = DeviceGetProperty {
        type_: PROP_DEVICE_INFO,
        value: &mut info as *mut DevInfo as u64,
        sizebytes: 40,
        ..Default::default()
    };
    ioctl(&mut dev, IOCTL_DEVICE_GETPROPERTY, &mut p).unwrap();
    assert_eq!(info.chip_id, 0x0603_0001);
    p.sizebytes = 8;
    assert_eq!(
        ioctl(&mut dev, IOCTL_DEVICE_GETPROPERTY, &mut p),
        Err(libc::EINVAL)
    );
    p.sizebytes = 40;
    p.value = 8; // not mapped
    assert_eq!(
        ioctl(&mut dev, IOCTL_DEVICE_GETPROPERTY, &mut p),
        Err(libc::EFAULT)
    );
}

#[test]
fn bad_requests_get_the_real_drivers_errno() {
    let mut dev = KgslDevice::new(Box::new(NoKernels)).unwrap();
    let mut junk = [0u64; 8];
    assert_eq!(ioctl(&mut dev, 0xc008_09ff, &mut junk), Err(libc::ENOTTY));
    assert_eq!(dev.ioctl(IOCTL_GPUOBJ_ALLOC, 16), Err(libc::EFAULT));
    let mut a = GpuobjAlloc::default();
    assert_eq!(
        ioctl(&mut dev, IOCTL_GPUOBJ_ALLOC, &mut a),
        Err(libc::EINVAL),
        "size 0"
    );
    let mut f = GpuobjFree {
        id: 999,
        ..Default::default()
    };
    assert_eq!(
        ioctl(&mut dev, IOCTL_GPUOBJ_FREE, &mut f),
        Err(libc::EINVAL)
    );
    let mut g = GpuCommand {
        context_id: 77,
        ..Default::default()
    };
    assert_eq!(
        ioctl(&mut dev, IOCTL_GPU_COMMAND, &mut g),
        Err(libc::EINVAL)
    );
    assert_eq!(wait(&mut dev, 77, 1), Err(libc::EINVAL));
}

#[test]
fn submission_runs_synchronously_and_writes_the_signal() {
    let mut dev = KgslDevice::new(Box::new(NoKernels)).unwrap();
    let ctx = context(&mut dev);
    let (_, ib) = alloc_mapped(&mut dev, 4096);
    let (_, sig) = alloc_mapped(&mut dev, 4096);
    let words = [
        type7(op::WAIT_FOR_IDLE, 0),
        type7(op::EVENT_WRITE, 4),
        4,
        sig as u32,
        (sig >> 32) as u32,
        1,
    ];
    let ts = submit(&mut dev, ctx, ib, &words).unwrap();
    assert_eq!(ts, 1);
    assert_eq!(read_u32(sig), 1, "visible when GPU_COMMAND returns");
    assert_eq!(wait(&mut dev, ctx, ts), Ok(()));
}

#[test]
fn a_parked_wait_resumes_when_the_cpu_writes_the_value() {
    let mut dev = KgslDevice::new(Box::new(NoKernels)).unwrap();
    let ctx = context(&mut dev);
    let (_, ib) = alloc_mapped(&mut dev, 4096);
    let (_, sig) = alloc_mapped(&mut dev, 4096);
    let (lo, hi) = (sig as u32, (sig >> 32) as u32);
    let words = [
        type7(op::WAIT_REG_MEM, 6),
        0x15,
        lo,
        hi,
        3,
        0xffff_ffff,
        32,
        type7(op::EVENT_WRITE, 4),
        4,
        lo + 8,
        hi,
        42,
    ];
    let ts = submit(&mut dev, ctx, ib, &words).unwrap();
    assert_eq!(read_u32(sig + 8), 0, "parked, not failed");
    // A second submission queues behind the parked one.
    let (_, ib2) = alloc_mapped(&mut dev, 4096);
    let ts2 = submit(
        &mut dev,
        ctx,
        ib2,
        &[type7(op::EVENT_WRITE, 4), 4, lo + 12, hi, 43],
    )
    .unwrap();
    assert_eq!(read_u32(sig + 12), 0, "in order behind the parked IB");
    assert_eq!(
        wait(&mut dev, ctx, ts),
        Ok(()),
        "a wait never blocks forever"
    );
    // SAFETY: live mapping.
    unsafe { ptr::write_volatile(sig as *mut u32, 3) };
    assert_eq!(wait(&mut dev, ctx, ts2), Ok(()));
    assert_eq!((read_u32(sig + 8), read_u32(sig + 12)), (42, 43));
}

#[test]
fn a_fault_surfaces_at_the_next_wait_and_later_work_is_skipped() {
    let mut dev = KgslDevice::new(Box::new(NoKernels)).unwrap();
    let ctx = context(&mut dev);
    let (_, ib) = alloc_mapped(&mut dev, 4096);
    let (_, sig) = alloc_mapped(&mut dev, 4096);
    let (lo, hi) = (sig as u32, (sig >> 32) as u32);
    let words = [
        type4(0xb990, 1),
        3,
        type7(op::EXEC_CS, 4),
        0,
        1,
        1,
        1,
        type7(op::EVENT_WRITE, 4),
        4,
        lo,
        hi,
        1,
    ];
    let ts = submit(&mut dev, ctx, ib, &words).unwrap();
    assert_eq!(
        read_u32(sig),
        0,
        "the aborted IB's signal write did not happen"
    );
    assert!(
        dev.context_fault(ctx)
            .unwrap()
            .contains("kernel `k` faulted at pc 0x10")
    );
    assert_eq!(wait(&mut dev, ctx, ts), Err(libc::EDEADLK));
    // kgsl_check_context_state: later submits are refused, without a timestamp.
    assert_eq!(
        submit(
            &mut dev,
            ctx,
            ib,
            &[type7(op::EVENT_WRITE, 4), 4, lo, hi, 2],
        ),
        Err(libc::EDEADLK)
    );
    assert_eq!(read_u32(sig), 0, "a faulted context runs nothing");
    assert_eq!(wait(&mut dev, ctx, ts), Err(libc::EDEADLK));
    // Other contexts are unaffected.
    let ctx2 = context(&mut dev);
    let ts3 = submit(
        &mut dev,
        ctx2,
        ib,
        &[type7(op::EVENT_WRITE, 4), 4, lo, hi, 9],
    )
    .unwrap();
    assert_eq!(
        (ts3, wait(&mut dev, ctx2, ts3), read_u32(sig)),
        (1, Ok(()), 9)
    );
}

#[test]
fn the_fault_is_appended_to_the_fault_log() {
    let log = std::env::temp_dir().join(format!("wj-kgsl-fault-log-{}", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let mut dev = KgslDevice::new(Box::new(NoKernels)).unwrap();
    dev.set_fault_log(Some(log.clone()));
    let ctx = context(&mut dev);
    let (_, ib) = alloc_mapped(&mut dev, 4096);
    let words = [type4(0xb990, 1), 3, type7(op::EXEC_CS, 4), 0, 1, 1, 1];
    let ts = submit(&mut dev, ctx, ib, &words).unwrap();
    assert_eq!(wait(&mut dev, ctx, ts), Err(libc::EDEADLK));
    let text = std::fs::read_to_string(&log).expect("the log exists");
    let _ = std::fs::remove_file(&log);
    let line = format!(
        "wavejit kgsl: pid {} context {ctx}: {}\n",
        std::process::id(),
        dev.context_fault(ctx).unwrap()
    );
    assert_eq!(text, line);
    assert!(
        text.contains("kernel `k` faulted at pc 0x10: read of 4 bytes at 0x0 refused"),
        "{text}"
    );
}

#[test]
fn object_sizes_that_wrap_or_exceed_the_limit_are_einval() {
    let mut dev = KgslDevice::new(Box::new(NoKernels)).unwrap();
    let (first, _) = alloc_mapped(&mut dev, 4096);
    // 2^64-1 and 2^64-4095 wrap to 0 when page-rounded; 2^32 and 2^40 exceed
    // KGSL's 4 GiB object limit (UINT_MAX), 2^43 the device's whole memory.
    for size in [
        u64::MAX,
        u64::MAX - 4094,
        1 << 32,
        (1 << 32) + 1,
        1 << 40,
        1 << 43,
    ] {
        let mut a = GpuobjAlloc {
            size,
            flags: 0x100C_0000,
            ..Default::default()
        };
        assert_eq!(
            ioctl(&mut dev, IOCTL_GPUOBJ_ALLOC, &mut a),
            Err(libc::EINVAL),
            "GPUOBJ_ALLOC size {size:#x}"
        );
        let mut g = GpumemAllocId {
            size,
            ..Default::default()
        };
        assert_eq!(
            ioctl(&mut dev, IOCTL_GPUMEM_ALLOC_ID, &mut g),
            Err(libc::EINVAL),
            "GPUMEM_ALLOC_ID size {size:#x}"
        );
    }
    // The largest object KGSL allows is still accepted (sparse: nothing is touched).
    let mut big = GpuobjAlloc {
        size: u64::from(u32::MAX),
        flags: 0x100C_0000,
        ..Default::default()
    };
    ioctl(&mut dev, IOCTL_GPUOBJ_ALLOC, &mut big).unwrap();
    assert_eq!((big.id, big.mmapsize), (first + 1, 1 << 32));
    let (next, _) = alloc_mapped(&mut dev, 4096);
    assert_eq!(next, first + 1 + (1 << 20), "ids stay unique");
}

#[test]
fn freed_objects_leave_the_address_space_at_once() {
    let mut dev = KgslDevice::new(Box::new(NoKernels)).unwrap();
    let ctx = context(&mut dev);
    let (_, ib) = alloc_mapped(&mut dev, 4096);
    let (id, buf) = alloc_mapped(&mut dev, 4096);
    let mut f = GpuobjFree {
        id,
        ..Default::default()
    };
    ioctl(&mut dev, IOCTL_GPUOBJ_FREE, &mut f).unwrap();
    let words = [type7(op::MEM_WRITE, 3), buf as u32, (buf >> 32) as u32, 5];
    let ts = submit(&mut dev, ctx, ib, &words).unwrap();
    let fault = dev.context_fault(ctx).unwrap().to_string();
    assert!(fault.contains("its allocation was freed"), "{fault}");
    assert_eq!(wait(&mut dev, ctx, ts), Err(libc::EDEADLK));
}
