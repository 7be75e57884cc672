//! Launch and execution errors: the rocrtst `queue_validation` table and the rest
//! of the reference's status mapping. Each bad packet must put the queue in the
//! error state, call the callback once with the right status and queue id, leave
//! the completion signal at 1 and launch nothing after it.

mod aql_support;

use std::sync::atomic::Ordering;

use aql_support::*;
use wavejit_runtime::aql::{
    Agent, AgentConfig, AgentDispatchPacket, ArgAbi, CodeObject, Header, Isa, KernelDispatchPacket,
    Outcome, Packet, PacketType, Processing, Signal, Status,
};

/// Submits `bad` then a valid dispatch on a fresh queue; checks the error contract.
fn expect_error(agent: &Agent, processing: Processing, bad: Packet, status: Status) -> String {
    let log = ErrorLog::default();
    let q = agent
        .create_queue(log.options(8, processing))
        .expect("queue");
    let k = noop(agent);
    let after = Signal::new(1);
    q.submit(&bad).expect("submit");
    q.submit(&one(k, Some(&after))).expect("submit");
    if processing == Processing::Manual {
        assert_eq!(q.process(), Outcome::Error);
    }
    let deadline = std::time::Instant::now() + WAIT;
    while log.errors().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let errors = log.errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = &errors[0];
    assert_eq!(e.status, status, "{}", e.message);
    assert_eq!(e.queue_id, q.id());
    assert_eq!(e.packet_id, 0);
    assert_eq!(q.error().map(|e| e.status), Some(status));
    // The bad packet was not consumed and nothing after it launched.
    stays(&after, 1);
    assert_eq!(read_index(&q), 0);
    assert_eq!(q.process(), Outcome::Error);
    assert_eq!(log.errors().len(), 1, "the callback runs once");
    e.message.clone()
}

/// A valid 1-D dispatch of the noop kernel with a completion signal at 1, changed
/// by `edit`; checks the completion signal stays 1.
fn bad_dispatch(
    processing: Processing,
    status: Status,
    edit: impl FnOnce(&mut KernelDispatchPacket),
) -> String {
    let agent = interp_agent();
    let k = noop(&agent);
    let done = Signal::new(1);
    let mut p = dispatch(k, 1, [64, 1, 1], [64, 1, 1], 0, Some(&done));
    edit(&mut p);
    let msg = expect_error(&agent, processing, Packet::KernelDispatch(p), status);
    assert_eq!(
        done.load(Ordering::Acquire),
        1,
        "completion signal untouched"
    );
    msg
}

#[test]
fn invalid_dimension_setup_4() {
    for processing in [Processing::Manual, Processing::Thread] {
        let m = bad_dispatch(processing, Status::INCOMPATIBLE_ARGUMENTS, |p| p.setup = 4);
        assert!(m.contains("setup 0x4"), "{m}");
    }
}

#[test]
fn invalid_group_memory() {
    for processing in [Processing::Manual, Processing::Thread] {
        let m = bad_dispatch(processing, Status::INVALID_ALLOCATION, |p| {
            p.group_segment_size = 0xFFFF_FFFF
        });
        assert!(m.contains("group_segment_size 0xffffffff"), "{m}");
    }
}

#[test]
fn invalid_kernel_object_zero() {
    for processing in [Processing::Manual, Processing::Thread] {
        let m = bad_dispatch(processing, Status::INVALID_CODE_OBJECT, |p| {
            p.kernel_object = 0
        });
        assert!(m.contains("kernel_object is 0"), "{m}");
    }
}

#[test]
fn invalid_packet_type() {
    for processing in [Processing::Manual, Processing::Thread] {
        let m = bad_dispatch(processing, Status::INVALID_PACKET_FORMAT, |p| {
            p.header = 0xFFFF
        });
        assert!(m.contains("unknown packet type 255"), "{m}");
    }
}

#[test]
fn invalid_workgroup_size() {
    bad_dispatch(Processing::Manual, Status::INVALID_ARGUMENT, |p| {
        p.workgroup_size[0] = 0xFFFF;
        p.grid_size[0] = 0xFFFF;
    });
}

type Edit = Box<dyn FnOnce(&mut KernelDispatchPacket)>;

