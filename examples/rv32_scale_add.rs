//! A kernel for the RV32 SIMT device: `out[i] = 3 * in[i] + 7` (u32), loaded
//! from raw machine code. The device gives a kernel no argument pointer, so
//! this one reads `in` and `out` from a fixed argument block at 0x100, which
//! the launch's arguments fill.
//!
//! `cargo run --example rv32_scale_add`

use wavejit::{Device, Launch, Rv32Options};

/// objdump's view of the program (core address = byte offset).
const CODE: [u32; 17] = [
    0x10002283, // lw   t0,256(zero)   in
    0x10402303, // lw   t1,260(zero)   out
    0x80000437, // lui  s0,0x80000     the ID window
    0x00042483, // lw   s1,0(s0)       threadIdx.x
    0x01042503, // lw   a0,16(s0)      blockIdx.x
    0x02042583, // lw   a1,32(s0)      blockDim.x
    0x02b50533, // mul  a0,a0,a1
    0x00a484b3, // add  s1,s1,a0       i
    0x00249493, // slli s1,s1,0x2
    0x00928633, // add  a2,t0,s1
    0x00062683, // lw   a3,0(a2)
    0x00300793, // li   a5,3
    0x02f686b3, // mul  a3,a3,a5
    0x00768693, // addi a3,a3,7
    0x00930833, // add  a6,t1,s1
    0x00d82023, // sw   a3,0(a6)
    0x00100073, // ebreak
];

fn main() -> Result<(), wavejit::Error> {
    let image: Vec<u8> = CODE.iter().flat_map(|w| w.to_le_bytes()).collect();
    let dev = Device::new();
    let options = Rv32Options {
        args_at: Some(0x100),
        ..Rv32Options::default()
    };
    let kernel = dev.load_rv32(&image, &options)?;
    let input: Vec<u32> = (0..96).collect();
    let inb = dev.upload(&input)?;
    let out = dev.alloc(4 * 96)?;
    // Three blocks of one 32-lane warp; pointers are 32-bit on RV32.
    dev.launch(&kernel, &Launch::new(3, 32).buffer(&inb).buffer(&out))?;
    let got = dev.read::<u32>(&out)?;
    println!("out[0..4] = {:?}, out[95] = {}", &got[..4], got[95]);
    assert_eq!(&got[..4], [7, 10, 13, 16]);
    assert_eq!(got[95], 3 * 95 + 7);
    Ok(())
}

// `cargo test` runs the example too (`test = true` in Cargo.toml).
#[test]
fn runs() {
    if let Err(e) = main() {
        panic!("{e}");
    }
}
