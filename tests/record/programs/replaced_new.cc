// A program that replaces the global operator new with its own, over
// malloc: libstdc++'s new[] and nothrow new call it. Three blocks leaked
// through each form, every one at its own line of main.
#include <cstdio>
#include <cstdlib>
#include <new>

void* operator new(std::size_t n) {
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {
void* volatile sink;
}

int main() {
  for (int i = 0; i < 3; ++i) sink = new char[100];
  for (int i = 0; i < 3; ++i) sink = new (std::nothrow) char[200];
  for (int i = 0; i < 3; ++i) sink = new (std::nothrow) int;
  std::printf("replaced-new-test: done\n");
  return 0;
}
