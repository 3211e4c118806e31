// `edgemem record --inference-fn NAME` without root: gdb (ptrace, the
// user's own processes) stops the program at each call of NAME and at its
// return just long enough to number the two from the preload library's
// sequence counter; the numbers become INFER records of the recording
// (inference_marks.h). The eBPF path (`--via ebpf`) needs root instead.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "record/inference_marks.h"

namespace edgemem {

struct InferenceProbe {
  std::string dir;                // private temp dir: the script, the marks, gdb's log
  std::vector<std::string> gdb;   // the command line to run
  std::string marks() const { return dir + "/marks"; }
  std::string log() const { return dir + "/gdb.log"; }
  std::string ready() const { return dir + "/ready"; }  // the breakpoint is set
  std::string stop() const { return dir + "/stop"; }    // --pid: edgemem asks gdb to detach
};

// gdb runs `command` with `ld_preload` as LD_PRELOAD (gdb itself is not
// preloaded). nullopt with a one-line error (exit 127: no such program;
// otherwise 2) when the program, NAME in it or gdb cannot be found.
std::optional<InferenceProbe> prepare_inference_run(const std::string& name, const std::vector<std::string>& command,
                                                    const std::string& ld_preload, std::string& error, int& exit_code);

// gdb attaches to `pid`, which already has the preload library loaded,
// until it exits or gdb is interrupted (SIGINT: it detaches).
std::optional<InferenceProbe> prepare_inference_attach(const std::string& name, int pid, std::string& error);

struct ProbeOutcome {
  std::string error;  // the marks could not be read or merged
  std::optional<int> exit_code, signal;  // how the program ended, when gdb saw it
  uint64_t inferences = 0;
};

// Reads the marks and, when `merge`, appends them to the (chunked)
// recording; the probe's directory is removed then, kept otherwise (its
// marks path is in the error).
ProbeOutcome finish_inference_probe(const InferenceProbe& probe, const std::string& recording, bool merge);

// The last line gdb wrote to its log, for errors.
std::string last_gdb_line(const InferenceProbe& probe);

}  // namespace edgemem
