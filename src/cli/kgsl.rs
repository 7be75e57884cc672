//! `wavejit kgsl replay`: run a captured KGSL submission offline.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use wavejit::runtime::kgsl::capture::Capture;

use super::CliError;
use super::buffers::{Elem, TypedValues};

#[derive(Subcommand)]
pub enum KgslCommand {
    /// Replay a capture written under WAVEJIT_KGSL_CAPTURE=DIR.
    Replay {
        file: PathBuf,
        /// Print memory after the replay: ADDR:COUNT[:TYPE] (TYPE defaults to u32).
        #[arg(long)]
        dump: Vec<String>,
    },
}

pub fn run(cmd: KgslCommand) -> Result<ExitCode, CliError> {
    let KgslCommand::Replay { file, dump } = cmd;
    let cap = Capture::load(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let mem = cap.memory()?;
    let mut cu = wavejit::runtime::kgsl::compute_unit();
    let outcome = cap.replay(&mem, cu.as_mut())?;
    println!(
        "{}: {} IB(s), {} region(s): {outcome:?}",
        file.display(),
        cap.ibs.len(),
        cap.regions.len()
    );
    for d in &dump {
        let (addr, count, elem) = parse_dump(d)?;
        let bytes = mem.read_bytes(addr, count * elem.size())?;
        println!("{addr:#x}: {}", TypedValues::format(elem, &bytes));
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_dump(s: &str) -> Result<(u64, usize, Elem), CliError> {
    let mut parts = s.split(':');
    let addr = parts.next().unwrap_or_default();
    let addr = u64::from_str_radix(addr.trim_start_matches("0x"), 16)
        .map_err(|e| format!("`{s}`: address: {e}"))?;
    let count: usize = parts
        .next()
        .ok_or_else(|| format!("`{s}`: expected ADDR:COUNT[:TYPE]"))?
        .parse()
        .map_err(|e| format!("`{s}`: count: {e}"))?;
    let elem = match parts.next() {
        Some(t) => TypedValues::parse(&format!("{t}:0"))?.elem,
        None => Elem::U32,
    };
    Ok((addr, count, elem))
}
