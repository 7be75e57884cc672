//! Differential oracle: random RV32IMF programs run under `qemu-riscv32-static`
//! (user mode) and on the wavejit device (one lane per program); x/f registers,
//! fcsr and the program's data region must agree bit for bit.
//!
//! Environment: `WAVEJIT_ORACLE_SEED` (default 0x5eed_0001), `WAVEJIT_ORACLE_PROGRAMS`
//! (default 2048 in release builds, 256 in debug builds), `WAVEJIT_ORACLE_QEMU` (path of qemu-riscv32-static). Without
//! qemu the test prints why and returns, unless `CI` is set. A mismatch is shrunk
//! (body items deleted while the mismatch persists) and printed as a listing.

#![allow(dead_code)]

pub mod image;
pub mod program;
pub mod rng;

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use wavejit_frontend::rv32::{disasm, encode};
use wavejit_runtime::mmio::regs::{BLOCK_DIM_X, DISPATCH, GLOBAL_CTRL, GRID_DIM_X, KERNEL_ADDR_LO};
use wavejit_runtime::mmio::{DeviceConfig, EngineChoice, GpgpuDevice};

use image::{Batch, DUMP_BYTES};
use program::{DATA_SIZE, Program};
use rng::Rng;

/// Final state of one program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Final {
    pub x: [u32; 32],
    pub f: [u32; 32],
    pub fcsr: u32,
    pub data: Vec<u8>,
}

pub fn qemu_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("WAVEJIT_ORACLE_QEMU") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("qemu-riscv32-static"))
        .find(|p| p.is_file())
}

fn word(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

/// Runs a batch under qemu; one `Final` per program.
pub fn run_qemu(qemu: &PathBuf, batch: &Batch, count: usize) -> Result<Vec<Final>, String> {
    static SERIAL: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("wavejit-oracle-{}-{n}.elf", std::process::id()));
    std::fs::write(&path, &batch.elf).map_err(|e| format!("writing {}: {e}", path.display()))?;
    // qemu-user refuses (silently, exit 1) to load a file without execute permission.
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("chmod {}: {e}", path.display()))?;
    }
    let mut child = Command::new(qemu)
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting {}: {e}", qemu.display()))?;
    let mut out = Vec::new();
    let mut stdout = child.stdout.take().ok_or("no stdout")?;
    let reader = std::thread::spawn(move || {
        let _ = stdout.read_to_end(&mut out);
        out
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = std::fs::remove_file(&path);
            return Err("qemu timed out".into());
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let out = reader.join().map_err(|_| "reader thread")?;
    let per = DUMP_BYTES + DATA_SIZE as usize;
    if !status.success() || out.len() != per * count {
        // The ELF stays for inspection.
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        return Err(format!(
            "qemu {status}: {} of {} bytes; stderr: {err}; image {}",
            out.len(),
            per * count,
            path.display()
        ));
    }
    let _ = std::fs::remove_file(&path);
    Ok(out
        .chunks_exact(per)
        .map(|c| Final {
            x: std::array::from_fn(|i| word(c, 4 * i)),
            f: std::array::from_fn(|i| word(c, 0x80 + 4 * i)),
            fcsr: word(c, 0x100),
            data: c[DUMP_BYTES..].to_vec(),
        })
        .collect())
}

pub fn device(engine: EngineChoice) -> GpgpuDevice {
    let cfg = DeviceConfig {
        capture_context: true,
        engine,
        ..DeviceConfig::default()
    };
    GpgpuDevice::new(cfg).unwrap_or_else(|e| panic!("device: {e}"))
}

/// Runs each program as one lane on the device.
pub fn run_wavejit(
    dev: &mut GpgpuDevice,
    batch: &Batch,
    programs: &[Program],
) -> Vec<Result<Final, String>> {
    dev.device_reset();
    dev.vram()
        .write_bytes(0, &batch.image)
        .unwrap_or_else(|e| panic!("loading image: {e}"));
    let w0 = |d: &mut GpgpuDevice, off: u64, v: u32| d.mmio_write(0, off, 4, u64::from(v));
    w0(dev, GLOBAL_CTRL, 1);
    for i in 0..3 {
        w0(dev, GRID_DIM_X + 4 * i, 1);
        w0(dev, BLOCK_DIM_X + 4 * i, 1);
    }
    programs
        .iter()
        .zip(&batch.entries)
        .map(|(p, &entry)| {
            w0(dev, KERNEL_ADDR_LO, entry);
            w0(dev, DISPATCH, 1);
            if let Some(f) = dev.last_fault() {
                let msg = f.to_string();
                w0(dev, 0x108, 0xF);
                return Err(msg);
            }
            let ctx = dev
                .last_report()
                .and_then(|r| r.contexts.first().cloned())
                .ok_or("no lane context")?;
            let data = dev
                .vram()
                .read_bytes(u64::from(p.data_region()), DATA_SIZE as usize)
                .map_err(|e| e.to_string())?;
            Ok(Final {
                x: ctx.x,
                f: ctx.f,
                fcsr: ctx.fcsr,
                data,
            })
        })
        .collect()
}

/// The first difference, as text.
pub fn diff(q: &Final, w: &Result<Final, String>) -> Option<String> {
    let w = match w {
        Ok(w) => w,
        Err(e) => return Some(format!("wavejit faulted: {e}")),
    };
    for i in 0..32 {
        if q.x[i] != w.x[i] {
            return Some(format!(
                "x{i}: qemu {:#010x} wavejit {:#010x}",
                q.x[i], w.x[i]
            ));
        }
    }
    for i in 0..32 {
        if q.f[i] != w.f[i] {
            return Some(format!(
                "f{i}: qemu {:#010x} wavejit {:#010x}",
                q.f[i], w.f[i]
            ));
        }
    }
    if q.fcsr != w.fcsr {
        return Some(format!("fcsr: qemu {:#x} wavejit {:#x}", q.fcsr, w.fcsr));
    }
    if let Some(i) = (0..q.data.len()).find(|&i| q.data[i] != w.data[i]) {
        return Some(format!(
            "data byte {i}: qemu {:#04x} wavejit {:#04x}",
            q.data[i], w.data[i]
        ));
    }
    None
}

/// The mismatch of one program alone, if any.
fn mismatch(qemu: &PathBuf, p: &Program, seed: u64, engine: EngineChoice) -> Option<String> {
    let batch = image::build(std::slice::from_ref(p), seed);
    let q = run_qemu(qemu, &batch, 1).ok()?;
    let mut dev = device(engine);
    let w = run_wavejit(&mut dev, &batch, std::slice::from_ref(p));
    diff(&q[0], &w[0])
}

/// Deletes body items while the mismatch persists.
pub fn shrink(qemu: &PathBuf, p: &Program, seed: u64, engine: EngineChoice) -> Program {
    let mut best = p.clone();
    let mut i = 0;
    while i < best.items.len() {
        let mut cand = best.clone();
        cand.items.remove(i);
        if mismatch(qemu, &cand, seed, engine).is_some() {
            best = cand;
        } else {
            i += 1;
        }
    }
    best
}

pub fn listing(p: &Program) -> String {
    let base = image::CODE_BASE;
    p.assemble(base)
        .iter()
        .enumerate()
        .map(|(i, ins)| {
            let pc = base + 4 * i as u32;
            let w = encode(ins).unwrap_or(0);
            format!("{pc:8x}: {w:08x}  {}", disasm(w, pc).unwrap_or_default())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| {
            let s = s.trim();
            match s.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16).ok(),
                None => s.parse().ok(),
            }
        })
        .unwrap_or(default)
}

