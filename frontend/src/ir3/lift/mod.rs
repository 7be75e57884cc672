//! Lifts an a630 ir3 compute shader into one wavejit IR kernel (the program of
//! one fiber).
//!
//! Register model: the fiber's register file lives in IR private memory
//! (`layout`), with a per-block cache so that straight-line code works on SSA
//! values and only block boundaries (and relative addressing) touch memory.
//! Full registers are 32-bit slots indexed by regid (so r48+ shared registers,
//! a0.x/a1.x and p0 sit at their regids too); half registers either alias the
//! halves of full slots (MERGEDREGS) or live in a separate 16-bit file.
//! Control flow: every ir3 branch target and every instruction after a
//! block-ending one starts an IR block, created in guest pc order so that the
//! engines' "lowest pc first" scheduling reconverges divergent fibers the way the
//! hardware does for mesa's layout.

mod alu;
mod bindless;
mod error;
mod flow;
mod mem;
mod mov;
mod regs;
mod subgroup;
mod tex;

use std::collections::BTreeMap;

use wavejit_ir::{Block, Builder, DispatchShape, FloatMode, InstKind, Kernel, Type, Value};

use super::{Instr, decode};
pub use error::LiftError;

/// Bytes of the const file image at the start of the uniform space (256 vec4).
pub const CONST_BYTES: u32 = 4096;

/// Per-fiber private memory layout (bytes).
pub mod layout {
    /// Full register file: 256 32-bit slots indexed by regid (r0.x..r55.w, a0.x at
    /// 0xf4, a1.x at 0xf5, p0.x..w at 0xf8..0xfb).
    pub const FULL_FILE: u32 = 0;
    /// Separate half register file (used when MERGEDREGS is clear): 256 16-bit slots.
    pub const HALF_FILE: u32 = 1024;
    /// call/ret stack: depth (u32) then return-site indices (u32 each).
    pub const CALL_STACK: u32 = 1536;
    /// Deepest call nesting supported.
    pub const CALL_DEPTH: u32 = 31;
    /// Start of the guest's own private memory (ldp/stp).
    pub const GUEST_PRIVATE: u32 = 1664;
    /// Workgroup memory per wave for the shared registers: 32 full slots, then
    /// 32 separate half slots.
    pub const SHARED_REGS_PER_WAVE: u32 = 192;
    /// Waves per workgroup provided for (1024 fibers in waves of 32 or more).
    pub const MAX_WAVES: u32 = 32;
}

/// Where the descriptors a dispatch binds sit in the uniform space (after the
/// const image). Offsets in bytes. [`uniform_image`] builds the image and its
/// layout; [`DescriptorLayout::none`] is the layout of a dispatch that binds
/// nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct DescriptorLayout {
    /// Texture descriptors (16 dwords each) loaded by CP_LOAD_STATE6.
    pub tex_off: u32,
    pub tex_count: u32,
    /// Sampler descriptors (4 dwords each).
    pub samp_off: u32,
    pub samp_count: u32,
    /// UAV/IBO descriptors (16 dwords each).
    pub uav_off: u32,
    pub uav_count: u32,
    /// UBO descriptors (u64 each: base lo, base hi | size << 17).
    pub ubo_off: u32,
    pub ubo_count: u32,
    /// The descriptor base registers, laid out as [`info`] says (texture / UAV
    /// indices past the loaded ones and every bindless access read their
    /// descriptors from memory there).
    pub info_off: u32,
}

impl DescriptorLayout {
    /// No descriptor loaded and every base register 0: the info block follows
    /// the const image.
    pub fn none() -> DescriptorLayout {
        DescriptorLayout {
            tex_off: CONST_BYTES,
            samp_off: CONST_BYTES,
            uav_off: CONST_BYTES,
            ubo_off: CONST_BYTES,
            info_off: CONST_BYTES,
            ..DescriptorLayout::default()
        }
    }

    /// Bytes of the uniform image: up to the end of the info block.
    pub fn image_bytes(&self) -> u32 {
        self.info_off + info::BYTES
    }
}

