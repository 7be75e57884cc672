//! Differential testing: random valid kernels on the interpreter and on the JIT at
//! several batch widths and thread counts must agree bit for bit (memory and
//! faults). Two generators: the original one ([`kernelgen::case`]) and the gang
//! one ([`kernelgen::gang_case`]: partial gangs, masked and gang-straddling
//! faults, mixed address patterns, barriers in loops, reductions, unstructured
//! CFGs). Below them: coverage assertions (a weak generator fails) and one small
//! hand-built kernel per gang pattern, checked exactly.

mod kernelgen;
mod support;

use proptest::prelude::*;
use wavejit_ir::analysis::cfg::Cfg;
use wavejit_ir::analysis::dominance::DomTree;
use wavejit_ir::interp::Interpreter;
use wavejit_ir::{
    AccessCause, AddrSpace, Dispatch, Fault, FaultKind, InstKind, Kernel, LaneId, Type,
};

use support::{BUF, Outcome, RO, compare};

fn check(c: &kernelgen::Case) {
    if let Err(e) = wavejit_ir::verify::verify(&c.kernel) {
        panic!("generator made an invalid kernel: {e}");
    }
    compare(&c.kernel, &c.dispatch, &c.rw, &c.ro);
}

/// Cases per run of each generator. Release: 1,000 + 2,000, each run in the
/// five configurations of `support::jit_configs` (15,000 JIT runs; the whole
/// file takes about 45 s on two shared cores, 41 s of CPU).
fn cases(gang: bool) -> u32 {
    match (cfg!(debug_assertions), gang) {
        (true, _) => 100,
        (false, false) => 1000,
        (false, true) => 2000,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(false), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn jit_matches_interpreter(choices in proptest::collection::vec(any::<u32>(), 0..600)) {
        check(&kernelgen::case(&choices));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(true), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    // Gang kernels use about 330 choices on average (up to ~600): longer
    // streams than the original generator's keep the kernels' ends random.
    fn jit_matches_interpreter_gang(choices in proptest::collection::vec(any::<u32>(), 0..1000)) {
        check(&kernelgen::gang_case(&choices));
    }
}

/// Cases of the long runs: `WAVEJIT_LONG_CASES` or 50,000 (each generator).
fn long_cases() -> u32 {
    std::env::var("WAVEJIT_LONG_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50_000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: long_cases(), failure_persistence: None, ..ProptestConfig::default() })]

    /// The long run: `cargo test --release -p wavejit-jit --test differential -- --ignored`.
    #[test]
    #[ignore]
    fn jit_matches_interpreter_long(choices in proptest::collection::vec(any::<u32>(), 0..1500)) {
        check(&kernelgen::case(&choices));
    }

    #[test]
    #[ignore]
    fn jit_matches_interpreter_gang_long(choices in proptest::collection::vec(any::<u32>(), 0..1500)) {
        check(&kernelgen::gang_case(&choices));
    }
}

/// A deterministic choice stream per seed (for the coverage tests).
fn stream(seed: u32, len: u32) -> Vec<u32> {
    (0..len)
        .map(|i| (seed.wrapping_mul(2_654_435_761) ^ i.wrapping_mul(40_503)).rotate_left(i % 31))
        .collect()
}

/// What the generator produces, so that a weak generator shows up as a failure:
/// a fair share of cases must fault, and most must finish with memory to compare.
#[test]
fn generator_covers_faults_and_clean_runs() {
    let mut faults = 0;
    let mut insts = 0;
    let mut per_lane_loops = 0;
    let jit = wavejit_jit::Jit::default();
    let n = 200u32;
    for seed in 0..n {
        let c = kernelgen::case(&stream(seed, 400));
        insts += c.kernel.insts.len();
        if let Ok(compiled) = jit.compile(&c.kernel, 64) {
            per_lane_loops += usize::from(compiled.per_lane_loops() > 0);
        }
        let out = support::run_on(&Interpreter, &c.kernel, &c.dispatch, &c.rw, &c.ro, false);
        faults += u32::from(out.fault.is_some());
    }
    eprintln!(
        "{faults}/{n} faulted, {} instructions per kernel, {per_lane_loops} with loops run per lane",
        insts / n as usize
    );
    assert!(
        per_lane_loops > 10,
        "{per_lane_loops} of {n} cases loop per lane"
    );
    assert!(faults > 10 && faults < 110, "{faults} of {n} cases fault");
    assert!(insts / n as usize > 50);
}

/// Which engine ran the gang cases. When the JIT counts its interpreter
/// fallbacks (`Jit::interpreter_fallbacks`, the gang core's), verified kernels
/// of ordinary shapes must all run in compiled code: issue 12 allows no silent
/// fallback. Against a JIT without the counter only the report's shape is
/// checked.
#[test]
fn gang_cases_run_in_compiled_code() {
    let (mut reported, mut fell_back) = (0, Vec::new());
    for seed in 0..40 {
        let c = kernelgen::gang_case(&stream(seed + 1000, 500));
        let (_, paths) = support::compare_report(&c.kernel, &c.dispatch, &c.rw, &c.ro);
        assert_eq!(paths.len(), support::jit_configs().len());
        for (k, p) in paths.into_iter().enumerate() {
            reported += usize::from(p.is_some());
            if p.is_some_and(|n| n > 0) {
                fell_back.push((seed, k));
            }
        }
    }
    eprintln!("{reported} of 200 runs reported their engine path");
    assert!(
        fell_back.is_empty(),
        "the interpreter ran {} of 200 runs, first (seed, configuration): {:?}",
        fell_back.len(),
        &fell_back[..fell_back.len().min(10)]
    );
}

/// True when some cycle of the CFG has more than one entry: a retreating edge
/// (to a block not later in reverse postorder) whose target does not dominate
/// its source.
fn irreducible(k: &Kernel) -> bool {
    let cfg = Cfg::compute(k);
    let dom = DomTree::from_cfg(&cfg);
    dom.rpo().iter().any(|&b| {
        cfg.succs(b).iter().any(|&t| {
            dom.rpo_index(t) <= dom.rpo_index(b) && dom.is_reachable(t) && !dom.dominates(t, b)
        })
    })
}

/// True when a barrier sits in a block that can reach itself.
fn barrier_in_cycle(k: &Kernel) -> bool {
    let cfg = Cfg::compute(k);
    k.blocks.iter().any(|(b, data)| {
        let barrier = data
            .insts
            .iter()
            .any(|&i| matches!(k.insts[i].kind, InstKind::Barrier));
        if !barrier {
            return false;
        }
        let mut seen = vec![false; k.blocks.len()];
        let mut work: Vec<_> = cfg.succs(b).to_vec();
        while let Some(x) = work.pop() {
            if x == b {
                return true;
            }
            if !std::mem::replace(&mut seen[x.as_u32() as usize], true) {
                work.extend_from_slice(cfg.succs(x));
            }
        }
        false
    })
}

/// Global accesses of 1, 2 and 8 bytes per element and of f64 values.
fn global_widths(k: &Kernel) -> [bool; 4] {
    let mut w = [false; 4];
    for data in k.insts.values() {
        if let InstKind::Load(a) | InstKind::Store(a) = data.kind
            && a.space == AddrSpace::Global
        {
            w[0] |= a.bits == 8;
            w[1] |= a.bits == 16;
            w[2] |= a.bits == 64;
            w[3] |= a.ty == Type::F64;
        }
    }
    w
}

/// The gang generator's coverage, measured on the kernels, dispatches and
/// interpreter outcomes where possible (not only on what it says it emitted):
/// partial gangs, odd waves, multi-dimensional workgroups, faults by a lane in
/// the middle of a gang, every kind of designed fault firing, masked-off bad
/// lanes in clean runs, barriers in loops, reductions, irreducible loops, and
/// contiguous, uniform and scattered addresses in one kernel.
#[test]
fn gang_generator_covers_new_paths() {
    let n = 300u32;
    #[derive(Default, Debug)]
    struct Count {
        partial_gang: u32,
        wave_not_dividing: u32,
        multi_dim: u32,
        multi_wg: u32,
        faults: u32,
        mid_gang_fault: u32,
        watchdog: u32,
        site_fault: u32,
        clean_masked_off: u32,
        barrier_in_cycle: u32,
        barrier_uniform_loop: u32,
        barrier_divergent_loop: u32,
        clean_reduction: u32,
        irreducible: u32,
        multi_exit: u32,
        cross_edge: u32,
        partial_store: u32,
        mixed_addresses: u32,
        narrow_and_wide: u32,
    }
    let mut k = Count::default();
    let mut sites = std::collections::BTreeMap::new();
    for seed in 0..n {
        let c = kernelgen::gang_case(&stream(seed, 500));
        if let Err(e) = wavejit_ir::verify::verify(&c.kernel) {
            panic!("seed {seed}: generator made an invalid kernel: {e}");
        }
        let d = &c.dispatch;
        let wg = d.lanes_per_workgroup();
        let t = &c.tags;
        k.partial_gang += u32::from(!wg.is_multiple_of(kernelgen::GANG));
        k.wave_not_dividing += u32::from(!wg.is_multiple_of(d.wave_size));
        k.multi_dim += u32::from(d.workgroup_size[1] > 1 || d.workgroup_size[2] > 1);
        k.multi_wg += u32::from(d.workgroup_count() > 1);
        k.barrier_in_cycle += u32::from(barrier_in_cycle(&c.kernel));
        k.barrier_uniform_loop += u32::from(t.barrier_uniform_loop > 0);
        k.barrier_divergent_loop += u32::from(t.barrier_divergent_loop > 0);
        k.irreducible += u32::from(irreducible(&c.kernel));
        k.multi_exit += u32::from(t.multi_exit_loop > 0);
        k.cross_edge += u32::from(t.cross_edge > 0);
        k.partial_store += u32::from(t.partial_store > 0);
        k.mixed_addresses += u32::from(t.contiguous > 0 && t.uniform_addr > 0 && t.scattered > 0);
        k.narrow_and_wide += u32::from(global_widths(&c.kernel).iter().all(|&x| x));
        let out = support::run_on(&Interpreter, &c.kernel, d, &c.rw, &c.ro, false);
        match &out.fault {
            Some(f) => {
                k.faults += 1;
                let [sx, sy, _] = d.workgroup_size;
                let [x, y, z] = f.lane.local;
                // Lower lanes of its gang ran on without faulting.
                k.mid_gang_fault += u32::from(!(x + sx * (y + sy * z)).is_multiple_of(16));
                k.watchdog += u32::from(matches!(f.kind, FaultKind::Watchdog { .. }));
                if let Some((_, site)) = t.fault_sites.iter().find(|s| Some(s.0) == f.inst) {
                    k.site_fault += 1;
                    *sites.entry(*site).or_insert(0u32) += 1;
                }
            }
            None => {
                k.clean_masked_off += u32::from(t.masked_off > 0);
                k.clean_reduction += u32::from(t.reduction > 0);
            }
        }
    }
    eprintln!("of {n} gang cases: {k:?}\nfaults at designed sites: {sites:?}");
    // Lower bounds at about half of what the generator gives today (the
    // streams are fixed, so these only move when the generator changes).
    let shares = [
        (k.partial_gang, 50, "partial gangs"),
        (k.wave_not_dividing, 35, "waves not dividing the workgroup"),
        (k.multi_dim, 25, "multi-dimensional workgroups"),
        (k.multi_wg, 60, "several workgroups"),
        (k.faults, 30, "faults"),
        (
            k.mid_gang_fault,
            15,
            "faults by a lane in the middle of a gang",
        ),
        (k.site_fault, 10, "faults at designed sites"),
        (k.watchdog, 3, "watchdog faults"),
        (
            k.clean_masked_off,
            5,
            "clean runs with masked-off bad lanes",
        ),
        (k.barrier_in_cycle, 40, "barriers in cycles"),
        (k.barrier_uniform_loop, 25, "barriers in uniform loops"),
        (k.barrier_divergent_loop, 25, "barriers in divergent loops"),
        (k.clean_reduction, 10, "clean runs with a reduction"),
        (k.irreducible, 20, "irreducible CFGs"),
        (k.multi_exit, 20, "multi-exit loops"),
        (k.cross_edge, 15, "cross edges"),
        (k.partial_store, 25, "partial-mask stores"),
        (k.mixed_addresses, 15, "contiguous + uniform + scattered"),
        (
            k.narrow_and_wide,
            15,
            "global i8, i16, i64 and f64 in one kernel",
        ),
    ];
    for (x, pct, what) in shares {
        assert!(
            x * 100 >= n * pct,
            "{what}: {x} of {n} gang cases, want >= {pct}%"
        );
    }
    // Most cases must still finish with memory to compare.
    assert!(
        k.faults * 100 <= n * 70,
        "{} of {n} gang cases fault",
        k.faults
    );
    for site in [
        kernelgen::Site::Select,
        kernelgen::Site::Branch,
        kernelgen::Site::RoEnd,
        kernelgen::Site::TailEnd,
        kernelgen::Site::SharedEnd,
        kernelgen::Site::UniformEnd,
    ] {
        let got = sites.get(&site).copied().unwrap_or(0);
        assert!(got >= 4, "{site:?} faulted in {got} of {n} cases");
    }
}

// ---------------------------------------------------------------------------
// One hand-built kernel per gang pattern. `compare` checks the JIT against the
// interpreter in every configuration; each test also checks the interpreter's
// outcome against values computed here, so that none passes vacuously.

fn parse(text: &str) -> Kernel {
    let text = text
        .replace("{BUF}", &format!("{BUF:#x}"))
        .replace("{RO}", &format!("{RO:#x}"))
        .replace("{GID}", GID);
    match wavejit_ir::text::parse(&text) {
        Ok(k) => k,
        Err(e) => panic!("test kernel does not parse: {e}"),
    }
}

/// Linear global id for dispatches of workgroups along x only (the local
/// shape may be 2-D or 3-D).
const GID: &str = "
  %li = local_index
  %wg = workgroup_id.x
  %sx = workgroup_size.x
  %sy = workgroup_size.y
  %sz = workgroup_size.z
  %sxy = imul.i32 %sx, %sy
  %n = imul.i32 %sxy, %sz
  %base = imul.i32 %wg, %n
  %gid = iadd.i32 %base, %li
  %gid64 = zext.i32.i64 %gid
  %zero = const.i32 0
  %one = const.i32 1
";

/// Bytes that are not zero and differ word to word: stores that must not
/// happen show up.
fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 29 + 11) as u8).collect()
}

