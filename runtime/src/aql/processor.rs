//! The packet processor: consumes packets in order, stalls on INVALID headers,
//! honours the barrier bit and fence scopes, runs barrier-AND/OR packets as
//! resumable waits and kernel dispatches on the engine, and completes packets with
//! a release fence then a decrement of the completion signal.

use std::sync::Arc;
use std::sync::atomic::{Ordering, fence};
use std::time::{Duration, Instant};

use super::dispatch::{self, DispatchJob, lookup_signal};
use super::packet::{BarrierPacket, FenceScope, Header, KernelDispatchPacket, PacketType};
use super::queue::{Processing, QueueInner};
use super::signal::Signal;
use super::status::{AqlError, Status};

/// Why the processor stopped.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Every published packet was consumed (`read_index == write_index`).
    Idle,
    /// Packet `id` has an INVALID header: wait until a producer publishes it.
    Stalled { id: u64 },
    /// Packet `id` has the barrier bit and earlier dispatches are still running.
    BarrierBit { id: u64 },
    /// Barrier packet `id` (consumed) waits for its dependency signals.
    Dependencies { id: u64 },
    /// The queue is in the error state.
    Error,
    /// The queue was inactivated.
    Inactive,
    /// The queue is being destroyed.
    Shutdown,
}

/// A barrier-AND/OR packet between launch and completion.
pub(crate) struct PendingBarrier {
    id: u64,
    and: bool,
    deps: Vec<Signal>,
    /// Per dependency: observed at 0 since launch.
    seen_zero: Vec<bool>,
    completion: Option<Signal>,
    release: FenceScope,
    watching: bool,
}

#[derive(Default)]
pub(crate) struct ProcState {
    pending: Option<PendingBarrier>,
}

impl ProcState {
    pub(crate) fn take_pending(&mut self) -> Option<PendingBarrier> {
        self.pending.take()
    }
}

/// Wakes the processor thread at least this often to see producers that write
/// the ring or signal values without ringing a doorbell.
const IDLE_POLL: Duration = Duration::from_millis(100);

pub(crate) fn run_thread(q: &Arc<QueueInner>) {
    loop {
        let seen = q.notify.begin();
        match advance(q) {
            Outcome::Shutdown => {
                q.notify.cancel();
                return;
            }
            Outcome::Error | Outcome::Inactive => q.notify.wait(seen, None),
            _ => q.notify.wait(seen, Some(Instant::now() + IDLE_POLL)),
        }
    }
}

/// Processes until nothing more can happen now.
pub(crate) fn advance(q: &Arc<QueueInner>) -> Outcome {
    let mut st = q.proc.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if q.shutdown.load(Ordering::Acquire) {
            return Outcome::Shutdown;
        }
        if q.errored.load(Ordering::Acquire) {
            return Outcome::Error;
        }
        if q.inactive.load(Ordering::Acquire) {
            return Outcome::Inactive;
        }
        if let Some(p) = st.pending.as_mut() {
            match evaluate(p) {
                None => return Outcome::Dependencies { id: p.id },
                Some(failed) => {
                    if let Some(p) = st.pending.take() {
                        finish_barrier(q, p, failed);
                    }
                }
            }
        }
        let read = q.desc.read_dispatch_id.load(Ordering::Relaxed);
        let write = q.desc.write_dispatch_id.load(Ordering::Acquire);
        if read >= write {
            return Outcome::Idle;
        }
        let word = q.ring.word(read, 0).load(Ordering::Acquire);
        let bits = word as u16;
        if bits & 0xff == PacketType::Invalid as u16 {
            return Outcome::Stalled { id: read };
        }
        let header = match Header::decode(bits) {
            Ok(h) => h,
            Err(e) => return fail(q, e, read),
        };
        if header.barrier && q.active.load(Ordering::Acquire) > 0 {
            return Outcome::BarrierBit { id: read };
        }
        if header.acquire != FenceScope::None {
            fence(Ordering::Acquire);
        }
        let mut raw = q.ring.read(read);
        // The header word as acquired, even if a misbehaving producer rewrote it.
        raw[..4].copy_from_slice(&word.to_le_bytes());
        match header.ty {
            PacketType::KernelDispatch => {
                let p = KernelDispatchPacket::from_bytes(&raw);
                let mut job = match dispatch::prepare(&q.agent.inner, &p, &raw) {
                    Ok(job) => job,
                    Err(e) => return fail(q, e, read),
                };
                // Destroying the queue stops the dispatch at its next batch.
                if let Some((_, d, _)) = job.work.as_mut() {
                    d.budget.cancel = Some(q.cancel.clone());
                }
                consume(q, read);
                launch(q, job, header.release, read);
            }
            PacketType::BarrierAnd | PacketType::BarrierOr => {
                let b = BarrierPacket::from_bytes(&raw);
                let p = match barrier(q, &b, header, read) {
                    Ok(p) => p,
                    Err(e) => return fail(q, e, read),
                };
                consume(q, read);
                st.pending = Some(p);
            }
            PacketType::AgentDispatch => {
                let e = AqlError::new(
                    Status::INVALID_PACKET_FORMAT,
                    format!(
                        "packet {read}: agent-dispatch packets are not supported (queue features = KERNEL_DISPATCH)"
                    ),
                );
                return fail(q, e, read);
            }
            PacketType::VendorSpecific => {
                let e = AqlError::new(
                    Status::INVALID_PACKET_FORMAT,
                    format!(
                        "packet {read}: vendor-specific packet (AMD format {}) is not supported",
                        raw[2]
                    ),
                );
                return fail(q, e, read);
            }
            PacketType::Invalid => return Outcome::Stalled { id: read },
        }
    }
}

