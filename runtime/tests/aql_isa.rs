//! RV32, ir3 and AGX kernels (hand-assembled) dispatched through AQL queues on the
//! interpreter and the JIT, with partial workgroups; lift errors and ISA variants
//! as AQL statuses; lifted kernels cached by content.

mod aql_support;

use std::sync::atomic::Ordering;

use aql_support::*;
use wavejit_runtime::aql::isa::{self, samples};
use wavejit_runtime::aql::{
    Agent, ArgAbi, CodeObject, Isa, KernelObject, Outcome, Packet, Processing, Signal, Status,
};

const SENTINEL: u32 = 0xdead_beef;

fn register(agent: &Agent, isa: Isa, code: &[u8], kernarg_size: u32) -> KernelObject {
    let desc = CodeObject::new(isa, ArgAbi::UniformCopy, code, kernarg_size);
    agent.register_code(&desc, code).expect("registers")
}

/// Runs one 1-D dispatch to completion on a manual queue.
fn run(agent: &Agent, kernel: KernelObject, grid: u32, wg: u16, kernarg: u64) {
    let q = queue(agent, 4, Processing::Manual);
    let done = Signal::new(1);
    let p = dispatch(kernel, 1, [grid, 1, 1], [wg, 1, 1], kernarg, Some(&done));
    q.submit(&Packet::KernelDispatch(p)).expect("submit");
    assert_eq!(q.process(), Outcome::Idle, "{:?}", q.error());
    assert_eq!(done.load(Ordering::Acquire), 0);
}

fn agents_with_isas() -> Vec<(&'static str, Agent)> {
    let all = agents();
    for (_, a) in &all {
        isa::register_all(a);
    }
    all
}

#[test]
fn rv32_kernel_reads_its_argument_block_with_a_partial_workgroup() {
    let code = samples::rv32_scale_add().expect("encodes");
    for (engine, agent) in agents_with_isas() {
        let mem = agent.memory();
        let n = 100usize;
        let (input, output) = (0x1000u64, 0x2000u64);
        mem.alloc_at(input, 4 * n as u64).expect("in");
        mem.alloc_at(output, 4 * (n as u64 + 28)).expect("out");
        let args = mem
            .alloc_at(u64::from(samples::RV32_ARGS), 8)
            .expect("args");
        let data: Vec<u32> = (0..n as u32).map(|i| (i * i) ^ 0x55).collect();
        mem.write_u32s(input, &data).expect("in");
        mem.write_u32s(output, &vec![SENTINEL; n + 28])
            .expect("out");
        mem.write_u32s(args, &[input as u32, output as u32])
            .expect("args");
        let k = register(&agent, Isa::Rv32, &code, 8);
        run(&agent, k, n as u32, 32, args);
        let got = mem.read_u32s(output, n + 28).expect("read");
        for (i, &v) in got.iter().enumerate() {
            let want = if i < n {
                data[i].wrapping_mul(3).wrapping_add(7)
            } else {
                SENTINEL
            };
            assert_eq!(v, want, "{engine}: out[{i}]");
        }
    }
}

#[test]
fn rv32_mhartid_encodes_block_and_local_index() {
    let code = samples::rv32_hartids().expect("encodes");
    for (engine, agent) in agents_with_isas() {
        let mem = agent.memory();
        mem.alloc_at(0x1000, 4 * 192).expect("out");
        mem.write_u32s(0x1000, &[SENTINEL; 192]).expect("init");
        let k = register(&agent, Isa::Rv32, &code, 0);
        // 3 workgroups of 40, the last one partial (20 lanes run).
        run(&agent, k, 100, 40, 0);
        let got = mem.read_u32s(0x1000, 192).expect("read");
        for (i, &v) in got.iter().enumerate() {
            let (block, local) = (i as u32 / 64, i as u32 % 64);
            let want = if local < 40 && block * 40 + local < 100 {
                block << 13 | local
            } else {
                SENTINEL
            };
            assert_eq!(v, want, "{engine}: slot {i}");
        }
    }
}

#[test]
fn ir3_kernel_reads_pointers_from_the_const_file() {
    let code = samples::ir3_axpy().expect("assembles");
    for (engine, agent) in agents_with_isas() {
        let mem = agent.memory();
        let n = 100usize;
        let cells = 2 * samples::IR3_WORKGROUP as usize;
        let [out, a, b] = [0; 3].map(|_| mem.alloc(4 * cells as u64).expect("buf"));
        let av: Vec<f32> = (0..cells).map(|i| i as f32 * 0.5).collect();
        let bv: Vec<f32> = (0..cells).map(|i| 3.0 - i as f32).collect();
        mem.write_f32s(a, &av).expect("a");
        mem.write_f32s(b, &bv).expect("b");
        mem.write_u32s(out, &vec![SENTINEL; cells]).expect("out");
        let args = mem.alloc(24).expect("args");
        let kernarg: Vec<u8> = [out, a, b].iter().flat_map(|p| p.to_le_bytes()).collect();
        mem.write_bytes(args, &kernarg).expect("kernarg");
        let k = register(&agent, Isa::Ir3, &code, 24);
        run(&agent, k, n as u32, samples::IR3_WORKGROUP, args);
        let got = mem.read_u32s(out, cells).expect("read");
        for (i, &v) in got.iter().enumerate() {
            let want = if i < n {
                bv[i].mul_add(2.0, av[i]).to_bits()
            } else {
                SENTINEL
            };
            assert_eq!(v, want, "{engine}: out[{i}]");
        }
    }
}

