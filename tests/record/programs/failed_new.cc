// One failed request of each C++ allocation form, and malloc's, and the
// C requests whose size overflows (calloc, reallocarray of nothing and of a
// block, which stays live): every one a single call of the program, so a
// single failed allocation in the recording (libstdc++'s new[] calls new,
// which calls malloc: each lands in the recorder again; a new_handler makes
// new try again), and a pvalloc within a page of SIZE_MAX (its rounding
// to pages once wrapped to a request of 0 B). Then one allocation that
// succeeds, freed.
#include <malloc.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>

namespace {

constexpr std::size_t kHuge = std::size_t{1} << 50;  // more than any machine here can give

// Keeps the optimiser from removing a new whose result is unused.
void* volatile sink;

// Called once: gives up, so the retry fails too and new throws.
void give_up() { std::set_new_handler(nullptr); }

}  // namespace

int main() {
  int failed = 0;
  sink = new (std::nothrow) char[kHuge];
  failed += sink == nullptr;
  sink = ::operator new(kHuge, std::align_val_t(64), std::nothrow);
  failed += sink == nullptr;
  try {
    sink = new char[kHuge];
  } catch (const std::bad_alloc&) {
    ++failed;
  }
  try {
    sink = ::operator new(kHuge, std::align_val_t(64));
  } catch (const std::bad_alloc&) {
    ++failed;
  }
  std::set_new_handler(give_up);
  try {
    sink = new char[kHuge];
  } catch (const std::bad_alloc&) {
    ++failed;
  }
  sink = std::malloc(kHuge);
  failed += sink == nullptr;
  volatile std::size_t overflowing = (std::size_t{1} << 62) + 1;  // times 4 wraps around
  sink = std::calloc(overflowing, 4);
  failed += sink == nullptr;
  sink = reallocarray(nullptr, overflowing, 4);
  failed += sink == nullptr;
  volatile std::size_t almost_all = SIZE_MAX - 100;
  sink = pvalloc(almost_all);
  failed += sink == nullptr;
  void* kept = std::malloc(16);
  void* grown = reallocarray(kept, overflowing, 4);
  failed += grown == nullptr;
  std::free(grown ? grown : kept);
  char* fine = new char[100];
  sink = fine;
  delete[] fine;
  std::printf("failed-new-test: %d failed\n", failed);
  return failed == 10 ? 0 : 1;
}
