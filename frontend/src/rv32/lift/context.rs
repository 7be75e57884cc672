//! The per-lane context record written when a lane ends (only when the lift
//! options give a context base): final x/f registers and fcsr, for `--regs` and the
//! differential oracle. Record of lane `block_linear * threads_per_block + local`
//! at `context_base + lane * LANE_BYTES`, little-endian u32 words.

use wavejit_ir::{AddrSpace, BlockCall, InstKind, MemAccess, Terminator, Type};

use super::emit::{Emitter, End};
use super::liveness::{FFLAGS, FRM};
use crate::rv32::{FReg, XReg};

/// Byte offset of x0..x31.
pub const X_OFFSET: u64 = 0;
/// Byte offset of f0..f31 (raw bits).
pub const F_OFFSET: u64 = 128;
/// Byte offset of fcsr (frm << 5 | fflags).
pub const FCSR_OFFSET: u64 = 256;
/// Byte offset of the pc of the instruction that ended the lane.
pub const PC_OFFSET: u64 = 260;
/// Byte offset of the "lane ended normally" marker (1).
pub const DONE_OFFSET: u64 = 264;
pub const LANE_BYTES: u64 = 272;

/// Final state of one lane, as read back from its context record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaneContext {
    pub x: [u32; 32],
    pub f: [u32; 32],
    pub fcsr: u32,
    pub pc: u32,
    /// The lane ended with ebreak or `ret` (false: it faulted or never ran).
    pub done: bool,
}

impl LaneContext {
    /// Parses one record; `None` if `bytes` is shorter than [`LANE_BYTES`].
    pub fn parse(bytes: &[u8]) -> Option<LaneContext> {
        if bytes.len() < LANE_BYTES as usize {
            return None;
        }
        let word = |off: u64| {
            let o = off as usize;
            u32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]])
        };
        Some(LaneContext {
            x: std::array::from_fn(|i| word(X_OFFSET + 4 * i as u64)),
            f: std::array::from_fn(|i| word(F_OFFSET + 4 * i as u64)),
            fcsr: word(FCSR_OFFSET),
            pc: word(PC_OFFSET),
            done: word(DONE_OFFSET) == 1,
        })
    }

    pub fn fflags(&self) -> u32 {
        self.fcsr & 0x1f
    }
}

impl Emitter<'_> {
    fn ctx_store(&mut self, off: u64, value: wavejit_ir::Value) {
        let Some(base) = self.pro.and_then(|p| p.ctx) else {
            return;
        };
        let o = self.iconst(Type::I64, off);
        let addr = self.bin(wavejit_ir::IBinOp::Add, base, o);
        let ty = self.k.value_type(value);
        self.inst(
            InstKind::Store(MemAccess::scalar(AddrSpace::Global, ty)),
            &[addr, value],
        );
    }

    /// Writes the lane's context record into the current block (if enabled).
    fn record_exit(&mut self) {
        if self.pro.and_then(|p| p.ctx).is_none() {
            return;
        }
        for r in 0..32u8 {
            let v = self.x(XReg(r));
            self.ctx_store(X_OFFSET + 4 * u64::from(r), v);
        }
        for r in 0..32u8 {
            let v = self.f(FReg(r));
            self.ctx_store(F_OFFSET + 4 * u64::from(r), v);
        }
        let hi = self.bin_imm(wavejit_ir::IBinOp::Shl, self.vals[FRM], 5);
        let fcsr = self.bin(wavejit_ir::IBinOp::Or, hi, self.vals[FFLAGS]);
        self.ctx_store(FCSR_OFFSET, fcsr);
        let pc = self.c32(self.pc.unwrap_or(0));
        self.ctx_store(PC_OFFSET, pc);
        let one = self.c32(1);
        self.ctx_store(DONE_OFFSET, one);
    }

    /// A fresh block that records the lane's state (if enabled) and exits.
    pub fn exit_call(&mut self) -> BlockCall {
        let saved = self.cur;
        let b = self.new_block();
        self.cur = b;
        self.record_exit();
        self.k.set_terminator(b, Terminator::Exit);
        self.cur = saved;
        BlockCall::new(b, &[])
    }

    /// Ends the lane at the end of the current block: right here when the
    /// block has no cycle-limit test to pass first (a jump to an exit block
    /// would cost one more IR block per lane).
    pub fn exit_here(&mut self) {
        if self.check_limit && self.opts.cycle_limit.is_some() {
            let c = self.exit_call();
            self.end(End::Jump(c));
            return;
        }
        self.record_exit();
        self.k.set_terminator(self.cur, Terminator::Exit);
    }
}