#[test]
fn agx_kernel_finds_buffers_in_uniform_pairs() {
    let code = samples::agx_add().expect("assembles");
    for (engine, agent) in agents_with_isas() {
        let mem = agent.memory();
        let n = 77usize;
        let cells = 96usize;
        let [a, b, out] = [0; 3].map(|_| mem.alloc(4 * cells as u64).expect("buf"));
        let av: Vec<u32> = (0..cells as u32).map(|i| i * 1000).collect();
        let bv: Vec<u32> = (0..cells as u32)
            .map(|i| 0xffff_fff0u32.wrapping_add(i))
            .collect();
        mem.write_u32s(a, &av).expect("a");
        mem.write_u32s(b, &bv).expect("b");
        mem.write_u32s(out, &vec![SENTINEL; cells]).expect("out");
        let args = mem.alloc(24).expect("args");
        let kernarg: Vec<u8> = [a, b, out].iter().flat_map(|p| p.to_le_bytes()).collect();
        mem.write_bytes(args, &kernarg).expect("kernarg");
        let k = register(&agent, Isa::Agx, &code, 24);
        run(&agent, k, n as u32, 32, args);
        let got = mem.read_u32s(out, cells).expect("read");
        for (i, &v) in got.iter().enumerate() {
            let want = if i < n {
                av[i].wrapping_add(bv[i]).wrapping_add(7)
            } else {
                SENTINEL
            };
            assert_eq!(v, want, "{engine}: out[{i}]");
        }
    }
}

#[test]
fn lift_errors_and_foreign_variants_become_aql_statuses() {
    let agent = jit_agent();
    // Without the backends: INVALID_ISA.
    let k = register(&agent, Isa::Agx, &[0; 8], 0);
    let e = agent.load(k).expect_err("no backend");
    assert_eq!(e.status, Status::INVALID_ISA);
    isa::register_all(&agent);

    // An RV32 entry that is not 4-byte aligned.
    let code = samples::rv32_hartids().expect("encodes");
    let mut desc = CodeObject::new(Isa::Rv32, ArgAbi::UniformCopy, &code, 0);
    desc.entry = 2;
    let e = agent
        .load(agent.register_code(&desc, &code).expect("reg"))
        .err();
    let e = e.expect("misaligned entry");
    assert_eq!(e.status, Status::INVALID_CODE_OBJECT);
    assert!(
        e.message.contains("rv32") && e.message.contains("0x00000002"),
        "{e:?}"
    );

    // ir3 code that is not whole instructions; a wave size a6xx does not have.
    let ir3 = samples::ir3_axpy().expect("assembles");
    let e = agent.load(register(&agent, Isa::Ir3, &ir3[..12], 24)).err();
    assert_eq!(e.map(|e| e.status), Some(Status::INVALID_CODE_OBJECT));
    let mut desc = CodeObject::new(Isa::Ir3, ArgAbi::UniformCopy, &ir3, 24);
    desc.wave_size = 32;
    let e = agent
        .load(agent.register_code(&desc, &ir3).expect("reg"))
        .err();
    let e = e.expect("wave 32");
    assert_eq!(e.status, Status::INVALID_ISA);
    assert!(e.message.contains("wave size 32"), "{e:?}");

    // Kernargs passed by pointer are refused by the uniform-file ISAs.
    let agx = samples::agx_add().expect("assembles");
    let desc = CodeObject::new(Isa::Agx, ArgAbi::UniformPointer, &agx, 24);
    let e = agent
        .load(agent.register_code(&desc, &agx).expect("reg"))
        .err();
    assert_eq!(e.map(|e| e.status), Some(Status::INVALID_CODE_OBJECT));

    // AGX bytes that do not decode, dispatched: the queue reports the lifter's error.
    let bad = register(&agent, Isa::Agx, &[0xff; 6], 0);
    let log = ErrorLog::default();
    let q = agent
        .create_queue(log.options(4, Processing::Manual))
        .expect("queue");
    q.submit(&Packet::KernelDispatch(dispatch(
        bad,
        1,
        [32, 1, 1],
        [32, 1, 1],
        0,
        None,
    )))
    .expect("submit");
    q.process();
    let errors = log.errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].status, Status::INVALID_CODE_OBJECT);
    assert!(errors[0].message.starts_with("agx: "), "{errors:?}");
    assert_eq!(errors[0].message.matches("agx").count(), 1, "{errors:?}");
}

