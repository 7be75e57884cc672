//! `libwavejit_kgsl.so`: load with `LD_PRELOAD` and `/dev/kgsl-3d0` is served by
//! wavejit. `open`/`openat` of that path return a descriptor of the fake driver
//! (the same table as `wj_kgsl_open` in `wavejit_runtime::kgsl::capi`, whose
//! `wj_*` functions this library also exports); `ioctl` on it goes to the
//! driver; `close` releases it; `stat`/`access` and their variants describe the
//! path as the character device it is on a phone. Every other path and
//! descriptor passes through to libc untouched, so the library is inert in
//! processes that never use the device.
//!
//! The client's own `mmap(fd, id << 12)` maps the driver's memfd pages, which is
//! why mmap needs no interposition (tinygrad calls it through a ctypes libc handle
//! that LD_PRELOAD cannot reach).

use std::ffi::{CStr, c_char, c_int, c_uint, c_ulong, c_void};
use std::sync::OnceLock;

// The wj_* functions this library exports are defined there too.
use wavejit_runtime::kgsl::capi as kgsl;

const DEVICE_PATH: &[u8] = b"/dev/kgsl-3d0";

/// Device number of the node. kgsl takes its major from `alloc_chrdev_region`
/// (`kgsl_core_init` in the msm kernel's drivers/gpu/msm/kgsl.c), so it differs
/// between kernels; 508 is in the range the kernel hands out dynamically
/// (fs/char_dev.c: 511 down to 384 once 254..234 are taken), as on recent
/// phones. The minor is the device index: 0 for kgsl-3d0.
const DEVICE_MAJOR: c_uint = 508;
const DEVICE_MINOR: c_uint = 0;
/// `crw-rw-rw-`: Android's ueventd.rc makes the node 0666 (system:system).
const DEVICE_MODE: libc::mode_t = libc::S_IFCHR | 0o666;

fn set_errno(e: c_int) {
    // SAFETY: __errno_location returns this thread's errno slot.
    unsafe { *libc::__errno_location() = e };
}

fn is_device_path(path: *const c_char) -> bool {
    // SAFETY: the contract of every interposed call: path is a NUL-terminated
    // string (or null, which libc rejects with EFAULT after we pass it on).
    !path.is_null() && unsafe { CStr::from_ptr(path) }.to_bytes() == DEVICE_PATH
}

/// The next definition of `name` after this library (libc's), looked up once.
/// `T` must be the function pointer type of `name`.
fn next<T: Copy>(cell: &OnceLock<usize>, name: &CStr) -> Option<T> {
    const { assert!(size_of::<T>() == size_of::<usize>()) };
    // SAFETY: dlsym with a valid C string.
    let p = *cell.get_or_init(|| unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) } as usize);
    // SAFETY: T is the function pointer type of `name`, the size of a pointer.
    (p != 0).then(|| unsafe { std::mem::transmute_copy::<usize, T>(&p) })
}

/// Calls libc's `$name` with the caller's arguments (ENOSYS if there is none).
macro_rules! forward {
    ($name:ident: fn($($arg:ident: $ty:ty),*) -> c_int) => {{
        static NEXT: OnceLock<usize> = OnceLock::new();
        type F = unsafe extern "C" fn($($ty),*) -> c_int;
        let cname = const {
            match CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes()) {
                Ok(c) => c,
                Err(_) => panic!("no NUL in an identifier"),
            }
        };
        match next::<F>(&NEXT, cname) {
            // SAFETY: forwarding the caller's arguments to libc's definition.
            Some(f) => unsafe { f($($arg),*) },
            None => {
                set_errno(libc::ENOSYS);
                -1
            }
        }
    }};
}

/// Opens a new device for `open`/`openat` of the path: a descriptor, or -1 with
/// errno.
fn open_device(flags: c_int) -> c_int {
    match kgsl::open_fd(flags & libc::O_CLOEXEC != 0) {
        Ok(fd) => fd,
        Err(e) => {
            set_errno(e);
            -1
        }
    }
}

/// # Safety
/// libc's `open` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn open(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    if is_device_path(path) {
        return open_device(flags);
    }
    forward!(open: fn(path: *const c_char, flags: c_int, mode: c_uint) -> c_int)
}

/// # Safety
/// libc's `open64` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn open64(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    if is_device_path(path) {
        return open_device(flags);
    }
    forward!(open64: fn(path: *const c_char, flags: c_int, mode: c_uint) -> c_int)
}

