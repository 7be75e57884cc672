"""Warm `c = (a*2+b).realize()` + synchronize over 1 Mi float32, timed per run.

  LD_PRELOAD=$CARGO_TARGET_DIR/release/libwavejit_kgsl.so DEV=QCOM:IR3 \
    python tests/tinygrad/bench_elementwise.py [RUNS]
  DEV=CPU python tests/tinygrad/bench_elementwise.py [RUNS]

Prints the median (and min) wall and process CPU time of RUNS (default 15) runs
after 3 warm-up runs, and checks the last result against numpy. With the shim,
WAVEJIT_KGSL_PROFILE=1 adds the driver's per-phase totals at exit; they include
the cold submissions (tensor creation, first lifts), so the warm cost per
submission is the difference of two runs with different RUNS divided by the
difference in RUNS (README, "Cost of a submission").
"""
import statistics
import sys
import time

import numpy as np
from tinygrad import Device, Tensor

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 15
n = 1 << 20
a, b = Tensor.rand(n).realize(), Tensor.rand(n).realize()
dev = Device[Device.DEFAULT]
for _ in range(3):
  (a * 2 + b).realize()
  dev.synchronize()
wall, cpu = [], []
for _ in range(runs):
  w0, c0 = time.perf_counter(), time.process_time()
  c = (a * 2 + b).realize()
  dev.synchronize()
  wall.append((time.perf_counter() - w0) * 1e3)
  cpu.append((time.process_time() - c0) * 1e3)
ok = np.array_equal(c.numpy(), a.numpy() * np.float32(2) + b.numpy())
print(f"{Device.DEFAULT} a*2+b 1Mi f32, {runs} runs: wall median {statistics.median(wall):.2f} ms "
      f"(min {min(wall):.2f}), cpu median {statistics.median(cpu):.2f} ms, exact={ok}")
sys.exit(0 if ok else 1)
