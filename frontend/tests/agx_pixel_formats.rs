//! Pixel formats of AGX device_load / device_store (agx.md §4.1): sRGB (10) loads
//! and stores, and stores of the packed formats rgb10a2 (8), rg11b10f (12/14) and
//! rgb9e5 (13/15). Lifted kernels run on the golden interpreter and are compared
//! bit for bit with the plain-Rust references written here (one lane per value).

mod agx_lift_support;
use agx_lift_support::{Mem, lanes, lift_src, run_kernel, to_words, words};
use wavejit_frontend::agx::assemble;
use wavejit_frontend::agx::lift::{AgxDispatch, LiftConfig, LiftError, lift};
use wavejit_ir::Engine;
use wavejit_ir::interp::Interpreter;

// ------------------------------------------------------------ harness

/// Runs `src` on the interpreter with `n` lanes (threadgroups of 32); buffer i is
/// bound to u(2i). Returns the final buffers as words.
fn run_interp(src: &str, n: u32, inputs: &[Vec<u32>]) -> Vec<Vec<u32>> {
    let k = lift_src(src, 0);
    let mem = Mem::new(&inputs.iter().map(|w| words(w)).collect::<Vec<_>>());
    let d = AgxDispatch::with_buffers([n, 1, 1], [32, 1, 1], &mem.addrs()).unwrap();
    if let Err(f) = Interpreter::new().run(&k, &d.dispatch().unwrap(), &mem) {
        panic!("fault {f}\n{src}");
    }
    (0..inputs.len()).map(|i| to_words(&mem.bytes(i))).collect()
}

/// xorshift64: reproducible pseudo-random inputs.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 16) as u32
    }
}

/// Floats every store test sees: signed zeros, infinities, NaNs of both signs,
/// FP32 denormals, negatives, the [0, 1] range and large values.
fn special_f32() -> Vec<u32> {
    vec![
        0x0000_0000,
        0x8000_0000,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0xffc0_0000,
        0x7f80_0001,
        0x0000_0001,
        0x007f_ffff,
        0x8000_0001,
        (-1.0f32).to_bits(),
        (-0.25f32).to_bits(),
        0.5f32.to_bits(),
        1.0f32.to_bits(),
        0x3f7f_ffff,
        0x3f80_0001,
        2.0f32.to_bits(),
        65024.0f32.to_bits(),
        65408.0f32.to_bits(),
        65535.0f32.to_bits(),
        65536.0f32.to_bits(),
        f32::MAX.to_bits(),
        f32::MIN_POSITIVE.to_bits(),
    ]
}

fn pow2(e: i32) -> f64 {
    f64::powi(2.0, e)
}

/// floor(log2(v)) of a positive normal f64.
fn ilog2(v: f64) -> i32 {
    ((v.to_bits() >> 52) & 0x7ff) as i32 - 1023
}

// ------------------------------------------------------------ references

