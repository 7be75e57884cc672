//! Atomic read-modify-write: the value rule (`atomic_rmw`) and its application to
//! host memory with real host atomics (`host_atomic`).

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::inst::AtomicOp;

/// The new value an atomic stores, given the old one. `a` is the operand (the
/// expected value for `CmpXchg`), `b` the new value for `CmpXchg`. Values are
/// `bytes` wide (4 or 8) in the low bits.
pub fn atomic_rmw(op: AtomicOp, bytes: u32, old: u64, a: u64, b: u64) -> u64 {
    let mask = if bytes == 8 {
        u64::MAX
    } else {
        u64::from(u32::MAX)
    };
    let sext = |v: u64| -> i64 {
        if bytes == 8 {
            v as i64
        } else {
            i64::from(v as u32 as i32)
        }
    };
    let (old, a, b) = (old & mask, a & mask, b & mask);
    let new = match op {
        AtomicOp::Add => old.wrapping_add(a),
        AtomicOp::Sub => old.wrapping_sub(a),
        AtomicOp::MinU => old.min(a),
        AtomicOp::MaxU => old.max(a),
        AtomicOp::MinS => sext(old).min(sext(a)) as u64,
        AtomicOp::MaxS => sext(old).max(sext(a)) as u64,
        AtomicOp::And => old & a,
        AtomicOp::Or => old | a,
        AtomicOp::Xor => old ^ a,
        AtomicOp::Xchg => a,
        AtomicOp::CmpXchg => {
            if old == a {
                b
            } else {
                old
            }
        }
        AtomicOp::IncWrap => {
            if old >= a {
                0
            } else {
                old + 1
            }
        }
        AtomicOp::DecWrap => {
            if old == 0 || old > a {
                a
            } else {
                old - 1
            }
        }
    };
    new & mask
}

/// Applies an atomic to host memory at `p` (aligned to `bytes`, 4 or 8) and
/// returns the old value.
pub fn host_atomic(p: NonNull<u8>, bytes: u32, op: AtomicOp, a: u64, b: u64) -> u64 {
    if bytes == 8 {
        // SAFETY: the caller's translate() vouched for 8 live bytes at an 8-aligned address.
        let cell = unsafe { AtomicU64::from_ptr(p.as_ptr().cast()) };
        let mut old = cell.load(Ordering::SeqCst);
        loop {
            let new = atomic_rmw(op, 8, old, a, b);
            match cell.compare_exchange_weak(old, new, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => return old,
                Err(seen) => old = seen,
            }
        }
    } else {
        // SAFETY: as above for 4 bytes at a 4-aligned address.
        let cell = unsafe { AtomicU32::from_ptr(p.as_ptr().cast()) };
        let mut old = cell.load(Ordering::SeqCst);
        loop {
            let new = atomic_rmw(op, 4, u64::from(old), a, b) as u32;
            match cell.compare_exchange_weak(old, new, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => return u64::from(old),
                Err(seen) => old = seen,
            }
        }
    }
}
