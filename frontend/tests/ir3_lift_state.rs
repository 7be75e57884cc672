//! ir3 lifter: encodings whose meaning depends on dispatch state — brac.N
//! (SP_CS_BOOLEAN_CF_MASK), bindless descriptors (SP_CS_BINDLESS_BASE[b]) for
//! isam / isaml / getsize / ldib / stib / resinfo / atomic.b / ldc / ldc.k, and
//! typed image atomics — lifted and run on the golden interpreter with exact
//! results.

mod ir3_buffer;

use ir3_buffer::{BUF, Buffer};
use wavejit_frontend::ir3::assemble;
use wavejit_frontend::ir3::lift::{CONST_BYTES, LiftConfig, LiftError, info, lift};
use wavejit_ir::interp::Interpreter;
use wavejit_ir::{Dispatch, Engine, Fault};

/// Byte offsets inside the buffer.
const OUT: usize = 0;
const SET: usize = 0x1000;
const IMAGE: usize = 0x2000;
const UBO: usize = 0x3000;
const BYTES: usize = 0x4000;
/// SP_CS_BINDLESS_BASE.DESC_SIZE values (a6xx.xml).
const DESC_16B: u64 = 1;
const DESC_64B: u64 = 3;
const FMT6_32_32_32_32_FLOAT: u32 = 0x82;
const FMT6_32_UINT: u32 = 0x4b;
const FMT6_32_SINT: u32 = 0x4c;

/// Descriptor fields: format, size, pitch (bytes), type (0 1D, 1 2D, 4
/// buffer) and base address.
struct TexDesc {
    fmt: u32,
    w: u32,
    h: u32,
    pitch: u32,
    ty: u32,
    base: u64,
}

/// Memory image and dispatch state of one test run.
struct Rig {
    mem: Vec<u32>,
    consts: Vec<u32>,
    bindless: [u64; 5],
    cfg: LiftConfig,
    lanes: u32,
}

impl Rig {
    fn new() -> Rig {
        let mut cfg = LiftConfig::default();
        cfg.uniforms.info_off = CONST_BYTES;
        Rig {
            mem: vec![0; BYTES / 4],
            consts: Vec::new(),
            bindless: [0; 5],
            cfg,
            lanes: 1,
        }
    }

    /// A 16-dword A6XX_TEX_CONST at byte offset `at`.
    fn tex_desc(&mut self, at: usize, t: TexDesc) {
        let d = at / 4;
        self.mem[d] = t.fmt << 22;
        self.mem[d + 1] = t.w | (t.h << 15);
        self.mem[d + 2] = (t.pitch << 7) | (t.ty << 29);
        self.mem[d + 4] = t.base as u32;
        self.mem[d + 5] = (t.base >> 32) as u32;
    }

    /// The program: r1 = &out[lane], then `body`, then `end`.
    fn run(&self, body: &str) -> Result<Vec<u32>, Fault> {
        let src = format!(
            "shl.b r0.y, r0.x, 2\nadd.u r1.x, c0.x, r0.y\nmov.u32u32 r1.y, c0.y\n{body}\nend\n"
        );
        let words = assemble(&src).unwrap_or_else(|e| panic!("assembling {src}: {e}"));
        let kernel = lift(&words, &self.cfg).unwrap_or_else(|e| panic!("lifting {src}: {e}"));
        let mut c = vec![0u32; CONST_BYTES as usize / 4];
        c[0] = BUF as u32;
        c[1] = (BUF >> 32) as u32;
        c[4..4 + self.consts.len()].copy_from_slice(&self.consts);
        let mut u: Vec<u8> = c.iter().flat_map(|w| w.to_le_bytes()).collect();
        u.extend_from_slice(&0u64.to_le_bytes()); // SP_CS_TEXMEMOBJ_BASE
        u.extend_from_slice(&0u64.to_le_bytes()); // SP_CS_UAV_BASE
        for b in self.bindless {
            u.extend_from_slice(&b.to_le_bytes());
        }
        assert_eq!(u.len() as u32, CONST_BYTES + info::BYTES);
        let mut d = Dispatch::new([1, 1, 1], [self.lanes, 1, 1]);
        d.wave_size = 64;
        d.uniforms = u;
        let mem = Buffer::new(&self.mem);
        Interpreter.run(&kernel, &d, &mem)?;
        Ok(mem.words())
    }

