/* The device's read-only ID window (datasheet §5). */
#define ID_WINDOW ((volatile const unsigned *)0x80000000u)
#define THREAD_IDX_X (ID_WINDOW[0x00 / 4])
#define BLOCK_IDX_X (ID_WINDOW[0x10 / 4])
#define BLOCK_DIM_X (ID_WINDOW[0x20 / 4])
#define GRID_DIM_X (ID_WINDOW[0x30 / 4])
