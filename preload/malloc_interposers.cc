// The C allocation functions, exported with C linkage so the dynamic linker
// binds the program's (and every library's) calls to them first. Each calls
// the real function, then records; frees record before the real free (see
// next_seq() for why).
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "edgemem/emt_v2.h"
#include "real_functions.h"
#include "recorded_call.h"

using namespace edgemem::preload;

namespace {

// False while this thread resolves them (dlsym allocating): the caller then
// serves the request from the bootstrap buffer.
bool ensure_resolved() {
  if (!real.malloc) resolve_real_functions();
  return real.malloc != nullptr;
}

size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// A pointer dlsym's calloc got from the bootstrap buffer, grown by realloc:
// copied into a real block (the buffer's bytes after it are the upper bound).
void* leave_bootstrap(void* old, size_t size) {
  void* p = malloc(size);
  if (p && is_bootstrap(old)) {
    size_t room = static_cast<size_t>(bootstrap_end() - static_cast<const unsigned char*>(old));
    memcpy(p, old, size < room ? size : room);
  }
  return p;
}

}  // namespace

extern "C" {

void* malloc(size_t size) {
  if (!ensure_resolved()) return bootstrap_alloc(size, 16);
  return recorded_alloc(size, 0, [=] { return real.malloc(size); });
}

void* calloc(size_t count, size_t size) {
  size_t total = 0;
  bool overflow = __builtin_mul_overflow(count, size, &total);
  if (!ensure_resolved()) return overflow ? nullptr : bootstrap_alloc(total, 16);
  if (overflow) total = SIZE_MAX;  // recorded as the failure it is
  return recorded_alloc(total, 0, [=] { return real.calloc(count, size); });
}

void free(void* p) {
  if (!p || is_bootstrap(p) || !ensure_resolved()) return;
  recorded_free(edgemem::emt2::kPoolMalloc, p, [=] { real.free(p); });
}

void* realloc(void* old, size_t size) {
  if (is_bootstrap(old) || !ensure_resolved()) return leave_bootstrap(old, size);
  return recorded_realloc(old, size, [=] { return real.realloc(old, size); });
}

void* reallocarray(void* old, size_t count, size_t size) {
  size_t total = 0;
  const bool overflow = __builtin_mul_overflow(count, size, &total);
  if (is_bootstrap(old) || !ensure_resolved()) {
    if (!overflow) return leave_bootstrap(old, total);
    errno = ENOMEM;
    return nullptr;
  }
  if (overflow) total = SIZE_MAX;  // libc's refuses it: recorded as the failure it is, as calloc's
  return recorded_realloc(old, total, [=] { return real.reallocarray(old, count, size); });
}

int posix_memalign(void** out, size_t align, size_t size) {
  if (!ensure_resolved()) {
    *out = bootstrap_alloc(size, align);
    return *out ? 0 : ENOMEM;
  }
  int result = 0;
  recorded_alloc(size, align, [&]() -> void* {
    result = real.posix_memalign(out, align, size);
    return result == 0 ? *out : nullptr;
  });
  return result;
}

void* aligned_alloc(size_t align, size_t size) {
  if (!ensure_resolved()) return bootstrap_alloc(size, align);
  return recorded_alloc(size, align, [=] { return real.aligned_alloc(align, size); });
}

void* memalign(size_t align, size_t size) {
  if (!ensure_resolved()) return bootstrap_alloc(size, align);
  return recorded_alloc(size, align, [=] { return real.memalign(align, size); });
}

void* valloc(size_t size) {
  if (!ensure_resolved()) return bootstrap_alloc(size, page_size());
  return recorded_alloc(size, page_size(), [=] { return real.valloc(size); });
}

void* pvalloc(size_t size) {
  if (!ensure_resolved()) return bootstrap_alloc(size, page_size());
  size_t page = page_size();
  // pvalloc rounds the request up to whole pages: that is what the block
  // holds. A request within a page of SIZE_MAX fails: it is recorded as
  // asked, not as the 0 B its rounding wraps to.
  size_t rounded = size == 0 ? page : size > SIZE_MAX - (page - 1) ? size : (size + page - 1) / page * page;
  return recorded_alloc(rounded, page, [=] { return real.pvalloc(size); });
}

}  // extern "C"
