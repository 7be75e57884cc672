//! Execution-mask control flow, special registers, memory, barriers, atomics and
//! SIMD-group operations of the AGX lifter, with divergence, on both engines.

mod agx_lift_support;
use agx_lift_support::{Shape, lanes, run, run_preamble, words};
use wavejit_frontend::agx::assemble;
use wavejit_frontend::agx::lift::{AgxDispatch, LiftConfig, LiftError, lift};

#[test]
fn if_else_pop_with_divergence() {
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
    let out = run(src, lanes(40, 40), &[vec![0; 40]]);
    let want: Vec<u32> = (0..40).map(|i| if i < 4 { 100 } else { 207 }).collect();
    assert_eq!(out[0], want);
}

#[test]
fn while_loop_with_per_lane_trip_counts() {
    // Each lane adds its id to an accumulator id times: lanes leave the loop one by
    // one through while (r0l = 1) and come back at pop_exec.
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
    let out = run(src, lanes(37, 37), &[vec![9; 37]]);
    let want: Vec<u32> = (0..37).map(|i| i * i).collect();
    assert_eq!(out[0], want);
}

#[test]
fn nested_if_counts_nesting_in_r0l() {
    // Lanes failing the outer if get r0l = 1; the inner if adds 1 to them (2).
    let src = "mov r2, thread_in_grid_x
ldimm r3, 0
ldimm r4, 9
if r2, 8, 1, ult
if r2, 2, 1, ugt
ldimm r3, 1
pop_exec 1
mov r4, r0l
pop_exec 1
mov r5, r0l
store r3, du0, r2, i32, x, a
store r4, du2, r2, i32, x, a
store r5, du4, r2, i32, x, a
stop";
    let out = run(src, lanes(12, 12), &[vec![0; 12], vec![9; 12], vec![9; 12]]);
    let want: Vec<u32> = (0..12).map(|i| u32::from(i > 2 && i < 8)).collect();
    assert_eq!(out[0], want);
    // r4 written only where active after the first pop (lanes < 8): r0l = 0 there.
    let w4: Vec<u32> = (0..12).map(|i| if i < 8 { 0 } else { 9 }).collect();
    assert_eq!(out[1], w4);
    assert_eq!(out[2], vec![0; 12]);
}

#[test]
fn break_by_writing_r0l() {
    // break: mov_imm r0l, 1 in the breaking lanes then pop_exec 0 recomputes exec.
    let src = "mov r2, thread_in_grid_x
ldimm r3, 1
if r2, 2, 1, ult
ldimm r0l, 1
pop_exec 0
ldimm r3, 5
pop_exec 1
store r3, du0, r2, i32, x, a
stop";
    let out = run(src, lanes(4, 4), &[vec![0; 4]]);
    assert_eq!(out[0], vec![1, 1, 1, 1]);
}

#[test]
fn call_and_ret() {
    let src = "mov r2, thread_in_grid_x
ldimm r3, 1
call SUB
iadd r3, r3, 10
store r3, du0, r2, i32, x, a
stop
SUB:
iadd r3, r3, r3
ret r1";
    let out = run(src, lanes(3, 3), &[vec![0; 3]]);
    assert_eq!(out[0], vec![12; 3]);
}

#[test]
fn special_registers() {
    let src = "mov r2, thread_in_grid_x
mov r3, thread_in_threadgroup_x
mov r4, threadgroup_in_grid_x
mov r5, simdgroup_index_in_threadgroup
mov r6, thread_index_in_simdgroup
iadd r7, 0, r2, lsl 3
store r3_r4_r5_r6, du0, r7, i32, xyzw, a
stop";
    let out = run(src, lanes(80, 40), &[vec![0; 640]]);
    for g in 0..80u32 {
        let row = &out[0][(g * 8) as usize..(g * 8 + 4) as usize];
        let l = g % 40;
        assert_eq!(row, [l, g / 40, l / 32, l % 32], "thread {g}");
    }
}

#[test]
fn lanes_outside_a_non_uniform_grid_never_run() {
    let src = "mov r2, thread_in_grid_x
store r2, du0, r2, i32, x, a
stop";
    let shape = Shape {
        grid: [5, 1, 1],
        tg: [4, 1, 1],
        tg_mem: 0,
    };
    let out = run(src, shape, &[vec![77; 8]]);
    assert_eq!(out[0], vec![0, 1, 2, 3, 4, 77, 77, 77]);
}

