#!/bin/sh
# Installs libwavejit.so, libwavejit.a, the C headers and wavejit.pc under PREFIX
# (PREFIX/lib, PREFIX/include, PREFIX/lib/pkgconfig), after `cargo build --release`.
#
#   runtime/capi/install.sh PREFIX [BUILD_DIR]
#
# BUILD_DIR holds the built libraries: by default target/release of this
# repository, or $CARGO_TARGET_DIR/release when that is set.
set -eu
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 PREFIX [BUILD_DIR]" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${2:-${CARGO_TARGET_DIR:-$root/target}/release}
for lib in libwavejit.so libwavejit.a; do
    if [ ! -f "$build/$lib" ]; then
        echo "$0: $build/$lib not found (run cargo build --release first)" >&2
        exit 1
    fi
done
mkdir -p "$1/lib/pkgconfig" "$1/include"
prefix=$(cd "$1" && pwd)
# The workspace version: the first `version = "..."` of the root manifest.
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)
install -m 755 "$build/libwavejit.so" "$prefix/lib/"
install -m 644 "$build/libwavejit.a" "$prefix/lib/"
install -m 644 "$root"/runtime/include/wavejit_*.h "$prefix/include/"
sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version|" "$here/wavejit.pc.in" \
    > "$prefix/lib/pkgconfig/wavejit.pc"
echo "installed libwavejit $version in $prefix"