fn fail(q: &QueueInner, e: AqlError, id: u64) -> Outcome {
    q.fail(e, id);
    Outcome::Error
}

/// The packet was launched: hand the slot back (INVALID, release) and only then
/// move the read index, so a producer that sees the new index finds INVALID.
fn consume(q: &QueueInner, id: u64) {
    q.ring
        .word(id, 0)
        .store(PacketType::Invalid as u32, Ordering::Release);
    q.desc.read_dispatch_id.store(id + 1, Ordering::Release);
}

/// Completion: release fence of the header's scope, then decrement by 1.
fn complete(release: FenceScope, signal: Option<&Signal>) {
    if release != FenceScope::None {
        fence(Ordering::Release);
    }
    if let Some(s) = signal {
        s.sub(1, Ordering::Release);
    }
}

fn launch(q: &Arc<QueueInner>, job: DispatchJob, release: FenceScope, id: u64) {
    q.active.fetch_add(1, Ordering::AcqRel);
    let worker_q = q.clone();
    let run = move || execute(&worker_q, job, release, id);
    match q.processing {
        Processing::Manual => run(),
        Processing::Thread => {
            if let Some(job) = q.pool.submit(Box::new(run)) {
                job();
            }
        }
    }
}

fn execute(q: &QueueInner, job: DispatchJob, release: FenceScope, id: u64) {
    let result = match &job.work {
        None => Ok(()),
        Some((kernel, d, wording)) => dispatch::run(&q.agent.inner, kernel, d, wording),
    };
    match result {
        Ok(()) => complete(release, job.completion.as_ref()),
        Err(e) => {
            // A fault leaves the completion signal alone: the packet never completes.
            if release != FenceScope::None {
                fence(Ordering::Release);
            }
            q.fail(e, id);
        }
    }
    q.active.fetch_sub(1, Ordering::AcqRel);
    q.notify.notify();
}

fn barrier(
    q: &QueueInner,
    b: &BarrierPacket,
    header: Header,
    id: u64,
) -> Result<PendingBarrier, AqlError> {
    let mut deps = Vec::new();
    for (i, &h) in b.dep_signal.iter().enumerate() {
        if let Some(s) = lookup_signal(h, &format!("packet {id}: dep_signal[{i}]"))? {
            deps.push(s);
        }
    }
    let completion = lookup_signal(
        b.completion_signal,
        &format!("packet {id}: completion_signal"),
    )?;
    let watching = q.processing == Processing::Thread;
    if watching {
        // Before the first evaluation, so no change can be missed.
        for s in &deps {
            s.watch(&q.notify);
        }
    }
    Ok(PendingBarrier {
        id,
        and: header.ty == PacketType::BarrierAnd,
        seen_zero: vec![false; deps.len()],
        deps,
        completion,
        release: header.release,
        watching,
    })
}

/// `None` while waiting; `Some(failed)` when the barrier completes, `failed` if a
/// dependency was negative.
fn evaluate(p: &mut PendingBarrier) -> Option<bool> {
    let mut negative = false;
    for (s, seen) in p.deps.iter().zip(p.seen_zero.iter_mut()) {
        let v = s.load(Ordering::Acquire);
        if v < 0 {
            negative = true;
        } else if v == 0 {
            *seen = true;
        }
    }
    if negative {
        return Some(true);
    }
    // A zero handle is satisfied in AND (not in the list) and never in OR.
    let done = if p.and {
        p.seen_zero.iter().all(|&s| s)
    } else {
        p.seen_zero.iter().any(|&s| s)
    };
    done.then_some(false)
}

fn finish_barrier(q: &QueueInner, p: PendingBarrier, failed: bool) {
    p.unwatch(q);
    if failed {
        // Error propagation (conformance `barrier_negative_value`): the completion
        // signal becomes -1; no callback, the queue goes on.
        if p.release != FenceScope::None {
            fence(Ordering::Release);
        }
        if let Some(s) = &p.completion {
            s.store(-1, Ordering::Release);
        }
    } else {
        complete(p.release, p.completion.as_ref());
    }
}

impl PendingBarrier {
    /// Stops watching the dependencies.
    pub(crate) fn unwatch(&self, q: &QueueInner) {
        if self.watching {
            for s in &self.deps {
                s.unwatch(&q.notify);
            }
        }
    }
}
