//! An Apple G13 (AGX) compute kernel: `out[i] = a[i] + b[i] + k` (i32).
//!
//! `cargo run --example agx_add`

use wavejit::{AgxOptions, Device, Launch};

/// Kernel arguments are the uniform file: buffer `n` is `u(2n)_u(2n+1)`
/// (`du0`, `du2`, `du4` here), as Metal binds `buffer(n)`; `k` follows in u6.
const SOURCE: &str = "
mov r2, thread_in_grid_x
load r3, du0, r2, i32, x, a
load r4, du2, r2, i32, x, a
iadd r5, r3, r4
iadd r5, r5, u6
store r5, du4, r2, i32, x, a
stop
";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let code = wavejit::frontend::agx::assemble(SOURCE)?;
    let dev = Device::new();
    let kernel = dev.load_agx(&code, &AgxOptions::default())?;
    let a: Vec<i32> = (0..128).map(|i| i * 10).collect();
    let b: Vec<i32> = (0..128).map(|i| -i).collect();
    let (ab, bb) = (dev.upload(&a)?, dev.upload(&b)?);
    let out = dev.alloc(4 * 128)?;
    // 4 threadgroups of 32 threads; the scalar is a 32-bit uniform.
    let launch = Launch::new(4, 32)
        .buffer(&ab)
        .buffer(&bb)
        .buffer(&out)
        .value(1000i32);
    dev.launch(&kernel, &launch)?;
    let got = dev.read::<i32>(&out)?;
    println!("out[0..4] = {:?}, out[127] = {}", &got[..4], got[127]);
    assert_eq!(&got[..4], [1000, 1009, 1018, 1027]);
    assert_eq!(got[127], 1000 + 127 * 9);
    Ok(())
}

// `cargo test` runs the example too (`test = true` in Cargo.toml).
#[test]
fn runs() {
    if let Err(e) = main() {
        panic!("{e}");
    }
}
