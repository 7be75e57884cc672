//! How a kernel is cut for execution: linear pcs, segments and lane-major runs.
//!
//! A lane's pc is always a *segment start* or a *sync position* (a barrier or a
//! cross-lane instruction, executed by the Rust scheduler). A segment is the
//! straight-line code from a block start or right after a sync instruction up to the
//! next sync instruction or through the block's terminator; compiled code runs a
//! whole segment for a co-active set.
//!
//! Inside a segment, the interpreter executes instruction by instruction for the
//! lanes in increasing order. Compiled code instead runs *runs* lane by lane: a run
//! may hold any lane-local instructions plus either any number of shared/global
//! loads or exactly one shared/global store or atomic. Other lanes cannot observe
//! the difference, so the memory effects equal the interpreter's.

use cranelift_entity::SecondaryMap;
use wavejit_ir::{AddrSpace, Block, Inst, InstKind, Kernel, Value};

/// What a linear pc denotes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PcKind {
    /// Start of segment number `.0`.
    Segment(u32),
    /// A barrier or cross-lane instruction run by the scheduler.
    Sync(Inst),
    /// Inside a segment: never a lane's pc.
    Inner,
}

/// Instructions run lane by lane in one loop.
#[derive(Clone, Debug, Default)]
pub struct Run {
    pub insts: Vec<Inst>,
    /// The block's terminator ends this run.
    pub term: bool,
    /// Contains something that can fault or write memory (lanes that faulted earlier
    /// in the segment must skip it).
    pub guarded: bool,
    /// Pure 32-bit arithmetic only ([`vector_op`]): runs several lanes at once in
    /// vector registers.
    pub vector: bool,
}

#[derive(Clone, Debug)]
pub struct Segment {
    pub block: Block,
    pub runs: Vec<Run>,
    /// Linear pc where lanes go after the segment when it ends at a sync
    /// instruction; `None` when it ends with the terminator.
    pub next_pc: Option<u32>,
    /// The segment is a whole block that branches to itself, writes no memory
    /// other lanes can see and leaves only to higher pcs ([`lane_major_loop`]):
    /// each lane runs all its iterations before the next lane starts.
    pub self_loop: bool,
    /// The block is reachable from the entry: a lane's pc can be here.
    /// (Unreachable blocks keep their segments, so block numbers and pcs
    /// stay those of the kernel.)
    pub reachable: bool,
}

#[derive(Clone, Debug)]
pub struct Plan {
    pub block_pc: SecondaryMap<Block, u32>,
    pub kinds: Vec<PcKind>,
    pub segments: Vec<Segment>,
    /// Values that must live in the register slab (used outside their run).
    pub spill: SecondaryMap<Value, bool>,
    /// Index of every global load and store among them (its inline region
    /// cache, `abi::GcEntry`).
    pub gc_site: SecondaryMap<Inst, u32>,
    pub gc_sites: u32,
}

/// Blocks a path from the entry block reaches.
fn reachable_blocks(kernel: &Kernel) -> SecondaryMap<Block, bool> {
    let cfg = wavejit_ir::analysis::Cfg::compute(kernel);
    let mut seen: SecondaryMap<Block, bool> = SecondaryMap::new();
    let mut stack: Vec<Block> = kernel.entry().into_iter().collect();
    while let Some(b) = stack.pop() {
        if std::mem::replace(&mut seen[b], true) {
            continue;
        }
        stack.extend(cfg.succs(b).iter().copied().filter(|&s| !seen[s]));
    }
    seen
}

