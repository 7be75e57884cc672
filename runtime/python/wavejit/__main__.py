"""``python -m wavejit preload|lib``: paths of the bundled libraries."""

from __future__ import annotations

import sys

from ._native import lib_path, preload_path

USAGE = """usage: python -m wavejit COMMAND

commands:
  preload   print the absolute path of the LD_PRELOAD shim (libwavejit_kgsl.so):
            LD_PRELOAD=$(python -m wavejit preload) DEV=QCOM:IR3 python app.py
  lib       print the absolute path of the C API library (libwavejit.so)
"""


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in ("preload", "lib"):
        if argv in (["-h"], ["--help"]):
            print(USAGE, end="")
            return 0
        print(USAGE, end="", file=sys.stderr)
        return 2
    try:
        print(preload_path() if argv[0] == "preload" else lib_path())
    except FileNotFoundError as e:
        print(f"wavejit: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
