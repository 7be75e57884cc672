//! RV32 benchmarks through the GPGPU MMIO device: the kernel is encoded with the
//! project's RV32 encoder, written into VRAM word by word through BAR2, and every
//! run is a driver's launch through BAR0 (kernel address, grid and block dims,
//! DISPATCH, then IRQ_STATUS / ERROR_STATUS checked and acknowledged).

use wavejit_frontend::rv32::{
    AluImmOp, AluOp, Csr, CsrOp, CsrSrc, FReg, FpArithOp, Instr, RoundingMode, StoreKind, XReg,
    encode_program,
};
use wavejit_runtime::mmio::regs::{
    BLOCK_DIM_X, DISPATCH, ERROR_STATUS, GLOBAL_CTRL, GRID_DIM_X, IRQ_ACK, IRQ_ENABLE, IRQ_STATUS,
    KERNEL_ADDR_HI, KERNEL_ADDR_LO, ctrl, irq,
};
use wavejit_runtime::mmio::{DeviceConfig, GpgpuDevice};

use super::side::{ALU_ROUNDS, BenchError, Computation, GROUP, NativeRun, SAXPY_A, SideBySide};

/// VRAM layout: code at 0, x at 16 MiB, y at 32 MiB (saxpy's 16 MiB buffers fit
/// the default 64 MiB VRAM). Both are `lui`-loadable (low 12 bits zero).
const CODE_BASE: u32 = 0;
pub const X_BASE: u32 = 0x0100_0000;
pub const Y_BASE: u32 = 0x0200_0000;
/// Most elements a buffer can hold in that layout.
pub const MAX_ELEMENTS: usize = (Y_BASE - X_BASE) as usize / 4;

pub(super) fn x(n: u8) -> XReg {
    XReg(n)
}

fn f(n: u8) -> FReg {
    FReg(n)
}

pub(super) fn op_imm(op: AluImmOp, rd: u8, rs1: u8, imm: i32) -> Instr {
    Instr::OpImm {
        op,
        rd: x(rd),
        rs1: x(rs1),
        imm,
    }
}

pub(super) fn op(op: AluOp, rd: u8, rs1: u8, rs2: u8) -> Instr {
    Instr::Op {
        op,
        rd: x(rd),
        rs1: x(rs1),
        rs2: x(rs2),
    }
}

fn fp(op: FpArithOp, rd: u8, rs1: u8, rs2: u8) -> Instr {
    Instr::FpArith {
        op,
        rd: f(rd),
        rs1: f(rs1),
        rs2: f(rs2),
        rm: RoundingMode::Rne,
    }
}

/// `li rd, value` as lui + addi (addi sign-extends, so round the upper part).
pub(super) fn li(rd: u8, value: u32) -> [Instr; 2] {
    let upper = value.wrapping_add(0x800) & 0xFFFF_F000;
    let lower = value.wrapping_sub(upper) as i32;
    [
        Instr::Lui {
            rd: x(rd),
            imm: upper,
        },
        op_imm(AluImmOp::Addi, rd, rd, lower),
    ]
}

/// Common head: x6 = global index i = block_linear * GROUP + local (from
/// mhartid = block_linear << 13 | local), x8 = &x[i], x9 = &y[i].
fn index_and_addresses() -> Vec<Instr> {
    let shift = GROUP.trailing_zeros() as i32;
    vec![
        Instr::Csr {
            op: CsrOp::ReadSet,
            rd: x(5),
            csr: Csr::Mhartid,
            src: CsrSrc::Reg(XReg::ZERO),
        },
        op_imm(AluImmOp::Srli, 6, 5, 13),
        op_imm(AluImmOp::Slli, 6, 6, shift),
        op_imm(AluImmOp::Andi, 7, 5, GROUP as i32 - 1),
        op(AluOp::Or, 6, 6, 7),
        op_imm(AluImmOp::Slli, 7, 6, 2),
        Instr::Lui {
            rd: x(8),
            imm: X_BASE,
        },
        op(AluOp::Add, 8, 8, 7),
        Instr::Lui {
            rd: x(9),
            imm: Y_BASE,
        },
        op(AluOp::Add, 9, 9, 7),
        Instr::Flw {
            rd: f(0),
            rs1: x(8),
            offset: 0,
        },
    ]
}

