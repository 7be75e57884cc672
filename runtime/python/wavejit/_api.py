"""Running kernels of each ISA on numpy arrays, over libwavejit.so's AQL C ABI.

An :class:`Agent` is an emulated GPU with its own memory. Kernels are loaded
from their machine code (:meth:`Agent.load`) and dispatched on a queue that this
thread processes (``WJ_AQL_PROCESSING_MANUAL``), so a dispatch has finished, or
raised :class:`WavejitError`, when :meth:`Agent.dispatch` returns.
"""

from __future__ import annotations

import ctypes
import enum
import struct
from collections.abc import Sequence
from typing import Union

import numpy as np
import numpy.typing as npt

from . import _aql_types as t
from ._native import lib


class WavejitError(RuntimeError):
    """A call into libwavejit failed.

    ``status`` is the ``wj_aql_status_t`` value (``WJ_AQL_STATUS_*``),
    ``status_name`` its name without the prefix, and ``message`` the library's
    description of the failure when it gave one.
    """

    def __init__(self, status: int, message: str):
        self.status = status
        self.status_name = t.STATUS_NAMES.get(status, "UNKNOWN")
        self.message = message
        super().__init__(f"{message} (WJ_AQL_STATUS_{self.status_name}, {status:#x})")


def _check(status: int, what: str) -> None:
    if status != 0:
        raise WavejitError(status, what)


class Isa(enum.IntEnum):
    """The ISA of a kernel's code (``WJ_AQL_ISA_*``)."""

    IR_TEXT = 0  #: wavejit IR as text (a kernel index as entry)
    AGX = 1  #: Apple AGX machine code
    IR3 = 2  #: Qualcomm Adreno a6xx ir3 machine code
    RV32 = 3  #: RV32IM SIMT code


class Engine(enum.IntEnum):
    """How the agent executes kernels (``WJ_AQL_ENGINE_*``)."""

    JIT = 0
    INTERPRETER = 1


