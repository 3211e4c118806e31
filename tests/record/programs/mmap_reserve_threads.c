/* Pages of one PROT_NONE reservation committed by several threads at once,
 * as V8's background threads commit heap pages, then one page committed and
 * given back 70,000 times (more than the recorder's 65,536 table slots),
 * then an ordinary 1 MiB mapping.
 *   4 threads x 2,000 pages made read-write, every other one made PROT_NONE
 *     again                                       (4,000 pages stay)
 *   one page made read-write and PROT_NONE again, 70,000 times (none stays)
 *   1 MiB read-write                              (stays)
 * Left in the mmap pool: 4,000 pages + 1 MiB. With the reservation's table
 * entry edited by the threads at once, commits went unrecorded; with each
 * given-back page its own entry, the table filled and the last mapping was
 * not recorded. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

enum { THREADS = 4, PAGES = 2000, CHURN = 70000 };

static char* cage;
static size_t page;
static pthread_barrier_t start;

static void protect(char* p, size_t length, int prot) {
  if (mprotect(p, length, prot) != 0) {
    perror("mprotect");
    exit(1);
  }
}

static void* commit_pages(void* arg) {
  const size_t t = (size_t)arg;
  pthread_barrier_wait(&start);
  for (size_t i = 0; i < PAGES; ++i) {
    char* p = cage + (i * THREADS + t) * 2 * page;  /* a PROT_NONE page between any two */
    protect(p, page, PROT_READ | PROT_WRITE);
    if (i % 2) protect(p, page, PROT_NONE);
  }
  return NULL;
}

int main(void) {
  page = (size_t)sysconf(_SC_PAGESIZE);
  cage = mmap(NULL, (size_t)2 * THREADS * PAGES * page + (CHURN + 1) * page, PROT_NONE,
              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (cage == MAP_FAILED) return 1;
  pthread_barrier_init(&start, NULL, THREADS);
  pthread_t threads[THREADS];
  for (size_t t = 0; t < THREADS; ++t) pthread_create(&threads[t], NULL, commit_pages, (void*)t);
  for (size_t t = 0; t < THREADS; ++t) pthread_join(threads[t], NULL);

  char* churned = cage + (size_t)2 * THREADS * PAGES * page;
  for (size_t i = 0; i < CHURN; ++i) {
    char* p = churned + i * page;
    protect(p, page, PROT_READ | PROT_WRITE);
    p[0] = 1;
    protect(p, page, PROT_NONE);
  }
  char* last = mmap(NULL, (size_t)1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (last == MAP_FAILED) return 1;
  last[0] = 1;
  printf("mmap-reserve-threads-test: done, page %zu\n", page);
  return 0;
}