#[test]
fn device_load_store_formats_masks_shift_and_index_sign() {
    let src = "ldimm r2, 3
load r4_r5, du0, r2, lsl 1, i32, xz, a
ldimm r3, 0xffffffff
load r6l, du2, r3.sx, i16, x, a
load r6h, du2, 2, i8, x, a
load r7, du2, 0, u8norm, x, a
store r4_r5, du4, 0, i32, xw, a
store r6, du4, 1, i32, x, a
store r7, du4, 2, i32, x, a
stop";
    let src0: Vec<u32> = (0..16).map(|i| 100 + i).collect();
    // buffer 1 is read at index -1 (sign-extended) relative to u2_u3: bind it 2
    // bytes into its allocation by using a base offset through the index.
    let mut src1 = vec![0u32; 4];
    src1[0] = 0xbbaa_ff80;
    src1[1] = 0x0000_1234;
    let code = assemble(src).unwrap();
    let k = lift(&code, &LiftConfig::default()).unwrap();
    for engine in agx_lift_support::engines() {
        let mem = agx_lift_support::Mem::new(&[words(&src0), words(&src1), vec![0xee; 16]]);
        let a = mem.addrs();
        // u2_u3 points 4 bytes into buffer 1, so index -1 reads its first i16.
        let d = AgxDispatch::with_buffers([1, 1, 1], [1, 1, 1], &[a[0], a[1] + 4, a[2]]).unwrap();
        engine.run(&k, &d.dispatch().unwrap(), &mem).unwrap();
        let out = agx_lift_support::to_words(&mem.bytes(2));
        // xz of element (3 << 1) = 6: memory slots 6 and 8 fill r4, r5 (consecutive
        // registers); stored with mask xw to slots 0 and 3.
        assert_eq!(out[0], 106, "{}", engine.name());
        assert_eq!(out[3], 108);
        // r6l = i16 at (u2 & ~1) + (-1)*2 = 0xbbaa; r6h = i8 at u2 + 2 = 0x00.
        assert_eq!(out[1], 0x0000_bbaa);
        // u8norm of byte 0x34 into a 32-bit register.
        assert_eq!(out[2], (52.0f32 / 255.0).to_bits());
    }
}

#[test]
fn packed_formats_load_one_word_and_expand() {
    let src = "load r4_r5_r6_r7, du0, 0, rgb10a2, xyzw, a
load r8_r9_r10, du0, 1, rg11b10f, xyz, a
load r11_r12_r13, du0, 2, rgb9e5, xyz, a
load r14l_r14h_r15l, du0, 1, rg11b10f, xyz, a
store r4_r5_r6_r7, du2, 0, i32, xyzw, a
store r8_r9_r10_r11, du2, 4, i32, xyzw, a
store r12_r13_r14_r15, du2, 8, i32, xyzw, a
stop";
    // rgb10a2: r = 1023, g = 0, b = 341, a = 3.
    let w0 = 1023 | (341 << 20) | (3 << 30);
    // rg11b10f: r = f11 1.0 (exp 15 -> 0x3c0), g = f11 2.0 (0x400), b = f10 0.5 (0x1c0).
    let w1 = 0x3c0 | (0x400 << 11) | (0x1c0 << 22);
    // rgb9e5: e = 16 -> scale 2^-8: r = 256 -> 1.0, g = 3 -> 3/256, b = 0.
    let w2 = 256 | (3 << 9) | (16 << 27);
    let out = run(src, lanes(1, 1), &[vec![w0, w1, w2], vec![0; 12]]);
    let f = |x: f32| x.to_bits();
    assert_eq!(out[1][..4], [f(1.0), 0, f(341.0 / 1023.0), f(1.0)]);
    assert_eq!(out[1][4..7], [f(1.0), f(2.0), f(0.5)]);
    assert_eq!(out[1][7..10], [f(1.0), f(3.0 / 256.0), 0]);
    // 16-bit registers get f16: 1.0, 2.0 | 0.5 in r15l.
    assert_eq!(out[1][10], 0x4000_3c00);
    assert_eq!(out[1][11] & 0xffff, 0x3800);
}

