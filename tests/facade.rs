//! The embedding facade (`wavejit::Device`): one kernel of each ISA with exact
//! results, and the errors an embedder meets (unknown instruction, out-of-bounds
//! access, watchdog, misuse of handles and arguments).

use wavejit::runtime::aql::isa::samples;
use wavejit::{
    AgxOptions, Device, EngineKind, Error, Ir3Options, Isa, Launch, Limits, Rv32Options,
};

/// `buf[i] *= 2` for the global lane index `i`; the buffer's address is the
/// first argument.
const DOUBLE: &str = "kernel @double shared 0 private 0 {
block0:
  v0 = local_index
  v1 = workgroup_id.x
  v2 = workgroup_size.x
  v3 = imul.i32 v1, v2
  v4 = iadd.i32 v3, v0
  v5 = const.i32 0
  v6 = load.uniform.i64 v5
  v7 = zext.i32.i64 v4
  v8 = const.i64 2
  v9 = shl.i64 v7, v8
  v10 = iadd.i64 v6, v9
  v11 = load.global.i32 v10
  v12 = iadd.i32 v11, v11
  store.global.i32 v10, v12
  exit
}";

fn rv32_kernel(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/rv32/kernels")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn ir_text_kernel_doubles_a_buffer() {
    for engine in [EngineKind::Jit, EngineKind::Interpreter] {
        let dev = Device::with_engine(engine, Limits::default());
        let k = dev.load_ir_text(DOUBLE).unwrap();
        assert_eq!(k.isa(), Isa::Ir);
        let buf = dev.upload(&[1i32, -2, 3, 40, 5, 6, 7, 8]).unwrap();
        dev.launch(&k, &Launch::new(2, 4).buffer(&buf)).unwrap();
        assert_eq!(
            dev.read::<i32>(&buf).unwrap(),
            [2, -4, 6, 80, 10, 12, 14, 16]
        );
    }
}

#[test]
fn ir3_axpy_through_the_const_file() {
    let dev = Device::new();
    let k = dev
        .load_ir3(&samples::ir3_axpy().unwrap(), &Ir3Options::default())
        .unwrap();
    let n = 128u32;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
    let b: Vec<f32> = (0..n).map(|i| 1.5 - i as f32).collect();
    let (ab, bb) = (dev.upload(&a).unwrap(), dev.upload(&b).unwrap());
    let out = dev.alloc(4 * u64::from(n)).unwrap();
    // Kernargs out, a, b = c0.xy, c0.zw, c1.xy; i = wgid << 6 | local.
    let launch = Launch::new(n / 64, 64).buffer(&out).buffer(&ab).buffer(&bb);
    dev.launch(&k, &launch).unwrap();
    let got = dev.read::<f32>(&out).unwrap();
    assert_eq!(got[0], 3.0);
    assert_eq!(got[1], 0.25 + 2.0 * 0.5);
    assert_eq!(got[127], 31.75 + 2.0 * (1.5 - 127.0));
    let want: Vec<f32> = a.iter().zip(&b).map(|(a, b)| b.mul_add(2.0, *a)).collect();
    assert_eq!(got, want);
}

