//! Loads and stores: guest addresses are 32-bit VRAM offsets in the global space.
//! Loads from the read-only ID window (0x8000_0000 + off) read the lane's IDs;
//! stores there fault like any unmapped address. Accesses need no alignment
//! (performed as qemu-user does).

use wavejit_ir::{
    AddrSpace, BlockCall, Builtin, CastOp, IBinOp, InstKind, IntCC, MemAccess, Terminator, Type,
    Value,
};

use super::emit::Emitter;
use crate::rv32::{FReg, LoadKind, StoreKind, XReg};

/// Base of the ID window in the core address space.
pub const ID_WINDOW_BASE: u32 = 0x8000_0000;
/// Size of the ID window (offsets without an ID read 0).
pub const ID_WINDOW_SIZE: u32 = 0x1000;

/// A load's shape: memory bits, sign extension, result type.
#[derive(Clone, Copy)]
pub struct LoadShape {
    pub bits: u8,
    pub signed: bool,
    pub ty: Type,
}

impl LoadShape {
    pub fn of(kind: LoadKind) -> LoadShape {
        let (bits, signed) = match kind {
            LoadKind::Byte => (8, true),
            LoadKind::Half => (16, true),
            LoadKind::Word => (32, false),
            LoadKind::ByteUnsigned => (8, false),
            LoadKind::HalfUnsigned => (16, false),
        };
        LoadShape {
            bits,
            signed,
            ty: Type::I32,
        }
    }

    pub const F32: LoadShape = LoadShape {
        bits: 32,
        signed: false,
        ty: Type::F32,
    };
}

fn access(shape: LoadShape) -> MemAccess {
    MemAccess {
        space: AddrSpace::Global,
        ty: shape.ty,
        bits: shape.bits,
        count: 1,
        signed: shape.signed,
        align: 1,
    }
}

impl Emitter<'_> {
    fn guest_addr(&mut self, rs1: XReg, offset: i32) -> Value {
        let base = self.x(rs1);
        self.bin_imm(IBinOp::Add, base, offset as u32)
    }

    fn global_load(&mut self, addr32: Value, shape: LoadShape) -> Value {
        let a = self.cast(CastOp::Zext, Type::I64, addr32);
        self.ins(InstKind::Load(access(shape)), &[a])
    }

    /// The ID-window word selected by `off` (window offset), then the bytes the
    /// load asks for.
    fn window_load(&mut self, off: Value, shape: LoadShape) -> Value {
        let word_index = self.bin_imm(IBinOp::ShrU, off, 2);
        let mut entries: Vec<(u32, Builtin)> = vec![(0x00, Builtin::LocalIndex)];
        for d in 0..3u8 {
            let o = 4 * u32::from(d);
            entries.push((0x10 + o, Builtin::WorkgroupId(d)));
            entries.push((0x20 + o, Builtin::WorkgroupSize(d)));
            entries.push((0x30 + o, Builtin::NumWorkgroups(d)));
        }
        let mut word = self.c32(0);
        for (o, b) in entries {
            let v = self.builtin(b);
            let k = self.c32(o / 4);
            let hit = self.icmp(IntCC::Eq, word_index, k);
            word = self.select(hit, v, word);
        }
        let byte = self.bin_imm(IBinOp::And, off, 3);
        let shift = self.bin_imm(IBinOp::Shl, byte, 3);
        let v = self.bin(IBinOp::ShrU, word, shift);
        let v = if shape.bits < 32 {
            let zero = self.c32(0);
            let width = self.c32(u32::from(shape.bits));
            self.ins(
                InstKind::BitExtract {
                    signed: shape.signed,
                },
                &[v, zero, width],
            )
        } else {
            v
        };
        if shape.ty == Type::F32 {
            self.cast(CastOp::Bitcast, Type::F32, v)
        } else {
            v
        }
    }

    /// A load at x\[rs1\] + offset of the given shape.
    pub fn load(&mut self, rs1: XReg, offset: i32, shape: LoadShape) -> Value {
        if let Some(base) = self.consts.get(rs1) {
            let addr = base.wrapping_add_signed(offset);
            let off = addr.wrapping_sub(ID_WINDOW_BASE);
            if off < ID_WINDOW_SIZE {
                let o = self.c32(off);
                return self.window_load(o, shape);
            }
            let a = self.c32(addr);
            return self.global_load(a, shape);
        }
        // Addresses whose range decides the window test need no run-time test.
        let range = self.ranges.addr(rs1, offset);
        if range.misses(ID_WINDOW_BASE, ID_WINDOW_SIZE) {
            let addr = self.guest_addr(rs1, offset);
            return self.global_load(addr, shape);
        }
        if range.within(ID_WINDOW_BASE, ID_WINDOW_SIZE) {
            let addr = self.guest_addr(rs1, offset);
            let off = self.bin_imm(IBinOp::Sub, addr, ID_WINDOW_BASE);
            return self.window_load(off, shape);
        }
        let addr = self.guest_addr(rs1, offset);
        let off = self.bin_imm(IBinOp::Sub, addr, ID_WINDOW_BASE);
        let size = self.c32(ID_WINDOW_SIZE);
        let in_window = self.icmp(IntCC::Ult, off, size);
        let win = self.new_block();
        let mem = self.new_block();
        let join = self.new_block();
        let result = self.k.add_block_param(join, shape.ty);
        self.k.set_terminator(
            self.cur,
            Terminator::Branch {
                cond: in_window,
                then: BlockCall::new(win, &[]),
                otherwise: BlockCall::new(mem, &[]),
            },
        );
        self.cur = mem;
        let v = self.global_load(addr, shape);
        self.k
            .set_terminator(mem, Terminator::Jump(BlockCall::new(join, &[v])));
        self.cur = win;
        let v = self.window_load(off, shape);
        self.k
            .set_terminator(win, Terminator::Jump(BlockCall::new(join, &[v])));
        self.cur = join;
        result
    }

    pub fn load_x(&mut self, kind: LoadKind, rd: XReg, rs1: XReg, offset: i32) {
        let v = self.load(rs1, offset, LoadShape::of(kind));
        self.set_x(rd, v);
    }

    pub fn load_f(&mut self, rd: FReg, rs1: XReg, offset: i32) {
        let v = self.load(rs1, offset, LoadShape::F32);
        self.set_f(rd, v);
    }

    fn store(&mut self, rs1: XReg, offset: i32, value: Value, bits: u8) {
        let addr = self.guest_addr(rs1, offset);
        let a = self.cast(CastOp::Zext, Type::I64, addr);
        let ty = self.k.value_type(value);
        let acc = MemAccess {
            space: AddrSpace::Global,
            ty,
            bits,
            count: 1,
            signed: false,
            align: 1,
        };
        self.inst(InstKind::Store(acc), &[a, value]);
    }

    pub fn store_x(&mut self, kind: StoreKind, rs1: XReg, rs2: XReg, offset: i32) {
        let v = self.x(rs2);
        let bits = match kind {
            StoreKind::Byte => 8,
            StoreKind::Half => 16,
            StoreKind::Word => 32,
        };
        self.store(rs1, offset, v, bits);
    }

    pub fn store_f(&mut self, rs1: XReg, rs2: FReg, offset: i32) {
        let v = self.f(rs2);
        self.store(rs1, offset, v, 32);
    }
}
