//! Gang cases: the shapes and kernel patterns a SIMD gang core (16 lanes in
//! four vectors, runs under an execution mask, gang-wide memory operations with
//! one range test, barriers in compiled code) handles differently from a
//! lane-at-a-time core.
//!
//! Shapes: workgroups of 1..256 lanes, mostly not multiples of 16 (partial
//! gangs), some 2-D/3-D, waves of 4..64 lanes and rarely 2 or 24 (also not
//! dividing the workgroup), up to a few workgroups (at most 640 lanes).
//!
//! Patterns (on top of the original statements): contiguous, uniform and
//! scattered global accesses of 1..16 bytes (i8/i16/i64/f64, vectors, under-
//! and over-aligned), partially masked and gang-straddling faults, partial-mask
//! stores and exits, loops with a uniform trip count and a parity if/else
//! inside, barriers in uniform and divergent loops, shared tree reductions,
//! rings of blocks entered in the middle (irreducible) with several exits,
//! cross edges, back edges that swap parameters, branches to one block with
//! two argument lists, fences.
//!
//! Memory map of the writable buffer (every lane-indexed area has exactly one
//! writer per byte, so workgroups may run in any order or side by side):
//!
//! | area | layout | who writes |
//! |---|---|---|
//! | counters, out | as in [`super::case`] | commutative atomics; lane `gid` (96-byte stride) |
//! | columns 0..5 | slots of 1, 2, 4, 8, 16 bytes, slot `gid` | lane `gid` (contiguous) |
//! | scatter | 8-byte slots, slot `perm(gid)` (a bijection fixed per kernel) | lane `gid` (scattered) |
//! | workgroup slots | 64 bytes per workgroup | any lane of that workgroup (uniform addresses; races inside the workgroup follow the interpreter's schedule) |
//! | tail (buffer end) | 8-byte slots, slot `gid + slots - b` (`b` fixed per kernel) | lane `gid`; lanes `gid >= b` run off the end |
//!
//! Global loads read the read-only buffer anywhere and the writable buffer only
//! at addresses the loading lane or its workgroup writes. Faults are made on
//! purpose for some lanes only: past the end of a buffer or of the uniforms at
//! a lane boundary inside a gang, by one lane in the middle of a gang, by lanes
//! `>= k`, or with the bad lanes masked off (which must not fault); one case in
//! eight has a small step limit (the watchdog). Fences appear among the
//! statements (a gang core must not treat them as barriers or drop them).

use wavejit_ir::{
    AddrSpace, AtomicOp, Block, BlockCall, Builtin, CastOp, Dispatch, FBinOp, FloatMode, IBinOp,
    Inst, InstKind, IntCC, Kernel, MemAccess, Scope, Terminator, Type, Value,
};

use super::{ATOMIC, COUNTERS, Case, Gen, OUT_WORDS, PRIVATE_BYTES};
use crate::support::{BUF, RO};

/// Lanes per gang of the SIMD core the patterns aim at.
pub const GANG: u32 = 16;

/// Workgroup shapes; most are not multiples of [`GANG`], several are 2-D/3-D.
const WG_SHAPES: [[u32; 3]; 36] = [
    [1, 1, 1],
    [3, 1, 1],
    [5, 1, 1],
    [7, 1, 1],
    [15, 1, 1],
    [16, 1, 1],
    [17, 1, 1],
    [24, 1, 1],
    [31, 1, 1],
    [32, 1, 1],
    [33, 1, 1],
    [47, 1, 1],
    [48, 1, 1],
    [63, 1, 1],
    [64, 1, 1],
    [65, 1, 1],
    [100, 1, 1],
    [128, 1, 1],
    [200, 1, 1],
    [256, 1, 1],
    [17, 1, 1],
    [33, 1, 1],
    [5, 1, 1],
    [5, 3, 1],
    [4, 4, 1],
    [17, 2, 1],
    [3, 3, 3],
    [8, 2, 3],
    [10, 10, 1],
    [6, 5, 2],
    [16, 3, 1],
    [2, 9, 1],
    [1, 17, 1],
    [4, 4, 4],
    [7, 1, 3],
    [9, 7, 1],
];

/// Wave sizes: the powers of two real devices use, plus two that never line up
/// with a gang.
const WAVES: [u32; 12] = [4, 8, 16, 32, 64, 4, 8, 16, 32, 64, 2, 24];

/// Slot bytes of the contiguous columns.
const COL_SLOTS: [u64; 5] = [1, 2, 4, 8, 16];

/// Most lanes per dispatch (the interpreter's time grows with it).
const MAX_LANES: u32 = 640;

/// Bytes of uniforms before the table of area addresses.
const UNIFORM_DATA: u32 = 72;

/// Shared bytes the ordinary shared statements use; the reduction area follows.
const SHARED_GENERAL: u32 = 256;

/// Memory shapes `(type, bits per element, elements)`.
const SHAPES: [(Type, u8, u8); 21] = [
    (Type::I8, 8, 1),
    (Type::I16, 16, 1),
    (Type::F16, 16, 1),
    (Type::I32, 32, 1),
    (Type::F32, 32, 1),
    (Type::I64, 64, 1),
    (Type::F64, 64, 1),
    (Type::I32, 8, 1),
    (Type::I32, 16, 1),
    (Type::I64, 32, 1),
    (Type::I64, 8, 1),
    (Type::I16, 8, 1),
    (Type::I32, 32, 2),
    (Type::F32, 32, 2),
    (Type::I16, 16, 2),
    (Type::I8, 8, 4),
    (Type::I16, 16, 4),
    (Type::I64, 64, 2),
    (Type::F64, 64, 2),
    (Type::I32, 32, 4),
    (Type::F32, 32, 4),
];

/// Where everything of a gang case lives (see the module documentation).
#[derive(Copy, Clone, Debug)]
pub struct Layout {
    pub lanes: u64,
    pub wg_lanes: u32,
    pub wave: u32,
    pub ro_bytes: u64,
    pub cols: [u64; 5],
    pub scat: u64,
    /// Slots of the scatter area (a power of two >= lanes).
    pub scat_slots: u64,
    /// `perm(gid) = ((gid * scat_mul) ^ scat_xor) & (scat_slots - 1)`.
    pub scat_mul: u32,
    pub scat_xor: u32,
    pub wgs: u64,
    pub tail: u64,
    pub tail_slots: u64,
    pub tail_b: u64,
    pub rw_bytes: u64,
    /// Shared offset of the reduction area and its slots (8 bytes each).
    pub red: u32,
    pub red_slots: u32,
    /// Linear workgroup id (i32).
    wgl: Value,
}