class Buffer:
    """Agent memory: ``address`` is what kernels use, ``nbytes`` its size.

    The host sees the same bytes at ``host`` (equal to ``address`` except for
    memory placed with ``Agent.alloc(address=...)``). Valid until freed or the
    agent is closed.
    """

    def __init__(self, agent: "Agent", address: int, host: int, nbytes: int):
        self.agent, self.address, self.host, self.nbytes = agent, address, host, nbytes
        self.freed = False

    def _check_live(self) -> None:
        # Touching freed or closed memory would be a use-after-free in the library.
        if self.freed:
            raise ValueError(f"{self!r} was freed")
        self.agent._live()

    def view(self, dtype: npt.DTypeLike = np.uint8) -> np.ndarray:
        """A numpy array over the buffer's memory (no copy): writes reach the agent.
        Do not use it after the buffer is freed or the agent closed."""
        self._check_live()
        dt = np.dtype(dtype)
        raw = (ctypes.c_char * self.nbytes).from_address(self.host)
        return np.frombuffer(memoryview(raw), dtype=dt, count=self.nbytes // dt.itemsize)

    def read(self, dtype: npt.DTypeLike = np.uint8) -> np.ndarray:
        """A copy of the buffer's contents as ``dtype``."""
        return self.view(dtype).copy()

    def write(self, data: np.ndarray | bytes, offset: int = 0) -> None:
        """Copies ``data``'s bytes into the buffer at byte ``offset``."""
        raw = data.tobytes() if isinstance(data, np.ndarray) else bytes(data)
        if offset < 0 or offset + len(raw) > self.nbytes:
            raise ValueError(f"{len(raw)} bytes at offset {offset} do not fit in a {self.nbytes}-byte buffer")
        self._check_live()
        ctypes.memmove(self.host + offset, raw, len(raw))

    def __repr__(self) -> str:
        return f"Buffer(address={self.address:#x}, nbytes={self.nbytes})"


class Kernel:
    """A loaded kernel: its ISA and the ``kernel_object`` handle of the agent."""

    def __init__(self, agent: "Agent", isa: Isa, handle: int, kernarg_size: int):
        self.agent, self.isa, self.handle, self.kernarg_size = agent, isa, handle, kernarg_size

    def __repr__(self) -> str:
        return f"Kernel({self.isa.name}, handle={self.handle:#x}, kernarg_size={self.kernarg_size})"


#: A kernel argument: a buffer (its address) or an integer, each 8 bytes.
Arg = Union[Buffer, int]
Dim = Union[int, Sequence[int]]


def _dims(d: Dim, name: str, limit: int) -> tuple[int, int, int]:
    dims = (d,) if isinstance(d, int) else tuple(d)
    if not 1 <= len(dims) <= 3 or not all(isinstance(x, int) for x in dims):
        raise ValueError(f"{name} must be an int or 1 to 3 ints, not {d!r}")
    if not all(1 <= x <= limit for x in dims):
        raise ValueError(f"{name} {dims} out of range: each dimension is 1..{limit}")
    return (dims + (1, 1))[:3]  # type: ignore[return-value]


def pack_args(args: Sequence[Arg]) -> bytes:
    """Kernarg bytes: each buffer's address or integer as a little-endian u64."""
    out = bytearray()
    for i, a in enumerate(args):
        v = a.address if isinstance(a, Buffer) else a
        if not isinstance(v, int) or not 0 <= v < 1 << 64:
            raise ValueError(f"kernel argument {i} must be a Buffer or an int in 0..2**64-1, not {a!r}")
        out += struct.pack("<Q", v)
    return bytes(out)


class Agent:
    """An emulated GPU running RV32, ir3, AGX and IR-text kernels.

    ``time_limit_ms`` and ``max_work_items`` bound each dispatch (0: no limit;
    ``None`` keeps the library's defaults). Use as a context manager, or call
    :meth:`close`; memory and kernels go with the agent.
    """

    def __init__(
        self,
        engine: Engine = Engine.JIT,
        *,
        time_limit_ms: int | None = None,
        max_work_items: int | None = None,
    ):
        self._lib = lib()
        self._agent: int | None = None
        cfg = t.AgentConfig()
        _check(self._lib.wj_aql_agent_config_default(ctypes.byref(cfg)), "wj_aql_agent_config_default")
        cfg.engine = int(Engine(engine))
        if time_limit_ms is not None:
            cfg.dispatch_time_limit_ms = time_limit_ms
        if max_work_items is not None:
            cfg.max_work_items = max_work_items
        out = ctypes.c_void_p()
        _check(self._lib.wj_aql_agent_create(ctypes.byref(cfg), ctypes.byref(out)), "wj_aql_agent_create")
        self._agent = out.value

    def _live(self) -> int:
        if self._agent is None:
            raise ValueError("the agent is closed")
        return self._agent

    def close(self) -> None:
        """Destroys the agent, its memory and kernels."""
        if self._agent is not None:
            agent, self._agent = self._agent, None
            _check(self._lib.wj_aql_agent_destroy(agent), "wj_aql_agent_destroy")

    def __enter__(self) -> "Agent":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        # A destructor must not raise (at interpreter exit the library may be gone).
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass

    # ---- memory ----
    def alloc(self, nbytes: int, *, address: int | None = None) -> Buffer:
        """``nbytes`` of agent memory, at GPU ``address`` if given (RV32 kernels
        address memory below 4 GiB, so their buffers are placed explicitly)."""
        if not isinstance(nbytes, int) or nbytes <= 0:
            raise ValueError(f"buffer size must be a positive int, not {nbytes!r}")
        host = ctypes.c_void_p()
        if address is None:
            st = self._lib.wj_aql_memory_alloc(self._live(), nbytes, ctypes.byref(host))
            _check(st, f"allocating {nbytes} bytes")
            return Buffer(self, host.value or 0, host.value or 0, nbytes)
        st = self._lib.wj_aql_memory_alloc_at(self._live(), address, nbytes, ctypes.byref(host))
        _check(st, f"allocating {nbytes} bytes at {address:#x}")
        return Buffer(self, address, host.value or 0, nbytes)

    def upload(self, array: np.ndarray, *, address: int | None = None) -> Buffer:
        """A new buffer holding a copy of ``array``'s bytes."""
        a = np.ascontiguousarray(array)
        buf = self.alloc(max(a.nbytes, 1), address=address)
        buf.write(a)
        return buf

    def free(self, buf: Buffer) -> None:
        """Releases a buffer of this agent."""
        if buf.agent is not self:
            raise ValueError(f"{buf!r} belongs to another agent")
        buf._check_live()
        _check(self._lib.wj_aql_memory_free(self._live(), buf.address), f"freeing {buf!r}")
        buf.freed = True

    # ---- kernels ----
    def load(
        self,
        isa: Isa,
        code: bytes | str,
        *,
        kernarg_size: int = 0,
        entry: int = 0,
        group_segment_size: int = 0,
        private_segment_size: int = 0,
        wave_size: int = 0,
    ) -> Kernel:
        """Registers ``code`` (machine code bytes, or IR text) as a kernel.

        ``kernarg_size`` is the number of kernarg bytes the kernel reads; they
        are copied to its uniforms / const file at offset 0. Code that does not
        decode is reported by the first :meth:`dispatch`.
        """
        isa = Isa(isa)
        raw = code.encode() if isinstance(code, str) else bytes(code)
        if not raw:
            raise ValueError("kernel code is empty")
        buf = ctypes.create_string_buffer(raw, len(raw))
        # The descriptor is 64-byte aligned in C; the library copies it, but keep the C layout.
        store = ctypes.create_string_buffer(2 * ctypes.sizeof(t.CodeObject))
        desc = t.CodeObject.from_address((ctypes.addressof(store) + 63) & ~63)
        desc.magic, desc.version, desc.isa = t.CODE_OBJECT_MAGIC, t.CODE_OBJECT_VERSION, int(isa)
        desc.arg_abi, desc.kernarg_size = t.ARG_ABI_UNIFORM_COPY, kernarg_size
        desc.code, desc.code_size, desc.entry = ctypes.addressof(buf), len(raw), entry
        desc.group_segment_fixed_size = group_segment_size
        desc.private_segment_fixed_size = private_segment_size
        desc.wave_size = wave_size
        handle = ctypes.c_uint64()
        st = self._lib.wj_aql_code_object_register(self._live(), ctypes.addressof(desc), ctypes.byref(handle))
        _check(st, f"registering {isa.name} code ({len(raw)} bytes)")
        return Kernel(self, isa, handle.value, kernarg_size)

    def dispatch(
        self,
        kernel: Kernel,
        grid: Dim,
        block: Dim,
        args: Sequence[Arg] | bytes = (),
        *,
        kernarg: Buffer | None = None,
    ) -> None:
        """Runs ``kernel`` over ``grid`` work-items in workgroups of ``block``.

        Kernel arguments are ``args`` (packed by :func:`pack_args`, or raw
        bytes), or an existing ``kernarg`` buffer. Returns once the dispatch has
        completed; a failure (bad code, a memory fault, a budget) raises
        :class:`WavejitError` with the queue's status and message.
        """
        if kernel.agent is not self:
            raise ValueError(f"{kernel!r} belongs to another agent")
        g, b = _dims(grid, "grid", 0xFFFF_FFFF), _dims(block, "block", 0xFFFF)
        ndim = max(len(_as_tuple(grid)), len(_as_tuple(block)))
        owned: Buffer | None = None
        if kernarg is not None:
            if kernarg.agent is not self:
                raise ValueError(f"kernarg {kernarg!r} belongs to another agent")
            kernarg._check_live()
        else:
            raw = args if isinstance(args, bytes) else pack_args(args)
            if raw:
                owned = kernarg = self.upload(np.frombuffer(raw, dtype=np.uint8))
        try:
            self._run(kernel, g, b, ndim, kernarg.address if kernarg else 0)
        finally:
            if owned is not None:
                self.free(owned)

    def _run(self, kernel: Kernel, g: tuple[int, int, int], b: tuple[int, int, int], ndim: int, kernarg: int) -> None:
        l, agent = self._lib, self._live()
        queue = ctypes.c_void_p()
        st = l.wj_aql_queue_create(agent, 4, t.QUEUE_TYPE_SINGLE, t.PROCESSING_MANUAL, None, None, ctypes.byref(queue))
        _check(st, "wj_aql_queue_create")
        signal = ctypes.c_uint64()
        try:
            _check(l.wj_aql_signal_create(1, ctypes.byref(signal)), "wj_aql_signal_create")
            p = t.KernelDispatchPacket()
            p.header = (
                t.PACKET_TYPE_KERNEL_DISPATCH
                | t.PACKET_HEADER_BARRIER
                | t.FENCE_SCOPE_SYSTEM << 9
                | t.FENCE_SCOPE_SYSTEM << 11
            )
            p.setup = ndim
            p.workgroup_size_x, p.workgroup_size_y, p.workgroup_size_z = b
            p.grid_size_x, p.grid_size_y, p.grid_size_z = g
            p.kernel_object, p.kernarg_address, p.completion_signal = kernel.handle, kernarg, signal.value
            _check(l.wj_aql_queue_submit(queue, ctypes.byref(p), None), "wj_aql_queue_submit")
            outcome = ctypes.c_uint32()
            _check(l.wj_aql_queue_process(queue, ctypes.byref(outcome)), "wj_aql_queue_process")
            status, text = ctypes.c_uint32(), ctypes.create_string_buffer(1024)
            _check(l.wj_aql_queue_get_error(queue, ctypes.byref(status), text, len(text)), "wj_aql_queue_get_error")
            if status.value != 0:
                raise WavejitError(status.value, text.value.decode(errors="replace") or "dispatch failed")
            if outcome.value != t.OUTCOME_IDLE or l.wj_aql_signal_load(signal.value, t.MEMORY_ORDER_SCACQUIRE) != 0:
                raise WavejitError(0x1000, f"the dispatch did not complete (queue outcome {outcome.value})")
        finally:
            if signal.value:
                l.wj_aql_signal_destroy(signal.value)
            l.wj_aql_queue_destroy(queue)


def _as_tuple(d: Dim) -> tuple[int, ...]:
    return (d,) if isinstance(d, int) else tuple(d)
