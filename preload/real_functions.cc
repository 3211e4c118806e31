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
  if (state.load(std::memory_order_acquire) == 2) return;
  int expected = 0;
  if (!state.compare_exchange_strong(expected, 1)) {
    // Another thread resolves: wait for it (only at start-up, rare).
    while (state.load(std::memory_order_acquire) != 2) {
    }
    return;
  }
  resolving_here = true;
  find(real.malloc, "malloc");
  find(real.calloc, "calloc");
  find(real.realloc, "realloc");
  find(real.reallocarray, "reallocarray");
  find(real.free, "free");
  find(real.posix_memalign, "posix_memalign");
  find(real.aligned_alloc, "aligned_alloc");
  find(real.memalign, "memalign");
  find(real.valloc, "valloc");
  find(real.pvalloc, "pvalloc");
  find(real.mmap, "mmap");
  find(real.munmap, "munmap");
  find(real.mremap, "mremap");
  find(real.dlopen, "dlopen");
  find(real.dlclose, "dlclose");
  resolving_here = false;
  state.store(2, std::memory_order_release);
}

void* next_symbol(const char* name) { return dlsym(RTLD_NEXT, name); }

}  // namespace edgemem::preload
