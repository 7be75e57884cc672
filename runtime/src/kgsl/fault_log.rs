//! Where a context fault is reported. A KGSL client only sees EDEADLK; the fault
//! itself (kernel, pc, lane, address) goes to stderr and, when
//! `WAVEJIT_FAULT_LOG=PATH` is set, is appended to PATH as one line, so that a
//! client (or the harness running it) can read the reason without scraping stderr.

use std::io::Write;
use std::path::PathBuf;

/// The environment variable naming the fault log file.
pub const FAULT_LOG_ENV: &str = "WAVEJIT_FAULT_LOG";

/// The destination of fault reports: stderr, plus a file when configured.
#[derive(Clone, Debug, Default)]
pub struct FaultLog {
    path: Option<PathBuf>,
}

impl FaultLog {
    /// Reports to stderr and, if `path` is set, appends to that file.
    pub fn new(path: Option<PathBuf>) -> FaultLog {
        FaultLog {
            path: path.filter(|p| !p.as_os_str().is_empty()),
        }
    }

    /// The log named by [`FAULT_LOG_ENV`] (stderr only when unset or empty).
    pub fn from_env() -> FaultLog {
        FaultLog::new(std::env::var_os(FAULT_LOG_ENV).map(PathBuf::from))
    }

    /// Reports that `context` faulted with `fault` (the text the device keeps).
    pub fn report(&self, context: u32, fault: &str) {
        eprintln!(
            "wavejit kgsl: context {context}: {fault}; the context is faulted \
             (next submit or wait returns EDEADLK)"
        );
        let Some(path) = &self.path else {
            return;
        };
        // One write of a whole line to an O_APPEND file: lines of several
        // devices or processes sharing the log do not interleave.
        let line = format!(
            "wavejit kgsl: pid {} context {context}: {fault}\n",
            std::process::id()
        );
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            eprintln!(
                "wavejit kgsl: cannot append to {FAULT_LOG_ENV} file {}: {e}",
                path.display()
            );
        }
    }
}
