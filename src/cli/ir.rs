//! `wavejit ir check|run`: the IR text form from the command line.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Subcommand, ValueEnum};
use wavejit::ir::{Dispatch, Engine, Kernel};
use wavejit::runtime::AddressSpace;

use super::buffers::{TypedValues, parse_dims};
use super::{CliError, fault_exit};

#[derive(Subcommand)]
pub enum IrCommand {
    /// Parse and verify an IR text file; print every error.
    Check { file: PathBuf },
    /// Run an IR kernel and print its buffers afterwards.
    Run(RunArgs),
}

/// Which engine runs a kernel.
#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum EngineChoice {
    /// The Cranelift JIT.
    Jit,
    /// The golden interpreter.
    Interp,
}

impl EngineChoice {
    pub fn engine(self) -> Box<dyn Engine> {
        match self {
            EngineChoice::Jit => Box::new(wavejit::jit::Jit::default()),
            EngineChoice::Interp => Box::new(wavejit::ir::interp::Interpreter::new()),
        }
    }
}

#[derive(Args)]
pub struct RunArgs {
    file: PathBuf,
    /// Workgroups along X,Y,Z.
    #[arg(long, default_value = "1")]
    grid: String,
    /// Lanes per workgroup along X,Y,Z.
    #[arg(long, default_value = "1")]
    block: String,
    /// A global buffer TYPE:VALUES (e.g. f32:1,2,3 or u32:0*64). Buffer i's address
    /// is the i64 at uniform offset 8*i.
    #[arg(long = "buf")]
    bufs: Vec<String>,
    /// A scalar argument TYPE:VALUE placed in the uniforms after the buffer
    /// addresses, each aligned to its size.
    #[arg(long = "arg")]
    args: Vec<String>,
    /// Lanes per wave.
    #[arg(long, default_value_t = 32)]
    wave: u32,
    #[arg(long, value_enum, default_value_t = EngineChoice::Jit)]
    engine: EngineChoice,
}

pub fn run(cmd: IrCommand) -> Result<ExitCode, CliError> {
    match cmd {
        IrCommand::Check { file } => check(&file),
        IrCommand::Run(args) => run_kernel(args),
    }
}

/// Parses and verifies; errors are `FILE:line:col: message` or the verifier's.
pub fn load(file: &Path) -> Result<Kernel, CliError> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let kernel = wavejit::ir::text::parse(&text).map_err(|e| format!("{}:{e}", file.display()))?;
    Ok(kernel)
}

fn check(file: &Path) -> Result<ExitCode, CliError> {
    let kernel = load(file)?;
    let errors = wavejit::ir::verify::verify_all(&kernel);
    for e in &errors {
        outln!("{}: {e}", file.display());
    }
    if errors.is_empty() {
        outln!(
            "{}: kernel `{}` ok ({} blocks, {} instructions)",
            file.display(),
            kernel.name,
            kernel.blocks.len(),
            kernel.insts.len()
        );
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::FAILURE)
    }
}

fn run_kernel(a: RunArgs) -> Result<ExitCode, CliError> {
    let kernel = load(&a.file)?;
    wavejit::ir::verify::verify(&kernel)?;
    let mem = AddressSpace::new();
    let mut uniforms = Vec::new();
    let mut bufs = Vec::new();
    for spec in &a.bufs {
        let v = TypedValues::parse(spec)?;
        let addr = mem.alloc(v.bytes.len() as u64)?;
        mem.write_bytes(addr, &v.bytes)?;
        uniforms.extend_from_slice(&addr.to_le_bytes());
        bufs.push((addr, v));
    }
    for spec in &a.args {
        let v = TypedValues::parse(spec)?;
        let align = v.elem.size();
        uniforms.resize(uniforms.len().next_multiple_of(align), 0);
        uniforms.extend_from_slice(&v.bytes);
    }
    let mut dispatch = Dispatch::new(parse_dims(&a.grid)?, parse_dims(&a.block)?);
    dispatch.wave_size = a.wave;
    dispatch.uniforms = uniforms;
    let engine = a.engine.engine();
    let progress = super::RunProgress::start(dispatch.work_items(), engine.name());
    let start = Instant::now();
    let result = engine.run(&kernel, &dispatch, &mem);
    let elapsed = start.elapsed();
    drop(progress);
    for (i, (addr, v)) in bufs.iter().enumerate() {
        let bytes = mem.read_bytes(*addr, v.bytes.len())?;
        outln!("buf{i} = {}", TypedValues::format(v.elem, &bytes));
    }
    eprintln!("ran on {} in {elapsed:.2?}", engine.name());
    match result {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(fault) => {
            eprintln!("fault: {fault}");
            Ok(fault_exit())
        }
    }
}
