//! What the ISA benchmarks (RV32 through the MMIO device, AGX) share: the two
//! computations, their native Rust side with preallocated buffers, and the
//! error a benchmark run reports instead of panicking.

use super::kernels;
use super::timing::Clock;

/// Rounds of the ALU kernel (as in the IR `alu` workload).
pub const ALU_ROUNDS: usize = 64;
/// `a` of saxpy.
pub const SAXPY_A: f32 = 2.5;
/// Work-items per workgroup/block in every ISA benchmark.
pub const GROUP: u32 = 256;

/// The computation a workload does, on the device and natively.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Computation {
    /// `y[i] = bits(f) ^ h` after [`ALU_ROUNDS`] rounds of `f = f*1.0001 + 0.5`
    /// (separate multiply and add) and `h = (h*1664525 + 1013904223); h ^= h >> 13`,
    /// from `f = x[i]`, `h = i`: the same as `kernels::alu_native`.
    Alu,
    /// `y[i] = SAXPY_A * x[i] + y[i]` in place, separate multiply and add.
    Saxpy,
}

/// Why an ISA benchmark could not be set up or run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("{bench}: building the kernel failed: {reason}")]
    Build { bench: &'static str, reason: String },
    #[error("{bench}: setting up buffers failed: {reason}")]
    Setup { bench: &'static str, reason: String },
    #[error(
        "{bench}: dispatch failed (IRQ_STATUS {irq_status:#x}, ERROR_STATUS {error_status:#x}): {fault}"
    )]
    Device {
        bench: &'static str,
        irq_status: u32,
        error_status: u32,
        fault: String,
    },
    #[error("{bench}: kernel faulted: {fault}")]
    Fault { bench: &'static str, fault: String },
    #[error("{bench}: reading the output failed: {reason}")]
    Readback { bench: &'static str, reason: String },
}

/// A kernel on an emulated device next to the same computation in native Rust.
pub trait SideBySide {
    fn name(&self) -> &'static str;
    /// One dispatch on the emulated device, as its driver would issue it.
    fn run(&mut self) -> Result<(), BenchError>;
    /// One run of the native loop over preallocated buffers.
    fn run_native(&mut self);
    /// Resets both outputs, runs each side once and tells whether they agree bit
    /// for bit.
    fn agrees(&mut self) -> Result<bool, BenchError>;
    /// The device's output after its last run.
    fn output(&self) -> Result<Vec<u8>, BenchError>;
    /// What ran the last dispatch (the JIT, unless the device says).
    fn engine(&self) -> &'static str {
        "jit"
    }
    /// The CPU clock the two sides are compared on: the calling thread's when
    /// the device runs on it alone, the whole process's when the device uses
    /// more threads than the 1-thread native loop.
    fn clock(&self) -> Clock {
        Clock::Thread
    }
}

/// The native side: inputs and outputs allocated once, outside the timing.
pub struct NativeRun {
    computation: Computation,
    pub x: Vec<f32>,
    y: Vec<f32>,
    bits: Vec<u32>,
}

impl NativeRun {
    pub fn new(computation: Computation, n: usize) -> NativeRun {
        let (y, bits) = match computation {
            Computation::Alu => (Vec::new(), vec![0; n]),
            Computation::Saxpy => (vec![0.0; n], Vec::new()),
        };
        NativeRun {
            computation,
            x: super::inputs(n),
            y,
            bits,
        }
    }

    pub fn run(&mut self) {
        match self.computation {
            Computation::Alu => kernels::alu_native(&self.x, &mut self.bits, ALU_ROUNDS),
            Computation::Saxpy => kernels::saxpy_native(SAXPY_A, &self.x, &mut self.y),
        }
    }

    /// Output back to zero (saxpy accumulates into it).
    pub fn reset(&mut self) {
        self.y.fill(0.0);
        self.bits.fill(0);
    }

    /// The output as little-endian bytes (what the device buffer holds).
    pub fn output_bytes(&self) -> Vec<u8> {
        match self.computation {
            Computation::Alu => self.bits.iter().flat_map(|v| v.to_le_bytes()).collect(),
            Computation::Saxpy => self.y.iter().flat_map(|v| v.to_le_bytes()).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.x.len()
    }

    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }
}
