//! Small hand-assembled kernels of each ISA, following this module's argument
//! ABIs, for tests and the demo.

use wavejit_frontend::rv32::{
    AluImmOp, AluOp, Csr, CsrOp, CsrSrc, Instr, LoadKind, StoreKind, XReg,
};

/// Core address of the RV32 sample's argument block: `in` (u32 core address)
/// at +0, `out` at +4.
pub const RV32_ARGS: u32 = 0x100;

/// RV32: `out[i] = 3 * in[i] + 7` (u32), `i = blockIdx.x * blockDim.x +
/// threadIdx.x` from the ID window; the argument block is at [`RV32_ARGS`].
pub fn rv32_scale_add() -> Result<Vec<u8>, String> {
    let x = XReg;
    let lw = |rd: u8, rs1: u8, offset: i32| Instr::Load {
        kind: LoadKind::Word,
        rd: x(rd),
        rs1: x(rs1),
        offset,
    };
    let op = |op: AluOp, rd: u8, rs1: u8, rs2: u8| Instr::Op {
        op,
        rd: x(rd),
        rs1: x(rs1),
        rs2: x(rs2),
    };
    let imm = |op: AluImmOp, rd: u8, rs1: u8, imm: i32| Instr::OpImm {
        op,
        rd: x(rd),
        rs1: x(rs1),
        imm,
    };
    let args = RV32_ARGS as i32;
    let program = [
        lw(5, 0, args),     // x5 = in
        lw(6, 0, args + 4), // x6 = out
        Instr::Lui {
            rd: x(8),
            imm: wavejit_frontend::rv32::lift::ID_WINDOW_BASE,
        },
        lw(9, 8, 0x00),  // threadIdx.x
        lw(10, 8, 0x10), // blockIdx.x
        lw(11, 8, 0x20), // blockDim.x
        op(AluOp::Mul, 10, 10, 11),
        op(AluOp::Add, 9, 9, 10),
        imm(AluImmOp::Slli, 9, 9, 2),
        op(AluOp::Add, 12, 5, 9),
        lw(13, 12, 0),
        imm(AluImmOp::Addi, 15, 0, 3),
        op(AluOp::Mul, 13, 13, 15),
        imm(AluImmOp::Addi, 13, 13, 7),
        op(AluOp::Add, 16, 6, 9),
        Instr::Store {
            kind: StoreKind::Word,
            rs1: x(16),
            rs2: x(13),
            offset: 0,
        },
        Instr::Ebreak,
    ];
    wavejit_frontend::rv32::encode_program(&program).map_err(|e| format!("rv32 sample: {e}"))
}

/// RV32: every lane writes its mhartid to word `64 * block_linear + local_index`
/// at core address `0x1000` (the datasheet's kernel-exec test, widened to the
/// whole hart id; workgroups of at most 64).
pub fn rv32_hartids() -> Result<Vec<u8>, String> {
    let x = XReg;
    let imm = |op: AluImmOp, rd: u8, rs1: u8, imm: i32| Instr::OpImm {
        op,
        rd: x(rd),
        rs1: x(rs1),
        imm,
    };
    let add = |rd: u8, rs1: u8, rs2: u8| Instr::Op {
        op: AluOp::Add,
        rd: x(rd),
        rs1: x(rs1),
        rs2: x(rs2),
    };
    let program = [
        Instr::Csr {
            op: CsrOp::ReadSet,
            rd: x(6),
            csr: Csr::Mhartid,
            src: CsrSrc::Reg(XReg::ZERO),
        },
        imm(AluImmOp::Srli, 7, 6, 13), // block_linear
        imm(AluImmOp::Slli, 7, 7, 6),
        imm(AluImmOp::Andi, 9, 6, 0x7ff), // warp << 5 | lane
        add(7, 7, 9),
        imm(AluImmOp::Slli, 7, 7, 2),
        Instr::Lui {
            rd: x(8),
            imm: 0x1000,
        },
        add(8, 8, 7),
        Instr::Store {
            kind: StoreKind::Word,
            rs1: x(8),
            rs2: x(6),
            offset: 0,
        },
        Instr::Ebreak,
    ];
    wavejit_frontend::rv32::encode_program(&program).map_err(|e| format!("rv32 sample: {e}"))
}

/// ir3 workgroup size the sample is built for (`i = wgid << 6 | local`).
pub const IR3_WORKGROUP: u16 = 64;

/// The 64-bit address of word `r0.z / 4` of the buffer whose pointer is in const
/// dwords `c`, `c+1`, into register pair `pair`: add.u low, carry, add.u high.
fn ir3_address(c: usize, pair: usize) -> String {
    let comp = ["x", "y", "z", "w"];
    let cl = format!("c{}.{}", c / 4, comp[c % 4]);
    let ch = format!("c{}.{}", (c + 1) / 4, comp[(c + 1) % 4]);
    format!(
        "add.u r{pair}.x, {cl}, r0.z\n\
         cmps.u.lt hr8.x, r{pair}.x, {cl}\n\
         cov.u16u32 r{pair}.z, hr8.x\n\
         add.u r{pair}.y, {ch}, r{pair}.z\n"
    )
}

/// ir3: `out[i] = a[i] + 2 * b[i]` (f32); kernargs `out, a, b` as u64 (const
/// dwords c0.x..c1.y); workgroups of [`IR3_WORKGROUP`].
pub fn ir3_axpy() -> Result<Vec<u8>, String> {
    let src = format!(
        "mov.f32f32 r5.x, (2.000000)\n\
         shl.b r0.y, r48.x, 6\nadd.u r0.y, r0.y, r0.x\nshl.b r0.z, r0.y, 2\n{}{}{}\
         (sy)ldg.f32 r4.x, g[r2.x], 1\nldg.f32 r4.y, g[r3.x], 1\n\
         (sy)mad.f32 r4.z, r4.y, r5.x, r4.x\nstg.f32 g[r1.x], r4.z, 1\nend\n",
        ir3_address(0, 1),
        ir3_address(2, 2),
        ir3_address(4, 3)
    );
    let words = wavejit_frontend::ir3::assemble(&src).map_err(|e| format!("ir3 sample: {e}"))?;
    Ok(words.iter().flat_map(|w| w.to_le_bytes()).collect())
}

/// AGX: `out[i] = a[i] + b[i] + 7` (i32), `i = thread_in_grid_x`; buffers
/// `a, b, out` = kernarg qwords 0, 1, 2 (u0_u1, u2_u3, u4_u5).
pub fn agx_add() -> Result<Vec<u8>, String> {
    let src = "mov r2, thread_in_grid_x
load r3, du0, r2, i32, x, a
load r4, du2, r2, i32, x, a
iadd r5, r3, r4
iadd r5, r5, 7
store r5, du4, r2, i32, x, a
stop";
    wavejit_frontend::agx::assemble(src).map_err(|e| format!("agx sample: {e}"))
}
