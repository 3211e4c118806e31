extern void (*const task_tbl[])(void*);
extern int api2(int);
int main(void) { volatile int r = api2(1); (void)r; for(;;); }
