static __attribute__((noinline)) int work(int mode, int x) { volatile char big[600]; big[x & 7] = mode; return big[2]; }
int api2(int x) { return work(3, x+1); }
/* a static task entry, reached only through a table another object reads: a root */
static void sensor_task(void *p) { volatile char frame[300]; frame[1] = (char)(int)p; frame[2] = work(3, frame[1]); }
void (*const task_tbl[])(void*) = { sensor_task };
