//! `libwavejit_kgsl.so`: load with `LD_PRELOAD` and `/dev/kgsl-3d0` is served by
//! wavejit. `open`/`openat` of that path return a memfd-backed descriptor owned by
//! the fake driver; `ioctl` on it goes to the driver; `close` releases it. Every
//! other descriptor passes through to libc untouched, so the library is inert in
//! processes that never open the device.
//!
//! The client's own `mmap(fd, id << 12)` maps the driver's memfd pages, which is
//! why mmap needs no interposition (tinygrad calls it through a ctypes libc handle
//! that LD_PRELOAD cannot reach).

use std::collections::BTreeMap;
use std::ffi::{CStr, c_char, c_int, c_uint, c_ulong, c_void};
use std::sync::{Arc, Mutex, OnceLock};

use wavejit_runtime::kgsl::{self, KgslDevice};

const DEVICE_PATH: &[u8] = b"/dev/kgsl-3d0";

type OpenFn = unsafe extern "C" fn(*const c_char, c_int, c_uint) -> c_int;
type OpenatFn = unsafe extern "C" fn(c_int, *const c_char, c_int, c_uint) -> c_int;
type IoctlFn = unsafe extern "C" fn(c_int, c_ulong, *mut c_void) -> c_int;
type CloseFn = unsafe extern "C" fn(c_int) -> c_int;

/// Descriptors handed out for the device, each with the device it reaches.
fn devices() -> &'static Mutex<BTreeMap<c_int, Arc<Mutex<KgslDevice>>>> {
    static DEVICES: OnceLock<Mutex<BTreeMap<c_int, Arc<Mutex<KgslDevice>>>>> = OnceLock::new();
    DEVICES.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// The next definition of `name` after this library (libc's).
fn next<T: Copy>(name: &CStr) -> Option<T> {
    // SAFETY: dlsym with a valid C string; the caller names a function whose
    // type is T.
    let p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) };
    if p.is_null() {
        None
    } else {
        // SAFETY: T is a function pointer type of the same size as *mut c_void.
        Some(unsafe { std::mem::transmute_copy::<*mut c_void, T>(&p) })
    }
}

/// The 32-bit request number of an ioctl (glibc passes it as `unsigned long`).
#[allow(clippy::useless_conversion)] // c_ulong is u32 on 32-bit targets
fn request_number(request: c_ulong) -> u64 {
    u64::from(request) & 0xffff_ffff
}

fn set_errno(e: c_int) {
    // SAFETY: __errno_location returns this thread's errno slot.
    unsafe { *libc::__errno_location() = e };
}

fn is_device_path(path: *const c_char) -> bool {
    // SAFETY: open's contract: path is a NUL-terminated string (or null).
    !path.is_null() && unsafe { CStr::from_ptr(path) }.to_bytes() == DEVICE_PATH
}

/// Opens a new device and returns a descriptor for the client.
fn open_device() -> c_int {
    let dev = match KgslDevice::new(kgsl::compute_unit()) {
        Ok(d) => d,
        Err(e) => {
            set_errno(e.raw_os_error().unwrap_or(libc::ENODEV));
            return -1;
        }
    };
    // SAFETY: dup of the device's own memfd.
    let fd = unsafe { libc::dup(dev.memfd()) };
    if fd < 0 {
        return -1;
    }
    devices()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(fd, Arc::new(Mutex::new(dev)));
    fd
}

fn device_of(fd: c_int) -> Option<Arc<Mutex<KgslDevice>>> {
    devices()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&fd)
        .cloned()
}

/// # Safety
/// libc's `open` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn open(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    if is_device_path(path) {
        return open_device();
    }
    match next::<OpenFn>(c"open") {
        // SAFETY: forwarding the caller's arguments to libc.
        Some(f) => unsafe { f(path, flags, mode) },
        None => {
            set_errno(libc::ENOSYS);
            -1
        }
    }
}

