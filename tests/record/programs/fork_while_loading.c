/* Forks 100 children while another thread loads and unloads a library and
 * lists the loaded objects in a loop: a child can inherit the loader's lock
 * held by that thread, which no thread of the child will ever release. Each
 * child allocates 100 B once and exits (it calls no loader function itself:
 * glibc's own dlopen asserts in such a child). Recorded, a child's first
 * allocation listed the loaded objects (dl_iterate_phdr, the same lock) and
 * hung after a few forks. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int stop;

static int count(struct dl_phdr_info* info, size_t size, void* data) {
  (void)info;
  (void)size;
  ++*(int*)data;
  return 0;
}

static void* loader(void* arg) {
  (void)arg;
  while (!stop) {
    void* h = dlopen("libz.so.1", RTLD_NOW);
    if (h) dlclose(h);
    int objects = 0;
    dl_iterate_phdr(count, &objects);
  }
  return NULL;
}

__attribute__((noinline)) void child_allocates(void) {
  void* volatile block = malloc(100);
  (void)block;
}

int main(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, loader, NULL) != 0) return 1;
  for (int i = 0; i < 100; ++i) {
    pid_t p = fork();
    if (p == 0) {
      child_allocates();
      _exit(0);
    }
    if (p < 0 || waitpid(p, NULL, 0) != p) return 1;
  }
  stop = 1;
  pthread_join(t, NULL);
  puts("100 forks");
  return 0;
}
