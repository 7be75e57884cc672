//! The 17 graded device tests of `shared/data/gpgpu_qtests.md` (QEMU camp
//! `tests/qtest/gpgpu-test.c`), one fresh device each, with the exact register
//! sequences (32-bit accesses) and expected values.

use wavejit_runtime::mmio::{DeviceConfig, GpgpuDevice};

struct Bus {
    dev: GpgpuDevice,
}

impl Bus {
    fn new() -> Bus {
        Bus {
            dev: GpgpuDevice::new(DeviceConfig::default()).expect("device"),
        }
    }
    fn w0(&mut self, off: u64, v: u32) {
        self.dev.mmio_write(0, off, 4, u64::from(v));
    }
    fn r0(&self, off: u64) -> u32 {
        self.dev.mmio_read(0, off, 4) as u32
    }
    fn w2(&mut self, off: u64, v: u32) {
        self.dev.mmio_write(2, off, 4, u64::from(v));
    }
    fn r2(&self, off: u64) -> u32 {
        self.dev.mmio_read(2, off, 4) as u32
    }

    /// The common host sequence of tests 13-17; returns the `outputs` result words.
    fn run_kernel(&mut self, code: &[u32], threads: u32, outputs: usize) -> Vec<u32> {
        self.w0(0x0100, 0x1);
        for (i, &w) in code.iter().enumerate() {
            self.w2(4 * i as u64, w);
        }
        for i in 0..outputs {
            self.w2(0x1000 + 4 * i as u64, 0xDEAD_BEEF);
        }
        self.w0(0x0300, 0);
        self.w0(0x0304, 0);
        self.w0(0x0310, 1);
        self.w0(0x0314, 1);
        self.w0(0x0318, 1);
        self.w0(0x031C, threads);
        self.w0(0x0320, 1);
        self.w0(0x0324, 1);
        self.w0(0x0330, 1);
        assert_eq!(
            self.r0(0x0104) & 1,
            1,
            "READY right after DISPATCH (fault: {:?})",
            self.dev.last_fault()
        );
        assert_eq!(self.r0(0x0108), 0, "no error: {:?}", self.dev.last_fault());
        (0..outputs)
            .map(|i| self.r2(0x1000 + 4 * i as u64))
            .collect()
    }
}

#[test]
fn t01_device_id() {
    let b = Bus::new();
    assert_eq!(b.r0(0x0000), 0x4750_5055);
    assert_eq!(b.r0(0x0004), 0x0001_0000);
}

#[test]
fn t02_vram_size() {
    let b = Bus::new();
    let lo = u64::from(b.r0(0x000C));
    let hi = u64::from(b.r0(0x0010));
    assert_eq!(hi << 32 | lo, 64 << 20);
}

#[test]
fn t03_global_ctrl() {
    let mut b = Bus::new();
    assert_eq!(b.r0(0x0104) & 1, 1);
    b.w0(0x0100, 0x1);
    assert_eq!(b.r0(0x0100) & 1, 1);
}

#[test]
fn t04_dispatch_regs() {
    let mut b = Bus::new();
    b.w0(0x0310, 64);
    b.w0(0x0314, 32);
    b.w0(0x0318, 1);
    assert_eq!(b.r0(0x0310), 64);
    assert_eq!(b.r0(0x0314), 32);
    assert_eq!(b.r0(0x0318), 1);
    b.w0(0x031C, 256);
    b.w0(0x0320, 1);
    b.w0(0x0324, 1);
    assert_eq!(b.r0(0x031C), 256);
}

#[test]
fn t05_vram_access() {
    let mut b = Bus::new();
    b.w2(0x0000, 0xDEAD_BEEF);
    b.w2(0x0100, 0x1234_5678);
    b.w2(0x1000, 0xCAFE_BABE);
    assert_eq!(b.r2(0x0000), 0xDEAD_BEEF);
    assert_eq!(b.r2(0x0100), 0x1234_5678);
    assert_eq!(b.r2(0x1000), 0xCAFE_BABE);
}