#[test]
fn threadgroup_memory_and_barrier_across_simd_groups() {
    let src = "mov r2, thread_in_threadgroup_x
imul r3, r2, 3
iadd r5, 0, r2, lsl 2
lstore r3, r5l, 0, i32, x
barrier
iadd r6, r2, 1
and r6, r6, 63
iadd r6, 0, r6, lsl 2
lload r7, r6l, 0, i32, x
mov r8, thread_in_grid_x
store r7, du0, r8, i32, x, a
stop";
    let shape = Shape {
        grid: [128, 1, 1],
        tg: [64, 1, 1],
        tg_mem: 256,
    };
    let out = run(src, shape, &[vec![0; 128]]);
    let want: Vec<u32> = (0..128).map(|i| ((i % 64 + 1) % 64) * 3).collect();
    assert_eq!(out[0], want);
}

#[test]
fn device_and_threadgroup_atomics() {
    let src = "mov r2, thread_in_grid_x
ldimm r3, 1
atomic r4, r3, du0, 0, add, coherent1, a
store r4, du2, r2, i32, x, a
atomic _, r2, du0, 1, umax, coherent1, a
ldimm r6, 0
lstore r6, 0, i32, x
barrier
latomic r7, r2, 0, add
barrier
lload r8, 0, i32, x
store r8, du4, r2, i32, x, a
stop";
    let shape = Shape {
        grid: [48, 1, 1],
        tg: [48, 1, 1],
        tg_mem: 16,
    };
    let out = run(src, shape, &[vec![0, 0], vec![0; 48], vec![0; 48]]);
    assert_eq!(out[0], vec![48, 47]);
    let mut olds = out[1].clone();
    olds.sort_unstable();
    assert_eq!(olds, (0..48).collect::<Vec<u32>>());
    // Lanes apply in lane order inside a SIMD-group.
    assert_eq!(out[1][..32], (0..32).collect::<Vec<u32>>()[..]);
    assert_eq!(out[2], vec![(0..48).sum::<u32>(); 48]);
}

#[test]
fn cmpxchg_new_value_first() {
    let src = "ldimm r4, 9
ldimm r5, 5
atomic r6, r4_r5, du0, 0, cmpxchg, coherent1, a
ldimm r5, 7
atomic r7, r4_r5, du0, 1, cmpxchg, coherent1, a
store r6_r7, du2, 0, i32, xy, a
stop";
    let out = run(src, lanes(1, 1), &[vec![5, 6], vec![0, 0]]);
    // [0] == 5 -> 9; [1] == 6 != 7 -> unchanged.
    assert_eq!(out[0], vec![9, 6]);
    assert_eq!(out[1], vec![5, 6]);
}

fn quirk(b: &[u32], a: &[u32], mode: u32) -> Vec<u32> {
    (0..32u32)
        .map(|t| {
            let bt = b[t as usize];
            let (target, valid) = match mode {
                0 => (bt, bt < 32),
                1 => (t ^ bt, (t ^ bt) < 32),
                2 => (t.wrapping_sub(bt), t >= bt),
                _ => (t + bt, t + bt < 32),
            };
            if !valid {
                return a[t as usize];
            }
            let s = target >> 2;
            let k = (0..4).fold(0, |acc, j| acc | (b[(4 * s + j) as usize] & 3));
            let within = match mode {
                0 => k,
                1 => (t ^ k) & 3,
                2 => t.wrapping_sub(k) & 3,
                _ => (t + k) & 3,
            };
            a[(4 * s + within) as usize]
        })
        .collect()
}

#[test]
fn simd_shuffles_with_the_quad_select_quirk() {
    let b: Vec<u32> = (0..32u32).map(|t| (t * 7 + 3) % 32).collect();
    let a: Vec<u32> = (0..32u32).map(|t| 1000 + t).collect();
    for (mode, name) in [(0, ""), (1, ", xor"), (2, ", up"), (3, ", down")] {
        let src = format!(
            "mov r2, thread_in_grid_x
load r3, du0, r2, i32, x, a
load r5, du2, r2, i32, x, a
shuffle r4, r3, r5l{name}
store r4, du4, r2, i32, x, a
stop"
        );
        let bb: Vec<u32> = if mode == 0 {
            b.clone()
        } else {
            b.iter().map(|x| x % 4).collect()
        };
        let out = run(&src, lanes(32, 32), &[a.clone(), bb.clone(), vec![0; 32]]);
        assert_eq!(out[2], quirk(&bb, &a, mode), "mode {name}");
    }
    // A uniform B reduces to the ordinary shuffles.
    let src = "mov r2, thread_in_grid_x
ldimm r9, 1000
iadd r3, r2, r9
shuffle r4, r3, 3
shuffle r5, r3, 1, down
store r4_r5, du0, r2, lsl 1, i32, xy, a
stop";
    let out = run(src, lanes(32, 32), &[vec![0; 64]]);
    for t in 0..32u32 {
        assert_eq!(out[0][(2 * t) as usize], 1003);
        assert_eq!(out[0][(2 * t + 1) as usize], 1000 + (t + 1).min(31));
    }
}

