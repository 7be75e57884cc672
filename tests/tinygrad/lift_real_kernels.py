#!/usr/bin/env python3
"""Collect every a630 kernel tinygrad compiles for the disasm_compare workloads
(DEV=NULL, compile only) and check that wavejit's ir3 lifter takes each one.

Usage (repo root): /work/venv-tg/bin/python tests/tinygrad/lift_real_kernels.py [workload ...]
Writes target/ir3_real_kernels.tsv and runs frontend/tests/ir3_lift_real.rs on it.
"""
import json, os, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
COMPARE = os.path.join(HERE, "disasm_compare", "compare.py")


def main() -> int:
  sys.path.insert(0, os.path.join(HERE, "disasm_compare"))
  import workloads
  plain = [n for n, _, _ in workloads.PLAIN]
  image = [n for n, _, _ in workloads.IMAGE]
  only = set(sys.argv[1:])
  if only:
    plain, image = [n for n in plain if n in only], [n for n in image if n in only]
  kernels = []
  with tempfile.TemporaryDirectory() as d:
    for dev, names in (("NULL:IR3:a630", plain), ("NULL:IR3:a630,IMAGE_PITCH_ALIGNMENT=64", image)):
      if not names:
        continue
      out = os.path.join(d, "k.json")
      env = dict(os.environ, DEV=dev)
      subprocess.run([sys.executable, COMPARE, "--collect", out, *names], check=True, env=env)
      with open(out) as f:
        kernels += json.load(f)["kernels"]
  path = os.path.join(REPO, "target", "ir3_real_kernels.tsv")
  os.makedirs(os.path.dirname(path), exist_ok=True)
  seen = set()
  with open(path, "w") as f:
    for k in kernels:
      if k["code"] in seen:
        continue
      seen.add(k["code"])
      f.write(f"{k['workload']}/{k['name']}\t{k['code']}\n")
  print(f"{len(seen)} distinct kernels -> {path}")
  env = dict(os.environ, WAVEJIT_IR3_KERNELS=path)
  return subprocess.run(["cargo", "test", "-q", "-p", "wavejit-frontend", "--test", "ir3_lift_real", "--", "--nocapture"],
                        cwd=REPO, env=env).returncode


if __name__ == "__main__":
  sys.exit(main())
