"""A ``MOCK+QCOM`` driver for tinygrad's ``test/mockgpu``: ``/dev/kgsl-3d0``
served by wavejit's KGSL driver through libwavejit.so (no LD_PRELOAD).

It follows the conventions of tinygrad's test/mockgpu/driver.py: a
``VirtDriver`` whose ``tracked_files`` name the device node, and a
``VirtFileDesc`` per open descriptor receiving ``ioctl(fd, req, argp)`` and
``mmap(...)``. Each open is a ``wj_kgsl_open`` device; its descriptor is a real
one (the driver's memfd), so mappings are the client's own ``mmap`` of it and
the memory the emulated GPU reads is the memory tinygrad writes.

Registration, in a tinygrad checkout with this wheel installed: in
``test/mockgpu/mockgpu.py`` add the import and the one dict entry::

    from wavejit.mockgpu_qcom import QCOMDriver
    ... {"MOCK+NV": NVDriver, "MOCK+QCOM": QCOMDriver}.get(...)

then run e.g. ``DEV=MOCK+QCOM:IR3 python -m pytest test/test_tiny.py``.

tinygrad's ``test.mockgpu.driver`` is imported when this module is, if it can
be (inside a tinygrad checkout); elsewhere this module still imports, with
stand-in base classes, so the C-ABI path can be used and tested on its own.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

from ._native import lib

try:  # inside a tinygrad checkout: the real base classes
    from test.mockgpu.driver import VirtDriver, VirtFile, VirtFileDesc  # type: ignore[import-not-found]
except ImportError:  # the same interface, for use without tinygrad's test tree

    class VirtFileDesc:  # type: ignore[no-redef]
        def __init__(self, fd: int):
            self.fd, self.off = fd, 0

        def close(self, fd: int) -> int:
            return 0

    class VirtFile:  # type: ignore[no-redef]
        def __init__(self, path: str, fdcls: Any):
            self.path, self.fdcls = path, fdcls

    class VirtDriver:  # type: ignore[no-redef]
        def __init__(self) -> None:
            self.tracked_files: list[Any] = []
            self.tracked_addresses: list[Any] = []


DEVICE_PATH = "/dev/kgsl-3d0"

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
MAP_FAILED = ctypes.c_void_p(-1).value


def _oserror(neg_errno: int, what: str) -> OSError:
    return OSError(-neg_errno, f"{what}: {os.strerror(-neg_errno)}")


class KGSLFileDesc(VirtFileDesc):
    """One open ``/dev/kgsl-3d0``: a device of wavejit's KGSL driver."""

    def __init__(self, fd: int):
        super().__init__(fd)

    def ioctl(self, fd: int, request: int, argp: int) -> int:
        """``wj_kgsl_ioctl``; a failure raises ``OSError`` with the driver's errno,
        as ``fcntl.ioctl`` on the real node does (tinygrad's ``_gpu_map`` relies
        on ``EFAULT`` arriving that way)."""
        rc = lib().wj_kgsl_ioctl(fd, request, argp)
        if rc < 0:
            raise _oserror(rc, f"kgsl ioctl {request:#x}")
        return 0

    def mmap(self, start: int, size: int, prot: int, flags: int, fd: int, offset: int) -> int:
        """Maps object ``offset >> 12`` from ``wj_kgsl_mmap_fd`` with the process's mmap."""
        mfd = lib().wj_kgsl_mmap_fd(fd)
        if mfd < 0:
            raise _oserror(mfd, "wj_kgsl_mmap_fd")
        addr = _libc.mmap(start or None, size, prot, flags, mfd, offset)
        if addr is None or addr == MAP_FAILED:
            e = ctypes.get_errno()
            raise OSError(e, f"mmap of {size} bytes at offset {offset:#x}: {os.strerror(e)}")
        return addr

    def close(self, fd: int) -> int:
        rc = lib().wj_kgsl_close(fd)
        if rc < 0:
            raise _oserror(rc, "wj_kgsl_close")
        return 0


class QCOMDriver(VirtDriver):
    """Tracks ``/dev/kgsl-3d0``; every open is a new device (as a new open of
    the real node is a new KGSL process context)."""

    def __init__(self) -> None:
        super().__init__()
        self.tracked_files += [VirtFile(DEVICE_PATH, KGSLFileDesc)]

    def open(self, name: str, flags: int, mode: int, virtfile: Any) -> KGSLFileDesc:
        fd = lib().wj_kgsl_open()
        if fd < 0:
            raise _oserror(fd, f"open {name}")
        return virtfile.fdcls(fd)


__all__ = ["DEVICE_PATH", "KGSLFileDesc", "QCOMDriver"]