/// tinygrad 0.14's `Tensor.sin` for a630 as mesa compiled it (`DEBUG=7`):
/// `ir3_nir_trig`'s range reduction `mad.f32 (x, 1/2π, 0.5)`, `floor.f`,
/// `add.f`, `mad.f32 (·, 2π, −π)`, then `sin`. At |x| = 1e6 the f32 product has
/// an ulp of 2^-6, so the angle is a multiple of π/32 and sin(1e6) is
/// −sin(π/8), not −0.3499935: what mesa's code computes on the hardware too
/// (README, test_sin). Expected values: the five instructions in f32 (numpy).
#[test]
fn tinygrads_sin_kernel_reduces_the_angle_as_mesa_compiled_it() {
    let listing: [u64; 15] = [
        0x202cc000_00000002, // mov.u32u32 r0.x, c0.z
        0x202cc001_00000003, // mov.u32u32 r0.y, c0.w
        0x202cc003_00000000, // mov.u32u32 r0.w, c0.x
        0x202cc004_00000001, // mov.u32u32 r1.x, c0.y
        0x00000300_00000000, // (rpt3)nop
        0xc0060002_01800001, // ldg.u32 r0.z, g[r0.x], 1
        0x73810802_10129011, // (sy)(nop3) mad.f32 r0.z, c4.y, r0.z, c4.z
        0x41380805_00000002, // (nop3) floor.f r1.y, r0.z
        0x40180802_40050002, // (nop3) add.f r0.z, r0.z, (neg)r1.y
        0x63810802_10139010, // (nop3) mad.f32 r0.z, c4.x, r0.z, c4.w
        0x00000200_00000000, // (rpt2)nop
        0x80900002_00000002, // sin r0.z, r0.z
        0x00001000_00000000, // (ss)nop
        0xc0c60700_01800004, // stg.u32 g[r0.w], r0.z, 1
        0x03000000_00000000, // end
    ];
    let code: Vec<u8> = listing.iter().flat_map(|w| w.to_le_bytes()).collect();
    let dev = Device::new();
    let k = dev.load_ir3(&code, &Ir3Options::default()).unwrap();
    // c4 = 2π, 1/2π, 0.5, −π as f32.
    let c4: Vec<u8> = [0x40c9_0fdbu32, 0x3e22_f983, 0x3f00_0000, 0xc049_0fdb]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    let cases = [
        (1e6f32, -0.382_683_37f32),
        (-1e6, 0.382_683_37),
        (1e5, 0.036_807_24),
        (31.0, -0.404_038_46),
    ];
    for (x, want) in cases {
        let input = dev.upload(&[x]).unwrap();
        let out = dev.alloc(4).unwrap();
        // Kernel arguments out, in = c0.xy, c0.zw; c1..c3 unused.
        let launch = Launch::new(1, 1)
            .buffer(&out)
            .buffer(&input)
            .bytes(&[0; 48])
            .bytes(&c4);
        dev.launch(&k, &launch).unwrap();
        let got = dev.read::<f32>(&out).unwrap()[0];
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "sin({x}) = {got}, want {want}"
        );
    }
}

#[test]
fn agx_add_through_the_uniform_file() {
    let dev = Device::new();
    let k = dev
        .load_agx(&samples::agx_add().unwrap(), &AgxOptions::default())
        .unwrap();
    let a: Vec<u32> = (0..96).map(|i| i * 100).collect();
    let b: Vec<u32> = (0..96).map(|i| i ^ 0xffff).collect();
    let (ab, bb) = (dev.upload(&a).unwrap(), dev.upload(&b).unwrap());
    let out = dev.upload(&[0xdead_beefu32; 96]).unwrap();
    // Buffers a, b, out = u0_u1, u2_u3, u4_u5.
    let launch = Launch::new(3, 32).buffer(&ab).buffer(&bb).buffer(&out);
    dev.launch(&k, &launch).unwrap();
    let got = dev.read::<u32>(&out).unwrap();
    assert_eq!(got[0], 0xffff + 7);
    assert_eq!(got[95], 9500 + (95 ^ 0xffff) + 7);
    assert!(got.iter().enumerate().all(|(i, &v)| {
        let i = i as u32;
        v == (i * 100) + (i ^ 0xffff) + 7
    }));
}

#[test]
fn rv32_raw_image_reads_its_argument_block() {
    let dev = Device::new();
    let opts = Rv32Options {
        args_at: Some(samples::RV32_ARGS),
        ..Rv32Options::default()
    };
    let k = dev
        .load_rv32(&samples::rv32_scale_add().unwrap(), &opts)
        .unwrap();
    let input: Vec<u32> = (0..64).map(|i| i * 11 % 97).collect();
    let inb = dev.upload(&input).unwrap();
    let out = dev.alloc(4 * 64).unwrap();
    // The argument block: in, out as 32-bit core addresses.
    dev.launch(&k, &Launch::new(2, 32).buffer(&inb).buffer(&out))
        .unwrap();
    let got = dev.read::<u32>(&out).unwrap();
    assert_eq!(got[0], 7);
    assert_eq!(got[1], 11 * 3 + 7);
    assert_eq!(got, input.iter().map(|v| v * 3 + 7).collect::<Vec<u32>>());
}

/// tests/rv32/kernels/saxpy.c reads its buffers' addresses from the argument
/// block at 0xF000 (x, y, out), so they go anywhere: 65,536 lanes over
/// 256 KiB buffers (past what 64 KiB apart allowed); a = 2.5 in .rodata.
#[test]
fn rv32_elf_reads_its_buffers_from_the_argument_block() {
    let dev = Device::new();
    let opts = Rv32Options {
        args_at: Some(0xF000),
        ..Rv32Options::default()
    };
    let k = dev.load_rv32(&rv32_kernel("saxpy.elf"), &opts).unwrap();
    let n = 65_536u32;
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let ys: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let (x, y) = (dev.upload(&xs).unwrap(), dev.upload(&ys).unwrap());
    let out = dev.alloc(4 * u64::from(n)).unwrap();
    let launch = Launch::new(n / 256, 256).buffer(&x).buffer(&y).buffer(&out);
    dev.launch(&k, &launch).unwrap();
    let got = dev.read::<f32>(&out).unwrap();
    // 2.5 i + i % 7 is exact in f32 here, fused or not.
    let want: Vec<f32> = (0..n).map(|i| 2.5 * i as f32 + (i % 7) as f32).collect();
    assert_eq!(got, want);
    assert_eq!(got[40_000], 100_002.0);
    // Unloading frees the image: loading it again places it again.
    dev.unload(k).unwrap();
    dev.load_rv32(&rv32_kernel("saxpy.elf"), &opts).unwrap();
}