#[test]
fn t06_dma_regs() {
    let mut b = Bus::new();
    b.w0(0x0400, 0x1000);
    b.w0(0x0404, 0);
    b.w0(0x0408, 0x2000);
    b.w0(0x040C, 0);
    b.w0(0x0410, 4096);
    assert_eq!(b.r0(0x0400), 0x1000);
    assert_eq!(b.r0(0x0408), 0x2000);
    assert_eq!(b.r0(0x0410), 4096);
    assert_eq!(b.r0(0x0418), 0, "no DMA started");
}

#[test]
fn t07_irq_regs() {
    let mut b = Bus::new();
    b.w0(0x0200, 0x7);
    assert_eq!(b.r0(0x0200), 0x7);
    assert_eq!(b.r0(0x0204), 0x0);
}

#[test]
fn t08_simt_thread_id() {
    let mut b = Bus::new();
    assert_eq!(b.r0(0x1000), 0);
    b.w0(0x1000, 15);
    assert_eq!(b.r0(0x1000), 15);
    b.w0(0x1004, 7);
    assert_eq!(b.r0(0x1004), 7);
    b.w0(0x1008, 3);
    assert_eq!(b.r0(0x1008), 3);
}

#[test]
fn t09_simt_block_id() {
    let mut b = Bus::new();
    b.w0(0x1010, 63);
    assert_eq!(b.r0(0x1010), 63);
    b.w0(0x1014, 31);
    assert_eq!(b.r0(0x1014), 31);
    b.w0(0x1018, 1);
    assert_eq!(b.r0(0x1018), 1);
}

#[test]
fn t10_simt_warp_lane() {
    let mut b = Bus::new();
    b.w0(0x1020, 3);
    assert_eq!(b.r0(0x1020), 3);
    b.w0(0x1024, 17);
    assert_eq!(b.r0(0x1024), 17);
}

#[test]
fn t11_simt_thread_mask() {
    let mut b = Bus::new();
    assert_eq!(b.r0(0x2004), 0);
    b.w0(0x2004, 0xFFFF_FFFF);
    assert_eq!(b.r0(0x2004), 0xFFFF_FFFF);
    b.w0(0x2004, 0x0000_FFFF);
    assert_eq!(b.r0(0x2004), 0x0000_FFFF);
}

#[test]
fn t12_simt_reset() {
    let mut b = Bus::new();
    b.w0(0x1000, 123);
    b.w0(0x1010, 456);
    b.w0(0x1020, 7);
    b.w0(0x2004, 0xDEAD_BEEF);
    b.w0(0x0100, 0x2);
    assert_eq!(b.r0(0x1000), 0);
    assert_eq!(b.r0(0x1010), 0);
    assert_eq!(b.r0(0x1020), 0);
    assert_eq!(b.r0(0x2004), 0);
}

