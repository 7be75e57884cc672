"""tinygrad's QCOM backend on wavejit through wavejit.mockgpu_qcom's C-ABI path
(no LD_PRELOAD, no tinygrad test tree): ops_qcom's FileIOInterface is replaced
by one that serves /dev/kgsl-3d0 from the QCOMDriver, as tinygrad's mockgpu
does. Run with DEV=QCOM:IR3; prints one JSON line of results."""

import ctypes
import json
import os

import tinygrad.runtime.ops_qcom as ops_qcom
from tinygrad.runtime.support import hcq

from wavejit.mockgpu_qcom import DEVICE_PATH, QCOMDriver

DRIVER = QCOMDriver()
OPENED: list[int] = []


class KgslFile(hcq.FileIOInterface):
    def __init__(self, path: str = "", flags: int = os.O_RDONLY, fd: int | None = None):
        self.desc = None
        if path != DEVICE_PATH:
            super().__init__(path, flags, fd)
            return
        self.path = path
        self.desc = DRIVER.open(path, flags, 0, DRIVER.tracked_files[0])
        self.fd = self.desc.fd
        OPENED.append(self.fd)

    def ioctl(self, request, arg):
        if self.desc is None:
            return super().ioctl(request, arg)
        return self.desc.ioctl(self.fd, request, ctypes.addressof(arg))

    def mmap(self, start, sz, prot, flags, offset):
        if self.desc is None:
            return super().mmap(start, sz, prot, flags, offset)
        return self.desc.mmap(start, sz, prot, flags, self.fd, offset)

    def __del__(self):
        if self.desc is not None:
            self.desc.close(self.fd)
        elif hasattr(self, "fd"):
            super().__del__()


ops_qcom.FileIOInterface = KgslFile

from tinygrad import Device, Tensor, dtypes  # noqa: E402

dev = Device["QCOM"]
a = Tensor(list(range(256)), dtype=dtypes.int32, device="QCOM")
b = (a * 3 + 1).tolist()
x = Tensor([0.5, -2.0, 3.25, 1.5], device="QCOM")
y = (x * x + 1).tolist()
s = Tensor([float(i) for i in range(1000)], device="QCOM").sum().item()
print(json.dumps({"device": type(dev).__name__, "gpu_id": list(dev.gpu_id), "opened": OPENED,
                  "int": b, "float": y, "sum": s}))
