/* another library's own static helper of the same name, in a file of the same basename */
static __attribute__((noinline)) void cb(void) { volatile char b[8]; b[0] = 1; }
void b_api(void) { cb(); }