fn u32_at(m: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(m[4 * i..4 * i + 4].try_into().unwrap())
}

fn dispatch(groups: u32, wg: [u32; 3], wave: u32) -> Dispatch {
    let mut d = Dispatch::new([groups, 1, 1], wg);
    d.wave_size = wave;
    d
}

/// Partial gangs, workgroups straddling gangs, waves not dividing the
/// workgroup, multi-dimensional workgroups.
const SHAPES: [(u32, [u32; 3], u32); 10] = [
    (3, [1, 1, 1], 4),
    (2, [3, 1, 1], 8),
    (1, [5, 1, 1], 16),
    (3, [17, 1, 1], 8),
    (2, [33, 1, 1], 32),
    (1, [48, 1, 1], 64),
    (2, [100, 1, 1], 16),
    (2, [5, 3, 2], 4),
    (1, [17, 2, 1], 24),
    (1, [16, 1, 1], 16),
];

fn memory_of(out: Outcome) -> Vec<u8> {
    if let Some(f) = out.fault {
        panic!("unexpected fault: {f}");
    }
    out.memory
}

/// A contiguous load and store (`base + 4 * gid`) in every shape; the words
/// after the last lane keep their contents.
#[test]
fn gang_contiguous_copy_partial_gangs() {
    let k = parse(
        "kernel @copy shared 0 private 0 {
block0:{GID}
  %two = const.i64 2
  %off = shl.i64 %gid64, %two
  %ro = const.i64 {RO}
  %src = iadd.i64 %ro, %off
  %x = load.global.i32 %src
  %three = const.i32 3
  %y = imul.i32 %x, %three
  %z = iadd.i32 %y, %gid
  %buf = const.i64 {BUF}
  %dst = iadd.i64 %buf, %off
  store.global.i32 %dst, %z
  exit
}",
    );
    let ro = pattern(1024);
    for (groups, wg, wave) in SHAPES {
        let d = dispatch(groups, wg, wave);
        let lanes = (groups * d.lanes_per_workgroup()) as usize;
        let rw = pattern(4 * lanes + 64);
        let m = memory_of(compare(&k, &d, &rw, &ro));
        for i in 0..lanes + 16 {
            let want = if i < lanes {
                u32_at(&ro, i).wrapping_mul(3).wrapping_add(i as u32)
            } else {
                u32_at(&rw, i)
            };
            assert_eq!(u32_at(&m, i), want, "word {i} with {wg:?} x {groups}");
        }
    }
}

