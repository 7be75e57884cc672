/* wavejit: the fake KGSL driver (Adreno a630), embedded.
 *
 * Two ways to use it:
 *  - Link libwavejit (pkg-config --cflags --libs wavejit) and call wj_kgsl_*
 *    below; nothing in the process is interposed.
 *  - LD_PRELOAD=libwavejit_kgsl.so: open("/dev/kgsl-3d0") is served by wavejit,
 *    ioctl()/close() on that fd go to the driver, stat()/access() see the node.
 *    The shim exports the wj_kgsl_* functions too, on the same descriptor table.
 *
 * Objects are mapped with the client's own mmap: object `id` at offset
 * WJ_KGSL_MMAP_OFFSET(id) of wj_kgsl_mmap_fd(fd), MAP_SHARED.
 *
 * The request numbers and argument structs are those of the kernel's msm_kgsl.h
 * for the requests the driver implements, with the kernel's field names and its
 * LP64 layout (pointers and sizes as uint64_t, padding explicit), so this header
 * is all a client needs; they are checked against the driver by
 * runtime/tests/kgsl_c_header.rs. Other requests fail with -ENOTTY.
 */
#ifndef WAVEJIT_KGSL_H
#define WAVEJIT_KGSL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opens a new device. Returns its descriptor (>= 0, close-on-exec), or a
 * negative errno. It is a real descriptor, for mmap (read/write/poll on it do
 * nothing useful), and is released with wj_kgsl_close, not close(). */
int wj_kgsl_open(void);

/* One ioctl on a descriptor from wj_kgsl_open: request is a WJ_KGSL_IOCTL_*
 * value and argp points to its struct (as for ioctl(2)). Returns 0, or a
 * negative errno exactly as the kernel driver reports it (-EBADF for a
 * descriptor wj_kgsl_open did not return, -ENOTTY for an unknown request,
 * -EFAULT when argp or an address in the struct is not mapped: copies go
 * through the kernel, so a bad pointer is an error, not a crash). The driver
 * writes back the struct and the outputs its fields point to, as the kernel
 * driver does. Calls on one descriptor are serialised; descriptors are
 * independent devices. */
int wj_kgsl_ioctl(int fd, unsigned long request, void *argp);

/* The descriptor to mmap objects from (it is fd itself), or -EBADF. Do not
 * close it apart from wj_kgsl_close(fd). */
int wj_kgsl_mmap_fd(int fd);

/* Releases the device (contexts, objects) and closes fd. Existing mappings
 * stay valid until unmapped. Returns 0 or a negative errno (-EBADF for a
 * descriptor wj_kgsl_open did not return, which is left open). */
int wj_kgsl_close(int fd);

#define WJ_KGSL_DEVICE_PATH "/dev/kgsl-3d0"
#define WJ_KGSL_MMAP_OFFSET(id) ((uint64_t)(id) << 12)

/* Request numbers: _IOC(dir, 0x09, nr, sizeof(struct)). */
#define WJ_KGSL_IOCTL_DEVICE_GETPROPERTY 0xc0180902UL
#define WJ_KGSL_IOCTL_DEVICE_WAITTIMESTAMP_CTXTID 0x400c0907UL
#define WJ_KGSL_IOCTL_DRAWCTXT_CREATE 0xc0080913UL
#define WJ_KGSL_IOCTL_DRAWCTXT_DESTROY 0x40040914UL
#define WJ_KGSL_IOCTL_MAP_USER_MEM 0xc0300915UL
#define WJ_KGSL_IOCTL_CMDSTREAM_READTIMESTAMP_CTXTID 0xc00c0916UL
#define WJ_KGSL_IOCTL_SHAREDMEM_FREE 0x40080921UL
#define WJ_KGSL_IOCTL_SETPROPERTY 0x40180932UL
#define WJ_KGSL_IOCTL_TIMESTAMP_EVENT 0xc0200933UL
#define WJ_KGSL_IOCTL_GPUMEM_ALLOC_ID 0xc0300934UL
#define WJ_KGSL_IOCTL_GPUMEM_FREE_ID 0xc0080935UL
#define WJ_KGSL_IOCTL_GPUOBJ_ALLOC 0xc0300945UL
#define WJ_KGSL_IOCTL_GPUOBJ_FREE 0x40200946UL
#define WJ_KGSL_IOCTL_GPUOBJ_INFO 0xc0300947UL
#define WJ_KGSL_IOCTL_GPUOBJ_SYNC 0x40100949UL
#define WJ_KGSL_IOCTL_GPU_COMMAND 0xc040094aUL

/* GETPROPERTY / SETPROPERTY types. */
#define WJ_KGSL_PROP_DEVICE_INFO 0x1u
#define WJ_KGSL_PROP_VERSION 0x8u
#define WJ_KGSL_PROP_PWR_CONSTRAINT 0x12u

