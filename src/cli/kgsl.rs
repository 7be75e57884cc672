//! `wavejit kgsl replay`: run a captured KGSL submission offline.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use wavejit::runtime::kgsl::capture::Capture;
use wavejit::runtime::kgsl::pm4::CpErrorKind;

use super::buffers::{Elem, TypedValues};
use super::{CliError, fault_exit, usage};

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
    let outcome = match cap.replay(&mem, cu.as_mut()) {
        Ok(o) => o,
        // The kernel faulted: its own status. Any other error is a submission
        // that does not decode (status 1).
        Err(e) if matches!(e.kind, CpErrorKind::Compute(_)) => {
            eprintln!("wavejit: {}: {e}", file.display());
            return Ok(fault_exit());
        }
        Err(e) => return Err(format!("{}: {e}", file.display()).into()),
    };
    outln!(
        "{}: {} IB(s), {} region(s): {outcome:?}",
        file.display(),
        cap.ibs.len(),
        cap.regions.len()
    );
    for d in &dump {
        let (addr, count, elem) = parse_dump(d)?;
        let len = count
            .checked_mul(elem.size())
            .ok_or_else(|| usage(format!("--dump `{d}`: count too large")))?;
        let bytes = mem.read_bytes(addr, len).map_err(|e| {
            format!("--dump `{d}`: cannot read {len} bytes at {addr:#x}: {e} (not in the capture)")
        })?;
        outln!("{addr:#x}: {}", TypedValues::format(elem, &bytes));
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_dump(s: &str) -> Result<(u64, usize, Elem), CliError> {
    let mut parts = s.split(':');
    let addr = parts.next().unwrap_or_default();
    let addr = u64::from_str_radix(addr.trim_start_matches("0x"), 16)
        .map_err(|e| usage(format!("--dump `{s}`: address: {e}")))?;
    let count: usize = parts
        .next()
        .ok_or_else(|| usage(format!("--dump `{s}`: expected ADDR:COUNT[:TYPE]")))?
        .parse()
        .map_err(|e| usage(format!("--dump `{s}`: count: {e}")))?;
    let elem = match parts.next() {
        Some(t) => TypedValues::parse(&format!("{t}:0"))?.elem,
        None => Elem::U32,
    };
    Ok((addr, count, elem))
}
