#include "real_functions.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdint>

namespace edgemem::preload {

RealFunctions real;

namespace {

// dlsym's calloc asks for a few dozen bytes; this is plenty and lives in .bss.
alignas(64) unsigned char bootstrap_buffer[64 * 1024];
std::atomic<size_t> bootstrap_used{0};
std::atomic<int> state{0};  // 0 unresolved, 1 resolving, 2 resolved
__thread bool resolving_here __attribute__((tls_model("initial-exec"))) = false;

template <typename F>
void find(F& slot, const char* name) {
  slot = reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

}  // namespace

bool resolving() { return resolving_here; }

void* bootstrap_alloc(size_t size, size_t align) {
  if (align < 16) align = 16;
  size_t at = bootstrap_used.load(std::memory_order_relaxed);
  size_t start = 0;
  do {
    start = (at + align - 1) & ~(align - 1);
    if (start + size > sizeof bootstrap_buffer) return nullptr;
  } while (!bootstrap_used.compare_exchange_weak(at, start + size));
  return bootstrap_buffer + start;  // .bss: already zero, as calloc promises
}

bool is_bootstrap(const void* p) {
  auto a = reinterpret_cast<uintptr_t>(p), lo = reinterpret_cast<uintptr_t>(bootstrap_buffer);
  return a >= lo && a < lo + sizeof bootstrap_buffer;
}

const unsigned char* bootstrap_end() { return bootstrap_buffer + sizeof bootstrap_buffer; }

void resolve_real_functions() {
  if (state.load(std::memory_order_acquire) == 2 || resolving_here) return;
  int expected = 0;
  if (!state.compare_exchange_strong(expected, 1)) {
    // Another thread resolves: wait for it (only at start-up, rare).
    while (state.load(std::memory_order_acquire) != 2) {
    }
    return;
  }
  resolving_here = true;
  // Published together at the end: until then every call is served from
  // the bootstrap buffer, never half by libc (a libc block freed while
  // libc's free is still unknown).
  RealFunctions found{};
  find(found.malloc, "malloc");
  find(found.calloc, "calloc");
  find(found.realloc, "realloc");
  find(found.reallocarray, "reallocarray");
  find(found.free, "free");
  find(found.posix_memalign, "posix_memalign");
  find(found.aligned_alloc, "aligned_alloc");
  find(found.memalign, "memalign");
  find(found.valloc, "valloc");
  find(found.pvalloc, "pvalloc");
  find(found.mmap, "mmap");
  find(found.munmap, "munmap");
  find(found.mremap, "mremap");
  find(found.mprotect, "mprotect");
  find(found.pkey_mprotect, "pkey_mprotect");
  find(found.dlopen, "dlopen");
  find(found.dlclose, "dlclose");
  find(found.dl_iterate_phdr, "dl_iterate_phdr");
  find(found.prctl, "prctl");
  find(found.pthread_setname_np, "pthread_setname_np");
  real = found;
  resolving_here = false;
  state.store(2, std::memory_order_release);
}

void* next_symbol(const char* name) { return dlsym(RTLD_NEXT, name); }

}  // namespace edgemem::preload
