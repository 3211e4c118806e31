// Blocks made before `record --pid` attaches and freed after it: the
// recording never sees them made, so their frees are counted (emt UNSEEN
// FREE records) and the report says the recording began with an attach.
// Prints "ready N" once its blocks are made, N the size malloc counts for
// one (its own allocator's: a sanitizer build of the test counts
// another); waits for the recorder (its
// exported sequence counter appears), then frees them one by one beside a
// block of its own that it keeps. Before them a realloc of one fails: the
// block stays live, so that is no free (it once counted 26).
#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { kEarly = 25, kEarlySize = 500, kKeptSize = 3000 };

void* volatile kept;  // used: the compiler may not drop its malloc and free
volatile size_t too_large = (size_t)1 << 62;  // no heap gives it: realloc fails

int main(void) {
  static void* early[kEarly];
  for (int i = 0; i < kEarly; ++i) early[i] = malloc(kEarlySize);
  printf("ready %zu\n", malloc_usable_size(early[0]));
  fflush(stdout);
  for (int i = 0; i < 3000 && !dlsym(RTLD_DEFAULT, "edgemem_record_seq"); ++i) usleep(10 * 1000);
  usleep(500 * 1000);  // the recorder has bound the program's calls to itself
  kept = malloc(kKeptSize);
  if (realloc(early[0], too_large)) return 1;
  for (int i = 0; i < kEarly; ++i) {
    free(early[i]);
    usleep(2 * 1000);
  }
  free(kept);
  return 0;
}
