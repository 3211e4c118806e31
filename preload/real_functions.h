// The libc (and libstdc++) functions the interposers wrap, found with
// dlsym(RTLD_NEXT). dlsym itself may call calloc before any of them is
// known; bootstrap_alloc() serves those calls from a static buffer that is
// never handed to libc's free.
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <cstddef>

// Internal to the library: bound at link time, no PLT call on the hot path.
#pragma GCC visibility push(hidden)

namespace edgemem::preload {

struct RealFunctions {
  void* (*malloc)(size_t);
  void* (*calloc)(size_t, size_t);
  void* (*realloc)(void*, size_t);
  void* (*reallocarray)(void*, size_t, size_t);
  void (*free)(void*);
  int (*posix_memalign)(void**, size_t, size_t);
  void* (*aligned_alloc)(size_t, size_t);
  void* (*memalign)(size_t, size_t);
  void* (*valloc)(size_t);
  void* (*pvalloc)(size_t);
  void* (*mmap)(void*, size_t, int, int, int, off_t);
  int (*munmap)(void*, size_t);
  void* (*mremap)(void*, size_t, size_t, int, ...);
  int (*mprotect)(void*, size_t, int);
  int (*pkey_mprotect)(void*, size_t, int, int);
  void* (*dlopen)(const char*, int);
  int (*dlclose)(void*);
  int (*dl_iterate_phdr)(int (*)(struct dl_phdr_info*, size_t, void*), void*);
  int (*prctl)(int, unsigned long, unsigned long, unsigned long, unsigned long);
  int (*pthread_setname_np)(pthread_t, const char*);
};

extern RealFunctions real;

// Resolves `real` once; safe to call from any interposer.
void resolve_real_functions();
// True while resolve_real_functions() runs on this thread.
bool resolving();
// Allocation served while resolving (dlsym's calloc); nullptr when full.
void* bootstrap_alloc(size_t size, size_t align);
bool is_bootstrap(const void* p);

// A libstdc++ symbol (operator new/delete) looked up on first use: a C
// program that dlopens a C++ library gets libstdc++ only then.
void* next_symbol(const char* name);

}  // namespace edgemem::preload

#pragma GCC visibility pop
