//! Per-ISA disassemblers and assemblers: one line of the community's syntax per
//! instruction and nothing else, so output compares line by line with mesa/objdump.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;
use wavejit::frontend::{agx, ir3};

use super::{CliError, usage};

/// The bytes of `path`; the error names it.
fn read(path: &Path) -> Result<Vec<u8>, CliError> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()).into())
}

/// The text of `path`; the error names it.
fn read_text(path: &Path) -> Result<String, CliError> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()).into())
}

/// Writes `bytes` to `path`; the error names it.
fn write(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()).into())
}

#[derive(Subcommand)]
pub enum Ir3Command {
    /// Disassemble raw little-endian machine code (a file, or --hex words). A word
    /// nothing decodes prints as mesa's `raw 0x...` line (with a warning on stderr)
    /// and the listing goes on.
    Disasm {
        /// File of 64-bit little-endian instructions.
        file: Option<PathBuf>,
        /// Instructions as 64-bit hex words instead of a file.
        #[arg(long, num_args = 1.., conflicts_with = "file")]
        hex: Vec<String>,
        /// Exit with status 1 if any word is undecodable (the listing is still printed).
        #[arg(long)]
        strict: bool,
        /// mesa's branch-label mode: branch targets print as `#lN` and each target
        /// gets an `lN:` line (freedreno tools' form).
        #[arg(long)]
        labels: bool,
    },
    /// Assemble mesa-syntax ir3 into raw little-endian machine code.
    Asm {
        file: PathBuf,
        #[arg(short, long)]
        output: PathBuf,
    },
}

#[derive(Subcommand)]
pub enum AgxCommand {
    /// Disassemble machine code (a file, or --hex with one instruction per argument).
    Disasm {
        file: Option<PathBuf>,
        /// Each argument is one instruction's bytes as contiguous hex.
        #[arg(long, num_args = 1.., conflicts_with = "file")]
        hex: Vec<String>,
    },
    /// Assemble Mesa-syntax AGX into machine code.
    Asm {
        file: PathBuf,
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Lift a compute program to the IR and run it; prints the buffers afterwards.
    Run(super::agx_run::AgxRunArgs),
}

pub fn ir3(cmd: Ir3Command) -> Result<ExitCode, CliError> {
    match cmd {
        Ir3Command::Disasm {
            file,
            hex,
            strict,
            labels,
        } => {
            let words: Vec<u64> = match file {
                Some(path) => words_of(&read(&path)?, &path)?,
                None => hex
                    .iter()
                    .map(|h| parse_hex_u64(h))
                    .collect::<Result<_, _>>()?,
            };
            let listing = ir3::disasm_listing(&words, ir3::ListingOptions { labels });
            let mut out = std::io::stdout().lock();
            for line in &listing.lines {
                writeln!(out, "{line}")?;
            }
            out.flush()?;
            for e in &listing.undecodable {
                eprintln!("{}: {e}", if strict { "error" } else { "warning" });
            }
            if strict && !listing.undecodable.is_empty() {
                return Ok(ExitCode::FAILURE);
            }
        }
        Ir3Command::Asm { file, output } => {
            let words = ir3::assemble(&read_text(&file)?)
                .map_err(|e| format!("{}: {e}", file.display()))?;
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            write(&output, &bytes)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn agx(cmd: AgxCommand) -> Result<ExitCode, CliError> {
    match cmd {
        AgxCommand::Run(args) => return super::agx_run::run(args),
        AgxCommand::Disasm { file, hex } => {
            let lines = match file {
                Some(path) => agx::disasm_program(&read(&path)?)
                    .map_err(|e| format!("{}: {e}", path.display()))?,
                None => {
                    let mut lines = Vec::new();
                    for h in &hex {
                        let bytes = parse_hex_bytes(h)?;
                        let (text, len) = agx::disasm(&bytes).map_err(|e| format!("`{h}`: {e}"))?;
                        if len != bytes.len() {
                            return Err(usage(format!(
                                "`{h}`: the instruction is {len} bytes, the argument {}",
                                bytes.len()
                            )));
                        }
                        lines.push(text);
                    }
                    lines
                }
            };
            for line in lines {
                outln!("{line}");
            }
        }
        AgxCommand::Asm { file, output } => {
            let bytes =
                agx::assemble(&read_text(&file)?).map_err(|e| format!("{}:{e}", file.display()))?;
            write(&output, &bytes)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn words_of(bytes: &[u8], path: &std::path::Path) -> Result<Vec<u64>, CliError> {
    if !bytes.len().is_multiple_of(8) {
        return Err(format!(
            "{}: {} bytes is not a whole number of 64-bit instructions",
            path.display(),
            bytes.len()
        )
        .into());
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect())
}

fn parse_hex_u64(s: &str) -> Result<u64, CliError> {
    let digits = s.trim_start_matches("0x").trim_start_matches("0X");
    u64::from_str_radix(digits, 16)
        .map_err(|e| usage(format!("`{s}` is not a 64-bit hex word: {e}")))
}

fn parse_hex_bytes(s: &str) -> Result<Vec<u8>, CliError> {
    let digits = s.trim_start_matches("0x");
    if !digits.len().is_multiple_of(2) || digits.is_empty() {
        return Err(usage(format!(
            "`{s}`: hex bytes need an even, non-zero number of digits"
        )));
    }
    (0..digits.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&digits[i..i + 2], 16)
                .map_err(|e| usage(format!("`{s}` is not hex: {e}")))
        })
        .collect()
}
