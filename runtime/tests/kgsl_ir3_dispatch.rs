//! A hand-built (capture-free) indirect buffer with a hand-assembled ir3 kernel,
//! run through the PM4 command processor and the real compute unit (ir3 lifter +
//! JIT): register state, const load, CP_EXEC_CS, signal write.

use wavejit_frontend::ir3::assemble;
use wavejit_runtime::AddressSpace;
use wavejit_runtime::kgsl::ir3_unit::Ir3Unit;
use wavejit_runtime::kgsl::pm4::packet::op;
use wavejit_runtime::kgsl::pm4::{
    CommandProcessor, ComputeCause, CpErrorKind, RunOutcome, Submission, type4, type7,
};

fn lo(a: u64) -> u32 {
    a as u32
}
fn hi(a: u64) -> u32 {
    (a >> 32) as u32
}

/// 64-bit address of element `r0.y` (a word index) of the buffer whose pointer
/// is in const dwords `c`, `c+1`, into the register pair `pair` (`rN`), as
/// tinygrad's kernels do it: add.u low, carry via cmps.u.lt + cov, add.u high.
fn address(c: usize, pair: usize) -> String {
    let cl = format!("c{}.{}", c / 4, ["x", "y", "z", "w"][c % 4]);
    let ch = format!("c{}.{}", (c + 1) / 4, ["x", "y", "z", "w"][(c + 1) % 4]);
    format!(
        "add.u r{pair}.x, {cl}, r0.z\n\
         cmps.u.lt hr8.x, r{pair}.x, {cl}\n\
         cov.u16u32 r{pair}.z, hr8.x\n\
         add.u r{pair}.y, {ch}, r{pair}.z\n"
    )
}

/// out[i] = a[i] + b[i] * 2 for i = workgroup * 64 + local id.
fn kernel() -> Vec<u64> {
    let src = format!(
        "shl.b r0.y, r48.x, 6\nadd.u r0.y, r0.y, r0.x\nshl.b r0.z, r0.y, 2\n{}{}{}\
         (sy)ldg.f32 r4.x, g[r2.x], 1\nldg.f32 r4.y, g[r3.x], 1\n\
         (sy)mad.f32 r4.z, r4.y, (2.0), r4.x\nstg.f32 g[r1.x], r4.z, 1\nend\n",
        address(0, 1),
        address(2, 2),
        address(4, 3)
    );
    let src = src.replace("(2.0)", "r5.x");
    let src = format!("mov.f32f32 r5.x, (2.000000)\n{src}");
    assemble(&src).expect("kernel assembles")
}

struct Rig {
    mem: AddressSpace,
    ib: u64,
    shader: u64,
    consts: u64,
    signal: u64,
    bufs: [u64; 3],
}

const N: usize = 128;

impl Rig {
    fn new(prog: &[u64]) -> Rig {
        let mem = AddressSpace::new();
        let ib = mem.alloc(4096).expect("ib");
        let shader = mem.alloc(4096).expect("shader");
        let consts = mem.alloc(4096).expect("consts");
        let signal = mem.alloc(4096).expect("signal");
        let bufs = [0; 3].map(|_| mem.alloc(4 * N as u64).expect("buffer"));
        let words: Vec<u32> = prog
            .iter()
            .flat_map(|w| [*w as u32, (*w >> 32) as u32])
            .collect();
        mem.write_u32s(shader, &words).expect("shader write");
        let mut c = vec![0u32; 1024];
        for (k, b) in bufs.iter().enumerate() {
            c[2 * k] = lo(*b);
            c[2 * k + 1] = hi(*b);
        }
        mem.write_u32s(consts, &c).expect("consts write");
        Rig {
            mem,
            ib,
            shader,
            consts,
            signal,
            bufs,
        }
    }

