//! Subcommands of the `wavejit` binary.

/// `println!` that returns the write error instead of panicking, so that a
/// closed stdout (`wavejit … | head`) ends the command quietly ([`report`]).
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($t)*)?
    }};
}

/// `print!` that returns the write error (see [`outln`]).
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($t)*)?
    }};
}

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

/// What `--help` says about exit statuses (README.md says the same).
const EXIT_STATUS_HELP: &str = "Exit status:
  0  success (also when stdout is closed early, e.g. `wavejit rv32 disasm BIG | head`)
  1  input that cannot be read or decoded (missing file, undecodable code, bad capture)
  2  usage error: bad arguments or values (clap's status), e.g. --block over the device limit
  3  kernel fault (memory fault, trap, watchdog, time budget, refused dispatch) in
     `ir run`, `agx run`, `rv32 run` and `kgsl replay`";

/// GPU emulator: JIT-compiles ir3, AGX and RV32 shader binaries to native code.
#[derive(Parser)]
#[command(name = "wavejit", version, about, after_help = EXIT_STATUS_HELP)]
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

/// A failure of a subcommand, printed as `wavejit: <message>`: exit status 1,
/// or 2 for a [`UsageError`].
pub type CliError = Box<dyn std::error::Error>;

/// Exit statuses ([`EXIT_STATUS_HELP`]).
pub mod exit {
    /// Input that cannot be read or decoded.
    pub const INPUT: u8 = 1;
    /// Bad arguments (clap exits with the same status for its own).
    pub const USAGE: u8 = 2;
    /// The kernel faulted (or its dispatch was refused).
    pub const FAULT: u8 = 3;
}

/// A command-line value that cannot be used (exit status [`exit::USAGE`]).
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// A [`UsageError`] as a [`CliError`].
pub fn usage(message: impl Into<String>) -> CliError {
    Box::new(UsageError(message.into()))
}

/// The status a kernel fault ends a command with, after its message.
pub fn fault_exit() -> ExitCode {
    ExitCode::from(exit::FAULT)
}

/// Prints a failed command's error and gives its exit status. A write to a
/// closed stdout is not an error: the reader has what it wanted.
pub fn report(e: &(dyn std::error::Error + 'static)) -> ExitCode {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        {
            return ExitCode::SUCCESS;
        }
        cause = c.source();
    }
    eprintln!("wavejit: {e}");
    if e.downcast_ref::<UsageError>().is_some() {
        eprintln!("\nFor more information, try '--help'.");
        ExitCode::from(exit::USAGE)
    } else {
        ExitCode::from(exit::INPUT)
    }
}

/// Whether progress lines go to stderr: only when a person watches it.
pub fn show_progress() -> bool {
    use std::io::IsTerminal as _;
    std::io::stderr().is_terminal()
}

/// Work-items from which a run says on stderr (a terminal) what it is doing.
const LARGE_RUN: u128 = 1 << 20;

/// A progress line for a run of `work_items` lanes, erased by dropping it.
pub struct RunProgress(bool);

impl RunProgress {
    pub fn start(work_items: u128, engine: &str) -> RunProgress {
        let show = work_items >= LARGE_RUN && show_progress();
        if show {
            eprint!("running {work_items} work-items on {engine}…");
        }
        RunProgress(show)
    }
}

impl Drop for RunProgress {
    fn drop(&mut self) {
        if self.0 {
            eprint!("\r\x1b[K");
        }
    }
}

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
