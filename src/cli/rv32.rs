//! `wavejit rv32`: disassemble RV32 GPGPU kernels and run them on the MMIO device.
//!
//! `run` drives the device through its registers exactly as a host driver does:
//! BAR2 writes for the image and `--init` files, BAR0 for ENABLE, KERNEL_ADDR,
//! GRID/BLOCK and DISPATCH, then BAR2 reads for `--dump`. `--regs` enables the
//! device's lane-context capture (final x/f registers and fflags per lane).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use wavejit::frontend::rv32::{self, DisasmOptions, LoadedImage};
use wavejit::runtime::mmio::regs::{
    BLOCK_DIM_X, DISPATCH, ERROR_STATUS, GLOBAL_CTRL, GRID_DIM_X, KERNEL_ADDR_HI, KERNEL_ADDR_LO,
    MAX_BLOCKS, MAX_THREADS_PER_BLOCK,
};
use wavejit::runtime::mmio::{
    DeviceConfig, DeviceFaultKind, EngineChoice, GpgpuDevice, LaneContext,
};

use super::{CliError, exit, fault_exit, usage};

#[derive(Subcommand)]
pub enum Rv32Command {
    /// Disassemble a raw image (placed at --base) or an ELF file, objdump style.
    Disasm {
        file: PathBuf,
        /// Load address of a raw image (0x-hex or decimal).
        #[arg(long, default_value = "0")]
        base: String,
        /// x5/f10 instead of ABI register names.
        #[arg(long)]
        numeric: bool,
        /// No pseudo-instructions (objdump -M no-aliases).
        #[arg(long)]
        no_aliases: bool,
    },
    /// Run a kernel (raw image at --base, or ELF) on the GPGPU MMIO device.
    Run {
        file: PathBuf,
        /// Blocks per grid: X[,Y[,Z]].
        #[arg(long, default_value = "1,1,1")]
        grid: String,
        /// Threads per block: X[,Y[,Z]].
        #[arg(long, default_value = "1,1,1")]
        block: String,
        /// Copy FILE into VRAM at ADDR before the launch (repeatable).
        #[arg(long = "init", value_name = "FILE@ADDR")]
        init: Vec<String>,
        /// Read LEN bytes of VRAM at ADDR after the run; =OUTFILE writes them to a
        /// file (repeatable).
        #[arg(long = "dump", value_name = "ADDR:LEN[=OUTFILE]")]
        dump: Vec<String>,
        /// Print every lane's final registers and fflags.
        #[arg(long)]
        regs: bool,
        /// One JSON object on stdout.
        #[arg(long)]
        json: bool,
        /// Load address of a raw image (0x-hex or decimal); the entry point.
        #[arg(long, default_value = "0")]
        base: String,
        /// Engine: jit or interp.
        #[arg(long, default_value = "jit")]
        engine: String,
        /// Instructions a lane may retire; over it the kernel faults ("cycle limit")
        /// naming the lane's pc. 0: unlimited (a kernel that never ends runs until
        /// interrupted).
        #[arg(long, default_value_t = 100_000)]
        cycle_limit: u32,
        /// Threads the JIT runs a large dispatch on, this one included (1 to
        /// 1024); default: every host thread.
        #[arg(long, value_name = "N")]
        jit_threads: Option<usize>,
    },
}

pub fn run(cmd: Rv32Command) -> Result<ExitCode, CliError> {
    match cmd {
        Rv32Command::Disasm {
            file,
            base,
            numeric,
            no_aliases,
        } => disasm(&file, &base, numeric, no_aliases),
        Rv32Command::Run {
            file,
            grid,
            block,
            init,
            dump,
            regs,
            json,
            base,
            engine,
            cycle_limit,
            jit_threads,
        } => {
            let engine = match engine.as_str() {
                "jit" => EngineChoice::Jit,
                "interp" => EngineChoice::Interpreter,
                other => return Err(usage(format!("unknown engine `{other}` (jit, interp)"))),
            };
            let opts = RunOptions {
                grid: parse_dims(&grid, "--grid")?,
                block: parse_dims(&block, "--block")?,
                init: init
                    .iter()
                    .map(|s| parse_init(s))
                    .collect::<Result<_, _>>()?,
                dumps: dump
                    .iter()
                    .map(|s| parse_dump(s))
                    .collect::<Result<_, _>>()?,
                regs,
                json,
                base: parse_addr(&base)?,
                engine,
                cycle_limit: (cycle_limit != 0).then_some(cycle_limit),
                jit_threads,
            };
            run_kernel(&file, &opts)
        }
    }
}