#[test]
fn shuffle_reads_inactive_lanes_but_writes_only_active_ones() {
    let src = "mov r2, thread_in_grid_x
ldimm r9, 500
iadd r3, r2, r9
ldimm r4, 1
if r2, 16, 1, ult
shuffle r4, r3, 20
pop_exec 1
store r4, du0, r2, i32, x, a
stop";
    let out = run(src, lanes(32, 32), &[vec![0; 32]]);
    let want: Vec<u32> = (0..32).map(|t| if t < 16 { 520 } else { 1 }).collect();
    assert_eq!(out[0], want);
}

#[test]
fn simd_prefix_and_reductions_over_active_lanes() {
    let src = "mov r2, thread_in_grid_x
ldimm r4, 0
ldimm r5, 0
ldimm r6, 0
and r7, r2, 1
if r7, 0, 1, ieq
simd r4, r2, prefix, iadd
simd r5, r2, iadd
simd r6, r2, umax
pop_exec 1
ballot r8, r7, 0, ieq
iadd r9, 0, r2, lsl 2
store r4_r5_r6, du0, r9, i32, xyz, a
store r8, du2, r2, i32, x, a
stop";
    let out = run(src, lanes(32, 32), &[vec![0; 128], vec![0; 32]]);
    for t in 0..32u32 {
        let row = &out[0][(4 * t) as usize..(4 * t + 3) as usize];
        if t % 2 == 0 {
            let prefix: u32 = (0..t).filter(|i| i % 2 == 0).sum();
            assert_eq!(
                row,
                [prefix, (0..32).filter(|i| i % 2 == 0).sum(), 30],
                "lane {t}"
            );
        } else {
            assert_eq!(row, [0, 0, 0], "lane {t}");
        }
    }
    assert_eq!(out[1], vec![0x5555_5555; 32]);
}

#[test]
fn simd_float_reduction_uses_fadd_rules() {
    let src = "mov r2, thread_in_grid_x
load r3, du0, r2, i32, x, a
simd r4, r3, fadd
simd r5, r3, fmax
store r4_r5, du2, r2, lsl 1, i32, xy, a
stop";
    let mut v = vec![0.5f32.to_bits(); 32];
    v[3] = 0x0000_0001; // FP32 denormal: read as 0
    v[7] = 3.0f32.to_bits();
    let out = run(src, lanes(32, 32), &[v, vec![0; 64]]);
    assert_eq!(out[1][0], (30.0f32 * 0.5 + 3.0).to_bits());
    assert_eq!(out[1][1], 3.0f32.to_bits());
}

#[test]
fn preamble_uniform_store_feeds_the_main_kernel() {
    let pre = "ldimm r0, 41
iadd r0, r0, 1
mov u8, r0
stop";
    let d = AgxDispatch::new([1, 1, 1], [1, 1, 1]);
    let d = run_preamble(pre, &d);
    assert_eq!(d.uniforms[16], 42);
    let src = "mov r0, u8
store r0, du0, 0, i32, x, a
stop";
    let code = assemble(src).unwrap();
    let k = lift(&code, &LiftConfig::default()).unwrap();
    for engine in agx_lift_support::engines() {
        let mem = agx_lift_support::Mem::new(&[vec![0; 4]]);
        let mut dd = d.clone();
        dd.bind_buffer(0, mem.addrs()[0]).unwrap();
        engine.run(&k, &dd.dispatch().unwrap(), &mem).unwrap();
        assert_eq!(mem.bytes(0), 42u32.to_le_bytes());
    }
}

