//! Constant folding in the AGX lifter: `lift` (promoted and folded) and
//! `lift_unpromoted` (registers in private memory, nothing folded) give the
//! same buffers on every engine, the folded kernels are smaller, and nothing
//! foldable is left in them.

mod agx_lift_support;
use agx_lift_support::{Shape, lanes, run_kernel};
use wavejit_frontend::agx::assemble;
use wavejit_frontend::agx::lift::{LiftConfig, lift, lift_unpromoted};
use wavejit_ir::transform::{FoldStats, fold_constants};
use wavejit_ir::{InstKind, Kernel, Terminator, ValueDef};

fn count(k: &Kernel, pred: impl Fn(&InstKind) -> bool) -> usize {
    k.blocks
        .values()
        .flat_map(|b| &b.insts)
        .filter(|&&i| pred(&k.insts[i].kind))
        .count()
}

fn is_const(k: &Kernel, v: wavejit_ir::Value) -> bool {
    match k.values[v].def {
        ValueDef::Result { inst, .. } => matches!(k.insts[inst].kind, InstKind::Const { .. }),
        ValueDef::Param { .. } => false,
    }
}

/// Lifts `src` both ways, runs both and compares; checks the folded kernel
/// has no branch on a constant and folds no further. Returns the op counts
/// (unpromoted, folded), the folded kernel and the buffers.
fn both_ways(
    src: &str,
    shape: Shape,
    inputs: &[Vec<u32>],
) -> ((usize, usize), Kernel, Vec<Vec<u32>>) {
    let code = assemble(src).unwrap_or_else(|e| panic!("assemble: {e}\n{src}"));
    let cfg = LiftConfig::default();
    let plain = lift_unpromoted(&code, &cfg).expect("lift");
    let folded = lift(&code, &cfg).expect("lift");
    for k in [&plain, &folded] {
        wavejit_ir::verify::verify(k).unwrap_or_else(|e| panic!("verify: {e}"));
    }
    let out = run_kernel(&folded, shape, inputs);
    assert_eq!(
        out,
        run_kernel(&plain, shape, inputs),
        "folding changed the result"
    );
    for b in folded.blocks.values() {
        if let Some(Terminator::Branch { cond, .. }) = &b.term {
            assert!(!is_const(&folded, *cond), "a branch on a constant is left");
        }
    }
    let mut again = folded.clone();
    assert_eq!(
        fold_constants(&mut again).expect("verifies"),
        FoldStats::default()
    );
    eprintln!(
        "ops {} unpromoted -> {} folded",
        plain.op_count(),
        folded.op_count()
    );
    ((plain.op_count(), folded.op_count()), folded, out)
}

#[test]
fn straight_line_code_keeps_no_exec_select() {
    // No divergence: the exec flag is a known true everywhere, so every
    // predicated register write (select on exec) folds to its new value.
    let src = "mov r2, thread_in_grid_x
iadd r3, r2, 5
imul r4, r3, r3
ldimm r5, 0x10000
iadd r4, r4, r5
store r4, du0, r2, i32, x, a
stop";
    let ((before, after), k, out) = both_ways(src, lanes(33, 33), &[vec![0; 33]]);
    assert_eq!(count(&k, |i| *i == InstKind::Select), 0);
    let want: Vec<u32> = (0..33).map(|i| (i + 5) * (i + 5) + 0x10000).collect();
    assert_eq!(out[0], want);
    assert!(after * 2 < before, "{before} -> {after} ops");
}

#[test]
fn if_else_keeps_only_the_lane_dependent_masking() {
    let src = "mov r2, thread_in_grid_x
ldimm r3, 7
if r2, 4, 1, ult
jmp_none ELSE
ldimm r3, 100
ELSE:
else 0.0, 0.0, 1, feq
jmp_none END
iadd r3, r3, 200
END:
pop_exec 1
store r3, du0, r2, i32, x, a
stop";
    let ((before, after), _, out) = both_ways(src, lanes(40, 40), &[vec![0; 40]]);
    let want: Vec<u32> = (0..40).map(|i| if i < 4 { 100 } else { 207 }).collect();
    assert_eq!(out[0], want);
    assert!(after < before, "{before} -> {after} ops");
}

#[test]
fn loops_and_nested_ifs_stay_exact() {
    let src = "mov r2, thread_in_grid_x
ldimm r3, 0
ldimm r4, 0
TOP:
while r3, r2, 1, ult
jmp_none END
if r3, 3, 1, ugt
iadd r4, r4, r2
pop_exec 1
iadd r3, r3, 1
jmp_any TOP
END:
pop_exec 1
mov r5, r0l
store r4, du0, r2, i32, x, a
store r5, du2, r2, i32, x, a
stop";
    let ((before, after), _, out) = both_ways(src, lanes(37, 37), &[vec![9; 37], vec![9; 37]]);
    // Iterations 4 .. id add id; r0l is back to 0 after the loop.
    let want: Vec<u32> = (0..37u32).map(|i| i * i.saturating_sub(4)).collect();
    assert_eq!(out[0], want);
    assert_eq!(out[1], vec![0; 37]);
    assert!(after < before, "{before} -> {after} ops");
}