    fn ib_words(&self, instrs: usize, groups: u32, merged: bool) -> Vec<u32> {
        let cntl0 = (1 << 1) | (9 << 7) | if merged { 1 << 31 } else { 0 };
        let mut w = vec![type7(op::SET_MARKER, 1), 8];
        w.extend([type4(0xab00, 1), 5]); // SP_MODE_CNTL: const demotion, GL isam
        w.extend([type4(0xb990, 7), (63 << 2) | 3, 64 * groups, 0, 1, 0, 1, 0]);
        w.extend([
            type4(0xa9b0, 6),
            cntl0,
            0x41,
            0,
            0,
            lo(self.shader),
            hi(self.shader),
        ]);
        w.extend([
            type7(op::LOAD_STATE6_FRAG, 3),
            0x4036_4000,
            lo(self.consts),
            hi(self.consts),
        ]);
        w.extend([type4(0xa9bc, 1), instrs.div_ceil(16) as u32]);
        // wgid -> r48.x, no wgsize/wgoffset, local id -> r0.x; no linear id.
        w.extend([type4(0xb997, 2), 0xc0 | (0xfc << 8) | (0xfc << 16), 0xfc]);
        w.extend([type7(op::EXEC_CS, 4), 0, groups, 1, 1]);
        w.extend([
            type7(op::EVENT_WRITE, 4),
            4,
            lo(self.signal),
            hi(self.signal),
            7,
        ]);
        w
    }

    fn submit(
        &self,
        words: &[u32],
        cu: &mut Ir3Unit,
    ) -> Result<RunOutcome, wavejit_runtime::kgsl::pm4::CpError> {
        self.mem.write_u32s(self.ib, words).expect("ib write");
        let mut sub = Submission::new(self.ib, words.len() as u32);
        let mut cp = CommandProcessor::default();
        cp.run(&mut sub, &self.mem, cu)
    }
}

#[test]
fn exec_cs_runs_the_lifted_kernel_and_signals() {
    let prog = kernel();
    let rig = Rig::new(&prog);
    let a: Vec<f32> = (0..N).map(|i| i as f32 * 0.5 - 7.0).collect();
    let b: Vec<f32> = (0..N).map(|i| 1.0 / (i as f32 + 1.0)).collect();
    rig.mem.write_f32s(rig.bufs[1], &a).expect("a");
    rig.mem.write_f32s(rig.bufs[2], &b).expect("b");
    let mut cu = Ir3Unit::new(false);
    let ib = rig.ib_words(prog.len(), (N / 64) as u32, true);
    let out = rig.submit(&ib, &mut cu).expect("submission runs");
    assert_eq!(out, RunOutcome::Done);
    let got = rig.mem.read_f32s(rig.bufs[0], N).expect("out");
    for i in 0..N {
        // mad = round(b*2) then round(+a): exact here since *2 is exact.
        assert_eq!(
            got[i].to_bits(),
            (b[i] * 2.0 + a[i]).to_bits(),
            "element {i}"
        );
    }
    assert_eq!(rig.mem.read_u32s(rig.signal, 1).expect("signal"), [7]);
    // Same shader bytes, same state: served from the lift cache.
    rig.submit(&ib, &mut cu).expect("second run");
    assert_eq!(cu.lifted_count(), 1);
}

#[test]
fn a_kernel_fault_stops_the_ib_and_names_pc_and_register_mode() {
    let prog = kernel();
    let rig = Rig::new(&prog);
    // Point `b` at unmapped memory.
    let mut c = rig.mem.read_u32s(rig.consts, 1024).expect("consts");
    c[4] = 0x10;
    c[5] = 0;
    rig.mem.write_u32s(rig.consts, &c).expect("consts write");
    let mut cu = Ir3Unit::new(false);
    let ib = rig.ib_words(prog.len(), 1, false);
    let err = rig.submit(&ib, &mut cu).expect_err("must fault");
    let CpErrorKind::Compute(e) = &err.kind else {
        panic!("{err}")
    };
    let text = e.to_string();
    // pc 17 is the second ldg (after the mov, 3 index insns, 3 x 4 address insns and the first ldg).
    assert!(text.contains("separate half registers"), "{text}");
    assert!(text.contains("pc 0x11"), "{text}");
    assert!(
        text.contains("read of 4 bytes at global address 0x10"),
        "{text}"
    );
    // The fault itself, typed, for an embedder to match on.
    let ComputeCause::Fault(fault) = &e.cause else {
        panic!("not a fault: {:?}", e.cause)
    };
    assert_eq!(fault.guest_pc, Some(0x11));
    assert_eq!((fault.lane.workgroup, fault.lane.local), ([0; 3], [0; 3]));
    assert!(matches!(
        fault.kind,
        wavejit_ir::FaultKind::Memory {
            addr: 0x10,
            size: 4,
            write: false,
            ..
        }
    ));
    assert_eq!(
        rig.mem.read_u32s(rig.signal, 1).expect("signal"),
        [0],
        "signal must not be written"
    );
}

