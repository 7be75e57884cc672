"""wavejit from Python.

- :class:`Agent` runs RV32, ir3 and AGX kernels (and wavejit IR text) on numpy
  data through libwavejit.so's AQL C ABI (ctypes).
- ``python -m wavejit preload`` prints the path of the LD_PRELOAD shim that
  serves ``/dev/kgsl-3d0``, e.g.
  ``LD_PRELOAD=$(python -m wavejit preload) DEV=QCOM:IR3 python app.py``.
- :mod:`wavejit.mockgpu_qcom` is a ``MOCK+QCOM`` driver for tinygrad's
  ``test/mockgpu``.
"""

from typing import Any

from ._native import lib_path, preload_path

_API = {"Agent", "Buffer", "Engine", "Isa", "Kernel", "WavejitError", "pack_args"}


def __getattr__(name: str) -> Any:
    # The kernel API needs numpy; `python -m wavejit preload` does not import it.
    if name in _API:
        from . import _api

        return getattr(_api, name)
    raise AttributeError(f"module 'wavejit' has no attribute {name!r}")

__all__ = [
    "Agent",
    "Buffer",
    "Engine",
    "Isa",
    "Kernel",
    "WavejitError",
    "lib_path",
    "pack_args",
    "preload_path",
]
