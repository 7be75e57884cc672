//! Shared harness of the AGX lifter tests: assemble, lift, run on the interpreter and
//! the JIT over a small checked global memory, and compare the engines.
#![allow(dead_code)]

use std::cell::UnsafeCell;
use std::ptr::NonNull;

use wavejit_frontend::agx::assemble;
use wavejit_frontend::agx::lift::{AgxDispatch, LiftConfig, Mode, lift};
use wavejit_ir::interp::Interpreter;
use wavejit_ir::{Access, AccessCause, Engine, Fault, GlobalMemory, Kernel};

/// Buffers at fixed, widely spaced addresses.
pub struct Mem {
    bufs: Vec<(u64, UnsafeCell<Vec<u8>>)>,
}

// SAFETY: the engines synchronise lanes; tests own the races of their kernels.
unsafe impl Sync for Mem {}

// SAFETY: translate returns pointers into live boxed buffers that outlive the run.
unsafe impl GlobalMemory for Mem {
    fn translate(&self, addr: u64, len: u64, _: Access) -> Result<NonNull<u8>, AccessCause> {
        for (start, data) in &self.bufs {
            // SAFETY: only the length is read.
            let size = unsafe { (*data.get()).len() } as u64;
            if addr >= *start && addr < start + size.max(1) {
                if addr + len > start + size {
                    return Err(AccessCause::OutOfBounds);
                }
                // SAFETY: in bounds of the live buffer.
                let p = unsafe { (*data.get()).as_mut_ptr().add((addr - start) as usize) };
                return NonNull::new(p).ok_or(AccessCause::Unmapped);
            }
        }
        Err(AccessCause::Unmapped)
    }
}

impl Mem {
    pub fn new(contents: &[Vec<u8>]) -> Mem {
        Mem {
            bufs: contents
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    (
                        0x1_0000_0000 + (i as u64) * 0x100_0000,
                        UnsafeCell::new(c.clone()),
                    )
                })
                .collect(),
        }
    }
    pub fn addrs(&self) -> Vec<u64> {
        self.bufs.iter().map(|(a, _)| *a).collect()
    }
    pub fn bytes(&self, i: usize) -> Vec<u8> {
        // SAFETY: no run is in progress.
        unsafe { (*self.bufs[i].1.get()).clone() }
    }
    pub fn set_bytes(&self, i: usize, b: &[u8]) {
        // SAFETY: no run is in progress.
        unsafe { (*self.bufs[i].1.get()).copy_from_slice(b) }
    }
}

pub fn engines() -> Vec<Box<dyn Engine>> {
    vec![
        Box::new(Interpreter::new()),
        Box::new(wavejit_jit::Jit::default()),
    ]
}

pub fn words(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|w| w.to_le_bytes()).collect()
}

pub fn to_words(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

pub fn f32s(v: &[f32]) -> Vec<u32> {
    v.iter().map(|f| f.to_bits()).collect()
}

/// A dispatch to run: grid in threads, threadgroup size, threadgroup memory.
#[derive(Clone, Copy)]
pub struct Shape {
    pub grid: [u32; 3],
    pub tg: [u32; 3],
    pub tg_mem: u32,
}

pub fn lanes(n: u32, tg: u32) -> Shape {
    Shape {
        grid: [n, 1, 1],
        tg: [tg, 1, 1],
        tg_mem: 0,
    }
}

pub fn lift_src(src: &str, tg_mem: u32) -> Kernel {
    let code = assemble(src).unwrap_or_else(|e| panic!("assemble: {e}\n{src}"));
    lift_code(&code, tg_mem)
}

pub fn lift_code(code: &[u8], tg_mem: u32) -> Kernel {
    let cfg = LiftConfig {
        threadgroup_memory: tg_mem,
        ..LiftConfig::default()
    };
    let k = lift(code, &cfg).unwrap_or_else(|e| panic!("lift: {e}"));
    wavejit_ir::verify::verify(&k).unwrap_or_else(|e| panic!("verify: {e:?}"));
    k
}

/// Runs `kernel` on every engine with fresh copies of `inputs` (buffer i bound to
/// u(2i)); asserts the engines agree and returns the final buffers as words.
pub fn run_kernel(kernel: &Kernel, shape: Shape, inputs: &[Vec<u32>]) -> Vec<Vec<u32>> {
    let mut first: Option<Vec<Vec<u32>>> = None;
    for engine in engines() {
        let mem = Mem::new(&inputs.iter().map(|w| words(w)).collect::<Vec<_>>());
        let d = AgxDispatch::with_buffers(shape.grid, shape.tg, &mem.addrs()).unwrap();
        let mut k = kernel.clone();
        k.shared_size = k.shared_size.max(shape.tg_mem);
        let r: Result<(), Fault> = engine.run(&k, &d.dispatch().unwrap(), &mem);
        if let Err(f) = r {
            panic!("{}: fault {f}", engine.name());
        }
        let out: Vec<Vec<u32>> = (0..inputs.len()).map(|i| to_words(&mem.bytes(i))).collect();
        match &first {
            None => first = Some(out),
            Some(f) => assert_eq!(f, &out, "engines disagree ({})", engine.name()),
        }
    }
    first.unwrap_or_default()
}

pub fn run(src: &str, shape: Shape, inputs: &[Vec<u32>]) -> Vec<Vec<u32>> {
    run_kernel(&lift_src(src, shape.tg_mem), shape, inputs)
}

/// Runs a single-lane program on inputs `a` (buffer 0, loaded into r0..r3 as
/// words) and returns buffer 1 (`n` result words, stored by the program).
pub fn one_lane(body: &str, a: [u32; 4], n: usize) -> Vec<u32> {
    let src = format!("load r0_r1_r2_r3, du0, 0, i32, xyzw, a\nwait a\n{body}\nstop\n");
    let out = run(&src, lanes(1, 1), &[a.to_vec(), vec![0xdead_beef; n]]);
    out[1].clone()
}

/// Lifts a preamble, runs it on the interpreter, returns the updated dispatch.
pub fn run_preamble(src: &str, d: &AgxDispatch) -> AgxDispatch {
    let code = assemble(src).unwrap();
    let cfg = LiftConfig {
        mode: Mode::Preamble,
        ..LiftConfig::default()
    };
    let k = lift(&code, &cfg).unwrap();
    wavejit_ir::verify::verify(&k).unwrap();
    let mem = Mem::new(&[d.uniform_file_bytes()]);
    let pd = d.preamble_dispatch(mem.addrs()[0]);
    Interpreter::new().run(&k, &pd, &mem).unwrap();
    let mut out = d.clone();
    out.set_uniform_file_bytes(&mem.bytes(0));
    out
}
