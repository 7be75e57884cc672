//! The command processor: executes PM4 indirect buffers synchronously against
//! checked memory, parking a submission at a CP_WAIT_REG_MEM whose condition
//! is not met yet and resuming it later.

use wavejit_ir::{AccessCause, GlobalMemory};

use super::packet::{Header, HeaderError, decode_header, op};
use super::state::{CONST_DWORDS, CsDispatch, LoadedState, Registers, reg};
use crate::memory::AddressSpace;

/// Deepest IB nesting accepted (the CP has IB1 and IB2; a little slack).
const MAX_IB_DEPTH: usize = 4;

/// Runs a compute dispatch that CP_EXEC_CS launched.
pub trait ComputeUnit {
    fn exec_cs(&mut self, dispatch: &CsDispatch, mem: &AddressSpace) -> Result<(), ComputeError>;
}

/// A failed dispatch: the kernel (e.g. its address and register mode) and why,
/// the cause kept as the [`source`](std::error::Error::source) to match on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kernel}: {cause}")]
pub struct ComputeError {
    pub kernel: String,
    #[source]
    pub cause: ComputeCause,
}

/// Why a dispatch failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ComputeCause {
    /// The shader is larger than the unit accepts.
    #[error(
        "shader of {bytes} bytes (SP_CS_INSTR_SIZE {instr_size:#x} x 128) exceeds the limit \
         of {limit} bytes"
    )]
    ShaderTooLarge {
        bytes: u64,
        instr_size: u64,
        limit: u64,
    },
    /// The shader's memory could not be read (the memory error's text).
    #[error("shader unreadable: {0}")]
    ShaderUnreadable(String),
    /// The shader does not lift (names the instruction index and word).
    #[error("{0}")]
    Lift(#[source] Box<wavejit_frontend::ir3::lift::LiftError>),
    /// The kernel faulted (names kernel, pc, lane and address).
    #[error("{0} (guest pc = ir3 instruction index)")]
    Fault(#[source] Box<wavejit_ir::Fault>),
    /// Another compute unit's reason.
    #[error("{0}")]
    Other(String),
}

impl From<wavejit_frontend::ir3::lift::LiftError> for ComputeCause {
    fn from(e: wavejit_frontend::ir3::lift::LiftError) -> ComputeCause {
        ComputeCause::Lift(Box::new(e))
    }
}

impl From<wavejit_ir::Fault> for ComputeCause {
    fn from(f: wavejit_ir::Fault) -> ComputeCause {
        ComputeCause::Fault(Box::new(f))
    }
}

impl ComputeError {
    pub fn new(kernel: impl Into<String>, cause: impl Into<ComputeCause>) -> ComputeError {
        ComputeError {
            kernel: kernel.into(),
            cause: cause.into(),
        }
    }
}

/// What went wrong in a submission, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("IB {ib:#x} dword {offset}: {kind}")]
pub struct CpError {
    pub ib: u64,
    pub offset: u32,
    pub kind: CpErrorKind,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CpErrorKind {
    #[error("{0}")]
    Header(#[from] HeaderError),
    #[error("{what} at {addr:#x} refused: {cause}")]
    Memory {
        what: &'static str,
        addr: u64,
        cause: AccessCause,
    },
    #[error("packet of {count} dwords runs past the end of its {len}-dword IB")]
    Truncated { count: u32, len: u32 },
    #[error("opcode {op:#x} needs {need} payload dwords, has {count}")]
    ShortPayload { op: u32, need: u32, count: u32 },
    #[error("unknown type7 opcode {op:#x}")]
    UnknownOpcode { op: u32 },
    #[error(
        "CP_RUN_OPENCL is the blob OpenCL path; wavejit runs kernels compiled by mesa's ir3 (use DEV=QCOM:IR3)"
    )]
    RunOpenClRefused,
    #[error("indirect buffers nested deeper than {MAX_IB_DEPTH}")]
    TooDeep,
    #[error("unsupported CP_LOAD_STATE6 source {src} for state type {ty}, block {block}")]
    LoadState { src: u32, ty: u32, block: u32 },
    #[error("compute dispatch failed: {0}")]
    Compute(#[source] ComputeError),
}

/// Where a submission stands: a stack of (IB address, length, next dword).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Submission {
    stack: Vec<Cursor>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Cursor {
    base: u64,
    len: u32,
    pos: u32,
}

impl Submission {
    pub fn new(ib_addr: u64, dwords: u32) -> Submission {
        Submission {
            stack: vec![Cursor {
                base: ib_addr,
                len: dwords,
                pos: 0,
            }],
        }
    }

    /// The outermost IB (address, dwords) of a submission that has not started.
    pub fn ib(&self) -> Option<(u64, u32)> {
        self.stack.first().map(|c| (c.base, c.len))
    }

    pub fn is_done(&self) -> bool {
        self.stack.is_empty()
    }
}

/// How a run ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RunOutcome {
    Done,
    /// Stopped at a CP_WAIT_REG_MEM/WAIT_MEM_GTE whose condition is false.
    Parked,
}

/// The state of one ring: registers and loaded state persist across submissions.
#[derive(Default)]
pub struct CommandProcessor {
    pub regs: Registers,
    pub state: LoadedState,
}

/// Host monotonic time in ticks of the a6xx always-on counter (19.2 MHz).
pub fn always_on_counter() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    let ns = (ts.tv_sec as u128) * 1_000_000_000 + ts.tv_nsec as u128;
    (ns * 192 / 10_000) as u64
}