#[test]
fn errors_name_the_instruction_and_pc() {
    // uniform_store in a main kernel, a fragment-only op, an out-of-range register.
    let code = assemble("ldimm r0, 1\nmov u8, r0\nstop").unwrap();
    let e = lift(&code, &LiftConfig::default()).unwrap_err();
    assert!(matches!(e, LiftError::Unsupported { pc: 6, .. }), "{e}");
    assert!(e.to_string().contains("mov u8, r0"), "{e}");
    let code = assemble("dfdx r0, r1\nstop").unwrap();
    let e = lift(&code, &LiftConfig::default()).unwrap_err();
    assert!(
        e.to_string().contains("dfdx") && e.to_string().contains("0x0"),
        "{e}"
    );
    let code = assemble("mov r0, r20\nstop").unwrap();
    let cfg = LiftConfig {
        gpr_count: 16,
        ..LiftConfig::default()
    };
    let e = lift(&code, &cfg).unwrap_err();
    assert!(
        matches!(
            e,
            LiftError::Register {
                reg: 20,
                gprs: 16,
                ..
            }
        ),
        "{e}"
    );
    // Undecodable bytes.
    let e = lift(&[0xff, 0xff, 0xff, 0xff], &LiftConfig::default()).unwrap_err();
    assert!(matches!(e, LiftError::Decode(_)), "{e}");
    // A branch out of the program.
    let code = assemble("jmp_any 1000\nstop").unwrap();
    let e = lift(&code, &LiftConfig::default()).unwrap_err();
    assert!(
        matches!(
            e,
            LiftError::BadTarget {
                pc: 0,
                target: 1000,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn trap_and_falling_off_the_end_fault() {
    let code = assemble("ldimm r0, 1\ntrap").unwrap();
    let k = lift(&code, &LiftConfig::default()).unwrap();
    for engine in agx_lift_support::engines() {
        let mem = agx_lift_support::Mem::new(&[]);
        let d = AgxDispatch::new([1, 1, 1], [1, 1, 1]);
        let f = engine.run(&k, &d.dispatch().unwrap(), &mem).unwrap_err();
        assert_eq!(f.guest_pc, Some(6), "{}", engine.name());
    }
}

/// Lifted for its grid (`LiftConfig::grid`), a kernel over whole
/// threadgroups loses its grid test (one block: the branch and the exit block
/// go), one with a partial last threadgroup keeps it, and both store what the
/// kernel lifted for any grid stores, on every engine.
#[test]
fn a_kernel_lifted_for_its_grid_drops_the_test_a_whole_grid_passes() {
    use agx_lift_support::run_kernel;
    use wavejit_frontend::agx::lift::AgxGrid;
    let src = "mov r2, thread_in_grid_x
load r3, du0, r2, i32, x, a
wait a
iadd r3, r3, r2
store r3, du2, r2, i32, x, a
stop
";
    let code = assemble(src).unwrap();
    let branches = |k: &wavejit_ir::Kernel| {
        k.blocks
            .values()
            .filter(|b| matches!(b.term, Some(wavejit_ir::Terminator::Branch { .. })))
            .count()
    };
    for (threads, tg, tested) in [(96, 32, false), (90, 32, true), (64, 64, false)] {
        let grid = AgxGrid {
            threads: [threads, 1, 1],
            threadgroup_size: [tg, 1, 1],
        };
        let for_grid = lift(
            &code,
            &LiftConfig {
                grid: Some(grid),
                ..LiftConfig::default()
            },
        )
        .unwrap();
        let any = lift(&code, &LiftConfig::default()).unwrap();
        assert_eq!(branches(&any), 1);
        assert_eq!(branches(&for_grid), usize::from(tested), "{threads}/{tg}");
        let input: Vec<u32> = (0..128).map(|i| 1000 + i).collect();
        let shape = lanes(threads, tg);
        let want = run_kernel(&any, shape, &[input.clone(), vec![7; 128]]);
        let got = run_kernel(&for_grid, shape, &[input, vec![7; 128]]);
        assert_eq!(got, want, "{threads}/{tg}");
        // Lanes past the grid store nothing.
        let out = &got[1];
        assert_eq!(out[threads as usize - 1], 1000 + 2 * (threads - 1));
        assert_eq!(out[threads as usize], 7);
    }
}