const SIMPLE: [u32; 7] = [
    0xF1402373, 0x01F37313, 0x00231393, 0x00001E37, 0x007E0E33, 0x006E2023, 0x00100073,
];
const FP: [u32; 15] = [
    0xF1402373, 0x01F37313, 0xD00300D3, 0x00200493, 0xD0048153, 0x00100493, 0xD00481D3, 0x10208253,
    0x003202D3, 0xC00293D3, 0x00231413, 0x00001E37, 0x008E0E33, 0x007E2023, 0x00100073,
];
const LP: [u32; 18] = [
    0xF1402373, 0x01F37313, 0x02A00493, 0xD00480D3, 0x44108153, 0x440101D3, 0xC0019553, 0x00200493,
    0xD00480D3, 0x48108153, 0x480101D3, 0xC00195D3, 0x00331413, 0x00001E37, 0x008E0E33, 0x00AE2023,
    0x00BE2223, 0x00100073,
];
const LP_E5M2_E2M1: [u32; 30] = [
    0xF1402373, 0x01F37313, 0x00400493, 0xD00480D3, 0x48308153, 0x482101D3, 0xC0019553, 0x00200493,
    0xD00480D3, 0x4C108153, 0x4C0101D3, 0xC00195D3, 0xFFD00493, 0xD00480D3, 0x44108153, 0x440101D3,
    0xC0019653, 0xFFE00493, 0xD00480D3, 0x48108153, 0x480101D3, 0xC00196D3, 0x00431413, 0x00001E37,
    0x008E0E33, 0x00AE2023, 0x00BE2223, 0x00CE2423, 0x00DE2623, 0x00100073,
];
const LP_SATURATE: [u32; 34] = [
    0xF1402373, 0x01F37313, 0x00000493, 0xD00480D3, 0x48108153, 0x480101D3, 0xC0019553, 0x00000493,
    0xD00480D3, 0x4C108153, 0x4C0101D3, 0xC00195D3, 0x06400493, 0xD00480D3, 0x4C108153, 0x4C0101D3,
    0xC0019653, 0x3E800493, 0xD00480D3, 0x48108153, 0x480101D3, 0xC00196D3, 0x7F8004B7, 0xF00480D3,
    0x48108153, 0x480101D3, 0xC0019753, 0x00001E37, 0x00AE2023, 0x00BE2223, 0x00CE2423, 0x00DE2623,
    0x00EE2823, 0x00100073,
];

#[test]
fn t13_kernel_exec() {
    let mut b = Bus::new();
    let out = b.run_kernel(&SIMPLE, 8, 8);
    assert_eq!(out, (0..8).collect::<Vec<u32>>());
}

#[test]
fn t14_fp_kernel_exec() {
    let mut b = Bus::new();
    let out = b.run_kernel(&FP, 8, 8);
    assert_eq!(out, vec![1, 3, 5, 7, 9, 11, 13, 15]);
}

#[test]
fn t15_lp_convert() {
    let mut b = Bus::new();
    let out = b.run_kernel(&LP, 4, 8);
    assert_eq!(out, vec![42, 2, 42, 2, 42, 2, 42, 2]);
}

#[test]
fn t16_lp_convert_e5m2_e2m1() {
    let mut b = Bus::new();
    let out = b.run_kernel(&LP_E5M2_E2M1, 1, 4);
    assert_eq!(out, vec![4, 2, -3i32 as u32, -2i32 as u32]);
}

#[test]
fn t17_lp_convert_saturate() {
    let mut b = Bus::new();
    let out = b.run_kernel(&LP_SATURATE, 1, 5);
    assert_eq!(out, vec![0, 0, 6, 448, 448]);
}

/// The kernel words above are the data file's (when the shared data is present).
#[test]
fn kernel_words_match_the_data_file() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/data/gpgpu_qtests.md"
    );
    let Ok(doc) = std::fs::read_to_string(path) else {
        assert!(std::env::var_os("CI").is_none(), "{path} missing under CI");
        eprintln!("SKIP: {path} not found");
        return;
    };
    let Some(json) = doc.split("```json").nth(1) else {
        panic!("no JSON block in {path}");
    };
    let kernels: [(&str, &[u32]); 5] = [
        ("simple_kernel", &SIMPLE),
        ("fp_kernel", &FP),
        ("lp_convert_kernel", &LP),
        ("lp_convert_e5m2_e2m1_kernel", &LP_E5M2_E2M1),
        ("lp_convert_saturate_kernel", &LP_SATURATE),
    ];
    for (name, words) in kernels {
        let start = json
            .find(&format!("\"{name}\""))
            .unwrap_or_else(|| panic!("{name} missing"));
        let body = &json[start..];
        let list = &body[body.find('[').unwrap_or(0) + 1..body.find(']').unwrap_or(0)];
        let parsed: Vec<u32> = list
            .split(',')
            .map(|s| s.trim().trim_matches('"'))
            .filter(|s| !s.is_empty())
            .map(|s| u32::from_str_radix(s, 16).expect("hex word"))
            .collect();
        assert_eq!(parsed, words, "{name}");
    }
}