/// The descriptor state a dispatch binds: what CP_LOAD_STATE6 loaded and the
/// SP_CS_*_BASE registers hold.
#[derive(Clone, Copy, Debug, Default)]
pub struct Descriptors<'a> {
    pub textures: &'a [[u32; 16]],
    pub samplers: &'a [[u32; 4]],
    pub uavs: &'a [[u32; 16]],
    pub ubos: &'a [u64],
    /// SP_CS_TEXMEMOBJ_BASE.
    pub texmemobj_base: u64,
    /// SP_CS_UAV_BASE.
    pub uav_base: u64,
    /// SP_CS_BINDLESS_BASE[0..5].
    pub bindless_base: [u64; info::BINDLESS_BASES as usize],
}

/// The uniform image a lifted kernel reads: the const file (`consts`, cut or
/// zero-padded to [`CONST_BYTES`]), then the texture, sampler, UAV and UBO
/// descriptors, then the 8-byte aligned [`info`] block; with its layout (what
/// [`LiftConfig::uniforms`] must be for the kernel to find them).
pub fn uniform_image(consts: &[u32], d: &Descriptors<'_>) -> (Vec<u8>, DescriptorLayout) {
    let mut u: Vec<u8> = Vec::with_capacity(CONST_BYTES as usize + 1024);
    for c in consts.iter().take(CONST_BYTES as usize / 4) {
        u.extend_from_slice(&c.to_le_bytes());
    }
    u.resize(CONST_BYTES as usize, 0);
    let words = |u: &mut Vec<u8>, w: &[u32]| {
        for x in w {
            u.extend_from_slice(&x.to_le_bytes());
        }
    };
    let mut l = DescriptorLayout {
        tex_off: u.len() as u32,
        tex_count: d.textures.len() as u32,
        ..DescriptorLayout::default()
    };
    d.textures.iter().for_each(|t| words(&mut u, t));
    l.samp_off = u.len() as u32;
    l.samp_count = d.samplers.len() as u32;
    d.samplers.iter().for_each(|s| words(&mut u, s));
    l.uav_off = u.len() as u32;
    l.uav_count = d.uavs.len() as u32;
    d.uavs.iter().for_each(|s| words(&mut u, s));
    l.ubo_off = u.len() as u32;
    l.ubo_count = d.ubos.len() as u32;
    for b in d.ubos {
        u.extend_from_slice(&b.to_le_bytes());
    }
    u.resize(u.len().next_multiple_of(8), 0);
    l.info_off = u.len() as u32;
    u.extend_from_slice(&d.texmemobj_base.to_le_bytes());
    u.extend_from_slice(&d.uav_base.to_le_bytes());
    for b in &d.bindless_base {
        u.extend_from_slice(&b.to_le_bytes());
    }
    debug_assert_eq!(u.len() as u32, l.image_bytes());
    (u, l)
}

/// The info block at [`DescriptorLayout::info_off`]: raw 64-bit register values.
pub mod info {
    /// SP_CS_TEXMEMOBJ_BASE.
    pub const TEXMEMOBJ_BASE: u32 = 0;
    /// SP_CS_UAV_BASE.
    pub const UAV_BASE: u32 = 8;
    /// SP_CS_BINDLESS_BASE[0..5] (a6xx.xml: ADDR in bits 2..63, DESC_SIZE in
    /// bits 0..1), one u64 per base.
    pub const BINDLESS_BASE: u32 = 16;
    /// Bindless bases on A6XX (the SP_CS_BINDLESS_BASE array has length 5).
    pub const BINDLESS_BASES: u32 = 5;
    /// Size of the block.
    pub const BYTES: u32 = BINDLESS_BASE + 8 * BINDLESS_BASES;
}

