/* A parent that forks a child and ends at once while the child sleeps on,
   allocating nothing: the parent's recording is still packed (the child
   neither keeps the parent's file open nor maps its chunks). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void) {
  char* volatile kept = malloc(100);
  if (!kept) return 1;
  if (fork() == 0) {
    close(1);  /* the test reads the output to its end */
    close(2);
    sleep(2);
    _exit(0);
  }
  puts("fork-outlives-test: parent done");
  return 0;
}
