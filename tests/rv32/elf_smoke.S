# ELF loader smoke test for wavejit's rv32 frontend (frontend/tests/rv32_elf.rs).
# Assembled with binutils only (no compiler):
#   riscv64-unknown-elf-as -march=rv32imf_zicsr_zifencei -mabi=ilp32f elf_smoke.S -o elf_smoke.o
#   riscv64-unknown-elf-ld -m elf32lriscv -Ttext=0 -Tdata=0x2000 --no-relax -e _start elf_smoke.o -o elf_smoke.elf
# The entry point is deliberately not the first instruction of .text.

    .option norvc
    .text
helper:
    fcvt.s.w    f1, a0
    .insn r 0x53, 0, 0x24, f2, f1, f1     # fcvt.e4m3.s ft2,ft1
    .insn r 0x53, 0, 0x24, f3, f2, f0     # fcvt.s.e4m3 ft3,ft2
    fcvt.w.s    a0, f3, rtz
    ret

    .globl _start
_start:
    csrr    t1, mhartid
    andi    t1, t1, 31
    la      t2, results
    slli    t3, t1, 2
    add     t2, t2, t3
    mv      a0, t1
    call    helper
    sw      a0, 0(t2)
    flw     fa0, scale, t4
    fmadd.s fa1, fa0, fa0, fa0
    fsrmi   1
    frflags a1
    fence.i
    ebreak

    .data
scale:
    .float  2.5
results:
    .zero   128
