//! The RV32 saxpy kernel under qemu-riscv32 (TCG), one lane at a time: the
//! baseline a user of the RV32 device would otherwise have. The same kernel
//! body as the device's ([`super::rv32::saxpy_program`]) is called once per
//! lane by a harness loop that hands it the lane's `mhartid` in `x5` (user
//! mode has no `mhartid`) and takes `ret` for the device's `ebreak`; the
//! harness then writes `y` to stdout, which is checked bit for bit against the
//! native loop. The kernel's time is the run's minus that of the same image
//! with no lanes (process start, translation, initialisation and the output).

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use wavejit_frontend::rv32::{AluImmOp, AluOp, BranchCond, Instr, StoreKind, XReg, encode_program};

use super::kernels::saxpy_native;
use super::rv32::{X_BASE, Y_BASE, li, op, op_imm, saxpy_program, x};
use super::side::{GROUP, SAXPY_A};

/// Where the image is loaded (qemu-user leaves the low pages unmapped).
const LOAD_BASE: u32 = 0x1_0000;
/// Environment variable naming the qemu binary (default: `qemu-riscv32-static`,
/// then `qemu-riscv32` on the PATH).
pub const QEMU_ENV: &str = "WAVEJIT_QEMU_RISCV32";

/// The qemu-riscv32 binary, if there is one.
pub fn qemu() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(QEMU_ENV) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    ["qemu-riscv32-static", "qemu-riscv32"]
        .iter()
        .find_map(|name| {
            std::env::split_paths(&path)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
}

fn addi(rd: u8, rs1: u8, imm: i32) -> Instr {
    op_imm(AluImmOp::Addi, rd, rs1, imm)
}

/// A branch to instruction index `to` from index `at`.
fn branch(cond: BranchCond, rs1: u8, rs2: u8, at: usize, to: usize) -> Instr {
    Instr::Branch {
        cond,
        rs1: x(rs1),
        rs2: x(rs2),
        offset: 4 * (to as i32 - at as i32),
    }
}

/// The inputs the harness writes (normal floats of varied mantissas).
pub fn inputs(i: u32) -> (u32, u32) {
    (
        0x3f80_0000 | ((i & 0x7ff) << 12),
        0x4000_0000 | ((i & 0x3ff) << 13),
    )
}

/// What `y` holds after saxpy over `n` lanes of [`inputs`], by the native loop.
pub fn expected(n: u32) -> Vec<u8> {
    let (xs, mut ys): (Vec<f32>, Vec<f32>) = (0..n)
        .map(|i| {
            let (a, b) = inputs(i);
            (f32::from_bits(a), f32::from_bits(b))
        })
        .unzip();
    saxpy_native(SAXPY_A, &xs, &mut ys);
    ys.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The harness program: fill x and y for `n` lanes, call the kernel for
/// `lanes` of them (0 or `n`, a multiple of [`GROUP`]), write y, exit 0.
fn harness(n: u32, lanes: u32) -> Result<Vec<Instr>, String> {
    if !n.is_multiple_of(GROUP) || lanes > n || n as usize > super::rv32::MAX_ELEMENTS {
        return Err(format!(
            "{n} lanes: need a multiple of {GROUP} up to the buffers' size"
        ));
    }
    let mut p: Vec<Instr> = Vec::new();
    // Init: s2 = i, s3 = n, t3 = &x[i], t4 = &y[i].
    p.push(addi(18, 0, 0));
    p.extend(li(19, n));
    p.extend(li(28, X_BASE));
    p.extend(li(29, Y_BASE));
    let init = p.len();
    p.push(branch(BranchCond::Geu, 18, 19, init, usize::MAX)); // patched below
    p.push(op_imm(AluImmOp::Andi, 30, 18, 0x7ff));
    p.push(op_imm(AluImmOp::Slli, 30, 30, 12));
    p.extend(li(31, 0x3f80_0000));
    p.push(op(AluOp::Or, 30, 30, 31));
    p.push(Instr::Store {
        kind: StoreKind::Word,
        rs1: x(28),
        rs2: x(30),
        offset: 0,
    });
    p.push(op_imm(AluImmOp::Andi, 30, 18, 0x3ff));
    p.push(op_imm(AluImmOp::Slli, 30, 30, 13));
    p.extend(li(31, 0x4000_0000));
    p.push(op(AluOp::Or, 30, 30, 31));
    p.push(Instr::Store {
        kind: StoreKind::Word,
        rs1: x(29),
        rs2: x(30),
        offset: 0,
    });
    p.push(addi(18, 18, 1));
    p.push(addi(28, 28, 4));
    p.push(addi(29, 29, 4));
    let back = p.len();
    p.push(branch(BranchCond::Ltu, 18, 19, back, init + 1));
    let after_init = p.len();
    p[init] = branch(BranchCond::Geu, 18, 19, init, after_init);
    // Lanes: s2 = global index, s3 = lanes; x5 = (i / GROUP) << 13 | i % GROUP.
    p.push(addi(18, 0, 0));
    p.extend(li(19, lanes));
    let lane_loop = p.len();
    p.push(branch(BranchCond::Geu, 18, 19, lane_loop, usize::MAX)); // patched below
    p.push(op_imm(AluImmOp::Srli, 5, 18, GROUP.trailing_zeros() as i32));
    p.push(op_imm(AluImmOp::Slli, 5, 5, 13));
    p.push(op_imm(AluImmOp::Andi, 6, 18, GROUP as i32 - 1));
    p.push(op(AluOp::Or, 5, 5, 6));
    let call = p.len();
    p.push(Instr::Jal {
        rd: x(1),
        offset: 0,
    }); // patched to the kernel below
    p.push(addi(18, 18, 1));
    let next = p.len();
    p.push(Instr::Jal {
        rd: XReg::ZERO,
        offset: 4 * (lane_loop as i32 - next as i32),
    });
    let after_lanes = p.len();
    p[lane_loop] = branch(BranchCond::Geu, 18, 19, lane_loop, after_lanes);
    // write(1, y, 4n) until done: s2 = pointer, s3 = bytes left.
    p.extend(li(18, Y_BASE));
    p.extend(li(19, 4 * n));
    let write = p.len();
    p.push(branch(BranchCond::Eq, 19, 0, write, usize::MAX)); // patched below
    p.push(addi(10, 0, 1));
    p.push(addi(11, 18, 0));
    p.push(addi(12, 19, 0));
    p.push(addi(17, 0, 64)); // write
    p.push(Instr::Ecall);
    let check = p.len();
    p.push(branch(BranchCond::Ge, 0, 10, check, usize::MAX)); // r <= 0: exit 1
    p.push(op(AluOp::Add, 18, 18, 10));
    p.push(op(AluOp::Sub, 19, 19, 10));
    let again = p.len();
    p.push(Instr::Jal {
        rd: XReg::ZERO,
        offset: 4 * (write as i32 - again as i32),
    });
    let exit0 = p.len();
    p[write] = branch(BranchCond::Eq, 19, 0, write, exit0);
    p.push(addi(10, 0, 0));
    p.push(addi(17, 0, 93)); // exit
    p.push(Instr::Ecall);
    let exit1 = p.len();
    p[check] = branch(BranchCond::Ge, 0, 10, check, exit1);
    p.push(addi(10, 0, 1));
    p.push(addi(17, 0, 93));
    p.push(Instr::Ecall);
    // The kernel: the device's body without its mhartid read (x5 is set),
    // returning where the device's lane ends.
    let kernel = p.len();
    p[call] = Instr::Jal {
        rd: x(1),
        offset: 4 * (kernel as i32 - call as i32),
    };
    let body = saxpy_program();
    let (first, rest) = body.split_first().ok_or("empty kernel")?;
    if !matches!(first, Instr::Csr { .. }) {
        return Err("the saxpy kernel no longer starts with its mhartid read".into());
    }
    for i in rest {
        p.push(match i {
            Instr::Ebreak => Instr::Jalr {
                rd: XReg::ZERO,
                rs1: x(1),
                offset: 0,
            },
            other => *other,
        });
    }
    Ok(p)
}

/// A static ELF32 RISC-V executable: the program at 0x10000, one RWX
/// segment reaching past y's end (zero-filled beyond the code).
pub fn elf(n: u32, lanes: u32) -> Result<Vec<u8>, String> {
    let code = encode_program(&harness(n, lanes)?).map_err(|e| e.to_string())?;
    let mem_end = Y_BASE + 4 * n;
    let mut e = Vec::with_capacity(0x1000 + code.len());
    e.extend_from_slice(&[0x7f, b'E', b'L', b'F', 1, 1, 1, 0]);
    e.extend_from_slice(&[0; 8]);
    let h16 = |e: &mut Vec<u8>, v: u16| e.extend_from_slice(&v.to_le_bytes());
    let h32 = |e: &mut Vec<u8>, v: u32| e.extend_from_slice(&v.to_le_bytes());
    h16(&mut e, 2); // ET_EXEC
    h16(&mut e, 243); // EM_RISCV
    h32(&mut e, 1);
    h32(&mut e, LOAD_BASE); // entry
    h32(&mut e, 52); // program headers follow the ELF header
    h32(&mut e, 0);
    h32(&mut e, 0x2); // EF_RISCV_FLOAT_ABI_SINGLE
    h16(&mut e, 52);
    h16(&mut e, 32);
    h16(&mut e, 1);
    h16(&mut e, 40);
    h16(&mut e, 0);
    h16(&mut e, 0);
    h32(&mut e, 1); // PT_LOAD
    h32(&mut e, 0x1000); // file offset
    h32(&mut e, LOAD_BASE);
    h32(&mut e, LOAD_BASE);
    h32(&mut e, code.len() as u32);
    h32(&mut e, mem_end - LOAD_BASE);
    h32(&mut e, 7); // RWX
    h32(&mut e, 0x1000);
    e.resize(0x1000, 0);
    e.extend_from_slice(&code);
    Ok(e)
}

/// Longest a qemu run may take before it is killed (4 Mi lanes take well
/// under a second).
const QEMU_DEADLINE: Duration = Duration::from_secs(120);

/// One qemu run of `image`: its wall time and stdout.
fn run(qemu: &PathBuf, image: &PathBuf) -> Result<(Duration, Vec<u8>), String> {
    let t = Instant::now();
    let mut child = Command::new(qemu)
        .arg(image)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", qemu.display()))?;
    let mut stdout = child.stdout.take().ok_or("no stdout pipe")?;
    // Read while it runs: y does not fit a pipe's buffer.
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.read_to_end(&mut out);
        out
    });
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if t.elapsed() > QEMU_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "{} did not finish in {QEMU_DEADLINE:?}",
                image.display()
            ));
        }
        std::thread::sleep(Duration::from_micros(200));
    };
    let wall = t.elapsed();
    let out = reader.join().map_err(|_| "stdout reader panicked")?;
    if !status.success() {
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        return Err(format!(
            "{} {} exited with {status}: {}",
            qemu.display(),
            image.display(),
            err.trim()
        ));
    }
    Ok((wall, out))
}

