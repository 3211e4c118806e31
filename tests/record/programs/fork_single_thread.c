/* A process of one thread forks twice; each child opens a file with fopen
 * (whose 472 B FILE libc allocates, below frames without frame pointers)
 * and exits. No other thread can hold the loader's lock at the fork, so
 * the children unwind through libc as the parent does. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  for (int i = 0; i < 2; ++i) {
    pid_t p = fork();
    if (p == 0) {
      FILE* f = fopen("/proc/self/stat", "r");
      if (f) fclose(f);
      _exit(0);
    }
    if (p < 0 || waitpid(p, NULL, 0) != p) return 1;
  }
  return 0;
}
