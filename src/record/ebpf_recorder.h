// `edgemem record`'s eBPF path: bpftrace (uprobes and uretprobes on the C
// library of one process) instead of the preload library, for a process
// that cannot be ptrace-attached, and with `--via ebpf` (as root) for
// --inference-fn too: its entries and returns and the allocations are timed
// by one clock, so they are merged in order. Without root, --inference-fn
// goes through gdb instead (inference_probe.h).
// bpftrace is spawned with a generated script (ebpf_script.h), its output
// read as it comes (ebpf_output_parser.h) and written as emt v2
// (ebpf_recording.h). Nothing here prints; the CLI says what happened.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "record/ebpf_recording.h"
#include "record/unprobed_libraries.h"

namespace edgemem {

struct UprobeRequest {
  std::string output;                // the recording; an existing file is replaced
  int pid = 0;                       // attach to this process, or
  std::vector<std::string> command;  // run this program (its first allocation on)
  std::string inference_fn;          // a function whose calls are inferences; empty: none
  std::function<bool()> stop;        // polled while attached to `pid`: true ends the recording
  std::function<void(int)> attached; // the probes are in place in this process
  // Copies of our libraries that bpftrace runs on (unprobed_libraries.h),
  // removed once it has started; null: bpftrace runs on the probed files.
  UnprobedLibraries* unprobed = nullptr;
};

struct UprobeResult {
  std::string error;  // one line: why nothing was recorded
  int exit_code = 0;  // the program's (command), 128 + the signal that ended it
  int signal = 0;
  UprobeStats stats;
};

// Empty when this machine can record with uprobes, else what is missing and
// what to do (one line). Mounts tracefs when it is absent and we are root.
std::string uprobes_unavailable();

UprobeResult record_with_uprobes(const UprobeRequest& request);

}  // namespace edgemem
