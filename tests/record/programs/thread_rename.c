/* Three workers renamed after their first allocation, each one way:
 * prctl(PR_SET_NAME) by itself, pthread_setname_np on itself, and
 * pthread_setname_np from main. Each allocates kBlocks blocks of its own
 * size before the rename and as many after and frees them; main prints
 * their kernel thread ids (for the test to find them in the recording) and
 * exits with the workers still running, as a service's do: a thread's
 * exit would make libc free its thread state, recorded after the thread
 * left the recorder (a record under the last name whatever the recorder
 * saw of the rename). */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { kBlocks = 8 };

struct Worker {
  int how; /* 0 prctl, 1 pthread_setname_np on itself, 2 named by main */
  size_t size;
  sem_t first_done, renamed, done;
  long tid;
};

/* Each worker's own blocks: the workers run at once, and a shared array
 * would have one free another's block twice. volatile: the calls stay. */
static void allocate_and_free(size_t size) {
  void* volatile kept[kBlocks];
  for (int i = 0; i < kBlocks; ++i) kept[i] = malloc(size);
  for (int i = 0; i < kBlocks; ++i) free(kept[i]);
}

static void* work(void* arg) {
  struct Worker* w = arg;
  w->tid = syscall(SYS_gettid);
  allocate_and_free(w->size); /* the first allocation: the recording takes the inherited name */
  if (w->how == 0) prctl(PR_SET_NAME, "prctl-named", 0, 0, 0);
  if (w->how == 1) pthread_setname_np(pthread_self(), "self-named");
  sem_post(&w->first_done);
  sem_wait(&w->renamed);
  allocate_and_free(w->size);
  sem_post(&w->done);
  pause(); /* until main exits */
  return NULL;
}

int main(void) {
  struct Worker workers[3];
  pthread_t threads[3];
  for (int i = 0; i < 3; ++i) {
    workers[i].how = i;
    workers[i].size = 1000 + (size_t)i;
    sem_init(&workers[i].first_done, 0, 0);
    sem_init(&workers[i].renamed, 0, 0);
    sem_init(&workers[i].done, 0, 0);
    pthread_create(&threads[i], NULL, work, &workers[i]);
  }
  for (int i = 0; i < 3; ++i) {
    sem_wait(&workers[i].first_done);
    if (workers[i].how == 2) pthread_setname_np(threads[i], "main-named");
    sem_post(&workers[i].renamed);
  }
  for (int i = 0; i < 3; ++i) sem_wait(&workers[i].done);
  for (int i = 0; i < 3; ++i) printf("worker %d tid %ld size %zu\n", i, workers[i].tid, workers[i].size);
  return 0;
}
