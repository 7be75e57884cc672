/*
 * wavejit AQL frontend: C ABI.
 *
 * HSA-style user-mode queues on an emulated agent. Layouts follow hsa.h /
 * amd_hsa_queue.h / amd_hsa_signal.h (HSA large model, little-endian):
 *   - a queue is an amd_queue_t-compatible block starting with hsa_queue_t
 *     (wj_aql_queue_t); write index at byte 56, read index at byte 128;
 *   - packets are 64 bytes; publish bytes 0-3 (header | setup << 16) last, with
 *     release order, then store the packet id into the doorbell signal;
 *   - a signal handle is the address of an amd_signal_t-compatible block
 *     (value at byte 8); waits take timeouts in nanoseconds.
 * kernel_object in a dispatch packet is the handle returned by
 * wj_aql_code_object_register for a wj_aql_code_object_t descriptor (opaque,
 * never reused; not the descriptor's address).
 *
 * Maintained by hand; runtime/tests/aql_c_header.rs checks it against
 * runtime/src/aql/ffi.rs (prototypes) and the Rust layouts (sizes, offsets,
 * constants) by compiling generated static assertions with the system cc.
 */
#ifndef WAVEJIT_AQL_H
#define WAVEJIT_AQL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes (hsa_status_t values) ---------------------------------- */
typedef uint32_t wj_aql_status_t;
#define WJ_AQL_STATUS_SUCCESS                          0x0u
#define WJ_AQL_STATUS_ERROR                            0x1000u
#define WJ_AQL_STATUS_ERROR_INVALID_ARGUMENT           0x1001u
#define WJ_AQL_STATUS_ERROR_INVALID_QUEUE_CREATION     0x1002u
#define WJ_AQL_STATUS_ERROR_INVALID_ALLOCATION         0x1003u
#define WJ_AQL_STATUS_ERROR_INVALID_SIGNAL             0x1006u
#define WJ_AQL_STATUS_ERROR_INVALID_QUEUE              0x1007u
#define WJ_AQL_STATUS_ERROR_OUT_OF_RESOURCES           0x1008u
#define WJ_AQL_STATUS_ERROR_INVALID_PACKET_FORMAT      0x1009u
#define WJ_AQL_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS     0x100Du
#define WJ_AQL_STATUS_ERROR_INVALID_ISA                0x100Fu
#define WJ_AQL_STATUS_ERROR_INVALID_CODE_OBJECT        0x1010u
#define WJ_AQL_STATUS_ERROR_EXCEPTION                  0x1016u
#define WJ_AQL_STATUS_ERROR_FATAL                      0x1026u
#define WJ_AQL_STATUS_ERROR_MEMORY_APERTURE_VIOLATION  41u
#define WJ_AQL_STATUS_ERROR_ILLEGAL_INSTRUCTION        42u
#define WJ_AQL_STATUS_ERROR_MEMORY_FAULT               43u
#define WJ_AQL_STATUS_ERROR_OUT_OF_REGISTERS           45u

/* ---- enums ---------------------------------------------------------------- */
typedef uint32_t wj_aql_memory_order_t;
#define WJ_AQL_MEMORY_ORDER_RELAXED      0u
#define WJ_AQL_MEMORY_ORDER_SCACQUIRE    1u
#define WJ_AQL_MEMORY_ORDER_SCRELEASE    2u
#define WJ_AQL_MEMORY_ORDER_SCACQ_SCREL  3u

/* hsa_signal_condition_t */
#define WJ_AQL_SIGNAL_CONDITION_EQ   0u
#define WJ_AQL_SIGNAL_CONDITION_NE   1u
#define WJ_AQL_SIGNAL_CONDITION_LT   2u
#define WJ_AQL_SIGNAL_CONDITION_GTE  3u
#define WJ_AQL_TIMEOUT_NONE          UINT64_MAX

