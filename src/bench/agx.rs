//! AGX (G13) benchmarks: Mesa-syntax source assembled by the project's AGX
//! assembler, lifted once, dispatched directly on the JIT with buffers bound to
//! uniform pairs (x → u0_u1, y → u2_u3, saxpy's `a` in u4).

use wavejit_frontend::agx::assemble;
use wavejit_frontend::agx::lift::{AgxDispatch, LiftConfig, lift};
use wavejit_ir::{Dispatch, Engine, Kernel};
use wavejit_jit::Jit;
use wavejit_runtime::AddressSpace;

use super::side::{ALU_ROUNDS, BenchError, Computation, GROUP, NativeRun, SAXPY_A, SideBySide};

/// The ALU kernel, rounds unrolled (as the IR `alu` kernel is). 1.0001 has no
/// 8-bit float immediate, so it comes from a 32-bit `ldimm`.
pub fn alu_source() -> String {
    let mut s = format!(
        "mov r2, thread_in_grid_x
load r3, du0, r2, i32, x, a
wait a
mov r4, r2
ldimm r5, {}
ldimm r6, 1664525
ldimm r7, 1013904223
",
        1.0001f32.to_bits()
    );
    for _ in 0..ALU_ROUNDS {
        s.push_str(
            "fmul r3, r3, r5
fadd r3, r3, 0.5
imadd r4, r4, r6, r7
shr r8, r4, 13
xor r4, r4, r8
",
        );
    }
    s.push_str("xor r9, r3, r4\nstore r9, du2, r2, i32, x, a\nstop\n");
    s
}

/// saxpy with fmul and fadd (no fused multiply-add, like the native loop).
pub const SAXPY_SOURCE: &str = "mov r2, thread_in_grid_x
load r3, du0, r2, i32, x, a
load r4, du2, r2, i32, x, a
wait a
fmul r5, r3, u4
fadd r5, r5, r4
store r5, du2, r2, i32, x, a
stop
";

/// A lifted AGX kernel with its bound buffers, plus the native side.
pub struct AgxWorkload {
    name: &'static str,
    jit: Jit,
    kernel: Kernel,
    dispatch: Dispatch,
    mem: AddressSpace,
    y: u64,
    native: NativeRun,
}

impl AgxWorkload {
    /// `n` elements (a non-zero multiple of [`GROUP`]).
    pub fn new(computation: Computation, n: usize) -> Result<AgxWorkload, BenchError> {
        let name = match computation {
            Computation::Alu => "agx_alu",
            Computation::Saxpy => "agx_saxpy",
        };
        let setup = |reason: String| BenchError::Setup {
            bench: name,
            reason,
        };
        let build = |reason: String| BenchError::Build {
            bench: name,
            reason,
        };
        if n == 0 || !n.is_multiple_of(GROUP as usize) {
            return Err(setup(format!(
                "{n} elements: need a non-zero multiple of {GROUP}"
            )));
        }
        let source = match computation {
            Computation::Alu => alu_source(),
            Computation::Saxpy => SAXPY_SOURCE.to_string(),
        };
        let code = assemble(&source).map_err(|e| build(format!("assembler: {e}")))?;
        let native = NativeRun::new(computation, n);
        let mem = AddressSpace::new();
        let bytes = (n * 4) as u64;
        let (x, y) = match (mem.alloc(bytes), mem.alloc(bytes)) {
            (Ok(x), Ok(y)) => (x, y),
            (Err(e), _) | (_, Err(e)) => return Err(setup(format!("{bytes}-byte buffer: {e}"))),
        };
        mem.write_f32s(x, &native.x)
            .map_err(|e| setup(format!("x at {x:#x}: {e}")))?;
        let mut d =
            AgxDispatch::from_threadgroups([(n / GROUP as usize) as u32, 1, 1], [GROUP, 1, 1]);
        d.bind_buffer(0, x).map_err(|e| setup(e.to_string()))?;
        d.bind_buffer(1, y).map_err(|e| setup(e.to_string()))?;
        if computation == Computation::Saxpy {
            d.set_u32(4, SAXPY_A.to_bits())
                .map_err(|e| setup(e.to_string()))?;
        }
        let dispatch = d.dispatch().map_err(|e| setup(e.to_string()))?;
        // Lifted for this grid, as a driver that knows it at dispatch would.
        let config = LiftConfig {
            name: name.into(),
            grid: Some(d.grid()),
            ..LiftConfig::default()
        };
        let kernel = lift(&code, &config).map_err(|e| build(format!("lifter: {e}")))?;
        let mut w = AgxWorkload {
            name,
            // One thread, like the native loop it is compared with.
            jit: super::jit_with_threads(1),
            kernel,
            dispatch,
            mem,
            y,
            native,
        };
        w.reset_output()?;
        Ok(w)
    }

    fn reset_output(&mut self) -> Result<(), BenchError> {
        let zeros = vec![0u8; self.native.len() * 4];
        self.mem
            .write_bytes(self.y, &zeros)
            .map_err(|e| BenchError::Setup {
                bench: self.name,
                reason: format!("zeroing y at {:#x}: {e}", self.y),
            })?;
        self.native.reset();
        Ok(())
    }

    /// The lifted kernel (what the JIT runs).
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// The device's y buffer.
    pub fn output(&self) -> Result<Vec<u8>, BenchError> {
        self.mem
            .read_bytes(self.y, self.native.len() * 4)
            .map_err(|e| BenchError::Readback {
                bench: self.name,
                reason: format!("y at {:#x}: {e}", self.y),
            })
    }
}

impl SideBySide for AgxWorkload {
    fn name(&self) -> &'static str {
        self.name
    }

    fn output(&self) -> Result<Vec<u8>, BenchError> {
        AgxWorkload::output(self)
    }

    fn run(&mut self) -> Result<(), BenchError> {
        self.jit
            .run(&self.kernel, &self.dispatch, &self.mem)
            .map_err(|f| BenchError::Fault {
                bench: self.name,
                fault: f.to_string(),
            })
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