/// # Safety
/// libc's `openat` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn openat(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mode: c_uint,
) -> c_int {
    if is_device_path(path) {
        return open_device(flags);
    }
    forward!(openat: fn(dirfd: c_int, path: *const c_char, flags: c_int, mode: c_uint) -> c_int)
}

/// # Safety
/// libc's `openat64` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn openat64(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mode: c_uint,
) -> c_int {
    if is_device_path(path) {
        return open_device(flags);
    }
    forward!(openat64: fn(dirfd: c_int, path: *const c_char, flags: c_int, mode: c_uint) -> c_int)
}

/// # Safety
/// libc's `ioctl` contract (the third argument is the request's pointer).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ioctl(fd: c_int, request: c_ulong, arg: *mut c_void) -> c_int {
    #[allow(clippy::useless_conversion)] // c_ulong is u32 on 32-bit targets
    match kgsl::ioctl_fd(fd, u64::from(request), arg as u64) {
        Some(Ok(())) => 0,
        Some(Err(e)) => {
            set_errno(e);
            -1
        }
        None => forward!(ioctl: fn(fd: c_int, request: c_ulong, arg: *mut c_void) -> c_int),
    }
}

/// # Safety
/// libc's `close` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn close(fd: c_int) -> c_int {
    // Releasing the last handle drops the device (contexts, objects, memfd);
    // the client's mappings keep their pages alive until it unmaps them. The
    // drop closes the device's own descriptors through this very function.
    kgsl::release_fd(fd);
    forward!(close: fn(fd: c_int) -> c_int)
}

/// Fills `st` (a `stat` or `stat64`, which have the same fields) for the node.
macro_rules! device_stat {
    ($st:expr) => {{
        let st = $st;
        if st.is_null() {
            set_errno(libc::EFAULT);
            return -1;
        }
        // SAFETY: the caller's stat buffer, non-null per the check above and
        // writable per stat's contract. Zeroes are valid for every field.
        let st = unsafe {
            st.write(std::mem::zeroed());
            &mut *st
        };
        st.st_mode = DEVICE_MODE;
        st.st_nlink = 1;
        st.st_rdev = libc::makedev(DEVICE_MAJOR, DEVICE_MINOR);
        st.st_blksize = 4096;
        return 0;
    }};
}

/// # Safety
/// libc's `stat` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn stat(path: *const c_char, buf: *mut libc::stat) -> c_int {
    if is_device_path(path) {
        device_stat!(buf);
    }
    forward!(stat: fn(path: *const c_char, buf: *mut libc::stat) -> c_int)
}

/// # Safety
/// libc's `stat64` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn stat64(path: *const c_char, buf: *mut libc::stat64) -> c_int {
    if is_device_path(path) {
        device_stat!(buf);
    }
    forward!(stat64: fn(path: *const c_char, buf: *mut libc::stat64) -> c_int)
}

/// # Safety
/// libc's `lstat` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lstat(path: *const c_char, buf: *mut libc::stat) -> c_int {
    if is_device_path(path) {
        device_stat!(buf);
    }
    forward!(lstat: fn(path: *const c_char, buf: *mut libc::stat) -> c_int)
}

/// # Safety
/// libc's `lstat64` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lstat64(path: *const c_char, buf: *mut libc::stat64) -> c_int {
    if is_device_path(path) {
        device_stat!(buf);
    }
    forward!(lstat64: fn(path: *const c_char, buf: *mut libc::stat64) -> c_int)
}

/// # Safety
/// libc's `fstatat` contract (an absolute path ignores `dirfd`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fstatat(
    dirfd: c_int,
    path: *const c_char,
    buf: *mut libc::stat,
    flags: c_int,
) -> c_int {
    if is_device_path(path) {
        device_stat!(buf);
    }
    forward!(fstatat: fn(dirfd: c_int, path: *const c_char, buf: *mut libc::stat, flags: c_int) -> c_int)
}

/// # Safety
/// libc's `fstatat64` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fstatat64(
    dirfd: c_int,
    path: *const c_char,
    buf: *mut libc::stat64,
    flags: c_int,
) -> c_int {
    if is_device_path(path) {
        device_stat!(buf);
    }
    forward!(fstatat64: fn(dirfd: c_int, path: *const c_char, buf: *mut libc::stat64, flags: c_int) -> c_int)
}

// Programs built against glibc before 2.33 (Python from manylinux builds among
// them) call these instead of stat/lstat/fstatat: the headers inlined them.

/// # Safety
/// glibc's `__xstat` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __xstat(ver: c_int, path: *const c_char, buf: *mut libc::stat) -> c_int {
    if is_device_path(path) {
        device_stat!(buf);
    }
    forward!(__xstat: fn(ver: c_int, path: *const c_char, buf: *mut libc::stat) -> c_int)
}

