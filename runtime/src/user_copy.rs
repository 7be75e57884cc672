//! copy_from_user / copy_to_user for in-process drivers (KGSL ioctls, AQL code
//! object registration): pointers a client passes are checked by the kernel
//! (process_vm_readv/writev on our own pid), so a bad pointer becomes EFAULT
//! exactly as with the real driver, never a crash.

use std::mem::{MaybeUninit, size_of};

fn iov(ptr: *mut u8, len: usize) -> libc::iovec {
    libc::iovec {
        iov_base: ptr.cast(),
        iov_len: len,
    }
}

/// Copies `buf.len()` bytes from client address `addr`.
pub fn read_bytes(addr: u64, buf: &mut [u8]) -> Result<(), i32> {
    if buf.is_empty() {
        return Ok(());
    }
    let local = iov(buf.as_mut_ptr(), buf.len());
    let remote = iov(addr as *mut u8, buf.len());
    // SAFETY: the kernel validates the remote range; the local one is our buffer.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n == buf.len() as isize {
        Ok(())
    } else {
        Err(libc::EFAULT)
    }
}

/// Copies `data` to client address `addr`.
pub fn write_bytes(addr: u64, data: &[u8]) -> Result<(), i32> {
    if data.is_empty() {
        return Ok(());
    }
    let local = iov(data.as_ptr().cast_mut(), data.len());
    let remote = iov(addr as *mut u8, data.len());
    // SAFETY: as above; the kernel only reads from `local`.
    let n = unsafe { libc::process_vm_writev(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n == data.len() as isize {
        Ok(())
    } else {
        Err(libc::EFAULT)
    }
}

/// Marker for plain-old-data uapi structs (any bit pattern is valid).
///
/// # Safety
/// Implementors must be `repr(C)` structs of integers only.
pub unsafe trait Pod: Copy + Default {}

/// Reads a struct from client memory.
pub fn read<T: Pod>(addr: u64) -> Result<T, i32> {
    let mut v = MaybeUninit::<T>::zeroed();
    // SAFETY: T is Pod, so its bytes may be written arbitrarily.
    let bytes =
        unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), size_of::<T>()) };
    read_bytes(addr, bytes)?;
    // SAFETY: zeroed then filled; every bit pattern is a valid T.
    Ok(unsafe { v.assume_init() })
}

/// Writes a struct to client memory.
pub fn write<T: Pod>(addr: u64, v: &T) -> Result<(), i32> {
    // SAFETY: T is Pod (repr(C) integers): its bytes are initialised... except
    // padding, which our uapi structs make explicit fields.
    let bytes = unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), size_of::<T>()) };
    write_bytes(addr, bytes)
}