/// Dispatch state that changes what a kernel computes (part of the cache key).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LiftConfig {
    /// SP_CS_CNTL_0.MERGEDREGS (or the override): half registers alias full ones.
    pub merged_regs: bool,
    /// SP_MODE_CNTL.CONSTANT_DEMOTION_ENABLE: `hcN` reads 32-bit `cN` and converts.
    pub const_demotion: bool,
    /// regid receiving the local id x,y,z (0xfc: none).
    pub local_id_regid: u32,
    /// regid receiving the workgroup id x,y,z (0xfc: none).
    pub workgroup_id_regid: u32,
    /// regid receiving the linear local id (0xfc: none).
    pub linear_local_id_regid: u32,
    /// Guest private (ldp/stp) bytes per fiber.
    pub private_size: u32,
    /// Workgroup-local memory bytes.
    pub shared_size: u32,
    /// SP_CS_BOOLEAN_CF_MASK: bit N is the (dispatch-constant) condition of
    /// every `brac.N` (a6xx.xml: "bitmask of true/false conditions for brac.N
    /// instructions, bit N corresponds to brac.N").
    pub boolean_cf_mask: u32,
    pub uniforms: DescriptorLayout,
    /// The launch's grid, when the kernel is lifted for one: ids are then
    /// bounded by it (`transform::simplify_bits`), so sign extensions of the
    /// workgroup id and bounds tests the grid decides go. The kernel is then
    /// valid for dispatches of this shape only.
    pub shape: Option<DispatchShape>,
}

impl Default for LiftConfig {
    fn default() -> LiftConfig {
        LiftConfig {
            merged_regs: true,
            const_demotion: true,
            local_id_regid: 0,
            workgroup_id_regid: 0xfc,
            linear_local_id_regid: 0xfc,
            private_size: 0,
            shared_size: 32 * 1024,
            boolean_cf_mask: 0,
            uniforms: DescriptorLayout::default(),
            shape: None,
        }
    }
}

/// Lifts the program `words` (instruction 0 is the entry) into a kernel.
///
/// A shared register the launch fills with the workgroup id (tinygrad's
/// kernels read it from r48.x) is read as the id itself when nothing in the
/// program writes it: the grid then bounds the arithmetic on it. A program
/// that does write it is lifted again with the register in memory.
pub fn lift(words: &[u64], cfg: &LiftConfig) -> Result<Kernel, LiftError> {
    let plan = flow::plan(words)?;
    match lift_plan(words, &plan, cfg, true)? {
        Some(k) => Ok(k),
        None => lift_plan(words, &plan, cfg, false)?.ok_or_else(|| LiftError::Internal {
            pc: 0,
            what: "a shared register held in no register was written".into(),
        }),
    }
}

