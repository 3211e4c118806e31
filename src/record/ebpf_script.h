// The bpftrace program behind `edgemem record`'s eBPF path: uprobes and
// uretprobes on the C library's allocation functions of one process, and on
// a user's --inference-fn, printing the lines ebpf_output_parser.h reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace edgemem {

struct UprobeTargets {
  int pid = 0;
  // The script starts and ends with a tracepoint on getpgid(ready_call),
  // which answers once bpftrace reads its output (bpftrace attaches
  // tracepoints first, then says when the uprobes are in place too).
  long ready_call = 0;
  struct Function {
    std::string path, symbol;
    uint64_t size = 0;  // bytes of its code (operator new's: whose calls are its own)
  };
  // Allocation functions to probe, each named in kAllocationFunctions or
  // kOperatorNew: one name per address, since glibc gives several names to
  // one function (aligned_alloc is memalign) and a uprobe fires for each.
  std::vector<Function> allocators;
  std::optional<Function> inference;  // --inference-fn
};

// The C library's, in the order preferred when two share an address.
inline const std::vector<std::string> kAllocationFunctions = {
    "malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign", "memalign", "aligned_alloc", "valloc", "pvalloc"};

// The C library's anonymous-mapping functions: their own pool ("mmap"), as
// the preload records them. Calls from inside a probed allocation function
// (malloc's own large blocks) are not outermost and not recorded; calls the
// C library makes for itself (thread stacks) are left out by the recorder,
// which knows where the library is mapped.
inline const std::vector<std::string> kMappingFunctions = {"mmap", "munmap", "mremap", "mprotect"};

// libstdc++'s operator new (plain, array, aligned, nothrow), probed at its
// entry so that the stack starts at the caller of `new`: through malloc the
// kernel's frame-pointer walk would start inside libstdc++, which keeps no
// frame pointers, and skip that caller. No return probe (it broke C++
// exceptions, ebpf_script.cc). Operator delete is seen through free (its
// frame is not needed).
inline const std::vector<std::string> kOperatorNew = {
    "_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t", "_ZnwmSt11align_val_t", "_ZnamSt11align_val_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t", "_ZnamSt11align_val_tRKSt9nothrow_t"};

// getpgid's argument for `ready_call`: no process has such an id (it is
// above the kernel's pid limit), so no other call is taken for it.
inline long ready_call_for(int pid) { return (1L << 30) + pid; }

// Frames walked per stack (bpftrace's limit is 127; the preload's is 64).
inline constexpr int kStackFrames = 64;

std::string bpftrace_script(const UprobeTargets& targets);

}  // namespace edgemem