fn load(file: &PathBuf, base: u32) -> Result<LoadedImage, CliError> {
    let bytes = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    rv32::load_image(&bytes, base).map_err(|e| format!("{}: {e}", file.display()).into())
}

fn disasm(
    file: &PathBuf,
    base: &str,
    numeric: bool,
    no_aliases: bool,
) -> Result<ExitCode, CliError> {
    let image = load(file, parse_addr(base)?)?;
    let opts = DisasmOptions {
        aliases: !no_aliases,
        numeric_regs: numeric,
    };
    let mut out = String::new();
    for seg in image.code_segments() {
        for (pc, text) in rv32::disasm_listing(&seg.data, seg.vaddr, opts) {
            let off = (pc - seg.vaddr) as usize;
            let end = (off + 4).min(seg.data.len());
            let mut w = [0u8; 4];
            w[..end - off].copy_from_slice(&seg.data[off..end]);
            let _ = writeln!(
                out,
                "{pc:8x}:\t{:08x}          \t{text}",
                u32::from_le_bytes(w)
            );
        }
    }
    out!("{out}");
    Ok(ExitCode::SUCCESS)
}

/// Accepts 0x-hex or decimal.
fn parse_u64(s: &str) -> Result<u64, CliError> {
    let t = s.trim();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse(),
    };
    r.map_err(|_| usage(format!("`{s}` is not a number (decimal or 0x-hex)")))
}

fn parse_addr(s: &str) -> Result<u32, CliError> {
    u32::try_from(parse_u64(s)?).map_err(|_| usage(format!("address `{s}` exceeds 32 bits")))
}

/// `X[,Y[,Z]]` of option `what`, within the device's limits (datasheet:
/// at most 8,192 threads per block and 524,288 blocks, none of them 0).
fn parse_dims(s: &str, what: &str) -> Result<[u32; 3], CliError> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(usage(format!("{what} `{s}`: want X[,Y[,Z]]")));
    }
    let mut d = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        d[i] = u32::try_from(parse_u64(p)?)
            .map_err(|_| usage(format!("{what} `{p}` exceeds 32 bits")))?;
    }
    if d.contains(&0) {
        return Err(usage(format!("{what} `{s}`: a dimension is 0")));
    }
    let n: u64 = d.iter().map(|&x| u64::from(x)).product();
    let (limit, unit) = if what == "--block" {
        (MAX_THREADS_PER_BLOCK, "threads per block")
    } else {
        (MAX_BLOCKS, "blocks")
    };
    if n > limit {
        return Err(usage(format!(
            "{what} `{s}`: {} {unit} exceed the device's limit of {}",
            grouped(n),
            grouped(limit)
        )));
    }
    Ok(d)
}

/// `n` with thousands separators (8,192).
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn parse_init(s: &str) -> Result<(PathBuf, u32), CliError> {
    let (file, addr) = s
        .rsplit_once('@')
        .ok_or_else(|| usage(format!("--init `{s}`: want FILE@ADDR")))?;
    Ok((PathBuf::from(file), parse_addr(addr)?))
}

struct DumpSpec {
    addr: u32,
    len: u32,
    out: Option<PathBuf>,
}

fn parse_dump(s: &str) -> Result<DumpSpec, CliError> {
    let (range, out) = match s.split_once('=') {
        Some((r, f)) => (r, Some(PathBuf::from(f))),
        None => (s, None),
    };
    let (addr, len) = range
        .split_once(':')
        .ok_or_else(|| usage(format!("--dump `{s}`: want ADDR:LEN[=OUTFILE]")))?;
    Ok(DumpSpec {
        addr: parse_addr(addr)?,
        len: parse_addr(len)?,
        out,
    })
}

struct RunOptions {
    grid: [u32; 3],
    block: [u32; 3],
    init: Vec<(PathBuf, u32)>,
    dumps: Vec<DumpSpec>,
    regs: bool,
    json: bool,
    base: u32,
    engine: EngineChoice,
    cycle_limit: Option<u32>,
    jit_threads: Option<usize>,
}