/// The whole oracle run; returns the number of programs compared.
pub fn run_from_env() -> usize {
    let Some(qemu) = qemu_path() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "qemu-riscv32-static not found under CI"
        );
        eprintln!("SKIP: qemu-riscv32-static not found (apt-get install qemu-user-static)");
        return 0;
    };
    let seed = env_u64("WAVEJIT_ORACLE_SEED", 0x5eed_0001);
    // Unoptimised builds compile every program with a debug Cranelift: fewer.
    let default_total = if cfg!(debug_assertions) { 256 } else { 2048 };
    let total = env_u64("WAVEJIT_ORACLE_PROGRAMS", default_total) as usize;
    let batch_size = 128usize;
    let mut rng = Rng::new(seed);
    let mut compared = 0;
    let mut batch_no = 0u64;
    while compared < total {
        let n = batch_size.min(total - compared);
        let programs: Vec<Program> = (0..n)
            .map(|i| {
                let len = 8 + rng.below(56) as usize;
                program::generate(&mut rng, i as u32, len)
            })
            .collect();
        let data_seed = seed ^ (batch_no << 32);
        let batch = image::build(&programs, data_seed);
        let q = run_qemu(&qemu, &batch, n).unwrap_or_else(|e| panic!("qemu failed: {e}"));
        // Alternate engines per batch: both must match qemu. A fresh device per
        // batch drops the JIT's cache of a batch's (never reused) kernels.
        let engine = if batch_no.is_multiple_of(2) {
            EngineChoice::Jit
        } else {
            EngineChoice::Interpreter
        };
        let w = run_wavejit(&mut device(engine), &batch, &programs);
        for (i, (qf, wf)) in q.iter().zip(&w).enumerate() {
            if let Some(d) = diff(qf, wf) {
                let small = shrink(&qemu, &programs[i], data_seed, engine);
                let why = mismatch(&qemu, &small, data_seed, engine).unwrap_or(d.clone());
                panic!(
                    "seed {seed:#x} batch {batch_no} program {i} ({engine:?}): {d}\n\
                     shrunk ({} of {} items): {why}\n{}",
                    small.items.len(),
                    programs[i].items.len(),
                    listing(&small)
                );
            }
        }
        compared += n;
        batch_no += 1;
    }
    eprintln!("oracle: {compared} programs matched qemu-riscv32 (seed {seed:#x})");
    compared
}
