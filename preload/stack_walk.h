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
// outermost frame (a null frame pointer, or a return into libc's start-up
// or thread entry). When that fails (code built without frame pointers),
// libunwind unwinds from the DWARF CFI instead.
size_t capture_stack(uintptr_t* frames, size_t max, const StackBounds& bounds);

}  // namespace edgemem::preload

#pragma GCC visibility pop
