//! Host functions gang code calls for what it does not inline: pure
//! instructions lane by lane through `semantics::eval_pure`, memory accesses
//! through the interpreter's `LaneMemory` (so their checks and faults are the
//! interpreter's by construction), cross-lane instructions through
//! `semantics::wave::eval_wave`, and watchdog faults.
//!
//! Operands travel in a scratch buffer: operand `j` (arguments, then results)
//! at `j * chunk * 8` bytes, lane `k` of the chunk at `4 * k` for 32-bit gang
//! forms and `8 * k` for 64-bit ones, as the IR's bits. `mask` holds one word
//! per lane of the chunk starting at batch lane `lane0`, nonzero for active
//! lanes. They never panic; a faulting lane gets its fault recorded, its pc
//! set dead and its mask word cleared (compiled code reads the mask again).

use wavejit_ir::interp::LaneMemory;
use wavejit_ir::semantics::eval_pure;
use wavejit_ir::semantics::wave::eval_wave;
use wavejit_ir::{AddrSpace, Inst, InstData, InstKind, Type};

use super::abi::{GangCtx, PARKED, PC_DEAD, WATCHDOG_FAULT};
use super::host::{GangHost, slot_of};
use crate::abi::GcEntry;
use crate::helpers::{PURE_MAX_ARGS, PURE_MAX_RESULTS};

/// Whether values of `ty` are 64-bit lanes in gang code.
pub fn wide(ty: Type) -> bool {
    ty.bits() == 64
}

/// Lane `k` of operand `j` in a scratch buffer.
///
/// # Safety
/// `buf` must hold operand `j` for `chunk` lanes.
unsafe fn get(buf: *const u8, chunk: usize, j: usize, ty: Type, k: usize) -> u64 {
    // SAFETY: within operand j's area, as the caller promises.
    unsafe {
        let area = buf.add(j * chunk * 8);
        if wide(ty) {
            area.cast::<u64>().add(k).read_unaligned()
        } else {
            u64::from(area.cast::<u32>().add(k).read_unaligned())
        }
    }
}

/// Sets lane `k` of operand `j` (see [`get`]).
///
/// # Safety
/// As for [`get`], writable.
unsafe fn set(buf: *mut u8, chunk: usize, j: usize, ty: Type, k: usize, x: u64) {
    // SAFETY: within operand j's area, as the caller promises.
    unsafe {
        let area = buf.add(j * chunk * 8);
        if wide(ty) {
            area.cast::<u64>().add(k).write_unaligned(x)
        } else {
            area.cast::<u32>().add(k).write_unaligned(x as u32)
        }
    }
}

/// The memory batch lane `lane` sees, with the interpreter's checks.
///
/// # Safety
/// `ctx` must be the running batch's context and `lane` one of its lanes:
/// its slot's shared memory and its private memory belong to this thread
/// while the helper runs.
unsafe fn lane_memory<'m>(
    ctx: &GangCtx,
    host: &'m GangHost<'_>,
    lane: usize,
    uniforms: &'m [u8],
) -> LaneMemory<'m> {
    let slot = slot_of(host, lane);
    // SAFETY: every slot has `shared_bytes` of shared memory and every lane
    // `private_bytes` of private memory (the batch's buffers).
    let (shared, private) = unsafe {
        (
            std::slice::from_raw_parts_mut(
                ctx.shared.add(slot).read() as *mut u8,
                host.shared_bytes,
            ),
            std::slice::from_raw_parts_mut(
                ctx.private.add(lane * host.private_bytes),
                host.private_bytes,
            ),
        )
    };
    LaneMemory {
        global: host.hc.memory,
        uniforms,
        shared,
        private,
    }
}

/// Records a fault of batch lane `lane` and stops it.
///
/// # Safety
/// `ctx` must be the running batch's context and `lane` one of its lanes.
unsafe fn fault(ctx: &mut GangCtx, lane: usize, code: u32, addr: u64) {
    // SAFETY: the per-lane arrays hold every lane of the batch.
    unsafe {
        ctx.fault.add(lane).write(code);
        ctx.fault_addr.add(lane).write(addr);
        ctx.pc.add(lane).write(PC_DEAD);
    }
    ctx.faulted = 1;
}

/// The active lanes of a chunk, in increasing order.
///
/// # Safety
/// `mask` must hold `chunk` words.
unsafe fn active(mask: *const u32, chunk: usize) -> impl Iterator<Item = usize> {
    // SAFETY: as the caller promises.
    (0..chunk).filter(move |&k| unsafe { mask.add(k).read() } != 0)
}

