/* A program whose own code leaks nothing, and which makes the C runtime
 * allocate for itself: stdout's buffer (printf into a pipe), a second
 * thread (its stack and static TLS), thread-local storage of a library
 * loaded with dlopen (dynamic TLS, on both threads), dlopen's bookkeeping
 * (the library stays loaded). With --leak it loses one 100 B block.
 *
 * Usage: c_runtime TLS_PLUGIN [--leak]
 *
 * The work after the lost block matters: edgemem calls a group a leak when
 * its lowest live count rises, so the block is lost at about two thirds of
 * the program's allocations and stays lost through the rest. */
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

/* Balanced work: every block is freed. */
static void work(int blocks) {
  for (int i = 0; i < blocks; ++i) {
    char* p = malloc(32 + (size_t)(i % 8) * 16);
    p[0] = (char)i;
    kept = p;
    free(p);
  }
}

__attribute__((noinline)) static void lose_a_block(void) {
  kept = malloc(100); /* c-runtime-test: the lost block */
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int leak = argc > 2 && strcmp(argv[2], "--leak") == 0;
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
  work(800);
  if (leak) lose_a_block();
  work(500);
  ++calls;
  printf("c_runtime: done, %d TLS call on the main thread\n", calls);
  return 0;
}
