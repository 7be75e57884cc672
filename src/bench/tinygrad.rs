//! tinygrad on wavejit, as its users run it: `c = a * 2 + b` over 1 Mi floats
//! with `DEV=QCOM:IR3` through the KGSL shim (unmodified tinygrad, kernels
//! compiled by mesa's ir3 compiler) against tinygrad's own `DEV=CPU`, warm
//! (kernels compiled and buffers resident), each in its own Python process,
//! alternated. Both results are checked bit for bit against numpy.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Python with tinygrad 0.14 and numpy (default `python3`).
pub const PYTHON_ENV: &str = "WAVEJIT_TINYGRAD_PYTHON";
/// The shim to preload (default: `libwavejit_kgsl.so` beside this executable).
pub const SHIM_ENV: &str = "WAVEJIT_SHIM";

/// What each process runs: warm-up, then the median of timed realizes with a
/// device synchronize, then `DEVICE median_ms exact`.
const SCRIPT: &str = r#"
import os, statistics, time
import numpy as np
from tinygrad import Device, Tensor
n = 1 << 20
rng = np.random.default_rng(7)
an = rng.standard_normal(n, dtype=np.float32)
bn = rng.standard_normal(n, dtype=np.float32)
a, b = Tensor(an).realize(), Tensor(bn).realize()
dev = Device[Device.DEFAULT]
for _ in range(3):
    c = (a * 2 + b).realize()
dev.synchronize()
ts = []
for _ in range(15):
    t = time.perf_counter()
    c = (a * 2 + b).realize()
    dev.synchronize()
    ts.append(time.perf_counter() - t)
want = (an * np.float32(2) + bn).view(np.uint32)
exact = np.array_equal(c.numpy().view(np.uint32), want)
print(f"{Device.DEFAULT} {statistics.median(ts) * 1e3:.4f} {int(exact)}")
"#;

/// The Python and the shim, or why the row cannot run here.
pub fn setup() -> Result<(PathBuf, PathBuf), String> {
    let python =
        std::env::var_os(PYTHON_ENV).map_or_else(|| PathBuf::from("python3"), PathBuf::from);
    let probe = Command::new(&python)
        .args(["-c", "import numpy, tinygrad"])
        .output()
        .map_err(|e| format!("{}: {e}", python.display()))?;
    if !probe.status.success() {
        return Err(format!(
            "{} cannot import tinygrad and numpy (set {PYTHON_ENV} to a venv's python)",
            python.display()
        ));
    }
    let shim = match std::env::var_os(SHIM_ENV) {
        Some(p) => PathBuf::from(p),
        None => std::env::current_exe()
            .map_err(|e| e.to_string())?
            .with_file_name("libwavejit_kgsl.so"),
    };
    if !shim.is_file() {
        return Err(format!(
            "no shim at {} (cargo build --release builds it; or set {SHIM_ENV})",
            shim.display()
        ));
    }
    Ok((python, shim))
}

/// One process on `dev`: its median ms and whether the result was exact.
fn run(python: &Path, shim: Option<&Path>, dev: &str) -> Result<(f64, bool), String> {
    let mut cmd = Command::new(python);
    cmd.args(["-c", SCRIPT]).env("DEV", dev);
    if let Some(shim) = shim {
        cmd.env("LD_PRELOAD", shim);
    }
    let out = cmd
        .output()
        .map_err(|e| format!("{}: {e}", python.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().last().unwrap_or("");
    let fields: Vec<&str> = line.split_whitespace().collect();
    match (out.status.success(), fields.as_slice()) {
        (true, [_, ms, exact]) => {
            let ms: f64 = ms
                .parse()
                .map_err(|_| format!("DEV={dev} printed `{line}`"))?;
            Ok((ms, *exact == "1"))
        }
        _ => Err(format!(
            "DEV={dev} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        )),
    }
}

/// tinygrad's warm `a * 2 + b`: (CPU ms, QCOM ms, both exact), medians over
/// `rounds` alternated pairs of processes.
pub fn add(python: &Path, shim: &Path, rounds: usize) -> Result<(f64, f64, bool), String> {
    let (mut cpu, mut qcom, mut exact) = (Vec::new(), Vec::new(), true);
    for _ in 0..rounds.max(1) {
        let (c, e) = run(python, None, "CPU")?;
        cpu.push(c);
        exact &= e;
        let (q, e) = run(python, Some(shim), "QCOM:IR3")?;
        qcom.push(q);
        exact &= e;
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Ok((median(&mut cpu), median(&mut qcom), exact))
}
