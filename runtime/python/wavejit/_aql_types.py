"""ctypes layouts of wavejit_aql.h (HSA large model, little-endian)."""

from __future__ import annotations

import ctypes

u16, u32, u64 = ctypes.c_uint16, ctypes.c_uint32, ctypes.c_uint64

CODE_OBJECT_MAGIC = 0x4F434A57  # "WJCO"
CODE_OBJECT_VERSION = 1
ARG_ABI_UNIFORM_COPY = 0
PACKET_TYPE_KERNEL_DISPATCH = 2
PACKET_HEADER_BARRIER = 1 << 8
FENCE_SCOPE_SYSTEM = 2
QUEUE_TYPE_SINGLE = 1
PROCESSING_MANUAL = 1
OUTCOME_IDLE = 0
MEMORY_ORDER_SCACQUIRE = 1

STATUS_NAMES = {
    0x0: "SUCCESS",
    0x1000: "ERROR",
    0x1001: "ERROR_INVALID_ARGUMENT",
    0x1002: "ERROR_INVALID_QUEUE_CREATION",
    0x1003: "ERROR_INVALID_ALLOCATION",
    0x1006: "ERROR_INVALID_SIGNAL",
    0x1007: "ERROR_INVALID_QUEUE",
    0x1008: "ERROR_OUT_OF_RESOURCES",
    0x1009: "ERROR_INVALID_PACKET_FORMAT",
    0x100D: "ERROR_INCOMPATIBLE_ARGUMENTS",
    0x100F: "ERROR_INVALID_ISA",
    0x1010: "ERROR_INVALID_CODE_OBJECT",
    0x1016: "ERROR_EXCEPTION",
    0x1026: "ERROR_FATAL",
    41: "ERROR_MEMORY_APERTURE_VIOLATION",
    42: "ERROR_ILLEGAL_INSTRUCTION",
    43: "ERROR_MEMORY_FAULT",
    45: "ERROR_OUT_OF_REGISTERS",
}


class AgentConfig(ctypes.Structure):
    _fields_ = [
        ("engine", u32),
        ("max_group_segment", u32),
        ("max_private_segment", u32),
        ("max_workgroup_size", u32),
        ("max_queue_size", u32),
        ("zero_size_is_noop", u32),
        ("step_limit", u64),
        ("dispatch_time_limit_ms", u64),
        ("max_work_items", u64),
    ]


class KernelDispatchPacket(ctypes.Structure):
    _fields_ = [
        ("header", u16),
        ("setup", u16),
        ("workgroup_size_x", u16),
        ("workgroup_size_y", u16),
        ("workgroup_size_z", u16),
        ("reserved0", u16),
        ("grid_size_x", u32),
        ("grid_size_y", u32),
        ("grid_size_z", u32),
        ("private_segment_size", u32),
        ("group_segment_size", u32),
        ("kernel_object", u64),
        ("kernarg_address", u64),
        ("reserved2", u64),
        ("completion_signal", u64),
    ]


class CodeObject(ctypes.Structure):
    _fields_ = [
        ("magic", u32),
        ("version", u16),
        ("isa", u16),
        ("arg_abi", u32),
        ("kernarg_size", u32),
        ("code", u64),
        ("code_size", u64),
        ("entry", u64),
        ("group_segment_fixed_size", u32),
        ("private_segment_fixed_size", u32),
        ("wave_size", u32),
        ("reserved", u32 * 3),
    ]


assert ctypes.sizeof(KernelDispatchPacket) == 64
assert ctypes.sizeof(CodeObject) == 64
assert ctypes.sizeof(AgentConfig) == 48
