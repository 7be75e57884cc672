//! Register state, BAR accesses and reset.

use wavejit_frontend::rv32::lift::LiftedKernel;
use wavejit_ir::Budget;
use wavejit_jit::{Jit, JitConfig};

use super::dma::DmaHost;
use super::launch::{DeviceFault, LaunchReport};
use super::regs::*;
use crate::memory::AddressSpace;

/// Which engine runs kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EngineChoice {
    /// The Cranelift JIT (it falls back to the interpreter for kernels it refuses).
    #[default]
    Jit,
    Interpreter,
}

/// Device properties (QOM properties of the reference device, plus wavejit's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceConfig {
    pub num_cus: u8,
    pub warps_per_cu: u8,
    pub warp_size: u8,
    /// VRAM bytes (a power of two).
    pub vram_size: u64,
    /// Instructions a lane may retire (datasheet: 100,000); `None`: unlimited.
    pub cycle_limit: Option<u32>,
    /// Record every lane's final registers in VRAM at `launch::CONTEXT_BASE`.
    pub capture_context: bool,
    pub engine: EngineChoice,
    /// Threads the JIT runs a large dispatch on, the DISPATCH writer's
    /// included (1 to [`MAX_JIT_THREADS`]); `None`: every host thread.
    pub jit_threads: Option<usize>,
}

/// Most JIT threads a device takes: each is an OS thread kept for the device's
/// life, and more than any host has cores only costs memory.
pub const MAX_JIT_THREADS: usize = 1024;

impl DeviceConfig {
    /// Refuses a configuration [`GpgpuDevice::new`] would refuse, before
    /// anything is allocated.
    pub fn validate(&self) -> Result<(), DeviceError> {
        if !self.vram_size.is_power_of_two() || self.vram_size < 4096 {
            return Err(DeviceError::VramSize(self.vram_size));
        }
        match self.jit_threads {
            Some(n) if n == 0 || n > MAX_JIT_THREADS => Err(DeviceError::JitThreads(n)),
            _ => Ok(()),
        }
    }
}

impl Default for DeviceConfig {
    fn default() -> Self {
        DeviceConfig {
            num_cus: 4,
            warps_per_cu: 4,
            warp_size: 32,
            vram_size: DEFAULT_VRAM_SIZE,
            cycle_limit: Some(wavejit_frontend::rv32::lift::DEFAULT_CYCLE_LIMIT),
            capture_context: false,
            engine: EngineChoice::Jit,
            jit_threads: None,
        }
    }
}

/// Every software-visible register (reset value 0 unless noted).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Regs {
    pub global_ctrl: u32,
    pub busy: bool,
    pub error_status: u32,
    pub irq_enable: u32,
    pub irq_status: u32,
    pub kernel_addr: [u32; 2],
    pub kernel_args: [u32; 2],
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem_size: u32,
    pub dma_src: [u32; 2],
    pub dma_dst: [u32; 2],
    pub dma_size: u32,
    pub dma_ctrl: u32,
    pub dma_status: u32,
    pub thread_id: [u32; 3],
    pub block_id: [u32; 3],
    pub warp_id: u32,
    pub lane_id: u32,
    pub thread_mask: u32,
}

/// The device. Not `Sync`: the embedding serialises MMIO accesses like a bus does.
pub struct GpgpuDevice {
    pub(super) cfg: DeviceConfig,
    pub(super) regs: Regs,
    pub(super) msix_table: [u32; MSIX_VECTORS * 4],
    pub(super) vram: AddressSpace,
    pub(super) jit: Jit,
    pub(super) cached: Option<LiftedKernel>,
    /// Resume-dispatch kernels of recent launches (see `resume`).
    pub(super) resume_cache: Vec<LiftedKernel>,
    /// Entry and the pcs lanes of the last launch of it left to: the next
    /// launch lifts them up front.
    pub(super) learned: Option<(u32, Vec<u32>)>,
    pub(super) last_fault: Option<DeviceFault>,
    pub(super) last_report: Option<LaunchReport>,
    pub(super) dma_host: Option<Box<dyn DmaHost>>,
    pub(super) budget: Budget,
}

/// Why a device could not be created.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    #[error("vram_size {0:#x} is not a power of two of at least 4 KiB")]
    VramSize(u64),
    #[error("jit_threads {0}: the JIT needs 1 to {MAX_JIT_THREADS} threads")]
    JitThreads(usize),
    #[error("VRAM allocation failed: {0}")]
    Alloc(#[from] crate::memory::MemError),
}

