//! Fuzz target of the PM4 command stream through the fake KGSL device's
//! ioctls, with the real ir3 compute unit: seeds first, then random streams of
//! register writes, packets of every opcode the processor knows (and some it
//! does not) with payloads that point into the client's objects or anywhere,
//! compute dispatches of valid and random shaders, nested and self-referencing
//! indirect buffers, and raw words. Each stream is submitted and waited for.
//!
//! Checked: nothing panics or touches host memory outside the objects; every
//! ioctl returns within the dispatch budget; GPU_COMMAND gives a timestamp or
//! EINVAL, a wait gives success or EDEADLK; a faulted context has a fault
//! text and refuses every later GPU_COMMAND and wait with EDEADLK.

#[path = "../../frontend/tests/fuzz_support/mod.rs"]
mod fuzz_support;

mod kgsl_support;

use std::ptr;
use std::time::{Duration, Instant};

use fuzz_support::{Rng, corpus, long_cases};
use kgsl_support::{alloc_mapped, ioctl};
use wavejit_frontend::ir3::assemble;
use wavejit_ir::Budget;
use wavejit_runtime::kgsl::KgslDevice;
use wavejit_runtime::kgsl::ir3_unit::Ir3Unit;
use wavejit_runtime::kgsl::pm4::packet::op;
use wavejit_runtime::kgsl::pm4::{type4, type7};
use wavejit_runtime::kgsl::uapi::*;

/// Bytes of each client object (IB, shader, data).
const OBJECT: u64 = 64 * 1024;

/// A device whose dispatches stop after 50 ms or 2^16 work-items, with a
/// context and three mapped objects.
struct Rig {
    dev: KgslDevice,
    ctx: u32,
    ib: u64,
    shader: u64,
    data: u64,
}

impl Rig {
    fn new() -> Rig {
        let mut cu = Ir3Unit::new(false);
        cu.set_budget(Budget {
            time_limit: Some(Duration::from_millis(50)),
            max_work_items: 1 << 16,
            cancel: None,
        });
        let mut dev = KgslDevice::new(Box::new(cu)).expect("device");
        dev.set_fault_log(None);
        let mut c = DrawctxtCreate {
            flags: 0x0400_8A12,
            drawctxt_id: 0,
        };
        ioctl(&mut dev, IOCTL_DRAWCTXT_CREATE, &mut c).expect("context");
        let ib = alloc_mapped(&mut dev, OBJECT);
        let shader = alloc_mapped(&mut dev, OBJECT);
        let data = alloc_mapped(&mut dev, OBJECT);
        Rig {
            dev,
            ctx: c.drawctxt_id,
            ib,
            shader,
            data,
        }
    }

    fn submit(&mut self, words: &[u32]) -> Result<u32, i32> {
        let n = words.len().min((OBJECT / 4) as usize);
        // SAFETY: `ib` is a client mapping of OBJECT bytes.
        unsafe { ptr::copy_nonoverlapping(words.as_ptr(), self.ib as *mut u32, n) };
        let mut cmd = CommandObject {
            gpuaddr: self.ib,
            size: 4 * n as u64,
            flags: CMDLIST_IB,
            ..Default::default()
        };
        let mut g = GpuCommand {
            cmdlist: &mut cmd as *mut CommandObject as u64,
            cmdsize: 32,
            numcmds: 1,
            context_id: self.ctx,
            ..Default::default()
        };
        ioctl(&mut self.dev, IOCTL_GPU_COMMAND, &mut g)?;
        Ok(g.timestamp)
    }

    fn wait(&mut self, ts: u32) -> Result<(), i32> {
        let mut w = WaitTimestamp {
            context_id: self.ctx,
            timestamp: ts,
            timeout: 100,
        };
        ioctl(&mut self.dev, IOCTL_DEVICE_WAITTIMESTAMP_CTXTID, &mut w)
    }

    /// An address a payload may hold: inside an object, at its end, or wild.
    fn address(&self, rng: &mut Rng) -> u64 {
        let base = rng.pick(&[self.ib, self.shader, self.data, self.data]);
        match rng.below(6) {
            0 => rng.next(),
            1 => 0,
            2 => base + OBJECT - 4 * rng.below(2),
            _ => base + 4 * rng.below(OBJECT / 4),
        }
    }

    /// A word of a seed line: hexadecimal, `ib`/`shader`/`data` + `_lo`/`_hi`
    /// (an object's address), or a packet header `t4:REG:COUNT`/`t7:OP:COUNT`.
    fn token(&self, t: &str) -> u32 {
        let hex = |h: &str| {
            u32::from_str_radix(h.trim_start_matches("0x"), 16)
                .unwrap_or_else(|e| panic!("seed word `{t}`: {e}"))
        };
        if let Some(rest) = t.strip_prefix("t4:").or_else(|| t.strip_prefix("t7:")) {
            let (a, n) = rest.split_once(':').unwrap_or_else(|| panic!("seed `{t}`"));
            let (a, n) = (hex(a), hex(n));
            return if t.starts_with("t4") {
                type4(a, n)
            } else {
                type7(a, n)
            };
        }
        let addr = |name: &str| match name {
            "ib" => Some(self.ib),
            "shader" => Some(self.shader),
            "data" => Some(self.data),
            _ => None,
        };
        if let Some(name) = t.strip_suffix("_lo")
            && let Some(a) = addr(name)
        {
            return a as u32;
        }
        if let Some(name) = t.strip_suffix("_hi")
            && let Some(a) = addr(name)
        {
            return (a >> 32) as u32;
        }
        hex(t)
    }
}