    fn out(&self, body: &str, n: usize) -> Vec<u32> {
        let m = self.run(body).unwrap_or_else(|f| panic!("{body}: {f}"));
        m[OUT / 4..OUT / 4 + n].to_vec()
    }
}

#[test]
fn brac_branches_on_its_bit_of_sp_cs_boolean_cf_mask() {
    // brac.0 skips "+1", brac.3 skips "+10".
    let body = "mov.u32u32 r2.x, 0\nbrac.0 #2\nadd.u r2.x, r2.x, 1\nbrac.3 #2\n\
        add.u r2.x, r2.x, 10\nstg.u32 g[r1.x], r2.x, 1";
    let mut rig = Rig::new();
    for (mask, want) in [
        (0u32, 11u32),
        (1, 10),
        (8, 1),
        (9, 0),
        (0xffff_fff6, 11),
        (0xffff_ffff, 0),
    ] {
        rig.cfg.boolean_cf_mask = mask;
        assert_eq!(rig.out(body, 1), [want], "mask {mask:#x}");
    }
}

#[test]
fn brac_index_31_reads_the_top_bit() {
    let body = "mov.u32u32 r2.x, 5\nbrac.31 #2\nmov.u32u32 r2.x, 6\nstg.u32 g[r1.x], r2.x, 1";
    let mut rig = Rig::new();
    rig.cfg.boolean_cf_mask = 0x8000_0000;
    assert_eq!(rig.out(body, 1), [5]);
    rig.cfg.boolean_cf_mask = 0x7fff_ffff;
    assert_eq!(rig.out(body, 1), [6]);
}

#[test]
fn bkt_stays_refused_by_name() {
    // bkt: OPC 0 with OPC_HI (bit 49) set.
    let words = [1u64 << 49, 0x0300_0000_0000_0000];
    let e = lift(&words, &LiftConfig::default()).expect_err("bkt");
    assert!(matches!(e, LiftError::Undocumented { pc: 0, .. }), "{e}");
}

/// A 4x2 f32x4 2D image at IMAGE whose texel (x, y) holds
/// (100y + 10x + 1, .. + 2, .. + 3, .. + 4) as floats.
fn f32_image(rig: &mut Rig) -> u64 {
    let pitch = 16 * 4;
    for y in 0..2 {
        for x in 0..4 {
            for c in 0..4 {
                let v = (100 * y + 10 * x + c + 1) as f32;
                rig.mem[(IMAGE + y * pitch + x * 16) / 4 + c] = v.to_bits();
            }
        }
    }
    BUF + IMAGE as u64
}

fn texel(x: u32, y: u32) -> [u32; 4] {
    [1, 2, 3, 4].map(|c| ((100 * y + 10 * x + c) as f32).to_bits())
}

/// Bindless set 1 (64-byte pitch): slot 2 = the f32 image, slot 0 a decoy
/// (1-texel image of zeros elsewhere); base 0 points at a decoy set.
fn texture_set(rig: &mut Rig) {
    let img = f32_image(rig);
    let set = BUF + SET as u64;
    rig.tex_desc(
        SET + 2 * 64,
        TexDesc {
            fmt: FMT6_32_32_32_32_FLOAT,
            w: 4,
            h: 2,
            pitch: 64,
            ty: 1,
            base: img,
        },
    );
    rig.tex_desc(
        SET,
        TexDesc {
            fmt: FMT6_32_32_32_32_FLOAT,
            w: 1,
            h: 1,
            pitch: 16,
            ty: 1,
            base: BUF + UBO as u64,
        },
    );
    rig.bindless[1] = set | DESC_64B;
    rig.bindless[0] = (set + 64) | DESC_64B;
}

