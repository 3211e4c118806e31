/* A program whose own code leaks nothing, and which makes the C runtime
 * allocate for itself: stdout's buffer (printf into a pipe), a second
 * thread (its stack and static TLS), thread-local storage of a library
 * loaded with dlopen (dynamic TLS, on both threads), dlopen's bookkeeping
 * (the library stays loaded). With --leak it loses a 100 B block every
 * 50 blocks of its last stretch of work (ten in all); with --lose-once, one
 * 100 B block, once.
 *
 * Usage: c_runtime TLS_PLUGIN [--leak | --lose-once]
 *
 * Where the lost blocks fall matters: edgemem calls a group a leak when its
 * lowest live count keeps rising, in more than one window of the run and
 * into its last quarter. One block lost once is one step: as much memory
 * kept until exit (a cache, a looked-up name) as a lost block. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __thread int calls; /* static TLS of the executable: no allocation */
static char* (*tls_block)(void);
void* volatile kept;

static void* worker(void* arg) {
  (void)arg;
  ++calls;
  memset(tls_block(), 1, 16);
  return NULL;
}

static void lose_a_block(void);

/* Balanced work, every block freed; with `lose_every`, a block lost each
 * `lose_every` blocks. */
static void work(int blocks, int lose_every) {
  for (int i = 0; i < blocks; ++i) {
    char* p = malloc(32 + (size_t)(i % 8) * 16);
    p[0] = (char)i;
    kept = p;
    free(p);
    if (lose_every && i % lose_every == lose_every - 1) lose_a_block();
  }
}

__attribute__((noinline)) static void lose_a_block(void) {
  kept = malloc(100); /* c-runtime-test: the lost block */
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int leak = argc > 2 && strcmp(argv[2], "--leak") == 0;
  int lose_once = argc > 2 && strcmp(argv[2], "--lose-once") == 0;
  printf("c_runtime: start\n");
  void* plugin = dlopen(argv[1], RTLD_NOW);
  if (!plugin) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  tls_block = (char* (*)(void))dlsym(plugin, "plugin_tls_block");
  if (!tls_block) return 1;
  memset(tls_block(), 2, 16);
  pthread_t thread;
  if (pthread_create(&thread, NULL, worker, NULL) != 0) return 1;
  pthread_join(thread, NULL);
  work(800, 0);
  if (lose_once) lose_a_block();
  work(500, leak ? 50 : 0);
  ++calls;
  printf("c_runtime: done, %d TLS call on the main thread\n", calls);
  return 0;
}