/* packet header */
#define WJ_AQL_PACKET_TYPE_VENDOR_SPECIFIC  0u
#define WJ_AQL_PACKET_TYPE_INVALID          1u
#define WJ_AQL_PACKET_TYPE_KERNEL_DISPATCH  2u
#define WJ_AQL_PACKET_TYPE_BARRIER_AND      3u
#define WJ_AQL_PACKET_TYPE_AGENT_DISPATCH   4u
#define WJ_AQL_PACKET_TYPE_BARRIER_OR       5u
#define WJ_AQL_PACKET_HEADER_BARRIER               (1u << 8)
#define WJ_AQL_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE 9
#define WJ_AQL_PACKET_HEADER_SCRELEASE_FENCE_SCOPE 11
#define WJ_AQL_FENCE_SCOPE_NONE    0u
#define WJ_AQL_FENCE_SCOPE_AGENT   1u
#define WJ_AQL_FENCE_SCOPE_SYSTEM  2u

/* queues */
#define WJ_AQL_QUEUE_TYPE_MULTI   0u
#define WJ_AQL_QUEUE_TYPE_SINGLE  1u
#define WJ_AQL_QUEUE_FEATURE_KERNEL_DISPATCH 1u
#define WJ_AQL_PROCESSING_THREAD  0u /* a processor thread woken by the doorbell */
#define WJ_AQL_PROCESSING_MANUAL  1u /* nothing runs until wj_aql_queue_process */

/* wj_aql_queue_process outcomes */
#define WJ_AQL_OUTCOME_IDLE          0u
#define WJ_AQL_OUTCOME_STALLED       1u /* INVALID header at the read index */
#define WJ_AQL_OUTCOME_BARRIER_BIT   2u
#define WJ_AQL_OUTCOME_DEPENDENCIES  3u /* barrier packet waiting */
#define WJ_AQL_OUTCOME_ERROR         4u
#define WJ_AQL_OUTCOME_INACTIVE      5u
#define WJ_AQL_OUTCOME_SHUTDOWN      6u

/* agents */
#define WJ_AQL_ENGINE_JIT          0u
#define WJ_AQL_ENGINE_INTERPRETER  1u

/* code objects */
#define WJ_AQL_CODE_OBJECT_MAGIC    0x4F434A57u /* "WJCO" little-endian */
#define WJ_AQL_CODE_OBJECT_VERSION  1u
#define WJ_AQL_ISA_IR_TEXT  0u
#define WJ_AQL_ISA_AGX      1u
#define WJ_AQL_ISA_IR3      2u
#define WJ_AQL_ISA_RV32     3u
#define WJ_AQL_ARG_ABI_UNIFORM_COPY     0u /* kernarg bytes at uniform offset 0 */
#define WJ_AQL_ARG_ABI_UNIFORM_POINTER  1u /* kernarg address (u64) at uniform 0 */

/* ---- structures ----------------------------------------------------------- */
typedef struct wj_aql_agent_s wj_aql_agent_t; /* opaque */

typedef struct wj_aql_agent_config_s {
    uint32_t engine;              /* WJ_AQL_ENGINE_* */
    uint32_t max_group_segment;   /* bytes per workgroup */
    uint32_t max_private_segment; /* bytes per work-item */
    uint32_t max_workgroup_size;  /* work-items */
    uint32_t max_queue_size;      /* packets */
    uint32_t zero_size_is_noop;   /* non-zero: 0-sized dispatches complete as no-ops */
    uint64_t step_limit;          /* per-lane watchdog */
    /* Dispatch budget (0: no limit). Over the time limit a dispatch fails with
     * EXCEPTION, over the work-item count with INVALID_ARGUMENT. Defaults: 30000 ms
     * and 2^32 work-items, or WAVEJIT_DISPATCH_TIME_LIMIT_MS and
     * WAVEJIT_DISPATCH_MAX_WORK_ITEMS. */
    uint64_t dispatch_time_limit_ms;
    uint64_t max_work_items;
} wj_aql_agent_config_t;

/* hsa_queue_t; the first 40 bytes of a 256-byte amd_queue_t-compatible block. */
typedef struct wj_aql_queue_s {
    uint32_t type;
    uint32_t features;
    uint64_t base_address;    /* the ring */
    uint64_t doorbell_signal; /* signal handle */
    uint32_t size;            /* packets, power of two */
    uint32_t reserved1;
    uint64_t id;
} wj_aql_queue_t;

