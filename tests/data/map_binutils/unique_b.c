/* The other of unique_a.c's pair. */
__attribute__((section(".mysec"))) const int a2[9] = {1};
int f2(void) { return a2[1]; }
