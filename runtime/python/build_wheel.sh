#!/usr/bin/env bash
# Builds the wavejit wheel: cargo builds libwavejit.so and the LD_PRELOAD shim,
# they are copied (debug info stripped) into the package, and maturin builds
# the `wavejit` command and writes the wheel (see pyproject.toml for why the
# libraries are copied rather than built by maturin).
#
#   runtime/python/build_wheel.sh [OUT_DIR]     (default: <target dir>/wheels)
#
# Needs cargo, strip (binutils) and maturin (PATH, or $MATURIN). Honours
# CARGO_TARGET_DIR, so a tree already built with `cargo build --release` is
# reused as it is.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
maturin="${MATURIN:-maturin}"
command -v "$maturin" >/dev/null || { echo "build_wheel.sh: maturin not found (pip install maturin)" >&2; exit 1; }

cargo build --release --manifest-path "$root/Cargo.toml" -p wavejit-capi -p wavejit-kgsl
target="${CARGO_TARGET_DIR:-$root/target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
out="${1:-$target/wheels}"
mkdir -p "$out"
for lib in libwavejit.so libwavejit_kgsl.so; do
    # The release profile keeps line tables for backtraces; the wheel needs no
    # debug info (44 MB -> ~10 MB each).
    strip --strip-debug -o "$here/wavejit/$lib" "$target/release/$lib"
done
cd "$here"
"$maturin" build --release --out "$out"
