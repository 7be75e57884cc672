//! Shared helpers of the engine acceptance tests: the engines under test, short
//! kernel-building functions over `wavejit_ir::Builder`, and a runner that sets up
//! global buffers whose addresses the kernel reads from the uniform space.
#![allow(dead_code)]

use wavejit_ir::interp::Interpreter;
use wavejit_ir::{
    AddrSpace, Block, BlockCall, Builder, Builtin, CastOp, Dispatch, Engine, Fault, IBinOp, Inst,
    InstKind, IntCC, Kernel, MemAccess, Type, Value,
};
use wavejit_runtime::AddressSpace;

/// Every engine the acceptance tests run on. Engines must agree bit for bit.
/// The JIT twice: as configured by default (small test dispatches compile at
/// the baseline tier) and with every kernel compiled at the optimized tier.
pub fn engines() -> Vec<Box<dyn Engine>> {
    let optimized = wavejit_jit::JitConfig {
        optimize_after_lanes: 0,
        ..wavejit_jit::JitConfig::default()
    };
    vec![
        Box::new(Interpreter::new()),
        Box::new(wavejit_jit::Jit::default()),
        Box::new(wavejit_jit::Jit::new(optimized)),
    ]
}

/// A kernel under construction: owns the kernel, hands out builders.
pub struct Kb {
    pub kernel: Kernel,
}

impl Kb {
    /// A kernel with an entry block.
    pub fn new(name: &str) -> Kb {
        let mut kernel = Kernel::new(name);
        kernel.add_block();
        Kb { kernel }
    }

    pub fn entry(&self) -> Block {
        Block::from_u32(0)
    }

    pub fn block(&mut self) -> Block {
        self.kernel.add_block()
    }

    pub fn param(&mut self, block: Block, ty: Type) -> Value {
        self.kernel.add_block_param(block, ty)
    }

    pub fn at(&mut self, block: Block) -> Builder<'_> {
        Builder::new(&mut self.kernel, block)
    }

    /// The kernel, checked by the verifier (the engines' contract).
    pub fn finish(self) -> Kernel {
        if let Err(e) = wavejit_ir::verify::verify(&self.kernel) {
            panic!("test kernel `{}` does not verify: {e}", self.kernel.name);
        }
        self.kernel
    }
}

pub fn call(block: Block, args: &[Value]) -> BlockCall {
    BlockCall::new(block, args)
}

pub fn c32(b: &mut Builder, v: u32) -> Value {
    b.iconst(Type::I32, u64::from(v))
}

pub fn c64(b: &mut Builder, v: u64) -> Value {
    b.iconst(Type::I64, v)
}

pub fn c1(b: &mut Builder, v: bool) -> Value {
    b.iconst(Type::I1, u64::from(v))
}

pub fn bin(b: &mut Builder, op: IBinOp, x: Value, y: Value) -> Value {
    b.ins(InstKind::IBinary(op), &[x, y])
}

pub fn icmp(b: &mut Builder, cc: IntCC, x: Value, y: Value) -> Value {
    b.ins(InstKind::Icmp(cc), &[x, y])
}

pub fn builtin(b: &mut Builder, which: Builtin) -> Value {
    b.ins(InstKind::Builtin(which), &[])
}

pub fn zext64(b: &mut Builder, v: Value) -> Value {
    b.ins(
        InstKind::Cast {
            op: CastOp::Zext,
            to: Type::I64,
        },
        &[v],
    )
}

/// The linear index of the lane in the whole (1-D in x) dispatch:
/// `workgroup_id.x * workgroup_size.x + local_index`.
pub fn global_id(b: &mut Builder) -> Value {
    let wg = builtin(b, Builtin::WorkgroupId(0));
    let size = builtin(b, Builtin::WorkgroupSize(0));
    let base = bin(b, IBinOp::Mul, wg, size);
    let lid = builtin(b, Builtin::LocalIndex);
    bin(b, IBinOp::Add, base, lid)
}

