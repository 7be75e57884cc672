//! C ABI of the AQL frontend; declarations in `runtime/include/wavejit_aql.h`
//! (checked against this file by `runtime/tests/aql_c_header.rs`).
//!
//! Agents and queues are looked up in registries before use (an unknown agent
//! gives INVALID_ARGUMENT, an unknown queue INVALID_QUEUE), except the hot index
//! operations, which work directly on the `amd_queue_t`-compatible descriptor like
//! their HSA counterparts (the caller guarantees a live queue). Signals are handles
//! (`uint64_t`); value operations on a handle that is not a live signal do nothing
//! and return `INT64_MIN`. Callbacks must not destroy their own queue.

use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use wavejit_ir::interp::Interpreter;
use wavejit_ir::{Access, GlobalMemory};
use wavejit_jit::Jit;

use super::agent::{Agent, AgentConfig, KernelObject};
use super::code_object::CodeObject;
use super::processor::Outcome;
use super::queue::{Processing, Queue, QueueOptions, QueueType};
use super::ring::{HsaQueue, QueueDescriptor};
use super::signal::{Condition, Signal};
use super::status::{AqlError, Status};
use crate::memory::MemError;

/// `wj_aql_status_t`.
pub type WjStatus = u32;

/// `wj_aql_memory_order_t`: RELAXED 0, SCACQUIRE 1, SCRELEASE 2, SCACQ_SCREL 3.
pub type WjMemoryOrder = u32;

fn order(o: WjMemoryOrder) -> Ordering {
    match o {
        1 => Ordering::Acquire,
        2 => Ordering::Release,
        3 => Ordering::AcqRel,
        _ => Ordering::Relaxed,
    }
}

/// Orders valid for plain loads / stores (an RMW order is narrowed).
fn load_order(o: WjMemoryOrder) -> Ordering {
    match o {
        1 | 3 => Ordering::Acquire,
        _ => Ordering::Relaxed,
    }
}

fn store_order(o: WjMemoryOrder) -> Ordering {
    match o {
        2 | 3 => Ordering::Release,
        _ => Ordering::Relaxed,
    }
}

/// `wj_aql_agent_config_t`.
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct WjAgentConfig {
    /// `WJ_AQL_ENGINE_JIT` 0 or `WJ_AQL_ENGINE_INTERPRETER` 1.
    pub engine: u32,
    pub max_group_segment: u32,
    pub max_private_segment: u32,
    pub max_workgroup_size: u32,
    pub max_queue_size: u32,
    /// Non-zero: zero workgroup/grid sizes complete as no-ops.
    pub zero_size_is_noop: u32,
    pub step_limit: u64,
    /// Dispatch wall-clock budget, milliseconds (0: none); over it a dispatch
    /// fails with EXCEPTION.
    pub dispatch_time_limit_ms: u64,
    /// Most work-items of one dispatch (0: no limit); over it a dispatch fails
    /// with INVALID_ARGUMENT.
    pub max_work_items: u64,
}

/// The opaque `wj_aql_agent_t`.
pub struct WjAgent {
    agent: Agent,
}

static AGENTS: LazyLock<Mutex<HashMap<usize, Box<WjAgent>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

static QUEUES: LazyLock<Mutex<HashMap<usize, Arc<Queue>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

static SIGNALS: LazyLock<Mutex<HashMap<u64, Signal>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn agent_of(a: *const WjAgent) -> Option<Agent> {
    let agents = AGENTS.lock().unwrap_or_else(|e| e.into_inner());
    agents.get(&(a as usize)).map(|b| b.agent.clone())
}

fn queue_of(q: *const HsaQueue) -> Option<Arc<Queue>> {
    let queues = QUEUES.lock().unwrap_or_else(|e| e.into_inner());
    queues.get(&(q as usize)).cloned()
}

/// Writes `value` through `out` if it is not null.
///
/// # Safety
/// `out` is null or valid for a write of `T`.
unsafe fn put<T>(out: *mut T, value: T) -> WjStatus {
    if out.is_null() {
        return Status::INVALID_ARGUMENT.0;
    }
    // SAFETY: non-null and valid per the caller.
    unsafe { out.write(value) };
    Status::SUCCESS.0
}