fn memory_fault(f: &Fault) -> (AddrSpace, u64, u32, bool, AccessCause) {
    match f.kind {
        FaultKind::Memory {
            space,
            addr,
            size,
            write,
            cause,
        } => (space, addr, size, write, cause),
        ref k => panic!("not a memory fault: {k:?}"),
    }
}

fn lane(workgroup: u32, local: [u32; 3]) -> LaneId {
    LaneId {
        workgroup: [workgroup, 0, 0],
        local,
    }
}

/// Lanes `gid >= 21` load past the end of the read-only buffer: the boundary
/// falls inside a gang (and inside the second workgroup of 17); the fault is
/// the lowest such lane's.
#[test]
fn gang_straddling_fault_reports_lowest_lane() {
    let ro_len = 512u64;
    let k = parse(
        &"kernel @edge shared 0 private 0 {
block0:{GID}
  %two = const.i64 2
  %off = shl.i64 %gid64, %two
  %ro = const.i64 {EDGE}
  %src = iadd.i64 %ro, %off
  %x = load.global.i32 %src
  %buf = const.i64 {BUF}
  %dst = iadd.i64 %buf, %off
  store.global.i32 %dst, %x
  exit
}"
        .replace("{EDGE}", &format!("{:#x}", RO + ro_len - 4 * 21)),
    );
    let ro = pattern(ro_len as usize);
    for (groups, wg, wave, at) in [
        (3, [17, 1, 1], 8, lane(1, [4, 0, 0])),
        (1, [64, 1, 1], 64, lane(0, [21, 0, 0])),
        (2, [5, 3, 2], 4, lane(0, [1, 1, 1])),
    ] {
        let d = dispatch(groups, wg, wave);
        let rw = pattern(4 * 64 * 3);
        let out = compare(&k, &d, &rw, &ro);
        let f = out.fault.expect("lanes past the end must fault");
        assert_eq!(f.lane, at, "with {wg:?}");
        assert_eq!(
            memory_fault(&f),
            (
                AddrSpace::Global,
                RO + ro_len,
                4,
                false,
                AccessCause::Unmapped
            )
        );
    }
}

/// 8-byte loads (two i32, aligned to 4) at `end - 4 + 4 * (gid - k)`: lane
/// `k`'s access starts 4 bytes before the end of the read-only buffer and runs
/// past it (out of bounds), lanes above `k` start at or past the end
/// (unmapped). A range test that checks only the start lets lane `k` through.
#[test]
fn gang_access_straddling_region_end() {
    let ro_len = 512u64;
    for k_lane in [1u64, 7, 16, 21] {
        let k = parse(
            &"kernel @straddle shared 0 private 0 {
block0:{GID}
  %two = const.i64 2
  %off = shl.i64 %gid64, %two
  %ro = const.i64 {EDGE}
  %src = iadd.i64 %ro, %off
  %x, %y = load.global.i32x2 %src align 4
  %buf = const.i64 {BUF}
  %three = const.i64 3
  %o8 = shl.i64 %gid64, %three
  %dst = iadd.i64 %buf, %o8
  store.global.i32x2 %dst, %y, %x align 4
  exit
}"
            .replace("{EDGE}", &format!("{:#x}", RO + ro_len - 4 * k_lane - 4)),
        );
        let ro = pattern(ro_len as usize);
        let d = dispatch(2, [17, 1, 1], 8);
        let out = compare(&k, &d, &pattern(8 * 34), &ro);
        let f = out.fault.expect("the lanes at the end must fault");
        let g = k_lane as u32;
        assert_eq!(f.lane, lane(g / 17, [g % 17, 0, 0]));
        assert_eq!(
            memory_fault(&f),
            (
                AddrSpace::Global,
                RO + ro_len - 4,
                8,
                false,
                AccessCause::OutOfBounds
            )
        );
    }
}

/// Lane 9 faults at the first load, lane 3 at the second: the reported fault
/// is lane 3's (the lowest lane), although it comes later in the program and
/// lane 9 sits in the same gang.
#[test]
fn gang_lower_lane_faulting_later_wins() {
    let k = parse(
        "kernel @two shared 0 private 0 {
block0:{GID}
  %ro = const.i64 {RO}
  %nine = const.i32 9
  %is9 = icmp.eq.i32 %li, %nine
  %bad1 = const.i64 0x10
  %a1 = select.i64 %is9, %bad1, %ro
  %x = load.global.i32 %a1
  %three = const.i32 3
  %is3 = icmp.eq.i32 %li, %three
  %bad2 = const.i64 0x20
  %a2 = select.i64 %is3, %bad2, %ro
  %y = load.global.i32 %a2
  exit
}",
    );
    let ro = pattern(64);
    for (groups, wg) in [(1, [20, 1, 1]), (2, [16, 1, 1]), (1, [4, 4, 1])] {
        let out = compare(&k, &dispatch(groups, wg, 8), &pattern(64), &ro);
        let f = out.fault.expect("two lanes fault");
        assert_eq!(f.lane.workgroup, [0, 0, 0]);
        let [x, y, _] = f.lane.local;
        assert_eq!(x + wg[0] * y, 3, "with {wg:?}");
        assert_eq!(memory_fault(&f).1, 0x20);
        assert_eq!(
            f.inst,
            Some(wavejit_ir::Inst::from_u32(k.insts.len() as u32 - 1))
        );
    }
}

