//! Host functions that compiled code calls for rare or complex work: pure
//! instructions it does not inline (through `semantics::eval_pure`), global-memory
//! translation and global atomics, and the atomic value rule.
//!
//! They are `extern "C"` and never panic: a failure is reported by the return
//! value and turned into the interpreter's fault on the Rust side.

use wavejit_ir::semantics::atomic::atomic_rmw;
use wavejit_ir::semantics::eval_pure;
use wavejit_ir::{AtomicOp, Inst};

use crate::abi::{BatchCtx, GcEntry};
use crate::host::HostCtx;
use crate::plan::const_bits;

/// Atomic operations in the order compiled code encodes them.
pub const ATOMIC_OPS: [AtomicOp; 13] = [
    AtomicOp::Add,
    AtomicOp::Sub,
    AtomicOp::MinU,
    AtomicOp::MinS,
    AtomicOp::MaxU,
    AtomicOp::MaxS,
    AtomicOp::And,
    AtomicOp::Or,
    AtomicOp::Xor,
    AtomicOp::Xchg,
    AtomicOp::CmpXchg,
    AtomicOp::IncWrap,
    AtomicOp::DecWrap,
];

pub fn atomic_code(op: AtomicOp) -> u32 {
    ATOMIC_OPS.iter().position(|&o| o == op).unwrap_or(0) as u32
}

fn atomic_op(code: u32) -> AtomicOp {
    ATOMIC_OPS
        .get(code as usize)
        .copied()
        .unwrap_or(AtomicOp::Add)
}

/// Most arguments and results of a pure instruction.
pub const PURE_MAX_ARGS: usize = 8;
pub const PURE_MAX_RESULTS: usize = 4;

/// Evaluates pure instruction `inst` for one lane: `args` holds its argument bits,
/// results go to `out`. Returns 0 when `eval_pure` refuses the instruction.
///
/// # Safety
/// `host` must be the live context of the running batch; `args` and `out` must
/// point to [`PURE_MAX_ARGS`] and [`PURE_MAX_RESULTS`] `u64`s.
pub unsafe extern "C" fn wj_pure(
    host: *const HostCtx<'static>,
    inst: u32,
    args: *const u64,
    out: *mut u64,
) -> u32 {
    // SAFETY: the caller passes the batch's live context and buffers.
    let (host, args, out) = unsafe {
        (
            &*host,
            std::slice::from_raw_parts(args, PURE_MAX_ARGS),
            std::slice::from_raw_parts_mut(out, PURE_MAX_RESULTS),
        )
    };
    let inst = Inst::from_u32(inst);
    let Some(data) = host.kernel.insts.get(inst) else {
        return 0;
    };
    let tys = &host.arg_tys[inst.as_u32() as usize];
    let (Some(args), Some(out)) = (args.get(..tys.len()), out.get_mut(..data.results.len())) else {
        return 0;
    };
    u32::from(eval_pure(&data.kind, tys, args, out))
}

/// The exact pass of vector run `run` of segment `seg` (see
/// `codegen::vector`) for the lanes listed at positions `pos .. min(pos +
/// width, n)`: every instruction through `semantics::eval_pure`, lane by lane,
/// each result written to the lane's slab slot. Returns 0 if `eval_pure`
/// refused an instruction (never for the instructions `plan::vector_op`
/// accepts).
///
/// # Safety
/// `host` must be the live context of the running batch, `list` must hold `n`
/// lane indices below `lanes`, and `regs` the batch's slab of `lanes` slots
/// per value.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn wj_vector_exact(
    host: *const HostCtx<'static>,
    seg: u32,
    run: u32,
    list: *const u32,
    pos: u32,
    n: u32,
    width: u32,
    regs: *mut u64,
    lanes: u64,
) -> u32 {
    // SAFETY: the caller passes the batch's live context, list and slab.
    let (host, list) = unsafe { (&*host, std::slice::from_raw_parts(list, n as usize)) };
    let Some(run) = host
        .plan
        .segments
        .get(seg as usize)
        .and_then(|s| s.runs.get(run as usize))
    else {
        return 0;
    };
    let kernel = host.kernel;
    let lanes = lanes as usize;
    let end = pos.saturating_add(width).min(n) as usize;
    let mut ok = true;
    for &lane in list.get(pos as usize..end).unwrap_or(&[]) {
        for &inst in &run.insts {
            let data = &kernel.insts[inst];
            let mut args = [0u64; PURE_MAX_ARGS];
            for (a, &v) in args.iter_mut().zip(&data.args) {
                *a = match const_bits(kernel, v) {
                    Some(bits) => bits,
                    // SAFETY: slot of value `v` of lane `lane` in the slab.
                    None => unsafe { regs.add(v.as_u32() as usize * lanes + lane as usize).read() },
                };
            }
            let mut out = [0u64; PURE_MAX_RESULTS];
            let tys = &host.arg_tys[inst.as_u32() as usize];
            let (Some(args), Some(out)) =
                (args.get(..tys.len()), out.get_mut(..data.results.len()))
            else {
                return 0;
            };
            ok &= eval_pure(&data.kind, tys, args, out);
            for (&r, &x) in data.results.iter().zip(out.iter()) {
                // SAFETY: as above.
                unsafe {
                    regs.add(r.as_u32() as usize * lanes + lane as usize)
                        .write(x)
                };
            }
        }
    }
    u32::from(ok)
}

