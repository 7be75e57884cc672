//! Resumable lane exits: how a lifted kernel hands a lane back to the runtime
//! when the translation cannot go on, and how a later dispatch picks it up.
//!
//! A lifted kernel is a translation of the code the lift discovered. A lane
//! leaves it (like a qemu TB exit) when it
//! - jumps (`jalr`, or a direct jump past the discovery budget) to an address
//!   the translation does not know, or
//! - executes `fence.i` (after which the code it runs must be re-read).
//!
//! It stores its whole guest state to its record in the state area
//! ([`LaneState`], at `base + lane * STATE_BYTES`, lane = block_linear *
//! threads_per_block + local) with a non-zero status and ends its invocation;
//! the other lanes go on (the device has no barriers, so lanes are independent).
//! The runtime then lifts again from the exit pcs (as extra roots, from the
//! code memory as it is now) and runs a resume dispatch of a kernel lifted with
//! [`ResumeConfig::entry`]: its prologue ends every lane whose status is 0, and
//! restores the others and enters the `jalr` hub at their pc. The retired
//! instruction count is part of the state, so the cycle limit counts across
//! resumes.
//!
//! Code written at run time: stores never invalidate a translation by
//! themselves. A lane runs the instructions as they were when its translation
//! was lifted until it executes `fence.i` (or jumps to code the translation
//! does not know, which is read when it is lifted); this is one of the
//! behaviours the RISC-V spec allows without `fence.i` (the fetch may see the
//! old or the new word). After `fence.i` it runs the code as it is in memory
//! then. Each `fence.i` a lane executes costs a resume round.

use wavejit_ir::{AddrSpace, IBinOp, InstKind, MemAccess, Terminator, Type, Value};

use super::emit::{Emitter, var_type};
use super::liveness::{F_BASE, FFLAGS, FRM, ICOUNT, NVARS};
use super::trap::TrapCause;
use wavejit_ir::{BlockCall, IntCC};

/// Byte offset of x1..x31 (slot 0 is unused: x0 is 0).
pub const X_OFFSET: u64 = 0;
/// Byte offset of f0..f31 (raw bits).
pub const F_OFFSET: u64 = 128;
pub const FFLAGS_OFFSET: u64 = 256;
pub const FRM_OFFSET: u64 = 260;
/// Instructions the lane retired so far.
pub const ICOUNT_OFFSET: u64 = 264;
/// Where the lane continues.
pub const PC_OFFSET: u64 = 268;
/// [`STATUS_NONE`], [`STATUS_JUMP`] or [`STATUS_FENCE_I`].
pub const STATUS_OFFSET: u64 = 272;
/// Trap code (index into `LiftedKernel::traps`) of the instruction that left.
pub const SITE_OFFSET: u64 = 276;
pub const STATE_BYTES: u64 = 288;

/// The lane is not waiting (ended, faulted, never ran, or resumed).
pub const STATUS_NONE: u32 = 0;
/// The lane jumped to `pc`, which the translation does not know.
pub const STATUS_JUMP: u32 = 1;
/// The lane executed `fence.i`; it continues at `pc` (the next instruction).
pub const STATUS_FENCE_I: u32 = 2;

/// Lifting with resumable exits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResumeConfig {
    /// Global address of the state area (one [`STATE_BYTES`] record per lane,
    /// zeroed before the first dispatch).
    pub base: u64,
    /// The kernel is a resume dispatch: lanes start from their records.
    pub entry: bool,
}

/// One lane's record in the state area.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaneState {
    pub x: [u32; 32],
    pub f: [u32; 32],
    pub fflags: u32,
    pub frm: u32,
    pub icount: u32,
    pub pc: u32,
    pub status: u32,
    pub site: u32,
}

impl LaneState {
    /// Parses one record; `None` if `bytes` is shorter than [`STATE_BYTES`].
    pub fn parse(bytes: &[u8]) -> Option<LaneState> {
        if bytes.len() < STATE_BYTES as usize {
            return None;
        }
        let word = |off: u64| {
            let o = off as usize;
            u32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]])
        };
        Some(LaneState {
            x: std::array::from_fn(|i| {
                if i == 0 {
                    0
                } else {
                    word(X_OFFSET + 4 * i as u64)
                }
            }),
            f: std::array::from_fn(|i| word(F_OFFSET + 4 * i as u64)),
            fflags: word(FFLAGS_OFFSET),
            frm: word(FRM_OFFSET),
            icount: word(ICOUNT_OFFSET),
            pc: word(PC_OFFSET),
            status: word(STATUS_OFFSET),
            site: word(SITE_OFFSET),
        })
    }
}

