//! `wavejit demo`: the main job on a built-in default.

use std::process::ExitCode;

use super::CliError;

pub fn run() -> Result<ExitCode, CliError> {
    println!("wavejit demo");
    Ok(ExitCode::SUCCESS)
}
