//! Shared helpers of the AQL integration tests.
#![allow(dead_code)]

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use wavejit_ir::interp::Interpreter;
use wavejit_jit::Jit;
use wavejit_runtime::aql::{
    Agent, AgentConfig, BarrierPacket, Condition, Header, KernelDispatchPacket, KernelObject,
    Packet, PacketType, Processing, Queue, QueueError, QueueOptions, Signal,
};

pub const WAIT: Duration = Duration::from_secs(20);

pub const NOOP: &str = "kernel @noop {\nblock0:\n  exit\n}\n";

pub fn interp_agent() -> Agent {
    Agent::new(AgentConfig {
        engine: Arc::new(Interpreter),
        ..AgentConfig::default()
    })
}

pub fn jit_agent() -> Agent {
    Agent::new(AgentConfig {
        engine: Arc::new(Jit::default()),
        ..AgentConfig::default()
    })
}

/// Both engines, named.
pub fn agents() -> Vec<(&'static str, Agent)> {
    vec![("interp", interp_agent()), ("jit", jit_agent())]
}

pub fn noop(agent: &Agent) -> KernelObject {
    agent
        .register_ir_text(NOOP, wavejit_runtime::aql::ArgAbi::UniformCopy, 0)
        .expect("noop kernel registers")
}

/// Errors reported to a queue callback.
#[derive(Clone, Default)]
pub struct ErrorLog(pub Arc<Mutex<Vec<QueueError>>>);

impl ErrorLog {
    pub fn options(&self, size: u32, processing: Processing) -> QueueOptions {
        let log = self.0.clone();
        QueueOptions::new(size, processing).callback(move |e| {
            log.lock().expect("log").push(e.clone());
        })
    }

    pub fn errors(&self) -> Vec<QueueError> {
        self.0.lock().expect("log").clone()
    }
}

pub fn dispatch(
    kernel: KernelObject,
    dims: u16,
    grid: [u32; 3],
    wg: [u16; 3],
    kernarg: u64,
    completion: Option<&Signal>,
) -> KernelDispatchPacket {
    KernelDispatchPacket {
        header: Header::new(PacketType::KernelDispatch, false).bits(),
        setup: dims,
        workgroup_size: wg,
        grid_size: grid,
        kernel_object: kernel.0,
        kernarg_address: kernarg,
        completion_signal: completion.map_or(0, Signal::handle),
        ..KernelDispatchPacket::default()
    }
}

/// A 1-work-item dispatch of `kernel`.
pub fn one(kernel: KernelObject, completion: Option<&Signal>) -> Packet {
    Packet::KernelDispatch(dispatch(kernel, 1, [1, 1, 1], [1, 1, 1], 0, completion))
}

pub fn barrier(and: bool, deps: &[Option<&Signal>], completion: Option<&Signal>) -> Packet {
    let ty = if and {
        PacketType::BarrierAnd
    } else {
        PacketType::BarrierOr
    };
    let mut p = BarrierPacket {
        header: Header::new(ty, false).bits(),
        completion_signal: completion.map_or(0, Signal::handle),
        ..BarrierPacket::default()
    };
    for (slot, d) in p.dep_signal.iter_mut().zip(deps) {
        *slot = d.map_or(0, Signal::handle);
    }
    Packet::Barrier(p)
}

/// Waits for `signal == value` (fails the test after [`WAIT`]).
pub fn wait_eq(signal: &Signal, value: i64) {
    let got = signal.wait(Condition::Eq, value, Some(WAIT));
    assert_eq!(got, value, "signal did not reach {value} within {WAIT:?}");
}

/// Asserts `signal` stays at `value` for a while (a threaded processor had the
/// chance to change it).
pub fn stays(signal: &Signal, value: i64) {
    let got = signal.wait(Condition::Ne, value, Some(Duration::from_millis(150)));
    assert_eq!(
        got, value,
        "signal changed to {got}, expected it to stay {value}"
    );
}

pub fn queue(agent: &Agent, size: u32, processing: Processing) -> Queue {
    agent
        .create_queue(QueueOptions::new(size, processing))
        .expect("queue")
}

pub fn read_index(q: &Queue) -> u64 {
    q.load_read_index(Ordering::Acquire)
}