impl GpgpuDevice {
    /// A powered-on device: VRAM zeroed, READY set, everything else 0.
    pub fn new(cfg: DeviceConfig) -> Result<GpgpuDevice, DeviceError> {
        cfg.validate()?;
        let vram = AddressSpace::new();
        vram.alloc_at(0, cfg.vram_size)?;
        let mut jit_config = JitConfig::default();
        if let Some(threads) = cfg.jit_threads {
            jit_config.threads = threads;
        }
        Ok(GpgpuDevice {
            cfg,
            regs: Regs::default(),
            msix_table: [0; MSIX_VECTORS * 4],
            vram,
            jit: Jit::new(jit_config),
            cached: None,
            resume_cache: Vec::new(),
            learned: None,
            last_fault: None,
            last_report: None,
            dma_host: None,
            budget: Budget::from_env(),
        })
    }

    pub fn config(&self) -> &DeviceConfig {
        &self.cfg
    }

    /// Threads the device's JIT runs a large dispatch on (the DISPATCH
    /// writer's included): [`DeviceConfig::jit_threads`], or every host thread.
    pub fn jit_threads(&self) -> usize {
        self.jit.config().threads
    }

    /// The budget of every DISPATCH (default [`Budget::from_env`]): past it
    /// the launch faults (KERNEL_FAULT), so a huge grid cannot hold the
    /// DISPATCH write for hours.
    pub fn set_budget(&mut self, budget: Budget) {
        self.budget = budget;
    }

    /// Sets the host memory DMA transfers read and write.
    pub fn set_dma_host(&mut self, host: Box<dyn DmaHost>) {
        self.dma_host = Some(host);
    }

    /// The fault of the last DISPATCH, if it faulted.
    pub fn last_fault(&self) -> Option<&DeviceFault> {
        self.last_fault.as_ref()
    }

    /// What the last DISPATCH did (lanes, engine, contexts when captured).
    pub fn last_report(&self) -> Option<&LaunchReport> {
        self.last_report.as_ref()
    }

    /// MSI-X vectors currently asserted (bit n = vector n): IRQ_STATUS & IRQ_ENABLE.
    pub fn irq_pending(&self) -> u32 {
        self.regs.irq_status & self.regs.irq_enable
    }

    /// The VRAM address space (guest address = VRAM offset).
    pub fn vram(&self) -> &AddressSpace {
        &self.vram
    }

    pub fn vram_size(&self) -> u64 {
        self.cfg.vram_size
    }

    fn global_status(&self) -> u32 {
        let mut s = if self.regs.busy {
            status::BUSY
        } else {
            status::READY
        };
        if self.regs.error_status != 0 {
            s |= status::ERROR;
        }
        s
    }

    pub(super) fn raise_error(&mut self, bits: u32) {
        self.regs.error_status |= bits;
        self.regs.irq_status |= irq::ERROR;
    }

    /// Reads `size` (1, 2, 4 or 8) bytes of `bar` at `offset`. Unmapped offsets,
    /// unsupported sizes (BAR0/BAR4 are 32-bit only) and other BARs read 0.
    pub fn mmio_read(&self, bar: u32, offset: u64, size: u32) -> u64 {
        match bar {
            0 if size == 4 && offset.is_multiple_of(4) && offset < BAR0_SIZE => {
                u64::from(self.read_reg(offset))
            }
            2 => self.vram_read(offset, size).unwrap_or(0),
            _ => 0,
        }
    }

    /// Writes the low `size` bytes of `value` to `bar` at `offset`; accesses that
    /// `mmio_read` would read as 0 are ignored.
    pub fn mmio_write(&mut self, bar: u32, offset: u64, size: u32, value: u64) {
        match bar {
            0 if size == 4 && offset.is_multiple_of(4) && offset < BAR0_SIZE => {
                self.write_reg(offset, value as u32)
            }
            2 => self.vram_write(offset, size, value),
            _ => {}
        }
    }

    fn vram_range_ok(&self, offset: u64, size: u32) -> bool {
        matches!(size, 1 | 2 | 4 | 8)
            && offset
                .checked_add(u64::from(size))
                .is_some_and(|end| end <= self.cfg.vram_size)
    }

    fn vram_read(&self, offset: u64, size: u32) -> Option<u64> {
        if !self.vram_range_ok(offset, size) {
            return None;
        }
        let bytes = self.vram.read_bytes(offset, size as usize).ok()?;
        let mut le = [0u8; 8];
        le[..bytes.len()].copy_from_slice(&bytes);
        Some(u64::from_le_bytes(le))
    }

    fn vram_write(&mut self, offset: u64, size: u32, value: u64) {
        if self.vram_range_ok(offset, size) {
            let bytes = value.to_le_bytes();
            // In range by the check above; a refusal cannot happen for live VRAM.
            let _ = self.vram.write_bytes(offset, &bytes[..size as usize]);
        }
    }

