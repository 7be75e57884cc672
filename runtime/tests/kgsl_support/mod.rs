//! Shared by the KGSL integration tests: ioctls on a `KgslDevice` and GPU
//! objects allocated and mapped the way tinygrad does.
#![allow(dead_code)]

use std::ptr;

use wavejit_runtime::kgsl::KgslDevice;
use wavejit_runtime::kgsl::uapi::*;

pub fn ioctl<T>(dev: &mut KgslDevice, req: u64, arg: &mut T) -> Result<(), i32> {
    dev.ioctl(req, arg as *mut T as u64)
}

/// Allocates an object the way tinygrad does and maps it through the memfd:
/// its id and the mapping's address, which is its GPU address. The driver
/// rounds the object to whole pages.
pub fn alloc_object(dev: &mut KgslDevice, size: u64) -> (u32, u64) {
    let mut a = GpuobjAlloc {
        size,
        flags: 0x100C_0000,
        ..Default::default()
    };
    ioctl(dev, IOCTL_GPUOBJ_ALLOC, &mut a).expect("GPUOBJ_ALLOC");
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

/// [`alloc_object`]'s address alone.
pub fn alloc_mapped(dev: &mut KgslDevice, size: u64) -> u64 {
    alloc_object(dev, size).1
}