/// Writes `data` at VRAM `addr` through BAR2 (8-byte accesses, then bytes).
fn bar2_write(dev: &mut GpgpuDevice, addr: u32, data: &[u8], what: &str) -> Result<(), CliError> {
    let end = u64::from(addr) + data.len() as u64;
    if end > dev.vram_size() {
        return Err(format!(
            "{what}: {:#x}..{end:#x} does not fit the {:#x}-byte VRAM",
            addr,
            dev.vram_size()
        )
        .into());
    }
    let mut chunks = data.chunks_exact(8);
    let mut off = u64::from(addr);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        dev.mmio_write(2, off, 8, u64::from_le_bytes(w));
        off += 8;
    }
    for &b in chunks.remainder() {
        dev.mmio_write(2, off, 1, u64::from(b));
        off += 1;
    }
    Ok(())
}

fn bar2_read(dev: &GpgpuDevice, addr: u32, len: u32) -> Result<Vec<u8>, CliError> {
    let end = u64::from(addr) + u64::from(len);
    if end > dev.vram_size() {
        return Err(usage(format!(
            "--dump {addr:#x}:{len:#x} runs past the end of the {:#x}-byte VRAM",
            dev.vram_size()
        )));
    }
    Ok((0..u64::from(len))
        .map(|i| dev.mmio_read(2, u64::from(addr) + i, 1) as u8)
        .collect())
}

fn run_kernel(file: &PathBuf, o: &RunOptions) -> Result<ExitCode, CliError> {
    let image = load(file, o.base)?;
    let cfg = DeviceConfig {
        capture_context: o.regs,
        engine: o.engine,
        cycle_limit: o.cycle_limit,
        jit_threads: o.jit_threads,
        ..DeviceConfig::default()
    };
    // A bad value is the option's fault (exit 2), not the input's.
    cfg.validate()
        .map_err(|e| usage(format!("--jit-threads: {e}")))?;
    // Sizes come from the file: check them before anything is allocated for
    // them (a 5 KB ELF may declare a 4 GB p_memsz).
    for seg in &image.segments {
        if seg.end() > cfg.vram_size {
            return Err(format!(
                "{}: segment {:#x}..{:#x} does not fit the {:#x}-byte VRAM",
                file.display(),
                seg.vaddr,
                seg.end(),
                cfg.vram_size
            )
            .into());
        }
    }
    let mut dev = GpgpuDevice::new(cfg)?;
    for seg in &image.segments {
        // Only the file bytes: the rest of the segment (p_memsz > p_filesz) is
        // already zero in a new device's VRAM.
        bar2_write(&mut dev, seg.vaddr, &seg.data, &file.display().to_string())?;
    }
    for (path, addr) in &o.init {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        bar2_write(&mut dev, *addr, &bytes, &path.display().to_string())?;
    }
    let w0 = |d: &mut GpgpuDevice, off: u64, v: u32| d.mmio_write(0, off, 4, u64::from(v));
    w0(&mut dev, GLOBAL_CTRL, 1);
    w0(&mut dev, KERNEL_ADDR_LO, image.entry);
    w0(&mut dev, KERNEL_ADDR_HI, 0);
    for i in 0..3 {
        w0(&mut dev, GRID_DIM_X + 4 * i as u64, o.grid[i]);
        w0(&mut dev, BLOCK_DIM_X + 4 * i as u64, o.block[i]);
    }
    let lanes: u128 = o
        .grid
        .iter()
        .chain(&o.block)
        .map(|&d| u128::from(d))
        .product();
    let progress = super::RunProgress::start(lanes, "the RV32 device");
    w0(&mut dev, DISPATCH, 1);
    drop(progress);
    let error_status = dev.mmio_read(0, ERROR_STATUS, 4) as u32;
    let fault = dev.last_fault().cloned();
    if error_status != 0 && fault.is_none() {
        return Err(format!(
            "launch rejected (ERROR_STATUS {error_status:#x}): check ENABLE, dims and entry {:#x}",
            image.entry
        )
        .into());
    }
    let mut dumps = Vec::new();
    for d in &o.dumps {
        let bytes = bar2_read(&dev, d.addr, d.len)?;
        if let Some(out) = &d.out {
            std::fs::write(out, &bytes).map_err(|e| format!("{}: {e}", out.display()))?;
        }
        dumps.push((d.addr, bytes));
    }
    let lanes: Vec<(u32, LaneContext)> = if o.regs {
        lane_list(&dev, o)
    } else {
        Vec::new()
    };
    let text = if o.json {
        json_report(fault.as_ref(), error_status, &dumps, &lanes)
    } else {
        text_report(fault.as_ref(), &dumps, &lanes)
    };
    out!("{text}");
    Ok(match fault.map(|f| f.kind) {
        None => ExitCode::SUCCESS,
        // The program could not be lifted: input that does not decode.
        Some(DeviceFaultKind::Lift(_)) => ExitCode::from(exit::INPUT),
        Some(_) => fault_exit(),
    })
}