typedef struct wj_aql_kernel_dispatch_packet_s {
    uint16_t header;
    uint16_t setup; /* dimensions 1-3 */
    uint16_t workgroup_size_x, workgroup_size_y, workgroup_size_z;
    uint16_t reserved0;
    uint32_t grid_size_x, grid_size_y, grid_size_z; /* work-items */
    uint32_t private_segment_size;
    uint32_t group_segment_size;
    uint64_t kernel_object;
    uint64_t kernarg_address;
    uint64_t reserved2;
    uint64_t completion_signal;
} wj_aql_kernel_dispatch_packet_t;

typedef struct wj_aql_agent_dispatch_packet_s {
    uint16_t header;
    uint16_t type;
    uint32_t reserved0;
    uint64_t return_address;
    uint64_t arg[4];
    uint64_t reserved2;
    uint64_t completion_signal;
} wj_aql_agent_dispatch_packet_t;

/* barrier-AND and barrier-OR; a dep_signal of 0 is satisfied in AND, never in OR */
typedef struct wj_aql_barrier_packet_s {
    uint16_t header;
    uint16_t reserved0;
    uint32_t reserved1;
    uint64_t dep_signal[5];
    uint64_t reserved2;
    uint64_t completion_signal;
} wj_aql_barrier_packet_t;

/* The wavejit kernel-object descriptor (64 bytes, 64-byte aligned). */
typedef struct wj_aql_code_object_s {
    uint32_t magic;        /* WJ_AQL_CODE_OBJECT_MAGIC */
    uint16_t version;      /* WJ_AQL_CODE_OBJECT_VERSION */
    uint16_t isa;          /* WJ_AQL_ISA_* */
    uint32_t arg_abi;      /* WJ_AQL_ARG_ABI_* */
    uint32_t kernarg_size; /* bytes the kernel reads */
    uint64_t code;         /* host address of the code (copied at registration) */
    uint64_t code_size;
    uint64_t entry;        /* machine ISAs: entry byte offset; IR text: kernel index */
    uint32_t group_segment_fixed_size;
    uint32_t private_segment_fixed_size;
    uint32_t wave_size;    /* 0: the ISA's default */
    uint32_t reserved[3];  /* 0 */
} __attribute__((aligned(64))) wj_aql_code_object_t;

typedef void (*wj_aql_queue_callback_t)(wj_aql_status_t status, wj_aql_queue_t *queue,
                                        void *data);

/* ---- agents and memory ---------------------------------------------------- */
wj_aql_status_t wj_aql_agent_config_default(wj_aql_agent_config_t *config);
/* config may be NULL for the defaults. The agent runs IR text, RV32, ir3 and AGX
 * code objects (WJ_AQL_ISA_*). */
wj_aql_status_t wj_aql_agent_create(const wj_aql_agent_config_t *config, wj_aql_agent_t **out);
wj_aql_status_t wj_aql_agent_destroy(wj_aql_agent_t *agent);
/* Global memory kernels can access (kernargs and buffers); GPU address == host address. */
wj_aql_status_t wj_aql_memory_alloc(wj_aql_agent_t *agent, uint64_t size, void **out);
/* size bytes at the GPU address `address` (RV32 kernels address memory below 4 GiB);
 * *host receives the host pointer to read and write them. Free with
 * wj_aql_memory_free(agent, (void *)(uintptr_t)address). Overlap: INVALID_ALLOCATION. */
wj_aql_status_t wj_aql_memory_alloc_at(wj_aql_agent_t *agent, uint64_t address, uint64_t size,
                                       void **host);
wj_aql_status_t wj_aql_memory_free(wj_aql_agent_t *agent, void *ptr);

/* ---- code objects --------------------------------------------------------- */
/* Copies the descriptor and its code (code_size at most 64 MiB); every call
 * returns a new handle, so the descriptor memory may be freed or reused at once.
 * Unreadable descriptor or code memory: INVALID_CODE_OBJECT. */
