#include "util.h"
void unused_fn(void) { volatile char x[4]; sink = clamp(x, 4) + wrap(x, 3); }