#[test]
fn bindless_isam_reads_the_descriptor_in_every_desc_mode() {
    let mut rig = Rig::new();
    texture_set(&mut rig);
    // Coordinates (2, 1); r3.x = texture index 2, r3.y = sampler 0; a1.x =
    // 2 << 3 for BINDLESS_A1_IMM (sampler base 0), 0 for the A1 sampler-base modes.
    let setup = "mov.u32u32 r0.z, 2\nmov.u32u32 r0.w, 1\nmov.u32u32 r3.x, 2\nmov.u32u32 r3.y, 0\n";
    let store = "\n(sy)stg.u32 g[r1.x], r4.x, 4";
    for (mode, ins) in [
        (2, "isam.s2en.nonuniform.base1 (f32)(xyzw)r4.x, r0.z, r3.x"),
        (5, "isam.s2en.uniform.base1 (f32)(xyzw)r4.x, r0.z, r3.x"),
        (
            1,
            "mova1 a1.x, 0\nisam.s2en.uniform.base1 (f32)(xyzw)r4.x, r0.z, r3.x, a1.x",
        ),
        (
            3,
            "mova1 a1.x, 0\nisam.s2en.nonuniform.base1 (f32)(xyzw)r4.x, r0.z, r3.x, a1.x",
        ),
        (6, "isam.base1 (f32)(xyzw)r4.x, r0.z, s#0, t#2"),
        (
            7,
            "mova1 a1.x, 16\nisam.base1 (f32)(xyzw)r4.x, r0.z, s#0, a1.x",
        ),
        (6, "isaml.base1 (f32)(xyzw)r4.x, r0.z, r0.w, s#0, t#2"),
    ] {
        let body = format!("{setup}{ins}{store}");
        assert_eq!(rig.out(&body, 4), texel(2, 1), "DESC_MODE {mode}: {ins}");
    }
    // Outside the image: zeros.
    let body = format!(
        "mov.u32u32 r0.z, 4\nmov.u32u32 r0.w, 1\nisam.base1 (f32)(xyzw)r4.x, r0.z, s#0, t#2{store}"
    );
    assert_eq!(rig.out(&body, 4), [0; 4]);
}

#[test]
fn bindless_descriptor_pitch_follows_desc_size() {
    // With 16-byte descriptors index 8 is byte 128: the image slot of the
    // 64-byte layout.
    let mut rig = Rig::new();
    texture_set(&mut rig);
    rig.bindless[1] = (BUF + SET as u64) | DESC_16B;
    let body = "mov.u32u32 r0.z, 3\nmov.u32u32 r0.w, 0\nmov.u32u32 r3.x, 8\n\
        isam.s2en.nonuniform.base1 (f32)(xyzw)r4.x, r0.z, r3.x\n(sy)stg.u32 g[r1.x], r4.x, 4";
    assert_eq!(rig.out(body, 4), texel(3, 0));
}

#[test]
fn bindless_getsize_reports_the_descriptor_size() {
    let mut rig = Rig::new();
    texture_set(&mut rig);
    rig.bindless[4] = rig.bindless[1];
    let body = "mov.u32u32 r0.z, 0\nmov.u32u32 r3.x, 2\n\
        getsize.base1 (u32)(xy)r4.x, r0.z, t#2\ngetsize.s2en.nonuniform.base4 (u32)(xy)r4.z, r0.z, r3.x\n\
        (sy)stg.u32 g[r1.x], r4.x, 4";
    assert_eq!(rig.out(body, 4), [4, 2, 4, 2]);
}