fn mem_err(what: &'static str, addr: u64) -> impl Fn(AccessCause) -> CpErrorKind {
    move |cause| CpErrorKind::Memory { what, addr, cause }
}

fn read_u32s(
    mem: &AddressSpace,
    addr: u64,
    n: usize,
    what: &'static str,
) -> Result<Vec<u32>, CpErrorKind> {
    let mut bytes = vec![0u8; n * 4];
    mem.read(addr, &mut bytes).map_err(mem_err(what, addr))?;
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// Reads what is readable of `n` dwords at `addr` and zero-fills the rest: the
/// constant load reads a fixed 4 KiB that may run past the client's buffer.
fn read_u32s_tolerant(mem: &AddressSpace, addr: u64, n: usize) -> Vec<u32> {
    let mut out = vec![0u32; n];
    if let Ok(v) = read_u32s(mem, addr, n, "state") {
        return v;
    }
    for (i, slot) in out.iter_mut().enumerate() {
        match read_u32s(mem, addr + 4 * i as u64, 1, "state") {
            Ok(v) => *slot = v[0],
            Err(_) => break,
        }
    }
    out
}

fn write_u32(mem: &AddressSpace, addr: u64, v: u32, what: &'static str) -> Result<(), CpErrorKind> {
    mem.write(addr, &v.to_le_bytes())
        .map_err(mem_err(what, addr))
}

fn addr64(lo: u32, hi: u32) -> u64 {
    u64::from(lo) | (u64::from(hi) << 32)
}

fn need(op: u32, p: &[u32], n: usize) -> Result<(), CpErrorKind> {
    if p.len() < n {
        Err(CpErrorKind::ShortPayload {
            op,
            need: n as u32,
            count: p.len() as u32,
        })
    } else {
        Ok(())
    }
}

/// The CP_WAIT_REG_MEM comparison (FUNCTION field), unsigned unless `signed`.
fn compare(func: u32, signed: bool, value: u32, reference: u32) -> bool {
    let ord = if signed {
        (value as i32).cmp(&(reference as i32))
    } else {
        value.cmp(&reference)
    };
    use std::cmp::Ordering::*;
    match func {
        0 => true,
        1 => ord == Less,
        2 => ord != Greater,
        3 => ord == Equal,
        4 => ord != Equal,
        5 => ord != Less,
        _ => ord == Greater,
    }
}

enum Step {
    Next,
    Park,
    Push(Cursor),
}

impl CommandProcessor {
    /// Runs `sub` until it finishes or parks.
    pub fn run(
        &mut self,
        sub: &mut Submission,
        mem: &AddressSpace,
        cu: &mut dyn ComputeUnit,
    ) -> Result<RunOutcome, CpError> {
        while let Some(top) = sub.stack.last().copied() {
            if top.pos >= top.len {
                sub.stack.pop();
                continue;
            }
            let at = |kind: CpErrorKind| CpError {
                ib: top.base,
                offset: top.pos,
                kind,
            };
            let word_addr = top.base + 4 * u64::from(top.pos);
            let header = read_u32s(mem, word_addr, 1, "IB read").map_err(at)?[0];
            let (payload_len, step) = match decode_header(header).map_err(|e| at(e.into()))? {
                Header::Type2Nop => (0, Step::Next),
                Header::Type4 { reg, count } => {
                    let values = self.payload(mem, top, count).map_err(at)?;
                    for (i, v) in values.iter().enumerate() {
                        self.regs.set(reg + i as u32, *v);
                    }
                    (count, Step::Next)
                }
                Header::Type7 { op, count } => {
                    let p = self.payload(mem, top, count).map_err(at)?;
                    (count, self.opcode(op, &p, mem, cu).map_err(at)?)
                }
            };
            match step {
                Step::Park => return Ok(RunOutcome::Parked),
                Step::Next => {
                    if let Some(t) = sub.stack.last_mut() {
                        t.pos += 1 + payload_len;
                    }
                }
                Step::Push(c) => {
                    if let Some(t) = sub.stack.last_mut() {
                        t.pos += 1 + payload_len;
                    }
                    if sub.stack.len() >= MAX_IB_DEPTH {
                        return Err(at(CpErrorKind::TooDeep));
                    }
                    sub.stack.push(c);
                }
            }
        }
        Ok(RunOutcome::Done)
    }

    fn payload(&self, mem: &AddressSpace, c: Cursor, count: u32) -> Result<Vec<u32>, CpErrorKind> {
        if u64::from(c.pos) + 1 + u64::from(count) > u64::from(c.len) {
            return Err(CpErrorKind::Truncated {
                count: count + 1,
                len: c.len,
            });
        }
        read_u32s(
            mem,
            c.base + 4 * (u64::from(c.pos) + 1),
            count as usize,
            "IB read",
        )
    }

    fn opcode(
        &mut self,
        opc: u32,
        p: &[u32],
        mem: &AddressSpace,
        cu: &mut dyn ComputeUnit,
    ) -> Result<Step, CpErrorKind> {
        match opc {
            op::NOP
            | op::WAIT_MEM_WRITES
            | op::WAIT_FOR_ME
            | op::WAIT_FOR_IDLE
            | op::SET_MODE
            | op::SET_MARKER => Ok(Step::Next),
            op::RUN_OPENCL => Err(CpErrorKind::RunOpenClRefused),
            op::WAIT_REG_MEM => {
                need(opc, p, 5)?;
                let func = p[0] & 7;
                let signed = p[0] & 8 != 0;
                let value = if (p[0] >> 4) & 3 == 1 {
                    let a = addr64(p[1], p[2]);
                    read_u32s(mem, a, 1, "CP_WAIT_REG_MEM poll")?[0]
                } else {
                    self.regs.get(p[1] & 0x3ffff)
                };
                Ok(if compare(func, signed, value & p[4], p[3]) {
                    Step::Next
                } else {
                    Step::Park
                })
            }
            op::WAIT_MEM_GTE => {
                need(opc, p, 4)?;
                let a = addr64(p[1], p[2]);
                let v = read_u32s(mem, a, 1, "CP_WAIT_MEM_GTE poll")?[0];
                Ok(if compare(5, true, v, p[3]) {
                    Step::Next
                } else {
                    Step::Park
                })
            }
            op::MEM_WRITE => {
                need(opc, p, 2)?;
                let a = addr64(p[0], p[1]);
                for (i, v) in p[2..].iter().enumerate() {
                    write_u32(mem, a + 4 * i as u64, *v, "CP_MEM_WRITE")?;
                }
                Ok(Step::Next)
            }
            op::REG_TO_MEM => {
                need(opc, p, 3)?;
                let first = p[0] & 0x3ffff;
                let cnt = ((p[0] >> 18) & 0xfff).max(1);
                let a = addr64(p[1], p[2]);
                if first == reg::CP_ALWAYS_ON_COUNTER {
                    let t = always_on_counter();
                    self.regs.set(first, t as u32);
                    self.regs.set(first + 1, (t >> 32) as u32);
                }
                for i in 0..cnt {
                    write_u32(
                        mem,
                        a + 4 * u64::from(i),
                        self.regs.get(first + i),
                        "CP_REG_TO_MEM",
                    )?;
                }
                Ok(Step::Next)
            }
            op::REG_WRITE => {
                need(opc, p, 3)?;
                self.regs.set(p[1] & 0x3ffff, p[2]);
                Ok(Step::Next)
            }
            op::INDIRECT_BUFFER => {
                need(opc, p, 3)?;
                Ok(Step::Push(Cursor {
                    base: addr64(p[0], p[1]),
                    len: p[2] & 0xfffff,
                    pos: 0,
                }))
            }
            op::EVENT_WRITE => {
                need(opc, p, 1)?;
                // Timestamp events (CACHE_FLUSH_TS and the other *_TS) carry an
                // address and a value to store after the flush.
                if p.len() >= 4 {
                    write_u32(mem, addr64(p[1], p[2]), p[3], "CP_EVENT_WRITE")?;
                }
                Ok(Step::Next)
            }
            op::MEM_TO_MEM => {
                need(opc, p, 7)?;
                self.mem_to_mem(p, mem)?;
                Ok(Step::Next)
            }
            op::LOAD_STATE6 | op::LOAD_STATE6_FRAG | op::LOAD_STATE6_GEOM => {
                need(opc, p, 3)?;
                self.load_state(p, mem)?;
                Ok(Step::Next)
            }
            op::EXEC_CS => {
                need(opc, p, 4)?;
                self.dispatch([p[1], p[2], p[3]], mem, cu)?;
                Ok(Step::Next)
            }
            op::EXEC_CS_INDIRECT => {
                need(opc, p, 4)?;
                let groups = read_u32s(mem, addr64(p[1], p[2]), 3, "CP_EXEC_CS_INDIRECT")?;
                let l = p[3];
                let nd0 = self.regs.get(reg::SP_CS_NDRANGE_0) & 3;
                self.regs.set(
                    reg::SP_CS_NDRANGE_0,
                    nd0 | (((l >> 2) & 0x3ff) << 2)
                        | (((l >> 12) & 0x3ff) << 12)
                        | (((l >> 22) & 0x3ff) << 22),
                );
                self.dispatch([groups[0], groups[1], groups[2]], mem, cu)?;
                Ok(Step::Next)
            }
            _ => Err(CpErrorKind::UnknownOpcode { op: opc }),
        }
    }

    fn dispatch(
        &mut self,
        groups: [u32; 3],
        mem: &AddressSpace,
        cu: &mut dyn ComputeUnit,
    ) -> Result<(), CpErrorKind> {
        if groups.contains(&0) {
            return Ok(());
        }
        let d = CsDispatch::from_registers(&self.regs, &self.state, groups);
        cu.exec_cs(&d, mem).map_err(CpErrorKind::Compute)
    }

    fn mem_to_mem(&mut self, p: &[u32], mem: &AddressSpace) -> Result<(), CpErrorKind> {
        let double = p[0] & (1 << 29) != 0;
        let n_src = if p.len() >= 9 { 3 } else { 2 };
        let words = if double { 2 } else { 1 };
        let dst = addr64(p[1], p[2]);
        let mut acc: i64 = 0;
        for i in 0..n_src {
            let a = addr64(p[3 + 2 * i], p[4 + 2 * i]);
            let v = read_u32s(mem, a, words, "CP_MEM_TO_MEM source")?;
            let val = if double {
                addr64(v[0], v[1]) as i64
            } else {
                i64::from(v[0] as i32)
            };
            let neg = p[0] & (1 << i) != 0;
            acc = if neg {
                acc.wrapping_sub(val)
            } else {
                acc.wrapping_add(val)
            };
        }
        write_u32(mem, dst, acc as u32, "CP_MEM_TO_MEM")?;
        if double {
            write_u32(mem, dst + 4, (acc >> 32) as u32, "CP_MEM_TO_MEM")?;
        }
        Ok(())
    }

    fn load_state(&mut self, p: &[u32], mem: &AddressSpace) -> Result<(), CpErrorKind> {
        const ST6_SHADER: u32 = 0;
        const ST6_CONSTANTS: u32 = 1;
        const ST6_UBO: u32 = 2;
        const ST6_UAV: u32 = 3;
        const SS6_DIRECT: u32 = 0;
        const SS6_INDIRECT: u32 = 2;
        const SB6_CS_TEX: u32 = 5;
        const SB6_CS_SHADER: u32 = 0xd;
        const SB6_CS_UAV: u32 = 0xf;
        let dst_off = (p[0] & 0x3fff) as usize;
        let ty = (p[0] >> 14) & 3;
        let src = (p[0] >> 16) & 3;
        let block = (p[0] >> 18) & 0xf;
        let units = (p[0] >> 22) as usize;
        let unit_dwords = match (ty, block) {
            (ST6_CONSTANTS, SB6_CS_SHADER) => 4,
            (ST6_SHADER, SB6_CS_SHADER) => 32,
            (ST6_CONSTANTS, SB6_CS_TEX) => 16,
            (ST6_SHADER, SB6_CS_TEX) => 4,
            (ST6_UAV, SB6_CS_SHADER | SB6_CS_UAV) => 16,
            (ST6_UBO, SB6_CS_SHADER) => 2,
            // Other stages' state is accepted and ignored: compute never reads it.
            _ => return Ok(()),
        };
        let n = units * unit_dwords;
        let data = match src {
            SS6_DIRECT => {
                let mut d = p.get(3..).unwrap_or(&[]).to_vec();
                d.resize(n, 0);
                d
            }
            SS6_INDIRECT => read_u32s_tolerant(mem, addr64(p[1] & !3, p[2]), n),
            _ => return Err(CpErrorKind::LoadState { src, ty, block }),
        };
        let s = &mut self.state;
        match (ty, block) {
            (ST6_CONSTANTS, SB6_CS_SHADER) => {
                let start = dst_off * 4;
                for (i, v) in data.iter().enumerate() {
                    if let Some(slot) = s.consts.get_mut(start + i) {
                        *slot = *v;
                    }
                }
                debug_assert_eq!(s.consts.len(), CONST_DWORDS);
            }
            (ST6_SHADER, SB6_CS_SHADER) => {} // executed from SP_CS_BASE
            (ST6_CONSTANTS, SB6_CS_TEX) => store_descs(&mut s.textures, dst_off, &data),
            (ST6_SHADER, SB6_CS_TEX) => store_descs(&mut s.samplers, dst_off, &data),
            (ST6_UAV, _) => store_descs(&mut s.uavs, dst_off, &data),
            _ => {
                for (i, c) in data.chunks_exact(2).enumerate() {
                    let slot = dst_off + i;
                    if s.ubos.len() <= slot {
                        s.ubos.resize(slot + 1, 0);
                    }
                    s.ubos[slot] = addr64(c[0], c[1]);
                }
            }
        }
        Ok(())
    }
}

fn store_descs<const N: usize>(slots: &mut Vec<[u32; N]>, first: usize, data: &[u32]) {
    for (i, c) in data.chunks_exact(N).enumerate() {
        let slot = first + i;
        if slots.len() <= slot {
            slots.resize(slot + 1, [0; N]);
        }
        slots[slot].copy_from_slice(c);
    }
}