/// Shader programs: a valid one (which touches no memory) or random words.
fn write_shader(rig: &Rig, rng: &mut Rng, hostile: bool) -> usize {
    let words: Vec<u64> = if !hostile || rng.chance(60) {
        assemble("mov.u32u32 r1.x, 1\nadd.u r1.y, r1.x, r0.x\nend\n").expect("assembles")
    } else {
        (0..1 + rng.below(8)).map(|_| rng.next()).collect()
    };
    // SAFETY: `shader` is a client mapping of OBJECT bytes; at most 8 words.
    unsafe { ptr::copy_nonoverlapping(words.as_ptr(), rig.shader as *mut u64, words.len()) };
    words.len()
}

/// A compute dispatch with the registers a real one writes, some randomized
/// when `hostile`.
fn exec_cs(rig: &Rig, rng: &mut Rng, w: &mut Vec<u32>, hostile: bool) {
    let instrs = write_shader(rig, rng, hostile);
    let shader = rig.shader;
    let maybe = |rng: &mut Rng, v: u32| {
        if hostile && rng.chance(15) {
            rng.next() as u32
        } else {
            v
        }
    };
    let size = rng.pick(&[1u32, 4, 64, 65, 1024]);
    w.extend([
        type4(0xb990, 7),
        maybe(rng, ((size - 1).min(1023) << 2) | 3),
    ]);
    w.extend([size, 0, 1, 0, 1, 0].map(|v| maybe(rng, v)));
    w.extend([
        type4(0xa9b0, 6),
        maybe(rng, (1 << 1) | (9 << 7) | (1 << 31)),
        0x41,
        0,
        0,
    ]);
    w.extend([maybe(rng, shader as u32), maybe(rng, (shader >> 32) as u32)]);
    w.extend([type4(0xa9bc, 1), maybe(rng, instrs.div_ceil(16) as u32)]);
    w.extend([
        type4(0xb997, 2),
        maybe(rng, 0xc0 | (0xfc << 8) | (0xfc << 16)),
        0xfc,
    ]);
    let groups = [
        rng.pick(if hostile {
            &[1u32, 2, 0, u32::MAX]
        } else {
            &[1, 2, 0]
        }),
        1,
        1,
    ];
    w.extend([type7(op::EXEC_CS, 4), 0, groups[0], groups[1], groups[2]]);
}

const OPS: &[u32] = &[
    op::NOP,
    op::WAIT_MEM_WRITES,
    op::WAIT_FOR_ME,
    op::WAIT_MEM_GTE,
    op::WAIT_FOR_IDLE,
    op::RUN_OPENCL,
    op::LOAD_STATE6_GEOM,
    op::EXEC_CS,
    op::LOAD_STATE6_FRAG,
    op::LOAD_STATE6,
    op::WAIT_REG_MEM,
    op::MEM_WRITE,
    op::REG_TO_MEM,
    op::INDIRECT_BUFFER,
    op::EXEC_CS_INDIRECT,
    op::EVENT_WRITE,
    op::SET_MODE,
    op::SET_MARKER,
    op::REG_WRITE,
    op::MEM_TO_MEM,
    0x7f,
];

/// Half the streams are hostile (raw words, wild addresses, nested IBs); the
/// others only write registers and run packets whose payloads are harmless,
/// so both the faulting and the working paths are exercised.
fn stream(rig: &Rig, rng: &mut Rng) -> (bool, Vec<u32>) {
    if rng.chance(50) {
        return (false, tame_stream(rig, rng));
    }
    let mut w = Vec::new();
    for _ in 0..=rng.below(12) {
        match rng.below(10) {
            0 => exec_cs(rig, rng, &mut w, true),
            1 => w.push(rng.next() as u32),
            2 | 3 => {
                let n = rng.below(6) as u32;
                let reg = 0xa800 + rng.below(0x1400) as u32;
                w.push(type4(reg, n));
                w.extend((0..n).map(|_| rng.next() as u32));
            }
            4 => {
                // An IB at a random place of the IB object, the stream itself
                // included (nesting must be bounded).
                let at = rig.address(rng);
                w.extend([type7(op::INDIRECT_BUFFER, 3), at as u32, (at >> 32) as u32]);
                w.push(rng.below(64) as u32);
            }
            _ => {
                let n = rng.below(8) as u32;
                w.push(type7(rng.pick(OPS), n));
                for _ in 0..n {
                    if rng.chance(50) {
                        let a = rig.address(rng);
                        w.extend([a as u32, (a >> 32) as u32]);
                    } else {
                        let any = rng.next() as u32;
                        w.push(rng.pick(&[0, 1, 4, 7, any]));
                    }
                }
            }
        }
    }
    (true, w)
}