/// The global address of buffer `slot` (read from uniform offset `slot * 8`).
pub fn buffer(b: &mut Builder, slot: u32) -> Value {
    let off = c32(b, slot * 8);
    b.ins(
        InstKind::Load(MemAccess::scalar(AddrSpace::Uniform, Type::I64)),
        &[off],
    )
}

/// `base + zext(index) * elem_bytes`.
pub fn elem(b: &mut Builder, base: Value, index: Value, elem_bytes: u64) -> Value {
    let wide = zext64(b, index);
    let scale = c64(b, elem_bytes);
    let off = bin(b, IBinOp::Mul, wide, scale);
    bin(b, IBinOp::Add, base, off)
}

pub fn load(b: &mut Builder, space: AddrSpace, ty: Type, addr: Value) -> Value {
    b.ins(InstKind::Load(MemAccess::scalar(space, ty)), &[addr])
}

pub fn store(b: &mut Builder, space: AddrSpace, addr: Value, v: Value) {
    let ty = b.kernel.value_type(v);
    b.ins(InstKind::Store(MemAccess::scalar(space, ty)), &[addr, v]);
}

/// Stores `v` (i32) to element `index` of buffer `slot`.
pub fn store_out(b: &mut Builder, slot: u32, index: Value, v: Value) {
    let base = buffer(b, slot);
    let ty = b.kernel.value_type(v);
    let addr = elem(b, base, index, u64::from(ty.bytes()));
    store(b, AddrSpace::Global, addr, v);
}

/// Loads element `index` of buffer `slot` as `ty`.
pub fn load_in(b: &mut Builder, slot: u32, index: Value, ty: Type) -> Value {
    let base = buffer(b, slot);
    let addr = elem(b, base, index, u64::from(ty.bytes()));
    load(b, AddrSpace::Global, ty, addr)
}

/// The instruction appended last to the builder's block.
pub fn last_inst(b: &Builder) -> Inst {
    *b.kernel.blocks[b.block]
        .insts
        .last()
        .expect("the block has an instruction")
}

/// A 1-D dispatch: `groups` workgroups of `lanes` lanes, waves of `wave`.
pub fn dispatch_1d(groups: u32, lanes: u32, wave: u32) -> Dispatch {
    let mut d = Dispatch::new([groups, 1, 1], [lanes, 1, 1]);
    d.wave_size = wave;
    d
}

/// The outcome of one run: result, buffers read back, their addresses.
pub struct Run {
    pub result: Result<(), Fault>,
    pub bufs: Vec<Vec<u8>>,
    pub addrs: Vec<u64>,
}