fn status_of<T>(r: Result<T, AqlError>) -> WjStatus {
    match r {
        Ok(_) => Status::SUCCESS.0,
        Err(e) => e.status.0,
    }
}

/// Fills `config` with the defaults.
///
/// # Safety
/// `config` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_aql_agent_config_default(config: *mut WjAgentConfig) -> WjStatus {
    let d = AgentConfig::default();
    let c = WjAgentConfig {
        engine: 0,
        max_group_segment: d.max_group_segment,
        max_private_segment: d.max_private_segment,
        max_workgroup_size: d.max_workgroup_size,
        max_queue_size: d.max_queue_size,
        zero_size_is_noop: 0,
        step_limit: d.step_limit,
        dispatch_time_limit_ms: d
            .budget
            .time_limit
            .map_or(0, |t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
        max_work_items: match d.budget.max_work_items {
            u64::MAX => 0,
            n => n,
        },
    };
    // SAFETY: per the caller.
    unsafe { put(config, c) }
}

/// Creates an agent (`config` may be null for the defaults).
///
/// # Safety
/// `config` is null or readable; `out` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_aql_agent_create(
    config: *const WjAgentConfig,
    out: *mut *mut WjAgent,
) -> WjStatus {
    let mut cfg = AgentConfig::default();
    if !config.is_null() {
        // SAFETY: readable per the caller.
        let c = unsafe { config.read() };
        cfg.engine = match c.engine {
            0 => Arc::new(Jit::default()),
            1 => Arc::new(Interpreter),
            _ => return Status::INVALID_ARGUMENT.0,
        };
        cfg.max_group_segment = c.max_group_segment;
        cfg.max_private_segment = c.max_private_segment;
        cfg.max_workgroup_size = c.max_workgroup_size;
        cfg.max_queue_size = c.max_queue_size;
        cfg.zero_size_is_noop = c.zero_size_is_noop != 0;
        cfg.step_limit = c.step_limit;
        cfg.budget.time_limit = (c.dispatch_time_limit_ms != 0)
            .then(|| Duration::from_millis(c.dispatch_time_limit_ms));
        cfg.budget.max_work_items = match c.max_work_items {
            0 => u64::MAX,
            n => n,
        };
    }
    if out.is_null() {
        return Status::INVALID_ARGUMENT.0;
    }
    let agent = Agent::new(cfg);
    // What a Rust caller registers by hand: without them a C client could run
    // only IR text.
    super::isa::register_all(&agent);
    let mut boxed = Box::new(WjAgent { agent });
    let ptr: *mut WjAgent = &mut *boxed;
    AGENTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(ptr as usize, boxed);
    // SAFETY: checked non-null; writable per the caller.
    unsafe { put(out, ptr) }
}

/// Destroys an agent. Its queues keep it alive until they are destroyed.
#[unsafe(no_mangle)]
pub extern "C" fn wj_aql_agent_destroy(agent: *mut WjAgent) -> WjStatus {
    let removed = AGENTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&(agent as usize));
    match removed {
        Some(_) => Status::SUCCESS.0,
        None => Status::INVALID_ARGUMENT.0,
    }
}

/// Allocates `size` zeroed bytes of the agent's global memory; the GPU address is
/// the host address stored in `*out`.
///
/// # Safety
/// `out` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_aql_memory_alloc(
    agent: *mut WjAgent,
    size: u64,
    out: *mut *mut c_void,
) -> WjStatus {
    let Some(a) = agent_of(agent) else {
        return Status::INVALID_ARGUMENT.0;
    };
    match a.memory().alloc(size) {
        // SAFETY: per the caller.
        Ok(addr) => unsafe { put(out, addr as *mut c_void) },
        Err(_) => Status::OUT_OF_RESOURCES.0,
    }
}