wj_aql_status_t wj_aql_code_object_register(wj_aql_agent_t *agent,
                                            const wj_aql_code_object_t *desc,
                                            uint64_t *kernel_object);
wj_aql_status_t wj_aql_code_object_unregister(wj_aql_agent_t *agent, uint64_t kernel_object);

/* ---- queues --------------------------------------------------------------- */
wj_aql_status_t wj_aql_queue_create(wj_aql_agent_t *agent, uint32_t size, uint32_t type,
                                    uint32_t processing, wj_aql_queue_callback_t callback,
                                    void *data, wj_aql_queue_t **out);
/* Running dispatches are cancelled (they fail with EXCEPTION at their next
 * budget check), so this returns promptly even during a long dispatch. */
wj_aql_status_t wj_aql_queue_destroy(wj_aql_queue_t *queue);
wj_aql_status_t wj_aql_queue_inactivate(wj_aql_queue_t *queue);
/* outcome may be NULL; receives WJ_AQL_OUTCOME_* */
wj_aql_status_t wj_aql_queue_process(wj_aql_queue_t *queue, uint32_t *outcome);
/* *status = SUCCESS when the queue is not in the error state; text may be NULL */
wj_aql_status_t wj_aql_queue_get_error(wj_aql_queue_t *queue, wj_aql_status_t *status,
                                       char *text, size_t text_size);
/* reserve, wait for room, write 64 bytes (header last, release), ring; id may be NULL */
wj_aql_status_t wj_aql_queue_submit(wj_aql_queue_t *queue, const void *packet, uint64_t *id);
uint64_t wj_aql_queue_load_read_index(const wj_aql_queue_t *queue, wj_aql_memory_order_t order);
uint64_t wj_aql_queue_load_write_index(const wj_aql_queue_t *queue, wj_aql_memory_order_t order);
void wj_aql_queue_store_write_index(const wj_aql_queue_t *queue, uint64_t value,
                                    wj_aql_memory_order_t order);
uint64_t wj_aql_queue_add_write_index(const wj_aql_queue_t *queue, uint64_t n,
                                      wj_aql_memory_order_t order);
uint64_t wj_aql_queue_cas_write_index(const wj_aql_queue_t *queue, uint64_t expected,
                                      uint64_t value, wj_aql_memory_order_t order);

/* ---- signals (value ops on a dead handle do nothing and return INT64_MIN) --- */
wj_aql_status_t wj_aql_signal_create(int64_t initial, uint64_t *out);
wj_aql_status_t wj_aql_signal_destroy(uint64_t signal);
int64_t wj_aql_signal_load(uint64_t signal, wj_aql_memory_order_t order);
void wj_aql_signal_store(uint64_t signal, int64_t value, wj_aql_memory_order_t order);
void wj_aql_signal_silent_store(uint64_t signal, int64_t value, wj_aql_memory_order_t order);
int64_t wj_aql_signal_exchange(uint64_t signal, int64_t value, wj_aql_memory_order_t order);
int64_t wj_aql_signal_cas(uint64_t signal, int64_t expected, int64_t value,
                          wj_aql_memory_order_t order);
int64_t wj_aql_signal_add(uint64_t signal, int64_t value, wj_aql_memory_order_t order);
int64_t wj_aql_signal_sub(uint64_t signal, int64_t value, wj_aql_memory_order_t order);
int64_t wj_aql_signal_and(uint64_t signal, int64_t value, wj_aql_memory_order_t order);
int64_t wj_aql_signal_or(uint64_t signal, int64_t value, wj_aql_memory_order_t order);
int64_t wj_aql_signal_xor(uint64_t signal, int64_t value, wj_aql_memory_order_t order);
/* returns the value observed last; it need not satisfy the condition (loop) */
int64_t wj_aql_signal_wait(uint64_t signal, uint32_t condition, int64_t compare,
                           uint64_t timeout_ns);

#ifdef __cplusplus
}
#endif

#endif /* WAVEJIT_AQL_H */
