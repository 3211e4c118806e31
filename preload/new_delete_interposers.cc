// C++ operator new and delete, every variant: the program's calls land here
// directly, so its stack starts at the program (libstdc++'s own operator
// new has no frame pointer and would send every C++ allocation to the slow
// unwinder). On failure the new_handler loop of the standard runs; when no
// handler is left, libstdc++ throws std::bad_alloc (nothing of ours is on
// the stack to unwind but this frame).
#include <cstddef>
#include <new>

#include "real_functions.h"
#include "recorded_call.h"

using namespace edgemem::preload;

namespace edgemem::preload {
__thread bool failure_recorded_outside __attribute__((tls_model("initial-exec"))) = false;
}  // namespace edgemem::preload

namespace {

using Handler = void (*)();

// While held, failures in nested interposer calls are not recorded again.
class FailureRecorded {
 public:
  FailureRecorded() : outer_(failure_recorded_outside) { failure_recorded_outside = true; }
  ~FailureRecorded() { failure_recorded_outside = outer_; }
  FailureRecorded(const FailureRecorded&) = delete;
  FailureRecorded& operator=(const FailureRecorded&) = delete;

 private:
  bool outer_;
};

Handler current_new_handler() {
  auto get = reinterpret_cast<Handler (*)()>(next_symbol("_ZSt15get_new_handlerv"));
  return get ? get() : nullptr;
}

void* allocate(size_t size, size_t align) {
  if (!real.malloc) resolve_real_functions();
  if (size == 0) size = 1;
  if (align <= alignof(std::max_align_t)) return recorded_alloc(size, 0, [=] { return real.malloc(size); });
  return recorded_alloc(size, align, [=] {
    // aligned_alloc wants a multiple of the alignment.
    return real.aligned_alloc(align, (size + align - 1) / align * align);
  });
}

// The throwing forms: retry through the new_handler, then have libstdc++
// throw std::bad_alloc (this file is built without exceptions: the throw
// passes through this frame, which holds nothing to clean up).
void* allocate_or_throw(size_t size, size_t align) {
  if (void* p = allocate(size, align)) return p;
  for (Handler handler; (handler = current_new_handler());) {
    handler();  // may throw, as the standard allows
    FailureRecorded once;  // a retry that fails again is this same failed call
    if (void* p = allocate(size, align)) return p;
  }
  if (auto throw_bad_alloc = reinterpret_cast<void (*)()>(next_symbol("_ZSt17__throw_bad_allocv"))) throw_bad_alloc();
  __builtin_trap();  // no libstdc++ to throw bad_alloc: a C++ program always has one
}

// The nothrow forms: on failure libstdc++'s own runs the new_handler loop
// and catches what a handler throws (inside it: nothing is thrown through
// this frame, so the guard below is always undone).
void* allocate_or_null(size_t size, size_t align, const char* next_name, const std::nothrow_t& tag) {
  if (void* p = allocate(size, align)) return p;
  FailureRecorded once;
  if (align) {
    auto next = reinterpret_cast<void* (*)(size_t, std::align_val_t, const std::nothrow_t&)>(next_symbol(next_name));
    return next ? next(size, std::align_val_t(align), tag) : nullptr;
  }
  auto next = reinterpret_cast<void* (*)(size_t, const std::nothrow_t&)>(next_symbol(next_name));
  return next ? next(size, tag) : nullptr;
}

void release(void* p) {
  if (!p) return;
  if (!real.free) resolve_real_functions();
  recorded_free(edgemem::emt2::kPoolMalloc, p, [=] { real.free(p); });
}

}  // namespace

void* operator new(size_t n) { return allocate_or_throw(n, 0); }
void* operator new[](size_t n) { return allocate_or_throw(n, 0); }
void* operator new(size_t n, std::align_val_t a) {
  return allocate_or_throw(n, static_cast<size_t>(a));
}
void* operator new[](size_t n, std::align_val_t a) {
  return allocate_or_throw(n, static_cast<size_t>(a));
}
void* operator new(size_t n, const std::nothrow_t& tag) noexcept {
  return allocate_or_null(n, 0, "_ZnwmRKSt9nothrow_t", tag);
}
void* operator new[](size_t n, const std::nothrow_t& tag) noexcept {
  return allocate_or_null(n, 0, "_ZnamRKSt9nothrow_t", tag);
}
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t& tag) noexcept {
  return allocate_or_null(n, static_cast<size_t>(a), "_ZnwmSt11align_val_tRKSt9nothrow_t", tag);
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t& tag) noexcept {
  return allocate_or_null(n, static_cast<size_t>(a), "_ZnamSt11align_val_tRKSt9nothrow_t", tag);
}

void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, size_t) noexcept { release(p); }
void operator delete[](void* p, size_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }
