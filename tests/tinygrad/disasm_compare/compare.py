#!/usr/bin/env python3
"""Real-kernel disassembly check: mesa's ir3 disassembler vs `wavejit ir3 disasm`.

tinygrad 0.14.0 compiles a broad workload set (workloads.py) for
DEV=NULL:IR3:a630 (compile only, no device). Every kernel binary that
IR3Compiler returns is disassembled twice:

* by mesa 25.2.7 itself (`ir3_isa_disasm` in the tinymesa wheel's
  libtinymesa.so, called through tinygrad's ctypes bindings, gpu_id 630, with
  mesa's own `print_raw` as the no-match callback), and
* by `wavejit ir3 disasm`,

in both of mesa's modes:

* plain (branch_labels off, branches print as relative `#N`): compared word by
  word. Mesa's pre-instruction callback writes a marker before each instruction;
  the marker and the single newline that ends each instruction are removed, the
  instruction text is never touched.
* labels (branch_labels on, `lN:` lines and `#lN` targets, what freedreno tools
  print; `wavejit ir3 disasm --labels`): the whole listing of every distinct
  binary is compared as one text, byte for byte.

Exit status 1 on any mismatch (or when the two sides disagree on instruction
counts), 2 on setup errors.

Usage (repo root; needs tinygrad==0.14.0 tinymesa==25.2.7.2 numpy):
  python tests/tinygrad/disasm_compare/compare.py --wavejit target/release/wavejit
The wavejit binary can also be given by WAVEJIT_BIN. `--save-words F` writes
every distinct instruction word with mesa's text as TSV.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
GPU_ID = 630
DEV_PLAIN = "NULL:IR3:a630"
# tinygrad's QCOM device appends this itself with IMAGE; NULL needs it spelled out.
DEV_IMAGE = "NULL:IR3:a630,IMAGE_PITCH_ALIGNMENT=64"

# ---------------------------------------------------------------- collector side


def mesa_run(code: bytes, labels: bool, pre_instr=None) -> str:
  """Everything mesa's ir3_isa_disasm prints for `code`."""
  import ctypes
  from tinygrad.runtime.autogen import libc, mesa

  with tempfile.TemporaryFile("w+b") as tf:
    fp = libc.fdopen(os.dup(tf.fileno()), b"w")
    mesa_fp = ctypes.cast(fp, ctypes.POINTER(mesa.struct__IO_FILE))
    kw = {} if pre_instr is None else {"pre_instr_cb": pre_instr(libc, fp)}
    opts = mesa.struct_isa_decode_options(GPU_ID, True, 0, labels, **kw)
    # Undecodable words: mesa's own raw-line printer (what its disasm tests use).
    opts.no_match_cb = ctypes.cast(mesa.dll["print_raw"], type(opts.no_match_cb))
    mesa.ir3_isa_disasm(code, len(code), mesa_fp, opts)
    libc.fflush(fp)
    libc.fclose(fp)
    tf.seek(0)
    return tf.read().decode()


def mesa_disasm(code: bytes) -> list[str]:
  """Mesa's own text for each 64-bit instruction of `code`, in order (plain mode)."""
  import ctypes

  def marker(libc, fp):
    # Marks where each instruction starts (mesa prints its text right after).
    @ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p)
    def pre_instr(_data, n, _instr):
      libc.fputs(f"\x01{n}\x02".encode(), fp)
    return pre_instr

  raw = mesa_run(code, False, marker)

  if raw and not raw.startswith("\x01"):
    raise RuntimeError(f"mesa printed text before the first instruction: {raw[:80]!r}")
  lines = []
  for i, chunk in enumerate(raw.split("\x01")[1:]):
    index, _, text = chunk.partition("\x02")
    if index != str(i):
      raise RuntimeError(f"mesa instruction marker {index!r} where {i} was expected")
    if not text.endswith("\n"):
      raise RuntimeError(f"mesa text of instruction {i} does not end with a newline: {text!r}")
    lines.append(text[:-1])
  if len(lines) != len(code) // 8:
    raise RuntimeError(f"mesa printed {len(lines)} instructions for {len(code) // 8} words")
  return lines


def collect(names: list[str], out_path: str) -> None:
  """Run the named workloads and write every compiled kernel (code + mesa text) as JSON."""
  sys.path.insert(0, HERE)
  from tinygrad.helpers import Context
  from tinygrad.runtime.support.compiler_mesa import IR3Compiler

  import workloads

  current = {"workload": None}
  kernels = []
  original = IR3Compiler.compile_cached

  def compile_hook(self, src):
    lib = original(self, src)
    code = IR3Compiler.unpack_lib(lib)[3]
    # do_compile's frame holds the PROGRAM uop; its name is only used for reports.
    prg = sys._getframe(1).f_locals.get("prg")
    try:
      name = prg.src[0].arg.function_name
    except AttributeError:
      name = "?"
    try:
      text = mesa_disasm(code)
    except Exception as err:  # noqa: BLE001 - report and stop; a workload must not swallow it
      print(f"error: mesa disassembly of {current['workload']}/{name} failed: {err}", file=sys.stderr)
      os._exit(3)
    kernels.append({"workload": current["workload"], "name": name, "code": code.hex(), "mesa": text,
                    "mesa_labels": mesa_run(code, True)})
    return lib

  IR3Compiler.compile_cached = compile_hook
  table = {name: (fn, ctx) for name, fn, ctx in workloads.PLAIN + workloads.IMAGE}
  timings = {}
  for name in names:
    fn, ctx = table[name]
    current["workload"] = name
    start = time.perf_counter()
    with Context(**ctx):
      fn()
    timings[name] = round(time.perf_counter() - start, 2)
  with open(out_path, "w") as f:
    json.dump({"kernels": kernels, "timings": timings}, f)


# ---------------------------------------------------------------- driver side


def shards() -> list[tuple[str, list[str]]]:
  """(DEV, workload names) per collector process, roughly balanced for 2 cores."""
  sys.path.insert(0, HERE)
  # Only names are needed here; importing workloads imports tinygrad, which reads
  # DEV lazily, so this is safe before the collectors choose their device.
  import workloads

  plain = [name for name, _, _ in workloads.PLAIN]
  image = [name for name, _, _ in workloads.IMAGE]
  return [(DEV_PLAIN, plain[0::2]), (DEV_PLAIN, plain[1::2]), (DEV_IMAGE, image)]


def run_collectors(jobs: int, workdir: str, only: set[str] | None) -> tuple[list[dict], dict]:
  todo = []
  for i, (dev, names) in enumerate(shards()):
    names = [n for n in names if only is None or n in only]
    if names:
      todo.append((dev, names, os.path.join(workdir, f"shard{i}.json")))
  running, kernels, timings = [], [], {}

  def reap(entry):
    proc, out, names = entry
    if proc.wait() != 0:
      sys.exit(f"error: collector for {names} failed with status {proc.returncode}")
    with open(out) as f:
      data = json.load(f)
    kernels.extend(data["kernels"])
    timings.update(data["timings"])

  for dev, names, out in todo:
    if len(running) >= jobs:
      reap(running.pop(0))
    # PARALLEL=0: compile in this process, where the hook sees it (shards give the parallelism).
    env = dict(os.environ, DEV=dev, CCACHE="0", PARALLEL="0", DEBUG="0", PYTHONHASHSEED="0")
    cmd = [sys.executable, os.path.abspath(__file__), "--collect", out, *names]
    running.append((subprocess.Popen(cmd, env=env), out, names))
  for entry in running:
    reap(entry)
  return kernels, timings


def wavejit_disasm(binary: str, words: list[int], workdir: str) -> dict[int, str]:
  """wavejit's text per word: one process for all of them; per word if that fails."""
  path = os.path.join(workdir, "words.bin")
  with open(path, "wb") as f:
    f.write(b"".join(w.to_bytes(8, "little") for w in words))
  res = subprocess.run([binary, "ir3", "disasm", path], capture_output=True, text=True)
  if res.returncode == 0:
    lines = res.stdout.split("\n")
    if lines and lines[-1] == "":
      lines.pop()
    if len(lines) != len(words):
      sys.exit(f"error: wavejit printed {len(lines)} lines for {len(words)} words")
    return dict(zip(words, lines))
  # Some word made the whole run fail: find out which, one process per word.
  out = {}
  for w in words:
    r = subprocess.run([binary, "ir3", "disasm", "--hex", f"0x{w:016x}"], capture_output=True, text=True)
    text = r.stdout[:-1] if r.stdout.endswith("\n") else r.stdout
    out[w] = text if r.returncode == 0 else f"<wavejit error: {r.stderr.strip()}>"
  return out


def wavejit_labels(binary: str, code: bytes, workdir: str) -> str:
  """wavejit's whole listing of one binary in label mode."""
  path = os.path.join(workdir, "kernel.bin")
  with open(path, "wb") as f:
    f.write(code)
  res = subprocess.run([binary, "ir3", "disasm", "--labels", path], capture_output=True, text=True)
  if res.returncode != 0:
    return f"<wavejit error {res.returncode}: {res.stderr.strip()}>"
  return res.stdout


def first_difference(a: str, b: str) -> str:
  la, lb = a.split("\n"), b.split("\n")
  for i, (x, y) in enumerate(zip(la, lb)):
    if x != y:
      return f"line {i + 1}: mesa {x!r} wavejit {y!r}"
  return f"mesa {len(la)} lines, wavejit {len(lb)} lines"


def mnemonic(text: str) -> str:
  """First word after the (flags) prefix, for the coverage summary."""
  rest = text
  while rest.startswith("("):
    rest = rest[rest.index(")") + 1:].lstrip()
  return rest.split(" ")[0] if rest else text


def main() -> int:
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--wavejit", default=os.environ.get("WAVEJIT_BIN", os.path.join(REPO, "target", "release", "wavejit")))
  ap.add_argument("--jobs", type=int, default=2, help="collector processes in parallel")
  ap.add_argument("--only", nargs="+", help="run only these workloads")
  ap.add_argument("--save-words", help="write word<TAB>mesa text for every distinct word")
  ap.add_argument("--collect", nargs="+", help=argparse.SUPPRESS)
  args = ap.parse_args()

  if args.collect:
    collect(args.collect[1:], args.collect[0])
    return 0

  if not os.access(args.wavejit, os.X_OK):
    print(f"error: wavejit binary {args.wavejit} not found (build it, or pass --wavejit / WAVEJIT_BIN)", file=sys.stderr)
    return 2
  start = time.perf_counter()
  with tempfile.TemporaryDirectory(prefix="wavejit-disasm-") as workdir:
    kernels, timings = run_collectors(args.jobs, workdir, set(args.only) if args.only else None)
    collected = time.perf_counter()

    # The same binary can come from several workloads; compare each once.
    unique, mesa_of = {}, {}
    for k in kernels:
      unique.setdefault(k["code"], k)
    for k in unique.values():
      code = bytes.fromhex(k["code"])
      for i, text in enumerate(k["mesa"]):
        w = int.from_bytes(code[i * 8:i * 8 + 8], "little")
        if mesa_of.setdefault(w, text) != text:
          print(f"error: mesa printed 0x{w:016x} as both {mesa_of[w]!r} and {text!r}", file=sys.stderr)
          return 2
    words = sorted(mesa_of)
    ours = wavejit_disasm(args.wavejit, words, workdir)
    # Label mode depends on each word's place: every distinct binary as a whole.
    bad_labels = []
    label_lines = 0
    for k in unique.values():
      code = bytes.fromhex(k["code"])
      theirs = wavejit_labels(args.wavejit, code, workdir)
      label_lines += k["mesa_labels"].count("\n")
      if theirs != k["mesa_labels"]:
        bad_labels.append(f"{k['workload']}/{k['name']}: {first_difference(k['mesa_labels'], theirs)}")

  if args.save_words:
    with open(args.save_words, "w") as f:
      for w in words:
        f.write(f"0x{w:016x}\t{mesa_of[w]}\n")

  instructions = sum(len(k["mesa"]) for k in unique.values())
  bad_words = [w for w in words if ours[w] != mesa_of[w]]
  bad_instr = 0
  first_seen = {}
  for k in unique.values():
    code = bytes.fromhex(k["code"])
    for i in range(len(k["mesa"])):
      w = int.from_bytes(code[i * 8:i * 8 + 8], "little")
      if ours[w] != mesa_of[w]:
        bad_instr += 1
        first_seen.setdefault(w, f"{k['workload']}/{k['name']} @{i:04}")

  mnemonics = Counter(mnemonic(mesa_of[w]) for w in words)
  print(f"workloads: {len(timings)} ({', '.join(f'{n} {t}s' for n, t in sorted(timings.items(), key=lambda x: -x[1])[:5])} ...)")
  print(f"kernels: {len(kernels)} compiled, {len(unique)} distinct binaries")
  print(f"instructions: {instructions} compared, {len(words)} distinct words, {len(mnemonics)} distinct mnemonics")
  print(f"mnemonics: {' '.join(sorted(mnemonics))}")
  print(f"time: collect {collected - start:.1f}s, total {time.perf_counter() - start:.1f}s")
  print(f"label mode: {len(unique)} listings, {label_lines} lines compared")
  status = 0
  if bad_words:
    print(f"MISMATCH: {len(bad_words)} distinct words, {bad_instr} instructions")
    for w in bad_words:
      print(f"  0x{w:016x} ({first_seen[w]})\n    mesa:    {mesa_of[w]}\n    wavejit: {ours[w]}")
    status = 1
  if bad_labels:
    print(f"MISMATCH (label mode): {len(bad_labels)} of {len(unique)} listings")
    for b in bad_labels:
      print(f"  {b}")
    status = 1
  if status == 0:
    print("mismatches: 0 (plain and label mode)")
  return status


if __name__ == "__main__":
  sys.exit(main())
