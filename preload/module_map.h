// The objects mapped into the process (dl_iterate_phdr): written as MODULE
// records at start and after dlopen/dlclose so stack addresses can be
// symbolised offline, and kept as executable ranges so the frame-pointer
// walk can tell a return address from stack garbage.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgemem::preload {

struct ModuleInfo {
  uint64_t bias = 0, start = 0, end = 0;
  const char* path = "";
};

struct ModuleSink {
  virtual void loaded(const ModuleInfo& module) = 0;
  virtual void gone(uint64_t start) = 0;

 protected:
  ~ModuleSink() = default;
};

// Reports objects not reported before and those that went away.
void scan_modules(ModuleSink& sink);
// Every module must be reported again (a forked child's new file).
void forget_reported_modules();

// Around fork(): the child must not inherit the table's lock held by a
// thread that does not exist in it.
void lock_modules_for_fork();
void unlock_modules_after_fork();

bool in_executable_code(uintptr_t address);
bool in_libc(uintptr_t address);
// libc or libstdc++: built without frame pointers, and the callers of the
// program's outermost frames (main, a thread's function).
bool in_runtime(uintptr_t address);
bool in_this_library(uintptr_t address);

}  // namespace edgemem::preload