#[test]
fn other_dispatch_field_errors() {
    let cases: Vec<(Status, Edit)> = vec![
        (Status::INCOMPATIBLE_ARGUMENTS, Box::new(|p| p.setup = 0)),
        (
            Status::INCOMPATIBLE_ARGUMENTS,
            Box::new(|p| p.setup = 1 | 8),
        ),
        // 1-D with an unused dimension != 1.
        (
            Status::INCOMPATIBLE_ARGUMENTS,
            Box::new(|p| p.grid_size[1] = 2),
        ),
        (
            Status::INCOMPATIBLE_ARGUMENTS,
            Box::new(|p| p.workgroup_size[2] = 2),
        ),
        (
            Status::INVALID_ARGUMENT,
            Box::new(|p| p.workgroup_size[0] = 0),
        ),
        (Status::INVALID_ARGUMENT, Box::new(|p| p.grid_size[0] = 0)),
        // Grid smaller than the workgroup.
        (Status::INVALID_ARGUMENT, Box::new(|p| p.grid_size[0] = 63)),
        (
            Status::OUT_OF_RESOURCES,
            Box::new(|p| p.private_segment_size = 1 << 20),
        ),
        // Not a registered code object.
        (
            Status::INVALID_CODE_OBJECT,
            Box::new(|p| p.kernel_object = 0x1000),
        ),
        // Not a live signal.
        (
            Status::INVALID_SIGNAL,
            Box::new(|p| p.completion_signal = 0x40),
        ),
        // Fence scope 3.
        (
            Status::INVALID_PACKET_FORMAT,
            Box::new(|p| p.header |= 3 << 9),
        ),
        (
            Status::INVALID_PACKET_FORMAT,
            Box::new(|p| p.header = (p.header & !0xff) | 6),
        ),
    ];
    for (status, edit) in cases {
        // Keep the completion signal valid unless the edit replaces it.
        bad_dispatch(Processing::Manual, status, edit);
    }
}

#[test]
fn zero_size_compatibility_switch_makes_a_noop() {
    let agent = Agent::new(AgentConfig {
        zero_size_is_noop: true,
        ..AgentConfig::default()
    });
    let k = noop(&agent);
    let q = queue(&agent, 4, Processing::Manual);
    let done = Signal::new(1);
    let p = dispatch(k, 1, [64, 1, 1], [0, 1, 1], 0, Some(&done));
    q.submit(&Packet::KernelDispatch(p)).expect("submit");
    assert_eq!(q.process(), Outcome::Idle);
    assert_eq!(done.load(Ordering::Acquire), 0);
    assert!(q.error().is_none());
}

#[test]
fn agent_dispatch_and_vendor_packets_are_rejected() {
    let agent = interp_agent();
    let done = Signal::new(1);
    let agent_packet = AgentDispatchPacket {
        header: Header::new(PacketType::AgentDispatch, false).bits(),
        ty: 7,
        completion_signal: done.handle(),
        ..AgentDispatchPacket::default()
    };
    let m = expect_error(
        &agent,
        Processing::Manual,
        Packet::AgentDispatch(agent_packet),
        Status::INVALID_PACKET_FORMAT,
    );
    assert!(m.contains("agent-dispatch"), "{m}");
    assert_eq!(done.load(Ordering::Acquire), 1);

    // tinygrad's PM4 indirect-buffer vendor packet (AMD format 1).
    let mut vendor = [0u8; 64];
    vendor[..4].copy_from_slice(&0x0001_1500u32.to_le_bytes());
    vendor[56..].copy_from_slice(&done.handle().to_le_bytes());
    let m = expect_error(
        &agent,
        Processing::Manual,
        Packet::Raw(vendor),
        Status::INVALID_PACKET_FORMAT,
    );
    assert!(m.contains("AMD format 1"), "{m}");
    assert_eq!(done.load(Ordering::Acquire), 1);
}

#[test]
fn barrier_with_dead_dependency_handle_is_invalid_signal() {
    let agent = interp_agent();
    let dead = Signal::new(1).handle();
    let done = Signal::new(1);
    let mut p = match barrier(true, &[], Some(&done)) {
        Packet::Barrier(b) => b,
        other => panic!("{other:?}"),
    };
    p.dep_signal[3] = dead;
    let m = expect_error(
        &agent,
        Processing::Manual,
        Packet::Barrier(p),
        Status::INVALID_SIGNAL,
    );
    assert!(m.contains("dep_signal[3]"), "{m}");
    assert_eq!(done.load(Ordering::Acquire), 1);
}

