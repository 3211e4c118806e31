/* A program for the --inference-fn tests: the shapes a probed function
 * takes besides one plain call per inference.
 *   infer_shapes threads N    a worker thread makes N calls of infer_step,
 *                             each leaking 64 B, while the main thread
 *                             allocates and frees without calling it
 *   infer_shapes recursive N  N outermost calls of infer_recursive, each
 *                             recursing 3 deep and leaking 32 B per level
 *                             (96 B per outermost call)
 *   infer_shapes killed N     N calls of infer_step, then SIGKILL to itself
 *   infer_shapes longjmp N    N calls of infer_jump, each left by longjmp to
 *                             main's loop, never by a return
 *   infer_shapes children N   N calls of infer_step, then a forked child
 *                             that marks 3 inferences with its own markers,
 *                             and one that execs `infer_shapes marked 4`
 *   infer_shapes marked N     N inferences marked by the program itself,
 *                             each leaking 16 B */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "edgemem_marker.h"

static void* volatile kept;
static atomic_int worker_done;

__attribute__((noinline)) void infer_step(int index) {
  unsigned char* block = malloc(64); /* infer-test: leak per step */
  block[0] = (unsigned char)index;
  kept = block;
}

__attribute__((noinline)) int infer_recursive(int depth) {
  unsigned char* block = malloc(32); /* infer-test: leak per level */
  block[0] = (unsigned char)depth;
  kept = block;
  /* Not a tail call: the result is used after the recursive call returns. */
  return depth > 1 ? infer_recursive(depth - 1) + block[0] : block[0];
}

static jmp_buf back_to_main;

__attribute__((noinline)) void infer_jump(int index) {
  unsigned char* block = malloc(16);
  block[0] = (unsigned char)index;
  kept = block;
  longjmp(back_to_main, 1);
}

static void marked(int n) {
  for (int i = 1; i <= n; ++i) {
    edgemem_mark_inference_begin((uint64_t)i);
    unsigned char* block = malloc(16); /* infer-test: leak per marked inference */
    block[0] = (unsigned char)i;
    kept = block;
    edgemem_mark_inference_end((uint64_t)i);
  }
}

static void* worker(void* arg) {
  int n = *(int*)arg;
  for (int i = 0; i < n; ++i) infer_step(i);
  atomic_store(&worker_done, 1);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s threads|recursive N\n", argv[0]);
    return 2;
  }
  int n = atoi(argv[2]);
  if (strcmp(argv[1], "threads") == 0) {
    pthread_t t;
    pthread_create(&t, NULL, worker, &n);
    /* The main thread's own traffic, interleaved with the worker's calls
     * (paced: the worker is slow under a probe). */
    int rounds = 0;
    while (!atomic_load(&worker_done) || rounds < 10) {
      void* p = malloc(48);
      free(p);
      ++rounds;
      usleep(1000);
    }
    pthread_join(t, NULL);
    printf("infer_shapes: %d steps in a worker, %d rounds in main\n", n, rounds);
    return 0;
  }
  if (strcmp(argv[1], "killed") == 0) {
    for (int i = 0; i < n; ++i) infer_step(i);
    kill(getpid(), SIGKILL);
  }
  if (strcmp(argv[1], "marked") == 0) {
    marked(n);
    printf("infer_shapes: %d inferences marked in %d\n", n, (int)getpid());
    return 0;
  }
  if (strcmp(argv[1], "children") == 0) {
    for (int i = 0; i < n; ++i) infer_step(i);
    pid_t forked = fork();
    if (forked == 0) {
      marked(3);
      printf("infer_shapes: forked child %d marked 3\n", (int)getpid());
      fflush(stdout);
      _exit(0);
    }
    waitpid(forked, NULL, 0);
    pid_t execd = fork();
    if (execd == 0) {
      execl(argv[0], argv[0], "marked", "4", (char*)NULL);
      _exit(127);
    }
    waitpid(execd, NULL, 0);
    printf("infer_shapes: %d steps, children %d and %d\n", n, (int)forked, (int)execd);
    return 0;
  }
  if (strcmp(argv[1], "longjmp") == 0) {
    volatile int i = 0;
    setjmp(back_to_main);
    if (i < n) {
      ++i;
      infer_jump(i);
    }
    printf("infer_shapes: %d calls left by longjmp\n", n);
    return 0;
  }
  int sum = 0;
  for (int i = 0; i < n; ++i) sum += infer_recursive(3);
  printf("infer_shapes: %d recursive calls (%d)\n", n, sum);
  return 0;
}