/// Bindless set 0: slot 3 = an SSBO (buffer descriptor, 64 u32 elements) at
/// IMAGE holding 1000 + i.
fn ssbo_set(rig: &mut Rig) {
    for i in 0..64 {
        rig.mem[IMAGE / 4 + i] = 1000 + i as u32;
    }
    rig.tex_desc(
        SET + 3 * 64,
        TexDesc {
            fmt: 0,
            w: 64,
            h: 0,
            pitch: 0,
            ty: 4,
            base: BUF + IMAGE as u64,
        },
    );
    rig.bindless[0] = (BUF + SET as u64) | DESC_64B;
}

#[test]
fn bindless_ssbo_load_store_offset_and_resinfo() {
    let mut rig = Rig::new();
    ssbo_set(&mut rig);
    rig.lanes = 4;
    // Each fiber loads element lane (register index), stores it + 7 to element
    // lane + 1 + 8 (immediate offset), and reports resinfo.
    let body = "mov.u32u32 r3.x, 3\nldib.b.untyped.1d.u32.1.nonuniform.base0 r2.x, r0.x, r3.x\n\
        (sy)add.u r2.x, r2.x, 7\nadd.u r0.w, r0.x, 8\n\
        stib.b.untyped.1d.u32.1.imm.base0 r2.x, r0.w+1, 3\n\
        resinfo.b.untyped.1d.u32.1.imm.base0 r2.y, 3\n\
        stg.u32 g[r1.x], r2.x, 1\nadd.u r1.x, r1.x, 16\nstg.u32 g[r1.x], r2.y, 1";
    let m = rig.run(body).expect("run");
    assert_eq!(m[..4], [1007, 1008, 1009, 1010]);
    // resinfo 1d: width | height << 15.
    assert_eq!(m[4..8], [64; 4]);
    let e = IMAGE / 4;
    assert_eq!(m[e + 8], 1008);
    assert_eq!(m[e + 9..e + 13], [1007, 1008, 1009, 1010]);
    assert_eq!(m[e + 13], 1013);
}

#[test]
fn bindless_ldc_and_ldc_k_read_ubo_descriptors() {
    let mut rig = Rig::new();
    // Set 2: slot 4 = A6XX_UBO (base lo, base hi | 4 vec4 << 17) -> UBO.
    let ubo = BUF + UBO as u64;
    rig.mem[(SET + 4 * 64) / 4] = ubo as u32;
    rig.mem[(SET + 4 * 64) / 4 + 1] = (ubo >> 32) as u32 | (4 << 17);
    rig.bindless[2] = (BUF + SET as u64) | DESC_64B;
    for i in 0..16 {
        rig.mem[UBO / 4 + i] = 500 + i as u32;
    }
    // ldc: vec4 1, components y, z.
    let body = "ldc.offset1.2.imm.base2 r2.x, 1, 4\n(sy)stg.u32 g[r1.x], r2.x, 2";
    assert_eq!(rig.out(body, 2), [505, 506]);
    // ldc.k: vec4s 1..2 of the UBO -> c2.x..c3.w (a1.x = dword 8).
    let body = "mova1 a1.x, 8\nldc.2.k.imm.base2 c[a1.x], 1, 4\n\
        mov.u32u32 r2.x, c2.x\nmov.u32u32 r2.y, c2.w\nmov.u32u32 r2.z, c3.x\nmov.u32u32 r2.w, c3.w\n\
        stg.u32 g[r1.x], r2.x, 4";
    assert_eq!(rig.out(body, 4), [504, 507, 508, 511]);
}