/// The ALU kernel, rounds unrolled (as the IR `alu` kernel is).
pub fn alu_program() -> Vec<Instr> {
    let mut p = index_and_addresses();
    p.extend(li(10, 1.0001f32.to_bits()));
    p.push(Instr::FmvFromInt {
        rd: f(1),
        rs1: x(10),
    });
    p.extend(li(10, 0.5f32.to_bits()));
    p.push(Instr::FmvFromInt {
        rd: f(2),
        rs1: x(10),
    });
    p.extend(li(12, 1_664_525));
    p.extend(li(13, 1_013_904_223));
    p.push(op_imm(AluImmOp::Addi, 11, 6, 0)); // h = i
    for _ in 0..ALU_ROUNDS {
        p.push(fp(FpArithOp::Mul, 0, 0, 1));
        p.push(fp(FpArithOp::Add, 0, 0, 2));
        p.push(op(AluOp::Mul, 11, 11, 12));
        p.push(op(AluOp::Add, 11, 11, 13));
        p.push(op_imm(AluImmOp::Srli, 14, 11, 13));
        p.push(op(AluOp::Xor, 11, 11, 14));
    }
    p.push(Instr::FmvToInt {
        rd: x(15),
        rs1: f(0),
    });
    p.push(op(AluOp::Xor, 15, 15, 11));
    p.push(Instr::Store {
        kind: StoreKind::Word,
        rs1: x(9),
        rs2: x(15),
        offset: 0,
    });
    p.push(Instr::Ebreak);
    p
}

/// saxpy: `y[i] = a * x[i] + y[i]` with fmul.s and fadd.s (no fused multiply-add,
/// like the native loop).
pub fn saxpy_program() -> Vec<Instr> {
    let mut p = index_and_addresses();
    p.push(Instr::Flw {
        rd: f(1),
        rs1: x(9),
        offset: 0,
    });
    p.extend(li(10, SAXPY_A.to_bits()));
    p.push(Instr::FmvFromInt {
        rd: f(2),
        rs1: x(10),
    });
    p.push(fp(FpArithOp::Mul, 3, 2, 0));
    p.push(fp(FpArithOp::Add, 3, 3, 1));
    p.push(Instr::Fsw {
        rs1: x(9),
        rs2: f(3),
        offset: 0,
    });
    p.push(Instr::Ebreak);
    p
}

/// A kernel resident in the device's VRAM with its buffers, plus the native side.
pub struct Rv32Workload {
    name: &'static str,
    device: GpgpuDevice,
    blocks: u32,
    native: NativeRun,
}

impl Rv32Workload {
    /// `n` elements (a multiple of [`GROUP`], at most [`MAX_ELEMENTS`]).
    pub fn new(computation: Computation, n: usize) -> Result<Rv32Workload, BenchError> {
        let name = match computation {
            Computation::Alu => "rv32_alu",
            Computation::Saxpy => "rv32_saxpy",
        };
        let setup = |reason: String| BenchError::Setup {
            bench: name,
            reason,
        };
        if n == 0 || !n.is_multiple_of(GROUP as usize) || n > MAX_ELEMENTS {
            return Err(setup(format!(
                "{n} elements: need a non-zero multiple of {GROUP} up to {MAX_ELEMENTS}"
            )));
        }
        let program = match computation {
            Computation::Alu => alu_program(),
            Computation::Saxpy => saxpy_program(),
        };
        let code = encode_program(&program).map_err(|e| BenchError::Build {
            bench: name,
            reason: e.to_string(),
        })?;
        // One JIT thread, like the native loop and the IR kernels it is
        // compared with: DISPATCH then runs on the thread that writes it, whose
        // CPU clock covers the whole launch (lift, compile, run).
        let config = DeviceConfig {
            jit_threads: Some(1),
            ..DeviceConfig::default()
        };
        let mut device = GpgpuDevice::new(config).map_err(|e| setup(e.to_string()))?;
        // The driver's upload: one 32-bit BAR2 write per instruction word.
        for (i, word) in code.chunks_exact(4).enumerate() {
            let w = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
            device.mmio_write(2, u64::from(CODE_BASE) + 4 * i as u64, 4, u64::from(w));
        }
        let native = NativeRun::new(computation, n);
        // Bulk data goes in as a copy into mapped BAR2 would.
        device
            .vram()
            .write_f32s(u64::from(X_BASE), &native.x)
            .map_err(|e| setup(format!("x at {X_BASE:#x}: {e}")))?;
        device.mmio_write(0, GLOBAL_CTRL, 4, u64::from(ctrl::ENABLE));
        device.mmio_write(0, IRQ_ENABLE, 4, u64::from(irq::ALL));
        let mut w = Rv32Workload {
            name,
            device,
            blocks: (n / GROUP as usize) as u32,
            native,
        };
        w.reset_output()?;
        Ok(w)
    }

