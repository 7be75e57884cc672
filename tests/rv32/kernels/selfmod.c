/* Code written at run time: each lane writes `li a0, v; ret` into its own
 * buffer, runs it after fence.i, patches the li (already run, so already
 * translated) and runs it again after fence.i. out[i] = first result,
 * out[64 + i] = second. Lanes need a stack (start_stack.S). */
#include "ids.h"

#define OUT ((volatile unsigned *)0x30000)
#define CODE ((volatile unsigned *)0x60000)

/* addi a0, zero, imm (imm < 2048) */
static unsigned li_a0(unsigned imm) { return (imm << 20) | (10u << 7) | 0x13u; }

void kmain(void)
{
    unsigned i = BLOCK_IDX_X * BLOCK_DIM_X + THREAD_IDX_X;
    volatile unsigned *code = CODE + 4 * i;
    unsigned (*fn)(void) = (unsigned (*)(void))(unsigned)code;
    code[0] = li_a0(3 * i + 1);
    code[1] = 0x00008067u; /* ret */
    __asm__ volatile("fence.i" ::: "memory");
    OUT[i] = fn();
    code[0] = li_a0(3 * i + 500);
    __asm__ volatile("fence.i" ::: "memory");
    OUT[64 + i] = fn();
}
