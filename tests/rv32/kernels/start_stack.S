# Lane entry for C kernels that call functions: each lane gets a 1 KiB stack
# (sp = STACK_BASE + (lane + 1) * 1 KiB, lane = blockIdx.x * blockDim.x +
# threadIdx.x) before `call kmain`; ebreak ends the lane.
#
# `qemu_start` is the same image's entry for qemu-riscv32 (the oracle): it maps
# the ID window and the data area (0x30000..0x80000, read/write/execute: kernels
# write code there), runs kmain once per lane of a one-block
# grid of ORACLE_LANES lanes (threadIdx.x = 0..), then writes the output area
# to stdout and exits.
    .equ STACK_BASE, 0x200000
    .equ ID_WINDOW, 0x80000000
    .equ OUT_BASE, 0x30000
    .equ OUT_BYTES, 0x1000
    .equ DATA_BYTES, 0x50000
    .equ ORACLE_LANES, 64

    .section .text.start, "ax"
    .globl _start
_start:
    li t0, ID_WINDOW
    lw t1, 0x10(t0)
    lw t2, 0x20(t0)
    lw t3, 0x00(t0)
    mul t1, t1, t2
    add t1, t1, t3
    addi t1, t1, 1
    slli t1, t1, 10
    li sp, STACK_BASE
    add sp, sp, t1
    call kmain
    ebreak

    .globl qemu_start
qemu_start:
    # mmap(ID_WINDOW, 4096, RW, MAP_PRIVATE|MAP_ANONYMOUS|MAP_FIXED, -1, 0)
    li a0, ID_WINDOW
    li a1, 4096
    li a2, 3
    li a3, 0x32
    li a4, -1
    li a5, 0
    li a7, 222
    ecall
    li a0, OUT_BASE
    li a1, DATA_BYTES
    li a2, 7
    li a3, 0x32
    li a4, -1
    li a5, 0
    li a7, 222
    ecall
    li s0, ID_WINDOW
    li t0, ORACLE_LANES
    sw t0, 0x20(s0)          # blockDim.x
    li t0, 1
    sw t0, 0x30(s0)          # gridDim.x
    li s1, 0
1:  sw s1, 0x00(s0)          # threadIdx.x
    call kmain
    addi s1, s1, 1
    li t0, ORACLE_LANES
    blt s1, t0, 1b
    li a0, 1
    li a1, OUT_BASE
    li a2, OUT_BYTES
    li a7, 64                # write
    ecall
    li a0, 0
    li a7, 93                # exit
    ecall