/// Lanes that are masked off have addresses that would fault (unmapped for a
/// load, read-only for a store): nothing faults, and only the active lanes
/// write.
#[test]
fn gang_masked_off_lanes_do_not_fault() {
    let k = parse(
        "kernel @masked shared 0 private 0 {
block0:{GID}
  %two = const.i64 2
  %off = shl.i64 %gid64, %two
  %ro = const.i64 {RO}
  %buf = const.i64 {BUF}
  %src = iadd.i64 %ro, %off
  %dst = iadd.i64 %buf, %off
  %five = const.i32 5
  %low = icmp.ult.i32 %li, %five
  %bad = const.i64 0x10
  %a = select.i64 %low, %src, %bad
  br %low, block1, block2

block1:
  %x = load.global.i32 %a
  store.global.i32 %dst, %x
  jump block2

block2:
  %f = const.i32 15
  %lane = and.i32 %li, %f
  %seven = const.i32 7
  %skip = icmp.eq.i32 %lane, %seven
  %b = select.i64 %skip, %ro, %dst
  br %skip, block4, block3

block3:
  %v = iadd.i32 %gid, %seven
  %b4 = const.i64 0x400
  %b2 = iadd.i64 %b, %b4
  store.global.i32 %b2, %v
  jump block4

block4:
  exit
}",
    );
    let ro = pattern(1024);
    for (groups, wg, wave) in SHAPES {
        let d = dispatch(groups, wg, wave);
        let lanes = (groups * d.lanes_per_workgroup()) as usize;
        let rw = pattern(0x400 + 4 * lanes);
        let m = memory_of(compare(&k, &d, &rw, &ro));
        let n = d.lanes_per_workgroup() as usize;
        for i in 0..lanes {
            let li = i % n;
            let want = if li < 5 {
                u32_at(&ro, i)
            } else {
                u32_at(&rw, i)
            };
            assert_eq!(u32_at(&m, i), want, "word {i}");
            let want = if li % 16 == 7 {
                u32_at(&rw, 0x100 + i)
            } else {
                i as u32 + 7
            };
            assert_eq!(u32_at(&m, 0x100 + i), want, "word {} ", 0x100 + i);
        }
    }
}

/// One lane in the middle of a gang stores misaligned to shared memory.
#[test]
fn gang_one_lane_misaligned_shared_store() {
    let k = parse(
        "kernel @mis shared 1024 private 0 {
block0:{GID}
  %four = const.i32 4
  %o = imul.i32 %li, %four
  %seven = const.i32 7
  %is7 = icmp.eq.i32 %li, %seven
  %two = const.i32 2
  %bump = select.i32 %is7, %two, %zero
  %o2 = iadd.i32 %o, %bump
  store.shared.i32 %o2, %li
  exit
}",
    );
    for (groups, wg) in [(1, [16, 1, 1]), (2, [33, 1, 1]), (1, [5, 3, 1])] {
        let out = compare(&k, &dispatch(groups, wg, 8), &pattern(64), &[]);
        let f = out.fault.expect("lane 7 is misaligned");
        assert_eq!(f.lane, lane(0, [7 % wg[0], 7 / wg[0], 0]));
        assert_eq!(
            memory_fault(&f),
            (
                AddrSpace::Shared,
                30,
                4,
                true,
                AccessCause::Misaligned { align: 4 }
            )
        );
    }
}

/// Contiguous (`ro[gid]`), uniform (`ro[5]`) and scattered (`ro[(7 gid) & 63]`)
/// loads in one kernel, a contiguous store and a permuted store
/// (`buf2[(5 gid) & 255]`, one writer per slot for up to 256 lanes).
#[test]
fn gang_mixed_contiguous_uniform_scattered() {
    let k = parse(
        "kernel @mixed shared 0 private 0 {
block0:{GID}
  %two = const.i64 2
  %ro = const.i64 {RO}
  %off = shl.i64 %gid64, %two
  %a1 = iadd.i64 %ro, %off
  %x = load.global.i32 %a1
  %u = const.i64 20
  %a2 = iadd.i64 %ro, %u
  %y = load.global.i32 %a2
  %seven = const.i32 7
  %s = imul.i32 %gid, %seven
  %m63 = const.i32 63
  %s2 = and.i32 %s, %m63
  %s3 = zext.i32.i64 %s2
  %s4 = shl.i64 %s3, %two
  %a3 = iadd.i64 %ro, %s4
  %z = load.global.i32 %a3
  %xy = iadd.i32 %x, %y
  %xyz = iadd.i32 %xy, %z
  %buf = const.i64 {BUF}
  %d1 = iadd.i64 %buf, %off
  store.global.i32 %d1, %xyz
  %five = const.i32 5
  %p = imul.i32 %gid, %five
  %m255 = const.i32 255
  %p2 = and.i32 %p, %m255
  %p3 = zext.i32.i64 %p2
  %p4 = shl.i64 %p3, %two
  %buf2 = const.i64 0x10000400
  %d2 = iadd.i64 %buf2, %p4
  store.global.i32 %d2, %gid
  exit
}",
    );
    let ro = pattern(1024);
    for (groups, wg, wave) in SHAPES {
        let d = dispatch(groups, wg, wave);
        let lanes = (groups * d.lanes_per_workgroup()) as usize;
        assert!(lanes <= 256, "the permuted store needs a slot per lane");
        let rw = pattern(0x400 + 4 * 256);
        let m = memory_of(compare(&k, &d, &rw, &ro));
        let mut want = rw.clone();
        for g in 0..lanes {
            let v = u32_at(&ro, g)
                .wrapping_add(u32_at(&ro, 5))
                .wrapping_add(u32_at(&ro, (g * 7) & 63));
            want[4 * g..4 * g + 4].copy_from_slice(&v.to_le_bytes());
            let p = 0x400 + 4 * ((g * 5) & 255);
            want[p..p + 4].copy_from_slice(&(g as u32).to_le_bytes());
        }
        assert!(m == want, "memory with {wg:?} x {groups}");
    }
}

/// A loop with a uniform trip count (4) and an if/else on the lane's parity
/// inside; the odd side stores under a partial mask on every trip.
#[test]
fn gang_parity_branches_in_uniform_loop() {
    let k = parse(
        "kernel @parity shared 0 private 0 {
block0:{GID}
  jump block1(%zero, %gid)

block1(%i: i32, %acc: i32):
  %four = const.i32 4
  %more = icmp.ult.i32 %i, %four
  br %more, block2, block5

block2:
  %bit = and.i32 %li, %one
  %odd = icmp.ne.i32 %bit, %zero
  br %odd, block3, block4

block3:
  %three = const.i32 3
  %a3 = imul.i32 %acc, %three
  %a4 = iadd.i32 %a3, %i
  %two = const.i64 2
  %off = shl.i64 %gid64, %two
  %col = const.i64 0x10000800
  %d = iadd.i64 %col, %off
  store.global.i32 %d, %a4
  jump block6(%a4)

block4:
  %g = iadd.i32 %gid, %i
  %m = const.i32 63
  %g2 = and.i32 %g, %m
  %g3 = zext.i32.i64 %g2
  %two2 = const.i64 2
  %g4 = shl.i64 %g3, %two2
  %ro = const.i64 {RO}
  %src = iadd.i64 %ro, %g4
  %x = load.global.i32 %src
  %a5 = xor.i32 %acc, %x
  jump block6(%a5)

block5:
  %two3 = const.i64 2
  %o = shl.i64 %gid64, %two3
  %buf = const.i64 {BUF}
  %dst = iadd.i64 %buf, %o
  store.global.i32 %dst, %acc
  exit

block6(%v: i32):
  %i1 = iadd.i32 %i, %one
  jump block1(%i1, %v)
}",
    );
    let ro = pattern(256);
    for (groups, wg, wave) in SHAPES {
        let d = dispatch(groups, wg, wave);
        let n = d.lanes_per_workgroup() as usize;
        let lanes = groups as usize * n;
        let rw = pattern(0x800 + 4 * lanes);
        let m = memory_of(compare(&k, &d, &rw, &ro));
        for g in 0..lanes {
            let odd = (g % n) % 2 == 1;
            let mut acc = g as u32;
            for i in 0..4u32 {
                acc = if odd {
                    acc.wrapping_mul(3).wrapping_add(i)
                } else {
                    acc ^ u32_at(&ro, (g + i as usize) & 63)
                };
            }
            assert_eq!(u32_at(&m, g), acc, "lane {g}");
            let col = if odd { acc } else { u32_at(&rw, 0x200 + g) };
            assert_eq!(u32_at(&m, 0x200 + g), col, "column word of lane {g}");
        }
    }
}