    fn read_reg(&self, off: u64) -> u32 {
        let r = &self.regs;
        let idx3 = |base: u64| ((off - base) / 4) as usize;
        match off {
            DEV_ID => DEV_ID_VALUE,
            DEV_VERSION => DEV_VERSION_VALUE,
            DEV_CAPS => {
                u32::from(self.cfg.num_cus)
                    | u32::from(self.cfg.warps_per_cu) << 8
                    | u32::from(self.cfg.warp_size) << 16
            }
            VRAM_SIZE_LO => self.cfg.vram_size as u32,
            VRAM_SIZE_HI => (self.cfg.vram_size >> 32) as u32,
            GLOBAL_CTRL => r.global_ctrl,
            GLOBAL_STATUS => self.global_status(),
            ERROR_STATUS => r.error_status,
            IRQ_ENABLE => r.irq_enable,
            IRQ_STATUS => r.irq_status,
            KERNEL_ADDR_LO => r.kernel_addr[0],
            KERNEL_ADDR_HI => r.kernel_addr[1],
            KERNEL_ARGS_LO => r.kernel_args[0],
            KERNEL_ARGS_HI => r.kernel_args[1],
            0x310..=0x318 => r.grid[idx3(GRID_DIM_X)],
            0x31C..=0x324 => r.block[idx3(BLOCK_DIM_X)],
            SHARED_MEM_SIZE => r.shared_mem_size,
            DMA_SRC_LO => r.dma_src[0],
            DMA_SRC_HI => r.dma_src[1],
            DMA_DST_LO => r.dma_dst[0],
            DMA_DST_HI => r.dma_dst[1],
            DMA_SIZE => r.dma_size,
            DMA_CTRL => r.dma_ctrl,
            DMA_STATUS => r.dma_status,
            0x1000..=0x1008 => r.thread_id[idx3(THREAD_ID_X)],
            0x1010..=0x1018 => r.block_id[idx3(BLOCK_ID_X)],
            WARP_ID => r.warp_id,
            LANE_ID => r.lane_id,
            THREAD_MASK => r.thread_mask,
            0xFE000..=0xFE03C => self.msix_table[idx3(MSIX_TABLE)],
            MSIX_PBA => self.irq_pending(),
            _ => 0,
        }
    }

    fn write_reg(&mut self, off: u64, v: u32) {
        let idx3 = |base: u64| ((off - base) / 4) as usize;
        let r = &mut self.regs;
        match off {
            GLOBAL_CTRL => {
                if v & ctrl::RESET != 0 {
                    self.soft_reset();
                } else {
                    r.global_ctrl = v & ctrl::ENABLE;
                }
            }
            ERROR_STATUS => r.error_status &= !v,
            IRQ_ENABLE => r.irq_enable = v & irq::ALL,
            IRQ_ACK => r.irq_status &= !v,
            KERNEL_ADDR_LO => r.kernel_addr[0] = v,
            KERNEL_ADDR_HI => r.kernel_addr[1] = v,
            KERNEL_ARGS_LO => r.kernel_args[0] = v,
            KERNEL_ARGS_HI => r.kernel_args[1] = v,
            0x310..=0x318 => r.grid[idx3(GRID_DIM_X)] = v,
            0x31C..=0x324 => r.block[idx3(BLOCK_DIM_X)] = v,
            SHARED_MEM_SIZE => r.shared_mem_size = v,
            DISPATCH => self.dispatch(),
            DMA_SRC_LO => r.dma_src[0] = v,
            DMA_SRC_HI => r.dma_src[1] = v,
            DMA_DST_LO => r.dma_dst[0] = v,
            DMA_DST_HI => r.dma_dst[1] = v,
            DMA_SIZE => r.dma_size = v,
            DMA_CTRL => {
                r.dma_ctrl = v & dma::CTRL_MASK;
                if v & dma::START != 0 {
                    self.run_dma();
                }
            }
            0x1000..=0x1008 => r.thread_id[idx3(THREAD_ID_X)] = v,
            0x1010..=0x1018 => r.block_id[idx3(BLOCK_ID_X)] = v,
            WARP_ID => r.warp_id = v,
            LANE_ID => r.lane_id = v,
            THREAD_MASK => r.thread_mask = v,
            0xFE000..=0xFE03C => self.msix_table[idx3(MSIX_TABLE)] = v,
            // BARRIER: host writes have no effect; RO registers ignore writes.
            _ => {}
        }
    }

    /// GLOBAL_CTRL.RESET: every register to its reset value; VRAM is kept.
    pub fn soft_reset(&mut self) {
        self.regs = Regs::default();
        self.last_fault = None;
    }

    /// Bus/QOM reset: a soft reset that also zeroes VRAM and the MSI-X table.
    pub fn device_reset(&mut self) {
        self.soft_reset();
        self.msix_table = [0; MSIX_VECTORS * 4];
        self.cached = None;
        self.resume_cache.clear();
        self.learned = None;
        self.last_report = None;
        let zeros = vec![0u8; 1 << 20];
        let mut off = 0;
        while off < self.cfg.vram_size {
            let n = (self.cfg.vram_size - off).min(zeros.len() as u64) as usize;
            let _ = self.vram.write_bytes(off, &zeros[..n]);
            off += n as u64;
        }
    }
}