/// Clears lane `k` of the chunk's mask.
///
/// # Safety
/// `mask` must hold more than `k` words.
unsafe fn drop_lane(mask: *mut u32, k: usize) {
    // SAFETY: as the caller promises.
    unsafe { mask.add(k).write(0) }
}

/// The batch context, the runner's host context, and instruction `inst` with
/// its argument types (`None` for an unknown instruction).
///
/// # Safety
/// `ctx` must be the running batch's context; the references live while the
/// helper that asks runs.
unsafe fn enter<'h>(
    ctx: *mut GangCtx,
    inst: u32,
) -> Option<(&'h mut GangCtx, &'h GangHost<'h>, &'h InstData, &'h [Type])> {
    // SAFETY: the caller passes the batch's live context.
    let ctx = unsafe { &mut *ctx };
    // SAFETY: `host` points to the runner's live `GangHost`.
    let host = unsafe { &*ctx.host.cast::<GangHost<'h>>() };
    let data = host.hc.kernel.insts.get(Inst::from_u32(inst))?;
    let tys = host.hc.arg_tys.get(inst as usize)?;
    Some((ctx, host, data, tys))
}

/// Pure instruction `inst` for the active lanes of a chunk. Returns nonzero if
/// some lane faulted (`eval_pure` refused it).
///
/// # Safety
/// `ctx` must be the running batch's context and `buf` a scratch buffer with
/// the instruction's arguments and room for its results.
pub unsafe extern "C" fn wj_gang_pure(
    ctx: *mut GangCtx,
    inst: u32,
    lane0: u32,
    mask: *mut u32,
    buf: *mut u8,
) -> u32 {
    // Compiled code may have switched the hardware flush on.
    let _ieee = wavejit_ir::host_float_env::Ieee::enter();
    // SAFETY: forwarded from the caller's contract.
    let Some((ctx, host, data, tys)) = (unsafe { enter(ctx, inst) }) else {
        return 0;
    };
    let kernel = host.hc.kernel;
    let inst = Inst::from_u32(inst);
    let (na, nr) = (data.args.len(), data.results.len());
    if na > PURE_MAX_ARGS || nr > PURE_MAX_RESULTS {
        return 0;
    }
    let chunk = host.chunk;
    let mut bad = 0;
    // SAFETY: the mask covers the chunk.
    for k in unsafe { active(mask, chunk) } {
        let mut args = [0u64; PURE_MAX_ARGS];
        let mut out = [0u64; PURE_MAX_RESULTS];
        for (j, (a, &ty)) in args.iter_mut().zip(tys).enumerate() {
            // SAFETY: argument j is in the buffer.
            *a = unsafe { get(buf, chunk, j, ty, k) };
        }
        if eval_pure(&data.kind, tys, &args[..na], &mut out[..nr]) {
            for (r, (&v, &x)) in data.results.iter().zip(&out).enumerate() {
                // SAFETY: result r follows the arguments.
                unsafe { set(buf, chunk, na + r, kernel.value_type(v), k, x) };
            }
        } else {
            bad |= 1 << k;
            // SAFETY: lane0 + k is a lane of the batch, k one of the mask's.
            unsafe {
                fault(ctx, lane0 as usize + k, inst.as_u32(), 0);
                drop_lane(mask, k);
            }
        }
    }
    bad
}

/// Load, store or atomic `inst` for the active lanes of a chunk, lane by lane
/// in increasing order, with the interpreter's checks. Returns nonzero if some
/// lane faulted.
///
/// # Safety
/// As for [`wj_gang_pure`].
pub unsafe extern "C" fn wj_gang_access(
    ctx: *mut GangCtx,
    inst: u32,
    lane0: u32,
    mask: *mut u32,
    buf: *mut u8,
) -> u32 {
    // Compiled code may have switched the hardware flush on.
    let _ieee = wavejit_ir::host_float_env::Ieee::enter();
    // SAFETY: forwarded from the caller's contract.
    let Some((ctx, host, data, tys)) = (unsafe { enter(ctx, inst) }) else {
        return 0;
    };
    let kernel = host.hc.kernel;
    let inst_id = Inst::from_u32(inst);
    let chunk = host.chunk;
    let na = data.args.len();
    // SAFETY: the uniforms are the dispatch's.
    let uniforms = unsafe { std::slice::from_raw_parts(ctx.uniforms, ctx.uniforms_len as usize) };
    let mut bad = 0;
    let mut served = None;
    // SAFETY: the mask covers the chunk.
    for k in unsafe { active(mask, chunk) } {
        let lane = lane0 as usize + k;
        // SAFETY: `lane` is a lane of the running batch.
        let mut mem = unsafe { lane_memory(ctx, host, lane, uniforms) };
        // SAFETY: the arguments are in the buffer.
        let arg = |j: usize| unsafe { get(buf, chunk, j, tys[j], k) };
        let addr = arg(0);
        let (result, site) = match &data.kind {
            InstKind::Load(a) => {
                let mut out = [0u64; 4];
                let n = data.results.len().min(4);
                let r = mem.load(a, addr, &mut out[..n]);
                if r.is_ok() {
                    for (j, (&v, &x)) in data.results.iter().zip(&out).enumerate() {
                        // SAFETY: result j follows the arguments.
                        unsafe { set(buf, chunk, na + j, kernel.value_type(v), k, x) };
                    }
                }
                (
                    r,
                    (a.space == AddrSpace::Global).then_some((a.total_bytes(), false)),
                )
            }
            InstKind::Store(a) => {
                let mut vals = [0u64; 4];
                let n = (na - 1).min(4);
                for (j, v) in vals[..n].iter_mut().enumerate() {
                    *v = arg(1 + j);
                }
                let r = mem.store(a, addr, &vals[..n]);
                (
                    r,
                    (a.space == AddrSpace::Global).then_some((a.total_bytes(), true)),
                )
            }
            InstKind::Atomic { space, op, ty } => {
                let b = if na > 2 { arg(2) } else { 0 };
                let r = mem.atomic(*space, *op, *ty, addr, arg(1), b).map(|old| {
                    if let Some(&v) = data.results.first() {
                        // SAFETY: the result follows the arguments.
                        unsafe { set(buf, chunk, na, kernel.value_type(v), k, old) };
                    }
                });
                (r, None)
            }
            _ => return 0,
        };
        match result {
            Ok(()) => {
                if let Some((size, write)) = site {
                    served = Some((addr, size, write));
                }
            }
            Err(_) => {
                bad |= 1 << k;
                let addr = match &data.kind {
                    InstKind::Load(a) | InstKind::Store(a) if a.space != AddrSpace::Global => {
                        addr & 0xffff_ffff
                    }
                    InstKind::Atomic { space, .. } if *space != AddrSpace::Global => {
                        addr & 0xffff_ffff
                    }
                    _ => addr,
                };
                // SAFETY: `lane` is a lane of the batch, k one of the mask's.
                unsafe {
                    fault(ctx, lane, inst, addr);
                    drop_lane(mask, k);
                }
            }
        }
    }
    // Once per chunk: the site's inline cache gets the region of the last
    // access served, so the next chunk of a contiguous access finds it
    // without this helper.
    if let Some((addr, size, write)) = served
        && let Some((_, Some(r))) = host.hc.global_ptr(addr, u64::from(size), write)
    {
        let s = host.hc.plan.gc_site[inst_id] as usize;
        // SAFETY: `gc` holds an entry for every global site.
        unsafe { ctx.gc.add(s).write(GcEntry::from(r)) };
    }
    bad
}

/// Watchdog faults of the lanes set in `mask` (of the chunk at `lane0`),
/// entering block `block`.
///
/// # Safety
/// `ctx` must be the running batch's context.
pub unsafe extern "C" fn wj_gang_watchdog(
    ctx: *mut GangCtx,
    lane0: u32,
    mask: *mut u32,
    block: u32,
) {
    // Compiled code may have switched the hardware flush on.
    let _ieee = wavejit_ir::host_float_env::Ieee::enter();
    // SAFETY: the caller passes the batch's live context.
    let ctx = unsafe { &mut *ctx };
    // SAFETY: `host` points to the runner's live `GangHost`.
    let chunk = unsafe { &*ctx.host.cast::<GangHost<'static>>() }.chunk;
    // SAFETY: the mask covers the chunk.
    for k in unsafe { active(mask, chunk) } {
        // SAFETY: lane0 + k is a lane of the batch.
        unsafe { fault(ctx, lane0 as usize + k, WATCHDOG_FAULT, u64::from(block)) };
    }
}

/// Cross-lane instruction `inst` at linear pc `pc` for the wave of `n` lanes
/// starting at batch lane `base`: the lanes at `pc` execute it together.
///
/// # Safety
/// `ctx` must be the running batch's context and the wave inside the batch.
pub unsafe extern "C" fn wj_gang_wave(ctx: *mut GangCtx, inst: u32, base: u32, n: u32, pc: u32) {
    // Compiled code may have switched the hardware flush on.
    let _ieee = wavejit_ir::host_float_env::Ieee::enter();
    // SAFETY: forwarded from the caller's contract.
    let Some((ctx, host, data, tys)) = (unsafe { enter(ctx, inst) }) else {
        return;
    };
    let kernel = host.hc.kernel;
    let (base, n) = (base as usize, n as usize);
    let lanes = host.lanes;
    let regs = ctx.regs;
    // SAFETY: the wave's lanes are lanes of the batch.
    let pcs = unsafe { std::slice::from_raw_parts_mut(ctx.pc.add(base), n) };
    let executing: Vec<bool> = pcs.iter().map(|&p| p == pc).collect();
    let slab = |v: wavejit_ir::Value, l: usize| -> u64 {
        let area = v.as_u32() as usize * lanes * 8;
        // SAFETY: the slab holds every value of every lane.
        unsafe {
            if wide(kernel.value_type(v)) {
                regs.add(area + 8 * l).cast::<u64>().read_unaligned()
            } else {
                u64::from(regs.add(area + 4 * l).cast::<u32>().read_unaligned())
            }
        }
    };
    let cols: Vec<Vec<u64>> = data
        .args
        .iter()
        .map(|&v| {
            (0..n)
                .map(|i| if executing[i] { slab(v, base + i) } else { 0 })
                .collect()
        })
        .collect();
    let refs: Vec<&[u64]> = cols.iter().map(Vec::as_slice).collect();
    let mut out = vec![0u64; n];
    let ok = data.results.len() == 1 && eval_wave(&data.kind, tys, &executing, &refs, &mut out);
    for i in 0..n {
        if !executing[i] {
            continue;
        }
        if ok {
            let v = data.results[0];
            let area = v.as_u32() as usize * lanes * 8;
            // SAFETY: as above.
            unsafe {
                if wide(kernel.value_type(v)) {
                    regs.add(area + 8 * (base + i))
                        .cast::<u64>()
                        .write_unaligned(out[i])
                } else {
                    regs.add(area + 4 * (base + i))
                        .cast::<u32>()
                        .write_unaligned(out[i] as u32)
                }
            }
            pcs[i] = pc + 1;
        } else {
            // The pc through `pcs`, which holds the wave's pcs.
            pcs[i] = PC_DEAD;
            // SAFETY: base + i is a lane of the batch.
            unsafe {
                ctx.fault.add(base + i).write(inst);
                ctx.fault_addr.add(base + i).write(0);
            }
            ctx.faulted = 1;
        }
    }
    debug_assert!(pc & PARKED == 0);
}

/// Redoes the instructions before `run & 0xffff` of run `run >> 16` of
/// segment `seg` for the active lanes of the chunk at `lane0` with the
/// interpreter's semantics, but for the store or atomic other lanes can see
/// (a run holds at most one, done once by compiled code): operands from the
/// slab, every result to the slab. The loads read what they read before (the
/// run's one visible write goes where no load of the run reads: loads and a
/// store are never in one run); runs that write private memory are never
/// redone (a load before such a store would read the stored value).
///
/// # Safety
/// `ctx` must be the running batch's context.
pub unsafe extern "C" fn wj_gang_redo(
    ctx: *mut GangCtx,
    seg: u32,
    run: u32,
    lane0: u32,
    mask: *mut u32,
) {
    // Compiled code may have switched the hardware flush on.
    let _ieee = wavejit_ir::host_float_env::Ieee::enter();
    // SAFETY: the caller passes the batch's live context.
    let ctx = unsafe { &mut *ctx };
    // SAFETY: `host` points to the runner's live `GangHost`.
    let host = unsafe { &*ctx.host.cast::<GangHost<'static>>() };
    let kernel = host.hc.kernel;
    let stop = (run & 0xffff) as usize;
    let Some(run) = host
        .hc
        .plan
        .segments
        .get(seg as usize)
        .and_then(|s| s.runs.get((run >> 16) as usize))
    else {
        return;
    };
    let lanes = host.lanes;
    let regs = ctx.regs;
    let slab = |v: wavejit_ir::Value, l: usize| -> *mut u8 {
        let area = v.as_u32() as usize * lanes * 8;
        let at = if wide(kernel.value_type(v)) {
            8 * l
        } else {
            4 * l
        };
        // SAFETY: the slab holds every value of every lane.
        unsafe { regs.add(area + at) }
    };
    // SAFETY: the uniforms are the dispatch's.
    let uniforms = unsafe { std::slice::from_raw_parts(ctx.uniforms, ctx.uniforms_len as usize) };
    // SAFETY: the mask covers the chunk.
    for k in unsafe { active(mask, host.chunk) } {
        let lane = lane0 as usize + k;
        let read = |v: wavejit_ir::Value| -> u64 {
            if let Some(b) = crate::plan::const_bits(kernel, v) {
                return b;
            }
            let p = slab(v, lane);
            // SAFETY: `p` is lane `lane`'s slot of `v`.
            unsafe {
                if wide(kernel.value_type(v)) {
                    p.cast::<u64>().read_unaligned()
                } else {
                    u64::from(p.cast::<u32>().read_unaligned())
                }
            }
        };
        let write = |v: wavejit_ir::Value, x: u64| {
            let p = slab(v, lane);
            // SAFETY: as above.
            unsafe {
                if wide(kernel.value_type(v)) {
                    p.cast::<u64>().write_unaligned(x)
                } else {
                    p.cast::<u32>().write_unaligned(x as u32)
                }
            }
        };
        let slot = slot_of(host, lane);
        for &inst in run.insts.iter().take(stop) {
            let data = &kernel.insts[inst];
            let visible = matches!(&data.kind,
                InstKind::Store(a) if matches!(a.space, AddrSpace::Global | AddrSpace::Shared))
                || matches!(data.kind, InstKind::Atomic { .. });
            if visible {
                // Done once, by the compiled code, with the redone operands.
                continue;
            }
            let tys = &host.hc.arg_tys[inst.as_u32() as usize];
            let mut args = [0u64; PURE_MAX_ARGS];
            for (a, &v) in args.iter_mut().zip(&data.args) {
                *a = read(v);
            }
            let na = data.args.len().min(PURE_MAX_ARGS);
            let mut out = [0u64; PURE_MAX_RESULTS];
            let nr = data.results.len().min(PURE_MAX_RESULTS);
            let ok = match &data.kind {
                InstKind::Const { bits, .. } => {
                    out[0] = *bits;
                    true
                }
                InstKind::Builtin(b) => {
                    out[0] = u64::from(redo_builtin(ctx, host, *b, lane, slot));
                    true
                }
                InstKind::Fence(_) => true,
                InstKind::Load(_) | InstKind::Store(_) => {
                    // SAFETY: `lane` is a lane of the running batch.
                    let mut mem = unsafe { lane_memory(ctx, host, lane, uniforms) };
                    match &data.kind {
                        InstKind::Load(a) => mem.load(a, args[0], &mut out[..nr]).is_ok(),
                        InstKind::Store(a) => mem.store(a, args[0], &args[1..na]).is_ok(),
                        _ => false,
                    }
                }
                kind => eval_pure(kind, tys, &args[..na], &mut out[..nr]),
            };
            if !ok {
                // SAFETY: `lane` is a lane of the batch, k one of the mask's.
                unsafe {
                    fault(ctx, lane, inst.as_u32(), args[0]);
                    drop_lane(mask, k);
                }
                break;
            }
            for (&v, &x) in data.results.iter().zip(&out) {
                write(v, x);
            }
        }
    }
}

fn redo_builtin(
    ctx: &GangCtx,
    host: &GangHost<'_>,
    b: wavejit_ir::Builtin,
    lane: usize,
    slot: usize,
) -> u32 {
    use wavejit_ir::Builtin as B;
    let d = host.dispatch;
    let local = (lane % d.lanes_per_workgroup().max(1) as usize) as u32;
    let dim = |x: [u32; 3], k: u8| x[usize::from(k.min(2))];
    match b {
        B::LocalId(k) => dim(d.local_id(local), k),
        // SAFETY: every slot has its four group words.
        B::WorkgroupId(k) => unsafe { ctx.group.add(4 * slot + usize::from(k.min(2))).read() },
        B::WorkgroupSize(k) => dim(d.workgroup_size, k),
        B::NumWorkgroups(k) => dim(d.workgroups, k),
        B::LocalIndex => local,
        B::LaneId => local % d.wave_size.max(1),
        B::WaveId => local / d.wave_size.max(1),
        B::WaveSize => d.wave_size,
    }
}

/// `(flush)`: the hardware flush around a loop that relies on it
/// (`lower::inst::HwFlush`: 0 off, 1 DAZ, 2 DAZ and FTZ).
pub extern "C" fn wj_float_env(flush: u32) {
    wavejit_ir::host_float_env::set_hardware_flush(flush >= 1, flush >= 2);
}
