/* wavejit RV32 SIMT GPGPU MMIO device: C ABI (runtime/src/mmio/capi.rs).
 * Hand-written; keep in sync with capi.rs.
 *
 * BAR0: control registers (32-bit accesses), BAR2: VRAM (1/2/4/8-byte little-endian
 * accesses), BAR4: doorbells (read 0). A DISPATCH write (BAR0 0x330) returns when
 * the kernel has finished. Handles are not thread-safe: serialise accesses. */
#ifndef WAVEJIT_MMIO_H
#define WAVEJIT_MMIO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct WjMmioDevice WjMmioDevice;

/* New device with vram_size bytes of VRAM (0: 64 MiB; must be a power of two).
 * Returns NULL on failure. */
WjMmioDevice *wj_mmio_new(uint64_t vram_size);
/* As wj_mmio_new, with a JIT that runs a large dispatch on jit_threads threads,
 * the one writing DISPATCH included (wj_mmio_new: every host thread). Returns
 * NULL unless 1 <= jit_threads <= 1024. */
WjMmioDevice *wj_mmio_new_threads(uint64_t vram_size, uint32_t jit_threads);
void wj_mmio_free(WjMmioDevice *dev);

uint64_t wj_mmio_read(const WjMmioDevice *dev, uint32_t bar, uint64_t offset, uint32_t size);
void wj_mmio_write(WjMmioDevice *dev, uint32_t bar, uint64_t offset, uint32_t size,
                   uint64_t value);

/* Bus reset: registers to reset values and VRAM zeroed. */
void wj_mmio_reset(WjMmioDevice *dev);

/* Asserted MSI-X vectors (IRQ_STATUS & IRQ_ENABLE): WJ_MMIO_IRQ_* bits. */
uint32_t wj_mmio_irq_pending(const WjMmioDevice *dev);

/* Message of the last kernel fault into buf (NUL-terminated, truncated to len).
 * Returns the full message length, 0 if the last dispatch did not fault. */
size_t wj_mmio_last_fault(const WjMmioDevice *dev, char *buf, size_t len);

#define WJ_MMIO_DEV_ID 0x000
#define WJ_MMIO_DEV_VERSION 0x004
#define WJ_MMIO_DEV_CAPS 0x008
#define WJ_MMIO_VRAM_SIZE_LO 0x00C
#define WJ_MMIO_VRAM_SIZE_HI 0x010
#define WJ_MMIO_GLOBAL_CTRL 0x100
#define WJ_MMIO_GLOBAL_STATUS 0x104
#define WJ_MMIO_ERROR_STATUS 0x108
#define WJ_MMIO_IRQ_ENABLE 0x200
#define WJ_MMIO_IRQ_STATUS 0x204
#define WJ_MMIO_IRQ_ACK 0x208
#define WJ_MMIO_KERNEL_ADDR_LO 0x300
#define WJ_MMIO_KERNEL_ADDR_HI 0x304
#define WJ_MMIO_KERNEL_ARGS_LO 0x308
#define WJ_MMIO_KERNEL_ARGS_HI 0x30C
#define WJ_MMIO_GRID_DIM_X 0x310
#define WJ_MMIO_GRID_DIM_Y 0x314
#define WJ_MMIO_GRID_DIM_Z 0x318
#define WJ_MMIO_BLOCK_DIM_X 0x31C
#define WJ_MMIO_BLOCK_DIM_Y 0x320
#define WJ_MMIO_BLOCK_DIM_Z 0x324
#define WJ_MMIO_SHARED_MEM_SIZE 0x328
#define WJ_MMIO_DISPATCH 0x330
#define WJ_MMIO_DMA_SRC_LO 0x400
#define WJ_MMIO_DMA_SRC_HI 0x404
#define WJ_MMIO_DMA_DST_LO 0x408
#define WJ_MMIO_DMA_DST_HI 0x40C
#define WJ_MMIO_DMA_SIZE 0x410
#define WJ_MMIO_DMA_CTRL 0x414
#define WJ_MMIO_DMA_STATUS 0x418
#define WJ_MMIO_THREAD_ID_X 0x1000
#define WJ_MMIO_BLOCK_ID_X 0x1010
#define WJ_MMIO_WARP_ID 0x1020
#define WJ_MMIO_LANE_ID 0x1024
#define WJ_MMIO_BARRIER 0x2000
#define WJ_MMIO_THREAD_MASK 0x2004
#define WJ_MMIO_MSIX_TABLE 0xFE000
#define WJ_MMIO_MSIX_PBA 0xFF000

/* Register values and bits (runtime/src/mmio/regs.rs; runtime/tests/mmio_c_header.rs
 * checks each against it). */
#define WJ_MMIO_BAR_REGS 0u
#define WJ_MMIO_BAR_VRAM 2u
#define WJ_MMIO_BAR_DOORBELL 4u
#define WJ_MMIO_DEV_ID_VALUE 0x47505055u
#define WJ_MMIO_DEV_VERSION_VALUE 0x00010000u

/* GLOBAL_CTRL: ENABLE lets DISPATCH run; RESET (self-clearing) is a soft reset. */
#define WJ_MMIO_CTRL_ENABLE (1u << 0)
#define WJ_MMIO_CTRL_RESET (1u << 1)

/* GLOBAL_STATUS (read-only): READY when idle, ERROR while ERROR_STATUS != 0. */
#define WJ_MMIO_STATUS_READY (1u << 0)
#define WJ_MMIO_STATUS_BUSY (1u << 1)
#define WJ_MMIO_STATUS_ERROR (1u << 2)

/* ERROR_STATUS (write 1 to clear). */
#define WJ_MMIO_ERROR_INVALID_CMD (1u << 0)
#define WJ_MMIO_ERROR_VRAM_FAULT (1u << 1)
#define WJ_MMIO_ERROR_KERNEL_FAULT (1u << 2)
#define WJ_MMIO_ERROR_DMA_FAULT (1u << 3)

/* IRQ_ENABLE / IRQ_STATUS / IRQ_ACK (write 1 to clear) and wj_mmio_irq_pending:
 * bit n is MSI-X vector n. */
#define WJ_MMIO_IRQ_KERNEL_DONE (1u << 0)
#define WJ_MMIO_IRQ_DMA_DONE (1u << 1)
#define WJ_MMIO_IRQ_ERROR (1u << 2)
#define WJ_MMIO_IRQ_ALL (WJ_MMIO_IRQ_KERNEL_DONE | WJ_MMIO_IRQ_DMA_DONE | WJ_MMIO_IRQ_ERROR)

/* DMA_CTRL: START runs the copy; DIR 0 host -> VRAM, 1 VRAM -> host. */
#define WJ_MMIO_DMA_CTRL_START (1u << 0)
#define WJ_MMIO_DMA_CTRL_DIR (1u << 1)
#define WJ_MMIO_DMA_CTRL_IRQ_EN (1u << 2)

/* DMA_STATUS */
#define WJ_MMIO_DMA_STATUS_BUSY (1u << 0)
#define WJ_MMIO_DMA_STATUS_COMPLETE (1u << 1)
#define WJ_MMIO_DMA_STATUS_ERROR (1u << 2)

#ifdef __cplusplus
}
#endif

#endif /* WAVEJIT_MMIO_H */
