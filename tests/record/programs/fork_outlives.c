/* A parent whose worker thread allocated (so it has a chunk of its own
   mapped) forks a child and ends at once while the child sleeps on,
   allocating nothing: the parent's recording is still packed (the child
   neither keeps the parent's file open nor maps any of its chunks). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void* work(void* arg) {
  (void)arg;
  return malloc(200);
}

int main(void) {
  char* volatile kept = malloc(100);
  if (!kept) return 1;
  pthread_t worker;
  if (pthread_create(&worker, NULL, work, NULL) != 0) return 1;
  pthread_join(worker, NULL);
  if (fork() == 0) {
    close(1); /* the test reads the output to its end */
    close(2);
    sleep(2);
    _exit(0);
  }
  puts("fork-outlives-test: parent done");
  return 0;
}