/// Barriers in a uniform loop: three times, every lane publishes its value in
/// shared memory and takes its right neighbour's.
#[test]
fn gang_barrier_in_uniform_loop_rotates() {
    let k = parse(
        "kernel @rotate shared 1024 private 0 {
block0:{GID}
  jump block1(%zero, %li)

block1(%i: i32, %v: i32):
  %four = const.i32 4
  %o = imul.i32 %li, %four
  store.shared.i32 %o, %v
  barrier
  %r = iadd.i32 %li, %one
  %nb = urem.i32 %r, %n
  %o2 = imul.i32 %nb, %four
  %w = load.shared.i32 %o2
  barrier
  %i1 = iadd.i32 %i, %one
  %three = const.i32 3
  %more = icmp.ult.i32 %i1, %three
  br %more, block1(%i1, %w), block2

block2:
  %two = const.i64 2
  %off = shl.i64 %gid64, %two
  %buf = const.i64 {BUF}
  %dst = iadd.i64 %buf, %off
  store.global.i32 %dst, %w
  exit
}",
    );
    for (groups, wg, wave) in SHAPES {
        let d = dispatch(groups, wg, wave);
        let n = d.lanes_per_workgroup() as usize;
        let lanes = groups as usize * n;
        let m = memory_of(compare(&k, &d, &pattern(4 * lanes), &[]));
        for g in 0..lanes {
            assert_eq!(u32_at(&m, g) as usize, (g % n + 3) % n, "lane {g}");
        }
    }
}

/// A barrier in a loop with a per-lane trip count (`li % 3`), then one after
/// it. The trip counts are exact; what the lanes read of the shared counter
/// depends on the schedule (the interpreter's is the definition).
#[test]
fn gang_barrier_in_divergent_loop() {
    let k = parse(
        "kernel @divloop shared 64 private 0 {
block0:{GID}
  %three = const.i32 3
  %t = urem.i32 %li, %three
  jump block1(%zero)

block1(%i: i32):
  %more = icmp.ult.i32 %i, %t
  br %more, block2, block3

block2:
  %c = atomic.add.shared.i32 %zero, %one
  barrier
  %i1 = iadd.i32 %i, %one
  jump block1(%i1)

block3:
  barrier
  %r = load.shared.i32 %zero
  %three64 = const.i64 3
  %off = shl.i64 %gid64, %three64
  %buf = const.i64 {BUF}
  %dst = iadd.i64 %buf, %off
  store.global.i32 %dst, %i
  %four = const.i64 4
  %dst2 = iadd.i64 %dst, %four
  store.global.i32 %dst2, %r
  exit
}",
    );
    for (groups, wg, wave) in SHAPES {
        let d = dispatch(groups, wg, wave);
        let n = d.lanes_per_workgroup() as usize;
        let lanes = groups as usize * n;
        let m = memory_of(compare(&k, &d, &pattern(8 * lanes), &[]));
        let total: usize = (0..n).map(|l| l % 3).sum();
        for g in 0..lanes {
            assert_eq!(u32_at(&m, 2 * g) as usize, g % n % 3, "trips of lane {g}");
            assert!(u32_at(&m, 2 * g + 1) as usize <= total, "lane {g}");
        }
    }
}

/// A shared-memory tree reduction with a barrier per level, for workgroup
/// sizes that are not powers of two (level `s` folds `li + s < n` into `li`).
#[test]
fn gang_shared_tree_reduction() {
    let k = parse(
        "kernel @reduce shared 1024 private 0 {
block0:{GID}
  %two64 = const.i64 2
  %off = shl.i64 %gid64, %two64
  %ro = const.i64 {RO}
  %src = iadd.i64 %ro, %off
  %x = load.global.i32 %src
  %two = const.i32 2
  %mine = shl.i32 %li, %two
  store.shared.i32 %mine, %x
  %s0 = const.i32 128
  jump block1(%s0)

block1(%s: i32):
  barrier
  %lo = icmp.ult.i32 %li, %s
  %other = iadd.i32 %li, %s
  %in = icmp.ult.i32 %other, %n
  %go = and.i1 %lo, %in
  br %go, block2, block3

block2:
  %a = load.shared.i32 %mine
  %ob = shl.i32 %other, %two
  %b = load.shared.i32 %ob
  %c = iadd.i32 %a, %b
  store.shared.i32 %mine, %c
  jump block3

block3:
  %s2 = ushr.i32 %s, %one
  %nz = icmp.ne.i32 %s2, %zero
  br %nz, block1(%s2), block4

block4:
  barrier
  %first = icmp.eq.i32 %li, %zero
  br %first, block5, block6

block5:
  %sum = load.shared.i32 %zero
  %w64 = zext.i32.i64 %wg
  %wo = shl.i64 %w64, %two64
  %buf = const.i64 {BUF}
  %dst = iadd.i64 %buf, %wo
  store.global.i32 %dst, %sum
  jump block6

block6:
  exit
}",
    );
    let ro = pattern(4 * 3 * 256);
    let mut shapes = SHAPES.to_vec();
    shapes.push((3, [256, 1, 1], 32));
    for (groups, wg, wave) in shapes {
        let d = dispatch(groups, wg, wave);
        let n = d.lanes_per_workgroup() as usize;
        let m = memory_of(compare(&k, &d, &pattern(64), &ro));
        for w in 0..groups as usize {
            let sum = (0..n).fold(0u32, |s, l| s.wrapping_add(u32_at(&ro, w * n + l)));
            assert_eq!(u32_at(&m, w), sum, "workgroup {w} of {wg:?}");
        }
        assert_eq!(m[4 * groups as usize..], pattern(64)[4 * groups as usize..]);
    }
}

/// An irreducible loop: odd lanes enter at A, even lanes at B (which comes
/// first in the layout, so the lowest pc is the loop's second block); a
/// barrier in A. Each lane's result is its own (computed here).
#[test]
fn gang_irreducible_loop_two_entries() {
    let k = parse(
        "kernel @irr shared 0 private 0 {
block0:{GID}
  %three = const.i32 3
  %t0 = and.i32 %li, %three
  %t = iadd.i32 %t0, %one
  %bit = and.i32 %li, %one
  %odd = icmp.ne.i32 %bit, %zero
  br %odd, block2(%zero, %gid), block1(%zero, %gid)

block1(%bi: i32, %by: i32):
  %four = const.i32 4
  %sh = shl.i32 %bi, %four
  %y2 = xor.i32 %by, %sh
  %bi1 = iadd.i32 %bi, %one
  %more = icmp.ult.i32 %bi1, %t
  br %more, block2(%bi1, %y2), block3(%y2)

block2(%ai: i32, %ax: i32):
  barrier
  %x3 = imul.i32 %ax, %three
  %x4 = iadd.i32 %x3, %one
  %ai1 = iadd.i32 %ai, %one
  jump block1(%ai1, %x4)

block3(%r: i32):
  %two = const.i64 2
  %off = shl.i64 %gid64, %two
  %buf = const.i64 {BUF}
  %dst = iadd.i64 %buf, %off
  store.global.i32 %dst, %r
  exit
}",
    );
    assert!(irreducible(&k), "the test kernel must be irreducible");
    for (groups, wg, wave) in SHAPES {
        let d = dispatch(groups, wg, wave);
        let n = d.lanes_per_workgroup() as usize;
        let lanes = groups as usize * n;
        let m = memory_of(compare(&k, &d, &pattern(4 * lanes), &[]));
        for g in 0..lanes {
            let li = (g % n) as u32;
            let t = (li & 3) + 1;
            let (mut in_a, mut i, mut v) = (li & 1 == 1, 0u32, g as u32);
            let r = loop {
                if in_a {
                    v = v.wrapping_mul(3).wrapping_add(1);
                    i += 1;
                    in_a = false;
                } else {
                    v ^= i << 4;
                    i += 1;
                    if i >= t {
                        break v;
                    }
                    in_a = true;
                }
            };
            assert_eq!(u32_at(&m, g), r, "lane {g}");
        }
    }
}