fn tame_stream(rig: &Rig, rng: &mut Rng) -> Vec<u32> {
    let mut w = Vec::new();
    for _ in 0..=rng.below(8) {
        let at = rig.data + 4 * rng.below(1024);
        let (lo, hi) = (at as u32, (at >> 32) as u32);
        match rng.below(7) {
            6 => exec_cs(rig, rng, &mut w, false),
            0 => {
                let n = 1 + rng.below(4) as u32;
                w.push(type4(0xa800 + rng.below(0x1400) as u32, n));
                w.extend((0..n).map(|_| rng.next() as u32));
            }
            1 => w.extend([type7(op::MEM_WRITE, 3), lo, hi, rng.next() as u32]),
            2 => w.extend([type7(op::EVENT_WRITE, 4), 4, lo, hi, 7]),
            3 => w.extend([type7(op::NOP, 2), rng.next() as u32, 0]),
            4 => w.extend([type7(op::WAIT_FOR_IDLE, 0)]),
            _ => w.extend([type7(op::REG_TO_MEM, 3), 0xb990 | 2 << 18, lo, hi]),
        }
    }
    w
}

/// Submits `words`, waits, then submits and waits once more; `Err` when a
/// property fails.
fn check(rig: &mut Rig, words: &[u32]) -> Result<(), String> {
    let start = Instant::now();
    let submitted = rig.submit(words);
    let waited = rig.wait(submitted.unwrap_or(0));
    let fault = rig.dev.context_fault(rig.ctx).map(str::to_string);
    let again = rig.submit(&[type7(op::NOP, 0)]);
    let waited_again = rig.wait(again.unwrap_or(0));
    let took = start.elapsed();
    let seen = format!(
        "submit {submitted:?}, wait {waited:?}, fault {fault:?}, again {again:?}/{waited_again:?}"
    );
    if !matches!(submitted, Ok(_) | Err(libc::EINVAL) | Err(libc::EDEADLK)) {
        return Err(format!("GPU_COMMAND errno: {seen}"));
    }
    if !matches!(waited, Ok(()) | Err(libc::EDEADLK)) {
        return Err(format!("wait errno: {seen}"));
    }
    match &fault {
        Some(text) if text.trim().is_empty() => return Err(format!("empty fault: {seen}")),
        Some(_) if again != Err(libc::EDEADLK) || waited_again != Err(libc::EDEADLK) => {
            return Err(format!("a faulted context took work: {seen}"));
        }
        None if waited == Err(libc::EDEADLK) => {
            return Err(format!("EDEADLK without a fault: {seen}"));
        }
        _ => {}
    }
    // Two dispatch budgets of 50 ms plus two 20 ms wait retries, with room.
    if took > Duration::from_secs(3) {
        return Err(format!("took {took:?}: {seen}"));
    }
    Ok(())
}

fn run(seed: u64, cases: usize) {
    let mut rng = Rng::new(seed);
    let mut bad = Vec::new();
    for (name, text) in corpus("pm4") {
        let mut rig = Rig::new();
        let words: Vec<u32> = String::from_utf8_lossy(&text)
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
            .filter(|l| !l.is_empty())
            .flat_map(|l| {
                l.split_whitespace()
                    .map(|t| rig.token(t))
                    .collect::<Vec<_>>()
            })
            .collect();
        if let Err(e) = check(&mut rig, &words) {
            bad.push(format!("{name}: {e}"));
        }
    }
    let mut faulted = 0;
    for case in 0..cases {
        let mut rig = Rig::new();
        let (hostile, words) = stream(&rig, &mut rng);
        let fault = |rig: &Rig| rig.dev.context_fault(rig.ctx).map(str::to_string);
        match check(&mut rig, &words) {
            Ok(()) if !hostile && fault(&rig).is_some() => bad.push(format!(
                "case {case} {words:08x?}: a well-formed stream faulted: {:?}",
                fault(&rig)
            )),
            Ok(()) => faulted += usize::from(fault(&rig).is_some()),
            Err(e) => bad.push(format!("case {case} {words:08x?}: {e}")),
        }
    }
    eprintln!("{cases} streams, {faulted} faulted their context");
    assert!(
        bad.is_empty(),
        "{} streams fail:\n{}",
        bad.len(),
        bad[..bad.len().min(10)].join("\n")
    );
    assert!(
        faulted > cases / 10 && faulted < cases * 9 / 10,
        "{faulted} of {cases} faulted"
    );
    fuzz_support::assert_peak_rss_bounded();
}

#[test]
fn random_pm4_streams_give_errnos_and_faults_not_crashes() {
    run(0x9404_0001, 1_000);
}

/// `WAVEJIT_LONG_CASES` streams (default 30,000) from another seed.
#[test]
#[ignore]
fn random_pm4_streams_give_errnos_and_faults_not_crashes_long() {
    run(0x9404_0002, long_cases(30_000));
}
