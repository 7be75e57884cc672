//! User-mode queues: the ring, the indexes, the doorbell, the error state and the
//! Rust producer API. The packet processor lives in `processor.rs`.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use wavejit_ir::CancelFlag;

use super::agent::Agent;
use super::notify::Notify;
use super::packet::Packet;
use super::pool::WorkerPool;
use super::processor::{self, Outcome, ProcState};
use super::ring::{HsaQueue, QueueDescriptor, Ring};
use super::signal::Signal;
use super::status::{AqlError, Status};

/// `hsa_queue_type32_t`.
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum QueueType {
    /// Several producers (reserve ids with `add_write_index`).
    Multi = 0,
    /// One producer.
    Single = 1,
}

/// Queue feature bit: kernel dispatch packets (agent dispatch is not supported).
pub const FEATURE_KERNEL_DISPATCH: u32 = 1;

/// Who runs the packet processor.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Processing {
    /// A processor thread per queue, woken by the doorbell and by signal changes;
    /// kernels run on worker threads and may overlap (barrier bit clear).
    Thread,
    /// Nothing runs until [`Queue::process`] is called; kernels run inline, to
    /// completion, inside it (deterministic tests).
    Manual,
}

/// A queue error as the callback sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueError {
    pub status: Status,
    /// What went wrong, naming the packet field or the kernel fault.
    pub message: String,
    pub queue_id: u64,
    /// The packet that failed.
    pub packet_id: u64,
}

/// Called once when the queue enters the error state (from the processor, a
/// dispatch worker thread, or inside [`Queue::process`]). It must not call
/// `process` on, or drop, its own queue.
pub type ErrorCallback = Arc<dyn Fn(&QueueError) + Send + Sync>;

/// How to create a queue.
#[derive(Clone)]
pub struct QueueOptions {
    /// Packets, a power of two.
    pub size: u32,
    pub ty: QueueType,
    pub processing: Processing,
    pub callback: Option<ErrorCallback>,
}

impl QueueOptions {
    pub fn new(size: u32, processing: Processing) -> QueueOptions {
        QueueOptions {
            size,
            ty: QueueType::Multi,
            processing,
            callback: None,
        }
    }

    pub fn callback(mut self, callback: impl Fn(&QueueError) + Send + Sync + 'static) -> Self {
        self.callback = Some(Arc::new(callback));
        self
    }
}

static NEXT_QUEUE_ID: AtomicU64 = AtomicU64::new(0);

pub(crate) struct QueueInner {
    pub agent: Agent,
    /// Boxed: producers hold its address.
    pub desc: Box<QueueDescriptor>,
    pub ring: Ring,
    pub doorbell: Signal,
    pub processing: Processing,
    callback: Option<ErrorCallback>,
    /// Wakes the processor thread.
    pub notify: Arc<Notify>,
    pub proc: Mutex<ProcState>,
    /// Launched kernel dispatches not yet completed (the barrier bit waits for 0).
    pub active: AtomicUsize,
    pub errored: AtomicBool,
    error: Mutex<Option<QueueError>>,
    pub inactive: AtomicBool,
    pub shutdown: AtomicBool,
    /// Set when the queue is destroyed: its running dispatches fault at their
    /// next budget check instead of holding the destroyer until they end.
    pub cancel: CancelFlag,
    pub pool: WorkerPool,
}

impl QueueInner {
    pub fn id(&self) -> u64 {
        self.desc.hsa.id
    }

    pub fn size(&self) -> u64 {
        u64::from(self.desc.hsa.size)
    }

    /// Moves the queue to the (terminal) error state and calls the callback, once.
    pub fn fail(&self, e: AqlError, packet_id: u64) {
        let report = QueueError {
            status: e.status,
            message: e.message,
            queue_id: self.id(),
            packet_id,
        };
        {
            let mut slot = self.error.lock().unwrap_or_else(|e| e.into_inner());
            if slot.is_some() {
                return;
            }
            *slot = Some(report.clone());
            self.errored.store(true, Ordering::Release);
        }
        if let Some(cb) = &self.callback {
            cb(&report);
        }
        self.notify.notify_always();
    }

