// Return addresses of the current call stack, innermost first, without the
// preload library's own frames.
#pragma once

#include <cstddef>
#include <cstdint>

// Internal to the library: bound at link time, no PLT call on the hot path.
#pragma GCC visibility push(hidden)

namespace edgemem::preload {

inline constexpr size_t kMaxFrames = 64;

struct StackBounds {
  uintptr_t lo, hi;
};

// This thread's stack, for validating frame pointers.
StackBounds current_stack_bounds();

// Frame pointers first: each saved frame pointer must lie higher on this
// thread's stack and each return address in executable code, until the
// outermost frame (a return into libc's start-up or thread entry, or a null
// frame pointer returning into the executable's _start). When that fails
// (code built without frame pointers, whose frame-pointer register may even
// hold 0), libunwind unwinds from the DWARF CFI instead.
size_t capture_stack(uintptr_t* frames, size_t max, const StackBounds& bounds);

// Set while this thread is inside dl_iterate_phdr, which holds the loader's
// lock: libunwind takes a lock of its own and then the loader's, so another
// thread unwinding would wait for this one while this one waits for it. An
// allocation in a dl_iterate_phdr callback is walked by frame pointers only.
// Set too while the thread holds the mapping-edit lock (mmap_interposers.cc),
// which a thread in a dl_iterate_phdr callback may be waiting for.
extern __thread bool listing_objects __attribute__((tls_model("initial-exec")));

// Sets libunwind up now, once, before the program runs: it opens a pipe of
// its own (to test addresses), which must not take the number of a closed
// stdin, stdout or stderr (a program started with `<&-` would read it).
void prepare_unwinder();

}  // namespace edgemem::preload

#pragma GCC visibility pop
