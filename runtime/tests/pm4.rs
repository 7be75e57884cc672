//! The PM4 command processor on hand-built indirect buffers.

use wavejit_ir::AccessCause;
use wavejit_runtime::AddressSpace;
use wavejit_runtime::kgsl::pm4::packet::op;
use wavejit_runtime::kgsl::pm4::{
    CommandProcessor, ComputeCause, ComputeError, ComputeUnit, CpErrorKind, CsDispatch, RunOutcome,
    Submission, type4, type7,
};

/// Records dispatches instead of running kernels.
#[derive(Default)]
struct Recorder {
    dispatches: Vec<CsDispatch>,
    fail: Option<String>,
}

impl ComputeUnit for Recorder {
    fn exec_cs(&mut self, d: &CsDispatch, _: &AddressSpace) -> Result<(), ComputeError> {
        self.dispatches.push(d.clone());
        match &self.fail {
            Some(m) => Err(ComputeError::new(
                "kernel `k`",
                ComputeCause::Other(m.clone()),
            )),
            None => Ok(()),
        }
    }
}

fn lo(a: u64) -> u32 {
    a as u32
}
fn hi(a: u64) -> u32 {
    (a >> 32) as u32
}

struct Rig {
    mem: AddressSpace,
    ib: u64,
    data: u64,
    cp: CommandProcessor,
    cu: Recorder,
}

impl Rig {
    fn new() -> Rig {
        let mem = AddressSpace::new();
        let ib = mem.alloc(4096).unwrap();
        let data = mem.alloc(4096).unwrap();
        Rig {
            mem,
            ib,
            data,
            cp: CommandProcessor::default(),
            cu: Recorder::default(),
        }
    }

    fn submit(
        &mut self,
        words: &[u32],
    ) -> (
        Submission,
        Result<RunOutcome, wavejit_runtime::kgsl::pm4::CpError>,
    ) {
        self.mem.write_u32s(self.ib, words).unwrap();
        let mut sub = Submission::new(self.ib, words.len() as u32);
        let r = self.cp.run(&mut sub, &self.mem, &mut self.cu);
        (sub, r)
    }
}

#[test]
fn event_write_stores_the_timestamp_value() {
    let mut r = Rig::new();
    let d = r.data;
    let (_, out) = r.submit(&[
        type7(op::EVENT_WRITE, 4),
        4,
        lo(d),
        hi(d),
        0x1234,
        type7(op::WAIT_FOR_IDLE, 0),
    ]);
    assert_eq!(out, Ok(RunOutcome::Done));
    assert_eq!(r.mem.read_u32s(d, 1).unwrap(), vec![0x1234]);
}

#[test]
fn wait_reg_mem_parks_until_the_value_appears_then_resumes() {
    let mut r = Rig::new();
    let d = r.data;
    // wait (mem >= 5), then write 99 to d+4
    let words = [
        type7(op::WAIT_REG_MEM, 6),
        0x15,
        lo(d),
        hi(d),
        5,
        0xffff_ffff,
        32,
        type7(op::MEM_WRITE, 3),
        lo(d + 4),
        hi(d + 4),
        99,
    ];
    let (mut sub, out) = r.submit(&words);
    assert_eq!(out, Ok(RunOutcome::Parked));
    assert_eq!(
        r.mem.read_u32s(d + 4, 1).unwrap(),
        vec![0],
        "nothing after the wait ran"
    );
    assert_eq!(
        r.cp.run(&mut sub, &r.mem, &mut r.cu),
        Ok(RunOutcome::Parked)
    );
    r.mem.write_u32s(d, &[5]).unwrap();
    assert_eq!(r.cp.run(&mut sub, &r.mem, &mut r.cu), Ok(RunOutcome::Done));
    assert_eq!(r.mem.read_u32s(d + 4, 1).unwrap(), vec![99]);
    assert!(sub.is_done());
}

#[test]
fn nested_indirect_buffer_runs_then_the_outer_continues() {
    let mut r = Rig::new();
    let d = r.data;
    let inner = r.mem.alloc(64).unwrap();
    r.mem
        .write_u32s(inner, &[type7(op::MEM_WRITE, 3), lo(d), hi(d), 7])
        .unwrap();
    let (_, out) = r.submit(&[
        type7(op::INDIRECT_BUFFER, 3),
        lo(inner),
        hi(inner),
        4,
        type7(op::MEM_WRITE, 3),
        lo(d + 4),
        hi(d + 4),
        8,
    ]);
    assert_eq!(out, Ok(RunOutcome::Done));
    assert_eq!(r.mem.read_u32s(d, 2).unwrap(), vec![7, 8]);
}