impl Run {
    pub fn u32s(&self, slot: usize) -> Vec<u32> {
        self.bufs[slot]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    pub fn u64s(&self, slot: usize) -> Vec<u64> {
        self.bufs[slot]
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect()
    }

    /// Panics with the fault if the run faulted.
    pub fn ok(&self, engine: &str) {
        if let Err(f) = &self.result {
            panic!("engine {engine}: unexpected fault: {f}");
        }
    }
}

pub fn u32_bytes(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn u64_bytes(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Runs `kernel` on `engine` with fresh global buffers holding `bufs` (buffer `i`'s
/// address is the `i`-th i64 of the uniforms, followed by `extra_uniforms`).
pub fn run_with(
    engine: &dyn Engine,
    kernel: &Kernel,
    mut dispatch: Dispatch,
    bufs: &[Vec<u8>],
    extra_uniforms: &[u8],
) -> Run {
    let mem = AddressSpace::new();
    let mut addrs = Vec::new();
    for data in bufs {
        let addr = mem
            .alloc(data.len().max(1) as u64)
            .expect("allocating a test buffer");
        mem.write_bytes(addr, data).expect("filling a test buffer");
        addrs.push(addr);
    }
    dispatch.uniforms = u64_bytes(&addrs);
    dispatch.uniforms.extend_from_slice(extra_uniforms);
    let result = engine.run(kernel, &dispatch, &mem);
    let bufs = bufs
        .iter()
        .zip(&addrs)
        .map(|(d, &a)| mem.read_bytes(a, d.len()).expect("reading a test buffer"))
        .collect();
    Run {
        result,
        bufs,
        addrs,
    }
}

/// Runs on every engine with `u32` buffers; asserts success and returns, per
/// engine, its name and the buffers read back as `u32`s.
pub fn run_u32(
    kernel: &Kernel,
    dispatch: &Dispatch,
    bufs: &[Vec<u32>],
) -> Vec<(String, Vec<Vec<u32>>)> {
    let bytes: Vec<Vec<u8>> = bufs.iter().map(|b| u32_bytes(b)).collect();
    engines()
        .iter()
        .map(|e| {
            let run = run_with(e.as_ref(), kernel, dispatch.clone(), &bytes, &[]);
            run.ok(e.name());
            let out = (0..bufs.len()).map(|i| run.u32s(i)).collect();
            (e.name().to_string(), out)
        })
        .collect()
}

/// Builds a kernel in which lane `i` loads the arguments of `kind` from row `i`
/// of buffer 0 (8 bytes per argument, `arg_tys` wide), executes it, and stores
/// every result (8 bytes each) to row `i` of buffer 1. Returns per engine the
/// result rows.
pub fn eval_rows(
    kind: &InstKind,
    arg_tys: &[Type],
    rows: &[Vec<u64>],
) -> Vec<(String, Vec<Vec<u64>>)> {
    let result_tys = kind.signature(arg_tys).expect("a valid instruction");
    let nargs = arg_tys.len() as u64;
    let nres = result_tys.len() as u64;
    let mut kb = Kb::new("eval_rows");
    let entry = kb.entry();
    let mut b = kb.at(entry);
    let lid = builtin(&mut b, Builtin::LocalIndex);
    let inb = buffer(&mut b, 0);
    let outb = buffer(&mut b, 1);
    let row_in = elem(&mut b, inb, lid, 8 * nargs);
    let row_out = elem(&mut b, outb, lid, 8 * nres.max(1));
    let mut args = Vec::new();
    for (k, &ty) in arg_tys.iter().enumerate() {
        let off = c64(&mut b, 8 * k as u64);
        let addr = bin(&mut b, IBinOp::Add, row_in, off);
        args.push(load_value(&mut b, ty, addr));
    }
    let results = b.inst(kind.clone(), &args);
    for (k, &r) in results.iter().enumerate() {
        let off = c64(&mut b, 8 * k as u64);
        let addr = bin(&mut b, IBinOp::Add, row_out, off);
        store_value(&mut b, addr, r);
    }
    b.exit();
    let kernel = kb.finish();
    let input: Vec<u64> = rows
        .iter()
        .flat_map(|r| {
            assert_eq!(r.len(), arg_tys.len(), "row width");
            r.iter().copied()
        })
        .collect();
    let output = vec![0u64; rows.len() * nres.max(1) as usize];
    let d = dispatch_1d(1, rows.len() as u32, 32);
    engines()
        .iter()
        .map(|e| {
            let run = run_with(
                e.as_ref(),
                &kernel,
                d.clone(),
                &[u64_bytes(&input), u64_bytes(&output)],
                &[],
            );
            run.ok(e.name());
            let flat = run.u64s(1);
            let rows = flat
                .chunks(nres.max(1) as usize)
                .map(<[u64]>::to_vec)
                .collect();
            (e.name().to_string(), rows)
        })
        .collect()
}

/// Loads a value of any type from global memory (`i1` as a byte).
fn load_value(b: &mut Builder, ty: Type, addr: Value) -> Value {
    if ty != Type::I1 {
        return load(b, AddrSpace::Global, ty, addr);
    }
    let byte = load(b, AddrSpace::Global, Type::I8, addr);
    b.ins(
        InstKind::Cast {
            op: CastOp::Trunc,
            to: Type::I1,
        },
        &[byte],
    )
}

/// Stores a value of any type to global memory (`i1` as a byte 0/1).
fn store_value(b: &mut Builder, addr: Value, v: Value) {
    let v = if b.kernel.value_type(v) == Type::I1 {
        b.ins(
            InstKind::Cast {
                op: CastOp::Zext,
                to: Type::I8,
            },
            &[v],
        )
    } else {
        v
    };
    store(b, AddrSpace::Global, addr, v);
}
