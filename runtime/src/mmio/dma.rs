//! The DMA engine (datasheet §2 notes, §9): one synchronous copy per START.
//! "Host addresses" are served by a [`DmaHost`] the embedding supplies.

use super::device::GpgpuDevice;
use super::regs::{dma, error, irq};

/// Host memory as the DMA engine sees it. Returns false for a refused range.
pub trait DmaHost {
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> bool;
    fn write(&mut self, addr: u64, data: &[u8]) -> bool;
}

/// A flat host memory `[base, base + len)` (tests, CLI).
pub struct VecHost {
    pub base: u64,
    pub bytes: Vec<u8>,
}

impl VecHost {
    fn range(&self, addr: u64, len: usize) -> Option<std::ops::Range<usize>> {
        let start = usize::try_from(addr.checked_sub(self.base)?).ok()?;
        let end = start.checked_add(len)?;
        (end <= self.bytes.len()).then_some(start..end)
    }
}

impl DmaHost for VecHost {
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> bool {
        match self.range(addr, buf.len()) {
            Some(r) => {
                buf.copy_from_slice(&self.bytes[r]);
                true
            }
            None => false,
        }
    }

    fn write(&mut self, addr: u64, data: &[u8]) -> bool {
        match self.range(addr, data.len()) {
            Some(r) => {
                self.bytes[r].copy_from_slice(data);
                true
            }
            None => false,
        }
    }
}

impl GpgpuDevice {
    /// Performs the transfer described by the DMA registers at once: COMPLETE (and
    /// IRQ DMA_DONE when DMA_CTRL.IRQ_EN) on success; ERROR and DMA_FAULT when the
    /// VRAM range overflows, the host refuses, or no host is attached.
    pub(super) fn run_dma(&mut self) {
        let r = &self.regs;
        let src = u64::from(r.dma_src[1]) << 32 | u64::from(r.dma_src[0]);
        let dst = u64::from(r.dma_dst[1]) << 32 | u64::from(r.dma_dst[0]);
        let len = r.dma_size as usize;
        let to_host = r.dma_ctrl & dma::DIR != 0;
        let irq_en = r.dma_ctrl & dma::IRQ_EN != 0;
        let vram_off = if to_host { src } else { dst };
        let in_vram = vram_off
            .checked_add(len as u64)
            .is_some_and(|end| end <= self.cfg.vram_size);
        let ok = in_vram && self.copy(src, dst, len, to_host);
        self.regs.dma_status = if ok {
            dma::COMPLETE
        } else {
            dma::COMPLETE | dma::ERROR
        };
        if ok {
            if irq_en {
                self.regs.irq_status |= irq::DMA_DONE;
            }
        } else {
            self.raise_error(error::DMA_FAULT);
        }
    }

    fn copy(&mut self, src: u64, dst: u64, len: usize, to_host: bool) -> bool {
        let Some(host) = self.dma_host.as_mut() else {
            return false;
        };
        let mut buf = vec![0u8; len];
        if to_host {
            match self.vram.read_bytes(src, len) {
                Ok(b) => host.write(dst, &b),
                Err(_) => false,
            }
        } else {
            host.read(src, &mut buf) && self.vram.write_bytes(dst, &buf).is_ok()
        }
    }
}
