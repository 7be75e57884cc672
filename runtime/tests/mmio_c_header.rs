//! `runtime/include/wavejit_mmio.h` against the device: every `WJ_MMIO_*`
//! constant of the header equals the Rust register map (`mmio::regs`), none is
//! left unchecked, and the prototypes match `mmio/capi.rs`.

mod c_header_support;

use c_header_support::{cc_available, compile, defines, header, value_asserts};
use wavejit_runtime::mmio::regs::{self, ctrl, dma, error, irq, status};

/// (header name without `WJ_MMIO_`, Rust value).
fn expected() -> Vec<(&'static str, u64)> {
    let offsets = [
        ("DEV_ID", regs::DEV_ID),
        ("DEV_VERSION", regs::DEV_VERSION),
        ("DEV_CAPS", regs::DEV_CAPS),
        ("VRAM_SIZE_LO", regs::VRAM_SIZE_LO),
        ("VRAM_SIZE_HI", regs::VRAM_SIZE_HI),
        ("GLOBAL_CTRL", regs::GLOBAL_CTRL),
        ("GLOBAL_STATUS", regs::GLOBAL_STATUS),
        ("ERROR_STATUS", regs::ERROR_STATUS),
        ("IRQ_ENABLE", regs::IRQ_ENABLE),
        ("IRQ_STATUS", regs::IRQ_STATUS),
        ("IRQ_ACK", regs::IRQ_ACK),
        ("KERNEL_ADDR_LO", regs::KERNEL_ADDR_LO),
        ("KERNEL_ADDR_HI", regs::KERNEL_ADDR_HI),
        ("KERNEL_ARGS_LO", regs::KERNEL_ARGS_LO),
        ("KERNEL_ARGS_HI", regs::KERNEL_ARGS_HI),
        // The Y and Z registers follow X (the device indexes them from X).
        ("GRID_DIM_X", regs::GRID_DIM_X),
        ("GRID_DIM_Y", regs::GRID_DIM_X + 4),
        ("GRID_DIM_Z", regs::GRID_DIM_X + 8),
        ("BLOCK_DIM_X", regs::BLOCK_DIM_X),
        ("BLOCK_DIM_Y", regs::BLOCK_DIM_X + 4),
        ("BLOCK_DIM_Z", regs::BLOCK_DIM_X + 8),
        ("SHARED_MEM_SIZE", regs::SHARED_MEM_SIZE),
        ("DISPATCH", regs::DISPATCH),
        ("DMA_SRC_LO", regs::DMA_SRC_LO),
        ("DMA_SRC_HI", regs::DMA_SRC_HI),
        ("DMA_DST_LO", regs::DMA_DST_LO),
        ("DMA_DST_HI", regs::DMA_DST_HI),
        ("DMA_SIZE", regs::DMA_SIZE),
        ("DMA_CTRL", regs::DMA_CTRL),
        ("DMA_STATUS", regs::DMA_STATUS),
        ("THREAD_ID_X", regs::THREAD_ID_X),
        ("BLOCK_ID_X", regs::BLOCK_ID_X),
        ("WARP_ID", regs::WARP_ID),
        ("LANE_ID", regs::LANE_ID),
        ("BARRIER", regs::BARRIER),
        ("THREAD_MASK", regs::THREAD_MASK),
        ("MSIX_TABLE", regs::MSIX_TABLE),
        ("MSIX_PBA", regs::MSIX_PBA),
    ];
    let bits = [
        ("DEV_ID_VALUE", regs::DEV_ID_VALUE),
        ("DEV_VERSION_VALUE", regs::DEV_VERSION_VALUE),
        ("CTRL_ENABLE", ctrl::ENABLE),
        ("CTRL_RESET", ctrl::RESET),
        ("STATUS_READY", status::READY),
        ("STATUS_BUSY", status::BUSY),
        ("STATUS_ERROR", status::ERROR),
        ("ERROR_INVALID_CMD", error::INVALID_CMD),
        ("ERROR_VRAM_FAULT", error::VRAM_FAULT),
        ("ERROR_KERNEL_FAULT", error::KERNEL_FAULT),
        ("ERROR_DMA_FAULT", error::DMA_FAULT),
        ("IRQ_KERNEL_DONE", irq::KERNEL_DONE),
        ("IRQ_DMA_DONE", irq::DMA_DONE),
        ("IRQ_ERROR", irq::ERROR),
        ("IRQ_ALL", irq::ALL),
        ("DMA_CTRL_START", dma::START),
        ("DMA_CTRL_DIR", dma::DIR),
        ("DMA_CTRL_IRQ_EN", dma::IRQ_EN),
        ("DMA_STATUS_BUSY", dma::BUSY),
        ("DMA_STATUS_COMPLETE", dma::COMPLETE),
        ("DMA_STATUS_ERROR", dma::ERROR),
        // The BARs `mmio_read`/`mmio_write` decode.
        ("BAR_REGS", 0),
        ("BAR_VRAM", 2),
        ("BAR_DOORBELL", 4),
    ];
    offsets
        .into_iter()
        .chain(bits.into_iter().map(|(n, v)| (n, u64::from(v))))
        .collect()
}

#[test]
fn every_header_constant_is_checked() {
    let names: std::collections::BTreeSet<String> = expected()
        .iter()
        .map(|(n, _)| format!("WJ_MMIO_{n}"))
        .collect();
    assert_eq!(defines(&header("wavejit_mmio.h"), "WJ_MMIO_"), names);
}

#[test]
fn header_constants_and_prototypes_match_rust() {
    if !cc_available() {
        eprintln!("skipped: no system `cc`");
        return;
    }
    let named: Vec<(String, u64)> = expected()
        .into_iter()
        .map(|(n, v)| (format!("WJ_MMIO_{n}"), v))
        .collect();
    let mut c = String::from("#include \"wavejit_mmio.h\"\n");
    c += &value_asserts(named.iter().map(|(n, v)| (n.as_str(), *v)));
    for (name, ty) in [
        ("wj_mmio_new", "WjMmioDevice *(*)(uint64_t)"),
        (
            "wj_mmio_new_threads",
            "WjMmioDevice *(*)(uint64_t, uint32_t)",
        ),
        ("wj_mmio_free", "void (*)(WjMmioDevice *)"),
        (
            "wj_mmio_read",
            "uint64_t (*)(const WjMmioDevice *, uint32_t, uint64_t, uint32_t)",
        ),
        (
            "wj_mmio_write",
            "void (*)(WjMmioDevice *, uint32_t, uint64_t, uint32_t, uint64_t)",
        ),
        ("wj_mmio_reset", "void (*)(WjMmioDevice *)"),
        ("wj_mmio_irq_pending", "uint32_t (*)(const WjMmioDevice *)"),
        (
            "wj_mmio_last_fault",
            "size_t (*)(const WjMmioDevice *, char *, size_t)",
        ),
    ] {
        c += &format!(
            "_Static_assert(__builtin_types_compatible_p(__typeof__(&{name}), {ty}), \"{name}\");\n"
        );
    }
    compile(&c, "mmio_check.c").unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn the_check_catches_a_wrong_value() {
    if !cc_available() {
        return;
    }
    let c =
        "#include \"wavejit_mmio.h\"\n".to_string() + &value_asserts([("WJ_MMIO_STATUS_READY", 2)]);
    assert!(compile(&c, "mmio_negative.c").is_err());
}
