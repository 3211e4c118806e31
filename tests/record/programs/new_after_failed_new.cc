// A failed new, caught, and then requests of the same size from deeper
// frames: a nothrow new that fails too, a malloc that fails, and one new
// that succeeds (64 B, leaked). The eBPF recorder once kept the first new
// pending: the later failures read as its retries and were lost, and a
// later success took the first one's stack. Every request is recorded once
// at its own call site.
#include <cstdio>
#include <cstdlib>
#include <new>

#define NOINLINE __attribute__((noinline))

namespace {

constexpr std::size_t kHuge = std::size_t{1} << 50;
void* volatile sink;

NOINLINE void* make(std::size_t n) { return new char[n]; }
NOINLINE void* make_nothrow(std::size_t n) { return new (std::nothrow) char[n]; }
NOINLINE void* nothrow_below(std::size_t n) {
  void* p = make_nothrow(n);
  asm volatile("");
  return p;
}
NOINLINE void* allocate(std::size_t n) { return std::malloc(n); }
NOINLINE void* malloc_below(std::size_t n) {
  void* p = allocate(n);
  asm volatile("");
  return p;
}

}  // namespace

int main() {
  int failed = 0;
  try {
    sink = make(kHuge);
  } catch (const std::bad_alloc&) {
    ++failed;
    failed += nothrow_below(kHuge) == nullptr;
    failed += malloc_below(kHuge) == nullptr;
  }
  sink = make(64);
  std::printf("new-after-failed-new-test: %d failed\n", failed);
  return failed == 3 ? 0 : 1;
}
