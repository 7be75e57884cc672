//! BAR layout and register map of the RV32 SIMT GPGPU (datasheet §1–2).

/// PCI identity.
pub const VENDOR_ID: u16 = 0x1234;
pub const DEVICE_ID: u16 = 0x1337;
pub const REVISION: u8 = 0x01;
pub const CLASS_CODE: u16 = 0x0302;

pub const BAR0_SIZE: u64 = 1 << 20;
pub const BAR4_SIZE: u64 = 64 << 10;
pub const DEFAULT_VRAM_SIZE: u64 = 64 << 20;

pub const DEV_ID: u64 = 0x000;
pub const DEV_VERSION: u64 = 0x004;
pub const DEV_CAPS: u64 = 0x008;
pub const VRAM_SIZE_LO: u64 = 0x00C;
pub const VRAM_SIZE_HI: u64 = 0x010;
pub const GLOBAL_CTRL: u64 = 0x100;
pub const GLOBAL_STATUS: u64 = 0x104;
pub const ERROR_STATUS: u64 = 0x108;
pub const IRQ_ENABLE: u64 = 0x200;
pub const IRQ_STATUS: u64 = 0x204;
pub const IRQ_ACK: u64 = 0x208;
pub const KERNEL_ADDR_LO: u64 = 0x300;
pub const KERNEL_ADDR_HI: u64 = 0x304;
pub const KERNEL_ARGS_LO: u64 = 0x308;
pub const KERNEL_ARGS_HI: u64 = 0x30C;
pub const GRID_DIM_X: u64 = 0x310;
pub const BLOCK_DIM_X: u64 = 0x31C;
pub const SHARED_MEM_SIZE: u64 = 0x328;
pub const DISPATCH: u64 = 0x330;
pub const DMA_SRC_LO: u64 = 0x400;
pub const DMA_SRC_HI: u64 = 0x404;
pub const DMA_DST_LO: u64 = 0x408;
pub const DMA_DST_HI: u64 = 0x40C;
pub const DMA_SIZE: u64 = 0x410;
pub const DMA_CTRL: u64 = 0x414;
pub const DMA_STATUS: u64 = 0x418;
pub const THREAD_ID_X: u64 = 0x1000;
pub const BLOCK_ID_X: u64 = 0x1010;
pub const WARP_ID: u64 = 0x1020;
pub const LANE_ID: u64 = 0x1024;
pub const BARRIER: u64 = 0x2000;
pub const THREAD_MASK: u64 = 0x2004;
pub const MSIX_TABLE: u64 = 0xFE000;
pub const MSIX_PBA: u64 = 0xFF000;
/// MSI-X vectors: 0 KERNEL_DONE, 1 DMA_DONE, 2 ERROR, 3 unused.
pub const MSIX_VECTORS: usize = 4;

pub const DEV_ID_VALUE: u32 = 0x4750_5055;
pub const DEV_VERSION_VALUE: u32 = 0x0001_0000;

pub mod ctrl {
    pub const ENABLE: u32 = 1 << 0;
    pub const RESET: u32 = 1 << 1;
}

pub mod status {
    pub const READY: u32 = 1 << 0;
    pub const BUSY: u32 = 1 << 1;
    pub const ERROR: u32 = 1 << 2;
}

pub mod error {
    pub const INVALID_CMD: u32 = 1 << 0;
    pub const VRAM_FAULT: u32 = 1 << 1;
    pub const KERNEL_FAULT: u32 = 1 << 2;
    pub const DMA_FAULT: u32 = 1 << 3;
}

pub mod irq {
    pub const KERNEL_DONE: u32 = 1 << 0;
    pub const DMA_DONE: u32 = 1 << 1;
    pub const ERROR: u32 = 1 << 2;
    pub const ALL: u32 = KERNEL_DONE | DMA_DONE | ERROR;
}

pub mod dma {
    pub const START: u32 = 1 << 0;
    /// 0: host -> VRAM, 1: VRAM -> host.
    pub const DIR: u32 = 1 << 1;
    pub const IRQ_EN: u32 = 1 << 2;
    pub const CTRL_MASK: u32 = DIR | IRQ_EN;
    pub const BUSY: u32 = 1 << 0;
    pub const COMPLETE: u32 = 1 << 1;
    pub const ERROR: u32 = 1 << 2;
}

/// Dispatch limits the mhartid fields can encode.
pub const MAX_BLOCKS: u64 = 1 << 19;
pub const MAX_THREADS_PER_BLOCK: u64 = 256 * 32;