#[test]
fn unsupported_instruction_surfaces_as_a_dispatch_error() {
    let prog = assemble("(nop1) bary.f r0.x, r0.z, r0.x\nend").expect("asm");
    let rig = Rig::new(&prog);
    let mut cu = Ir3Unit::new(true);
    let err = rig
        .submit(&rig.ib_words(prog.len(), 1, false), &mut cu)
        .expect_err("refused");
    let text = err.to_string();
    assert!(
        text.contains("unsupported in compute: bary.f at pc 0"),
        "{text}"
    );
    let CpErrorKind::Compute(e) = &err.kind else {
        panic!("{err}")
    };
    assert!(matches!(e.cause, ComputeCause::Lift(_)), "{:?}", e.cause);
    assert!(
        text.contains("forced by WAVEJIT_IR3_MERGEDREGS=1"),
        "{text}"
    );
}

#[test]
fn lifted_kernels_compile_on_the_jit() {
    use wavejit_frontend::ir3::lift::{LiftConfig, lift};
    for merged in [false, true] {
        let cfg = LiftConfig {
            merged_regs: merged,
            workgroup_id_regid: 0xc0,
            ..LiftConfig::default()
        };
        let k = lift(&kernel(), &cfg).expect("lift");
        let jit = wavejit_jit::Jit::default();
        if let Err(e) = jit.compile(&k, 64) {
            panic!("JIT refused the lifted kernel (merged={merged}): {e}");
        }
    }
}

/// out[i] = (brac.2 taken ? 1 : 2) + ssbo[i], where the SSBO is descriptor 5 of
/// bindless base 1 (a register index, as mesa emits for non-uniform access).
fn state_kernel() -> Vec<u64> {
    let src = format!(
        "shl.b r0.z, r0.x, 2\n{}mov.u32u32 r2.x, 1\nbrac.2 #2\nmov.u32u32 r2.x, 2\n\
         mov.u32u32 r3.x, 5\nldib.b.untyped.1d.u32.1.nonuniform.base1 r2.y, r0.x, r3.x\n\
         (sy)add.u r2.x, r2.x, r2.y\nstg.u32 g[r1.x], r2.x, 1\nend\n",
        address(0, 1)
    );
    assemble(&src).expect("state kernel assembles")
}

/// The dispatch's IB with `regs` (type4 writes) placed before CP_EXEC_CS.
fn with_registers(mut ib: Vec<u32>, regs: &[u32]) -> Vec<u32> {
    let at = ib
        .iter()
        .position(|&w| w == type7(op::EXEC_CS, 4))
        .expect("EXEC_CS in the IB");
    ib.splice(at..at, regs.iter().copied());
    ib
}

#[test]
fn boolean_cf_mask_and_bindless_bases_come_from_the_command_stream() {
    let prog = state_kernel();
    let rig = Rig::new(&prog);
    // The bindless set: slot 5 = a buffer descriptor (A6XX_TEX_CONST type 4)
    // of bufs[1]; slot 0 a decoy pointing at bufs[2].
    let set = rig.mem.alloc(4096).expect("set");
    let mut desc = vec![0u32; 6 * 16];
    desc[1] = N as u32;
    desc[2] = 4 << 29;
    desc[4] = lo(rig.bufs[2]);
    desc[5] = hi(rig.bufs[2]);
    desc[5 * 16 + 1] = N as u32;
    desc[5 * 16 + 2] = 4 << 29;
    desc[5 * 16 + 4] = lo(rig.bufs[1]);
    desc[5 * 16 + 5] = hi(rig.bufs[1]);
    rig.mem.write_u32s(set, &desc).expect("set write");
    let ssbo: Vec<u32> = (0..N as u32).map(|i| 10 * i).collect();
    rig.mem.write_u32s(rig.bufs[1], &ssbo).expect("ssbo");
    let mut cu = Ir3Unit::new(false);
    // DESC_SIZE = 3 (64-byte descriptors) in the low bits of the base.
    let base1 = set | 3;
    for (mask, mirror, taken) in [
        (0b100u32, false, true),
        (0b011, false, false),
        (0b100, true, true),
    ] {
        let base_reg = if mirror { 0xb9c0 } else { 0xa9e8 } + 2;
        let regs = [
            type4(0xa9b2, 1),
            mask,
            type4(base_reg, 2),
            lo(base1),
            hi(base1),
        ];
        let ib = with_registers(rig.ib_words(prog.len(), 1, true), &regs);
        rig.mem.write_u32s(rig.bufs[0], &[0; N]).expect("clear");
        let out = rig.submit(&ib, &mut cu).expect("submission runs");
        assert_eq!(out, RunOutcome::Done);
        let got = rig.mem.read_u32s(rig.bufs[0], 64).expect("out");
        let first = if taken { 1 } else { 2 };
        let want: Vec<u32> = (0..64).map(|i| first + 10 * i).collect();
        assert_eq!(got, want, "mask {mask:#b}, mirror {mirror}");
    }
    // The mask is part of the lift: two masks, two kernels (the mirror run
    // reuses the first).
    assert_eq!(cu.lifted_count(), 2);
}

