//! The KGSL-direct descriptor table from Rust: descriptors are independent
//! devices, released ones are refused, and concurrent open/ioctl/close from
//! several threads neither deadlocks nor mixes devices up.

use std::ffi::c_void;

use wavejit_runtime::kgsl::capi::{
    ioctl_fd, is_device_fd, open_fd, release_fd, wj_kgsl_close, wj_kgsl_ioctl, wj_kgsl_mmap_fd,
    wj_kgsl_open,
};
use wavejit_runtime::kgsl::uapi::{
    CHIP_ID_A630, DevInfo, DeviceGetProperty, GpuobjAlloc, IOCTL_DEVICE_GETPROPERTY,
    IOCTL_GPUOBJ_ALLOC, PROP_DEVICE_INFO,
};

fn alloc(fd: i32) -> Result<u32, i32> {
    let mut a = GpuobjAlloc {
        size: 4096,
        ..Default::default()
    };
    ioctl_fd(fd, IOCTL_GPUOBJ_ALLOC, &raw mut a as u64).expect("a device fd")?;
    Ok(a.id)
}

fn chip_id(fd: i32) -> i32 {
    let mut info = DevInfo::default();
    let mut p = DeviceGetProperty {
        type_: PROP_DEVICE_INFO,
        value: &raw mut info as u64,
        sizebytes: size_of::<DevInfo>() as u64,
        ..Default::default()
    };
    // SAFETY: p and info are live locals the driver fills.
    let r = unsafe {
        wj_kgsl_ioctl(
            fd,
            IOCTL_DEVICE_GETPROPERTY as _,
            (&raw mut p).cast::<c_void>(),
        )
    };
    if r == 0 { info.chip_id as i32 } else { r }
}

#[test]
fn descriptors_are_independent_devices() {
    let a = open_fd(false).expect("opens");
    let b = open_fd(true).expect("opens");
    assert_ne!(a, b);
    // Object ids count per device.
    assert_eq!(alloc(a), Ok(1));
    assert_eq!(alloc(a), Ok(2));
    assert_eq!(alloc(b), Ok(1));
    assert!(release_fd(a));
    assert!(!is_device_fd(a));
    assert_eq!(ioctl_fd(a, IOCTL_GPUOBJ_ALLOC, 0), None);
    assert!(!release_fd(a));
    assert_eq!(alloc(b), Ok(2));
    // SAFETY: closing the descriptor open_fd returned, no longer in the table.
    assert_eq!(unsafe { libc::close(a) }, 0);
    // (Closing twice is checked single-threaded in runtime/capi/tests/c_api.rs:
    // here the other test may reuse the number at once.)
    assert_eq!(wj_kgsl_close(b), 0);
}

#[test]
fn concurrent_clients_each_reach_their_own_device() {
    let threads: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(|| {
                for _ in 0..25 {
                    let fd = wj_kgsl_open();
                    assert!(fd >= 0, "wj_kgsl_open: {fd}");
                    assert_eq!(wj_kgsl_mmap_fd(fd), fd);
                    assert_eq!(chip_id(fd), CHIP_ID_A630 as i32);
                    // A fresh device's first object is 1 whatever the others do.
                    assert_eq!(alloc(fd), Ok(1));
                    assert_eq!(wj_kgsl_close(fd), 0);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("client thread");
    }
}