/// A loop with two exits: an early one on a value-dependent condition (its
/// lanes store a marker and end) and the trip count.
#[test]
fn gang_multi_exit_loop() {
    let k = parse(
        "kernel @exits shared 0 private 0 {
block0:{GID}
  %five = const.i32 5
  %t0 = urem.i32 %li, %five
  %two = const.i32 2
  %t = iadd.i32 %t0, %two
  %three64 = const.i64 3
  %off = shl.i64 %gid64, %three64
  %buf = const.i64 {BUF}
  %dst = iadd.i64 %buf, %off
  %four = const.i64 4
  %dst2 = iadd.i64 %dst, %four
  jump block1(%zero, %gid)

block1(%i: i32, %x: i32):
  %x5 = imul.i32 %x, %five
  %x2 = iadd.i32 %x5, %one
  %seven = const.i32 7
  %low = and.i32 %x2, %seven
  %three = const.i32 3
  %hit = icmp.eq.i32 %low, %three
  br %hit, block3(%x2), block2

block2:
  %i1 = iadd.i32 %i, %one
  %more = icmp.ult.i32 %i1, %t
  br %more, block1(%i1, %x2), block4(%i1)

block3(%found: i32):
  store.global.i32 %dst, %found
  %m = const.i32 0xeeee
  store.global.i32 %dst2, %m
  exit

block4(%cnt: i32):
  store.global.i32 %dst, %x2
  store.global.i32 %dst2, %cnt
  exit
}",
    );
    for (groups, wg, wave) in SHAPES {
        let d = dispatch(groups, wg, wave);
        let n = d.lanes_per_workgroup() as usize;
        let lanes = groups as usize * n;
        let m = memory_of(compare(&k, &d, &pattern(8 * lanes), &[]));
        for g in 0..lanes {
            let t = (g % n) as u32 % 5 + 2;
            let mut x = g as u32;
            let mut i = 0;
            let want = loop {
                x = x.wrapping_mul(5).wrapping_add(1);
                if x & 7 == 3 {
                    break (x, 0xeeee);
                }
                i += 1;
                if i >= t {
                    break (x, i);
                }
            };
            assert_eq!((u32_at(&m, 2 * g), u32_at(&m, 2 * g + 1)), want, "lane {g}");
        }
    }
}

/// The then side of an if/else jumps into the middle of the else side for
/// some lanes (the join of those lanes is not the if/else's end).
#[test]
fn gang_cross_edge_into_else() {
    let k = parse(
        "kernel @cross shared 0 private 0 {
block0:{GID}
  %three = const.i32 3
  %l3 = and.i32 %li, %three
  %c = icmp.eq.i32 %l3, %one
  %two = const.i64 2
  %off = shl.i64 %gid64, %two
  br %c, block1, block2

block1:
  %seven = const.i32 7
  %t = imul.i32 %gid, %seven
  %four = const.i32 4
  %l4 = and.i32 %li, %four
  %c2 = icmp.ne.i32 %l4, %zero
  br %c2, block3, block4(%t)

block2:
  %ro = const.i64 {RO}
  %src = iadd.i64 %ro, %off
  %e = load.global.i32 %src
  %col = const.i64 0x10000800
  %d = iadd.i64 %col, %off
  store.global.i32 %d, %e
  jump block3

block3:
  %h = const.i32 100
  %u = iadd.i32 %gid, %h
  jump block4(%u)

block4(%p: i32):
  %buf = const.i64 {BUF}
  %dst = iadd.i64 %buf, %off
  store.global.i32 %dst, %p
  exit
}",
    );
    let ro = pattern(1024);
    for (groups, wg, wave) in SHAPES {
        let d = dispatch(groups, wg, wave);
        let n = d.lanes_per_workgroup() as usize;
        let lanes = groups as usize * n;
        let rw = pattern(0x800 + 4 * lanes);
        let m = memory_of(compare(&k, &d, &rw, &ro));
        for g in 0..lanes {
            let li = g % n;
            let then = li & 3 == 1;
            let p = if then && li & 4 == 0 {
                g as u32 * 7
            } else {
                g as u32 + 100
            };
            assert_eq!(u32_at(&m, g), p, "lane {g}");
            let col = if then {
                u32_at(&rw, 0x200 + g)
            } else {
                u32_at(&ro, g)
            };
            assert_eq!(u32_at(&m, 0x200 + g), col, "column word of lane {g}");
        }
    }
}

/// Byte, half-word and 64-bit stores by three different partial masks into
/// contiguous columns; every other byte keeps its contents.
#[test]
fn gang_partial_mask_narrow_and_wide_stores() {
    let k = parse(
        "kernel @narrow shared 0 private 0 {
block0:{GID}
  %three = const.i32 3
  %m3 = urem.i32 %li, %three
  %c1 = icmp.eq.i32 %m3, %zero
  br %c1, block1, block2

block1:
  %b = const.i64 {BUF}
  %a = iadd.i64 %b, %gid64
  %seven = const.i32 7
  %v = imul.i32 %gid, %seven
  store.global.i32.u8 %a, %v
  jump block2

block2:
  %five = const.i32 5
  %m5 = urem.i32 %li, %five
  %c2 = icmp.eq.i32 %m5, %one
  br %c2, block3, block4

block3:
  %b2 = const.i64 0x10000400
  %one64 = const.i64 1
  %o2 = shl.i64 %gid64, %one64
  %a2 = iadd.i64 %b2, %o2
  %k300 = const.i32 300
  %v2 = imul.i32 %gid, %k300
  %v3 = iadd.i32 %v2, %one
  store.global.i32.u16 %a2, %v3
  jump block4

block4:
  %f = const.i32 15
  %l = and.i32 %li, %f
  %c3 = icmp.eq.i32 %l, %f
  br %c3, block5, block6

block5:
  %b3 = const.i64 0x10000800
  %three64 = const.i64 3
  %o3 = shl.i64 %gid64, %three64
  %a3 = iadd.i64 %b3, %o3
  %k = const.i64 0x100000001
  %v4 = imul.i64 %gid64, %k
  store.global.i64 %a3, %v4
  jump block6

block6:
  exit
}",
    );
    for (groups, wg, wave) in SHAPES {
        let d = dispatch(groups, wg, wave);
        let n = d.lanes_per_workgroup() as usize;
        let lanes = groups as usize * n;
        let rw = pattern(0x800 + 8 * lanes);
        let m = memory_of(compare(&k, &d, &rw, &[]));
        let mut want = rw.clone();
        for g in 0..lanes {
            let li = g % n;
            if li.is_multiple_of(3) {
                want[g] = (g * 7) as u8;
            }
            if li % 5 == 1 {
                let v = (g as u32 * 300 + 1) as u16;
                want[0x400 + 2 * g..0x402 + 2 * g].copy_from_slice(&v.to_le_bytes());
            }
            if li % 16 == 15 {
                let v = g as u64 * 0x1_0000_0001;
                want[0x800 + 8 * g..0x808 + 8 * g].copy_from_slice(&v.to_le_bytes());
            }
        }
        assert!(m == want, "memory with {wg:?} x {groups}");
    }
}

