/* out[i] = a * x[i] + y[i] over a 1-D grid; a comes from .rodata (flw), the
 * multiply-add contracts to fmadd.s with dynamic rounding. The buffers come
 * from the argument block the host writes at ARGS (three 32-bit core
 * addresses: x, y, out), so they can be anywhere and of any length; the
 * device itself passes no arguments (KERNEL_ARGS is not used by the engine). */
#include "ids.h"

struct saxpy_args {
    const float *x;
    const float *y;
    float *out;
};

#define ARGS ((const struct saxpy_args *)0xF000)

static const float a = 2.5f;

void kmain(void)
{
    unsigned i = BLOCK_IDX_X * BLOCK_DIM_X + THREAD_IDX_X;
    ARGS->out[i] = a * ARGS->x[i] + ARGS->y[i];
}
