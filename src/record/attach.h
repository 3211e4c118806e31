// `edgemem record --pid PID`: injects the preload library into a running
// process with gdb (as heaptrack -p and memray attach do). The library then
// points the process's GOT entries for the allocation functions at itself
// and records into `output` until the process exits.
#pragma once

#include <string>

namespace edgemem {

struct AttachResult {
  std::string error;  // empty on success, else why not (one line: what failed and what to do)
  // gdb is missing or ptrace was refused (yama's ptrace_scope, the process
  // already traced, not its owner): the eBPF recorder may still attach.
  bool ptrace_unavailable = false;
};

// `own_markers` false: the program's edgemem_inference_begin/end calls are
// left out (record --inference-fn marks the inferences instead).
AttachResult attach_recorder(int pid, const std::string& output, const std::string& preload, bool own_markers = true);

// Still running: exists and has not exited (a zombie its parent has not
// reaped yet has ended).
bool process_running(int pid);

}  // namespace edgemem
