//! `analysis::waves_commute`: named kernels each with a twin the proof must
//! refuse, and random barrier kernels run on the golden interpreter in
//! waves of 4 and as one wave per workgroup: whenever the analysis says the
//! waves commute, the two runs give the same memory and fault.

#[path = "support/rng.rs"]
mod rng;

mod promote_support;

use promote_support::{kernel_with, run};
use rng::Rng;
use wavejit_ir::Dispatch;
use wavejit_ir::analysis::{WaveOrder, waves_commute};

/// One workgroup of 64 lanes in waves of `wave`.
fn dispatch(wave: u32) -> Dispatch {
    let mut d = Dispatch::new([2, 1, 1], [64, 1, 1]);
    d.wave_size = wave;
    d
}

/// Runs `kernel` in waves of 4 and as one wave: the results as a pair.
fn both_orders(text: &str) -> (String, String) {
    let k = kernel_with("", text);
    let (ra, ma) = run(&k, &dispatch(4));
    let (rb, mb) = run(&k, &dispatch(64));
    (format!("{ra:?} {ma:?}"), format!("{rb:?} {mb:?}"))
}

/// The bench's tree reduction over 64 lanes of integers (a hash of the
/// global index; sums at BASE): `tree[lid] += tree[lid + s]` under
/// `lid < s`, a barrier per level.
const TREE: &str = "kernel @tree shared 256 private 0 {
block0:
  v0 = local_index
  v1 = workgroup_id.x
  v2 = const.i32 64
  v3 = imul.i32 v1, v2
  v4 = iadd.i32 v3, v0
  v5 = const.i32 2654435761
  v11 = imul.i32 v4, v5
  v8 = const.i64 2
  v12 = const.i32 2
  v13 = shl.i32 v0, v12
  store.shared.i32 v13, v11
  v14 = const.i32 32
  jump block1(v14)

block1(v15: i32):
  barrier
  v16 = icmp.BOUND.i32 v0, v15
  br v16, block2, block3

block2:
  v17 = iadd.i32 v0, v15
  v18 = shl.i32 v17, v12
  v19 = load.shared.i32 v13
  v20 = load.shared.i32 v18
  v21 = iadd.i32 v19, v20
  store.shared.i32 v13, v21
  jump block3

block3:
  v22 = const.i32 1
  v23 = ushr.i32 v15, v22
  v24 = const.i32 0
  v25 = icmp.ne.i32 v23, v24
  br v25, block1(v23), block4

block4:
  barrier
  v26 = icmp.eq.i32 v0, v24
  br v26, block5, block6

block5:
  v27 = load.shared.i32 v24
  v28 = const.i64 0x100000
  v30 = zext.i32.i64 v1
  v31 = shl.i64 v30, v8
  v32 = iadd.i64 v28, v31
  store.global.i32 v32, v27
  jump block6

block6:
  exit
}
";

fn tree(bound: &str) -> String {
    TREE.replace("BOUND", bound)
}

#[test]
fn the_tree_reduction_commutes() {
    let k = kernel_with("", &tree("ult"));
    assert_eq!(waves_commute(&k), Ok(()));
    let (a, b) = both_orders(&tree("ult"));
    assert!(a == b, "the orders differ");
}

#[test]
fn a_tree_that_reads_what_another_lane_writes_is_refused() {
    // `lid <= s`: lane s writes tree[s] while lane 0 reads it.
    let k = kernel_with("", &tree("ule"));
    assert!(matches!(waves_commute(&k), Err(WaveOrder::MayRace(..))));
}

/// Every lane stores its word, then reads its lower neighbour's and writes
/// its own again: with `SYNC` a barrier between the read and the write.
const NEIGHBOUR: &str = "kernel @neighbour shared 256 private 0 {
block0:
  v0 = local_index
  v1 = const.i32 2
  v2 = shl.i32 v0, v1
  v3 = const.i32 7
  v4 = imul.i32 v0, v3
  store.shared.i32 v2, v4
  barrier
  v5 = const.i32 1
  v6 = icmp.uge.i32 v0, v5
  br v6, block1, block2