#[test]
fn an_unmapped_bindless_set_faults_the_dispatch_by_pc() {
    let prog = state_kernel();
    let rig = Rig::new(&prog);
    let mut cu = Ir3Unit::new(false);
    let regs = [type4(0xa9e8 + 2, 2), 0x4000_0003, 0x77];
    let ib = with_registers(rig.ib_words(prog.len(), 1, true), &regs);
    let err = rig.submit(&ib, &mut cu).expect_err("unmapped descriptor");
    let text = err.to_string();
    // pc 9: the ldib (after the address computation); descriptor 5 of the
    // 64-byte set at 0x77_4000_0000.
    assert!(text.contains("faulted at pc 0x9 "), "{text}");
    assert!(text.contains("global address 0x7740000140"), "{text}");
}

#[test]
fn state_dependent_encodings_compile_on_the_jit() {
    use wavejit_frontend::ir3::lift::{LiftConfig, lift};
    let pre = "shl.b r0.y, r0.x, 2\nadd.u r1.x, c0.x, r0.y\nmov.u32u32 r1.y, c0.y\n";
    for body in [
        "mov.u32u32 r2.x, 1\nbrac.2 #2\nmov.u32u32 r2.x, 2\nstg.u32 g[r1.x], r2.x, 1",
        "mov.u32u32 r0.z, 2\nmov.u32u32 r0.w, 1\nmov.u32u32 r3.x, 2\n\
         isam.s2en.nonuniform.base1 (f32)(xyzw)r4.x, r0.z, r3.x\n(sy)stg.u32 g[r1.x], r4.x, 4",
        "mova1 a1.x, 16\nisam.base1 (f32)(xyzw)r4.x, r0.z, s#0, a1.x\n(sy)stg.u32 g[r1.x], r4.x, 4",
        "mov.u32u32 r3.x, 1\nmov.u32u32 r3.y, 0\nmov.u32u32 r2.y, 3\n\
         atomic.b.add.typed.2d.u32.1.imm.base0 r2.x, r3.x, 5\n(sy)stg.u32 g[r1.x], r2.x, 1",
        "mov.u32u32 r3.x, 1\nmov.u32u32 r2.y, 3\nmov.u32u32 r2.z, 4\n\
         atomic.b.cmpxchg.untyped.1d.u32.1.imm.base0 r2.x, r3.x, 5\n(sy)stg.u32 g[r1.x], r2.x, 1",
        "mova1 a1.x, 8\nldc.2.k.imm.base2 c[a1.x], 1, 4\nmov.u32u32 r2.x, c2.x\nstg.u32 g[r1.x], r2.x, 1",
        "ldc.offset1.2.imm.base2 r2.x, 1, 4\n(sy)stg.u32 g[r1.x], r2.x, 2",
        "stib.b.untyped.1d.u32.1.imm.base0 r2.x, r0.x+1, 3\nresinfo.b.untyped.2d.u32.1.imm.base3 r2.x, 3",
    ] {
        let words = assemble(&format!("{pre}{body}\nend\n")).expect("assembles");
        for mask in [0, 4] {
            let cfg = LiftConfig {
                boolean_cf_mask: mask,
                ..LiftConfig::default()
            };
            let k = lift(&words, &cfg).unwrap_or_else(|e| panic!("{body}: {e}"));
            let jit = wavejit_jit::Jit::default();
            if let Err(e) = jit.compile(&k, 64) {
                panic!("JIT refused the lifted kernel ({body}): {e}");
            }
        }
    }
}