/// Allocates `size` zeroed bytes at the GPU address `address` (for kernels
/// with 32-bit addresses, e.g. RV32 code objects, whose arguments and buffers
/// live below 4 GiB); `*host` receives the host pointer through which the
/// client reads and writes them. Freed with `wj_aql_memory_free(agent,
/// (void *)address)`. A range overlapping an allocation: INVALID_ALLOCATION.
///
/// # Safety
/// `host` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_aql_memory_alloc_at(
    agent: *mut WjAgent,
    address: u64,
    size: u64,
    host: *mut *mut c_void,
) -> WjStatus {
    let Some(a) = agent_of(agent) else {
        return Status::INVALID_ARGUMENT.0;
    };
    if host.is_null() || address.checked_add(size).is_none() {
        return Status::INVALID_ARGUMENT.0;
    }
    let memory = a.memory();
    match memory.alloc_at(address, size) {
        Ok(_) => {}
        Err(MemError::Overlap { .. } | MemError::InUse { .. }) => {
            return Status::INVALID_ALLOCATION.0;
        }
        Err(MemError::ZeroSize) => return Status::INVALID_ARGUMENT.0,
        Err(_) => return Status::OUT_OF_RESOURCES.0,
    }
    // The mapping backing the allocation just made: it lives until freed.
    match memory.translate(address, size, Access::Write) {
        // SAFETY: checked non-null; writable per the caller.
        Ok(p) => unsafe { put(host, p.as_ptr().cast::<c_void>()) },
        Err(_) => {
            let _ = memory.free(address);
            Status::OUT_OF_RESOURCES.0
        }
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn wj_aql_memory_free(agent: *mut WjAgent, ptr: *mut c_void) -> WjStatus {
    let Some(a) = agent_of(agent) else {
        return Status::INVALID_ARGUMENT.0;
    };
    match a.memory().free(ptr as u64) {
        Ok(()) => Status::SUCCESS.0,
        Err(_) => Status::INVALID_ARGUMENT.0,
    }
}

/// Registers the descriptor at `desc` (copied with its code); `*kernel_object`
/// receives the value for dispatch packets (a new handle per registration, never
/// reused). Unreadable descriptor or code memory is INVALID_CODE_OBJECT.
///
/// # Safety
/// `kernel_object` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_aql_code_object_register(
    agent: *mut WjAgent,
    desc: *const CodeObject,
    kernel_object: *mut u64,
) -> WjStatus {
    let Some(a) = agent_of(agent) else {
        return Status::INVALID_ARGUMENT.0;
    };
    match a.register_code_object(desc) {
        // SAFETY: per the caller.
        Ok(k) => unsafe { put(kernel_object, k.0) },
        Err(e) => e.status.0,
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn wj_aql_code_object_unregister(
    agent: *mut WjAgent,
    kernel_object: u64,
) -> WjStatus {
    let Some(a) = agent_of(agent) else {
        return Status::INVALID_ARGUMENT.0;
    };
    status_of(a.unregister_code_object(KernelObject(kernel_object)))
}

/// `void (*)(wj_aql_status_t, wj_aql_queue_t*, void*)`.
pub type WjQueueCallback = Option<unsafe extern "C" fn(WjStatus, *mut HsaQueue, *mut c_void)>;

/// Creates a queue. `processing`: `WJ_AQL_PROCESSING_THREAD` 0 or `_MANUAL` 1;
/// `type`: MULTI 0, SINGLE 1. `callback` (may be null) runs once with `data` when
/// the queue enters the error state.
///
/// # Safety
/// `out` is valid for a write; `callback` is safe to call with `data` from any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_aql_queue_create(
    agent: *mut WjAgent,
    size: u32,
    ty: u32,
    processing: u32,
    callback: WjQueueCallback,
    data: *mut c_void,
    out: *mut *mut HsaQueue,
) -> WjStatus {
    let Some(a) = agent_of(agent) else {
        return Status::INVALID_ARGUMENT.0;
    };
    if out.is_null() {
        return Status::INVALID_ARGUMENT.0;
    }
    let processing = match processing {
        0 => Processing::Thread,
        1 => Processing::Manual,
        _ => return Status::INVALID_ARGUMENT.0,
    };
    let ty = match ty {
        0 => QueueType::Multi,
        1 => QueueType::Single,
        _ => return Status::INVALID_ARGUMENT.0,
    };
    let mut options = QueueOptions::new(size, processing);
    options.ty = ty;
    // The descriptor address is known only after creation.
    let this = Arc::new(AtomicUsize::new(0));
    if let Some(cb) = callback {
        let this = this.clone();
        let data = data as usize;
        options = options.callback(move |e| {
            let q = this.load(Ordering::Acquire) as *mut HsaQueue;
            // SAFETY: the caller promised the callback accepts `data` on any thread.
            unsafe { cb(e.status.0, q, data as *mut c_void) };
        });
    }
    let queue = match a.create_queue(options) {
        Ok(q) => q,
        Err(e) => return e.status.0,
    };
    let ptr = queue.descriptor() as *const QueueDescriptor as *mut HsaQueue;
    this.store(ptr as usize, Ordering::Release);
    QUEUES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(ptr as usize, Arc::new(queue));
    // SAFETY: checked non-null; writable per the caller.
    unsafe { put(out, ptr) }
}

/// Stops the processor, cancels running dispatches (they fault at their next
/// budget check), waits for them and frees the queue.
#[unsafe(no_mangle)]
pub extern "C" fn wj_aql_queue_destroy(queue: *mut HsaQueue) -> WjStatus {
    let removed = QUEUES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&(queue as usize));
    // Dropped outside the lock: dropping joins threads that may call back here.
    match removed {
        Some(q) => {
            // Now, not in Drop: a thread inside wj_aql_queue_process holds
            // another reference, and its dispatch must stop too.
            q.cancel_dispatches();
            drop(q);
            Status::SUCCESS.0
        }
        None => Status::INVALID_QUEUE.0,
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn wj_aql_queue_inactivate(queue: *mut HsaQueue) -> WjStatus {
    match queue_of(queue) {
        Some(q) => {
            q.inactivate();
            Status::SUCCESS.0
        }
        None => Status::INVALID_QUEUE.0,
    }
}

/// Runs the processor until it stops; `*outcome` (may be null) receives why:
/// IDLE 0, STALLED 1, BARRIER_BIT 2, DEPENDENCIES 3, ERROR 4, INACTIVE 5, SHUTDOWN 6.
///
/// # Safety
/// `outcome` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_aql_queue_process(queue: *mut HsaQueue, outcome: *mut u32) -> WjStatus {
    let Some(q) = queue_of(queue) else {
        return Status::INVALID_QUEUE.0;
    };
    let code = match q.process() {
        Outcome::Idle => 0,
        Outcome::Stalled { .. } => 1,
        Outcome::BarrierBit { .. } => 2,
        Outcome::Dependencies { .. } => 3,
        Outcome::Error => 4,
        Outcome::Inactive => 5,
        Outcome::Shutdown => 6,
    };
    if outcome.is_null() {
        return Status::SUCCESS.0;
    }
    // SAFETY: non-null, writable per the caller.
    unsafe { put(outcome, code) }
}

/// The queue's error: `*status` gets SUCCESS if none; `text` (may be null) gets
/// the NUL-terminated message, truncated to `text_size` bytes.
///
/// # Safety
/// `status` is valid for a write; `text` is null or valid for `text_size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_aql_queue_get_error(
    queue: *mut HsaQueue,
    status: *mut WjStatus,
    text: *mut c_char,
    text_size: usize,
) -> WjStatus {
    let Some(q) = queue_of(queue) else {
        return Status::INVALID_QUEUE.0;
    };
    let (s, message) = match q.error() {
        Some(e) => (e.status.0, e.message),
        None => (Status::SUCCESS.0, String::new()),
    };
    if !text.is_null() && text_size > 0 {
        let n = message.len().min(text_size - 1);
        // SAFETY: `text` has `text_size` bytes per the caller; n + 1 <= text_size.
        unsafe {
            std::ptr::copy_nonoverlapping(message.as_ptr(), text.cast::<u8>(), n);
            text.add(n).write(0);
        }
    }
    // SAFETY: per the caller.
    unsafe { put(status, s) }
}

/// Reserves an id, waits for room, writes the 64-byte `packet` (header last, with
/// release order) and rings the doorbell; `*id` (may be null) gets the packet id.
///
/// # Safety
/// `packet` points to 64 readable bytes; `id` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_aql_queue_submit(
    queue: *mut HsaQueue,
    packet: *const c_void,
    id: *mut u64,
) -> WjStatus {
    let Some(q) = queue_of(queue) else {
        return Status::INVALID_QUEUE.0;
    };
    if packet.is_null() {
        return Status::INVALID_ARGUMENT.0;
    }
    // SAFETY: 64 readable bytes per the caller.
    let bytes = unsafe { packet.cast::<[u8; 64]>().read_unaligned() };
    match q.submit(&super::packet::Packet::Raw(bytes)) {
        Ok(_) if id.is_null() => Status::SUCCESS.0,
        // SAFETY: per the caller.
        Ok(n) => unsafe { put(id, n) },
        Err(e) => e.status.0,
    }
}