block1:
  v7 = isub.i32 v0, v5
  v8 = shl.i32 v7, v1
  v9 = load.shared.i32 v8
  SYNC
  v10 = iadd.i32 v9, v5
  store.shared.i32 v2, v10
  jump block2

block2:
  barrier
  v11 = load.shared.i32 v2
  v12 = zext.i32.i64 v2
  v13 = const.i64 0x100000
  v14 = iadd.i64 v13, v12
  store.global.i32 v14, v11
  exit
}
";

#[test]
fn a_neighbour_read_in_the_interval_of_its_write_is_refused_and_really_races() {
    let racy = NEIGHBOUR.replace("SYNC", "");
    let k = kernel_with("", &racy);
    assert!(matches!(waves_commute(&k), Err(WaveOrder::MayRace(..))));
    let (a, b) = both_orders(&racy);
    assert!(a != b, "the orders should differ");
}

#[test]
fn a_barrier_inside_a_divergent_branch_is_refused() {
    // The barrier between read and write sits inside `if lid >= 1`.
    let k = kernel_with("", &NEIGHBOUR.replace("SYNC", "barrier"));
    assert!(matches!(
        waves_commute(&k),
        Err(WaveOrder::DivergentBarrier(_))
    ));
}

/// Kernel text being generated, with its next value number.
struct Gen {
    t: String,
    next: usize,
}

impl Gen {
    /// Appends `vN = rhs`; returns N.
    fn val(&mut self, rhs: String) -> usize {
        let v = self.next;
        self.next += 1;
        self.t.push_str(&format!("  v{v} = {rhs}\n"));
        v
    }

    /// A shared word address `(a * lid + b) * 4`, a in 0..3, b in 0..40.
    fn shared_addr(&mut self, rng: &mut Rng) -> usize {
        let a = self.val(format!("const.i32 {}", rng.below(3)));
        let b = self.val(format!("const.i32 {}", rng.below(40)));
        let m = self.val(format!("imul.i32 v0, v{a}"));
        let s = self.val(format!("iadd.i32 v{m}, v{b}"));
        self.val(format!("shl.i32 v{s}, v1"))
    }
}