#[test]
fn unknown_ir3_word_names_word_and_pc() {
    let dev = Device::new();
    let mut code = samples::ir3_axpy().unwrap();
    // Instruction 2 becomes all ones.
    code[16..24].copy_from_slice(&[0xff; 8]);
    let e = dev.load(Isa::Ir3, &code).unwrap_err();
    assert!(matches!(e, Error::Ir3(_)), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("0xffffffffffffffff") && msg.contains("pc 2"),
        "{msg}"
    );
    assert!(std::error::Error::source(&e).is_some());
}

#[test]
fn unknown_agx_encoding_names_bytes_and_pc() {
    let dev = Device::new();
    let mut code = samples::agx_add().unwrap();
    let stop = code.len() - 2;
    code.truncate(stop);
    code.extend_from_slice(&[0xff; 8]);
    let e = dev.load(Isa::Agx, &code).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, Error::Agx(_)), "{e:?}");
    assert!(msg.contains(&format!("at {stop:#x}")), "{msg}");
    assert!(msg.contains("unknown encoding"), "{msg}");
    assert_eq!(msg.matches("agx").count(), 1, "{msg}");
}

/// Issue 14 item 11: an AGX trap names the instruction and what the trap
/// means (it was `trap 0xa60003`); a threadgroup access without threadgroup
/// memory is refused naming its pc and instruction.
#[test]
fn agx_traps_and_threadgroup_refusals_are_in_guest_terms() {
    let dev = Device::new();
    let code = wavejit::frontend::agx::assemble("ldimm r1, 0x40\nret r1").unwrap();
    let k = dev.load(Isa::Agx, &code).unwrap();
    let e = dev.launch(&k, &Launch::new(1, 1)).unwrap_err();
    let f = e.as_fault().expect("a kernel fault");
    assert_eq!(f.agx_trap.as_ref().map(|t| t.pc), Some(6));
    assert!(
        e.to_string().starts_with(
            "agx: kernel `agx@0x0` faulted: `ret r1` at pc 0x6: `ret`/`call` to an address that \
             is not the start of an instruction the program can branch to (trap 0xa60003), lane"
        ),
        "{e}"
    );
    let code = wavejit::frontend::agx::assemble("lstore r1, r0l, 0, i32, x\nstop").unwrap();
    let e = dev.load(Isa::Agx, &code).unwrap_err();
    assert!(
        e.to_string()
            .contains("`lstore r1, r0l, 0, i32, x` at 0x0 accesses threadgroup memory"),
        "{e}"
    );
}

#[test]
fn illegal_rv32_word_faults_naming_it_and_its_pc() {
    let dev = Device::new();
    // addi x5, x0, 1 ; an all-zero word (illegal) ; ebreak
    let mut image = Vec::new();
    for w in [0x0010_0293u32, 0, 0x0010_0073] {
        image.extend_from_slice(&w.to_le_bytes());
    }
    let k = dev.load(Isa::Rv32, &image).unwrap();
    let e = dev.launch(&k, &Launch::new(1, 1)).unwrap_err();
    let f = e.as_fault().expect("a kernel fault");
    let site = f.trap.expect("an RV32 trap site");
    assert_eq!(site.pc, Some(4));
    assert_eq!(site.word, Some(0));
    let msg = e.to_string();
    assert!(
        msg.contains("illegal instruction") && msg.contains("at pc 0x00000004"),
        "{msg}"
    );
}

#[test]
fn out_of_bounds_store_is_a_memory_fault() {
    let dev = Device::new();
    let k = dev.load_ir_text(DOUBLE).unwrap();
    let buf = dev.upload(&[1i32, 2, 3, 4]).unwrap();
    // Eight lanes over a four-element buffer: lane 4 reads past its end.
    let e = dev.launch(&k, &Launch::new(1, 8).buffer(&buf)).unwrap_err();
    let f = e.as_fault().expect("a kernel fault");
    assert!(f.is_memory(), "{e}");
    let addr = buf.addr() + 16;
    assert!(e.to_string().contains(&format!("{addr:#x}")), "{e}");
}