/// # Safety
/// `queue` is a live queue from `wj_aql_queue_create`.
unsafe fn desc<'a>(queue: *const HsaQueue) -> &'a QueueDescriptor {
    // SAFETY: the descriptor starts with the hsa_queue_t the caller holds.
    unsafe { &*queue.cast::<QueueDescriptor>() }
}

/// # Safety
/// `queue` is a live queue from `wj_aql_queue_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_aql_queue_load_read_index(
    queue: *const HsaQueue,
    order: WjMemoryOrder,
) -> u64 {
    // SAFETY: per the caller.
    unsafe { desc(queue) }
        .read_dispatch_id
        .load(load_order(order))
}

/// # Safety
/// `queue` is a live queue from `wj_aql_queue_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_aql_queue_load_write_index(
    queue: *const HsaQueue,
    order: WjMemoryOrder,
) -> u64 {
    // SAFETY: per the caller.
    unsafe { desc(queue) }
        .write_dispatch_id
        .load(load_order(order))
}

/// # Safety
/// `queue` is a live queue from `wj_aql_queue_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_aql_queue_store_write_index(
    queue: *const HsaQueue,
    value: u64,
    order: WjMemoryOrder,
) {
    // SAFETY: per the caller.
    unsafe { desc(queue) }
        .write_dispatch_id
        .store(value, store_order(order))
}

