//! `transform::eliminate_common_subexpressions` on the patterns lifters
//! leave: a uniform word read again per use (merged where the first read
//! dominates, kept in sibling blocks), a global word read again after a store
//! (never merged: memory changed), and a uniform read out of range (the fault
//! stays where it was).

mod promote_support;

use promote_support::{BASE, assert_same_run, run, two_groups_of_8};
use wavejit_ir::text::{parse, print};
use wavejit_ir::transform::eliminate_common_subexpressions;
use wavejit_ir::{FaultKind, InstKind};

fn kernel(uniform_offset: u32) -> wavejit_ir::Kernel {
    parse(&format!(
        "kernel @cse {{
block0:
  v0 = local_index
  v1 = zext.i32.i64 v0
  v2 = const.i64 2
  v3 = shl.i64 v1, v2
  v4 = const.i64 {BASE}
  v5 = iadd.i64 v4, v3
  v6 = const.i32 {uniform_offset}
  v7 = load.uniform.i32 v6
  v8 = load.global.i32 v5
  v9 = iadd.i32 v8, v7
  store.global.i32 v5, v9
  v10 = const.i32 {uniform_offset}
  v11 = load.uniform.i32 v10
  v12 = load.global.i32 v5
  v13 = iadd.i32 v12, v11
  v14 = const.i32 3
  v15 = icmp.ult.i32 v0, v14
  br v15, block1, block2

block1:
  v16 = const.i64 2
  v17 = shl.i64 v1, v16
  v18 = load.uniform.i32 v6
  v19 = iadd.i32 v13, v18
  v20 = iadd.i64 v4, v17
  store.global.i32 v20, v19
  exit

block2:
  v21 = load.uniform.i32 v6
  v22 = iadd.i32 v13, v21
  store.global.i32 v5, v22
  exit
}}
"
    ))
    .expect("the kernel parses")
}

#[test]
fn uniform_reads_merge_where_dominated_and_memory_reads_do_not() {
    let k = kernel(0);
    let mut d = two_groups_of_8();
    d.uniforms = 7u32.to_le_bytes().to_vec();
    let mut cse = k.clone();
    // Both branch arms' uniform reads go (block0's dominates them), with the
    // second read in block0 and its constant, and block1's address (its
    // constant, shift and add).
    assert_eq!(eliminate_common_subexpressions(&mut cse), Ok(7));
    assert_same_run(&k, &cse, &d);
    let loads = |kind: &dyn Fn(&InstKind) -> bool| {
        cse.blocks
            .values()
            .flat_map(|b| &b.insts)
            .filter(|&&i| kind(&cse.insts[i].kind))
            .count()
    };
    let uniform =
        |k: &InstKind| matches!(k, InstKind::Load(a) if a.space == wavejit_ir::AddrSpace::Uniform);
    let global =
        |k: &InstKind| matches!(k, InstKind::Load(a) if a.space == wavejit_ir::AddrSpace::Global);
    assert_eq!(loads(&uniform), 1, "{}", print(&cse));
    assert_eq!(loads(&global), 2, "{}", print(&cse));
    // Each lane adds 7 to its word, reads it back and stores it plus 14: 21;
    // both workgroups of 8 use the same words (local index): 42.
    let (result, mem) = run(&cse, &d);
    assert_eq!(result, Ok(()));
    let words: Vec<u32> = mem[..32]
        .chunks(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect();
    assert_eq!(words, [42; 8]);
}

#[test]
fn a_uniform_read_out_of_range_faults_at_the_same_place() {
    let k = kernel(64);
    let mut d = two_groups_of_8();
    d.uniforms = 7u32.to_le_bytes().to_vec();
    let mut cse = k.clone();
    assert!(eliminate_common_subexpressions(&mut cse).is_ok_and(|n| n > 0));
    assert_same_run(&k, &cse, &d);
    let (result, _) = run(&cse, &d);
    let f = result.expect_err("the read faults");
    assert!(!matches!(f.kind, FaultKind::Watchdog { .. }), "{f}");
}