#[test]
fn runaway_rv32_lane_hits_the_step_limit() {
    let limits = Limits {
        steps_per_lane: 1000,
        ..Limits::default()
    };
    let dev = Device::with_engine(EngineKind::Jit, limits);
    // j . (jal x0, 0)
    let k = dev.load(Isa::Rv32, &0x0000_006fu32.to_le_bytes()).unwrap();
    let e = dev.launch(&k, &Launch::new(1, 1)).unwrap_err();
    let f = e.as_fault().expect("a kernel fault");
    assert!(f.is_watchdog(), "{e}");
    assert!(e.to_string().contains("1000"), "{e}");
}

#[test]
fn misuse_is_an_error_not_a_panic() {
    let dev = Device::new();
    let other = Device::new();
    let k = dev.load_ir_text(DOUBLE).unwrap();
    let foreign = other.upload(&[1u32]).unwrap();
    assert!(matches!(
        dev.launch(&k, &Launch::new(1, 1).buffer(&foreign)),
        Err(Error::ForeignHandle { what: "buffer" })
    ));
    assert!(matches!(
        other.launch(&k, &Launch::new(1, 1)),
        Err(Error::ForeignHandle { what: "program" })
    ));
    assert!(matches!(
        dev.launch(&k, &Launch::new([1, 0], 1)),
        Err(Error::ZeroDimension { what: "grid", .. })
    ));
    let buf = dev.upload(&[1u32, 2]).unwrap();
    assert!(matches!(
        dev.read_bytes(&buf, 4, 8),
        Err(Error::OutOfBounds { .. })
    ));
    dev.free(buf).unwrap();
    assert!(matches!(
        dev.read::<u32>(&buf),
        Err(Error::ForeignHandle { .. })
    ));
    assert!(matches!(
        dev.load(Isa::Ir3, &[0; 12]),
        Err(Error::CodeLength {
            len: 12,
            unit: 8,
            ..
        })
    ));
    let rv = dev.load(Isa::Rv32, &0x0010_0073u32.to_le_bytes()).unwrap();
    assert!(matches!(
        dev.launch(&rv, &Launch::new(1, 1).value(7u32)),
        Err(Error::NoArgBlock { len: 4 })
    ));
    let agx = dev.load(Isa::Agx, &samples::agx_add().unwrap()).unwrap();
    assert!(matches!(
        dev.launch(&agx, &Launch::new(1, 1).bytes(&[0; 1028])),
        Err(Error::ArgsTooLarge { limit: 1024, .. })
    ));
    assert!(matches!(dev.alloc(1 << 40), Err(Error::OutOfMemory { .. })));
    // An address an RV32 core cannot hold.
    let high = dev.alloc_at(1 << 33, 16).unwrap();
    let e = dev
        .launch(&rv, &Launch::new(1, 1).buffer(&high))
        .unwrap_err();
    assert!(e.to_string().contains("0x200000000"), "{e}");
    assert!(matches!(
        dev.launch(&agx, &Launch::new(1 << 30, 8)),
        Err(Error::InvalidOption { isa: Isa::Agx, .. })
    ));
}

#[test]
fn device_and_error_cross_threads() {
    fn send_sync<T: Send + Sync + 'static>() {}
    send_sync::<Device>();
    send_sync::<Error>();
    send_sync::<wavejit::Program>();
    // One device, launches from two threads.
    let dev = Device::new();
    let k = dev.load_ir_text(DOUBLE).unwrap();
    let bufs: Vec<_> = (0..2).map(|i| dev.upload(&[i, 10 + i]).unwrap()).collect();
    std::thread::scope(|s| {
        for b in &bufs {
            let (dev, k) = (&dev, &k);
            s.spawn(move || dev.launch(k, &Launch::new(1, 2).buffer(b)).unwrap());
        }
    });
    assert_eq!(dev.read::<i32>(&bufs[0]).unwrap(), [0, 20]);
    assert_eq!(dev.read::<i32>(&bufs[1]).unwrap(), [2, 22]);
}

#[test]
fn buffers_fill_gaps_and_stay_below_4_gib() {
    let dev = Device::new();
    let a = dev.alloc(100).unwrap();
    let b = dev.alloc(100).unwrap();
    assert_eq!(a.addr(), wavejit::BUFFER_WINDOW_START);
    assert_eq!(b.addr(), a.addr() + 256);
    dev.free(a).unwrap();
    let c = dev.alloc(256).unwrap();
    assert_eq!(c.addr(), a.addr());
    let big = dev.alloc(0x4000_0000).unwrap();
    assert!(big.addr() + big.len() <= 1 << 32);
}
