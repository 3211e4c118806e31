/* Threads started one after another, each allocating and freeing
 * kPairs blocks of its own size before the next starts. A thread's first
 * chunk once had base sequence 0: packed first, it held back every record
 * of the threads before it in the reader's merge, past its bound (1 M
 * records), and they were counted as lost. Prints each thread's size. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { kThreads = 80, kPairs = 15000 };

static void* churn(void* arg) {
  size_t size = (size_t)arg;
  for (int i = 0; i < kPairs; ++i) {
    void* volatile p = malloc(size);
    free(p);
  }
  return NULL;
}

int main(void) {
  for (int t = 0; t < kThreads; ++t) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, churn, (void*)(size_t)(1000 + t)) != 0 || pthread_join(thread, NULL) != 0) {
      perror("late_threads");
      return 1;
    }
  }
  printf("late_threads: %d threads x %d blocks, sizes 1000..%d\n", kThreads, kPairs, 1000 + kThreads - 1);
  return 0;
}