/// Offset of a state variable's word in the record.
fn var_offset(var: usize) -> u64 {
    match var {
        v if v < F_BASE => X_OFFSET + 4 * (v as u64 + 1),
        v if v < F_BASE + 32 => F_OFFSET + 4 * (v - F_BASE) as u64,
        FFLAGS => FFLAGS_OFFSET,
        FRM => FRM_OFFSET,
        ICOUNT => ICOUNT_OFFSET,
        // There are no other variables.
        _ => STATE_BYTES - 4,
    }
}

impl Emitter<'_> {
    fn state_addr(&mut self, off: u64) -> Option<Value> {
        let base = self.pro.and_then(|p| p.state)?;
        let o = self.iconst(Type::I64, off);
        Some(self.bin(IBinOp::Add, base, o))
    }

    fn state_store(&mut self, off: u64, value: Value) {
        let Some(addr) = self.state_addr(off) else {
            return;
        };
        let ty = self.k.value_type(value);
        self.inst(
            InstKind::Store(MemAccess::scalar(AddrSpace::Global, ty)),
            &[addr, value],
        );
    }

    fn state_load(&mut self, off: u64, ty: Type) -> Value {
        match self.state_addr(off) {
            Some(addr) => self.ins(
                InstKind::Load(MemAccess::scalar(AddrSpace::Global, ty)),
                &[addr],
            ),
            None => self.iconst(ty, 0),
        }
    }

    /// Stores the current state with `pc`, `status` and `site` into the
    /// lane's record and ends the current block.
    fn leave_here(&mut self, pc: Value, status: u32, site: Value) {
        for v in 0..NVARS {
            let val = self.vals[v];
            self.state_store(var_offset(v), val);
        }
        self.state_store(PC_OFFSET, pc);
        self.state_store(SITE_OFFSET, site);
        let s = self.c32(status);
        self.state_store(STATUS_OFFSET, s);
        self.k.set_terminator(self.cur, Terminator::Exit);
    }

    /// A call (with the current state) of a fresh block that leaves the lane
    /// resumably at guest pc `pc`; the site names the current instruction.
    pub fn resume_call(&mut self, pc: u32, status: u32) -> BlockCall {
        let code = self.site(TrapCause::UnknownJumpTarget, self.pc, self.word);
        let saved = (self.cur, self.vals);
        let vars = self.written_vars.clone();
        let b = self.new_block();
        let mut args = Vec::with_capacity(vars.len());
        for &v in &vars {
            args.push(self.vals[v]);
            let p = self.k.add_block_param(b, var_type(v));
            self.vals[v] = p;
        }
        // Variables nothing writes hold their launch value (0).
        for v in 0..NVARS {
            if !vars.contains(&v) {
                self.vals[v] = self.launch_value(v);
            }
        }
        self.cur = b;
        let target = self.c32(pc);
        let site = self.c32(code);
        self.leave_here(target, status, site);
        (self.cur, self.vals) = saved;
        BlockCall::new(b, &args)
    }

    /// The hub's way out for a target it does not know: `vals` already hold
    /// the hub's state; `site` is the jalr's trap code.
    pub fn hub_leave(&mut self, target: Value, site: Value) {
        self.leave_here(target, STATUS_JUMP, site);
    }

    /// The prologue of a resume dispatch (in the current block, after
    /// [`Emitter::prologue`]): a lane with no waiting record ends; the others
    /// restore their state and enter the hub at their pc.
    pub fn resume_entry(&mut self) {
        let status = self.state_load(STATUS_OFFSET, Type::I32);
        let zero = self.c32(STATUS_NONE);
        let idle = self.icmp(IntCC::Eq, status, zero);
        let done = self.new_block();
        self.k.set_terminator(done, Terminator::Exit);
        let go = self.new_block();
        self.k.set_terminator(
            self.cur,
            Terminator::Branch {
                cond: idle,
                then: BlockCall::new(done, &[]),
                otherwise: BlockCall::new(go, &[]),
            },
        );
        self.cur = go;
        for v in 0..NVARS {
            let val = self.state_load(var_offset(v), var_type(v));
            self.vals[v] = val;
        }
        let pc = self.state_load(PC_OFFSET, Type::I32);
        let none = self.c32(STATUS_NONE);
        self.state_store(STATUS_OFFSET, none);
        let call = self.hub_call(pc);
        self.k.set_terminator(self.cur, Terminator::Jump(call));
    }
}
