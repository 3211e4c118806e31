/* One of two objects whose .mysec input sections ld --unique=.mysec keeps
   as two output sections of one name. */
__attribute__((section(".mysec"))) const int a1[4] = {1, 2, 3, 4};
int main(void) { return a1[1]; }
