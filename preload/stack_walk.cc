#include "stack_walk.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/auxv.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <cstdlib>
#include <cstring>

#include "module_map.h"

namespace edgemem::preload {
namespace {

// EDGEMEM_UNWIND=libunwind skips the frame-pointer walk (for programs whose
// frame pointers are present but not trustworthy).
bool force_libunwind() {
  static int forced = -1;
  if (forced < 0) {
    const char* v = getenv("EDGEMEM_UNWIND");
    forced = v && strcmp(v, "libunwind") == 0;
  }
  return forced;
}

size_t frame_pointer_walk(uintptr_t* frames, size_t max, const StackBounds& b, bool& complete) {
  complete = false;
  auto fp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  size_t n = 0;
  while (n < max) {
    if (fp < b.lo || fp + 16 > b.hi || (fp & 7)) return n;
    auto* record = reinterpret_cast<const uintptr_t*>(fp);
    uintptr_t next = record[0], ret = record[1];
    if (!in_executable_code(ret)) return n;
    if (!in_this_library(ret)) frames[n++] = ret;
    if (next == 0) {
      complete = true;
      return n;
    }
    bool next_valid = next > fp && next + 16 <= b.hi && !(next & 7);
    if (in_runtime(ret)) {
      // libc and libstdc++ keep no frame pointers: past a return into them
      // the chain is their caller's, which would silently skip a frame.
      // The runtime allocating for the program (stdio buffers, strdup,
      // std::string) needs the unwinder; the runtime calling the program
      // (main, a std::thread's function) is the end when its saved frame
      // pointer leads nowhere.
      complete = n > 1 && (!next_valid || !in_executable_code(reinterpret_cast<const uintptr_t*>(next)[1]));
      return n;
    }
    if (!next_valid) return n;
    fp = next;
  }
  complete = true;  // deeper than `max`: the innermost frames are what matter
  return n;
}

size_t libunwind_walk(uintptr_t* frames, size_t max) {
  void* ips[kMaxFrames + 8];
  int got = unw_backtrace(ips, static_cast<int>(sizeof ips / sizeof ips[0]));
  size_t n = 0;
  for (int i = 0; i < got && n < max; ++i) {
    auto ip = reinterpret_cast<uintptr_t>(ips[i]);
    if (in_this_library(ip)) continue;
    frames[n++] = ip;
  }
  return n;
}

// Both walkers end a stack at the same frame, so one allocation site is one
// stack string: the start-up frames outside the program (libc calling main
// or a thread's function, the executable's _start) are dropped.
size_t without_startup(const uintptr_t* frames, size_t n) {
  static uintptr_t entry = 0;
  if (!entry) entry = getauxval(AT_ENTRY);
  while (n > 1 && (in_libc(frames[n - 1]) || (frames[n - 1] >= entry && frames[n - 1] < entry + 64))) --n;
  return n;
}

}  // namespace

void prepare_unwinder() {
  int held[3], count = 0;
  for (int fd = 0; fd <= 2; ++fd)
    if (fcntl(fd, F_GETFD) < 0) {
      const int placeholder = open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (placeholder < 0) break;
      held[count++] = placeholder;
    }
  void* ip[2];
  unw_backtrace(ip, 2);
  while (count > 0) close(held[--count]);
}

StackBounds current_stack_bounds() {
  StackBounds b{};
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return b;
  void* addr = nullptr;
  size_t size = 0;
  if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
    b.lo = reinterpret_cast<uintptr_t>(addr);
    b.hi = b.lo + size;
  }
  pthread_attr_destroy(&attr);
  return b;
}

__thread bool listing_objects = false;

__attribute__((noinline)) size_t capture_stack(uintptr_t* frames, size_t max, const StackBounds& bounds) {
  if (!force_libunwind() || listing_objects) {
    bool complete = false;
    size_t n = frame_pointer_walk(frames, max, bounds, complete);
    if ((complete && n > 0) || listing_objects) return without_startup(frames, n);
  }
  return without_startup(frames, libunwind_walk(frames, max));
}

}  // namespace edgemem::preload
