/* One thread commits and gives back pages of a PROT_NONE reservation (built
 * without frame pointers, so the recorder walks its stacks with libunwind,
 * which asks the loader); the main thread calls mprotect on a page of its
 * own from inside dl_iterate_phdr callbacks, holding the loader's lock, as
 * GOT/PLT hooking libraries do. The recorder held its mapping lock while it
 * unwound: each thread waited for the other's lock, and the program hung. */
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

static char* cage;
static size_t page;
static atomic_int done;
static char own[1 << 16] __attribute__((aligned(65536)));

static void* commit_and_give_back(void* arg) {
  for (int i = 0; i < 50000; ++i) {
    char* p = cage + (size_t)(i % 512) * 2 * page;
    if (mprotect(p, page, PROT_READ | PROT_WRITE) != 0 || mprotect(p, page, PROT_NONE) != 0) {
      perror("mprotect");
      break;
    }
  }
  atomic_store(&done, 1);
  return arg;
}

static int touch_own_page(struct dl_phdr_info* info, size_t size, void* data) {
  (void)info;
  (void)size;
  (void)data;
  return mprotect(own, page, PROT_READ | PROT_WRITE) != 0;
}

int main(void) {
  page = (size_t)sysconf(_SC_PAGESIZE);
  cage = mmap(NULL, 1024 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (cage == MAP_FAILED) return 1;
  pthread_t t;
  pthread_create(&t, NULL, commit_and_give_back, NULL);
  while (!atomic_load(&done)) dl_iterate_phdr(touch_own_page, NULL);
  pthread_join(t, NULL);
  puts("mprotect-in-loader-callback-test: done");
  return 0;
}
