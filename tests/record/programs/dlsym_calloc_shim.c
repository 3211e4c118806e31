/* Makes dlsym allocate with calloc, as older glibc and other C libraries
 * do: preloaded after libedgemem_preload.so, this dlsym is the one the
 * recorder's start-up calls, and the calloc inside it reaches the recorder
 * before it knows libc's calloc. The recorder must serve it from its
 * bootstrap buffer (and ignore its free) instead of recursing. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

void* dlsym(void* handle, const char* name) {
  static void* (*next)(void*, const char*);
  void* scratch = calloc(1, 64);
  if (!next) next = (void* (*)(void*, const char*))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
  if (!next) next = (void* (*)(void*, const char*))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
  free(scratch);
  return next(handle, name);
}
