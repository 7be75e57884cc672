//! KGSL-direct C ABI (`wj_kgsl_*`, declared in `runtime/include/wavejit_kgsl.h`)
//! and the descriptor table behind it, which the LD_PRELOAD shim shares: a
//! descriptor is a `dup` of the device's memfd, so the client `mmap`s object
//! `id` from it at offset `id << 12` exactly as from the real device node.
//!
//! The exported functions are thin wrappers over the Rust functions here and
//! never call each other: when both `libwavejit.so` and the shim are loaded,
//! each library's `wj_kgsl_*` then reaches its own table.

use std::collections::BTreeMap;
use std::ffi::{c_int, c_ulong, c_void};
use std::os::fd::RawFd;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, MutexGuard};

use super::device::{Errno, KgslDevice};

type Table = BTreeMap<RawFd, Arc<Mutex<KgslDevice>>>;

/// Descriptors handed out for the device, each with the device it reaches.
fn table() -> MutexGuard<'static, Table> {
    static TABLE: Mutex<Table> = Mutex::new(BTreeMap::new());
    TABLE.lock().unwrap_or_else(|e| e.into_inner())
}

fn last_errno(fallback: Errno) -> Errno {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(fallback)
}

/// Opens a new device and returns a descriptor for it (a `dup` of its memfd,
/// close-on-exec if `cloexec`).
pub fn open_fd(cloexec: bool) -> Result<RawFd, Errno> {
    let dev = KgslDevice::new(super::compute_unit())
        .map_err(|e| e.raw_os_error().unwrap_or(libc::ENODEV))?;
    let cmd = if cloexec {
        libc::F_DUPFD_CLOEXEC
    } else {
        libc::F_DUPFD
    };
    // SAFETY: fcntl duplicating the device's own open memfd.
    let fd = unsafe { libc::fcntl(dev.memfd(), cmd, 0) };
    if fd < 0 {
        return Err(last_errno(libc::EMFILE));
    }
    // A number still in the table was closed behind the table's back (libc's
    // close on a descriptor of the direct API): its device is stale. It is
    // dropped after the lock is released, because dropping a device closes its
    // memfd and, under the shim, `close` takes this lock.
    let stale = table().insert(fd, Arc::new(Mutex::new(dev)));
    drop(stale);
    Ok(fd)
}

/// Whether `fd` is a descriptor of this table.
pub fn is_device_fd(fd: RawFd) -> bool {
    table().contains_key(&fd)
}

/// Runs one ioctl on `fd`'s device; `None` if `fd` is not one of its descriptors.
/// Only the low 32 bits of `request` count (glibc passes the `int` request
/// sign- or zero-extended to `unsigned long`).
pub fn ioctl_fd(fd: RawFd, request: u64, arg: u64) -> Option<Result<(), Errno>> {
    let dev = table().get(&fd).cloned()?;
    let mut dev = dev.lock().unwrap_or_else(|e| e.into_inner());
    // A panic in the driver must not unwind into C; the client sees EIO.
    Some(
        catch_unwind(AssertUnwindSafe(|| dev.ioctl(request & 0xffff_ffff, arg)))
            .unwrap_or(Err(libc::EIO)),
    )
}

/// Forgets `fd` and releases its device unless another call is using it (the
/// last user releases it); the descriptor itself stays open. False if `fd` was
/// not a descriptor of the table.
pub fn release_fd(fd: RawFd) -> bool {
    // Dropped after the lock is released (see `open_fd`).
    let released = table().remove(&fd);
    released.is_some()
}

/// `wj_kgsl_open`: a new device's descriptor, close-on-exec, or `-errno`.
#[unsafe(no_mangle)]
pub extern "C" fn wj_kgsl_open() -> c_int {
    match catch_unwind(|| open_fd(true)) {
        Ok(Ok(fd)) => fd,
        Ok(Err(e)) => -e,
        Err(_) => -libc::ENODEV,
    }
}

/// `wj_kgsl_ioctl`: 0 or `-errno`, as the kernel driver returns them (EBADF for
/// a descriptor `wj_kgsl_open` did not return).
///
/// # Safety
/// The driver writes the struct at `argp` and the outputs its fields point to,
/// as the request defines. Copies go through the kernel (`process_vm_writev`),
/// so an unmapped address gives EFAULT rather than a crash, but a mapped one is
/// written: the caller passes only memory it means the driver to fill.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_kgsl_ioctl(fd: c_int, request: c_ulong, argp: *mut c_void) -> c_int {
    #[allow(clippy::useless_conversion)] // c_ulong is u32 on 32-bit targets
    match ioctl_fd(fd, u64::from(request), argp as u64) {
        Some(Ok(())) => 0,
        Some(Err(e)) => -e,
        None => -libc::EBADF,
    }
}

/// `wj_kgsl_mmap_fd`: the descriptor to `mmap` objects from (object `id` at
/// offset `id << 12`), which is `fd` itself, or `-EBADF`.
#[unsafe(no_mangle)]
pub extern "C" fn wj_kgsl_mmap_fd(fd: c_int) -> c_int {
    if is_device_fd(fd) { fd } else { -libc::EBADF }
}

/// `wj_kgsl_close`: releases the device and closes `fd`; 0 or `-errno` (EBADF
/// for a descriptor `wj_kgsl_open` did not return, which is left open).
#[unsafe(no_mangle)]
pub extern "C" fn wj_kgsl_close(fd: c_int) -> c_int {
    if !release_fd(fd) {
        return -libc::EBADF;
    }
    // SAFETY: closing the descriptor wj_kgsl_open handed out for this device.
    if unsafe { libc::close(fd) } == 0 {
        0
    } else {
        -last_errno(libc::EIO)
    }
}
