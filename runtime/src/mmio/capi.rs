//! C ABI of the MMIO device (`runtime/include/wavejit_mmio.h`). Every function
//! accepts a null handle (reads 0 / does nothing) and never unwinds into C.

use std::ffi::c_char;

use super::device::{DeviceConfig, GpgpuDevice};

/// Opaque handle for C.
pub struct WjMmioDevice {
    dev: GpgpuDevice,
}

/// Creates a device with `vram_size` bytes of VRAM (0: 64 MiB). Returns null if
/// the size is not a power of two or the allocation fails.
#[unsafe(no_mangle)]
pub extern "C" fn wj_mmio_new(vram_size: u64) -> *mut WjMmioDevice {
    new_device(vram_size, None)
}

/// As `wj_mmio_new`, with a JIT that runs a large dispatch on `jit_threads`
/// threads, the DISPATCH writer's included (1 to `MAX_JIT_THREADS`; 0 or more
/// returns null, as a bad VRAM size does).
#[unsafe(no_mangle)]
pub extern "C" fn wj_mmio_new_threads(vram_size: u64, jit_threads: u32) -> *mut WjMmioDevice {
    new_device(vram_size, Some(jit_threads as usize))
}

fn new_device(vram_size: u64, jit_threads: Option<usize>) -> *mut WjMmioDevice {
    let mut cfg = DeviceConfig {
        jit_threads,
        ..DeviceConfig::default()
    };
    if vram_size != 0 {
        cfg.vram_size = vram_size;
    }
    match std::panic::catch_unwind(|| GpgpuDevice::new(cfg)) {
        Ok(Ok(dev)) => Box::into_raw(Box::new(WjMmioDevice { dev })),
        _ => std::ptr::null_mut(),
    }
}

/// Destroys a device made by `wj_mmio_new`.
///
/// # Safety
/// `dev` is null or a handle from `wj_mmio_new` not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_mmio_free(dev: *mut WjMmioDevice) {
    if !dev.is_null() {
        // SAFETY: the caller passes a live handle from Box::into_raw.
        drop(unsafe { Box::from_raw(dev) });
    }
}

/// Reads `size` bytes (1, 2, 4, 8) of BAR `bar` at `offset`.
///
/// # Safety
/// `dev` is null or a live handle, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_mmio_read(
    dev: *const WjMmioDevice,
    bar: u32,
    offset: u64,
    size: u32,
) -> u64 {
    // SAFETY: per the contract, null or live.
    let Some(d) = (unsafe { dev.as_ref() }) else {
        return 0;
    };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        d.dev.mmio_read(bar, offset, size)
    }))
    .unwrap_or(0)
}

/// Writes `size` bytes of `value` to BAR `bar` at `offset` (a DISPATCH write
/// returns when the kernel has finished).
///
/// # Safety
/// `dev` is null or a live handle, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_mmio_write(
    dev: *mut WjMmioDevice,
    bar: u32,
    offset: u64,
    size: u32,
    value: u64,
) {
    // SAFETY: per the contract, null or live and exclusive.
    let Some(d) = (unsafe { dev.as_mut() }) else {
        return;
    };
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        d.dev.mmio_write(bar, offset, size, value)
    }));
}

/// Bus reset: registers to reset values, VRAM zeroed.
///
/// # Safety
/// `dev` is null or a live handle, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_mmio_reset(dev: *mut WjMmioDevice) {
    // SAFETY: per the contract.
    if let Some(d) = unsafe { dev.as_mut() } {
        d.dev.device_reset();
    }
}

/// Pending MSI-X vectors (bit n = vector n).
///
/// # Safety
/// `dev` is null or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_mmio_irq_pending(dev: *const WjMmioDevice) -> u32 {
    // SAFETY: per the contract.
    unsafe { dev.as_ref() }.map_or(0, |d| d.dev.irq_pending())
}

/// Writes the last kernel fault as a NUL-terminated message into `buf` (at most
/// `len` bytes, truncated). Returns the message length without NUL, 0 if the
/// last dispatch did not fault.
///
/// # Safety
/// `dev` is null or a live handle; `buf` is null or points to `len` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_mmio_last_fault(
    dev: *const WjMmioDevice,
    buf: *mut c_char,
    len: usize,
) -> usize {
    // SAFETY: per the contract.
    let Some(d) = (unsafe { dev.as_ref() }) else {
        return 0;
    };
    let Some(f) = d.dev.last_fault() else {
        return 0;
    };
    let msg = f.to_string();
    if !buf.is_null() && len > 0 {
        let n = msg.len().min(len - 1);
        // SAFETY: buf has len >= n + 1 writable bytes per the contract.
        unsafe {
            std::ptr::copy_nonoverlapping(msg.as_ptr(), buf.cast::<u8>(), n);
            *buf.add(n) = 0;
        }
    }
    msg.len()
}
