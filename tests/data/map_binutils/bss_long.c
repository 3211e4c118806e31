/* A .stack section that writes a LONG() canary (a reviewer's link): ld
   loads it, as its name says zero-initialised. */
int counter = 3;
int big[1000];
int main(void) { return counter + big[2]; }
