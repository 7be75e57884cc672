//! `wavejit agx run`: lift an AGX (G13) compute program and run it on the IR engines.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use wavejit::frontend::agx;
use wavejit::frontend::agx::lift::{AgxDispatch, LiftConfig, Mode, lift};
use wavejit::runtime::AddressSpace;

use super::buffers::{TypedValues, parse_dims};
use super::ir::EngineChoice;
use super::{CliError, fault_exit, usage};

#[derive(Args)]
pub struct AgxRunArgs {
    /// Raw AGX machine code, or Mesa-syntax assembly if the name ends in `.s`.
    file: PathBuf,
    /// Threadgroups along X,Y,Z.
    #[arg(long, default_value = "1")]
    grid: String,
    /// Threads per threadgroup along X,Y,Z.
    #[arg(long, default_value = "1")]
    block: String,
    /// Total threads X,Y,Z instead of --grid (need not be a multiple of --block).
    #[arg(long)]
    threads: Option<String>,
    /// A device buffer TYPE:VALUES (e.g. f32:1,2,3 or u32:0*64); buffer i's address
    /// goes to u(2i)_u(2i+1).
    #[arg(long = "buf")]
    bufs: Vec<String>,
    /// A 32-bit uniform `N=VALUE` (u<N>), after the buffer addresses.
    #[arg(long = "uniform")]
    uniforms: Vec<String>,
    /// Threadgroup memory bytes.
    #[arg(long, default_value_t = 0)]
    tg_mem: u32,
    /// Allocated registers (1..=128).
    #[arg(long, default_value_t = 128)]
    gprs: u32,
    /// Constant program run once before the kernel (raw or `.s`); its
    /// uniform_stores update the uniform file.
    #[arg(long)]
    preamble: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = EngineChoice::Jit)]
    engine: EngineChoice,
}

fn read_code(path: &PathBuf) -> Result<Vec<u8>, CliError> {
    if path.extension().is_some_and(|e| e == "s") {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(agx::assemble(&text).map_err(|e| format!("{}:{e}", path.display()))?)
    } else {
        Ok(std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?)
    }
}

fn parse_uniform(spec: &str) -> Result<(usize, u32), CliError> {
    let bad = |what: &str| usage(format!("--uniform `{spec}`: {what}"));
    let (n, v) = spec
        .split_once('=')
        .ok_or_else(|| bad("expected N=VALUE"))?;
    let n: usize = n
        .trim_start_matches('u')
        .parse()
        .map_err(|e| bad(&format!("register: {e}")))?;
    let v = v.trim();
    let v = match v.strip_prefix("0x") {
        Some(h) => u32::from_str_radix(h, 16).map_err(|e| bad(&format!("value: {e}")))?,
        None => match v.parse::<i64>() {
            Ok(i) => i as u32,
            Err(_) => v
                .parse::<f32>()
                .map_err(|e| bad(&format!("value: {e}")))?
                .to_bits(),
        },
    };
    Ok((n, v))
}

pub fn run(a: AgxRunArgs) -> Result<ExitCode, CliError> {
    let code = read_code(&a.file)?;
    let block = parse_dims(&a.block)?;
    let mut dispatch = match &a.threads {
        Some(t) => AgxDispatch::new(parse_dims(t)?, block),
        None => {
            let groups = parse_dims(&a.grid)?;
            // AGX grids count threads in 32 bits per dimension; a product
            // past that would silently run a smaller grid.
            for (d, axis) in ["x", "y", "z"].iter().enumerate() {
                let threads = u64::from(groups[d]) * u64::from(block[d]);
                if threads > u64::from(u32::MAX) {
                    return Err(usage(format!(
                        "--grid {} x --block {} = {threads} threads along {axis} exceed the \
                         AGX limit of {} threads per dimension",
                        groups[d],
                        block[d],
                        u32::MAX
                    )));
                }
            }
            AgxDispatch::from_threadgroups(groups, block)
        }
    };
    let config = LiftConfig {
        name: a.file.display().to_string(),
        gpr_count: a.gprs,
        threadgroup_memory: a.tg_mem,
        // One dispatch: the kernel can be for its grid.
        grid: Some(dispatch.grid()),
        ..LiftConfig::default()
    };
    let kernel = lift(&code, &config).map_err(|e| format!("{}: {e}", a.file.display()))?;
    wavejit::ir::verify::verify(&kernel)?;
    let mem = AddressSpace::new();
    let mut bufs = Vec::new();
    for (i, spec) in a.bufs.iter().enumerate() {
        let v = TypedValues::parse(spec)?;
        let addr = mem.alloc(v.bytes.len().max(1) as u64)?;
        mem.write_bytes(addr, &v.bytes)?;
        dispatch
            .bind_buffer(i, addr)
            .map_err(|e| usage(format!("--buf `{spec}`: {e}")))?;
        bufs.push((addr, v));
    }
    for spec in &a.uniforms {
        let (n, v) = parse_uniform(spec)?;
        dispatch
            .set_u32(n, v)
            .map_err(|e| usage(format!("--uniform `{spec}`: {e}")))?;
    }
    let engine = a.engine.engine();
    if let Some(path) = &a.preamble {
        let pre_code = read_code(path)?;
        let pre = lift(
            &pre_code,
            &LiftConfig {
                name: path.display().to_string(),
                mode: Mode::Preamble,
                ..LiftConfig::default()
            },
        )
        .map_err(|e| format!("{}: {e}", path.display()))?;
        wavejit::ir::verify::verify(&pre)?;
        let file = dispatch.uniform_file_bytes();
        let addr = mem.alloc(file.len() as u64)?;
        mem.write_bytes(addr, &file)?;
        if let Err(fault) = engine.run(&pre, &dispatch.preamble_dispatch(addr), &mem) {
            let text = agx::lift::describe_fault(&pre_code, &fault);
            eprintln!("fault in the preamble {}: {text}", path.display());
            return Ok(fault_exit());
        }
        dispatch.set_uniform_file_bytes(&mem.read_bytes(addr, file.len())?);
    }
    let d = dispatch.dispatch()?;
    let progress = super::RunProgress::start(d.work_items(), engine.name());
    let start = Instant::now();
    let result = engine.run(&kernel, &d, &mem);
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
            eprintln!("fault: {}", agx::lift::describe_fault(&code, &fault));
            Ok(fault_exit())
        }
    }
}
