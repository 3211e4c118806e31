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
  std::string libc;  // path of the process's C library
  // Allocation functions to probe (a subset of kAllocationFunctions): one
  // name per address, since glibc gives several names to one function
  // (aligned_alloc is memalign) and a uprobe fires for every name.
  std::vector<std::string> functions;
  struct Function {
    std::string path, symbol;
  };
  std::optional<Function> inference;  // --inference-fn
};

// What the script can probe, in the order preferred when two share an
// address. C++ operator new and delete call these through the PLT, so they
// are seen (with their own frame on the stack) without probes of their own,
// which would count each allocation twice.
inline const std::vector<std::string> kAllocationFunctions = {
    "malloc", "calloc", "realloc", "free", "posix_memalign", "memalign", "aligned_alloc", "valloc", "pvalloc"};

// Frames walked per stack (bpftrace's limit is 127; the preload's is 64).
inline constexpr int kStackFrames = 64;

std::string bpftrace_script(const UprobeTargets& targets);

}  // namespace edgemem