/// Writes an executable image (qemu-user silently refuses, exit 1, a file
/// without execute permission).
pub fn write_executable(path: &PathBuf, bytes: &[u8]) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("chmod {}: {e}", path.display()))
}

/// qemu's time for the kernel over `n` lanes: medians of `reps` alternated
/// runs with and without the lanes, and whether y came out bit-exact.
pub struct QemuSaxpy {
    pub with_lanes: Duration,
    pub without: Duration,
    pub exact: bool,
}

impl QemuSaxpy {
    /// The kernel's share: the difference of the two medians.
    pub fn kernel(&self) -> Duration {
        self.with_lanes.saturating_sub(self.without)
    }
}

/// Runs the qemu baseline for `n` lanes (`reps` runs of each image).
pub fn saxpy(qemu: &PathBuf, n: u32, reps: usize) -> Result<QemuSaxpy, String> {
    // One directory per call: concurrent calls must not remove each other's.
    static SERIAL: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n_call = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("wavejit-qemu-{}-{n_call}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let paths = [dir.join("saxpy.elf"), dir.join("empty.elf")];
    let result = (|| {
        for (path, lanes) in paths.iter().zip([n, 0]) {
            write_executable(path, &elf(n, lanes)?)?;
        }
        let want = expected(n);
        let (mut full, mut empty) = (Vec::new(), Vec::new());
        let mut exact = true;
        for _ in 0..reps.max(1) {
            let (t, y) = run(qemu, &paths[0])?;
            exact &= y == want;
            full.push(t);
            empty.push(run(qemu, &paths[1])?.0);
        }
        full.sort();
        empty.sort();
        Ok(QemuSaxpy {
            with_lanes: full[full.len() / 2],
            without: empty[empty.len() / 2],
            exact,
        })
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}
