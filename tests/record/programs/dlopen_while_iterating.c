/* Two threads list the loaded objects with dl_iterate_phdr and allocate in
 * its callback (as Rust's backtrace does) while the main thread dlopens and
 * dlcloses argv[1] in a loop. The callback runs with the loader's lock held:
 * a recorder that waits for a lock of its own there, while a thread holding
 * it waits for the loader, hangs the program. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile int stop;

static int copy_name(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  (void)data;
  free(strdup(info->dlpi_name ? info->dlpi_name : ""));
  return 0;
}

static void* iterate(void* arg) {
  (void)arg;
  while (!stop) dl_iterate_phdr(copy_name, NULL);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) pthread_create(&threads[i], NULL, iterate, NULL);
  for (int i = 0, rounds = atoi(argv[2]); i < rounds; ++i) {
    void* h = dlopen(argv[1], RTLD_NOW);
    if (!h) return 1;
    dlclose(h);
  }
  stop = 1;
  for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
  puts("done");
  return 0;
}
