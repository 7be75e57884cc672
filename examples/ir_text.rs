//! A kernel in the wavejit IR's text form: `y[i] = a * x[i] + y[i]` (f32).
//!
//! `cargo run --example ir_text`

use wavejit::{Device, Error, Launch};

/// Arguments (uniform bytes): a at 0 (f32), x at 8, y at 16 (pointers), n at 24.
const SAXPY: &str = "kernel @saxpy shared 0 private 0 {
block0:
  v0 = local_index
  v1 = workgroup_id.x
  v2 = workgroup_size.x
  v3 = imul.i32 v1, v2
  v4 = iadd.i32 v3, v0
  v5 = const.i32 24
  v6 = load.uniform.i32 v5
  v7 = icmp.ult.i32 v4, v6
  br v7, block1, block2

block1:
  v8 = const.i32 0
  v9 = load.uniform.f32 v8
  v10 = const.i32 8
  v11 = load.uniform.i64 v10
  v12 = const.i32 16
  v13 = load.uniform.i64 v12
  v14 = zext.i32.i64 v4
  v15 = const.i64 2
  v16 = shl.i64 v14, v15
  v17 = iadd.i64 v11, v16
  v18 = iadd.i64 v13, v16
  v19 = load.global.f32 v17
  v20 = load.global.f32 v18
  v21 = fma.f32 v9, v19, v20
  store.global.f32 v18, v21
  jump block2

block2:
  exit
}";

fn main() -> Result<(), Error> {
    let dev = Device::new();
    let kernel = dev.load_ir_text(SAXPY)?;
    let n = 100u32;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let xb = dev.upload(&x)?;
    let yb = dev.upload(&vec![1.0f32; n as usize])?;
    // 4 workgroups of 32 lanes cover 100 elements; the kernel skips the rest.
    let launch = Launch::new(4, 32)
        .value(0.5f32)
        .buffer(&xb)
        .buffer(&yb)
        .value(n);
    dev.launch(&kernel, &launch)?;
    let y = dev.read::<f32>(&yb)?;
    println!("y[0..4] = {:?}, y[99] = {}", &y[..4], y[99]);
    assert_eq!(&y[..4], [1.0, 1.5, 2.0, 2.5]);
    assert_eq!(y[99], 50.5);
    Ok(())
}

// `cargo test` runs the example too (`test = true` in Cargo.toml).
#[test]
fn runs() {
    if let Err(e) = main() {
        panic!("{e}");
    }
}