/// One lift of `plan`; `None` when `hold_launch_values` is set and the
/// program writes a shared register that was held as its launch value.
fn lift_plan(
    words: &[u64],
    plan: &flow::Plan,
    cfg: &LiftConfig,
    hold_launch_values: bool,
) -> Result<Option<Kernel>, LiftError> {
    let mut k = Kernel::new(format!(
        "ir3 ({} regs)",
        if cfg.merged_regs {
            "merged"
        } else {
            "separate half"
        }
    ));
    k.shared_size = cfg.shared_size;
    k.private_size = layout::GUEST_PRIVATE + cfg.private_size;
    // Kernels that write the const file (preambles: stc, ldg.k, ldc.k) read and
    // write a per-workgroup copy in shared memory, filled at entry.
    let writes_consts = plan
        .instrs
        .iter()
        .flatten()
        .any(|i| matches!(i.encoding, "stc" | "ldg.k" | "ldc.k"));
    let const_shared = writes_consts.then(|| cfg.shared_size.next_multiple_of(16));
    if let Some(base) = const_shared {
        k.shared_size = base + CONST_BYTES;
    }
    let shared_regs = k.shared_size.next_multiple_of(16);
    k.shared_size = shared_regs + layout::MAX_WAVES * layout::SHARED_REGS_PER_WAVE;
    let entry = k.add_block();
    let copy_blocks = const_shared.map(|_| [k.add_block(), k.add_block(), k.add_block()]);
    let n = words.len();
    let mut block_of: Vec<Option<Block>> = vec![None; n];
    let mut extra: Vec<Vec<Block>> = vec![Vec::new(); n];
    for pc in 0..n {
        let Some(ins) = &plan.instrs[pc] else {
            continue;
        };
        if plan.leader[pc] {
            block_of[pc] = Some(k.add_block());
        }
        for _ in 0..extra_blocks(ins) {
            extra[pc].push(k.add_block());
        }
    }
    let mut l = Lifter {
        k,
        cur: entry,
        pc: 0,
        cfg,
        cache: BTreeMap::new(),
        block_of,
        extra,
        open: true,
        ret_sites: plan.ret_sites.clone(),
        pred_end: plan.pred_end.clone(),
        const_shared,
        shared_regs,
        held: BTreeMap::new(),
        held_written: false,
    };
    l.init_registers(hold_launch_values);
    if let Some(blocks) = copy_blocks {
        l.copy_consts(blocks);
    }
    l.goto(0)?;
    for pc in 0..n {
        let Some(ins) = plan.instrs[pc].clone() else {
            continue;
        };
        l.pc = pc as u64;
        if plan.leader[pc] {
            if l.open {
                l.goto(pc as u64)?;
            }
            l.cur = l.block_at(pc as u64)?;
            l.open = true;
        }
        if !l.open {
            return Err(LiftError::Internal {
                pc: pc as u64,
                what: "instruction after a block end is not a leader".into(),
            });
        }
        l.lift_instr(&ins)?;
    }
    if l.open {
        return Err(LiftError::FallsOffEnd { pc: n as u64 });
    }
    // A lifter bug: name the guest instruction whose IR broke a rule.
    wavejit_ir::verify::verify(&l.k).map_err(|e| {
        let pc = match e.location {
            wavejit_ir::verify::Location::Inst { inst, .. } => l.k.srclocs[inst].0,
            _ => None,
        }
        .unwrap_or(0);
        let text = words
            .get(pc as usize)
            .and_then(|&w| crate::ir3::disasm(w).ok())
            .unwrap_or_default();
        LiftError::Internal {
            pc,
            what: format!("`{text}`: lifted kernel does not verify: {e}"),
        }
    })?;
    if l.held_written {
        return Ok(None);
    }
    let mut k = l.k;
    clean_up(&mut k, cfg.shape.as_ref());
    Ok(Some(k))
}

/// The exact transforms every engine profits from: registers kept in
/// private memory become SSA values (the JIT's gang core then holds them in
/// vector registers, and sees the address arithmetic of `ldg`/`stg` as
/// consecutive lanes), constants fold, 64-bit arithmetic whose low half is
/// kept narrows, the integer identities of the index arithmetic go, the jump
/// chains that leaves merge, and the canonical NaN of the arithmetic is only
/// applied where a value leaves a chain, FP32 flushes that cannot fire go and
/// so do the empty exits left after the last live block (the gang core ran
/// a straight-line kernel with one of them after it as a many-block one,
/// half as much code again); a loop's invariant values and in-range const reads
/// are computed before it. [MODEL] The watchdog counts the
/// merged blocks once (it counts IR blocks, which are not ir3's; a runaway
/// kernel still faults). Each transform verifies its input first; the kernel
/// did.
fn clean_up(k: &mut Kernel, shape: Option<&DispatchShape>) {
    use wavejit_ir::transform::{
        drop_unreachable_tail, eliminate_common_subexpressions, fold_constants,
        hoist_loop_invariants, merge_straight_blocks, narrow_integers, promote_private,
        relax_canonical_nan, relax_float_rules, simplify_bits,
    };
    let _ = promote_private(k);
    let _ = fold_constants(k);
    let _ = narrow_integers(k);
    if simplify_bits(k, shape).is_ok_and(|s| s.compares > 0) {
        let _ = fold_constants(k);
    }
    let _ = merge_straight_blocks(k);
    let _ = eliminate_common_subexpressions(k);
    // A loop reads the const file per iteration; what it moves out may repeat
    // what the entry computes.
    if hoist_loop_invariants(k).is_ok_and(|n| n > 0) {
        let _ = eliminate_common_subexpressions(k);
    }
    let _ = relax_float_rules(k);
    let _ = relax_canonical_nan(k);
    let _ = drop_unreachable_tail(k);
}