/// i8 loads sign-extended to i64, converted to f64 and halved, stored as f64
/// (8-byte contiguous); i16 copied (2-byte contiguous).
#[test]
fn gang_i8_i16_i64_f64_contiguous() {
    let k = parse(
        "kernel @wide shared 0 private 0 {
block0:{GID}
  %ro = const.i64 {RO}
  %a = iadd.i64 %ro, %gid64
  %b = load.global.i64.s8 %a
  %f = stof.i64.f64 %b
  %h = const.f64 0.5
  %g = fmul.f64 %f, %h
  %buf = const.i64 {BUF}
  %three = const.i64 3
  %o8 = shl.i64 %gid64, %three
  %d = iadd.i64 %buf, %o8
  store.global.f64 %d, %g
  %one64 = const.i64 1
  %o2 = shl.i64 %gid64, %one64
  %ro2 = const.i64 0x20000200
  %a2 = iadd.i64 %ro2, %o2
  %w = load.global.i16 %a2
  %buf2 = const.i64 0x10000c00
  %d2 = iadd.i64 %buf2, %o2
  store.global.i16 %d2, %w
  exit
}",
    );
    let ro = pattern(1024);
    for (groups, wg, wave) in SHAPES {
        let d = dispatch(groups, wg, wave);
        let lanes = (groups * d.lanes_per_workgroup()) as usize;
        // Whole words: the test memory rounds up to them.
        let rw = pattern((0xc00 + 2 * lanes).next_multiple_of(8));
        let m = memory_of(compare(&k, &d, &rw, &ro));
        let mut want = rw.clone();
        for g in 0..lanes {
            let v = f64::from(ro[g] as i8) * 0.5;
            want[8 * g..8 * g + 8].copy_from_slice(&v.to_bits().to_le_bytes());
            want[0xc00 + 2 * g..0xc02 + 2 * g].copy_from_slice(&ro[0x200 + 2 * g..0x202 + 2 * g]);
        }
        assert!(m == want, "memory with {wg:?} x {groups}");
    }
}

/// A wave reduction where waves do not line up with gangs or the workgroup
/// (waves of 8 and 24 in workgroups of 33: the last wave is short).
#[test]
fn gang_wave_reduce_short_last_wave() {
    let k = parse(
        "kernel @wred shared 0 private 0 {
block0:{GID}
  %all = const.i1 1
  %s = reduce.add.i32 %all, %li
  %two = const.i64 2
  %off = shl.i64 %gid64, %two
  %buf = const.i64 {BUF}
  %dst = iadd.i64 %buf, %off
  store.global.i32 %dst, %s
  exit
}",
    );
    for (groups, wg, wave) in [(2, [33, 1, 1], 8), (2, [33, 1, 1], 24), (1, [17, 2, 1], 16)] {
        let d = dispatch(groups, wg, wave);
        let n = d.lanes_per_workgroup();
        let lanes = (groups * n) as usize;
        let m = memory_of(compare(&k, &d, &pattern(4 * lanes), &[]));
        for g in 0..lanes {
            let li = g as u32 % n;
            let first = li / wave * wave;
            let sum: u32 = (first..(first + wave).min(n)).sum();
            assert_eq!(u32_at(&m, g), sum, "lane {g} with waves of {wave}");
        }
    }
}

/// The watchdog in a per-lane loop: lane `li` enters `li + 3` blocks, so with
/// a limit of 10 the lowest faulting lane is 8, entering the exit block (lanes
/// from 9 on fault inside the loop). Lanes of one gang must count their own
/// blocks.
#[test]
fn gang_watchdog_counts_per_lane() {
    let k = parse(
        "kernel @dog shared 0 private 0 {
block0:{GID}
  jump block1(%zero)

block1(%i: i32):
  %i1 = iadd.i32 %i, %one
  %more = icmp.ule.i32 %i1, %li
  br %more, block1(%i1), block2

block2:
  %two = const.i64 2
  %off = shl.i64 %gid64, %two
  %buf = const.i64 {BUF}
  %dst = iadd.i64 %buf, %off
  store.global.i32 %dst, %i1
  exit
}",
    );
    for (groups, wg, wave) in [(2, [17, 1, 1], 8), (1, [16, 1, 1], 16), (1, [3, 3, 1], 4)] {
        let mut d = dispatch(groups, wg, wave);
        d.step_limit = 10;
        let out = compare(&k, &d, &pattern(4 * 34), &[]);
        let f = out.fault.expect("lanes from 8 on exceed the step limit");
        assert_eq!(f.lane, lane(0, [8 % wg[0], 8 / wg[0], 0]), "with {wg:?}");
        assert_eq!(f.kind, FaultKind::Watchdog { limit: 10 });
        assert_eq!((f.block, f.inst), (wavejit_ir::Block::from_u32(2), None));
    }
    // Below the limit for every lane: the loop's last counter is stored.
    let d = dispatch(2, [7, 1, 1], 4);
    let m = memory_of(compare(&k, &d, &pattern(4 * 14), &[]));
    for g in 0..14 {
        assert_eq!(u32_at(&m, g) as usize, g % 7 + 1, "lane {g}");
    }
}

/// Whole gangs (local index >= 16) exit before a barrier; the others publish
/// `li + 1000` in shared memory, meet at the barrier and read their
/// neighbour's slot (slots nobody wrote read 0).
#[test]
fn gang_exited_gangs_do_not_block_barriers() {
    let k = parse(
        "kernel @exited shared 64 private 0 {
block0:{GID}
  %sixteen = const.i32 16
  %late = icmp.uge.i32 %li, %sixteen
  br %late, block1, block2

block1:
  exit

block2:
  %four = const.i32 4
  %o = imul.i32 %li, %four
  %k = const.i32 1000
  %v = iadd.i32 %li, %k
  store.shared.i32 %o, %v
  barrier
  %r = iadd.i32 %li, %one
  %f = const.i32 15
  %nb = and.i32 %r, %f
  %o2 = imul.i32 %nb, %four
  %w = load.shared.i32 %o2
  %two = const.i64 2
  %off = shl.i64 %gid64, %two
  %buf = const.i64 {BUF}
  %dst = iadd.i64 %buf, %off
  store.global.i32 %dst, %w
  exit
}",
    );
    for (groups, wg, wave) in SHAPES {
        let d = dispatch(groups, wg, wave);
        let n = d.lanes_per_workgroup() as usize;
        let lanes = groups as usize * n;
        let rw = pattern(4 * lanes);
        let m = memory_of(compare(&k, &d, &rw, &[]));
        for g in 0..lanes {
            let li = g % n;
            let nb = (li + 1) % 16;
            let want = match (li < 16, nb < n.min(16)) {
                (false, _) => u32_at(&rw, g),
                (true, true) => nb as u32 + 1000,
                (true, false) => 0,
            };
            assert_eq!(u32_at(&m, g), want, "lane {g} with {wg:?}");
        }
    }
}

/// A self-looping block whose back edge swaps its parameters (a parallel
/// copy), then a branch to one block with different arguments on each edge.
#[test]
fn gang_swapping_back_edge_and_same_target_branch() {
    let k = parse(
        "kernel @swap shared 0 private 0 {
block0:{GID}
  %three = const.i32 3
  %t0 = and.i32 %li, %three
  %t = iadd.i32 %t0, %one
  %k = const.i32 1000
  jump block1(%zero, %gid, %k)

block1(%i: i32, %a: i32, %b: i32):
  %b2 = iadd.i32 %b, %i
  %i1 = iadd.i32 %i, %one
  %more = icmp.ult.i32 %i1, %t
  br %more, block1(%i1, %b2, %a), block2(%a, %b)

block2(%p: i32, %q: i32):
  %bit = and.i32 %li, %one
  %odd = icmp.ne.i32 %bit, %zero
  br %odd, block3(%p), block3(%q)

block3(%r: i32):
  %two = const.i64 2
  %off = shl.i64 %gid64, %two
  %buf = const.i64 {BUF}
  %dst = iadd.i64 %buf, %off
  store.global.i32 %dst, %r
  exit
}",
    );
    for (groups, wg, wave) in SHAPES {
        let d = dispatch(groups, wg, wave);
        let n = d.lanes_per_workgroup() as usize;
        let lanes = groups as usize * n;
        let m = memory_of(compare(&k, &d, &pattern(4 * lanes), &[]));
        for g in 0..lanes {
            let li = (g % n) as u32;
            let t = (li & 3) + 1;
            let (mut i, mut a, mut b) = (0u32, g as u32, 1000u32);
            let (p, q) = loop {
                let b2 = b.wrapping_add(i);
                i += 1;
                if i < t {
                    (a, b) = (b2, a);
                } else {
                    break (a, b);
                }
            };
            assert_eq!(u32_at(&m, g), if li & 1 == 1 { p } else { q }, "lane {g}");
        }
    }
}