/// A random kernel of phases over 64 lanes: each phase may be guarded by a
/// compare of the lane index, loads a shared word and stores one (affine in
/// the lane index, sometimes past the end: faults), may store to global
/// memory, and ends with a barrier or not. Every lane finally copies its
/// shared word to global memory so the shared state is seen.
fn random_kernel(rng: &mut Rng) -> String {
    let mut g = Gen {
        t: "kernel @r shared 256 private 0 {\nblock0:\n  v0 = local_index\n  v1 = const.i32 2\n  v2 = workgroup_id.x\n  v3 = const.i32 64\n".into(),
        next: 4,
    };
    let mut block = 1;
    // A uniform bound: the workgroup id plus one.
    let one = g.val("const.i32 1".into());
    let uni = g.val(format!("iadd.i32 v2, v{one}"));
    let mut acc = g.val("imul.i32 v0, v3".into());
    let phases = 2 + rng.below(3);
    for _ in 0..phases {
        // 0: its own word; 1: a tree level (`lid < d` reads `lid + d`);
        // 2: any guard, any two words.
        let pattern = rng.below(3);
        let d = rng.below(33);
        let guarded = pattern == 1 || rng.chance(50);
        let join = block + 1;
        if guarded {
            let (cc, bound) = if pattern == 1 {
                ("ult", g.val(format!("const.i32 {d}")))
            } else if rng.chance(30) {
                (rng.pick(&["ult", "ugt", "eq"]), uni)
            } else {
                let cc = rng.pick(&["ult", "ule", "ugt", "uge", "eq", "ne"]);
                (cc, g.val(format!("const.i32 {}", rng.below(66))))
            };
            let c = g.val(format!("icmp.{cc}.i32 v0, v{bound}"));
            g.t.push_str(&format!(
                "  br v{c}, block{block}, block{join}\n\nblock{block}:\n"
            ));
        }
        match pattern {
            0 => {
                let a = g.val(format!("const.i32 {}", 1 + rng.below(2)));
                let b = g.val(format!("const.i32 {}", rng.below(8)));
                let m = g.val(format!("imul.i32 v0, v{a}"));
                let s = g.val(format!("iadd.i32 v{m}, v{b}"));
                let a = g.val(format!("shl.i32 v{s}, v1"));
                let x = g.val(format!("load.shared.i32 v{a}"));
                acc = g.val(format!("iadd.i32 v{acc}, v{x}"));
                g.t.push_str(&format!("  store.shared.i32 v{a}, v{acc}\n"));
            }
            1 => {
                let d = g.val(format!("const.i32 {d}"));
                let up = g.val(format!("iadd.i32 v0, v{d}"));
                let la = g.val(format!("shl.i32 v{up}, v1"));
                let x = g.val(format!("load.shared.i32 v{la}"));
                acc = g.val(format!("iadd.i32 v{acc}, v{x}"));
                let sa = g.val("shl.i32 v0, v1".into());
                g.t.push_str(&format!("  store.shared.i32 v{sa}, v{acc}\n"));
            }
            _ => {
                let la = g.shared_addr(rng);
                let x = g.val(format!("load.shared.i32 v{la}"));
                acc = g.val(format!("iadd.i32 v{acc}, v{x}"));
                let sa = g.shared_addr(rng);
                g.t.push_str(&format!("  store.shared.i32 v{sa}, v{acc}\n"));
            }
        }
        if rng.chance(30) {
            // Global word BASE + (lid * a) * 4, a in 0..2 (0: every lane
            // writes one word).
            let a = g.val(format!("const.i32 {}", rng.below(2)));
            let m = g.val(format!("imul.i32 v0, v{a}"));
            let w = g.val(format!("zext.i32.i64 v{m}"));
            let two = g.val("const.i64 2".into());
            let o = g.val(format!("shl.i64 v{w}, v{two}"));
            let base = g.val("const.i64 0x100000".into());
            let p = g.val(format!("iadd.i64 v{base}, v{o}"));
            g.t.push_str(&format!("  store.global.i32 v{p}, v{acc}\n"));
        }
        if guarded {
            g.t.push_str(&format!("  jump block{join}\n\nblock{join}:\n"));
            block = join + 1;
            // The lane's running value leaves the guarded block only
            // through memory.
            acc = g.val("imul.i32 v0, v3".into());
        }
        if rng.chance(80) {
            g.t.push_str("  barrier\n");
        }
    }
    g.t.push_str("  barrier\n");
    let a = g.val("shl.i32 v0, v1".into());
    let x = g.val(format!("load.shared.i32 v{a}"));
    let w = g.val(format!("zext.i32.i64 v{a}"));
    let base = g.val("const.i64 0x100400".into());
    let p = g.val(format!("iadd.i64 v{base}, v{w}"));
    g.t.push_str(&format!("  store.global.i32 v{p}, v{x}\n  exit\n}}\n"));
    g.t
}

#[test]
fn random_barrier_kernels_give_the_same_results_as_one_wave_when_proved() {
    let mut rng = Rng(0x5eed_0a11);
    let (mut proved, mut refused, mut raced) = (0, 0, 0);
    for _ in 0..400 {
        let text = random_kernel(&mut rng);
        let k = kernel_with("", &text);
        let (a, b) = both_orders(&text);
        match waves_commute(&k) {
            Ok(()) => {
                proved += 1;
                assert!(a == b, "proved, but the orders differ:\n{text}");
            }
            Err(_) => {
                refused += 1;
                raced += usize::from(a != b);
            }
        }
    }
    eprintln!("proved {proved}, refused {refused} ({raced} of them differ)");
    // Both answers occur, and the refusals include real races.
    assert!(proved >= 40 && refused >= 40 && raced >= 10);
}

