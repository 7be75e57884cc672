//! Benchmark hook: the round trip of an empty-kernel dispatch through a queue
//! (reserve, write, publish, doorbell, process, complete, host wait).
//!
//! ```no_run
//! use wavejit_runtime::aql::{Processing, bench::DispatchRoundTrip};
//! let mut rt = DispatchRoundTrip::new(Processing::Thread).expect("setup");
//! rt.run_once().expect("dispatch"); // time this in a criterion loop
//! ```

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::agent::{Agent, KernelObject};
use super::code_object::ArgAbi;
use super::packet::{Header, KernelDispatchPacket, Packet, PacketType};
use super::queue::{Processing, Queue, QueueOptions};
use super::signal::{Condition, Signal};
use super::status::{AqlError, Status};

/// An IR kernel that does nothing.
pub const EMPTY_KERNEL: &str = "kernel @empty {\nblock0:\n  exit\n}\n";

/// A queue with an empty kernel registered and one completion signal, reused for
/// every round trip.
pub struct DispatchRoundTrip {
    pub queue: Queue,
    pub kernel_object: KernelObject,
    pub signal: Signal,
    processing: Processing,
}

impl DispatchRoundTrip {
    /// With a default agent (JIT engine).
    pub fn new(processing: Processing) -> Result<DispatchRoundTrip, AqlError> {
        DispatchRoundTrip::with_agent(Agent::default(), processing)
    }

    pub fn with_agent(agent: Agent, processing: Processing) -> Result<DispatchRoundTrip, AqlError> {
        let kernel_object = agent.register_ir_text(EMPTY_KERNEL, ArgAbi::UniformCopy, 0)?;
        let queue = agent.create_queue(QueueOptions::new(64, processing))?;
        Ok(DispatchRoundTrip {
            queue,
            kernel_object,
            signal: Signal::new(0),
            processing,
        })
    }

    /// One dispatch of one work-item, waited for. Fails if the queue errs or the
    /// completion does not arrive within 10 s.
    pub fn run_once(&mut self) -> Result<(), AqlError> {
        self.signal.store(1, Ordering::Relaxed);
        let packet = Packet::KernelDispatch(KernelDispatchPacket {
            header: Header::new(PacketType::KernelDispatch, false).bits(),
            setup: 1,
            workgroup_size: [1, 1, 1],
            grid_size: [1, 1, 1],
            kernel_object: self.kernel_object.0,
            completion_signal: self.signal.handle(),
            ..KernelDispatchPacket::default()
        });
        self.queue.submit(&packet)?;
        if self.processing == Processing::Manual {
            self.queue.process();
        }
        let v = self
            .signal
            .wait(Condition::Eq, 0, Some(Duration::from_secs(10)));
        if let Some(e) = self.queue.error() {
            return Err(AqlError::new(e.status, e.message));
        }
        if v != 0 {
            return Err(AqlError::new(
                Status::ERROR,
                format!("completion signal is {v} after 10 s"),
            ));
        }
        Ok(())
    }
}