#[test]
fn reg_to_mem_copies_registers_and_the_always_on_counter_advances() {
    let mut r = Rig::new();
    let d = r.data;
    let ts = [type7(op::REG_TO_MEM, 3), 0x4008_0980, lo(d), hi(d)];
    let (_, out) = r.submit(&[
        type4(0xb990, 2),
        0xb,
        3,
        type7(op::REG_TO_MEM, 3),
        0xb990 | (2 << 18),
        lo(d + 16),
        hi(d + 16),
    ]);
    assert_eq!(out, Ok(RunOutcome::Done));
    assert_eq!(r.mem.read_u32s(d + 16, 2).unwrap(), vec![0xb, 3]);
    r.submit(&ts).1.unwrap();
    let t0 = r.mem.read_bytes(d, 8).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2));
    r.submit(&ts).1.unwrap();
    let t1 = r.mem.read_bytes(d, 8).unwrap();
    let (t0, t1) = (
        u64::from_le_bytes(t0.try_into().unwrap()),
        u64::from_le_bytes(t1.try_into().unwrap()),
    );
    // 2 ms at 19.2 MHz is 38400 ticks.
    assert!(t1 - t0 >= 38_400, "{t0} -> {t1}");
}

#[test]
fn exec_cs_builds_the_dispatch_from_registers_and_loaded_constants() {
    let mut r = Rig::new();
    let consts = r.mem.alloc(4096).unwrap();
    r.mem.write_u32s(consts, &[11, 22, 33, 44]).unwrap();
    let (_, out) = r.submit(&[
        // NDRANGE_0: dim 3, local (4,2,1)
        type4(0xb990, 1),
        3 | (3 << 2) | (1 << 12),
        // CNTL_0: half 1, full 5, merged; CNTL_1: shared field 1 -> 2 KiB
        type4(0xa9b0, 6),
        0x8000_0282,
        0x41,
        0,
        0,
        0x5aa8_8000,
        0x7f43,
        type4(0xa9bc, 1),
        2,
        type4(0xb997, 2),
        0x00fc_fcc0, // wgid r48.x, local id r0.x
        0xfc,
        type7(op::LOAD_STATE6_FRAG, 3),
        0x4036_4000,
        lo(consts),
        hi(consts),
        type7(op::EXEC_CS, 4),
        0,
        2,
        3,
        1,
    ]);
    assert_eq!(out, Ok(RunOutcome::Done));
    let d = &r.cu.dispatches[0];
    assert_eq!(d.groups, [2, 3, 1]);
    assert_eq!(d.local_size, [4, 2, 1]);
    assert_eq!((d.half_regs, d.full_regs, d.merged_regs), (1, 5, true));
    assert_eq!(d.shared_size, 2048);
    assert_eq!(d.shader_addr, 0x7f43_5aa8_8000);
    assert_eq!(d.shader_len, 256);
    assert_eq!(d.workgroup_id_regid, 0xc0);
    assert_eq!(d.local_id_regid, 0);
    assert_eq!(&d.state.consts[..5], &[11, 22, 33, 44, 0]);
    assert_eq!(d.state.consts.len(), 1024);
}

#[test]
fn errors_name_the_ib_the_dword_and_the_cause() {
    let mut r = Rig::new();
    let ib = r.ib;
    let (_, out) = r.submit(&[type7(op::WAIT_FOR_IDLE, 0), type7(0x7f, 0)]);
    let e = out.unwrap_err();
    assert_eq!((e.ib, e.offset), (ib, 1));
    assert_eq!(e.kind, CpErrorKind::UnknownOpcode { op: 0x7f });
    assert_eq!(
        e.to_string(),
        format!("IB {ib:#x} dword 1: unknown type7 opcode 0x7f")
    );

    let (_, out) = r.submit(&[type7(op::EXEC_CS, 4) ^ (1 << 15), 0, 1, 1, 1]);
    assert_eq!(
        out.unwrap_err().to_string(),
        format!("IB {ib:#x} dword 0: bad parity in type7 header 0x70b38004")
    );

    let (_, out) = r.submit(&[type7(op::RUN_OPENCL, 1), 0]);
    assert_eq!(out.unwrap_err().kind, CpErrorKind::RunOpenClRefused);

    let (_, out) = r.submit(&[type7(op::MEM_WRITE, 3), 0x10, 0, 1]);
    assert_eq!(
        out.unwrap_err().kind,
        CpErrorKind::Memory {
            what: "CP_MEM_WRITE",
            addr: 0x10,
            cause: AccessCause::Unmapped
        }
    );

    let (_, out) = r.submit(&[type7(op::MEM_WRITE, 5), 0, 0]);
    assert_eq!(
        out.unwrap_err().kind,
        CpErrorKind::Truncated { count: 6, len: 3 }
    );
}

#[test]
fn a_failed_dispatch_is_an_error_of_the_submission() {
    let mut r = Rig::new();
    r.cu.fail = Some("faulted".into());
    let (_, out) = r.submit(&[type4(0xb990, 1), 3, type7(op::EXEC_CS, 4), 0, 1, 1, 1]);
    let err = out.unwrap_err();
    let want = ComputeError::new("kernel `k`", ComputeCause::Other("faulted".into()));
    assert_eq!(err.kind, CpErrorKind::Compute(want.clone()));
    let text = err.to_string();
    assert!(
        text.ends_with(" dword 2: compute dispatch failed: kernel `k`: faulted"),
        "{text}"
    );
    // The chain: submission error -> compute error -> its cause.
    let source = std::error::Error::source(&err.kind).map(|s| s.to_string());
    assert_eq!(source.as_deref(), Some("kernel `k`: faulted"));
}
