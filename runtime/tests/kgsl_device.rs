//! The fake KGSL driver through its ioctl interface, as a client sees it.

mod kgsl_support;

use std::ptr;

use kgsl_support::{alloc_object, ioctl};
use wavejit_runtime::AddressSpace;
use wavejit_runtime::kgsl::KgslDevice;
use wavejit_runtime::kgsl::pm4::packet::op;
use wavejit_runtime::kgsl::pm4::{
    ComputeCause, ComputeError, ComputeUnit, CsDispatch, type4, type7,
};
use wavejit_runtime::kgsl::uapi::*;

struct NoKernels;
impl ComputeUnit for NoKernels {
    fn exec_cs(&mut self, _: &CsDispatch, _: &AddressSpace) -> Result<(), ComputeError> {
        let why = "faulted at pc 0x10: read of 4 bytes at 0x0 refused";
        Err(ComputeError::new(
            "kernel `k`",
            ComputeCause::Other(why.into()),
        ))
    }
}

/// The tests of this file run one at a time: some unmap a page in the middle of
/// a range and expect the hole to stay one until the driver looks, and any
/// other test's 4 KiB mmap (an object, a device view) could land in it.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
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
    submit_ib(dev, ctx, ib, words.len())
}

/// Submits the `dwords` already at `ib` (which the CPU may not be able to touch).
fn submit_ib(dev: &mut KgslDevice, ctx: u32, ib: u64, dwords: usize) -> Result<u32, i32> {
    let mut cmd = CommandObject {
        gpuaddr: ib,
        size: 4 * dwords as u64,
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
    let _serial = serial();
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
    let _serial = serial();
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
    let _serial = serial();
    let mut dev = KgslDevice::new(Box::new(NoKernels)).unwrap();
    let ctx = context(&mut dev);
    let (_, ib) = alloc_object(&mut dev, 4096);
    let (_, sig) = alloc_object(&mut dev, 4096);
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
    let _serial = serial();
    let mut dev = KgslDevice::new(Box::new(NoKernels)).unwrap();
    let ctx = context(&mut dev);
    let (_, ib) = alloc_object(&mut dev, 4096);
    let (_, sig) = alloc_object(&mut dev, 4096);
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
    let (_, ib2) = alloc_object(&mut dev, 4096);
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
    let _serial = serial();
    let mut dev = KgslDevice::new(Box::new(NoKernels)).unwrap();
    let ctx = context(&mut dev);
    let (_, ib) = alloc_object(&mut dev, 4096);
    let (_, sig) = alloc_object(&mut dev, 4096);
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
            .contains("kernel `k`: faulted at pc 0x10")
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
    let _serial = serial();
    let log = std::env::temp_dir().join(format!("wj-kgsl-fault-log-{}", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let mut dev = KgslDevice::new(Box::new(NoKernels)).unwrap();
    dev.set_fault_log(Some(log.clone()));
    let ctx = context(&mut dev);
    let (_, ib) = alloc_object(&mut dev, 4096);
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
        text.contains("kernel `k`: faulted at pc 0x10: read of 4 bytes at 0x0 refused"),
        "{text}"
    );
}

#[test]
fn object_sizes_that_wrap_or_exceed_the_limit_are_einval() {
    let _serial = serial();
    let mut dev = KgslDevice::new(Box::new(NoKernels)).unwrap();
    let (first, _) = alloc_object(&mut dev, 4096);
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
    let (next, _) = alloc_object(&mut dev, 4096);
    assert_eq!(next, first + 1 + (1 << 20), "ids stay unique");
}

#[test]
fn freed_objects_leave_the_address_space_at_once() {
    let _serial = serial();
    let mut dev = KgslDevice::new(Box::new(NoKernels)).unwrap();
    let ctx = context(&mut dev);
    let (_, ib) = alloc_object(&mut dev, 4096);
    let (id, buf) = alloc_object(&mut dev, 4096);
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

/// Anonymous private pages, as a client's malloc'd buffer.
fn anon_pages(pages: usize) -> u64 {
    // SAFETY: a fresh private mapping.
    let p = unsafe {
        libc::mmap(
            ptr::null_mut(),
            pages * 4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED);
    p as u64
}

fn protect(addr: u64, len: usize, prot: i32) {
    // SAFETY: test-owned mappings.
    assert_eq!(unsafe { libc::mprotect(addr as *mut _, len, prot) }, 0);
}

fn map_user(dev: &mut KgslDevice, hostptr: u64, len: u64, flags: u32) -> Result<u64, i32> {
    let mut m = MapUserMem {
        hostptr,
        len,
        memtype: 3, // KGSL_USER_MEM_TYPE_ADDR
        flags,
        ..Default::default()
    };
    ioctl(dev, IOCTL_MAP_USER_MEM, &mut m)?;
    Ok(m.gpuaddr)
}

fn mem_write(addr: u64, value: u32) -> [u32; 4] {
    [
        type7(op::MEM_WRITE, 3),
        addr as u32,
        (addr >> 32) as u32,
        value,
    ]
}

/// Issue 14.2: MAP_USER_MEM of read-only memory. Without GPUREADONLY the real
/// driver's get_user_pages(FOLL_WRITE) refuses it (EFAULT); with it the range
/// is GPU-readable only, and a CP_MEM_WRITE into it faults the context (EDEADLK)
/// instead of writing (or crashing on) the read-only page. The same holds when
/// the client protects a mapped range after MAP_USER_MEM.
#[test]
fn a_gpu_write_to_read_only_user_memory_faults_the_context() {
    let _serial = serial();
    let mut dev = KgslDevice::new(Box::new(NoKernels)).unwrap();
    let (_, ib) = alloc_object(&mut dev, 4096);
    let (_, out) = alloc_object(&mut dev, 4096);
    let ro = anon_pages(1);
    // SAFETY: a live, still writable page.
    unsafe { ptr::write_volatile(ro as *mut u32, 0x11) };
    protect(ro, 4096, libc::PROT_READ);
    assert_eq!(map_user(&mut dev, ro, 4096, 0), Err(libc::EFAULT));
    let gpuaddr = map_user(&mut dev, ro, 4096, MEMFLAGS_GPUREADONLY as u32).unwrap();
    assert_eq!(gpuaddr, ro);
    // The GPU may read it: CP_MEM_TO_MEM out = ro + ro.
    let ctx = context(&mut dev);
    let (lo, hi) = (ro as u32, (ro >> 32) as u32);
    let copy = [
        type7(op::MEM_TO_MEM, 7),
        0,
        out as u32,
        (out >> 32) as u32,
        lo,
        hi,
        lo,
        hi,
    ];
    let ts = submit(&mut dev, ctx, ib, &copy).unwrap();
    assert_eq!((wait(&mut dev, ctx, ts), read_u32(out)), (Ok(()), 0x22));
    // It may not write it.
    let ts = submit(&mut dev, ctx, ib, &mem_write(ro, 7)).unwrap();
    assert_eq!(wait(&mut dev, ctx, ts), Err(libc::EDEADLK));
    let fault = dev.context_fault(ctx).unwrap();
    assert!(
        fault.contains(&format!("CP_MEM_WRITE at {ro:#x} refused")) && fault.contains("read-only"),
        "{fault}"
    );
    assert_eq!(read_u32(ro), 0x11, "the page is untouched");
    assert_eq!(
        submit(&mut dev, ctx, ib, &mem_write(out, 1)),
        Err(libc::EDEADLK)
    );

    // Writable when mapped, read-only later: the next submission sees it.
    let rw = anon_pages(1);
    assert_eq!(map_user(&mut dev, rw, 4096, 0), Ok(rw));
    let ctx = context(&mut dev);
    let ts = submit(&mut dev, ctx, ib, &mem_write(rw, 5)).unwrap();
    assert_eq!((wait(&mut dev, ctx, ts), read_u32(rw)), (Ok(()), 5));
    protect(rw, 4096, libc::PROT_READ);
    let ts = submit(&mut dev, ctx, ib, &mem_write(rw, 6)).unwrap();
    assert_eq!(wait(&mut dev, ctx, ts), Err(libc::EDEADLK));
    assert_eq!(read_u32(rw), 5);
    // PROT_NONE later: not even readable.
    protect(rw, 4096, libc::PROT_NONE);
    let ctx = context(&mut dev);
    let copy = [
        type7(op::MEM_TO_MEM, 7),
        0,
        out as u32,
        (out >> 32) as u32,
        rw as u32,
        (rw >> 32) as u32,
        rw as u32,
        (rw >> 32) as u32,
    ];
    let ts = submit(&mut dev, ctx, ib, &copy).unwrap();
    assert_eq!(wait(&mut dev, ctx, ts), Err(libc::EDEADLK));
    let fault = dev.context_fault(ctx).unwrap();
    assert!(
        fault.contains(&format!("CP_MEM_TO_MEM source at {rw:#x} refused")),
        "{fault}"
    );
}

/// Issue 14.2: a GPU object the client mapped PROT_NONE, used as an IB (and a
/// read-only mapping of an object written by CP_MEM_WRITE): the context
/// faults, the host memory is never touched.
#[test]
fn an_ib_in_a_prot_none_object_mapping_faults_the_context() {
    let _serial = serial();
    let mut dev = KgslDevice::new(Box::new(NoKernels)).unwrap();
    let (id, ib) = alloc_object(&mut dev, 4096);
    let (_, sig) = alloc_object(&mut dev, 4096);
    let words = mem_write(sig, 9);
    // SAFETY: `ib` is the object's writable client mapping.
    unsafe { ptr::copy_nonoverlapping(words.as_ptr(), ib as *mut u32, words.len()) };
    let map = |prot| {
        // SAFETY: maps the object's pages again, as a client may.
        let p = unsafe {
            libc::mmap(
                ptr::null_mut(),
                4096,
                prot,
                libc::MAP_SHARED,
                dev.memfd(),
                (u64::from(id) << 12) as libc::off_t,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        p as u64
    };
    let (none, ro) = (map(libc::PROT_NONE), map(libc::PROT_READ));
    let ctx = context(&mut dev);
    let ts = submit_ib(&mut dev, ctx, none, words.len()).unwrap();
    assert_eq!(wait(&mut dev, ctx, ts), Err(libc::EDEADLK));
    let fault = dev.context_fault(ctx).unwrap();
    assert!(
        fault.contains(&format!(
            "IB {none:#x} dword 0: IB read at {none:#x} refused"
        )),
        "{fault}"
    );
    assert_eq!(read_u32(sig), 0, "the IB did not run");
    // The same words through the read-only mapping run.
    let ctx = context(&mut dev);
    let ts = submit_ib(&mut dev, ctx, ro, words.len()).unwrap();
    assert_eq!((wait(&mut dev, ctx, ts), read_u32(sig)), (Ok(()), 9));
    // ... but may not be written through it.
    let ts = submit(&mut dev, ctx, sig + 64, &mem_write(ro + 16, 1)).unwrap();
    assert_eq!(wait(&mut dev, ctx, ts), Err(libc::EDEADLK));
    assert_eq!(
        (read_u32(ib + 16), read_u32(ro)),
        (0, words[0]),
        "the object is untouched"
    );
}

/// Issue 14.2: a MAP_USER_MEM range with an unmapped page in the middle. As
/// kgsl's get_user_pages: a partial pin is EINVAL, nothing pinned (the hole
/// first) EFAULT; a range of the device's own memory is EFAULT (check_vma). A
/// range mapped in full and later holed is dropped at the next submission, so a
/// mapping made in the hole never receives GPU writes.
#[test]
fn user_memory_with_a_hole_is_refused_or_dropped() {
    let _serial = serial();
    let mut dev = KgslDevice::new(Box::new(NoKernels)).unwrap();
    let (_, ib) = alloc_object(&mut dev, 4096);
    let (_, obj) = alloc_object(&mut dev, 4096);
    let p = anon_pages(3);
    // SAFETY: unmapping the middle page of our own mapping.
    assert_eq!(unsafe { libc::munmap((p + 4096) as *mut _, 4096) }, 0);
    assert_eq!(map_user(&mut dev, p, 3 * 4096, 0), Err(libc::EINVAL));
    assert_eq!(map_user(&mut dev, p + 4096, 2 * 4096, 0), Err(libc::EFAULT));
    assert_eq!(map_user(&mut dev, obj, 4096, 0), Err(libc::EFAULT));
    assert_eq!(map_user(&mut dev, p + 1, 4096, 0), Err(libc::EINVAL));
    assert_eq!(
        map_user(&mut dev, u64::MAX - 4095, 8192, 0),
        Err(libc::EINVAL)
    );
    // Nothing of the refused range became GPU memory.
    let ctx = context(&mut dev);
    let ts = submit(&mut dev, ctx, ib, &mem_write(p, 3)).unwrap();
    assert_eq!(wait(&mut dev, ctx, ts), Err(libc::EDEADLK));
    assert_eq!(read_u32(p), 0);

    // Mapped in full, then holed, then something else mapped in the hole.
    let q = anon_pages(3);
    assert_eq!(map_user(&mut dev, q, 3 * 4096, 0), Ok(q));
    let ctx = context(&mut dev);
    let ts = submit(&mut dev, ctx, ib, &mem_write(q + 4096, 4)).unwrap();
    assert_eq!((wait(&mut dev, ctx, ts), read_u32(q + 4096)), (Ok(()), 4));
    // SAFETY: unmapping the middle page of our own mapping.
    assert_eq!(unsafe { libc::munmap((q + 4096) as *mut _, 4096) }, 0);
    // The next submission's re-read sees the hole and drops the whole range:
    // even its still-mapped first page is no longer GPU memory.
    let ts = submit(&mut dev, ctx, ib, &mem_write(q, 5)).unwrap();
    assert_eq!(wait(&mut dev, ctx, ts), Err(libc::EDEADLK));
    let fault = dev.context_fault(ctx).unwrap();
    assert!(
        fault.contains(&format!(
            "CP_MEM_WRITE at {q:#x} refused: its allocation was freed"
        )),
        "{fault}"
    );
    assert_eq!(read_u32(q), 0);
    // A mapping made in the hole afterwards receives no GPU writes.
    // SAFETY: maps a fresh page into the hole of our own range.
    let filler = unsafe {
        libc::mmap(
            (q + 4096) as *mut _,
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    assert_eq!(filler as u64, q + 4096);
    let ctx = context(&mut dev);
    let ts = submit(&mut dev, ctx, ib, &mem_write(q + 4096, 6)).unwrap();
    assert_eq!(wait(&mut dev, ctx, ts), Err(libc::EDEADLK));
    assert_eq!(read_u32(q + 4096), 0, "the new mapping got no GPU write");
    // SHAREDMEM_FREE of the dropped range still succeeds once.
    let mut f = SharedmemFree { gpuaddr: q };
    assert_eq!(ioctl(&mut dev, IOCTL_SHAREDMEM_FREE, &mut f), Ok(()));
    assert_eq!(
        ioctl(&mut dev, IOCTL_SHAREDMEM_FREE, &mut f),
        Err(libc::EINVAL)
    );
}
