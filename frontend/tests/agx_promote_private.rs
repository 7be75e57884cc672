//! The AGX lifter's register promotion: programs lifted with and without it
//! (`lift` vs `lift_unpromoted`) give identical buffers on every engine, and
//! the promoted kernels keep no private-memory access at all.

mod agx_lift_support;
use agx_lift_support::{Shape, lanes, run_kernel};
use wavejit_frontend::agx::assemble;
use wavejit_frontend::agx::lift::{LiftConfig, lift, lift_unpromoted};
use wavejit_ir::{AddrSpace, InstKind, Kernel};

fn private_accesses(k: &Kernel) -> usize {
    k.blocks
        .values()
        .flat_map(|b| &b.insts)
        .filter(|&&i| {
            matches!(
                k.insts[i].kind,
                InstKind::Load(m) | InstKind::Store(m) if m.space == AddrSpace::Private
            )
        })
        .count()
}

/// Lifts `src` both ways, checks both verify, runs both and compares; returns
/// (private accesses before, after) and the promoted run's buffers.
fn both_ways(src: &str, shape: Shape, inputs: &[Vec<u32>]) -> ((usize, usize), Vec<Vec<u32>>) {
    let code = assemble(src).unwrap_or_else(|e| panic!("assemble: {e}\n{src}"));
    let cfg = LiftConfig::default();
    let plain = lift_unpromoted(&code, &cfg).expect("lift");
    let promoted = lift(&code, &cfg).expect("lift");
    for k in [&plain, &promoted] {
        wavejit_ir::verify::verify(k).unwrap_or_else(|e| panic!("verify: {e}"));
    }
    let want = run_kernel(&plain, shape, inputs);
    let got = run_kernel(&promoted, shape, inputs);
    assert_eq!(got, want, "promotion changed the result");
    ((private_accesses(&plain), private_accesses(&promoted)), got)
}

#[test]
fn divergent_loop_registers_become_values() {
    let src = "mov r2, thread_in_grid_x
ldimm r3, 0
ldimm r4, 0
TOP:
while r3, r2, 1, ult
jmp_none END
iadd r4, r4, r2
iadd r3, r3, 1
jmp_any TOP
END:
pop_exec 1
store r4, du0, r2, i32, x, a
stop";
    let ((before, after), out) = both_ways(src, lanes(37, 37), &[vec![9; 37]]);
    assert!(before > 20, "{before} private accesses before");
    assert_eq!(after, 0);
    assert_eq!(out[0], (0..37).map(|i| i * i).collect::<Vec<u32>>());
}

#[test]
fn halves_and_register_pairs_share_slots() {
    // 16-bit halves inside 32-bit registers, a 64-bit product in a pair.
    let src = "load r0_r1_r2_r3, du0, 0, i32, xyzw, a
wait a
ldimm r4, 0x12345678
mov r5, r4
ldimm r5h, 0xbeef
ldimm r6l, 0xcafe
mov r7h, r1l
iadd r8, r2l.sx, r3h.sx
imul dr10, r3, r3
store r4_r5_r6_r7, du2, 0, i32, xyzw, a
store r8_r9_r10_r11, du2, 4, i32, xyzw, a
stop";
    let a = vec![0x8001_7ffe, 0x1234_abcd, 0xffff_fff0, 0x9000_0003];
    let ((before, after), out) = both_ways(src, lanes(1, 1), &[a, vec![0xdead_beef; 8]]);
    assert!(before > 20, "{before} private accesses before");
    assert_eq!(after, 0);
    assert_eq!(out[1][0], 0x1234_5678);
    assert_eq!(out[1][1], 0xbeef_5678);
    assert_eq!(out[1][4], 0xffff_fff0u32.wrapping_add(0xffff_9000));
    let sq = 0x9000_0003u64 * 0x9000_0003u64;
    assert_eq!((out[1][6], out[1][7]), (sq as u32, (sq >> 32) as u32));
}