#[test]
fn code_object_for_an_isa_without_backend_is_invalid_isa() {
    let agent = interp_agent();
    let code = [0u8; 16];
    let desc = CodeObject::new(Isa::Agx, ArgAbi::UniformCopy, &code, 0);
    let k = agent.register_code(&desc, &code).expect("registers");
    let done = Signal::new(1);
    let p = dispatch(k, 1, [1, 1, 1], [1, 1, 1], 0, Some(&done));
    let m = expect_error(
        &agent,
        Processing::Manual,
        Packet::KernelDispatch(p),
        Status::INVALID_ISA,
    );
    assert!(m.contains("Agx"), "{m}");
}

#[test]
fn broken_ir_text_is_invalid_code_object_with_the_parser_message() {
    let agent = interp_agent();
    let k = agent
        .register_ir_text(
            "kernel @k {\nblock0:\n  v0 = frobnicate\n  exit\n}\n",
            ArgAbi::UniformCopy,
            0,
        )
        .expect("registration defers parsing");
    let p = dispatch(k, 1, [1, 1, 1], [1, 1, 1], 0, None);
    let m = expect_error(
        &agent,
        Processing::Manual,
        Packet::KernelDispatch(p),
        Status::INVALID_CODE_OBJECT,
    );
    assert!(m.contains("does not parse"), "{m}");
}

#[test]
fn bad_descriptors_are_refused_at_registration() {
    let agent = interp_agent();
    let code = b"x";
    let mut d = CodeObject::new(Isa::IrText, ArgAbi::UniformCopy, code, 0);
    d.magic = 0x1234;
    let e = agent.register_code(&d, code).err().map(|e| e.status);
    assert_eq!(e, Some(Status::INVALID_CODE_OBJECT));
    let mut d = CodeObject::new(Isa::IrText, ArgAbi::UniformCopy, code, 0);
    d.isa = 77;
    let e = agent.register_code(&d, code).err().map(|e| e.status);
    assert_eq!(e, Some(Status::INVALID_ISA));
}

#[test]
fn wild_pointers_and_huge_code_sizes_are_named_at_registration() {
    let agent = interp_agent();
    let code = b"kernel @k {\nblock0:\n  exit\n}\n";
    let refused = |desc: *const CodeObject| {
        let e = agent.register_code_object(desc).expect_err("refused");
        assert_eq!(e.status, Status::INVALID_CODE_OBJECT, "{}", e.message);
        e.message
    };
    assert_eq!(
        refused(0x1000 as *const CodeObject),
        "descriptor at 0x1000 is not readable"
    );
    let mut d = CodeObject::new(Isa::IrText, ArgAbi::UniformCopy, code, 0);
    d.code = 0xdead_0000;
    assert_eq!(
        refused(&d),
        format!("code at 0xdead0000 ({} bytes) is not readable", code.len())
    );
    let mut d = CodeObject::new(Isa::IrText, ArgAbi::UniformCopy, code, 0);
    d.code_size = 1 << 40;
    assert_eq!(
        refused(&d),
        "code_size 1099511627776 exceeds the limit of 67108864 bytes"
    );
    // Code in the agent's own memory is read through its checked table.
    let buf = agent.memory().alloc(4096).expect("alloc");
    agent.memory().write_bytes(buf, code).expect("write");
    let mut d = CodeObject::new(Isa::IrText, ArgAbi::UniformCopy, code, 0);
    d.code = buf;
    let k = agent
        .register_code_object(&d)
        .expect("registers from agent memory");
    assert!(agent.load(k).is_ok());
}

const OOB: &str = "kernel @oob {
block0:
  v0 = const.i64 0x10
  v1 = const.i32 5
  store.global.i32 v0, v1 @0x24
  exit
}
";

const TRAP: &str = "kernel @trap {
block0:
  trap 0x2a
  exit
}
";