/// Counts of the gang patterns the generator emitted, and the instructions
/// made to fault for some lanes.
#[derive(Clone, Debug, Default)]
pub struct Tags {
    pub contiguous: u32,
    pub uniform_addr: u32,
    pub scattered: u32,
    /// Accesses whose bad lanes execute them (they fault if any lane is bad).
    pub masked_fault: u32,
    /// Accesses whose bad lanes are masked off (they must never fault).
    pub masked_off: u32,
    /// Accesses running off the end of an area at a lane boundary.
    pub boundary: u32,
    pub partial_store: u32,
    pub uniform_loop: u32,
    pub barrier_uniform_loop: u32,
    pub barrier_divergent_loop: u32,
    pub reduction: u32,
    /// Loops entered at more than one block (irreducible).
    pub multi_entry_loop: u32,
    pub multi_exit_loop: u32,
    /// If/else whose then side jumps into the middle of the else side.
    pub cross_edge: u32,
    pub fault_sites: Vec<(Inst, Site)>,
}

/// What an instruction made to fault for some lanes does.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Site {
    /// A bad address for the lanes of a partial mask, chosen by a select.
    Select,
    /// The same, in a branch that only the bad lanes take.
    Branch,
    /// Read-only loads past the buffer end for `gid >= b`.
    RoEnd,
    /// The writable buffer's tail, `gid >= tail_b`.
    TailEnd,
    /// Shared memory, local index `>= b`.
    SharedEnd,
    /// Uniform loads at a lane-indexed offset past the uniforms' end.
    UniformEnd,
}

fn next_pow2(x: u64) -> u64 {
    x.max(1).next_power_of_two()
}

fn round16(x: u64) -> u64 {
    x.div_ceil(16) * 16
}

/// Builds a gang case from a choice stream.
pub fn gang_case(ch: &[u32]) -> Case {
    let c0 = ch.first().copied().unwrap_or(0);
    let c1 = ch.get(1).copied().unwrap_or(0);
    let wg = WG_SHAPES[(c0 % WG_SHAPES.len() as u32) as usize];
    let wave = WAVES[((c0 >> 8) % WAVES.len() as u32) as usize];
    let wg_lanes = wg.iter().product::<u32>();
    let mut groups = [
        1 + c1 % 3,
        1 + (c1 >> 4) % 2,
        1 + u32::from((c1 >> 8).is_multiple_of(4)),
    ];
    // Fewer workgroups for big ones (x last: it keeps workgroups side by side).
    for d in [2, 1, 0] {
        while groups[d] > 1 && groups.iter().product::<u32>() * wg_lanes > MAX_LANES {
            groups[d] -= 1;
        }
    }
    let mut dispatch = Dispatch::new(groups, wg);
    dispatch.wave_size = wave;
    // The watchdog in one case in eight (per gang, lanes must still count
    // their own blocks).
    if (c1 >> 12).is_multiple_of(8) {
        dispatch.step_limit = u64::from(2 + (c1 >> 16) % 40);
    }
    let wg_count = u64::from(groups.iter().product::<u32>());
    let lanes = wg_count * u64::from(wg_lanes);

    // The writable buffer's areas, in order (16-byte aligned).
    let out_end = COUNTERS + lanes * OUT_WORDS * 8;
    let mut at = round16(out_end);
    let mut cols = [0u64; 5];
    for (c, slot) in COL_SLOTS.iter().enumerate() {
        cols[c] = BUF + at;
        at = round16(at + slot * lanes);
    }
    let scat_slots = next_pow2(lanes);
    let scat = BUF + at;
    at = round16(at + 8 * scat_slots);
    let wgs = BUF + at;
    at = round16(at + 64 * wg_count);
    let tail_slots = lanes + 16;
    let tail = BUF + at;
    let rw_bytes = at + 8 * tail_slots;
    let ro_bytes = (16 * lanes + 128).div_ceil(64) * 64;
    let red_slots = next_pow2(u64::from(wg_lanes)) as u32;
    let shared_size = SHARED_GENERAL + 8 * red_slots;
    let c2 = ch.get(2).copied().unwrap_or(0);
    // Lanes `gid >= tail_b` run off the buffer end at tail accesses: half the
    // kernels fault there (when they reach one), half stay inside.
    let tail_b = if c2 % 3 == 0 {
        1 + u64::from(c2 >> 1) % lanes.max(1)
    } else {
        lanes + u64::from(c2 >> 1) % 17
    }
    .min(tail_slots);

    let mut uniforms: Vec<u8> = (0..UNIFORM_DATA).map(|i| (i * 37 + c0) as u8).collect();
    for a in [
        RO, cols[0], cols[1], cols[2], cols[3], cols[4], scat, wgs, tail,
    ] {
        uniforms.extend_from_slice(&a.to_le_bytes());
    }
    dispatch.uniforms = uniforms;

    let mut k = Kernel::new("gang");
    k.shared_size = shared_size;
    k.private_size = PRIVATE_BYTES;
    let entry = k.add_block();
    let mut g = Gen {
        ch: ch.get(3..).unwrap_or(&[]),
        pos: 0,
        k,
        cur: entry,
        pool: Vec::new(),
        depth: 0,
        budget: 60,
        out: Value::from_u32(0),
        gid: Value::from_u32(0),
        li: Value::from_u32(0),
        shared_size,
        ro_bytes: ro_bytes as u32,
        gang: None,
        tags: Tags::default(),
    };
    // gid = ((wg.z * n.y + wg.y) * n.x + wg.x) * lanes_per_wg + local_index
    let li = g.ins1(InstKind::Builtin(Builtin::LocalIndex), &[]);
    let wx = g.ins1(InstKind::Builtin(Builtin::WorkgroupId(0)), &[]);
    let wy = g.ins1(InstKind::Builtin(Builtin::WorkgroupId(1)), &[]);
    let wz = g.ins1(InstKind::Builtin(Builtin::WorkgroupId(2)), &[]);
    let nx = g.ins1(InstKind::Builtin(Builtin::NumWorkgroups(0)), &[]);
    let ny = g.ins1(InstKind::Builtin(Builtin::NumWorkgroups(1)), &[]);
    let sx = g.ins1(InstKind::Builtin(Builtin::WorkgroupSize(0)), &[]);
    let sy = g.ins1(InstKind::Builtin(Builtin::WorkgroupSize(1)), &[]);
    let sz = g.ins1(InstKind::Builtin(Builtin::WorkgroupSize(2)), &[]);
    let zy = g.bin(IBinOp::Mul, wz, ny);
    let zy = g.bin(IBinOp::Add, zy, wy);
    let row = g.bin(IBinOp::Mul, zy, nx);
    let wgl = g.bin(IBinOp::Add, row, wx);
    let per = g.bin(IBinOp::Mul, sx, sy);
    let per = g.bin(IBinOp::Mul, per, sz);
    let base = g.bin(IBinOp::Mul, wgl, per);
    let gid = g.bin(IBinOp::Add, base, li);
    let gid64 = g.zext64(gid);
    let stride = g.konst(Type::I64, OUT_WORDS * 8);
    let off = g.bin(IBinOp::Mul, gid64, stride);
    let start = g.konst(Type::I64, BUF + COUNTERS);
    g.out = g.bin(IBinOp::Add, start, off);
    g.gid = gid;
    g.li = li;
    g.pool = vec![li, gid, wx, wgl];
    g.gang = Some(Layout {
        lanes,
        wg_lanes,
        wave,
        ro_bytes,
        cols,
        scat,
        scat_slots,
        // Odd multipliers and any xor are bijections modulo a power of two.
        scat_mul: [1, 3, 5, 17, 0x9e37_79b1][(c2 >> 8) as usize % 5],
        scat_xor: (c2 >> 12) % scat_slots as u32,
        wgs,
        tail,
        tail_slots,
        tail_b,
        rw_bytes,
        red: SHARED_GENERAL,
        red_slots,
        wgl,
    });
    // One gang pattern at least, then the usual mix.
    let first = g.next() % 29;
    g.gang_stmt(first);
    let n = 4 + g.next() % 40;
    for _ in 0..n {
        g.stmt();
    }
    g.finish();

    // Counters and outputs start zeroed (as in `case`); the other areas hold a
    // pattern, so that a store an inactive lane must not make shows up.
    let mut rw = vec![0u8; rw_bytes as usize];
    let first_area = (cols[0] - BUF) as usize;
    for (i, b) in rw.iter_mut().enumerate().skip(first_area) {
        *b = (i as u32).wrapping_mul(53).wrapping_add(c1 >> 3) as u8;
    }
    let ro = (0..ro_bytes as usize)
        .map(|i| (i as u32 * 101 + c1) as u8)
        .collect();
    Case {
        kernel: g.k,
        dispatch,
        rw,
        ro,
        tags: g.tags,
    }
}