#[test]
fn non_bindless_ldc_k_reads_the_loaded_ubo_table() {
    let mut rig = Rig::new();
    let ubo = BUF + UBO as u64;
    for i in 0..8 {
        rig.mem[UBO / 4 + i] = 70 + i as u32;
    }
    // UBO descriptor 0 lives in the uniforms right after the info block.
    rig.cfg.uniforms.ubo_off = CONST_BYTES + info::BYTES;
    rig.cfg.uniforms.ubo_count = 1;
    rig.consts = vec![];
    let body = "mova1 a1.x, 12\nldc.1.k.imm c[a1.x], 1, 0\n\
        mov.u32u32 r2.x, c3.x\nmov.u32u32 r2.y, c3.w\nstg.u32 g[r1.x], r2.x, 2";
    // The descriptor (u64 address) is appended by hand.
    let src = format!(
        "shl.b r0.y, r0.x, 2\nadd.u r1.x, c0.x, r0.y\nmov.u32u32 r1.y, c0.y\n{body}\nend\n"
    );
    let words = assemble(&src).expect("asm");
    let kernel = lift(&words, &rig.cfg).expect("lift");
    let mut c = vec![0u32; CONST_BYTES as usize / 4 + info::BYTES as usize / 4];
    c[0] = BUF as u32;
    c[1] = (BUF >> 32) as u32;
    let mut u: Vec<u8> = c.iter().flat_map(|w| w.to_le_bytes()).collect();
    u.extend_from_slice(&ubo.to_le_bytes());
    let mut d = Dispatch::new([1, 1, 1], [1, 1, 1]);
    d.uniforms = u;
    let mem = Buffer::new(&rig.mem);
    Interpreter.run(&kernel, &d, &mem).expect("run");
    let words = mem.words();
    let w = |i: usize| words[i];
    assert_eq!([w(0), w(1)], [74, 77]);
}

/// Bindless set 0 slot 5: a 3x2 R32 image (`fmt`) at IMAGE with pitch 16 bytes,
/// texel (x, y) = 10y + x + 1.
fn r32_image(rig: &mut Rig, fmt: u32) {
    for y in 0..2 {
        for x in 0..3 {
            rig.mem[(IMAGE + 16 * y) / 4 + x] = (10 * y + x + 1) as u32;
        }
    }
    rig.tex_desc(
        SET + 5 * 64,
        TexDesc {
            fmt,
            w: 3,
            h: 2,
            pitch: 16,
            ty: 1,
            base: BUF + IMAGE as u64,
        },
    );
    rig.bindless[0] = (BUF + SET as u64) | DESC_64B;
}

#[test]
fn typed_image_atomics_on_r32_texels() {
    let mut rig = Rig::new();
    r32_image(&mut rig, FMT6_32_UINT);
    // add 100 at (2, 1); result (old value) to r2.x.
    let body = "mov.u32u32 r3.x, 2\nmov.u32u32 r3.y, 1\nmov.u32u32 r2.y, 100\nmov.u32u32 r5.x, 5\n\
        atomic.b.add.typed.2d.u32.1.nonuniform.base0 r2.x, r3.x, r5.x\n(sy)stg.u32 g[r1.x], r2.x, 1";
    let m = rig.run(body).expect("add");
    assert_eq!(m[0], 13);
    assert_eq!(m[(IMAGE + 16) / 4 + 2], 113);
    // cmpxchg at (0, 1): compare r2.y, new value r2.z.
    for (cmp, want_mem) in [(11u32, 77u32), (12, 11)] {
        let body = format!(
            "mov.u32u32 r3.x, 0\nmov.u32u32 r3.y, 1\nmov.u32u32 r2.y, {cmp}\nmov.u32u32 r2.z, 77\n\
             atomic.b.cmpxchg.typed.2d.u32.1.imm.base0 r2.x, r3.x, 5\n(sy)stg.u32 g[r1.x], r2.x, 1"
        );
        let m = rig.run(&body).expect("cmpxchg");
        assert_eq!(m[0], 11, "compare {cmp}");
        assert_eq!(m[(IMAGE + 16) / 4], want_mem, "compare {cmp}");
    }
}