/// Host address of `len` bytes at global address `addr` for reading (`write` 0)
/// or writing, or null when the access is refused. A region hit refreshes the
/// inline cache of access site `site`.
///
/// # Safety
/// `batch` must be the context of the running batch (its `host` live).
pub unsafe extern "C" fn wj_global_ptr(
    batch: *mut BatchCtx,
    addr: u64,
    len: u64,
    write: u32,
    site: u32,
) -> *mut u8 {
    // SAFETY: the caller passes the running batch's context.
    let batch = unsafe { &mut *batch };
    // SAFETY: `host` points to the runner's live `HostCtx`.
    let host = unsafe { &*batch.host.cast::<HostCtx<'static>>() };
    match host.global_ptr(addr, len, write != 0) {
        Some((p, region)) => {
            if let Some(r) = region {
                // SAFETY: `gc` holds an entry for every site of the kernel.
                let entry = unsafe { &mut *batch.gc.add(site as usize) };
                *entry = GcEntry::from(r);
            }
            p.as_ptr()
        }
        None => std::ptr::null_mut(),
    }
}

/// [`wj_global_ptr`] with the arguments `[batch, addr, len, write, site]` in
/// `args` (32-bit ones in the low half of their word) and the result written
/// over `args[0]`: the form `preserving::wj_call_preserving` calls.
///
/// # Safety
/// `args` must hold the five words, valid as [`wj_global_ptr`] requires.
#[cfg(target_arch = "x86_64")]
pub unsafe extern "C" fn wj_global_ptr_mem(args: *mut u64) {
    // SAFETY: the caller passes five argument words.
    let a = unsafe { std::slice::from_raw_parts_mut(args, 5) };
    // SAFETY: forwarded from the caller's contract.
    let p = unsafe { wj_global_ptr(a[0] as *mut BatchCtx, a[1], a[2], a[3] as u32, a[4] as u32) };
    a[0] = p as u64;
}

/// Global atomic of `bytes` (4 or 8) at `addr`; the old value goes to `*out`.
/// Returns 0 when the access is refused.
///
/// # Safety
/// `host` must be the live context of the running batch; `out` must be writable.
pub unsafe extern "C" fn wj_global_atomic(
    host: *const HostCtx<'static>,
    addr: u64,
    bytes: u32,
    op: u32,
    a: u64,
    b: u64,
    out: *mut u64,
) -> u32 {
    // SAFETY: the caller passes the batch's live context and a result slot.
    let host = unsafe { &*host };
    match host.memory.atomic(addr, bytes, atomic_op(op), a, b) {
        Ok(old) => {
            // SAFETY: see above.
            unsafe { out.write(old) };
            1
        }
        Err(_) => 0,
    }
}

/// The new value of an atomic (`semantics::atomic::atomic_rmw`), for shared memory.
pub extern "C" fn wj_rmw(op: u32, bytes: u32, old: u64, a: u64, b: u64) -> u64 {
    atomic_rmw(atomic_op(op), bytes, old, a, b)
}
