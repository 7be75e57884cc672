# Lane entry for C kernels: no stack (sp = 0 at launch), so kmain must be a leaf
# that needs none; `ret` returns here and ebreak ends the lane.
    .section .text.start, "ax"
    .globl _start
_start:
    call kmain
    ebreak