/* chip_id of PROP_DEVICE_INFO: Adreno 630 v2 (core 6, major 3, minor 0, patch 1). */
#define WJ_KGSL_CHIP_ID_A630 0x06030001u

/* GPUOBJ_ALLOC / MAP_USER_MEM flags. USE_CPU_MAP: the object's GPU address is
 * the address the client maps it at. GPUREADONLY: GPU writes to it fault. */
#define WJ_KGSL_MEMFLAGS_USE_CPU_MAP 0x10000000ull
#define WJ_KGSL_MEMFLAGS_GPUREADONLY 0x01000000ull

/* wj_kgsl_command_object.flags of a GPU_COMMAND cmdlist entry: an IB. */
#define WJ_KGSL_CMDLIST_IB 1u
/* wj_kgsl_cmdstream_readtimestamp_ctxtid.type */
#define WJ_KGSL_CMDSTREAM_TIMESTAMP_RETIRED 2u

struct wj_kgsl_device_getproperty { /* also SETPROPERTY */
    uint32_t type;
    uint32_t __pad;
    uint64_t value; /* address of the property's struct */
    uint64_t sizebytes;
};

struct wj_kgsl_devinfo { /* PROP_DEVICE_INFO */
    uint32_t device_id;
    uint32_t chip_id;
    uint32_t mmu_enabled;
    uint32_t __pad;
    uint64_t gmem_gpubaseaddr;
    uint32_t gpu_id;
    uint32_t __pad2;
    uint64_t gmem_sizebytes;
};

struct wj_kgsl_device_constraint { /* PROP_PWR_CONSTRAINT */
    uint32_t type;
    uint32_t context_id;
    uint64_t data;
    uint64_t size;
};

struct wj_kgsl_gpuobj_alloc {
    uint64_t size;
    uint64_t flags;
    uint64_t va_len;
    uint64_t mmapsize;
    uint32_t id;
    uint32_t metadata_len;
    uint64_t metadata;
};

struct wj_kgsl_gpuobj_free {
    uint64_t flags;
    uint64_t priv;
    uint32_t id;
    uint32_t type;
    uint32_t len;
    uint32_t __pad;
};

struct wj_kgsl_gpuobj_info {
    uint64_t gpuaddr;
    uint64_t flags;
    uint64_t size;
    uint64_t va_len;
    uint64_t va_addr;
    uint32_t id;
    uint32_t __pad;
};

struct wj_kgsl_gpuobj_sync {
    uint64_t objs;
    uint32_t obj_len;
    uint32_t count;
};

struct wj_kgsl_gpumem_alloc_id {
    uint32_t id;
    uint32_t flags;
    uint64_t size;
    uint64_t mmapsize;
    uint64_t gpuaddr;
    uint64_t __pad[2];
};

struct wj_kgsl_gpumem_free_id {
    uint32_t id;
    uint32_t __pad;
};

struct wj_kgsl_drawctxt_create {
    uint32_t flags;
    uint32_t drawctxt_id;
};

struct wj_kgsl_drawctxt_destroy {
    uint32_t drawctxt_id;
};

struct wj_kgsl_command_object {
    uint64_t offset;
    uint64_t gpuaddr;
    uint64_t size;
    uint32_t flags;
    uint32_t id;
};

struct wj_kgsl_gpu_command {
    uint64_t flags;
    uint64_t cmdlist; /* address of wj_kgsl_command_object[numcmds] */
    uint32_t cmdsize; /* sizeof(struct wj_kgsl_command_object) */
    uint32_t numcmds;
    uint64_t objlist;
    uint32_t objsize;
    uint32_t numobjs;
    uint64_t synclist;
    uint32_t syncsize;
    uint32_t numsyncs;
    uint32_t context_id;
    uint32_t timestamp; /* out */
};

struct wj_kgsl_device_waittimestamp_ctxtid {
    uint32_t context_id;
    uint32_t timestamp;
    uint32_t timeout; /* ms */
};

struct wj_kgsl_cmdstream_readtimestamp_ctxtid {
    uint32_t context_id;
    uint32_t type;
    uint32_t timestamp; /* out */
};

struct wj_kgsl_map_user_mem {
    int32_t fd;
    uint32_t __pad;
    uint64_t gpuaddr; /* out */
    uint64_t len;
    uint64_t offset;
    uint64_t hostptr;
    uint32_t memtype;
    uint32_t flags;
};

struct wj_kgsl_sharedmem_free {
    uint64_t gpuaddr;
};

struct wj_kgsl_timestamp_event {
    int32_t type;
    uint32_t timestamp;
    uint32_t context_id;
    uint32_t __pad;
    uint64_t priv;
    uint64_t len;
};

#ifdef __cplusplus
}
#endif

#endif /* WAVEJIT_KGSL_H */