/// Blocks an instruction needs besides its own (created right after it in layout).
fn extra_blocks(i: &Instr) -> usize {
    match i.encoding {
        "kill" => 1,
        "stib.b" => 2,
        n if n.starts_with("atomic.b.") => 2,
        _ => 0,
    }
}

/// A cached register slot: its current value and whether memory is stale.
#[derive(Clone, Copy)]
struct Cached {
    value: Value,
    dirty: bool,
}

pub(crate) struct Lifter<'c> {
    k: Kernel,
    cur: Block,
    pc: u64,
    cfg: &'c LiftConfig,
    cache: BTreeMap<u32, Cached>,
    block_of: Vec<Option<Block>>,
    extra: Vec<Vec<Block>>,
    /// The current block has no terminator yet.
    open: bool,
    ret_sites: Vec<u64>,
    /// predt/predf pc -> the pc where its predicated region ends.
    pred_end: BTreeMap<u64, u64>,
    /// Shared-memory byte offset of the writable const file, if the kernel
    /// writes consts.
    const_shared: Option<u32>,
    /// Workgroup-memory byte offset of the per-wave shared registers.
    shared_regs: u32,
    /// Shared registers read as the launch value they were filled with.
    held: BTreeMap<u32, wavejit_ir::Builtin>,
    /// The program writes one of `held`: this lift is void.
    held_written: bool,
}

impl Lifter<'_> {
    /// Appends an instruction at the current guest pc; returns its first result.
    fn ins(&mut self, kind: InstKind, args: &[Value]) -> Value {
        let mut b = Builder::new(&mut self.k, self.cur);
        b.set_srcloc(Some(self.pc));
        b.ins(kind, args)
    }

    fn inst_all(&mut self, kind: InstKind, args: &[Value]) -> Vec<Value> {
        let mut b = Builder::new(&mut self.k, self.cur);
        b.set_srcloc(Some(self.pc));
        b.inst(kind, args)
    }

    fn iconst(&mut self, ty: Type, v: u64) -> Value {
        self.ins(
            InstKind::Const {
                ty,
                bits: v & ty.mask(),
            },
            &[],
        )
    }

    /// The type of `v`; a placeholder (the result of a kind that failed its
    /// signature) reads as i32 so lifting continues and verification reports it.
    fn ty(&self, v: Value) -> Type {
        self.k.values.get(v).map_or(Type::I32, |d| d.ty)
    }

    fn block_at(&self, pc: u64) -> Result<Block, LiftError> {
        self.block_of
            .get(pc as usize)
            .copied()
            .flatten()
            .ok_or(LiftError::Internal {
                pc: self.pc,
                what: format!("no block starts at pc {pc}"),
            })
    }

    fn extra_block(&self, i: usize) -> Result<Block, LiftError> {
        self.extra
            .get(self.pc as usize)
            .and_then(|v| v.get(i))
            .copied()
            .ok_or(LiftError::Internal {
                pc: self.pc,
                what: "missing helper block".into(),
            })
    }

    /// Ends the current block with a jump to the block of `pc`.
    fn goto(&mut self, pc: u64) -> Result<(), LiftError> {
        let b = self.block_at(pc)?;
        self.flush_all();
        self.k.set_terminator(
            self.cur,
            wavejit_ir::Terminator::Jump(wavejit_ir::BlockCall::new(b, &[])),
        );
        self.open = false;
        Ok(())
    }

    /// Switches to a helper block (the cache starts empty there).
    fn enter(&mut self, b: Block) {
        self.cur = b;
        self.cache.clear();
        self.open = true;
    }

    fn terminate(&mut self, t: wavejit_ir::Terminator) {
        self.k.set_terminator(self.cur, t);
        self.open = false;
    }
}

