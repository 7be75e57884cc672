//! The lifting context: an IR builder positioned at the current AGX instruction, with
//! the register file, uniform file and execution mask in terms of IR operations.

use std::collections::HashMap;

use wavejit_ir::{
    AddrSpace, Block, BlockCall, Builder, Builtin, CastOp, IBinOp, InstKind, IntCC, MemAccess,
    Terminator, Type, Value,
};

use super::error::LiftError;
use super::scan::Program;
use super::{
    GRID_OFFSET, LiftConfig, Mode, UNIFORM_FILE_ADDR_OFFSET, UNIFORM_FILE_BYTES, trap_code,
};
use crate::agx::{Instr, Operand, OperandKind};

/// The IR integer type of a register width in bits.
pub(crate) fn int_type(bits: u8) -> Type {
    match bits {
        16 => Type::I16,
        64 => Type::I64,
        _ => Type::I32,
    }
}

pub(crate) struct Ctx<'a> {
    pub b: Builder<'a>,
    pub cfg: &'a LiftConfig,
    pub program: &'a Program,
    blocks: HashMap<u64, Block>,
    /// The instruction being lifted.
    pub pc: u64,
    text: String,
    /// The current block still needs a terminator.
    open: bool,
}

impl<'a> Ctx<'a> {
    pub fn new(
        b: Builder<'a>,
        cfg: &'a LiftConfig,
        program: &'a Program,
        blocks: HashMap<u64, Block>,
    ) -> Ctx<'a> {
        Ctx {
            b,
            cfg,
            program,
            blocks,
            pc: cfg.entry,
            text: String::new(),
            open: true,
        }
    }

    // ---------------------------------------------------------------- errors

    pub fn unsupported(&self, instr: &Instr, why: impl Into<String>) -> LiftError {
        LiftError::Unsupported {
            pc: instr.pc,
            text: instr.to_string(),
            why: why.into(),
        }
    }

    fn unsupported_here(&self, why: impl Into<String>) -> LiftError {
        LiftError::Unsupported {
            pc: self.pc,
            text: self.text.clone(),
            why: why.into(),
        }
    }

    // ---------------------------------------------------------------- blocks

    /// The IR block of a leader pc.
    pub fn block_at(&self, pc: u64) -> Result<Block, LiftError> {
        self.blocks
            .get(&pc)
            .copied()
            .ok_or_else(|| self.unsupported_here(format!("no block starts at {pc:#x}")))
    }

    pub fn new_block(&mut self) -> Block {
        self.b.kernel.add_block()
    }

    /// Ends the current block (the instruction lifted a terminator).
    pub fn terminate(&mut self, term: Terminator) {
        self.b.kernel.set_terminator(self.b.block, term);
        self.open = false;
    }

    pub fn jump_to(&mut self, block: Block) {
        self.terminate(Terminator::Jump(BlockCall::new(block, &[])));
    }

    pub fn trap_and_exit(&mut self, code: u32) {
        self.b.ins(InstKind::Trap { code }, &[]);
        self.terminate(Terminator::Exit);
    }

    /// Lane setup: r0 = 0, exec = 1; lanes outside the grid exit at once.
    pub fn emit_prologue(&mut self) -> Result<(), LiftError> {
        self.b.set_srcloc(Some(self.cfg.entry));
        let zero = self.i32c(0);
        self.store_private(0, zero);
        let one = self.i32c(1);
        self.store_private(self.exec_offset(), one);
        let mut inside = self.i1c(true);
        for d in 0..3u8 {
            let id = self.b.ins(InstKind::Builtin(Builtin::WorkgroupId(d)), &[]);
            let size = self
                .b
                .ins(InstKind::Builtin(Builtin::WorkgroupSize(d)), &[]);
            let local = self.b.ins(InstKind::Builtin(Builtin::LocalId(d)), &[]);
            let base = self.bin(IBinOp::Mul, id, size);
            let gid = self.bin(IBinOp::Add, base, local);
            let grid = match self.cfg.grid {
                Some(g) => self.i32c(g.threads[usize::from(d)]),
                None => self.load_uniform_bytes(Type::I32, GRID_OFFSET + 4 * u32::from(d)),
            };
            let ok = self.icmp(IntCC::Ult, gid, grid);
            inside = self.bin(IBinOp::And, inside, ok);
        }
        let start = self.block_at(self.cfg.entry)?;
        let out = self.new_block();
        self.terminate(Terminator::Branch {
            cond: inside,
            then: BlockCall::new(start, &[]),
            otherwise: BlockCall::new(out, &[]),
        });
        self.b.switch_to(out);
        self.terminate(Terminator::Exit);
        Ok(())
    }

    /// Positions the builder at `instr`, starting its block if it is a leader.
    pub fn at_instruction(&mut self, _index: usize, instr: &Instr) -> Result<(), LiftError> {
        self.pc = instr.pc;
        self.text = instr.to_string();
        if let Some(&block) = self.blocks.get(&instr.pc) {
            if self.open && block != self.b.block {
                self.jump_to(block);
            }
            self.b.switch_to(block);
            self.open = true;
        }
        if !self.open {
            // Reachable code always follows a leader; this is a scan invariant.
            return Err(self.unsupported(instr, "instruction outside any block"));
        }
        self.b.set_srcloc(Some(instr.pc));
        Ok(())
    }

    /// Closes the last block and the blocks of fall-through pcs past the end.
    pub fn finish(&mut self) {
        if self.open {
            self.trap_and_exit(trap_code::FELL_OFF_END);
        }
        let len = self.program.len as u64;
        let past: Vec<(u64, Block)> = self
            .blocks
            .iter()
            .filter(|(pc, _)| **pc >= len)
            .map(|(pc, b)| (*pc, *b))
            .collect();
        for (pc, block) in past {
            self.b.switch_to(block);
            self.b.set_srcloc(Some(pc));
            self.trap_and_exit(trap_code::FELL_OFF_END);
        }
    }

    // ---------------------------------------------------------------- values

    pub fn iconst(&mut self, ty: Type, v: u64) -> Value {
        self.b.iconst(ty, v)
    }
    pub fn i1c(&mut self, v: bool) -> Value {
        self.b.iconst(Type::I1, u64::from(v))
    }
    pub fn i16c(&mut self, v: u16) -> Value {
        self.b.iconst(Type::I16, u64::from(v))
    }
    pub fn i32c(&mut self, v: u32) -> Value {
        self.b.iconst(Type::I32, u64::from(v))
    }
    pub fn i64c(&mut self, v: u64) -> Value {
        self.b.iconst(Type::I64, v)
    }
    pub fn f32c(&mut self, v: f32) -> Value {
        self.b.f32const(v)
    }
    pub fn bin(&mut self, op: IBinOp, a: Value, b: Value) -> Value {
        self.b.ins(InstKind::IBinary(op), &[a, b])
    }
    pub fn icmp(&mut self, cc: IntCC, a: Value, b: Value) -> Value {
        self.b.ins(InstKind::Icmp(cc), &[a, b])
    }
    pub fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        self.b.ins(InstKind::Select, &[c, a, b])
    }
    pub fn cast(&mut self, op: CastOp, to: Type, v: Value) -> Value {
        self.b.ins(InstKind::Cast { op, to }, &[v])
    }
    pub fn ty(&self, v: Value) -> Type {
        self.b.kernel.value_type(v)
    }
    pub fn not1(&mut self, v: Value) -> Value {
        let t = self.i1c(true);
        self.bin(IBinOp::Xor, v, t)
    }

    /// Integer `v` resized to `to` (truncating, or extending by `signed`).
    pub fn resize(&mut self, v: Value, to: Type, signed: bool) -> Value {
        let from = self.ty(v);
        let v = if from.is_float() {
            self.cast(CastOp::Bitcast, from.as_int(), v)
        } else {
            v
        };
        let from = self.ty(v);
        match from.bits().cmp(&to.bits()) {
            std::cmp::Ordering::Equal => v,
            std::cmp::Ordering::Less => {
                let op = if signed { CastOp::Sext } else { CastOp::Zext };
                self.cast(op, to, v)
            }
            std::cmp::Ordering::Greater => self.cast(CastOp::Trunc, to, v),
        }
    }

    // ---------------------------------------------------------------- memory

    pub fn exec_offset(&self) -> u32 {
        4 * self.cfg.gpr_count
    }

    fn access(space: AddrSpace, ty: Type) -> MemAccess {
        let mut a = MemAccess::scalar(space, ty);
        a.align = a.align.min(4);
        a
    }

    pub fn load_private(&mut self, ty: Type, offset: u32) -> Value {
        let addr = self.i32c(offset);
        self.b.ins(
            InstKind::Load(Self::access(AddrSpace::Private, ty)),
            &[addr],
        )
    }

    pub fn store_private(&mut self, offset: u32, v: Value) {
        let ty = self.ty(v);
        let addr = self.i32c(offset);
        self.b.ins(
            InstKind::Store(Self::access(AddrSpace::Private, ty)),
            &[addr, v],
        );
    }

    pub fn load_uniform_bytes(&mut self, ty: Type, offset: u32) -> Value {
        let addr = self.i32c(offset);
        self.b.ins(
            InstKind::Load(Self::access(AddrSpace::Uniform, ty)),
            &[addr],
        )
    }

    /// Global address of uniform byte `offset` in a preamble's writable uniform file.
    pub fn uniform_file_addr(&mut self, offset: u32) -> Value {
        let base = self.load_uniform_bytes(Type::I64, UNIFORM_FILE_ADDR_OFFSET);
        let off = self.i64c(u64::from(offset));
        self.bin(IBinOp::Add, base, off)
    }

    // ---------------------------------------------------------------- exec

    /// This lane's exec flag as `i1`.
    pub fn exec(&mut self) -> Value {
        let e = self.load_private(Type::I32, self.exec_offset());
        let z = self.i32c(0);
        self.icmp(IntCC::Ne, e, z)
    }

    pub fn set_exec(&mut self, active: Value) {
        let v = self.resize(active, Type::I32, false);
        self.store_private(self.exec_offset(), v);
    }

    /// Opens a region only lanes with exec run; returns the join block for
    /// [`Ctx::end_exec_region`].
    pub fn begin_exec_region(&mut self) -> Block {
        let c = self.exec();
        let body = self.new_block();
        let join = self.new_block();
        self.terminate(Terminator::Branch {
            cond: c,
            then: BlockCall::new(body, &[]),
            otherwise: BlockCall::new(join, &[]),
        });
        self.b.switch_to(body);
        self.open = true;
        join
    }

    pub fn end_exec_region(&mut self, join: Block) {
        self.jump_to(join);
        self.b.switch_to(join);
        self.open = true;
    }

    // ---------------------------------------------------------------- registers

    fn check_reg(&self, half: i32, bits: u8) -> Result<u32, LiftError> {
        let last_half = half as i64 + i64::from(bits / 16) - 1;
        let reg = (last_half / 2) as u32;
        if half < 0 || reg >= self.cfg.gpr_count {
            return Err(LiftError::Register {
                pc: self.pc,
                text: self.text.clone(),
                reg,
                gprs: self.cfg.gpr_count,
            });
        }
        Ok(half as u32 * 2)
    }

    fn check_uniform(&self, half: i32, bits: u8) -> Result<u32, LiftError> {
        let end = half as i64 + i64::from(bits / 16);
        if half < 0 || end > i64::from(UNIFORM_FILE_BYTES / 2) {
            return Err(self.unsupported_here(format!("uniform half {half} out of range")));
        }
        Ok(half as u32 * 2)
    }

    /// Raw bits of register half-index `half`, `bits` wide.
    pub fn read_reg(&mut self, half: i32, bits: u8) -> Result<Value, LiftError> {
        let off = self.check_reg(half, bits)?;
        Ok(self.load_private(int_type(bits), off))
    }

    /// Raw bits of uniform half-index `half`, `bits` wide.
    pub fn read_uniform(&mut self, half: i32, bits: u8) -> Result<Value, LiftError> {
        let off = self.check_uniform(half, bits)?;
        let ty = int_type(bits);
        Ok(match self.cfg.mode {
            Mode::Main => self.load_uniform_bytes(ty, off),
            Mode::Preamble => {
                let addr = self.uniform_file_addr(off);
                let mut a = MemAccess::scalar(AddrSpace::Global, ty);
                a.align = a.align.min(2);
                self.b.ins(InstKind::Load(a), &[addr])
            }
        })
    }

    /// Writes `v` (any integer width; resized) to a uniform in a preamble.
    pub fn write_uniform(&mut self, half: i32, bits: u8, v: Value) -> Result<(), LiftError> {
        let off = self.check_uniform(half, bits)?;
        let ty = int_type(bits);
        let v = self.resize(v, ty, false);
        let addr = self.uniform_file_addr(off);
        let mut a = MemAccess::scalar(AddrSpace::Global, ty);
        a.align = a.align.min(2);
        self.b.ins(InstKind::Store(a), &[addr, v]);
        Ok(())
    }

    /// The raw bits of a register, uniform or integer immediate operand at the
    /// operand's own width (immediates: `i32`, value as decoded).
    pub fn read_raw(&mut self, op: &Operand) -> Result<Value, LiftError> {
        match op.kind {
            OperandKind::Reg => self.read_reg(op.value, op.size),
            OperandKind::Uniform => self.read_uniform(op.value, op.size),
            OperandKind::Imm | OperandKind::FImm => Ok(self.i32c(op.value as u32)),
            _ => Err(self.unsupported_here(format!("operand kind {:?}", op.kind))),
        }
    }

    /// An integer operand extended (by `signed`) or truncated to `to`.
    pub fn read_int(&mut self, op: &Operand, to: Type, signed: bool) -> Result<Value, LiftError> {
        let v = self.read_raw(op)?;
        let signed = signed && !matches!(op.kind, OperandKind::Imm | OperandKind::FImm);
        if matches!(op.kind, OperandKind::Imm) && op.value < 0 {
            // Signed immediates (memory indices) are already sign-extended.
            let v = self.cast(CastOp::Sext, Type::I64, v);
            return Ok(self.resize(v, to, true));
        }
        Ok(self.resize(v, to, signed))
    }

    /// Writes register `half` (`bits` wide) without looking at exec.
    pub fn write_reg_raw(&mut self, half: i32, bits: u8, v: Value) -> Result<(), LiftError> {
        let off = self.check_reg(half, bits)?;
        let v = self.resize(v, int_type(bits), false);
        self.store_private(off, v);
        Ok(())
    }

    /// Lane-wise write of a destination: only lanes with exec change it. `v` is
    /// resized (truncated / zero-extended) to the destination width.
    pub fn write_dest(&mut self, op: &Operand, v: Value) -> Result<(), LiftError> {
        match op.kind {
            OperandKind::None => Ok(()),
            OperandKind::Reg => {
                let off = self.check_reg(op.value, op.size)?;
                let ty = int_type(op.size);
                let v = self.resize(v, ty, false);
                let old = self.load_private(ty, off);
                let e = self.exec();
                let new = self.select(e, v, old);
                self.store_private(off, new);
                Ok(())
            }
            _ => Err(self.unsupported_here(format!("destination kind {:?}", op.kind))),
        }
    }

    /// Writes a destination in a region that only active lanes execute.
    pub fn write_dest_active(&mut self, op: &Operand, v: Value) -> Result<(), LiftError> {
        match op.kind {
            OperandKind::None => Ok(()),
            OperandKind::Reg => self.write_reg_raw(op.value, op.size, v),
            _ => Err(self.unsupported_here(format!("destination kind {:?}", op.kind))),
        }
    }
}