/// (mhartid, context) of every lane that ended normally, in launch order.
fn lane_list(dev: &GpgpuDevice, o: &RunOptions) -> Vec<(u32, LaneContext)> {
    let threads: u32 = o.block.iter().product();
    let Some(report) = dev.last_report() else {
        return Vec::new();
    };
    report
        .contexts
        .iter()
        .enumerate()
        .filter(|(_, c)| c.done)
        .map(|(i, c)| {
            let i = i as u32;
            let (block, local) = (i / threads.max(1), i % threads.max(1));
            (block << 13 | local, c.clone())
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_opt(v: Option<u32>) -> String {
    v.map_or("null".into(), |v| v.to_string())
}

fn json_report(
    fault: Option<&wavejit::runtime::mmio::DeviceFault>,
    error_status: u32,
    dumps: &[(u32, Vec<u8>)],
    lanes: &[(u32, LaneContext)],
) -> String {
    let status = if fault.is_some() { "fault" } else { "ok" };
    let fault = fault.map_or("null".into(), |f| {
        format!(
            "{{\"message\": {}, \"pc\": {}, \"word\": {}, \"hartid\": {}, \"error_status\": {error_status}}}",
            json_str(&f.to_string()),
            json_opt(f.pc),
            json_opt(f.word),
            json_opt(f.hartid)
        )
    });
    let dumps: Vec<String> = dumps
        .iter()
        .map(|(a, b)| {
            format!(
                "{{\"addr\": {a}, \"len\": {}, \"hex\": \"{}\"}}",
                b.len(),
                hex(b)
            )
        })
        .collect();
    let join = |v: &[u32]| {
        v.iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let lanes: Vec<String> = lanes
        .iter()
        .map(|(id, c)| {
            format!(
                "{{\"id\": {id}, \"x\": [{}], \"f\": [{}], \"fflags\": {}}}",
                join(&c.x),
                join(&c.f),
                c.fflags()
            )
        })
        .collect();
    format!(
        "{{\"status\": \"{status}\", \"fault\": {fault}, \"dumps\": [{}], \"lanes\": [{}]}}\n",
        dumps.join(", "),
        lanes.join(", ")
    )
}

fn text_report(
    fault: Option<&wavejit::runtime::mmio::DeviceFault>,
    dumps: &[(u32, Vec<u8>)],
    lanes: &[(u32, LaneContext)],
) -> String {
    let mut out = String::new();
    match fault {
        Some(f) => {
            let _ = writeln!(out, "status: fault: {f}");
        }
        None => out.push_str("status: ok\n"),
    }
    for (addr, bytes) in dumps {
        let _ = writeln!(out, "dump {addr:#x}:{:#x}", bytes.len());
        for (i, row) in bytes.chunks(16).enumerate() {
            let words: Vec<String> = row.chunks(4).map(hex).collect();
            let _ = writeln!(
                out,
                "  {:08x}: {}",
                *addr as usize + 16 * i,
                words.join(" ")
            );
        }
    }
    for (id, c) in lanes {
        let _ = writeln!(
            out,
            "lane {id:#x} (block {} warp {} lane {}): fflags {:#04x} frm {}",
            id >> 13,
            (id >> 5) & 0xff,
            id & 31,
            c.fflags(),
            c.fcsr >> 5
        );
        for (name, regs) in [("x", &c.x), ("f", &c.f)] {
            for row in 0..4 {
                let cells: Vec<String> = (0..8)
                    .map(|j| {
                        let r = row * 8 + j;
                        format!("{name}{r:<2}={:08x}", regs[r])
                    })
                    .collect();
                let _ = writeln!(out, "  {}", cells.join(" "));
            }
        }
    }
    out
}