/// Barriers and cross-lane instructions end segments.
pub fn is_sync(kind: &InstKind) -> bool {
    matches!(kind, InstKind::Barrier) || kind.is_cross_lane()
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum MemClass {
    Local,
    SharedRead,
    SharedWrite,
}

fn mem_class(kind: &InstKind) -> MemClass {
    let visible = |s: AddrSpace| matches!(s, AddrSpace::Global | AddrSpace::Shared);
    match kind {
        InstKind::Load(a) if visible(a.space) => MemClass::SharedRead,
        InstKind::Store(a) if visible(a.space) => MemClass::SharedWrite,
        InstKind::Atomic { .. } => MemClass::SharedWrite,
        _ => MemClass::Local,
    }
}

fn can_fault(kind: &InstKind) -> bool {
    matches!(
        kind,
        InstKind::Load(_) | InstKind::Store(_) | InstKind::Atomic { .. } | InstKind::Trap { .. }
    )
}

impl Plan {
    /// `vector_min_ops`: pure stretches of at least this many [`vector_op`]
    /// instructions (constants not counted) become vector runs; 0 turns that off.
    pub fn new(kernel: &Kernel, vector_min_ops: usize) -> Plan {
        let mut block_pc = SecondaryMap::new();
        let mut next = 0u32;
        for (b, data) in kernel.blocks.iter() {
            block_pc[b] = next;
            next += data.insts.len() as u32 + 1;
        }
        let mut kinds = vec![PcKind::Inner; next as usize];
        let mut segments = Vec::new();
        // Run id of every instruction and terminator, for the spill analysis.
        let mut inst_run: SecondaryMap<Inst, u32> = SecondaryMap::new();
        let mut term_run: SecondaryMap<Block, u32> = SecondaryMap::new();
        let mut run_id = 0u32;
        let reachable = reachable_blocks(kernel);
        for (b, data) in kernel.blocks.iter() {
            let base = block_pc[b];
            let n = data.insts.len();
            let mut i = 0;
            while i <= n {
                if i < n && is_sync(&kernel.insts[data.insts[i]].kind) {
                    kinds[(base + i as u32) as usize] = PcKind::Sync(data.insts[i]);
                    i += 1;
                    continue;
                }
                kinds[(base + i as u32) as usize] = PcKind::Segment(segments.len() as u32);
                let mut runs = vec![Run::default()];
                let (mut reads, mut writes) = (false, false);
                let mut next_pc = None;
                loop {
                    if i == n {
                        let last = runs.last_mut().map(|r| {
                            r.term = true;
                            r.guarded = true;
                        });
                        debug_assert!(last.is_some());
                        i += 1;
                        break;
                    }
                    let inst = data.insts[i];
                    let kind = &kernel.insts[inst].kind;
                    if is_sync(kind) {
                        next_pc = Some(base + i as u32);
                        break;
                    }
                    let class = mem_class(kind);
                    let split = match class {
                        MemClass::Local => false,
                        MemClass::SharedRead => writes,
                        MemClass::SharedWrite => reads || writes,
                    };
                    if split {
                        runs.push(Run::default());
                        reads = false;
                        writes = false;
                    }
                    reads |= class == MemClass::SharedRead;
                    writes |= class == MemClass::SharedWrite;
                    if let Some(run) = runs.last_mut() {
                        run.insts.push(inst);
                        run.guarded |= can_fault(kind);
                    }
                    i += 1;
                }
                let self_loop = i > n
                    && kinds[base as usize] == PcKind::Segment(segments.len() as u32)
                    && runs.len() == 1
                    && lane_major_loop(kernel, b, &block_pc);
                let runs = if vector_min_ops > 0 && !self_loop {
                    runs.into_iter()
                        .flat_map(|r| split_vector(kernel, r, vector_min_ops))
                        .collect()
                } else {
                    runs
                };
                for (k, run) in runs.iter().enumerate() {
                    for &inst in &run.insts {
                        inst_run[inst] = run_id + k as u32;
                    }
                    if run.term {
                        term_run[b] = run_id + k as u32;
                    }
                }
                run_id += runs.len() as u32;
                segments.push(Segment {
                    block: b,
                    runs,
                    next_pc,
                    self_loop,
                    reachable: reachable[b],
                });
            }
        }
        let spill = spill_analysis(kernel, &inst_run, &term_run);
        let mut gc_site = SecondaryMap::new();
        let mut gc_sites = 0;
        for (inst, data) in kernel.insts.iter() {
            if let InstKind::Load(a) | InstKind::Store(a) = &data.kind
                && a.space == AddrSpace::Global
            {
                gc_site[inst] = gc_sites;
                gc_sites += 1;
            }
        }
        Plan {
            block_pc,
            kinds,
            segments,
            spill,
            gc_site,
            gc_sites,
        }
    }

    pub fn kind(&self, pc: u32) -> PcKind {
        self.kinds
            .get(pc as usize)
            .copied()
            .unwrap_or(PcKind::Inner)
    }
}

/// Whether block `b` can run as a loop per lane: it branches to itself, has no
/// sync instruction and no store or atomic other lanes could observe, and its
/// other successors lie at higher pcs. The interpreter runs the lanes in `b`
/// (the lowest pc of their wave) until every one has left it, and lanes that
/// left wait at higher pcs, so running each lane's iterations to the end
/// before the next lane's reads the same memory (nothing in the loop writes it)
/// and gives every lane the same values, steps and faults.
fn lane_major_loop(kernel: &Kernel, b: Block, block_pc: &SecondaryMap<Block, u32>) -> bool {
    let data = &kernel.blocks[b];
    let Some(term) = &data.term else {
        return false;
    };
    let calls = term.calls();
    let quiet = data.insts.iter().all(|&i| {
        let kind = &kernel.insts[i].kind;
        !is_sync(kind) && mem_class(kind) != MemClass::SharedWrite
    });
    quiet
        && calls.iter().any(|c| c.block == b)
        && calls
            .iter()
            .all(|c| c.block == b || block_pc[c.block] > block_pc[b])
}

/// Whether `inst` has a lane-wise vector lowering (`codegen::vector`): 32-bit
/// integer and f32 arithmetic that cannot fault, every operand and result `i32`
/// or `f32`.
pub fn vector_op(kernel: &Kernel, inst: Inst) -> bool {
    use wavejit_ir::{CastOp, FBinOp, FUnOp, IBinOp, Round, Type};
    let data = &kernel.insts[inst];
    let w32 = |v: &Value| matches!(kernel.value_type(*v), Type::I32 | Type::F32);
    let f32s = || data.args.iter().all(|a| kernel.value_type(*a) == Type::F32);
    if data.results.len() != 1 || !data.results.iter().all(w32) || !data.args.iter().all(w32) {
        return false;
    }
    let plain = |m: &wavejit_ir::FloatMode| !m.flags && !m.sat && m.round == Round::NearestEven;
    let konst = |k: usize| {
        data.args
            .get(k)
            .is_some_and(|&a| const_bits(kernel, a).is_some())
    };
    match &data.kind {
        InstKind::Const { .. } => true,
        InstKind::IBinary(op) => match op {
            IBinOp::Add | IBinOp::Sub | IBinOp::Mul | IBinOp::And | IBinOp::Or | IBinOp::Xor => {
                true
            }
            // Vector shifts take one amount for all lanes: constants only.
            IBinOp::Shl | IBinOp::ShrU | IBinOp::ShrS => konst(1),
            _ => false,
        },
        InstKind::Cast {
            op: CastOp::Bitcast,
            ..
        } => true,
        InstKind::FBinary { op, mode } => {
            f32s()
                && plain(mode)
                && matches!(op, FBinOp::Add | FBinOp::Sub | FBinOp::Mul | FBinOp::Div)
        }
        InstKind::FUnary { op, mode } => {
            f32s()
                && !mode.flags
                && !mode.sat
                && (matches!(op, FUnOp::Neg | FUnOp::Abs)
                    || (*op == FUnOp::Sqrt && mode.round == Round::NearestEven))
        }
        InstKind::Fma { mode } => f32s() && plain(mode) && crate::cpu::host_has("fma"),
        _ => false,
    }
}

/// The bits of `v` when a constant instruction defines it.
pub fn const_bits(kernel: &Kernel, v: Value) -> Option<u64> {
    match kernel.values.get(v)?.def {
        wavejit_ir::ValueDef::Result { inst, .. } => match kernel.insts.get(inst)?.kind {
            InstKind::Const { bits, .. } => Some(bits),
            _ => None,
        },
        wavejit_ir::ValueDef::Param { .. } => None,
    }
}

/// Cuts the stretches of at least `min_ops` vector instructions out of `run`
/// as vector runs. Running a part of a run for all lanes before the next part
/// is still a valid order: the parts keep the run's memory accesses in order
/// and vector instructions touch no memory. The terminator and the end of the
/// run stay in a scalar run (possibly empty).
fn split_vector(kernel: &Kernel, run: Run, min_ops: usize) -> Vec<Run> {
    let is_const = |i: Inst| matches!(kernel.insts[i].kind, InstKind::Const { .. });
    let mut out = Vec::new();
    let mut scalar = Vec::new();
    let mut k = 0;
    let insts = &run.insts;
    while k < insts.len() {
        if !vector_op(kernel, insts[k]) {
            scalar.push(insts[k]);
            k += 1;
            continue;
        }
        let start = k;
        while k < insts.len() && vector_op(kernel, insts[k]) {
            k += 1;
        }
        let ops = insts[start..k].iter().filter(|&&i| !is_const(i)).count();
        if ops < min_ops {
            scalar.extend_from_slice(&insts[start..k]);
            continue;
        }
        if !scalar.is_empty() {
            out.push(scalar_run(kernel, std::mem::take(&mut scalar)));
        }
        out.push(Run {
            insts: insts[start..k].to_vec(),
            term: false,
            guarded: false,
            vector: true,
        });
    }
    if out.is_empty() {
        return vec![run];
    }
    let mut tail = scalar_run(kernel, scalar);
    tail.term = run.term;
    tail.guarded |= run.term;
    out.push(tail);
    out
}

fn scalar_run(kernel: &Kernel, insts: Vec<Inst>) -> Run {
    let guarded = insts.iter().any(|&i| can_fault(&kernel.insts[i].kind));
    Run {
        insts,
        term: false,
        guarded,
        vector: false,
    }
}

/// A value is spilled to the slab when something outside its defining run reads it.
/// Block parameters and results of sync instructions always live in the slab.
fn spill_analysis(
    kernel: &Kernel,
    inst_run: &SecondaryMap<Inst, u32>,
    term_run: &SecondaryMap<Block, u32>,
) -> SecondaryMap<Value, bool> {
    let mut spill: SecondaryMap<Value, bool> = SecondaryMap::new();
    let def_run = |v: Value| -> Option<u32> {
        match kernel.values.get(v)?.def {
            wavejit_ir::ValueDef::Result { inst, .. } => {
                if is_sync(&kernel.insts[inst].kind) {
                    None
                } else {
                    Some(inst_run[inst])
                }
            }
            wavejit_ir::ValueDef::Param { .. } => None,
        }
    };
    for (b, data) in kernel.blocks.iter() {
        for &inst in &data.insts {
            let idata = &kernel.insts[inst];
            let use_run = if is_sync(&idata.kind) {
                None
            } else {
                Some(inst_run[inst])
            };
            for &a in &idata.args {
                if use_run.is_none() || def_run(a) != use_run {
                    spill[a] = true;
                }
            }
        }
        if let Some(term) = &data.term {
            for a in term.uses() {
                if def_run(a) != Some(term_run[b]) {
                    spill[a] = true;
                }
            }
        }
    }
    spill
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavejit_ir::{Builder, IBinOp, MemAccess, Type};

    /// entry: add; store shared; load shared; load shared; store global; barrier;
    /// ballot; exit.
    #[test]
    fn segments_end_at_sync_points_and_runs_split_at_visible_writes() {
        let mut k = Kernel::new("plan");
        k.shared_size = 16;
        let entry = k.add_block();
        let mut b = Builder::new(&mut k, entry);
        let one = b.iconst(Type::I32, 1);
        let two = b.ins(InstKind::IBinary(IBinOp::Add), &[one, one]);
        let sh = MemAccess::scalar(AddrSpace::Shared, Type::I32);
        b.ins(InstKind::Store(sh), &[two, one]);
        let x = b.ins(InstKind::Load(sh), &[two]);
        let y = b.ins(InstKind::Load(sh), &[one]);
        let addr = b.iconst(Type::I64, 0x1000);
        b.ins(
            InstKind::Store(MemAccess::scalar(AddrSpace::Global, Type::I32)),
            &[addr, x],
        );
        b.ins(InstKind::Barrier, &[]);
        let t = b.iconst(Type::I1, 1);
        b.ins(InstKind::Ballot, &[t, t]);
        b.exit();
        let plan = Plan::new(&k, 0);
        // Positions: 0 const, 1 add, 2 store, 3 load, 4 load, 5 const, 6 store,
        // 7 barrier, 8 const, 9 ballot, 10 exit.
        assert_eq!(plan.kind(0), PcKind::Segment(0));
        assert_eq!(plan.kind(1), PcKind::Inner);
        assert!(matches!(plan.kind(7), PcKind::Sync(_)));
        assert_eq!(plan.kind(8), PcKind::Segment(1));
        assert!(matches!(plan.kind(9), PcKind::Sync(_)));
        assert_eq!(plan.kind(10), PcKind::Segment(2));
        assert_eq!(plan.segments.len(), 3);
        let seg = &plan.segments[0];
        assert_eq!(seg.next_pc, Some(7));
        // [const, add, store] | [load, load, const] | [store].
        let sizes: Vec<usize> = seg.runs.iter().map(|r| r.insts.len()).collect();
        assert_eq!(sizes, vec![3, 3, 1]);
        assert!(plan.segments[2].runs[0].term);
        // x crosses runs; y is never used; `two` is used in its own run and the next.
        assert!(plan.spill[x]);
        assert!(!plan.spill[y]);
        assert!(plan.spill[two]);
    }

    /// Blocks no path from the entry reaches keep their segments (and pcs)
    /// but are marked: one in the middle, one after the exit, and a block
    /// only an unreachable one jumps to.
    #[test]
    fn unreachable_blocks_are_marked() {
        let k = wavejit_ir::text::parse(
            "kernel @dead shared 0 private 0 {
block0:
  v0 = local_index
  v1 = const.i32 3
  v2 = icmp.ult.i32 v0, v1
  br v2, block2, block3
block1:
  jump block4
block2:
  exit
block3:
  exit
block4:
  exit
}
",
        )
        .expect("the kernel parses");
        let plan = Plan::new(&k, 0);
        let reachable: Vec<bool> = plan.segments.iter().map(|s| s.reachable).collect();
        assert_eq!(reachable, [true, false, true, true, false]);
        assert_eq!(
            plan.kind(plan.block_pc[Block::from_u32(1)]),
            PcKind::Segment(1)
        );
    }
}