#[test]
fn kernel_faults_stop_the_queue_with_the_fault_text() {
    for (name, agent) in agents() {
        for (text, status, needle) in [
            (OOB, Status::MEMORY_FAULT, "pc 0x24"),
            (TRAP, Status::EXCEPTION, "trap 0x2a"),
        ] {
            let k = agent
                .register_ir_text(text, ArgAbi::UniformCopy, 0)
                .expect("registers");
            for processing in [Processing::Manual, Processing::Thread] {
                let log = ErrorLog::default();
                let q = agent
                    .create_queue(log.options(8, processing))
                    .expect("queue");
                let done = Signal::new(1);
                let after = Signal::new(1);
                q.submit(&one(k, Some(&done))).expect("submit");
                // With the barrier bit, the next packet waits for the faulting one.
                let mut next = match one(noop(&agent), Some(&after)) {
                    Packet::KernelDispatch(p) => p,
                    other => panic!("{other:?}"),
                };
                next.header = Header::new(PacketType::KernelDispatch, true).bits();
                q.submit(&Packet::KernelDispatch(next)).expect("submit");
                if processing == Processing::Manual {
                    assert_eq!(q.process(), Outcome::Error);
                }
                let deadline = std::time::Instant::now() + WAIT;
                while q.error().is_none() && std::time::Instant::now() < deadline {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                let e = q.error().expect("error state");
                assert_eq!(e.status, status, "{name}: {}", e.message);
                assert!(e.message.contains(needle), "{name}: {}", e.message);
                assert_eq!(e.packet_id, 0);
                assert_eq!(log.errors().len(), 1);
                stays(&done, 1);
                stays(&after, 1);
            }
        }
    }
}

#[test]
fn many_queues_share_one_callback_and_get_their_own_ids() {
    let agent = interp_agent();
    let log = ErrorLog::default();
    let queues: Vec<_> = (0..16)
        .map(|_| {
            agent
                .create_queue(log.options(4, Processing::Thread))
                .expect("queue")
        })
        .collect();
    let done = Signal::new(1);
    for q in &queues {
        let mut bad = [0u8; 64];
        bad[..2].copy_from_slice(&0xFFFFu16.to_le_bytes());
        bad[56..].copy_from_slice(&done.handle().to_le_bytes());
        q.submit(&Packet::Raw(bad)).expect("submit");
    }
    let deadline = std::time::Instant::now() + WAIT;
    while log.errors().len() < queues.len() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let mut ids: Vec<u64> = log.errors().iter().map(|e| e.queue_id).collect();
    ids.sort_unstable();
    let mut want: Vec<u64> = queues.iter().map(|q| q.id()).collect();
    want.sort_unstable();
    assert_eq!(ids, want);
    assert!(
        log.errors()
            .iter()
            .all(|e| e.status == Status::INVALID_PACKET_FORMAT)
    );
    assert_eq!(done.load(Ordering::Acquire), 1);
}

#[test]
fn kernarg_outside_global_memory_is_a_memory_fault() {
    let agent = interp_agent();
    let k = agent
        .register_ir_text(NOOP, ArgAbi::UniformCopy, 8)
        .expect("registers");
    let p = dispatch(k, 1, [1, 1, 1], [1, 1, 1], 0x10, None);
    let m = expect_error(
        &agent,
        Processing::Manual,
        Packet::KernelDispatch(p),
        Status::MEMORY_FAULT,
    );
    assert!(m.contains("kernarg"), "{m}");
    let p = dispatch(k, 1, [1, 1, 1], [1, 1, 1], 0, None);
    expect_error(
        &agent,
        Processing::Manual,
        Packet::KernelDispatch(p),
        Status::INVALID_ARGUMENT,
    );
}

/// Random packets (xorshift, fixed seed): the processor never panics, and each
/// either runs (barriers on zero handles) or stops the queue with a known status.
#[test]
fn random_packets_give_statuses_not_panics() {
    let agent = interp_agent();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let known = [
        Status::INVALID_PACKET_FORMAT,
        Status::INCOMPATIBLE_ARGUMENTS,
        Status::INVALID_ARGUMENT,
        Status::INVALID_ALLOCATION,
        Status::OUT_OF_RESOURCES,
        Status::INVALID_CODE_OBJECT,
        Status::INVALID_SIGNAL,
    ];
    let mut errors = 0;
    for round in 0..400 {
        let mut bytes = [0u8; 64];
        for chunk in bytes.chunks_exact_mut(8) {
            chunk.copy_from_slice(&next().to_le_bytes());
        }
        // Mostly valid-looking types so that field checks are reached too.
        bytes[0] = (next() % 7) as u8;
        if round % 3 == 0 {
            bytes[8..56].fill(0);
        }
        let q = queue(&agent, 2, Processing::Manual);
        q.submit(&Packet::Raw(bytes)).expect("submit");
        match q.process() {
            Outcome::Error => {
                errors += 1;
                let e = q.error().expect("error");
                assert!(known.contains(&e.status), "round {round}: {e:?}");
            }
            Outcome::Idle | Outcome::Dependencies { .. } | Outcome::Stalled { .. } => {}
            other => panic!("round {round}: {other:?}"),
        }
    }
    assert!(errors > 200, "{errors}");
}