#[test]
fn typed_signed_max_and_out_of_range_coordinates() {
    let mut rig = Rig::new();
    r32_image(&mut rig, FMT6_32_SINT);
    // s32 max with -5 keeps 1 at (0, 0); with 9 stores 9.
    for (v, want) in [(-5i32, 1u32), (9, 9)] {
        let body = format!(
            "mov.u32u32 r3.x, 0\nmov.u32u32 r3.y, 0\nmov.s32s32 r2.y, {v}\n\
             atomic.b.max.typed.2d.s32.1.imm.base0 r2.x, r3.x, 5\n(sy)stg.u32 g[r1.x], r2.x, 1"
        );
        let m = rig.run(&body).expect("max");
        assert_eq!(m[0], 1);
        assert_eq!(m[IMAGE / 4], want, "max with {v}");
    }
    // x = 3 is outside the 3-wide image: result 0, no texel changes.
    rig.mem[OUT / 4] = 0xdead;
    let body = "mov.u32u32 r3.x, 3\nmov.u32u32 r3.y, 0\nmov.u32u32 r2.x, 55\nmov.u32u32 r2.y, 100\n\
        atomic.b.add.typed.2d.u32.1.imm.base0 r2.x, r3.x, 5\n(sy)stg.u32 g[r1.x], r2.x, 1";
    let before = rig.mem.clone();
    let m = rig.run(body).expect("outside");
    assert_eq!(m[0], 0);
    assert_eq!(
        m[IMAGE / 4..IMAGE / 4 + 8],
        before[IMAGE / 4..IMAGE / 4 + 8]
    );
}

#[test]
fn typed_atomic_through_the_loaded_uav_table() {
    let mut rig = Rig::new();
    r32_image(&mut rig, FMT6_32_UINT);
    // The same descriptor preloaded as UAV 0 (uniforms after the info block).
    rig.cfg.uniforms.uav_off = CONST_BYTES + info::BYTES;
    rig.cfg.uniforms.uav_count = 1;
    let desc: Vec<u32> = rig.mem[(SET + 5 * 64) / 4..(SET + 5 * 64) / 4 + 16].to_vec();
    let src = "shl.b r0.y, r0.x, 2\nadd.u r1.x, c0.x, r0.y\nmov.u32u32 r1.y, c0.y\n\
        mov.u32u32 r3.x, 1\nmov.u32u32 r2.y, 240\n\
        atomic.b.or.typed.1d.u32.1.imm r2.x, r3.x, 0\n(sy)stg.u32 g[r1.x], r2.x, 1\nend\n";
    let words = assemble(src).expect("asm");
    let kernel = lift(&words, &rig.cfg).expect("lift");
    let mut c = vec![0u32; (CONST_BYTES + info::BYTES) as usize / 4];
    c[0] = BUF as u32;
    c[1] = (BUF >> 32) as u32;
    c.extend(desc);
    let mut d = Dispatch::new([1, 1, 1], [1, 1, 1]);
    d.uniforms = c.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mem = Buffer::new(&rig.mem);
    Interpreter.run(&kernel, &d, &mem).expect("run");
    let words = mem.words();
    let w = |i: usize| words[i];
    // 1D: texel x = 1 of row 0.
    assert_eq!(w(0), 2);
    assert_eq!(w(IMAGE / 4 + 1), 0xf2);
}

#[test]
fn untyped_ssbo_atomic_takes_its_operand_from_src1_y() {
    let mut rig = Rig::new();
    ssbo_set(&mut rig);
    let body = "mov.u32u32 r3.x, 5\nmov.u32u32 r2.x, 999\nmov.u32u32 r2.y, 40\n\
        atomic.b.add.untyped.1d.u32.1.imm.base0 r2.x, r3.x, 3\n(sy)stg.u32 g[r1.x], r2.x, 1";
    let m = rig.run(body).expect("run");
    assert_eq!(m[0], 1005);
    assert_eq!(m[IMAGE / 4 + 5], 1045);
}

