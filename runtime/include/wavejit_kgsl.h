/* wavejit: the fake KGSL driver (Adreno a630), embedded.
 *
 * Two ways to use it:
 *  - LD_PRELOAD=libwavejit_kgsl.so: open("/dev/kgsl-3d0") is served by wavejit,
 *    ioctl()/close() on that fd go to the driver, mmap(fd, id << 12) maps objects.
 *  - Link libwavejit_kgsl.so and call the functions below directly.
 * Structs and request numbers are those of msm_kgsl.h (LP64).
 */
#ifndef WAVEJIT_KGSL_H
#define WAVEJIT_KGSL_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct WjKgsl WjKgsl;

/* A new device; NULL on failure with errno set. */
WjKgsl *wj_kgsl_open(void);

/* One ioctl (e.g. IOCTL_KGSL_GPUOBJ_ALLOC with a struct kgsl_gpuobj_alloc *).
 * Returns 0, or a negative errno exactly as the kernel driver would report. */
int wj_kgsl_ioctl(WjKgsl *handle, unsigned long request, void *argp);

/* The fd to mmap objects from (object id at offset id << 12). Do not close it. */
int wj_kgsl_mmap_fd(WjKgsl *handle);

/* Releases the device. */
void wj_kgsl_close(WjKgsl *handle);

#ifdef __cplusplus
}
#endif

#endif /* WAVEJIT_KGSL_H */
