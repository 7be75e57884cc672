"""Locating and loading the two libraries bundled in the wheel.

libwavejit.so is the C API (runtime/include/wavejit_*.h) and is loaded with
ctypes; libwavejit_kgsl.so is the LD_PRELOAD shim, which is only ever named (a
shim loaded after start-up interposes nothing), never loaded here.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

_HERE = Path(__file__).resolve().parent

#: File name of the C API library in the package.
LIB_NAME = "libwavejit.so"
#: File name of the LD_PRELOAD shim in the package.
PRELOAD_NAME = "libwavejit_kgsl.so"


def _bundled(name: str) -> str:
    path = _HERE / name
    if not path.is_file():
        # A package imported from the source tree before build_wheel.sh copied
        # the libraries in, or a wheel built without them.
        raise FileNotFoundError(
            f"{path} is missing: build the wheel with runtime/python/build_wheel.sh, "
            "which copies the cargo-built libraries into the package"
        )
    return str(path)


def lib_path() -> str:
    """Absolute path of the bundled libwavejit.so (``WAVEJIT_LIB`` overrides it)."""
    return os.environ.get("WAVEJIT_LIB") or _bundled(LIB_NAME)


def preload_path() -> str:
    """Absolute path of the bundled LD_PRELOAD shim libwavejit_kgsl.so."""
    return _bundled(PRELOAD_NAME)


_lib: ctypes.CDLL | None = None


def lib() -> ctypes.CDLL:
    """libwavejit.so, loaded once, with the prototypes this package calls."""
    global _lib
    if _lib is None:
        _lib = _declare(ctypes.CDLL(lib_path()))
    return _lib


def _declare(l: ctypes.CDLL) -> ctypes.CDLL:
    from . import _aql_types as t

    vp, u32, u64, i64 = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int64
    sigs = {
        # wavejit_aql.h
        "wj_aql_agent_config_default": (u32, [ctypes.POINTER(t.AgentConfig)]),
        "wj_aql_agent_create": (u32, [ctypes.POINTER(t.AgentConfig), ctypes.POINTER(vp)]),
        "wj_aql_agent_destroy": (u32, [vp]),
        "wj_aql_memory_alloc": (u32, [vp, u64, ctypes.POINTER(vp)]),
        "wj_aql_memory_alloc_at": (u32, [vp, u64, u64, ctypes.POINTER(vp)]),
        "wj_aql_memory_free": (u32, [vp, vp]),
        "wj_aql_code_object_register": (u32, [vp, vp, ctypes.POINTER(u64)]),
        "wj_aql_code_object_unregister": (u32, [vp, u64]),
        "wj_aql_queue_create": (u32, [vp, u32, u32, u32, vp, vp, ctypes.POINTER(vp)]),
        "wj_aql_queue_destroy": (u32, [vp]),
        "wj_aql_queue_process": (u32, [vp, ctypes.POINTER(u32)]),
        "wj_aql_queue_get_error": (u32, [vp, ctypes.POINTER(u32), ctypes.c_char_p, ctypes.c_size_t]),
        "wj_aql_queue_submit": (u32, [vp, vp, ctypes.POINTER(u64)]),
        "wj_aql_signal_create": (u32, [i64, ctypes.POINTER(u64)]),
        "wj_aql_signal_destroy": (u32, [u64]),
        "wj_aql_signal_load": (i64, [u64, u32]),
        # wavejit_kgsl.h
        "wj_kgsl_open": (ctypes.c_int, []),
        "wj_kgsl_ioctl": (ctypes.c_int, [ctypes.c_int, ctypes.c_ulong, vp]),
        "wj_kgsl_mmap_fd": (ctypes.c_int, [ctypes.c_int]),
        "wj_kgsl_close": (ctypes.c_int, [ctypes.c_int]),
    }
    for name, (restype, argtypes) in sigs.items():
        f = getattr(l, name)
        f.restype, f.argtypes = restype, argtypes
    return l
