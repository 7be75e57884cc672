"""The MOCK+QCOM driver's C-ABI path (wj_kgsl_* through ctypes) with tinygrad's
PyPI package for the KGSL structs and ioctl numbers: open, DEVICE_INFO,
GPUOBJ_ALLOC, mmap, a submitted command stream, and tinygrad's own QCOM
backend running kernels through the driver module."""

import ctypes
import json
import mmap
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import need

from wavejit.mockgpu_qcom import DEVICE_PATH, KGSLFileDesc, QCOMDriver

kgsl = need("tinygrad.runtime.autogen.kgsl", "needs tinygrad==0.14.0 (CI installs it)")

HERE = Path(__file__).resolve().parent


def request(ioctl) -> int:
    """The request number of one of tinygrad's IOCTL_KGSL_* partials."""
    idir, base, nr, struct = ioctl.args
    return idir << 30 | ctypes.sizeof(struct) << 16 | base << 8 | nr


def parity(v: int) -> int:
    return (bin(v).count("1") & 1) ^ 1


def pkt7(op: int, count: int) -> int:
    # A6xx type-7 header: count, opcode, each with odd parity.
    return 0x70000000 | count | parity(count) << 15 | (op & 0x7F) << 16 | parity(op) << 23


@pytest.fixture
def device():
    driver = QCOMDriver()
    (vf,) = driver.tracked_files
    assert vf.path == DEVICE_PATH == "/dev/kgsl-3d0"
    desc = driver.open(DEVICE_PATH, os.O_RDWR, 0, vf)
    assert isinstance(desc, KGSLFileDesc) and desc.fd >= 0
    yield desc
    desc.close(desc.fd)


def test_tinygrad_request_numbers_are_the_header_values():
    # runtime/include/wavejit_kgsl.h's WJ_KGSL_IOCTL_* for the same requests.
    assert request(kgsl.IOCTL_KGSL_DEVICE_GETPROPERTY) == 0xC0180902
    assert request(kgsl.IOCTL_KGSL_GPUOBJ_ALLOC) == 0xC0300945
    assert request(kgsl.IOCTL_KGSL_DRAWCTXT_CREATE) == 0xC0080913
    assert request(kgsl.IOCTL_KGSL_GPU_COMMAND) == 0xC040094A
    assert request(kgsl.IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID) == 0x400C0907


def test_device_info_is_an_a630(device):
    info = kgsl.struct_kgsl_devinfo()
    prop = kgsl.struct_kgsl_device_getproperty(
        type=kgsl.KGSL_PROP_DEVICE_INFO, value=ctypes.addressof(info), sizebytes=ctypes.sizeof(info)
    )
    assert device.ioctl(device.fd, request(kgsl.IOCTL_KGSL_DEVICE_GETPROPERTY), ctypes.addressof(prop)) == 0
    assert info.chip_id == 0x06030001


def test_alloc_mmap_and_a_submitted_command_writes_memory(device):
    fd = device.fd
    alloc = kgsl.struct_kgsl_gpuobj_alloc(size=0x2000, flags=kgsl.KGSL_MEMFLAGS_USE_CPU_MAP)
    device.ioctl(fd, request(kgsl.IOCTL_KGSL_GPUOBJ_ALLOC), ctypes.addressof(alloc))
    assert alloc.id > 0 and alloc.mmapsize == 0x2000
    va = device.mmap(0, alloc.mmapsize, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, fd, alloc.id << 12)
    words = (ctypes.c_uint32 * (alloc.mmapsize // 4)).from_address(va)

    # With USE_CPU_MAP the object's GPU address is where it is mapped: the IB at
    # the start writes 0xcafe and 0xf00d to word 0x400 (offset 0x1000).
    target = va + 0x1000
    ib = [pkt7(0x3D, 4), target & 0xFFFFFFFF, target >> 32, 0xCAFE, 0xF00D]  # CP_MEM_WRITE
    for i, w in enumerate(ib):
        words[i] = w
    words[0x400] = words[0x401] = 0x5EED

    ctx = kgsl.struct_kgsl_drawctxt_create(flags=0)
    device.ioctl(fd, request(kgsl.IOCTL_KGSL_DRAWCTXT_CREATE), ctypes.addressof(ctx))
    cmd = kgsl.struct_kgsl_command_object(gpuaddr=va, size=4 * len(ib), flags=kgsl.KGSL_CMDLIST_IB)
    submit = kgsl.struct_kgsl_gpu_command(
        cmdlist=ctypes.addressof(cmd), cmdsize=ctypes.sizeof(cmd), numcmds=1, context_id=ctx.drawctxt_id
    )
    device.ioctl(fd, request(kgsl.IOCTL_KGSL_GPU_COMMAND), ctypes.addressof(submit))
    wait = kgsl.struct_kgsl_device_waittimestamp_ctxtid(
        context_id=ctx.drawctxt_id, timestamp=submit.timestamp, timeout=10000
    )
    device.ioctl(fd, request(kgsl.IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID), ctypes.addressof(wait))
    assert submit.timestamp >= 1
    assert (words[0x400], words[0x401], words[0x402]) == (0xCAFE, 0xF00D, 0)


def test_errors_are_oserrors_with_the_driver_errno(device):
    with pytest.raises(OSError) as e:
        device.ioctl(device.fd, 0xC0080999, 0)  # no such request
    assert e.value.errno == 25  # ENOTTY
    prop = kgsl.struct_kgsl_device_getproperty(type=kgsl.KGSL_PROP_DEVICE_INFO, value=8, sizebytes=40)
    with pytest.raises(OSError) as e:
        device.ioctl(device.fd, request(kgsl.IOCTL_KGSL_DEVICE_GETPROPERTY), ctypes.addressof(prop))
    assert e.value.errno == 14  # EFAULT: address 8 is not mapped
    with pytest.raises(OSError) as e:  # a length mmap refuses
        device.mmap(0, 0, mmap.PROT_READ, mmap.MAP_SHARED, device.fd, 0)
    assert e.value.errno == 22  # EINVAL


def test_closed_descriptor_is_ebadf():
    driver = QCOMDriver()
    desc = driver.open(DEVICE_PATH, os.O_RDWR, 0, driver.tracked_files[0])
    desc.close(desc.fd)
    with pytest.raises(OSError) as e:
        desc.ioctl(desc.fd, request(kgsl.IOCTL_KGSL_DRAWCTXT_CREATE), 0)
    assert e.value.errno == 9  # EBADF


def test_tinygrad_qcom_backend_runs_through_the_driver_module():
    need("tinymesa", "tinygrad's IR3 compiler (CI installs it)")
    env = dict(os.environ, DEV="QCOM:IR3")
    env.pop("LD_PRELOAD", None)
    out = subprocess.run(
        [sys.executable, str(HERE / "qcom_direct.py")], env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr[-4000:]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["device"] == "QCOMDevice" and r["gpu_id"] == [6, 3, 0]
    assert len(r["opened"]) == 1
    assert r["int"] == [3 * i + 1 for i in range(256)]
    assert r["float"] == [1.25, 5.0, 11.5625, 3.25]
    assert r["sum"] == 499500.0
