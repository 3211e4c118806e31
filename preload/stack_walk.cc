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
#include "trace_file.h"

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

// A return into the executable's _start (its first instructions).
bool in_program_entry(uintptr_t address) {
  static uintptr_t entry = 0;
  if (!entry) entry = getauxval(AT_ENTRY);
  return address >= entry && address < entry + 64;
}

// A frame record (saved frame pointer, return address) at `fp` lies within
// the stack. Subtracted, not added: code without frame pointers leaves any
// value in the register, and -16 + 16 wraps to 0, under any bound.
bool record_in_stack(uintptr_t fp, const StackBounds& b) {
  return fp >= b.lo && fp <= b.hi && b.hi - fp >= 16 && !(fp & 7);
}

size_t frame_pointer_walk(uintptr_t* frames, size_t max, const StackBounds& b, bool& complete) {
  complete = false;
  auto fp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  size_t n = 0;
  while (n < max) {
    if (!record_in_stack(fp, b)) return n;
    auto* record = reinterpret_cast<const uintptr_t*>(fp);
    uintptr_t next = record[0], ret = record[1];
    if (!in_executable_code(ret)) return n;
    if (!in_this_library(ret)) frames[n++] = ret;
    bool next_valid = next > fp && record_in_stack(next, b);
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
    if (next == 0) {
      // The outermost frame only when it returns into the executable's
      // _start. Elsewhere a null is a register of code built without frame
      // pointers (Debian's git and python), which held 0 when it called:
      // its callers are there, for the unwinder to find.
      complete = in_program_entry(ret);
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
  while (n > 1 && (in_libc(frames[n - 1]) || in_program_entry(frames[n - 1]))) --n;
  return n;
}

}  // namespace

// libunwind tests addresses by writing them into a pipe it opens on first
// use, and drains it by reading; it keeps the pipe's numbers. At the lowest
// free numbers (3 and 4) they are the ones a program's next files get once
// it closes its descriptors (daemons do), and libunwind then read and wrote
// the program's files (an audit: a read lost its first byte, a write gained
// bytes of memory). Every free number below the recording's floor is held
// while the pipe opens, so it lands just under the recording's file, out of
// the program's way; stdin, stdout and stderr, if closed, stay closed.
void prepare_unwinder() {
  const int top = descriptor_floor() - 2;  // the pipe's two ends go here
  const int placeholder = open("/dev/null", O_RDONLY | O_CLOEXEC);
  uint64_t held[1024 / 64] = {};
  // F_DUPFD takes the lowest free number atomically: after an attach the
  // program's other threads run on, and a number tested free then filled
  // could have become a file of theirs in between.
  if (placeholder >= 0)
    for (int fd; (fd = fcntl(placeholder, F_DUPFD_CLOEXEC, 0)) >= 0;) {
      if (fd >= top || fd >= 1024) {
        close(fd);
        break;
      }
      held[fd / 64] |= uint64_t{1} << (fd % 64);
    }
  void* ip[2];
  unw_backtrace(ip, 2);
  for (int fd = 0; fd < 1024; ++fd)
    if (held[fd / 64] >> (fd % 64) & 1) close(fd);
  if (placeholder >= 0) close(placeholder);
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
  // libunwind calls dl_iterate_phdr: not while the loader's lock may be
  // held (inside a callback of it, or a forked child's inherited one).
  const bool loader_busy = listing_objects || !loader_trusted();
  if (!force_libunwind() || loader_busy) {
    bool complete = false;
    size_t n = frame_pointer_walk(frames, max, bounds, complete);
    if ((complete && n > 0) || loader_busy) return without_startup(frames, n);
  }
  return without_startup(frames, libunwind_walk(frames, max));
}

}  // namespace edgemem::preload