/// a630 float rules (hardware measurements): denormals flushed keeping sign on
/// input and output, every NaN result canonical, round to nearest even.
pub(crate) fn a630_mode(half: bool, sat: bool) -> FloatMode {
    FloatMode {
        denorm_in: wavejit_ir::Denorm::FlushKeepSign,
        denorm_out: wavejit_ir::Denorm::FlushKeepSign,
        nan: wavejit_ir::NanMode::Canonical(if half { 0x7e00 } else { 0x7fc0_0000 }),
        round: wavejit_ir::Round::NearestEven,
        sat,
        flags: false,
    }
}

impl Lifter<'_> {
    fn lift_instr(&mut self, ins: &Instr) -> Result<(), LiftError> {
        let reps = u32::from(ins.repeat) + 1;
        match ins.cat {
            0 => self.lift_flow(ins),
            1 if ins.encoding == "movmsk" => self.lift_cat1(ins, 0),
            1..=4 => {
                // (rptN): N+1 iterations; the destination advances every time,
                // sources marked (r) too.
                for i in 0..reps {
                    match ins.cat {
                        1 => self.lift_cat1(ins, i)?,
                        2 => self.lift_cat2(ins, i)?,
                        3 => self.lift_cat3(ins, i)?,
                        _ => self.lift_cat4(ins, i)?,
                    }
                }
                Ok(())
            }
            5 => self.lift_cat5(ins),
            6 => self.lift_cat6(ins),
            _ => self.lift_cat7(ins),
        }
    }
}

/// Comparisons: denormal operands flushed (no float result, so no NaN rule).
pub(crate) fn cmp_mode() -> FloatMode {
    FloatMode {
        denorm_in: wavejit_ir::Denorm::FlushKeepSign,
        ..FloatMode::IEEE
    }
}

impl Lifter<'_> {
    /// Entry of a const-writing kernel: the workgroup's fibers copy the const
    /// image into shared memory (fiber i copies dwords i, i + n, ...), then meet
    /// at a barrier. Blocks: loop header (param: dword index), body, done.
    fn copy_consts(&mut self, [head, body, done]: [Block; 3]) {
        use wavejit_ir::{BlockCall, Builtin, IBinOp, IntCC, Terminator};
        let Some(base) = self.const_shared else {
            return;
        };
        self.flush_all();
        let first = self.ins(InstKind::Builtin(Builtin::LocalIndex), &[]);
        self.terminate(Terminator::Jump(BlockCall::new(head, &[first])));
        let i = self.k.add_block_param(head, Type::I32);
        self.enter(head);
        let n = self.iconst(Type::I32, u64::from(CONST_BYTES / 4));
        let more = self.ins(InstKind::Icmp(IntCC::Ult), &[i, n]);
        self.terminate(Terminator::Branch {
            cond: more,
            then: BlockCall::new(body, &[]),
            otherwise: BlockCall::new(done, &[]),
        });
        self.enter(body);
        let four = self.iconst(Type::I32, 4);
        let byte = self.ins(InstKind::IBinary(IBinOp::Mul), &[i, four]);
        let v = self.ins(
            InstKind::Load(wavejit_ir::MemAccess::scalar(
                wavejit_ir::AddrSpace::Uniform,
                Type::I32,
            )),
            &[byte],
        );
        let b = self.iconst(Type::I32, u64::from(base));
        let a = self.ins(InstKind::IBinary(IBinOp::Add), &[byte, b]);
        self.ins(
            InstKind::Store(wavejit_ir::MemAccess::scalar(
                wavejit_ir::AddrSpace::Shared,
                Type::I32,
            )),
            &[a, v],
        );
        let mut step = self.ins(InstKind::Builtin(Builtin::WorkgroupSize(0)), &[]);
        for d in 1..3 {
            let s = self.ins(InstKind::Builtin(Builtin::WorkgroupSize(d)), &[]);
            step = self.ins(InstKind::IBinary(IBinOp::Mul), &[step, s]);
        }
        let next = self.ins(InstKind::IBinary(IBinOp::Add), &[i, step]);
        self.terminate(Terminator::Jump(BlockCall::new(head, &[next])));
        self.enter(done);
        self.ins(InstKind::Barrier, &[]);
    }
}