/// Returns the previous write index.
///
/// # Safety
/// `queue` is a live queue from `wj_aql_queue_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_aql_queue_add_write_index(
    queue: *const HsaQueue,
    n: u64,
    order: WjMemoryOrder,
) -> u64 {
    // SAFETY: per the caller.
    unsafe { desc(queue) }
        .write_dispatch_id
        .fetch_add(n, super::ffi::order(order))
}

/// Returns the previous write index.
///
/// # Safety
/// `queue` is a live queue from `wj_aql_queue_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_aql_queue_cas_write_index(
    queue: *const HsaQueue,
    expected: u64,
    value: u64,
    order: WjMemoryOrder,
) -> u64 {
    // SAFETY: per the caller.
    let d = unsafe { desc(queue) };
    match d.write_dispatch_id.compare_exchange(
        expected,
        value,
        self::order(order),
        load_order(order),
    ) {
        Ok(v) | Err(v) => v,
    }
}

/// Creates a signal with `initial` value; `*out` gets its handle.
///
/// # Safety
/// `out` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wj_aql_signal_create(initial: i64, out: *mut u64) -> WjStatus {
    if out.is_null() {
        return Status::INVALID_ARGUMENT.0;
    }
    let s = Signal::new(initial);
    let h = s.handle();
    SIGNALS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(h, s);
    // SAFETY: per the caller.
    unsafe { put(out, h) }
}