#[test]
fn uniformity_of_the_tree_reduction() {
    use wavejit_ir::analysis::Uniformity;
    use wavejit_ir::{Block, Value};
    let k = kernel_with("", &tree("ult"));
    let u = Uniformity::compute(&k);
    let b = Block::from_u32;
    // Result `i` of block `blk`'s instructions.
    let res = |blk: u32, i: usize| -> Value { k.insts[k.blocks[b(blk)].insts[i]].results[0] };
    // The level is uniform (a constant halved), the lane's test and sums
    // are not.
    assert!(u.is_uniform(k.blocks[b(1)].params[0]));
    assert!(u.is_uniform(res(3, 1)) && u.is_uniform(res(3, 3)));
    assert!(!u.is_uniform(res(1, 1)));
    assert!(!u.is_uniform(res(2, 4)));
    assert!(u.is_divergent_branch(b(1)) && !u.is_divergent_branch(b(3)));
    let regions: Vec<_> = u
        .regions()
        .iter()
        .map(|r| (r.branch, r.join, r.blocks.clone()))
        .collect();
    assert_eq!(
        regions,
        vec![
            (b(1), Some(b(3)), vec![b(2)]),
            (b(4), Some(b(6)), vec![b(5)]),
        ]
    );
    assert!(u.in_divergent_region(b(2)) && !u.in_divergent_region(b(3)));
}

#[test]
fn a_loop_whose_exit_diverges_makes_its_values_divergent_outside() {
    use wavejit_ir::Value;
    use wavejit_ir::analysis::Uniformity;
    // i counts to lid: uniform steps, but each lane leaves at its own i.
    let k = kernel_with(
        "",
        "kernel @l shared 0 private 0 {
block0:
  v0 = local_index
  v1 = const.i32 0
  jump block1(v1)

block1(v2: i32):
  v3 = const.i32 1
  v4 = iadd.i32 v2, v3
  v5 = icmp.ult.i32 v4, v0
  br v5, block1(v4), block2

block2:
  v6 = const.i64 0x100000
  store.global.i32 v6, v4
  exit
}
",
    );
    let u = Uniformity::compute(&k);
    let b1 = &k.blocks[wavejit_ir::Block::from_u32(1)];
    let res = |i: usize| -> Value { k.insts[b1.insts[i]].results[0] };
    assert!(!u.is_uniform(b1.params[0]));
    assert!(!u.is_uniform(res(1)));
    assert!(u.is_uniform(res(0)));
}

/// Lanes from 40 on leave early; the rest store, meet at a barrier and read
/// their upper neighbour's word (written before the barrier).
const EARLY_EXIT: &str = "kernel @early shared 256 private 0 {
block0:
  v0 = local_index
  v1 = const.i32 2
  v2 = shl.i32 v0, v1
  v3 = const.i32 40
  v4 = icmp.uge.i32 v0, v3
  br v4, block1, block2

block1:
  exit

block2:
  v5 = const.i32 11
  v6 = imul.i32 v0, v5
  store.shared.i32 v2, v6
  barrier
  v7 = const.i32 1
  v8 = iadd.i32 v0, v7
  v9 = shl.i32 v8, v1
  v10 = load.shared.i32 v9
  v11 = zext.i32.i64 v2
  v12 = const.i64 0x100000
  v13 = iadd.i64 v12, v11
  store.global.i32 v13, v10
  exit
}
";

#[test]
fn a_barrier_after_an_early_exit_is_reached_by_every_live_lane() {
    use wavejit_ir::Block;
    use wavejit_ir::analysis::Uniformity;
    let k = kernel_with("", EARLY_EXIT);
    let u = Uniformity::compute(&k);
    // The lanes that stay meet at block2: the barrier there is uniform.
    let r = &u.regions()[0];
    assert_eq!(
        (r.join, r.blocks.clone()),
        (Some(Block::from_u32(2)), vec![Block::from_u32(1)])
    );
    assert!(!u.in_divergent_region(Block::from_u32(2)));
    assert_eq!(waves_commute(&k), Ok(()));
    let (a, b) = both_orders(EARLY_EXIT);
    assert!(a == b, "the orders differ");
    // Twin: the barrier inside the branch the staying lanes take is
    // divergent when the leaving lanes can reach a barrier too.
    let twin = EARLY_EXIT.replace("block1:\n  exit", "block1:\n  barrier\n  exit");
    let k = kernel_with("", &twin);
    assert!(matches!(
        waves_commute(&k),
        Err(WaveOrder::DivergentBarrier(_))
    ));
}