/// # Safety
/// libc's `open64` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn open64(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    if is_device_path(path) {
        return open_device();
    }
    match next::<OpenFn>(c"open64") {
        // SAFETY: forwarding.
        Some(f) => unsafe { f(path, flags, mode) },
        None => {
            set_errno(libc::ENOSYS);
            -1
        }
    }
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
        return open_device();
    }
    match next::<OpenatFn>(c"openat") {
        // SAFETY: forwarding.
        Some(f) => unsafe { f(dirfd, path, flags, mode) },
        None => {
            set_errno(libc::ENOSYS);
            -1
        }
    }
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
        return open_device();
    }
    match next::<OpenatFn>(c"openat64") {
        // SAFETY: forwarding.
        Some(f) => unsafe { f(dirfd, path, flags, mode) },
        None => {
            set_errno(libc::ENOSYS);
            -1
        }
    }
}

/// # Safety
/// libc's `ioctl` contract (the third argument is the request's pointer).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ioctl(fd: c_int, request: c_ulong, arg: *mut c_void) -> c_int {
    if let Some(dev) = device_of(fd) {
        let mut dev = dev.lock().unwrap_or_else(|e| e.into_inner());
        return match dev.ioctl(request_number(request), arg as u64) {
            Ok(()) => 0,
            Err(e) => {
                set_errno(e);
                -1
            }
        };
    }
    match next::<IoctlFn>(c"ioctl") {
        // SAFETY: forwarding.
        Some(f) => unsafe { f(fd, request, arg) },
        None => {
            set_errno(libc::ENOSYS);
            -1
        }
    }
}

/// # Safety
/// libc's `close` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn close(fd: c_int) -> c_int {
    // Dropping the last handle releases the device (contexts, objects, memfd);
    // the client's mappings keep their pages alive until it unmaps them. The
    // drop closes the device's own descriptors through this very function, so it
    // must happen after the table lock is released (the lock is not reentrant).
    let released = devices()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&fd);
    drop(released);
    match next::<CloseFn>(c"close") {
        // SAFETY: forwarding.
        Some(f) => unsafe { f(fd) },
        None => {
            set_errno(libc::ENOSYS);
            -1
        }
    }
}

/// An embedded driver instance for programs that link wavejit instead of
/// preloading it (see `runtime/include/wavejit_kgsl.h`).
pub struct WjKgsl {
    dev: Mutex<KgslDevice>,
}

/// Opens a new embedded a630 device; null on failure (errno set).
#[unsafe(no_mangle)]
pub extern "C" fn wj_kgsl_open() -> *mut WjKgsl {
    match KgslDevice::new(kgsl::compute_unit()) {
        Ok(dev) => Box::into_raw(Box::new(WjKgsl {
            dev: Mutex::new(dev),
        })),
        Err(e) => {
            set_errno(e.raw_os_error().unwrap_or(libc::ENODEV));
            std::ptr::null_mut()
        }
    }
}

/// Runs one KGSL ioctl; returns 0 or a negative errno (as the kernel would).
///
/// # Safety
/// `handle` comes from `wj_kgsl_open` and is not closed; `argp` points to the
/// request's argument struct.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_kgsl_ioctl(
    handle: *mut WjKgsl,
    request: c_ulong,
    argp: *mut c_void,
) -> c_int {
    // SAFETY: the caller passes a live handle (or null, refused here).
    let Some(h) = (unsafe { handle.as_ref() }) else {
        return -libc::EBADF;
    };
    let mut dev = h.dev.lock().unwrap_or_else(|e| e.into_inner());
    match dev.ioctl(request_number(request), argp as u64) {
        Ok(()) => 0,
        Err(e) => -e,
    }
}

/// The descriptor to `mmap` objects from: object `id` lives at offset `id << 12`.
/// Owned by the handle; do not close it.
///
/// # Safety
/// `handle` comes from `wj_kgsl_open` and is not closed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_kgsl_mmap_fd(handle: *mut WjKgsl) -> c_int {
    // SAFETY: as above.
    match unsafe { handle.as_ref() } {
        Some(h) => h.dev.lock().unwrap_or_else(|e| e.into_inner()).memfd(),
        None => -libc::EBADF,
    }
}

/// Releases the device (contexts, objects); existing mappings stay valid until
/// unmapped.
///
/// # Safety
/// `handle` comes from `wj_kgsl_open` and is not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_kgsl_close(handle: *mut WjKgsl) {
    if !handle.is_null() {
        // SAFETY: the handle was made by Box::into_raw in wj_kgsl_open.
        drop(unsafe { Box::from_raw(handle) });
    }
}