/// Destroys a signal created by `wj_aql_signal_create`. Packets already holding it
/// finish with it; new packets naming it fail with INVALID_SIGNAL.
#[unsafe(no_mangle)]
pub extern "C" fn wj_aql_signal_destroy(signal: u64) -> WjStatus {
    let removed = SIGNALS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&signal);
    match removed {
        Some(_) => Status::SUCCESS.0,
        None => Status::INVALID_SIGNAL.0,
    }
}

fn with_signal(handle: u64, f: impl FnOnce(&Signal) -> i64) -> i64 {
    Signal::from_handle(handle).map_or(i64::MIN, |s| f(&s))
}

#[unsafe(no_mangle)]
pub extern "C" fn wj_aql_signal_load(signal: u64, order: WjMemoryOrder) -> i64 {
    with_signal(signal, |s| s.load(load_order(order)))
}

#[unsafe(no_mangle)]
pub extern "C" fn wj_aql_signal_store(signal: u64, value: i64, order: WjMemoryOrder) {
    with_signal(signal, |s| {
        s.store(value, store_order(order));
        0
    });
}

/// A store that wakes no waiter.
#[unsafe(no_mangle)]
pub extern "C" fn wj_aql_signal_silent_store(signal: u64, value: i64, order: WjMemoryOrder) {
    with_signal(signal, |s| {
        s.silent_store(value, store_order(order));
        0
    });
}

/// Returns the previous value.
#[unsafe(no_mangle)]
pub extern "C" fn wj_aql_signal_exchange(signal: u64, value: i64, order: WjMemoryOrder) -> i64 {
    with_signal(signal, |s| s.exchange(value, self::order(order)))
}

/// Returns the previous value.
#[unsafe(no_mangle)]
pub extern "C" fn wj_aql_signal_cas(
    signal: u64,
    expected: i64,
    value: i64,
    order: WjMemoryOrder,
) -> i64 {
    with_signal(signal, |s| s.cas(expected, value, self::order(order)))
}

/// Returns the previous value.
#[unsafe(no_mangle)]
pub extern "C" fn wj_aql_signal_add(signal: u64, value: i64, order: WjMemoryOrder) -> i64 {
    with_signal(signal, |s| s.add(value, self::order(order)))
}

/// Returns the previous value.
#[unsafe(no_mangle)]
pub extern "C" fn wj_aql_signal_sub(signal: u64, value: i64, order: WjMemoryOrder) -> i64 {
    with_signal(signal, |s| s.sub(value, self::order(order)))
}

#[unsafe(no_mangle)]
pub extern "C" fn wj_aql_signal_and(signal: u64, value: i64, order: WjMemoryOrder) -> i64 {
    with_signal(signal, |s| s.and(value, self::order(order)))
}

#[unsafe(no_mangle)]
pub extern "C" fn wj_aql_signal_or(signal: u64, value: i64, order: WjMemoryOrder) -> i64 {
    with_signal(signal, |s| s.or(value, self::order(order)))
}

#[unsafe(no_mangle)]
pub extern "C" fn wj_aql_signal_xor(signal: u64, value: i64, order: WjMemoryOrder) -> i64 {
    with_signal(signal, |s| s.xor(value, self::order(order)))
}

/// Waits (acquire) until `cond` (EQ 0, NE 1, LT 2, GTE 3) holds against `compare`
/// or `timeout_ns` nanoseconds pass (`UINT64_MAX` = no limit); returns the value
/// observed last, which the caller re-checks. An unknown condition returns at once.
#[unsafe(no_mangle)]
pub extern "C" fn wj_aql_signal_wait(signal: u64, cond: u32, compare: i64, timeout_ns: u64) -> i64 {
    let timeout = (timeout_ns != u64::MAX).then(|| Duration::from_nanos(timeout_ns));
    with_signal(signal, |s| match Condition::from_raw(cond) {
        Some(c) => s.wait(c, compare, timeout),
        None => s.load(Ordering::Acquire),
    })
}

/// Nanoseconds of the system timestamp (the unit of wait timeouts).
pub const TIMESTAMP_FREQUENCY_HZ: u64 = 1_000_000_000;