/// # Safety
/// glibc's `__xstat64` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __xstat64(
    ver: c_int,
    path: *const c_char,
    buf: *mut libc::stat64,
) -> c_int {
    if is_device_path(path) {
        device_stat!(buf);
    }
    forward!(__xstat64: fn(ver: c_int, path: *const c_char, buf: *mut libc::stat64) -> c_int)
}

/// # Safety
/// glibc's `__lxstat` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __lxstat(ver: c_int, path: *const c_char, buf: *mut libc::stat) -> c_int {
    if is_device_path(path) {
        device_stat!(buf);
    }
    forward!(__lxstat: fn(ver: c_int, path: *const c_char, buf: *mut libc::stat) -> c_int)
}

/// # Safety
/// glibc's `__lxstat64` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __lxstat64(
    ver: c_int,
    path: *const c_char,
    buf: *mut libc::stat64,
) -> c_int {
    if is_device_path(path) {
        device_stat!(buf);
    }
    forward!(__lxstat64: fn(ver: c_int, path: *const c_char, buf: *mut libc::stat64) -> c_int)
}

/// # Safety
/// glibc's `__fxstatat` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __fxstatat(
    ver: c_int,
    dirfd: c_int,
    path: *const c_char,
    buf: *mut libc::stat,
    flags: c_int,
) -> c_int {
    if is_device_path(path) {
        device_stat!(buf);
    }
    forward!(__fxstatat: fn(ver: c_int, dirfd: c_int, path: *const c_char, buf: *mut libc::stat, flags: c_int) -> c_int)
}

/// # Safety
/// glibc's `__fxstatat64` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __fxstatat64(
    ver: c_int,
    dirfd: c_int,
    path: *const c_char,
    buf: *mut libc::stat64,
    flags: c_int,
) -> c_int {
    if is_device_path(path) {
        device_stat!(buf);
    }
    forward!(__fxstatat64: fn(ver: c_int, dirfd: c_int, path: *const c_char, buf: *mut libc::stat64, flags: c_int) -> c_int)
}

/// # Safety
/// glibc's `statx` contract. Called directly by newer tools and by Rust's std.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn statx(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mask: c_uint,
    buf: *mut libc::statx,
) -> c_int {
    if is_device_path(path) {
        if buf.is_null() {
            set_errno(libc::EFAULT);
            return -1;
        }
        // SAFETY: the caller's statx buffer, non-null and writable per statx's
        // contract; zeroes are valid for every field.
        let st = unsafe {
            buf.write(std::mem::zeroed());
            &mut *buf
        };
        // What is filled in; times and inode number are not.
        st.stx_mask = libc::STATX_TYPE
            | libc::STATX_MODE
            | libc::STATX_NLINK
            | libc::STATX_UID
            | libc::STATX_GID
            | libc::STATX_SIZE
            | libc::STATX_BLOCKS;
        st.stx_mode = DEVICE_MODE as u16;
        st.stx_nlink = 1;
        st.stx_blksize = 4096;
        st.stx_rdev_major = DEVICE_MAJOR;
        st.stx_rdev_minor = DEVICE_MINOR;
        return 0;
    }
    forward!(statx: fn(dirfd: c_int, path: *const c_char, flags: c_int, mask: c_uint, buf: *mut libc::statx) -> c_int)
}

/// `access` on the node: read and write are granted to everyone (0666), execute
/// to no one, as the kernel decides for a node without execute bits (root too).
fn device_access(mode: c_int) -> c_int {
    if mode & !(libc::R_OK | libc::W_OK | libc::X_OK) != 0 {
        set_errno(libc::EINVAL);
        -1
    } else if mode & libc::X_OK != 0 {
        set_errno(libc::EACCES);
        -1
    } else {
        0
    }
}

/// # Safety
/// libc's `access` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn access(path: *const c_char, mode: c_int) -> c_int {
    if is_device_path(path) {
        return device_access(mode);
    }
    forward!(access: fn(path: *const c_char, mode: c_int) -> c_int)
}

/// # Safety
/// libc's `faccessat` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn faccessat(
    dirfd: c_int,
    path: *const c_char,
    mode: c_int,
    flags: c_int,
) -> c_int {
    if is_device_path(path) {
        return device_access(mode);
    }
    forward!(faccessat: fn(dirfd: c_int, path: *const c_char, mode: c_int, flags: c_int) -> c_int)
}
