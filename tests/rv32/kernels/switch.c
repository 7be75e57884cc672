/* Indirect jumps the lift cannot see before the launch: a 7-case switch that
 * gcc -O2 compiles to a jump table in .rodata (lw + jr), and calls through a
 * table of function pointers. out[i] = classify(i % 8, i) at 0x30000,
 * out[64 + i] = ops[i % 4](i). Lanes need a stack (start_stack.S). */
#include "ids.h"

#define OUT ((volatile unsigned *)0x30000)

static unsigned __attribute__((noinline)) classify(unsigned k, unsigned x)
{
    switch (k) {
    case 0: return x + 3;
    case 1: return x * 7;
    case 2: return x ^ 0x55;
    case 3: return x - 11;
    case 4: return x << 2;
    case 5: return (x >> 1) | 0x100;
    case 6: return ~x;
    default: return 0xdead;
    }
}

static unsigned __attribute__((noinline)) op_add(unsigned x) { return x + 1000; }
static unsigned __attribute__((noinline)) op_mul(unsigned x) { return x * 3 + 1; }
static unsigned __attribute__((noinline)) op_neg(unsigned x) { return 0u - x; }
static unsigned __attribute__((noinline)) op_rot(unsigned x) { return (x << 5) | (x >> 27); }

static unsigned (*const ops[4])(unsigned) = {op_add, op_mul, op_neg, op_rot};

void kmain(void)
{
    unsigned i = BLOCK_IDX_X * BLOCK_DIM_X + THREAD_IDX_X;
    OUT[i] = classify(i % 8, i);
    OUT[64 + i] = ops[i % 4](i);
}
