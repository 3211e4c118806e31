// The C library behind target/edgemem_malloc_wrap.c's --wrap functions, for
// a test program built on the host: glibc's allocator, whose realloc(p, 0)
// frees p and returns NULL as newlib's does. Defines the __real_ functions:
// include it in one file of a test program.
#pragma once

#include <cstdint>
#include <cstdlib>

extern "C" {
void em_malloc_wrap_pool(uint8_t pool);
void* __wrap_malloc(size_t size);
void __wrap_free(void* p);
void* __wrap_calloc(size_t n, size_t size);
void* __wrap_realloc(void* p, size_t size);

void* __real_malloc(size_t size) { return std::malloc(size); }
void __real_free(void* p) { std::free(p); }
void* __real_calloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return nullptr;  // as glibc's (ASan's calloc aborts instead)
  return std::calloc(n, size);
}
void* __real_realloc(void* p, size_t size) {
  if (size == 0) {
    std::free(p);
    return nullptr;
  }
  return std::realloc(p, size);
}
}
