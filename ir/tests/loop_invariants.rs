//! `transform::hoist_loop_invariants` on the loop shape ir3 lifts: the entry
//! reads a high const (the trip count), the loop reads lower ones on every
//! iteration. Reads the entry's proves in range move to the preheader; reads
//! it does not (out of range, misaligned) stay in the loop, so a loop that
//! never runs does not fault and one that runs faults where it did.

mod promote_support;

use promote_support::{BASE, assert_same_run, run, two_groups_of_8};
use wavejit_ir::text::{parse, print};
use wavejit_ir::transform::hoist_loop_invariants;
use wavejit_ir::{AddrSpace, Block, FaultKind, InstKind, Kernel};

/// Each lane stores `local_index + n * u[loop_off]`, `n = u[16]` the trip
/// count; a lane with `n == 0` skips the loop (block3 is its preheader).
fn kernel(loop_off: u32) -> Kernel {
    parse(&format!(
        "kernel @licm {{
block0:
  v0 = local_index
  v1 = const.i32 16
  v2 = load.uniform.i32 v1
  v3 = const.i32 0
  v4 = icmp.ult.i32 v3, v2
  br v4, block3, block2(v0)

block1(v5: i32, v6: i32):
  v7 = const.i32 {loop_off}
  v8 = load.uniform.i32 v7
  v9 = iadd.i32 v6, v8
  v10 = const.i32 1
  v11 = iadd.i32 v5, v10
  v12 = icmp.ult.i32 v11, v2
  br v12, block1(v11, v9), block2(v9)

block2(v13: i32):
  v14 = zext.i32.i64 v0
  v15 = const.i64 2
  v16 = shl.i64 v14, v15
  v17 = const.i64 {BASE}
  v18 = iadd.i64 v17, v16
  store.global.i32 v18, v13
  exit

block3:
  jump block1(v3, v0)
}}
"
    ))
    .expect("the kernel parses")
}

fn uniforms(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The uniform loads of `block`.
fn uniform_loads(k: &Kernel, block: Block) -> usize {
    k.blocks[block]
        .insts
        .iter()
        .filter(
            |&&i| matches!(&k.insts[i].kind, InstKind::Load(a) if a.space == AddrSpace::Uniform),
        )
        .count()
}

fn stored(mem: &[u8]) -> Vec<u32> {
    mem[..32]
        .chunks(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect()
}

#[test]
fn a_read_the_entry_proves_in_range_leaves_the_loop() {
    let k = kernel(8);
    let mut hoisted = k.clone();
    // The read, its offset and the increment's constant.
    assert_eq!(hoist_loop_invariants(&mut hoisted), Ok(3));
    let (header, pre) = (Block::from_u32(1), Block::from_u32(3));
    assert_eq!(uniform_loads(&hoisted, header), 0, "{}", print(&hoisted));
    assert_eq!(uniform_loads(&hoisted, pre), 1, "{}", print(&hoisted));
    let mut d = two_groups_of_8();
    d.uniforms = uniforms(&[0, 0, 5, 0, 3]);
    assert_same_run(&k, &hoisted, &d);
    let (result, mem) = run(&hoisted, &d);
    assert_eq!(result, Ok(()));
    assert_eq!(stored(&mem), [15, 16, 17, 18, 19, 20, 21, 22]);
    // Moved once: nothing is left to move.
    assert_eq!(hoist_loop_invariants(&mut hoisted), Ok(0));
}

#[test]
fn reads_the_entry_does_not_prove_stay_in_the_loop() {
    // u[20] lies past what the entry read (u[16]); u[6] is misaligned.
    for off in [20, 6] {
        let k = kernel(off);
        let mut hoisted = k.clone();
        // Only the two constants move.
        assert_eq!(hoist_loop_invariants(&mut hoisted), Ok(2), "offset {off}");
        assert_eq!(uniform_loads(&hoisted, Block::from_u32(1)), 1);
        // A loop that never runs does not fault ...
        let mut d = two_groups_of_8();
        d.uniforms = uniforms(&[0, 0, 5, 0, 0]);
        assert_same_run(&k, &hoisted, &d);
        assert_eq!(run(&hoisted, &d).0, Ok(()), "offset {off}");
        assert_eq!(stored(&run(&hoisted, &d).1), [0, 1, 2, 3, 4, 5, 6, 7]);
        // ... and one that runs faults in the loop.
        d.uniforms = uniforms(&[0, 0, 5, 0, 2]);
        assert_same_run(&k, &hoisted, &d);
        let f = run(&hoisted, &d).0.expect_err("the read faults");
        assert_eq!(f.block, Block::from_u32(1), "{f}");
        assert!(matches!(f.kind, FaultKind::Memory { .. }), "{f}");
    }
}

#[test]
fn a_loop_entered_from_a_branch_keeps_its_instructions() {
    // No preheader (the entry's branch enters the loop): no block is added.
    let text = print(&kernel(8)).replace(
        "br v4, block3, block2(v0)",
        "br v4, block1(v3, v0), block2(v0)",
    );
    let k = parse(&text).expect("parses");
    let mut hoisted = k.clone();
    assert_eq!(hoist_loop_invariants(&mut hoisted), Ok(0));
    assert_eq!(hoisted, k);
}