    fn reset_output(&mut self) -> Result<(), BenchError> {
        let zeros = vec![0u8; self.native.len() * 4];
        self.device
            .vram()
            .write_bytes(u64::from(Y_BASE), &zeros)
            .map_err(|e| BenchError::Setup {
                bench: self.name,
                reason: format!("zeroing y at {Y_BASE:#x}: {e}"),
            })?;
        self.native.reset();
        Ok(())
    }

    /// The device's y buffer.
    pub fn output(&self) -> Result<Vec<u8>, BenchError> {
        self.device
            .vram()
            .read_bytes(u64::from(Y_BASE), self.native.len() * 4)
            .map_err(|e| BenchError::Readback {
                bench: self.name,
                reason: format!("y at {Y_BASE:#x}: {e}"),
            })
    }

    /// Threads the device's JIT runs a dispatch on (1: the bench's device).
    pub fn jit_threads(&self) -> usize {
        self.device.jit_threads()
    }

    /// Which engine ran the last dispatch ("jit", or "interp" if the JIT refused).
    pub fn engine(&self) -> &'static str {
        self.device.last_report().map_or("none", |r| r.engine)
    }
}

impl SideBySide for Rv32Workload {
    fn name(&self) -> &'static str {
        self.name
    }

    fn output(&self) -> Result<Vec<u8>, BenchError> {
        Rv32Workload::output(self)
    }

    fn engine(&self) -> &'static str {
        Rv32Workload::engine(self)
    }

    fn run(&mut self) -> Result<(), BenchError> {
        let d = &mut self.device;
        d.mmio_write(0, KERNEL_ADDR_LO, 4, u64::from(CODE_BASE));
        d.mmio_write(0, KERNEL_ADDR_HI, 4, 0);
        for (i, (g, b)) in [(self.blocks, GROUP), (1, 1), (1, 1)]
            .into_iter()
            .enumerate()
        {
            d.mmio_write(0, GRID_DIM_X + 4 * i as u64, 4, u64::from(g));
            d.mmio_write(0, BLOCK_DIM_X + 4 * i as u64, 4, u64::from(b));
        }
        d.mmio_write(0, DISPATCH, 4, 1);
        let irq_status = d.mmio_read(0, IRQ_STATUS, 4) as u32;
        let error_status = d.mmio_read(0, ERROR_STATUS, 4) as u32;
        d.mmio_write(0, IRQ_ACK, 4, u64::from(irq_status));
        if irq_status & irq::KERNEL_DONE == 0 || error_status != 0 {
            let fault = d
                .last_fault()
                .map_or_else(|| "no fault recorded".to_string(), |f| f.to_string());
            d.mmio_write(0, ERROR_STATUS, 4, u64::from(error_status));
            return Err(BenchError::Device {
                bench: self.name,
                irq_status,
                error_status,
                fault,
            });
        }
        Ok(())
    }

    fn run_native(&mut self) {
        self.native.run();
    }

    fn agrees(&mut self) -> Result<bool, BenchError> {
        self.reset_output()?;
        self.run()?;
        self.native.run();
        Ok(self.output()? == self.native.output_bytes())
    }
}