/// A tiny deterministic generator (xorshift) for the fused-kernel cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 16) as u32
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.next() as usize % from.len()]
    }
}

/// One random fused kernel (`y[i] = f(x[i], y[i])`: two contiguous loads, a
/// chain of float or integer ops with constants, one contiguous store, exit)
/// as IR text.
fn fused_kernel(r: &mut Rng) -> String {
    let float = r.next().is_multiple_of(2);
    let ty = if float { "f32" } else { "i32" };
    let mut s = String::from(
        "kernel @fused shared 0 private 0 {
block0:
  v0 = local_index
  v1 = workgroup_id.x
  v2 = workgroup_size.x
  v3 = imul.i32 v1, v2
  v4 = iadd.i32 v3, v0
  v5 = zext.i32.i64 v4
  v6 = const.i64 2
  v7 = shl.i64 v5, v6
  v8 = const.i64 0x10000000
  v9 = iadd.i64 v8, v7
  v10 = const.i64 0x20000000
  v11 = iadd.i64 v10, v7
",
    );
    s += &format!("  v12 = load.global.{ty} v11\n  v13 = load.global.{ty} v9\n");
    let mut vals = vec![12, 13];
    let mut next = 14;
    if float && r.next().is_multiple_of(2) {
        // A uniform operand (flushed once for the loop, or by the hardware).
        s += "  v14 = const.i32 0\n  v15 = load.uniform.f32 v14\n";
        vals.push(15);
        next = 16;
    }
    // The IEEE rules, ir3's flush, AGX's flush before rounding (the
    // hardware flush's case when every operation has it), with and
    // without the canonical NaN.
    let modes = [
        "",
        "",
        "ftz",
        "ftz nan=0x7fc00000",
        "ftz.in ftz.tiny",
        "ftz.in ftz.tiny",
        "ftz.in ftz.tiny nan=0x7fc00000",
    ];
    let mode = r.pick(&modes);
    let consts_f = [
        "0.0", "-0.0", "1.5", "-3.25", "1e-40", "inf", "3e38", "1e-38", "-7e-39",
    ];
    let consts_i = ["0", "1", "7", "-1", "0x7fffffff", "13"];
    for _ in 0..1 + r.next() % 7 {
        let a = r.pick(&vals);
        let b = if r.next().is_multiple_of(3) {
            let c = if float {
                r.pick(&consts_f)
            } else {
                r.pick(&consts_i)
            };
            s += &format!("  v{next} = const.{ty} {c}\n");
            next += 1;
            next - 1
        } else {
            r.pick(&vals)
        };
        let op = if float {
            r.pick(&["fadd", "fsub", "fmul", "fma"])
        } else {
            r.pick(&["iadd", "isub", "imul", "xor", "and", "or"])
        };
        // Mostly one rule for the whole kernel, sometimes a mix.
        let mode = if float && r.next().is_multiple_of(5) {
            r.pick(&modes)
        } else if float {
            mode
        } else {
            ""
        };
        if op == "fma" {
            let c = r.pick(&vals);
            s += &format!("  v{next} = fma.f32 v{a}, v{b}, v{c} {mode}\n");
        } else {
            s += &format!("  v{next} = {op}.{ty} v{a}, v{b} {mode}\n");
        }
        vals.push(next);
        next += 1;
    }
    s += &format!("  store.global.{ty} v9, v{}\n  exit\n}}\n", next - 1);
    s
}

/// The gang core's whole-chunk loop (a converged wave's fused segment once
/// the wave-level memory tests pass, from the second workgroup on): random
/// fused kernels over float data with NaNs, infinities and denormals (or
/// integers), several workgroup, wave and grid sizes, and `y` sometimes
/// shorter than the grid (a fault in a later workgroup after whole chunks
/// ran), against the interpreter on every JIT configuration.
#[test]
fn fused_whole_chunk_kernels_match_the_interpreter() {
    fused_cases(0x9e37_79b9_7f4a_7c15, 150);
}

/// The long run of the fused cases (`WAVEJIT_LONG_CASES`, from another seed).
#[test]
#[ignore]
fn fused_whole_chunk_kernels_match_the_interpreter_long() {
    fused_cases(0x2545_f491_4f6c_dd1d, long_cases());
}

/// `n` random fused cases from `seed`; between 1/12 and 11/12 of them fault.
fn fused_cases(seed: u64, n: u32) {
    let mut r = Rng(seed);
    let specials = [
        0x7fc0_1234u32,
        0x7f80_0001,
        0x7f80_0000,
        0xff80_0000,
        0x0000_0001,
        0x8000_0003,
        0x0080_0000,
        0x8000_0000,
        // Products near the smallest normal: (1 - 2^-23)(1 + 2^-23) 2^-126
        // rounds up to it, (1 - 2^-24) 2^-126 is just below.
        0x3f7f_fffe,
        0x0080_0001,
        0x3f7f_ffff,
        0x3f80_0001,
        0x0100_0000,
    ];
    let mut faults = 0;
    for case in 0..n {
        let text = fused_kernel(&mut r);
        // Rare specials leave most chunks free of NaNs (which send a chunk
        // to the exact redo).
        let rate = r.pick(&[11u32, 97]);
        let k = support::parse(&text);
        let groups = 2 + r.next() % 4;
        let wg = r.pick(&[16u32, 32, 40, 64, 72, 100, 256]);
        let wave = r.pick(&[8u32, 16, 32, 64]).min(wg);
        let lanes = (groups * wg) as usize;
        let word = |r: &mut Rng, i: usize| -> u32 {
            if r.next().is_multiple_of(rate) {
                r.pick(&specials)
            } else {
                (i as f32 * 0.75 - 50.0).to_bits() ^ (r.next() & 0xff)
            }
        };
        // Some lanes get a pair whose product is near the smallest normal.
        let pairs = [
            (0x3f7f_fffe, 0x0080_0001),
            (0xbf7f_fffe, 0x0080_0001),
            (0x3f7f_ffff, 0x0080_0000),
            (0x3f80_0000, 0x0080_0000),
            (0xbf00_0000, 0x0080_0000),
        ];
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for i in 0..lanes {
            let (a, b) = if r.next().is_multiple_of(rate) {
                r.pick(&pairs)
            } else {
                (word(&mut r, i), word(&mut r, i + 7))
            };
            x.extend(a.to_le_bytes());
            y.extend(b.to_le_bytes());
        }
        // A y short by a few words faults in the last workgroup.
        let short = if r.next().is_multiple_of(4) {
            1 + r.next() as usize % 8
        } else {
            0
        };
        y.truncate(4 * (lanes - short.min(lanes - 1)));
        let mut d = dispatch(groups, [wg, 1, 1], wave);
        d.uniforms = word(&mut r, 3).to_le_bytes().to_vec();
        let out = compare(&k, &d, &y, &x);
        // (Memory is whole 8-byte words: a y short by one word may not be.)
        assert!(out.fault.is_none() || short > 0, "case {case}:\n{text}");
        faults += u32::from(out.fault.is_some());
    }
    assert!(
        (n / 12..=n - n / 12).contains(&faults),
        "{faults} of {n} cases faulted"
    );
}
