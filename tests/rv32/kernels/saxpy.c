/* out[i] = a * x[i] + y[i] over a 1-D grid; a comes from .rodata (flw), the
 * multiply-add contracts to fmadd.s with dynamic rounding. */
#include "ids.h"

#define X ((const float *)0x10000)
#define Y ((const float *)0x20000)
#define OUT ((float *)0x30000)

static const float a = 2.5f;

void kmain(void)
{
    unsigned i = BLOCK_IDX_X * BLOCK_DIM_X + THREAD_IDX_X;
    OUT[i] = a * X[i] + Y[i];
}