impl Gen<'_> {
    fn layout(&self) -> Layout {
        self.gang.expect("gang statements need a gang layout")
    }

    fn last_inst(&self) -> Inst {
        Inst::from_u32(self.k.insts.len() as u32 - 1)
    }

    fn bin(&mut self, op: IBinOp, a: Value, b: Value) -> Value {
        self.ins1(InstKind::IBinary(op), &[a, b])
    }

    fn zext64(&mut self, v: Value) -> Value {
        self.ins1(
            InstKind::Cast {
                op: CastOp::Zext,
                to: Type::I64,
            },
            &[v],
        )
    }

    fn i32c(&mut self, x: u64) -> Value {
        self.konst(Type::I32, x)
    }

    fn i64c(&mut self, x: u64) -> Value {
        self.konst(Type::I64, x)
    }

    fn icmp(&mut self, cc: IntCC, a: Value, b: Value) -> Value {
        self.ins1(InstKind::Icmp(cc), &[a, b])
    }

    fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        self.ins1(InstKind::Select, &[c, a, b])
    }

    fn jump(&mut self, to: Block, args: &[Value]) {
        self.k
            .set_terminator(self.cur, Terminator::Jump(BlockCall::new(to, args)));
    }

    fn branch(&mut self, cond: Value, then: BlockCall, otherwise: BlockCall) {
        self.k.set_terminator(
            self.cur,
            Terminator::Branch {
                cond,
                then,
                otherwise,
            },
        );
    }

    /// The address of table entry `k` (an area's base): a constant, or loaded
    /// from the uniforms so that the JIT cannot see it.
    fn base(&mut self, k: u32, addr: u64) -> Value {
        if self.next().is_multiple_of(3) {
            let o = self.i32c(u64::from(UNIFORM_DATA + 8 * k));
            self.ins1(
                InstKind::Load(MemAccess::scalar(AddrSpace::Uniform, Type::I64)),
                &[o],
            )
        } else {
            self.i64c(addr)
        }
    }

    /// `base + idx * scale + sub`, the index (i32) scaled in 64 or 32 bits.
    fn at(&mut self, base: Value, idx: Value, scale: u64, sub: u64) -> Value {
        let scaled = if self.next().is_multiple_of(4) {
            let s = self.i32c(scale);
            let x = self.bin(IBinOp::Mul, idx, s);
            self.zext64(x)
        } else {
            let x = self.zext64(idx);
            if scale.is_power_of_two() {
                let s = self.i64c(u64::from(scale.trailing_zeros()));
                self.bin(IBinOp::Shl, x, s)
            } else {
                let s = self.i64c(scale);
                self.bin(IBinOp::Mul, x, s)
            }
        };
        let a = self.bin(IBinOp::Add, base, scaled);
        if sub == 0 {
            a
        } else {
            let s = self.i64c(sub);
            self.bin(IBinOp::Add, a, s)
        }
    }

    /// A shape of at most `max` bytes (exactly `max` when `exact` and possible)
    /// at a sub-offset of a slot of `slot` bytes: `(access, sub)`. Rarely
    /// under-aligned (`align 1`, also at odd offsets) or over-aligned.
    fn shape(&mut self, space: AddrSpace, slot: u64, exact: bool) -> (MemAccess, u64) {
        let fits: Vec<(Type, u8, u8)> = SHAPES
            .iter()
            .copied()
            .filter(|&(_, bits, n)| {
                let total = u64::from(bits) / 8 * u64::from(n);
                if exact { total == slot } else { total <= slot }
            })
            .collect();
        let (ty, bits, count) = self.pick(&fits);
        let elem = u32::from(bits) / 8;
        let total = u64::from(elem) * u64::from(count);
        let mut a = MemAccess {
            space,
            ty,
            bits,
            count,
            signed: u32::from(bits) < ty.bits() && self.next().is_multiple_of(2),
            align: elem,
        };
        let room = slot - total;
        let c = self.next() % 8;
        let sub = if c == 0 && ty.is_int() {
            a.align = 1;
            u64::from(self.next()) % (room + 1)
        } else if c == 1 && total.is_power_of_two() && total > u64::from(elem) {
            a.align = total as u32;
            (u64::from(self.next()) % (room / total + 1)) * total
        } else {
            (u64::from(self.next()) % (room / u64::from(elem) + 1)) * u64::from(elem)
        };
        (a, sub)
    }

    /// Loads (results to the pool) or stores (values from the pool) `a` at
    /// `addr`; returns the instruction.
    fn load_or_store(&mut self, a: MemAccess, addr: Value, store: bool) -> Inst {
        if store {
            let mut args = vec![addr];
            for _ in 0..a.count {
                let v = self.val(a.ty);
                args.push(v);
            }
            self.ins(InstKind::Store(a), &args);
            self.last_inst()
        } else {
            let rs = self.ins(InstKind::Load(a), &[addr]);
            let i = self.last_inst();
            self.push_results(rs);
            i
        }
    }

    /// A partial execution mask (i1): lanes `>= k`, `< k`, one lane, one lane
    /// per gang, a bit of the local index, one global lane, the low lanes of
    /// each wave, or a value-dependent bit.
    fn lane_mask(&mut self) -> Value {
        let l = self.layout();
        let li = self.li;
        let c = self.next() % 8;
        let r = u64::from(self.next());
        match c {
            0 | 1 => {
                // Half the time at a gang boundary (whole gangs agree).
                let k = if r.is_multiple_of(2) {
                    u64::from(GANG) * (r / 2 % u64::from(l.wg_lanes / GANG + 2))
                } else {
                    r / 2 % u64::from(l.wg_lanes + 3)
                };
                let k = self.i32c(k);
                let cc = if c == 0 { IntCC::Uge } else { IntCC::Ult };
                self.icmp(cc, li, k)
            }
            2 => {
                let m = self.i32c(r % u64::from(l.wg_lanes));
                self.icmp(IntCC::Eq, li, m)
            }
            3 => {
                let f = self.i32c(u64::from(GANG - 1));
                let x = self.bin(IBinOp::And, li, f);
                let m = self.i32c(r % u64::from(GANG));
                self.icmp(IntCC::Eq, x, m)
            }
            4 => {
                let s = self.i32c(r % 5);
                let x = self.bin(IBinOp::ShrU, li, s);
                let one = self.i32c(1);
                let x = self.bin(IBinOp::And, x, one);
                self.icmp(IntCC::Ne, x, one)
            }
            5 => {
                let m = self.i32c(r % l.lanes.max(1));
                self.icmp(IntCC::Eq, self.gid, m)
            }
            6 => {
                let lane = self.ins1(InstKind::Builtin(Builtin::LaneId), &[]);
                let k = self.i32c(r % u64::from(l.wave + 1));
                self.icmp(IntCC::Ult, lane, k)
            }
            _ => self.cond(),
        }
    }

    pub(super) fn gang_stmt(&mut self, c: u32) {
        match c {
            0..=3 => self.column_access(),
            4..=5 => self.scatter_access(),
            6..=7 => self.uniform_access(),
            8..=9 => self.gather_ro(),
            10 => self.masked_fault(),
            12 if self.depth < 2 => self.swap_loop(),
            13..=14 => self.boundary_access(),
            15..=16 => self.partial_store(),
            17..=18 if self.depth < 2 => self.uniform_loop(),
            19 if self.depth < 2 => self.looped(true),
            20..=21 if self.depth < 2 => self.reduction(),
            22..=24 if self.depth < 2 => self.ring(),
            25 if self.depth < 3 => self.cross_edge(),
            26 => self.mixed_width(),
            28 => self.masked_exit(),
            27 => {
                let scope = self.pick(&[Scope::Workgroup, Scope::Device]);
                self.ins(InstKind::Fence(scope), &[]);
            }
            _ => self.column_access(),
        }
    }

    /// Contiguous: lane `gid` at `column + slot * gid (+ sub)`.
    fn column_access(&mut self) {
        let l = self.layout();
        let c = self.next() as usize % COL_SLOTS.len();
        let slot = COL_SLOTS[c];
        let exact = !self.next().is_multiple_of(3);
        let (a, sub) = self.shape(AddrSpace::Global, slot, exact);
        let base = self.base(1 + c as u32, l.cols[c]);
        let mut addr = self.at(base, self.gid, slot, sub);
        let store = self.next().is_multiple_of(2);
        if !store && self.next().is_multiple_of(4) {
            // Some lanes read the read-only buffer at the same offset instead:
            // one access, two regions.
            let m = self.lane_mask();
            let ro = self.base(0, RO);
            let other = self.at(ro, self.gid, slot, sub);
            addr = self.select(m, other, addr);
        }
        self.load_or_store(a, addr, store);
        self.tags.contiguous += 1;
    }

    /// Lane `gid`'s scatter slot `perm(gid)`.
    fn scatter_addr(&mut self, sub: u64) -> Value {
        let l = self.layout();
        let m = self.i32c(u64::from(l.scat_mul));
        let p = self.bin(IBinOp::Mul, self.gid, m);
        let x = self.i32c(u64::from(l.scat_xor));
        let p = self.bin(IBinOp::Xor, p, x);
        let mask = self.i32c(l.scat_slots - 1);
        let p = self.bin(IBinOp::And, p, mask);
        let base = self.base(6, l.scat);
        self.at(base, p, 8, sub)
    }

    fn scatter_access(&mut self) {
        let (a, sub) = self.shape(AddrSpace::Global, 8, false);
        let addr = self.scatter_addr(sub);
        let store = self.next().is_multiple_of(2);
        self.load_or_store(a, addr, store);
        self.tags.scattered += 1;
    }

    /// The workgroup's 64-byte slot plus `sub`.
    fn wg_slot(&mut self, sub: u64) -> Value {
        let l = self.layout();
        let base = self.base(7, l.wgs);
        self.at(base, l.wgl, 64, sub)
    }

    /// The same address for all lanes (of the dispatch or of the workgroup).
    fn uniform_access(&mut self) {
        let l = self.layout();
        match self.next() % 4 {
            0 => {
                let (a, _) = self.shape(AddrSpace::Global, 8, false);
                let off = u64::from(self.next()) % (l.ro_bytes / 8) * 8;
                let addr = self.i64c(RO + off);
                self.load_or_store(a, addr, false);
            }
            1 => {
                let (a, sub) = self.shape(AddrSpace::Global, 64, false);
                let addr = self.wg_slot(sub);
                let store = self.next().is_multiple_of(2);
                self.load_or_store(a, addr, store);
            }
            2 => {
                // Old value used: the lanes' order inside the workgroup is
                // the interpreter's.
                let ty = self.pick(&[Type::I32, Type::I64]);
                let op = self.pick(&ATOMIC);
                let sub = u64::from(self.next() % 8) * 8;
                let addr = self.wg_slot(sub);
                let mut args = vec![addr, self.val(ty)];
                if op == AtomicOp::CmpXchg {
                    args.push(self.val(ty));
                }
                let r = self.ins1(
                    InstKind::Atomic {
                        space: AddrSpace::Global,
                        op,
                        ty,
                    },
                    &args,
                );
                self.push(r);
            }
            _ => {
                // Lanes 8 apart share a word of the workgroup's slot (not a
                // uniform address: not counted as one).
                let seven = self.i32c(7);
                let j = self.bin(IBinOp::And, self.li, seven);
                let base = self.wg_slot(0);
                let addr = self.at(base, j, 8, 0);
                let (a, _) = self.shape(AddrSpace::Global, 8, true);
                let store = self.next().is_multiple_of(2);
                self.load_or_store(a, addr, store);
                return;
            }
        }
        self.tags.uniform_addr += 1;
    }

    /// Read-only loads at `(gid * stride + off) mod n`: uniform (stride 0),
    /// contiguous with a wrap (1), strided, or reversed.
    fn gather_ro(&mut self) {
        let l = self.layout();
        let (a, _) = self.shape(AddrSpace::Global, 8, false);
        let e = u64::from(a.elem_bytes()) * u64::from(a.count);
        let slots = l.ro_bytes / e;
        let pow2 = 1u64 << (63 - slots.leading_zeros());
        let stride = self.pick(&[0u32, 1, 1, 2, 3, 7, 16, 33, u32::MAX]);
        let off = u64::from(self.next()) % pow2;
        let s = self.i32c(u64::from(stride));
        let x = self.bin(IBinOp::Mul, self.gid, s);
        let o = self.i32c(off);
        let x = self.bin(IBinOp::Add, x, o);
        let m = self.i32c(pow2 - 1);
        let idx = self.bin(IBinOp::And, x, m);
        let base = self.base(0, RO);
        let addr = self.at(base, idx, e, 0);
        self.load_or_store(a, addr, false);
        match stride {
            0 => self.tags.uniform_addr += 1,
            1 => self.tags.contiguous += 1,
            _ => self.tags.scattered += 1,
        }
    }

    /// An access whose address is bad (out of range, unmapped, read-only or
    /// misaligned) for the lanes of a partial mask only. The bad lanes execute
    /// it (by select, or alone in a branch) or are masked off (no fault).
    fn masked_fault(&mut self) {
        let l = self.layout();
        let bad = self.lane_mask();
        // Three times in five the bad lanes are masked off (a fault would be
        // wrong).
        let mode = [0, 1, 2, 2, 2][self.next() as usize % 5];
        let kind = self.next() % 3;
        let v = self.next() % 4;
        let (a, good, bad_addr, store) = match kind {
            0 => {
                // Global load; good: contiguous read-only.
                let (a, _) = self.shape(AddrSpace::Global, 8, false);
                let total = u64::from(a.total_bytes());
                let base = self.base(0, RO);
                let good = self.at(base, self.gid, total, 0);
                let end = RO + l.ro_bytes;
                let bad_addr = match v {
                    0 => {
                        let k = u64::from(self.next() % 4);
                        self.i64c(end + 8 * k)
                    }
                    1 if a.align > 1 => {
                        let one = self.i64c(1);
                        self.bin(IBinOp::Add, good, one)
                    }
                    2 => self.i64c(0x10),
                    _ => self.i64c(end - total + u64::from(a.align)),
                };
                (a, good, bad_addr, false)
            }
            1 => {
                // Global store; good: the lane's own column slot.
                let (a, _) = self.shape(AddrSpace::Global, 8, false);
                let total = u64::from(a.total_bytes());
                let c = COL_SLOTS.iter().position(|&s| s == total).unwrap_or(3);
                let base = self.base(1 + c as u32, l.cols[c]);
                let good = self.at(base, self.gid, COL_SLOTS[c], 0);
                let bad_addr = match v {
                    0 => {
                        let ro = self.base(0, RO);
                        self.at(ro, self.gid, total, 0)
                    }
                    1 if a.align > 1 => {
                        let one = self.i64c(1);
                        self.bin(IBinOp::Add, good, one)
                    }
                    2 => self.i64c(BUF - 8),
                    _ => self.i64c(BUF + l.rw_bytes - total + u64::from(a.align)),
                };
                (a, good, bad_addr, true)
            }
            _ => {
                // Shared, either way.
                let (a, _) = self.shape(AddrSpace::Shared, 8, false);
                let total = a.total_bytes();
                let m = self.i32c(31);
                let j = self.bin(IBinOp::And, self.li, m);
                let eight = self.i32c(8);
                let good = self.bin(IBinOp::Mul, j, eight);
                let bad_addr = match v {
                    0 => {
                        let k = self.next() % 4;
                        self.i32c(u64::from(self.shared_size + 8 * k))
                    }
                    1 if a.align > 1 => {
                        let one = self.i32c(1);
                        self.bin(IBinOp::Add, good, one)
                    }
                    2 => self.i32c(0xffff_fff8),
                    _ => self.i32c(u64::from(self.shared_size - total + a.align)),
                };
                let store = self.next().is_multiple_of(2);
                (a, good, bad_addr, store)
            }
        };
        let addr = self.select(bad, bad_addr, good);
        if mode == 0 {
            let i = self.load_or_store(a, addr, store);
            self.tags.fault_sites.push((i, Site::Select));
            self.tags.masked_fault += 1;
            return;
        }
        // In a branch: the bad lanes alone (mode 1) or all but them (mode 2).
        let side = self.k.add_block();
        let join = self.k.add_block();
        let p = self.k.add_block_param(join, a.ty);
        let x = self.val(a.ty);
        let (t, e) = if mode == 1 {
            (BlockCall::new(side, &[]), BlockCall::new(join, &[x]))
        } else {
            (BlockCall::new(join, &[x]), BlockCall::new(side, &[]))
        };
        self.branch(bad, t, e);
        self.cur = side;
        let saved = self.pool.clone();
        let i = self.load_or_store(a, addr, store);
        let y = self.val(a.ty);
        self.jump(join, &[y]);
        self.pool = saved;
        self.cur = join;
        self.push(p);
        if mode == 1 {
            self.tags.fault_sites.push((i, Site::Branch));
            self.tags.masked_fault += 1;
        } else {
            self.tags.masked_off += 1;
        }
    }

    /// Off the end of an area at a lane boundary: read-only loads past the
    /// buffer for `gid >= b`, the tail of the writable buffer for
    /// `gid >= tail_b`, shared memory for local index `>= b`.
    fn boundary_access(&mut self) {
        let l = self.layout();
        let (i, site) = match self.next() % 4 {
            0 => {
                let (a, _) = self.shape(AddrSpace::Global, 16, false);
                let total = u64::from(a.total_bytes());
                // Past the last lane half of the time (no fault).
                let r = u64::from(self.next());
                let b = if r % 10 < 5 {
                    r / 5 % l.lanes.max(1)
                } else {
                    l.lanes + r / 5 % 8
                }
                .min(l.ro_bytes / total);
                let base = self.i64c(RO + l.ro_bytes - total * b);
                let addr = self.at(base, self.gid, total, 0);
                (self.load_or_store(a, addr, false), Site::RoEnd)
            }
            1 => {
                let (a, sub) = self.shape(AddrSpace::Global, 8, false);
                let idx = self.i32c(l.tail_slots - l.tail_b);
                let idx = self.bin(IBinOp::Add, self.gid, idx);
                let base = self.base(8, l.tail);
                let addr = self.at(base, idx, 8, sub);
                let store = !self.next().is_multiple_of(3);
                (self.load_or_store(a, addr, store), Site::TailEnd)
            }
            3 => {
                // Lanes `(li & 31) * 8 >= uniforms` (144 bytes) fault, unless
                // the offset is masked to 8 slots.
                let (a, _) = self.shape(AddrSpace::Uniform, 8, false);
                let m = self.pick(&[7u64, 31]);
                let m = self.i32c(m);
                let j = self.bin(IBinOp::And, self.li, m);
                let eight = self.i32c(8);
                let off = self.bin(IBinOp::Mul, j, eight);
                (self.load_or_store(a, off, false), Site::UniformEnd)
            }
            _ => {
                let (a, _) = self.shape(AddrSpace::Shared, 8, false);
                let total = a.total_bytes();
                let r = self.next();
                let b = if r % 10 < 3 {
                    r / 5 % l.wg_lanes
                } else {
                    l.wg_lanes + r / 5 % 4
                }
                .min(self.shared_size / total);
                let s = self.i32c(u64::from(total));
                let x = self.bin(IBinOp::Mul, self.li, s);
                let o = self.i32c(u64::from(self.shared_size - total * b));
                let off = self.bin(IBinOp::Add, x, o);
                let store = self.next().is_multiple_of(2);
                (self.load_or_store(a, off, store), Site::SharedEnd)
            }
        };
        self.tags.fault_sites.push((i, site));
        self.tags.boundary += 1;
    }

    /// The lanes of a partial mask (often whole gangs) store a marker and
    /// exit; later barriers must not wait for them.
    fn masked_exit(&mut self) {
        let m = self.lane_mask();
        let leave = self.k.add_block();
        let cont = self.k.add_block();
        self.branch(m, BlockCall::new(leave, &[]), BlockCall::new(cont, &[]));
        self.cur = leave;
        let tag = u64::from(self.next() % 0x1000);
        let marker = self.i64c(0xe0e0_0000 + tag);
        self.ins(
            InstKind::Store(MemAccess::scalar(AddrSpace::Global, Type::I64)),
            &[self.out, marker],
        );
        self.k.set_terminator(leave, Terminator::Exit);
        self.cur = cont;
    }

    /// A store by a partial mask (inactive lanes' slots must stay unchanged).
    fn partial_store(&mut self) {
        let l = self.layout();
        let m = self.lane_mask();
        let side = self.k.add_block();
        let join = self.k.add_block();
        self.branch(m, BlockCall::new(side, &[]), BlockCall::new(join, &[]));
        self.cur = side;
        let saved = self.pool.clone();
        match self.next() % 4 {
            0 | 1 => {
                let c = self.next() as usize % COL_SLOTS.len();
                let (a, sub) = self.shape(AddrSpace::Global, COL_SLOTS[c], true);
                let base = self.base(1 + c as u32, l.cols[c]);
                let mut addr = self.at(base, self.gid, COL_SLOTS[c], sub);
                if self.next().is_multiple_of(2) {
                    // The masked-off lanes' addresses are read-only or unmapped.
                    let bad = if self.next().is_multiple_of(2) {
                        self.i64c(RO)
                    } else {
                        self.i64c(8)
                    };
                    addr = self.select(m, addr, bad);
                    self.tags.masked_off += 1;
                }
                self.load_or_store(a, addr, true);
            }
            2 => {
                let (a, sub) = self.shape(AddrSpace::Global, 8, false);
                let addr = self.scatter_addr(sub);
                self.load_or_store(a, addr, true);
            }
            _ => {
                let (a, sub) = self.shape(AddrSpace::Global, 64, false);
                let addr = self.wg_slot(sub);
                self.load_or_store(a, addr, true);
            }
        }
        self.jump(join, &[]);
        self.pool = saved;
        self.cur = join;
        self.tags.partial_store += 1;
    }

    /// A loop whose trip count is the same for the whole dispatch, workgroup
    /// or wave, with an if/else on a bit of the lane's index inside and
    /// barriers at the top or bottom of the body.
    fn uniform_loop(&mut self) {
        let l = self.layout();
        let kind = self.next() % 4;
        let trip = match kind {
            0 => {
                let t = 1 + u64::from(self.next() % 4);
                self.i32c(t)
            }
            1 => {
                let o = u64::from(self.next() % 18) * 4;
                let o = self.i32c(o);
                let u = self.ins1(
                    InstKind::Load(MemAccess::scalar(AddrSpace::Uniform, Type::I32)),
                    &[o],
                );
                let three = self.i32c(3);
                let t = self.bin(IBinOp::And, u, three);
                let one = self.i32c(1);
                self.bin(IBinOp::Add, t, one)
            }
            _ => {
                // 2: per workgroup; 3: per wave.
                let w = if kind == 2 {
                    l.wgl
                } else {
                    self.ins1(InstKind::Builtin(Builtin::WaveId), &[])
                };
                let one = self.i32c(1);
                let t = self.bin(IBinOp::And, w, one);
                self.bin(IBinOp::Add, t, one)
            }
        };
        let ty = self.pick(&[Type::I32, Type::I64, Type::F32]);
        let init = self.val(ty);
        let bar_top = self.next().is_multiple_of(3);
        let bar_bottom = self.next().is_multiple_of(3);
        let head = self.k.add_block();
        let body = self.k.add_block();
        let odd = self.k.add_block();
        let even = self.k.add_block();
        let join = self.k.add_block();
        let exit = self.k.add_block();
        let i = self.k.add_block_param(head, Type::I32);
        let acc = self.k.add_block_param(head, ty);
        let jty = self.pick(&[Type::I32, Type::I64, Type::F64]);
        let jp = self.k.add_block_param(join, jty);
        let zero = self.i32c(0);
        self.jump(head, &[zero, init]);
        self.cur = head;
        let more = self.icmp(IntCC::Ult, i, trip);
        self.branch(more, BlockCall::new(body, &[]), BlockCall::new(exit, &[]));
        let saved = self.pool.clone();
        self.cur = body;
        if bar_top {
            self.ins(InstKind::Barrier, &[]);
        }
        self.push(i);
        self.push(acc);
        let parity = match self.next() % 3 {
            0 => {
                let s = u64::from(self.next() % 3);
                let s = self.i32c(s);
                self.bin(IBinOp::ShrU, self.li, s)
            }
            1 => self.ins1(InstKind::Builtin(Builtin::LaneId), &[]),
            _ => self.bin(IBinOp::Add, self.li, i),
        };
        let one = self.i32c(1);
        let bit = self.bin(IBinOp::And, parity, one);
        let c = self.icmp(IntCC::Ne, bit, one);
        self.branch(c, BlockCall::new(even, &[]), BlockCall::new(odd, &[]));
        let inner = self.pool.clone();
        for (side, n) in [(even, 1 + self.next() % 3), (odd, self.next() % 3)] {
            self.cur = side;
            self.body(n);
            if self.next().is_multiple_of(2) {
                self.column_access();
            }
            let v = self.val(jty);
            self.jump(join, &[v]);
            self.pool = inner.clone();
        }
        self.cur = join;
        if bar_bottom {
            self.ins(InstKind::Barrier, &[]);
        }
        self.push(jp);
        let next_acc = self.val(ty);
        let i1 = self.bin(IBinOp::Add, i, one);
        self.jump(head, &[i1, next_acc]);
        self.pool = saved;
        self.cur = exit;
        self.push(acc);
        self.tags.uniform_loop += 1;
        if bar_top || bar_bottom {
            // A trip count per wave makes the waves of a workgroup disagree.
            if kind == 3 {
                self.tags.barrier_divergent_loop += 1;
            } else {
                self.tags.barrier_uniform_loop += 1;
            }
        }
    }

    /// A shared-memory tree reduction over the workgroup, a barrier per level
    /// (like the bench's REDUCE, for any workgroup size): slot `li` holds a
    /// value, level `s` folds slot `li + s` into `li` for `li < s`.
    fn reduction(&mut self) {
        let l = self.layout();
        let ty = self.pick(&[Type::I32, Type::I64, Type::F32, Type::F64]);
        let kind = if ty.is_float() {
            let op = self.pick(&[FBinOp::Add, FBinOp::Max, FBinOp::Min]);
            let mode = if self.next().is_multiple_of(2) {
                FloatMode::IEEE
            } else {
                let m = self.mode();
                Self::fix_nan(m, wavejit_ir::FloatFormat::of_type(ty))
            };
            InstKind::FBinary { op, mode }
        } else {
            InstKind::IBinary(self.pick(&[IBinOp::Add, IBinOp::Xor, IBinOp::MaxU, IBinOp::MinS]))
        };
        // Where the barrier sits: loop head (REDUCE), latch, both, or only in
        // the folding lanes' branch (a divergent barrier).
        let bar = self.next() % 4;
        let a = MemAccess::scalar(AddrSpace::Shared, ty);
        let v = self.val(ty);
        let eight = self.i32c(8);
        let red = self.i32c(u64::from(l.red));
        let x = self.bin(IBinOp::Mul, self.li, eight);
        let mine = self.bin(IBinOp::Add, red, x);
        self.ins(InstKind::Store(a), &[mine, v]);
        let n = if self.next().is_multiple_of(2) {
            self.i32c(u64::from(l.wg_lanes))
        } else {
            let sx = self.ins1(InstKind::Builtin(Builtin::WorkgroupSize(0)), &[]);
            let sy = self.ins1(InstKind::Builtin(Builtin::WorkgroupSize(1)), &[]);
            let sz = self.ins1(InstKind::Builtin(Builtin::WorkgroupSize(2)), &[]);
            let n = self.bin(IBinOp::Mul, sx, sy);
            self.bin(IBinOp::Mul, n, sz)
        };
        let head = self.k.add_block();
        let fold = self.k.add_block();
        let latch = self.k.add_block();
        let done = self.k.add_block();
        let s = self.k.add_block_param(head, Type::I32);
        let s0 = self.i32c(u64::from(l.red_slots / 2));
        self.jump(head, &[s0]);
        self.cur = head;
        if bar == 0 || bar == 2 {
            self.ins(InstKind::Barrier, &[]);
        }
        let lo = self.icmp(IntCC::Ult, self.li, s);
        let other = self.bin(IBinOp::Add, self.li, s);
        let inside = self.icmp(IntCC::Ult, other, n);
        let go = self.bin(IBinOp::And, lo, inside);
        self.branch(go, BlockCall::new(fold, &[]), BlockCall::new(latch, &[]));
        self.cur = fold;
        if bar == 3 {
            self.ins(InstKind::Barrier, &[]);
        }
        let mine_v = self.ins1(InstKind::Load(a), &[mine]);
        let ox = self.bin(IBinOp::Mul, other, eight);
        let theirs = self.bin(IBinOp::Add, red, ox);
        let their_v = self.ins1(InstKind::Load(a), &[theirs]);
        let r = self.ins1(kind, &[mine_v, their_v]);
        self.ins(InstKind::Store(a), &[mine, r]);
        self.jump(latch, &[]);
        self.cur = latch;
        if bar == 1 || bar == 2 {
            self.ins(InstKind::Barrier, &[]);
        }
        let one = self.i32c(1);
        let s2 = self.bin(IBinOp::ShrU, s, one);
        let zero = self.i32c(0);
        let again = self.icmp(IntCC::Ne, s2, zero);
        self.branch(
            again,
            BlockCall::new(head, &[s2]),
            BlockCall::new(done, &[]),
        );
        self.cur = done;
        self.ins(InstKind::Barrier, &[]);
        let total = self.ins1(InstKind::Load(a), &[red]);
        self.push(total);
        self.tags.reduction += 1;
        if bar == 3 {
            self.tags.barrier_divergent_loop += 1;
        } else {
            self.tags.barrier_uniform_loop += 1;
        }
    }

    /// A ring of 2-3 blocks, laid out in a random order, each counting a trip
    /// and passing a value on; the last leaves after `n` trips (per lane).
    /// Variants: entered at several blocks (irreducible: a jump into the
    /// middle of the loop), other blocks leave early too (multi-exit, to a
    /// second exit block), a barrier in the ring.
    fn ring(&mut self) {
        let size = 2 + self.next() as usize % 2;
        // Blocks in a random layout order.
        let mut blocks: Vec<Block> = (0..size + 2).map(|_| self.k.add_block()).collect();
        for j in (1..blocks.len()).rev() {
            let r = self.next() as usize % (j + 1);
            blocks.swap(j, r);
        }
        let (ring, rest) = blocks.split_at(size);
        let (exit, early) = (rest[0], rest[1]);
        let ty = self.pick(&[Type::I32, Type::I64, Type::F32]);
        let x = self.val(Type::I32);
        let lane = self.li;
        let mixed = self.bin(IBinOp::Add, x, lane);
        let three = self.i32c(3);
        let n = self.bin(IBinOp::And, mixed, three);
        let init = self.val(ty);
        let zero = self.i32c(0);
        let params: Vec<(Value, Value)> = ring
            .iter()
            .map(|&b| {
                (
                    self.k.add_block_param(b, Type::I32),
                    self.k.add_block_param(b, ty),
                )
            })
            .collect();
        let r_exit = self.k.add_block_param(exit, ty);
        let r_early = self.k.add_block_param(early, ty);
        let entries = self.next() % 3;
        match entries {
            0 => self.jump(ring[0], &[zero, init]),
            1 => {
                let c = self.lane_mask();
                let k = 1 + self.next() as usize % (size - 1);
                self.branch(
                    c,
                    BlockCall::new(ring[k], &[zero, init]),
                    BlockCall::new(ring[0], &[zero, init]),
                );
            }
            _ => {
                let y = self.val(Type::I32);
                let idx = self.bin(IBinOp::Xor, y, lane);
                let idx = self.bin(IBinOp::And, idx, three);
                let targets: Vec<BlockCall> = ring
                    .iter()
                    .map(|&b| BlockCall::new(b, &[zero, init]))
                    .collect();
                self.k.set_terminator(
                    self.cur,
                    Terminator::Table {
                        index: idx,
                        targets,
                        default: BlockCall::new(ring[size - 1], &[zero, init]),
                    },
                );
            }
        }
        let multi_exit = self.next().is_multiple_of(2);
        let barrier_at = self.next() as usize % (2 * size);
        let saved = self.pool.clone();
        for (j, &b) in ring.iter().enumerate() {
            self.cur = b;
            let (i, acc) = params[j];
            if barrier_at == j {
                self.ins(InstKind::Barrier, &[]);
                self.tags.barrier_divergent_loop += 1;
            }
            self.push(i);
            self.push(acc);
            let m = self.next() % 3;
            self.body(m);
            let v = self.val(ty);
            let one = self.i32c(1);
            let i1 = self.bin(IBinOp::Add, i, one);
            let more = self.icmp(IntCC::Ult, i1, n);
            let next = ring[(j + 1) % size];
            if j == size - 1 {
                self.branch(
                    more,
                    BlockCall::new(next, &[i1, v]),
                    BlockCall::new(exit, &[v]),
                );
            } else if multi_exit {
                // Leaves early on a lane-dependent bit of the trip.
                let b2 = self.bin(IBinOp::Xor, i1, lane);
                let two = self.i32c(2);
                let b2 = self.bin(IBinOp::And, b2, two);
                let stay = self.icmp(IntCC::Eq, b2, zero);
                self.branch(
                    stay,
                    BlockCall::new(next, &[i1, v]),
                    BlockCall::new(early, &[v]),
                );
            } else {
                self.jump(next, &[i1, v]);
            }
            self.pool = saved.clone();
        }
        self.cur = early;
        if barrier_at == size + 1 {
            self.ins(InstKind::Barrier, &[]);
        }
        self.jump(exit, &[r_early]);
        self.cur = exit;
        self.push(r_exit);
        if entries > 0 {
            self.tags.multi_entry_loop += 1;
        }
        if multi_exit {
            self.tags.multi_exit_loop += 1;
        }
    }

    /// A loop whose back edge swaps two block parameters (a parallel copy),
    /// then a branch to one block with different arguments on its two edges.
    fn swap_loop(&mut self) {
        let ty = self.pick(&[Type::I32, Type::I64, Type::F32, Type::F64]);
        let (x, y) = (self.val(ty), self.val(ty));
        let z = self.val(Type::I32);
        let mixed = self.bin(IBinOp::Add, z, self.li);
        let three = self.i32c(3);
        let n = self.bin(IBinOp::And, mixed, three);
        let head = self.k.add_block();
        let exit = self.k.add_block();
        let join = self.k.add_block();
        let i = self.k.add_block_param(head, Type::I32);
        let a = self.k.add_block_param(head, ty);
        let b = self.k.add_block_param(head, ty);
        let p = self.k.add_block_param(exit, ty);
        let q = self.k.add_block_param(exit, ty);
        let r = self.k.add_block_param(join, ty);
        let zero = self.i32c(0);
        self.jump(head, &[zero, x, y]);
        self.cur = head;
        let saved = self.pool.clone();
        self.push(a);
        self.push(b);
        let m = self.next() % 3;
        self.body(m);
        let b2 = self.val(ty);
        let one = self.i32c(1);
        let i1 = self.bin(IBinOp::Add, i, one);
        let more = self.icmp(IntCC::Ult, i1, n);
        self.branch(
            more,
            BlockCall::new(head, &[i1, b2, a]),
            BlockCall::new(exit, &[a, b]),
        );
        self.pool = saved;
        self.cur = exit;
        let c = self.lane_mask();
        self.branch(c, BlockCall::new(join, &[p]), BlockCall::new(join, &[q]));
        self.cur = join;
        self.push(r);
    }

    /// An if/else whose then side may jump into the middle of the else side
    /// (a join that is not the end of a structured region).
    fn cross_edge(&mut self) {
        let c = self.lane_mask();
        let ty = self.pick(&[Type::I32, Type::I64, Type::F32]);
        let then = self.k.add_block();
        let else1 = self.k.add_block();
        let else2 = self.k.add_block();
        let join = self.k.add_block();
        let p = self.k.add_block_param(join, ty);
        self.branch(c, BlockCall::new(then, &[]), BlockCall::new(else1, &[]));
        let saved = self.pool.clone();
        self.cur = then;
        let m = self.next() % 3;
        self.body(m);
        let c2 = self.lane_mask();
        let v = self.val(ty);
        self.branch(c2, BlockCall::new(else2, &[]), BlockCall::new(join, &[v]));
        self.pool = saved.clone();
        for b in [else1, else2] {
            self.cur = b;
            let m = self.next() % 3;
            self.body(m);
            if b == else1 {
                self.jump(else2, &[]);
            } else {
                let v = self.val(ty);
                self.jump(join, &[v]);
            }
            self.pool = saved.clone();
        }
        self.cur = join;
        self.push(p);
        self.tags.cross_edge += 1;
    }

    /// i8/i16/i64/f64 and vector accesses of shared, private and uniform memory
    /// (shared also contiguous by local index).
    fn mixed_width(&mut self) {
        match self.next() % 4 {
            0 => {
                let (a, sub) = self.shape(AddrSpace::Shared, 8, false);
                let off = self.offset(SHARED_GENERAL - 8, 8, self.shared_size);
                let s = self.i32c(sub);
                let off = self.bin(IBinOp::Add, off, s);
                let store = self.next().is_multiple_of(2);
                self.load_or_store(a, off, store);
            }
            1 => {
                let (a, sub) = self.shape(AddrSpace::Private, 8, false);
                let off = self.offset(PRIVATE_BYTES - 8, 8, PRIVATE_BYTES);
                let s = self.i32c(sub);
                let off = self.bin(IBinOp::Add, off, s);
                let store = self.next().is_multiple_of(2);
                self.load_or_store(a, off, store);
            }
            2 => {
                let (a, sub) = self.shape(AddrSpace::Uniform, 8, false);
                let o = u64::from(self.next() % 8) * 8 + sub;
                let o = self.i32c(o);
                self.load_or_store(a, o, false);
            }
            _ => {
                let (a, sub) = self.shape(AddrSpace::Shared, 8, true);
                let eight = self.i32c(8);
                let x = self.bin(IBinOp::Mul, self.li, eight);
                let s = self.i32c(sub);
                let off = self.bin(IBinOp::Add, x, s);
                let store = self.next().is_multiple_of(2);
                self.load_or_store(a, off, store);
            }
        }
    }
}
