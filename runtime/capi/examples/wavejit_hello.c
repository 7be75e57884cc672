/* libwavejit from C: the KGSL driver runs a PM4 command that writes GPU memory,
 * and the MMIO device reports its identity and status.
 *
 *   cc wavejit_hello.c $(pkg-config --cflags --libs wavejit) -o wavejit_hello
 *
 * Prints three lines and exits 0, or names the step that failed and exits 1. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <wavejit_kgsl.h>
#include <wavejit_mmio.h>

#define CP_MEM_WRITE 0x3du

static int fail(const char *step, int err) {
    fprintf(stderr, "%s failed: %s\n", step, strerror(err < 0 ? -err : err));
    return 1;
}

/* 1 if v has an even number of set bits (the PM4 header fields carry odd parity). */
static uint32_t parity_bit(uint32_t v) {
    uint32_t ones = 0;
    for (; v; v &= v - 1) ones++;
    return (ones & 1) ^ 1;
}

/* A type-7 packet header: opcode and payload dword count, each with its parity bit. */
static uint32_t pkt7(uint32_t op, uint32_t count) {
    return 0x70000000u | count | parity_bit(count) << 15 | (op & 0x7f) << 16 |
           parity_bit(op) << 23;
}

static int kgsl_demo(void) {
    int fd = wj_kgsl_open();
    if (fd < 0) return fail("wj_kgsl_open", fd);

    struct wj_kgsl_devinfo info = {0};
    struct wj_kgsl_device_getproperty prop = {0};
    prop.type = WJ_KGSL_PROP_DEVICE_INFO;
    prop.value = (uint64_t)(uintptr_t)&info;
    prop.sizebytes = sizeof info;
    int err = wj_kgsl_ioctl(fd, WJ_KGSL_IOCTL_DEVICE_GETPROPERTY, &prop);
    if (err) return fail("GETPROPERTY", err);
    printf("kgsl: chip_id %#x\n", info.chip_id);

    /* One page: the command buffer at the start, the result at 0x100. */
    struct wj_kgsl_gpuobj_alloc alloc = {0};
    alloc.size = 4096;
    alloc.flags = WJ_KGSL_MEMFLAGS_USE_CPU_MAP;
    if ((err = wj_kgsl_ioctl(fd, WJ_KGSL_IOCTL_GPUOBJ_ALLOC, &alloc))) return fail("GPUOBJ_ALLOC", err);
    uint32_t *page = mmap(NULL, alloc.mmapsize, PROT_READ | PROT_WRITE, MAP_SHARED,
                          wj_kgsl_mmap_fd(fd), (off_t)WJ_KGSL_MMAP_OFFSET(alloc.id));
    if (page == MAP_FAILED) return fail("mmap", errno);

    /* With USE_CPU_MAP the GPU address of the object is where it is mapped. */
    uint64_t result = (uint64_t)(uintptr_t)&page[0x40];
    uint32_t ib[] = {pkt7(CP_MEM_WRITE, 3), (uint32_t)result, (uint32_t)(result >> 32), 0xcafe};
    memcpy(page, ib, sizeof ib);

    struct wj_kgsl_drawctxt_create ctx = {0};
    if ((err = wj_kgsl_ioctl(fd, WJ_KGSL_IOCTL_DRAWCTXT_CREATE, &ctx))) return fail("DRAWCTXT_CREATE", err);
    struct wj_kgsl_command_object cmd = {0};
    cmd.gpuaddr = (uint64_t)(uintptr_t)page;
    cmd.size = sizeof ib;
    cmd.flags = WJ_KGSL_CMDLIST_IB;
    struct wj_kgsl_gpu_command submit = {0};
    submit.cmdlist = (uint64_t)(uintptr_t)&cmd;
    submit.cmdsize = sizeof cmd;
    submit.numcmds = 1;
    submit.context_id = ctx.drawctxt_id;
    if ((err = wj_kgsl_ioctl(fd, WJ_KGSL_IOCTL_GPU_COMMAND, &submit))) return fail("GPU_COMMAND", err);
    struct wj_kgsl_device_waittimestamp_ctxtid wait = {ctx.drawctxt_id, submit.timestamp, 1000};
    if ((err = wj_kgsl_ioctl(fd, WJ_KGSL_IOCTL_DEVICE_WAITTIMESTAMP_CTXTID, &wait)))
        return fail("WAITTIMESTAMP", err);
    printf("kgsl: CP_MEM_WRITE wrote %#x\n", page[0x40]);

    munmap(page, alloc.mmapsize);
    if ((err = wj_kgsl_close(fd))) return fail("wj_kgsl_close", err);
    return 0;
}

static int mmio_demo(void) {
    WjMmioDevice *dev = wj_mmio_new(0);
    if (!dev) return fail("wj_mmio_new", ENOMEM);
    uint32_t id = (uint32_t)wj_mmio_read(dev, WJ_MMIO_BAR_REGS, WJ_MMIO_DEV_ID, 4);
    wj_mmio_write(dev, WJ_MMIO_BAR_REGS, WJ_MMIO_GLOBAL_CTRL, 4, WJ_MMIO_CTRL_ENABLE);
    uint32_t status = (uint32_t)wj_mmio_read(dev, WJ_MMIO_BAR_REGS, WJ_MMIO_GLOBAL_STATUS, 4);
    wj_mmio_write(dev, WJ_MMIO_BAR_VRAM, 0x100, 8, 0x0123456789abcdefull);
    uint64_t vram = wj_mmio_read(dev, WJ_MMIO_BAR_VRAM, 0x100, 8);
    printf("mmio: dev_id %#x ready %d vram %#llx\n", id, (status & WJ_MMIO_STATUS_READY) != 0,
           (unsigned long long)vram);
    wj_mmio_free(dev);
    return id == WJ_MMIO_DEV_ID_VALUE ? 0 : fail("DEV_ID", EINVAL);
}

int main(void) {
    return kgsl_demo() || mmio_demo();
}
