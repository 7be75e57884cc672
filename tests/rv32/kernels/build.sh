#!/bin/sh
# Rebuilds the committed kernel binaries (Debian 12: gcc-riscv64-unknown-elf 12.2.0,
# binutils 2.40). Outputs: <name>.elf and <name>.bin (raw image loadable at VRAM 0).
set -eu
cd "$(dirname "$0")"
CC=riscv64-unknown-elf-gcc
CFLAGS="-march=rv32imf_zicsr_zifencei -mabi=ilp32f -O2 -nostdlib -ffreestanding -fno-pic -fno-math-errno -Wall -Werror"
for k in saxpy collatz; do
    $CC $CFLAGS -T link.ld -Wl,--no-relax -Wl,--build-id=none -o "$k.elf" start.S "$k.c"
    riscv64-unknown-elf-objcopy -O binary "$k.elf" "$k.bin"
done
# Kernels that call functions get a per-lane stack (start_stack.S); <name>.qemu.elf
# is the same image entered at qemu_start, for qemu-riscv32 as the oracle.
for k in switch selfmod; do
    $CC $CFLAGS -T link.ld -Wl,--no-relax -Wl,--build-id=none -o "$k.elf" start_stack.S "$k.c"
    $CC $CFLAGS -T link.ld -Wl,--no-relax -Wl,--build-id=none -Wl,-e,qemu_start \
        -o "$k.qemu.elf" start_stack.S "$k.c"
done