#[test]
fn equal_code_lifts_once() {
    let agent = jit_agent();
    let rv = std::sync::Arc::new(isa::Rv32Backend::default());
    agent.register_backend(rv.clone());
    let code = samples::rv32_hartids().expect("encodes");
    let k1 = register(&agent, Isa::Rv32, &code, 0);
    let k2 = register(&agent, Isa::Rv32, &code, 0);
    assert_ne!(k1, k2);
    agent.load(k1).expect("loads");
    agent.load(k2).expect("loads");
    assert_eq!(rv.lifted_count(), 1);
    let other = samples::rv32_scale_add().expect("encodes");
    agent
        .load(register(&agent, Isa::Rv32, &other, 0))
        .expect("loads");
    assert_eq!(rv.lifted_count(), 2);
}

#[test]
fn kernel_faults_reach_the_queue_with_their_status() {
    let agent = jit_agent();
    isa::register_all(&agent);
    let mem = agent.memory();
    // The RV32 argument block points at core addresses nothing is mapped at.
    let args = mem
        .alloc_at(u64::from(samples::RV32_ARGS), 8)
        .expect("args");
    mem.write_u32s(args, &[0x4000_0000, 0x4100_0000])
        .expect("args");
    let k = register(
        &agent,
        Isa::Rv32,
        &samples::rv32_scale_add().expect("encodes"),
        8,
    );
    // An RV32 program without ebreak runs off its code: a trap of the lifted code.
    let runaway = wavejit_frontend::rv32::encode_program(&[wavejit_frontend::rv32::Instr::OpImm {
        op: wavejit_frontend::rv32::AluImmOp::Addi,
        rd: wavejit_frontend::rv32::XReg(5),
        rs1: wavejit_frontend::rv32::XReg(5),
        imm: 1,
    }])
    .expect("encodes");
    let r = register(&agent, Isa::Rv32, &runaway, 0);
    for (kernel, want) in [(k, Status::MEMORY_FAULT), (r, Status::EXCEPTION)] {
        let log = ErrorLog::default();
        let q = agent
            .create_queue(log.options(4, Processing::Manual))
            .expect("queue");
        let p = dispatch(kernel, 1, [40, 1, 1], [32, 1, 1], args, None);
        q.submit(&Packet::KernelDispatch(p)).expect("submit");
        q.process();
        let errors = log.errors();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].status, want, "{errors:?}");
    }
}

/// Issue 14 item 11: an AGX trap stops the queue with the instruction and
/// what the trap means, not `trap 0xa60003`.
#[test]
fn agx_traps_stop_the_queue_in_guest_terms() {
    let code = wavejit_frontend::agx::assemble("ldimm r1, 0x40\nret r1").expect("assembles");
    for (engine, agent) in agents_with_isas() {
        let k = register(&agent, Isa::Agx, &code, 0);
        let log = ErrorLog::default();
        let q = agent
            .create_queue(log.options(4, Processing::Manual))
            .expect("queue");
        let p = dispatch(k, 1, [32, 1, 1], [32, 1, 1], 0, None);
        q.submit(&Packet::KernelDispatch(p)).expect("submit");
        assert_eq!(q.process(), Outcome::Error, "{engine}");
        let errors = log.errors();
        assert_eq!(errors.len(), 1, "{engine}: {errors:?}");
        assert_eq!(errors[0].status, Status::EXCEPTION, "{engine}");
        assert!(
            errors[0].message.starts_with(
                "kernel `agx@0x0` faulted: `ret r1` at pc 0x6: `ret`/`call` to an address \
                 that is not the start of an instruction the program can branch to \
                 (trap 0xa60003), lane"
            ),
            "{engine}: {errors:?}"
        );
    }
}

/// Issue 14 item 11 for RV32 through AQL: a trap names its cause, pc and word
/// (the lift's trap site), not a bare trap code.
#[test]
fn rv32_traps_stop_the_queue_in_guest_terms() {
    // addi x0, x0, 0 (nop); ecall.
    let code: Vec<u8> = [0x0000_0013u32, 0x0000_0073]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    for (engine, agent) in agents_with_isas() {
        let k = register(&agent, Isa::Rv32, &code, 0);
        let log = ErrorLog::default();
        let q = agent
            .create_queue(log.options(4, Processing::Manual))
            .expect("queue");
        let p = dispatch(k, 1, [4, 1, 1], [4, 1, 1], 0, None);
        q.submit(&Packet::KernelDispatch(p)).expect("submit");
        assert_eq!(q.process(), Outcome::Error, "{engine}");
        let errors = log.errors();
        assert_eq!(errors.len(), 1, "{engine}: {errors:?}");
        assert!(
            errors[0].message.starts_with("kernel `rv32@0x0` faulted")
                && errors[0].message.ends_with(
                    ": rv32 ecall (not defined by the device) at pc 0x00000004 (word 0x00000073)"
                ),
            "{engine}: {errors:?}"
        );
    }
}
