/* A program under a file size limit (RLIMIT_FSIZE, `ulimit -f`) lower than
 * its recording grows to: 2,000,000 malloc/free pairs of 32 B. Growing the
 * recording past the limit would kill it with SIGXFSZ; the recording stops
 * instead, and counts what it did not record. */
#include <stdlib.h>
#include <sys/resource.h>

void* volatile kept;

int main(void) {
  struct rlimit limit = {1 << 20, 1 << 20};
  if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return 1;
  for (int i = 0; i < 2000000; ++i) {
    kept = malloc(32);
    free(kept);
  }
  return 0;
}