#[test]
fn typed_atomic_on_a_float_image_faults_at_its_pc() {
    let mut rig = Rig::new();
    r32_image(&mut rig, FMT6_32_32_32_32_FLOAT);
    let body = "mov.u32u32 r3.x, 0\nmov.u32u32 r3.y, 0\nmov.u32u32 r2.y, 1\n\
        atomic.b.add.typed.2d.u32.1.imm.base0 r2.x, r3.x, 5\n(sy)stg.u32 g[r1.x], r2.x, 1";
    let f = rig.run(body).expect_err("float image atomic");
    assert_eq!(f.guest_pc, Some(6), "{f}");
}

#[test]
fn unmapped_bindless_descriptor_faults_at_its_pc() {
    let mut rig = Rig::new();
    // Base 3 points far outside the buffer.
    rig.bindless[3] = 0x7777_0000 | DESC_64B;
    for ins in [
        "isam.base3 (f32)(xyzw)r4.x, r0.z, s#0, t#1",
        "ldib.b.untyped.1d.u32.1.imm.base3 r4.x, r0.z, 1",
        "ldc.offset0.1.imm.base3 r4.x, 0, 1",
    ] {
        let body =
            format!("mov.u32u32 r0.z, 0\nmov.u32u32 r0.w, 0\n{ins}\n(sy)stg.u32 g[r1.x], r4.x, 1");
        let f = rig.run(&body).expect_err(ins);
        assert_eq!(f.guest_pc, Some(5), "{ins}: {f}");
    }
    // Base 0 was never written (address 0): also a clean fault.
    let f = rig
        .run("mov.u32u32 r0.z, 0\nisam.base0 (f32)(xyzw)r4.x, r0.z, s#0, t#0")
        .expect_err("null base");
    assert_eq!(f.guest_pc, Some(4), "{f}");
}

#[test]
fn bindless_bases_past_the_fifth_are_refused() {
    let words = assemble("ldc.offset0.1.imm.base5 r2.x, 0, 0\nend").expect("asm");
    let e = lift(&words, &LiftConfig::default()).expect_err("base5");
    assert!(
        matches!(e, LiftError::Malformed { pc: 0, ref what, .. } if what.contains("bindless base 5")),
        "{e}"
    );
}

#[test]
fn ibo_atomics_on_non_32_bit_types_are_refused() {
    let words = assemble("atomic.b.add.untyped.1d.u64.1.imm r0.w, r0.y, 0\nend").expect("asm");
    let e = lift(&words, &LiftConfig::default()).expect_err("u64 atomic");
    assert!(
        matches!(e, LiftError::Malformed { pc: 0, ref what, .. } if what.contains("atomic type 6")),
        "{e}"
    );
}

#[test]
fn global_and_local_atomics_on_non_32_bit_types_are_refused() {
    for (text, ty) in [
        ("atomic.g.add.untyped.1d.u16.1.g r0.z, r0.x, r0.z\nend", 2),
        ("atomic.max.untyped.1d.s16.1.l r0.w, l[r0.z], r0.w\nend", 4),
    ] {
        let words = assemble(text).expect("asm");
        let e = lift(&words, &LiftConfig::default()).expect_err("16-bit atomic");
        let want = format!("atomic type {ty}");
        assert!(
            matches!(e, LiftError::Malformed { pc: 0, ref what, .. } if what.contains(&want)),
            "{text}: {e}"
        );
    }
    // The 32-bit forms lift.
    for text in [
        "atomic.g.add.untyped.1d.u32.1.g r0.z, r0.x, r0.z\nend",
        "atomic.max.untyped.1d.s32.1.l r0.w, l[r0.z], r0.w\nend",
    ] {
        let words = assemble(text).expect("asm");
        assert!(lift(&words, &LiftConfig::default()).is_ok(), "{text}");
    }
}

#[test]
fn typed_ibo_access_with_an_immediate_offset_is_refused() {
    let words = assemble("ldib.b.typed.1d.f32.4.imm r0.x, r0.w+1, 1\nend").expect("asm");
    let e = lift(&words, &LiftConfig::default()).expect_err("typed + offset");
    assert!(matches!(e, LiftError::Undocumented { pc: 0, .. }), "{e}");
}