#[test]
fn typed_image_atomics_run_on_the_jit_through_a_bindless_set() {
    // 64 fibers add 1 to texel (lane % 4, 1) of a 4x2 R32_UINT image and store
    // the old value; fiber 0 also tries x = 4 (outside: result 0, no effect).
    let src = format!(
        "shl.b r0.z, r0.x, 2\n{}and.b r3.x, r0.x, 3\nmov.u32u32 r3.y, 1\nmov.u32u32 r2.y, 1\n\
         atomic.b.add.typed.2d.u32.1.imm.base1 r2.x, r3.x, 6\n(sy)stg.u32 g[r1.x], r2.x, 1\n\
         mov.u32u32 r3.x, 4\nmov.u32u32 r2.x, 9\n\
         atomic.b.add.typed.2d.u32.1.imm.base1 r2.x, r3.x, 6\n(sy)add.u r2.x, r2.x, 1000\n\
         add.u r1.x, r1.x, 256\nstg.u32 g[r1.x], r2.x, 1\nend\n",
        address(0, 1)
    );
    let prog = assemble(&src).expect("assembles");
    let rig = Rig::new(&prog);
    let set = rig.mem.alloc(4096).expect("set");
    let image = rig.bufs[1];
    let mut desc = vec![0u32; 7 * 16];
    let d = 6 * 16;
    desc[d] = 0x4b << 22; // FMT6_32_UINT
    desc[d + 1] = 4 | (2 << 15);
    desc[d + 2] = (16 << 7) | (1 << 29); // pitch 16 bytes, 2D
    desc[d + 4] = lo(image);
    desc[d + 5] = hi(image);
    rig.mem.write_u32s(set, &desc).expect("set write");
    rig.mem.write_u32s(image, &[7; 8]).expect("image");
    let base1 = set | 3;
    let regs = [type4(0xa9e8 + 2, 2), lo(base1), hi(base1)];
    let ib = with_registers(rig.ib_words(prog.len(), 1, true), &regs);
    let mut cu = Ir3Unit::new(false);
    assert_eq!(rig.submit(&ib, &mut cu).expect("runs"), RunOutcome::Done);
    let img = rig.mem.read_u32s(image, 8).expect("image");
    assert_eq!(img, [7, 7, 7, 7, 23, 23, 23, 23]);
    let out = rig.mem.read_u32s(rig.bufs[0], 128).expect("out");
    for x in 0..4 {
        let mut olds: Vec<u32> = (0..64).filter(|l| l % 4 == x).map(|l| out[l]).collect();
        olds.sort_unstable();
        assert_eq!(olds, (7..23).collect::<Vec<u32>>(), "texel {x}");
    }
    assert_eq!(out[64..], [1000; 64]);
}

#[test]
fn a_huge_sp_cs_instr_size_is_a_dispatch_error_not_an_allocation() {
    let prog = kernel();
    let rig = Rig::new(&prog);
    let mut cu = Ir3Unit::new(false);
    // SP_CS_INSTR_SIZE = 0xffffffff: 549,755,813,760 bytes of "shader".
    let ib = rig.ib_words(0xffff_ffff * 16, 1, false);
    let text = rig.submit(&ib, &mut cu).expect_err("refused").to_string();
    assert!(
        text.contains(&format!(
            "ir3 kernel at {:#x}, separate half registers (SP_CS_CNTL_0.MERGEDREGS clear): \
             shader of 549755813760 bytes (SP_CS_INSTR_SIZE 0xffffffff x 128) exceeds the \
             limit of 4194304 bytes",
            rig.shader
        )),
        "{text}"
    );
    // Within the limit but past the shader's 4 KiB allocation: refused by the
    // range check before anything is copied.
    let ib = rig.ib_words(0x8000 * 16, 1, false);
    let text = rig.submit(&ib, &mut cu).expect_err("refused").to_string();
    assert!(text.contains("shader unreadable: access refused"), "{text}");
    assert_eq!(rig.mem.read_u32s(rig.signal, 1).expect("signal"), [0]);
}
