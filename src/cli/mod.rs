//! Subcommands of the `wavejit` binary.

mod agx_run;
mod bench;
mod buffers;
mod demo;
mod ir;
mod isa;
mod kgsl;
mod rv32;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// GPU emulator: JIT-compiles ir3, AGX and RV32 shader binaries to native code.
#[derive(Parser)]
#[command(name = "wavejit", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the built-in demo kernels and print inputs, outputs and timing.
    Demo,
    /// Quick benchmarks: ratios against native Rust measured in the same run.
    Bench {
        /// Print one JSON object instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// The wavejit IR: check and run kernels in its text form.
    Ir {
        #[command(subcommand)]
        command: ir::IrCommand,
    },
    /// Qualcomm Adreno a6xx (ir3) tools.
    Ir3 {
        #[command(subcommand)]
        command: isa::Ir3Command,
    },
    /// The fake KGSL driver (Adreno a630).
    Kgsl {
        #[command(subcommand)]
        command: kgsl::KgslCommand,
    },
    /// Apple G13 (AGX) tools.
    Agx {
        #[command(subcommand)]
        command: isa::AgxCommand,
    },
    /// RV32 SIMT GPGPU (QEMU camp device): disassemble, run on the MMIO device.
    Rv32 {
        #[command(subcommand)]
        command: rv32::Rv32Command,
    },
}

/// A failure of a subcommand, printed as `wavejit: <message>`.
pub type CliError = Box<dyn std::error::Error>;

pub fn run(cli: Cli) -> Result<ExitCode, CliError> {
    match cli.command {
        Command::Demo => demo::run(),
        Command::Bench { json } => bench::run(json),
        Command::Ir { command } => ir::run(command),
        Command::Ir3 { command } => isa::ir3(command),
        Command::Agx { command } => isa::agx(command),
        Command::Kgsl { command } => kgsl::run(command),
        Command::Rv32 { command } => rv32::run(command),
    }
}
