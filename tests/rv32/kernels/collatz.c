/* Divergent loops: out[i] = Collatz steps of n = i + 1 (bounded), plus an
 * integer division and a float square root per lane. */
#include "ids.h"

#define OUT ((unsigned *)0x30000)
#define ROOT ((float *)0x40000)

void kmain(void)
{
    unsigned i = BLOCK_IDX_X * BLOCK_DIM_X + THREAD_IDX_X;
    unsigned n = i + 1, steps = 0;
    while (n != 1 && steps < 1000) {
        n = (n & 1) ? 3 * n + 1 : n / 2;
        steps++;
    }
    OUT[2 * i] = steps;
    OUT[2 * i + 1] = 1000000u / (i + 1);
    ROOT[i] = __builtin_sqrtf((float)i);
}