    pub fn error(&self) -> Option<QueueError> {
        self.error.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// A queue (owning handle): dropping it stops the processor and waits for running
/// dispatches.
pub struct Queue {
    pub(crate) inner: Arc<QueueInner>,
    thread: Option<JoinHandle<()>>,
}

impl Queue {
    pub(crate) fn create(agent: Agent, o: QueueOptions) -> Result<Queue, AqlError> {
        let max = agent.config().max_queue_size;
        if !o.size.is_power_of_two() {
            return Err(AqlError::new(
                Status::INVALID_ARGUMENT,
                format!("queue size {} is not a power of two", o.size),
            ));
        }
        if o.size > max {
            return Err(AqlError::new(
                Status::INVALID_QUEUE_CREATION,
                format!("queue size {} exceeds the agent's {max} packets", o.size),
            ));
        }
        let ring = Ring::new(o.size).ok_or_else(|| {
            AqlError::new(
                Status::OUT_OF_RESOURCES,
                format!("no memory for a ring of {} packets", o.size),
            )
        })?;
        let doorbell = Signal::new_doorbell();
        let desc = Box::new(QueueDescriptor::new(HsaQueue {
            ty: o.ty as u32,
            features: FEATURE_KERNEL_DISPATCH,
            base_address: ring.base_address(),
            doorbell_signal: doorbell.handle(),
            size: o.size,
            reserved1: 0,
            id: NEXT_QUEUE_ID.fetch_add(1, Ordering::Relaxed),
        }));
        let inner = Arc::new(QueueInner {
            agent,
            desc,
            ring,
            doorbell,
            processing: o.processing,
            callback: o.callback,
            notify: Arc::new(Notify::default()),
            proc: Mutex::new(ProcState::default()),
            active: AtomicUsize::new(0),
            errored: AtomicBool::new(false),
            error: Mutex::new(None),
            inactive: AtomicBool::new(false),
            shutdown: AtomicBool::new(false),
            cancel: CancelFlag::new(),
            pool: WorkerPool::default(),
        });
        let thread = match o.processing {
            Processing::Manual => None,
            Processing::Thread => {
                inner.doorbell.watch(&inner.notify);
                let q = inner.clone();
                let t = std::thread::Builder::new()
                    .name(format!("wj-aql-queue-{}", inner.id()))
                    .spawn(move || processor::run_thread(&q))
                    .map_err(|e| {
                        AqlError::new(
                            Status::OUT_OF_RESOURCES,
                            format!("cannot start the processor thread: {e}"),
                        )
                    })?;
                Some(t)
            }
        };
        Ok(Queue { inner, thread })
    }

    pub fn id(&self) -> u64 {
        self.inner.id()
    }

    pub fn size(&self) -> u32 {
        self.inner.desc.hsa.size
    }

    pub fn agent(&self) -> &Agent {
        &self.inner.agent
    }

    /// The `amd_queue_t`-compatible descriptor (`hsa_queue_t` at its start).
    pub fn descriptor(&self) -> &QueueDescriptor {
        &self.inner.desc
    }

    /// Host address of the ring.
    pub fn base_address(&self) -> u64 {
        self.inner.ring.base_address()
    }

    pub fn doorbell(&self) -> &Signal {
        &self.inner.doorbell
    }

    pub fn load_read_index(&self, order: Ordering) -> u64 {
        self.inner.desc.read_dispatch_id.load(order)
    }

    pub fn load_write_index(&self, order: Ordering) -> u64 {
        self.inner.desc.write_dispatch_id.load(order)
    }

    pub fn store_write_index(&self, value: u64, order: Ordering) {
        self.inner.desc.write_dispatch_id.store(value, order)
    }

    /// Returns the previous value; stores `value` only if it was `expected`.
    pub fn cas_write_index(&self, expected: u64, value: u64, order: Ordering) -> u64 {
        let failure = match order {
            Ordering::Release | Ordering::Relaxed => Ordering::Relaxed,
            Ordering::AcqRel | Ordering::Acquire => Ordering::Acquire,
            _ => Ordering::SeqCst,
        };
        match self
            .inner
            .desc
            .write_dispatch_id
            .compare_exchange(expected, value, order, failure)
        {
            Ok(v) | Err(v) => v,
        }
    }

    /// Reserves `n` ids and returns the first.
    pub fn add_write_index(&self, n: u64, order: Ordering) -> u64 {
        self.inner.desc.write_dispatch_id.fetch_add(n, order)
    }

    /// The first 32 bits of packet `id`'s slot (acquire).
    pub fn load_header(&self, id: u64) -> u32 {
        self.inner.ring.word(id, 0).load(Ordering::Acquire)
    }

    /// Writes bytes 4..64 of `packet` into the slot of `id` (the header stays).
    pub fn write_body(&self, id: u64, packet: &Packet) {
        self.inner.ring.write_body(id, &packet.to_bytes());
    }

    /// Stores `header | setup << 16` into the slot of `id` with release order: the
    /// packet becomes visible to the processor.
    pub fn publish(&self, id: u64, first_word: u32) {
        self.inner
            .ring
            .word(id, 0)
            .store(first_word, Ordering::Release);
    }

    /// Body, then header (release); no doorbell.
    pub fn write_packet(&self, id: u64, packet: &Packet) {
        self.write_body(id, packet);
        self.publish(id, packet.first_word());
    }

    /// Stores `id` into the doorbell (release).
    pub fn ring_doorbell(&self, id: u64) {
        self.inner.doorbell.store(id as i64, Ordering::Release);
    }

    /// Reserves an id, waits for room, writes and publishes `packet` and rings the
    /// doorbell; returns the id. On a manual queue, waiting for room processes.
    pub fn submit(&self, packet: &Packet) -> Result<u64, AqlError> {
        let id = self.add_write_index(1, Ordering::AcqRel);
        self.wait_for_room(id)?;
        self.write_packet(id, packet);
        self.ring_doorbell(id);
        Ok(id)
    }

    /// Waits until slot `id` is free (`id < read_index + size`).
    pub fn wait_for_room(&self, id: u64) -> Result<(), AqlError> {
        let mut spins = 0u32;
        while id >= self.load_read_index(Ordering::Acquire) + self.inner.size() {
            if let Some(e) = self.inner.error() {
                return Err(AqlError::new(
                    Status::INVALID_QUEUE,
                    format!("queue {} is in the error state ({})", self.id(), e.status),
                ));
            }
            if self.inner.processing == Processing::Manual {
                let before = self.load_read_index(Ordering::Acquire);
                self.process();
                if self.load_read_index(Ordering::Acquire) == before {
                    return Err(AqlError::new(
                        Status::OUT_OF_RESOURCES,
                        format!("queue {} is full and cannot make progress", self.id()),
                    ));
                }
                continue;
            }
            spins += 1;
            if spins < 64 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
        }
        Ok(())
    }

    /// Runs the packet processor until it cannot go on, and says why. On a threaded
    /// queue this is also allowed (it serialises with the thread).
    pub fn process(&self) -> Outcome {
        processor::advance(&self.inner)
    }

    /// The error that stopped the queue, if any.
    pub fn error(&self) -> Option<QueueError> {
        self.inner.error()
    }

    /// Kernel dispatches launched and not yet completed.
    pub fn active_dispatches(&self) -> usize {
        self.inner.active.load(Ordering::Acquire)
    }

    /// Makes the dispatches running on this queue stop at their next budget
    /// check (they fault with `FaultKind::Budget(Cancelled)`): the queue is
    /// being destroyed. Called by `Drop`, and by the C API's destroy before
    /// it lets go of its handle (a thread inside `process` still holds one).
    pub fn cancel_dispatches(&self) {
        self.inner.cancel.cancel();
    }

    /// `hsa_queue_inactivate`: nothing launches any more; pending packets are ignored.
    pub fn inactivate(&self) {
        self.inner.inactive.store(true, Ordering::Release);
        self.inner.notify.notify_always();
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        self.inner.shutdown.store(true, Ordering::Release);
        // Before the joins below, which wait for running dispatches.
        self.cancel_dispatches();
        self.inner.notify.notify_always();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.inner.doorbell.unwatch(&self.inner.notify);
        self.inner.pool.shutdown();
        let pending = self
            .inner
            .proc
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take_pending();
        if let Some(p) = pending {
            p.unwatch(&self.inner);
        }
    }
}
