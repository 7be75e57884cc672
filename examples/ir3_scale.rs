//! An Adreno a630 (ir3) compute kernel: `out[i] = in[i] * scale` (f32), from
//! mesa-syntax assembly to machine words to results.
//!
//! `cargo run --example ir3_scale`

use wavejit::{Device, Error, Ir3Options, Launch};

/// Kernel arguments are the const file: out = c0.xy, in = c0.zw, scale = c1.x.
/// `i = wgid.x << 6 | local.x` (workgroups of 64; the local id arrives in r0.x,
/// the workgroup id in r48.x, as mesa sets them up). Each 64-bit address is
/// `base + 4i` with the carry into the high word.
const SOURCE: &str = "
shl.b r0.y, r48.x, 6
add.u r0.y, r0.y, r0.x
shl.b r0.z, r0.y, 2
add.u r1.x, c0.x, r0.z
cmps.u.lt hr8.x, r1.x, c0.x
cov.u16u32 r1.z, hr8.x
add.u r1.y, c0.y, r1.z
add.u r2.x, c0.z, r0.z
cmps.u.lt hr8.x, r2.x, c0.z
cov.u16u32 r2.z, hr8.x
add.u r2.y, c0.w, r2.z
(sy)ldg.f32 r4.x, g[r2.x], 1
(sy)mul.f r4.y, r4.x, c1.x
stg.f32 g[r1.x], r4.y, 1
end
";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // What a driver would hand over: little-endian 64-bit instruction words.
    let words = wavejit::frontend::ir3::assemble(SOURCE)?;
    let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();

    let dev = Device::new();
    let kernel = dev.load_ir3(&code, &Ir3Options::default())?;
    let input: Vec<f32> = (0..256).map(|i| i as f32 - 128.0).collect();
    let inb = dev.upload(&input)?;
    let out = dev.alloc(4 * 256)?;
    let launch = Launch::new(4, 64).buffer(&out).buffer(&inb).value(0.25f32);
    dev.launch(&kernel, &launch)?;
    let got = dev.read::<f32>(&out)?;
    println!("out[0..4] = {:?}, out[255] = {}", &got[..4], got[255]);
    assert_eq!(&got[..4], [-32.0, -31.75, -31.5, -31.25]);
    assert_eq!(got[255], 31.75);
    check(&dev)?;
    Ok(())
}

/// A word the lifter does not know is an error naming it and its index.
fn check(dev: &Device) -> Result<(), Error> {
    let bad = [0xffu8; 8];
    match dev.load_ir3(&bad, &Ir3Options::default()) {
        Err(e) => {
            println!("bad code: {e}");
            assert!(e.to_string().contains("pc 0"));
            Ok(())
        }
        Ok(_) => panic!("an all-ones word lifted"),
    }
}

// `cargo test` runs the example too (`test = true` in Cargo.toml).
#[test]
fn runs() {
    if let Err(e) = main() {
        panic!("{e}");
    }
}