fn ref_eotf(c: f64) -> f64 {
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

fn ref_oetf(x: f64) -> f64 {
    if x <= 0.0031308 {
        x * 12.92
    } else {
        1.055 * x.powf(1.0 / 2.4) - 0.055
    }
}

/// Linear f32 to the 8-bit sRGB code: nearest even of 255 * oetf(x).
fn ref_srgb_encode(x: f32) -> u32 {
    if x.is_nan() || x <= 0.0 {
        0
    } else if x >= 1.0 {
        255
    } else {
        (255.0 * ref_oetf(f64::from(x))).round_ties_even() as u32
    }
}

/// f64 in [0, 1] to f16 bits, round to nearest even.
fn ref_f16(v: f64) -> u16 {
    if v < pow2(-14) {
        return (v / pow2(-24)).round_ties_even() as u16;
    }
    let mut e = ilog2(v);
    let mut m = ((v / pow2(e) - 1.0) * 1024.0).round_ties_even() as u32;
    if m == 1024 {
        e += 1;
        m = 0;
    }
    (((e + 15) as u32) << 10 | m) as u16
}

/// The unorm store rule: clamp (NaN -> 0), f32 product with the scale, RNE.
fn ref_unorm(x: f32, bits: u32) -> u32 {
    let x = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
    (x * ((1u32 << bits) - 1) as f32).round_ties_even() as u32
}

/// f32 to an unsigned float with 5 exponent bits and `m` mantissa bits.
fn ref_uf(x: f32, m: u32, rtz: bool) -> u32 {
    let inf = 0x1f << m;
    if x.is_nan() {
        return inf | 1 << (m - 1);
    }
    if x.is_sign_negative() {
        return 0;
    }
    if x.is_infinite() {
        return inf;
    }
    let v = f64::from(x);
    let max = (2.0 - pow2(-(m as i32))) * pow2(15);
    let ulp = if v < pow2(-14) {
        pow2(-14 - m as i32)
    } else {
        pow2(ilog2(v) - m as i32)
    };
    let q = v / ulp;
    let r = if rtz { q.floor() } else { q.round_ties_even() } * ulp;
    if r > max {
        return if rtz { inf - 1 } else { inf };
    }
    if r < pow2(-14) {
        return (r / pow2(-14 - m as i32)) as u32;
    }
    let e = ilog2(r);
    let frac = ((r / pow2(e) - 1.0) * pow2(m as i32)) as u32;
    ((e + 15) as u32) << m | frac
}

/// EXT_texture_shared_exponent with the model's rounding (nearest even or
/// toward zero) and clamping (NaN and negatives -> 0).
fn ref_rgb9e5(c: [f32; 3], rtz: bool) -> u32 {
    let max_val = 511.0 / 512.0 * pow2(16);
    let cl: Vec<f64> = c
        .iter()
        .map(|&x| {
            if x.is_nan() || x.is_sign_negative() {
                0.0
            } else {
                f64::from(x).min(max_val)
            }
        })
        .collect();
    let maxc = cl[0].max(cl[1]).max(cl[2]);
    let fl = if maxc > 0.0 { ilog2(maxc) } else { -1000 };
    let mut e = fl.max(-16) + 16;
    let round = |v: f64| if rtz { v.floor() } else { v.round_ties_even() };
    if round(maxc / pow2(e - 24)) == 512.0 {
        e += 1;
    }
    let denom = pow2(e - 24);
    let m: Vec<u32> = cl.iter().map(|&v| round(v / denom) as u32).collect();
    m[0] | m[1] << 9 | m[2] << 18 | (e as u32) << 27
}

fn f16_to_f32(h: u16) -> f32 {
    let (s, e, m) = (
        u32::from(h >> 15),
        u32::from(h >> 10) & 0x1f,
        u32::from(h) & 0x3ff,
    );
    let mag = match e {
        0 => (m as f32) * (pow2(-24) as f32),
        31 => {
            if m == 0 {
                f32::INFINITY
            } else {
                f32::NAN
            }
        }
        _ => f32::from_bits((e + 112) << 23 | m << 13),
    };
    if s == 1 { -mag } else { mag }
}

// ------------------------------------------------------------ sRGB

#[test]
fn srgb_load_all_256_bytes_to_f32_and_f16() {
    // Lane i reads the pixel (i, i+1, i+2, i) into 32-bit and 16-bit registers.
    let src = "mov r2, thread_in_grid_x
load r4_r5_r6_r7, du0, r2, srgba8, xyzw, a
load r8l_r8h_r9l_r9h, du0, r2, srgba8, xyzw, a
wait a
store r4_r5_r6_r7, du2, r2, lsl 2, i32, xyzw, a
store r8_r9, du4, r2, lsl 1, i32, xy, a
stop";
    let pixels: Vec<u32> = (0..256u32)
        .map(|i| i | ((i + 1) & 255) << 8 | ((i + 2) & 255) << 16 | i << 24)
        .collect();
    let out = run_interp(src, 256, &[pixels, vec![0; 1024], vec![0; 512]]);
    let want32 = |b: u32| (ref_eotf(f64::from(b) / 255.0) as f32).to_bits();
    let want16 = |b: u32| u32::from(ref_f16(ref_eotf(f64::from(b) / 255.0)));
    for i in 0..256u32 {
        let bytes = [i, (i + 1) & 255, (i + 2) & 255];
        let r = &out[1][4 * i as usize..4 * i as usize + 4];
        for c in 0..3 {
            assert_eq!(r[c], want32(bytes[c]), "byte {} f32", bytes[c]);
        }
        // Alpha is linear unorm8 (the u8norm load).
        assert_eq!(r[3], (i as f32 / 255.0).to_bits(), "alpha {i}");
        let h = &out[2][2 * i as usize..2 * i as usize + 2];
        assert_eq!(h[0] & 0xffff, want16(bytes[0]), "byte {} f16", bytes[0]);
        assert_eq!(h[0] >> 16, want16(bytes[1]));
        assert_eq!(h[1] & 0xffff, want16(bytes[2]));
    }
    // Spot values: 0 -> 0, 255 -> 1.0, 10 -> 10/255/12.92 (linear segment).
    assert_eq!(out[1][0], 0);
    assert_eq!(out[1][4 * 253 + 2], 1.0f32.to_bits());
    assert_eq!(out[1][4 * 10], ((10.0 / 255.0 / 12.92) as f32).to_bits());
}

#[test]
fn srgb_reference_is_far_from_rounding_boundaries() {
    // The f64 evaluation decides every f32 rounding like exact arithmetic: each
    // decoded value lies well away from an f32 midpoint, and each f32 input of
    // the store tests well away from a code boundary (k - 0.5).
    for b in 1..256u32 {
        let v = ref_eotf(f64::from(b) / 255.0);
        let f = v as f32;
        let ulp = f64::from(f.next_up()) - f64::from(f);
        let frac = (v - f64::from(f)) / ulp;
        assert!((frac.abs() - 0.5).abs() > 1e-6, "byte {b}: {frac}");
    }
    for x in srgb_store_inputs() {
        let x = f32::from_bits(x);
        if x > 0.0 && x < 1.0 {
            let y = 255.0 * ref_oetf(f64::from(x));
            assert!((y - y.floor() - 0.5).abs() > 1e-9, "{x:e}: {y}");
        }
    }
}

/// Each code boundary's neighbourhood (the first f32 of each code and a few
/// ulps around it), the specials and random values in [0, 1.1].
fn srgb_store_inputs() -> Vec<u32> {
    let mut v = special_f32();
    for k in 1..256u32 {
        let x = (ref_eotf((f64::from(k) - 0.5) / 255.0) as f32).to_bits();
        v.extend((x - 3)..=(x + 3));
    }
    let mut rng = Rng(0x5eed_1234_5678_9abc);
    for _ in 0..2000 {
        v.push(((f64::from(rng.next()) / f64::from(u32::MAX) * 1.1) as f32).to_bits());
    }
    v
}

#[test]
fn srgb_store_boundaries_specials_and_random() {
    // Lane i stores r, g, b = x[3i..3i+3] (sRGB) and a = x[3i] (unorm8).
    let src = "mov r2, thread_in_grid_x
iadd r3, r2, r2, lsl 1
load r4_r5_r6, du0, r3, i32, xyz, a
wait a
mov r7, r4
store r4_r5_r6_r7, du2, r2, srgba8, xyzw, a
stop";
    let mut xs = srgb_store_inputs();
    while !xs.len().is_multiple_of(3) {
        xs.push(0);
    }
    let n = xs.len() / 3;
    let out = run_interp(src, n as u32, &[xs.clone(), vec![0; n]]);
    for i in 0..n {
        let f = |j: usize| f32::from_bits(xs[3 * i + j]);
        let want = ref_srgb_encode(f(0))
            | ref_srgb_encode(f(1)) << 8
            | ref_srgb_encode(f(2)) << 16
            | ref_unorm(f(0), 8) << 24;
        assert_eq!(
            out[1][i],
            want,
            "lane {i}: {:e} {:e} {:e}",
            f(0),
            f(1),
            f(2)
        );
    }
}

#[test]
fn srgb_store_from_16_bit_registers_and_masked_bytes() {
    // f16 inputs widen exactly; mask xz writes only bytes 0 and 2 (the others
    // keep 0xee), taking r4l and r4h.
    let src = "mov r2, thread_in_grid_x
load r4, du0, r2, i32, x, a
wait a
store r4l_r4h, du2, r2, srgba8, xz, a
stop";
    let mut rng = Rng(77);
    let hs: Vec<u32> = (0..4096)
        .map(|i| if i < 2048 { i * 32 + 7 } else { rng.next() })
        .collect();
    let out = run_interp(src, 4096, &[hs.clone(), vec![0xeeee_eeee; 4096]]);
    for (i, &w) in hs.iter().enumerate() {
        let a = ref_srgb_encode(f16_to_f32(w as u16));
        let b = ref_srgb_encode(f16_to_f32((w >> 16) as u16));
        assert_eq!(out[1][i], 0xee00_ee00 | b << 16 | a, "lane {i}: {w:#x}");
    }
}

#[test]
fn srgb_store_of_the_load_gives_the_byte_back() {
    for regs in ["r4_r5_r6_r7", "r4l_r4h_r5l_r5h"] {
        let src = format!(
            "mov r2, thread_in_grid_x
load {regs}, du0, r2, srgba8, xyzw, a
wait a
store {regs}, du2, r2, srgba8, xyzw, a
stop"
        );
        let pixels: Vec<u32> = (0..256u32)
            .map(|i| i | (255 - i) << 8 | ((i * 7) & 255) << 16 | ((i * 13) & 255) << 24)
            .collect();
        let out = run_interp(&src, 256, &[pixels.clone(), vec![0; 256]]);
        assert_eq!(out[1], pixels, "{regs}");
    }
}

// ------------------------------------------------------------ norm formats

/// The snorm store rule: clamp to [-1, 1] (NaN -> 0), f32 product, RNE; the
/// code's two's-complement bits.
fn ref_snorm(x: f32, bits: u32) -> u32 {
    let x = if x.is_nan() { 0.0 } else { x.clamp(-1.0, 1.0) };
    let q = (x * ((1u32 << (bits - 1)) - 1) as f32).round_ties_even() as i32;
    (q as u32) & ((1u32 << bits) - 1)
}

#[test]
fn norm_stores_match_the_reference_and_round_trip() {
    let mut xs = special_f32();
    let mut rng = Rng(0x4e0);
    for _ in 0..3000 {
        xs.push(((f64::from(rng.next()) / f64::from(u32::MAX) * 2.4 - 1.2) as f32).to_bits());
    }
    while !xs.len().is_multiple_of(4) {
        xs.push(0);
    }
    let n = xs.len() / 4;
    for (fmt, bits, signed) in [
        ("u8norm", 8u32, false),
        ("s8norm", 8, true),
        ("u16norm", 16, false),
        ("s16norm", 16, true),
    ] {
        // Lane i stores x[4i..4i+4] as four elements at element 4i, then loads
        // them back into 32-bit registers.
        let src = format!(
            "mov r2, thread_in_grid_x
load r4_r5_r6_r7, du0, r2, lsl 2, i32, xyzw, a
wait a
store r4_r5_r6_r7, du2, r2, lsl 2, {fmt}, xyzw, a
load r8_r9_r10_r11, du2, r2, lsl 2, {fmt}, xyzw, a
wait a
store r8_r9_r10_r11, du4, r2, lsl 2, i32, xyzw, a
stop"
        );
        let words_out = n * bits as usize / 8;
        let out = run_interp(
            &src,
            n as u32,
            &[xs.clone(), vec![0; words_out], vec![0; 4 * n]],
        );
        let bytes: Vec<u8> = out[1].iter().flat_map(|w| w.to_le_bytes()).collect();
        let esz = bits as usize / 8;
        for (j, &x) in xs.iter().enumerate() {
            let x = f32::from_bits(x);
            let mut code = 0u32;
            for b in 0..esz {
                code |= u32::from(bytes[j * esz + b]) << (8 * b);
            }
            let want = if signed {
                ref_snorm(x, bits)
            } else {
                ref_unorm(x, bits)
            };
            assert_eq!(code, want, "{fmt} {x:e}");
            // The load of the stored code: code / scale in f32 (-1 for the
            // most negative code), which encodes back to the same code.
            let back = f32::from_bits(out[2][j]);
            let value = if signed {
                let c = ((code << (32 - bits)) as i32) >> (32 - bits);
                (c as f32 / ((1u32 << (bits - 1)) - 1) as f32).max(-1.0)
            } else {
                code as f32 / ((1u32 << bits) - 1) as f32
            };
            assert_eq!(back.to_bits(), value.to_bits(), "{fmt} load of {code:#x}");
            let again = if signed {
                ref_snorm(back, bits)
            } else {
                ref_unorm(back, bits)
            };
            assert_eq!(again, code, "{fmt} round trip");
        }
    }
}

// ------------------------------------------------------------ rgb10a2

#[test]
fn rgb10a2_store_matches_the_unorm_rule() {
    let src = "mov r2, thread_in_grid_x
load r4_r5_r6_r7, du0, r2, lsl 2, i32, xyzw, a
wait a
store r4_r5_r6_r7, du2, r2, rgb10a2, xyzw, a
stop";
    let mut xs = special_f32();
    let mut rng = Rng(1010);
    for k in 0..1024u32 {
        // Each code's exact value and the rounding midpoints below it.
        xs.push((k as f32 / 1023.0).to_bits());
        xs.push(((k as f32 - 0.5) / 1023.0).to_bits());
    }
    for _ in 0..4000 {
        xs.push(((f64::from(rng.next()) / f64::from(u32::MAX) * 1.2 - 0.1) as f32).to_bits());
    }
    while !xs.len().is_multiple_of(4) {
        xs.push(0);
    }
    let n = xs.len() / 4;
    let out = run_interp(src, n as u32, &[xs.clone(), vec![0; n]]);
    for i in 0..n {
        let f = |j: usize| f32::from_bits(xs[4 * i + j]);
        let want = ref_unorm(f(0), 10)
            | ref_unorm(f(1), 10) << 10
            | ref_unorm(f(2), 10) << 20
            | ref_unorm(f(3), 2) << 30;
        assert_eq!(out[1][i], want, "lane {i}");
    }
}

#[test]
fn rgb10a2_round_trips_every_code_in_32_and_16_bit_registers() {
    for regs in ["r4_r5_r6_r7", "r4l_r4h_r5l_r5h"] {
        let src = format!(
            "mov r2, thread_in_grid_x
load {regs}, du0, r2, rgb10a2, xyzw, a
wait a
store {regs}, du2, r2, rgb10a2, xyzw, a
stop"
        );
        let ws: Vec<u32> = (0..1024u32)
            .map(|k| k | (1023 - k) << 10 | (k * 37 % 1024) << 20 | (k & 3) << 30)
            .collect();
        let out = run_interp(&src, 1024, &[ws.clone(), vec![0; 1024]]);
        assert_eq!(out[1], ws, "{regs}");
    }
}

#[test]
fn packed_stores_ignore_mask_and_shift_and_zero_missing_components() {
    // rgb10a2 from two registers (mask xy, lsl 2): one word at index r2 = 1; b
    // and a are 0. rg11b10f from one register: g and b are 0.
    let src = "ldimm r2, 1
ldimm r4, 0x3f800000
ldimm r5, 0x3f000000
store r4_r5, du0, r2, lsl 2, rgb10a2, xy, a
store r4, du0, 3, lsl 1, rg11b10f, x, a
stop";
    let out = run_interp(src, 1, &[vec![0xdead_beef; 8]]);
    let mut want = vec![0xdead_beef; 8];
    want[1] = 1023 | 512 << 10;
    want[3] = 0x3c0;
    assert_eq!(out[0], want);
}

// ------------------------------------------------------------ rg11b10f

/// Lane i packs x[3i], x[3i+1], x[3i+2] (f32 registers) with `fmt`.
fn run_rg11b10f_f32(fmt: &str, xs: &[u32]) -> Vec<u32> {
    let src = format!(
        "mov r2, thread_in_grid_x
iadd r3, r2, r2, lsl 1
load r4_r5_r6, du0, r3, i32, xyz, a
wait a
store r4_r5_r6, du2, r2, {fmt}, xyz, a
stop"
    );
    let n = xs.len() / 3;
    run_interp(&src, n as u32, &[xs.to_vec(), vec![0; n]])[1].clone()
}

fn check_rg11b10f(fmt: &str, rtz: bool, xs: &[u32]) -> usize {
    let out = run_rg11b10f_f32(fmt, xs);
    for (i, &w) in out.iter().enumerate() {
        let f = |j: usize| f32::from_bits(xs[3 * i + j]);
        let want = ref_uf(f(0), 6, rtz) | ref_uf(f(1), 6, rtz) << 11 | ref_uf(f(2), 5, rtz) << 22;
        assert_eq!(w, want, "{fmt} lane {i}: {:e} {:e} {:e}", f(0), f(1), f(2));
    }
    out.len()
}

/// Every f16 value (as f32), each f11/f10 midpoint and its neighbours, random
/// f32 bits and the specials.
fn uf_inputs() -> Vec<u32> {
    let mut xs: Vec<u32> = (0..=0xffffu32)
        .map(|h| f16_to_f32(h as u16).to_bits())
        .collect();
    for m in [6u32, 5] {
        for code in 0..(0x1f << m) {
            // The value halfway to the next code, and one f32 ulp either side.
            let lo = ref_uf_value(code, m);
            let hi = ref_uf_value(code + 1, m);
            let mid = ((lo + hi) / 2.0) as f32;
            xs.extend([mid.next_down(), mid, mid.next_up()].map(f32::to_bits));
        }
    }
    let mut rng = Rng(0x11b10);
    xs.extend((0..30000).map(|_| rng.next() ^ rng.next() << 16));
    xs.extend(special_f32());
    while !xs.len().is_multiple_of(3) {
        xs.push(0);
    }
    xs
}

/// The value of an unsigned small float code (5-bit exponent, `m` mantissa bits).
fn ref_uf_value(code: u32, m: u32) -> f64 {
    let (e, f) = ((code >> m) as i32, f64::from(code & ((1 << m) - 1)));
    if e == 0 {
        f * pow2(-14 - m as i32)
    } else {
        (1.0 + f / pow2(m as i32)) * pow2(e - 15)
    }
}

#[test]
fn rg11b10f_store_round_to_nearest_even() {
    let n = check_rg11b10f("rg11b10f", false, &uf_inputs());
    assert!(n > 30000);
}

#[test]
fn rg11b10f_rtz_store_rounds_toward_zero() {
    let n = check_rg11b10f("rg11b10f_rtz", true, &uf_inputs());
    assert!(n > 30000);
}

#[test]
fn rg11b10f_edge_values() {
    // 1.0, the largest finite f11 (65024), 65535 (f10 overflow), 65520 and
    // 65519 (above the f11 overflow midpoint 65280: inf, or 65024 truncated),
    // +inf, NaN, -2, -0, 2e-6 and the smallest f11 denormal 2^-20.
    let xs: Vec<u32> = [
        1.0f32,
        65024.0,
        65535.0,
        65520.0,
        65519.0,
        f32::INFINITY,
        f32::NAN,
        -2.0,
        -0.0,
        2e-6,
        f32::powi(2.0, -20),
        0.0,
    ]
    .map(f32::to_bits)
    .to_vec();
    let rne = run_rg11b10f_f32("rg11b10f", &xs);
    let rtz = run_rg11b10f_f32("rg11b10f_rtz", &xs);
    assert_eq!(rne[0], 0x3c0 | 0x7bf << 11 | 0x3e0 << 22);
    assert_eq!(rtz[0], 0x3c0 | 0x7bf << 11 | 0x3df << 22);
    assert_eq!(rne[1], 0x7c0 | 0x7c0 << 11 | 0x3e0 << 22);
    assert_eq!(rtz[1], 0x7bf | 0x7bf << 11 | 0x3e0 << 22);
    assert_eq!(rne[2], 0x7e0, "NaN, -2, -0");
    // 2e-6 = 2.097 * 2^-20 -> denormal 2; 2^-20 -> denormal 1.
    assert_eq!(rne[3], 2 | 1 << 11);
}

#[test]
fn rg11b10f_from_16_bit_registers_all_f16_values() {
    // Lane i: r4l, r4h from word i, r5l from word i + n (all 65536 f16 values
    // appear in r and g; b sees the even ones).
    let src = "mov r2, thread_in_grid_x
load r4, du0, r2, i32, x, a
ldimm r3, 32768
iadd r3, r2, r3
load r5, du0, r3, i32, x, a
wait a
store r4l_r4h_r5l, du2, r2, rg11b10f, xyz, a
stop";
    let n = 32768u32;
    let ws: Vec<u32> = (0..2 * n)
        .map(|i| (2 * i) & 0xffff | ((2 * i + 1) & 0xffff) << 16)
        .collect();
    let out = run_interp(src, n, &[ws.clone(), vec![0; n as usize]]);
    for i in 0..n as usize {
        let h = |w: u32, hi: bool| f16_to_f32(if hi { w >> 16 } else { w } as u16);
        let want = ref_uf(h(ws[i], false), 6, false)
            | ref_uf(h(ws[i], true), 6, false) << 11
            | ref_uf(h(ws[i + n as usize], false), 5, false) << 22;
        assert_eq!(out[1][i], want, "lane {i}");
    }
}

#[test]
fn rg11b10f_store_of_the_load_gives_the_word_back() {
    // Every f11 code in r and g and every f10 code in b; NaN codes come back as
    // the quiet NaN of their field.
    let src = "mov r2, thread_in_grid_x
load r4_r5_r6, du0, r2, rg11b10f, xyz, a
wait a
store r4_r5_r6, du2, r2, rg11b10f, xyz, a
stop";
    let ws: Vec<u32> = (0..2048u32)
        .map(|c| c | (2047 - c) << 11 | (c & 0x3ff) << 22)
        .collect();
    let out = run_interp(src, 2048, &[ws.clone(), vec![0; 2048]]);
    let canon = |c: u32, m: u32| {
        if c >> m == 0x1f && c & ((1 << m) - 1) != 0 {
            0x1f << m | 1 << (m - 1)
        } else {
            c
        }
    };
    for (i, &w) in ws.iter().enumerate() {
        let want = canon(w & 0x7ff, 6) | canon(w >> 11 & 0x7ff, 6) << 11 | canon(w >> 22, 5) << 22;
        assert_eq!(out[1][i], want, "word {w:#x}");
    }
}

// ------------------------------------------------------------ rgb9e5

fn rgb9e5_inputs() -> Vec<u32> {
    let mut rng = Rng(0x9e5);
    let mut xs = special_f32();
    for _ in 0..20000 {
        // Exponents around the format's range (2^-30 .. 2^17) with random
        // mantissas; a third of the components near the largest one.
        let e = 97 + rng.next() % 48;
        xs.push(e << 23 | rng.next() & 0x7f_ffff);
    }
    for i in 0..6000u32 {
        // Triples whose maximum sits on a mantissa rounding midpoint.
        let e = 100 + i % 40;
        let m = (rng.next() % 256) << 15 | 1 << 14;
        xs.extend([e << 23 | m, (e - i % 3) << 23 | rng.next() & 0x7f_ffff, 0]);
    }
    while !xs.len().is_multiple_of(3) {
        xs.push(0);
    }
    xs
}

fn check_rgb9e5(fmt: &str, rtz: bool) {
    let src = format!(
        "mov r2, thread_in_grid_x
iadd r3, r2, r2, lsl 1
load r4_r5_r6, du0, r3, i32, xyz, a
wait a
store r4_r5_r6, du2, r2, {fmt}, xyz, a
stop"
    );
    let xs = rgb9e5_inputs();
    let n = xs.len() / 3;
    let out = run_interp(&src, n as u32, &[xs.clone(), vec![0; n]]);
    for i in 0..n {
        let f = |j: usize| f32::from_bits(xs[3 * i + j]);
        let want = ref_rgb9e5([f(0), f(1), f(2)], rtz);
        assert_eq!(
            out[1][i],
            want,
            "{fmt} lane {i}: {:e} {:e} {:e}",
            f(0),
            f(1),
            f(2)
        );
    }
}

#[test]
fn rgb9e5_store_round_to_nearest_even() {
    check_rgb9e5("rgb9e5", false);
}

#[test]
fn rgb9e5_rtz_store_rounds_toward_zero() {
    check_rgb9e5("rgb9e5_rtz", true);
}

#[test]
fn rgb9e5_edge_values() {
    let src = "mov r2, thread_in_grid_x
iadd r3, r2, r2, lsl 1
load r4_r5_r6, du0, r3, i32, xyz, a
wait a
store r4_r5_r6, du2, r2, rgb9e5, xyz, a
store r4_r5_r6, du4, r2, rgb9e5_rtz, xyz, a
stop";
    let xs: Vec<u32> = [
        // 1.0, 0.5, 0: e = 16, scale 2^-8.
        1.0f32,
        0.5,
        0.0,
        // +inf and a huge value clamp to 65408 = 511 * 2^7 (e = 31); NaN -> 0.
        f32::INFINITY,
        1e30,
        f32::NAN,
        // 511.75 rounds to 512 -> the exponent goes up by one (RNE); RTZ keeps 511.
        511.75,
        -1.0,
        -0.0,
    ]
    .map(f32::to_bits)
    .to_vec();
    let out = run_interp(src, 3, &[xs, vec![0; 3], vec![0; 3]]);
    assert_eq!(out[1][0], 256 | 128 << 9 | 16 << 27);
    assert_eq!(out[1][1], 511 | 511 << 9 | 31 << 27);
    assert_eq!(out[1][2], 256 | 25 << 27);
    assert_eq!(out[2][2], 511 | 24 << 27);
}

#[test]
fn rgb9e5_store_of_the_load_keeps_the_values() {
    // Non-normalised words (max mantissa < 256) re-encode with a smaller
    // exponent, so the check is on the loaded values: load(store(load(w))).
    let src = "mov r2, thread_in_grid_x
load r4_r5_r6, du0, r2, rgb9e5, xyz, a
wait a
store r4_r5_r6, du2, r2, rgb9e5, xyz, a
load r8_r9_r10, du2, r2, rgb9e5, xyz, a
wait a
iadd r3, r2, r2, lsl 1
store r4_r5_r6, du4, r3, i32, xyz, a
store r8_r9_r10, du6, r3, i32, xyz, a
stop";
    let mut rng = Rng(0xe5e5);
    let ws: Vec<u32> = (0..8192u32)
        .map(|i| {
            if i < 32 {
                0x1ff | 0x1ff << 9 | i << 27
            } else {
                rng.next()
            }
        })
        .collect();
    let n = ws.len();
    let out = run_interp(
        src,
        n as u32,
        &[ws.clone(), vec![0; n], vec![0; 3 * n], vec![0; 3 * n]],
    );
    assert_eq!(out[2], out[3]);
    // Normalised words (max mantissa >= 256, or e = 0) come back unchanged.
    for (i, &w) in ws.iter().enumerate() {
        let maxm = (w & 0x1ff).max(w >> 9 & 0x1ff).max(w >> 18 & 0x1ff);
        if maxm >= 256 {
            assert_eq!(out[1][i], w, "word {w:#x}");
        }
    }
}

// ------------------------------------------------------------ engines, errors

#[test]
fn both_engines_agree_on_the_pixel_format_stores() {
    let src = "mov r2, thread_in_grid_x
load r4_r5_r6_r7, du0, r2, lsl 2, i32, xyzw, a
wait a
store r4_r5_r6_r7, du2, r2, srgba8, xyzw, a
store r4_r5_r6_r7, du4, r2, rgb10a2, xyzw, a
store r4_r5_r6, du6, r2, rg11b10f, xyz, a
store r4_r5_r6, du8, r2, rgb9e5_rtz, xyz, a
load r8_r9_r10_r11, du2, r2, srgba8, xyzw, a
wait a
store r8_r9_r10_r11, du10, r2, lsl 2, i32, xyzw, a
stop";
    let mut rng = Rng(4242);
    let xs: Vec<u32> = (0..256)
        .map(|_| ((f64::from(rng.next()) / f64::from(u32::MAX)) as f32).to_bits())
        .collect();
    let z = vec![0u32; 64];
    let out = run_kernel(
        &lift_src(src, 0),
        lanes(64, 32),
        &[xs.clone(), z.clone(), z.clone(), z.clone(), z, vec![0; 256]],
    );
    for i in 0..64 {
        let f = |j: usize| f32::from_bits(xs[4 * i + j]);
        assert_eq!(
            out[3][i],
            ref_uf(f(0), 6, false) | ref_uf(f(1), 6, false) << 11 | ref_uf(f(2), 5, false) << 22
        );
        assert_eq!(out[4][i], ref_rgb9e5([f(0), f(1), f(2)], true));
    }
}

#[test]
fn threadgroup_packed_and_srgb_formats_are_refused() {
    for fmt in ["rgb10a2", "srgba8", "rgb9e5"] {
        let code = assemble(&format!("lload r4, 0, {fmt}, x\nstop")).unwrap();
        // With threadgroup memory: without it the access itself is refused.
        let cfg = LiftConfig {
            threadgroup_memory: 0x100,
            ..LiftConfig::default()
        };
        let err = lift(&code, &cfg).unwrap_err();
        assert!(
            matches!(&err, LiftError::Unsupported { why, .. } if why.contains("device-only")),
            "{fmt}: {err}"
        );
    }
}
