// The objects mapped into the process (dl_iterate_phdr): written as MODULE
// records at start and after dlopen/dlclose so stack addresses can be
// symbolised offline, and kept as executable ranges so the frame-pointer
// walk can tell a return address from stack garbage.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gnu_build_id.h"

// Internal to the library: bound at link time, no PLT call on the hot path.
#pragma GCC visibility push(hidden)

namespace edgemem::preload {

struct ModuleInfo {
  uint64_t bias = 0, start = 0, end = 0;
  const char* path = "";
  const uint8_t* build_id = nullptr;  // GNU build ID, from the mapped note
  size_t build_id_size = 0;
};

struct ModuleSink {
  virtual void loaded(const ModuleInfo& module) = 0;
  virtual void gone(uint64_t start) = 0;

 protected:
  ~ModuleSink() = default;
};

// Reports objects not reported before and those that went away.
void scan_modules(ModuleSink& sink);
// The same, unless another thread is scanning (from inside an allocation:
// never waits for the lock).
void scan_modules_unless_busy(ModuleSink& sink);
// Whether the loader added or removed an object since the last scan (cheap:
// one step of dl_iterate_phdr).
bool modules_added_since_scan();
// Reports every module again (a forked child's new file).
void report_all_modules(ModuleSink& sink);
// In a forked child the loader's lock may be held for good by a thread of
// the parent: until trust_loader() (after the child's own dlopen added an
// object), nothing calls dl_iterate_phdr and stacks are walked by frame
// pointers only.
void distrust_loader_after_fork();
// Objects in the loader's list, counted without its lock.
size_t loaded_objects();
void trust_loader();
bool loader_trusted();

// Around fork(): the child must not inherit the table's lock held by a
// thread that does not exist in it.
void lock_modules_for_fork();
void unlock_modules_after_fork();

bool in_executable_code(uintptr_t address);

// Set by scan_modules; read on every frame of every stack, so inline.
struct AddressRange {
  uintptr_t lo, hi;
  bool holds(uintptr_t address) const { return address >= lo && address < hi; }
};
extern AddressRange libc_range, cxx_range, self_range;

inline bool in_libc(uintptr_t address) { return libc_range.holds(address); }
// libc or libstdc++: built without frame pointers, and the callers of the
// program's outermost frames (main, a thread's function).
inline bool in_runtime(uintptr_t address) { return in_libc(address) || cxx_range.holds(address); }
inline bool in_this_library(uintptr_t address) { return self_range.holds(address); }

}  // namespace edgemem::preload

#pragma GCC visibility pop
