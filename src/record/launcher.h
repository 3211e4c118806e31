// `edgemem record`: runs a program with the preload recorder (preload/) and
// waits for it. Nothing here prints; the CLI says what happened.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "record/trace_packer.h"

namespace edgemem {

// The preload library beside an edgemem binary: the build tree keeps it in
// lib/edgemem/ next to the binary, an install in ../lib*/edgemem/.
// `tried` lists the places looked at, for the error.
std::optional<std::string> find_preload_library(const std::string& edgemem_binary, std::string& tried);

struct RecordRequest {
  std::string output;  // the recording; an existing file is replaced
  std::vector<std::string> command;
  std::string preload;  // path of libedgemem_preload.so
  // Each outermost call of this function is an inference: gdb runs the
  // program and marks the calls (inference_probe.h).
  std::string inference_fn;
};

struct RecordResult {
  std::string error;  // set when the program could not be started
  int exit_code = 0;  // the program's, or 128 + the signal that ended it
  int signal = 0;     // the signal that ended it, 0 if it exited
  // The recordings it left: the output, then FILE.PID ones of forked
  // children and exec'd programs.
  std::vector<std::string> recordings;
  // When the program replaced itself by exec (a wrapper script, pyenv's
  // python3 shim): the recording of the last program the process became,
  // which is the run the user meant; the output holds what ran before.
  std::optional<std::string> exec_image;
  // One line per recording left chunked (why), or packed (sizes).
  std::vector<std::string> notes;
  uint64_t inferences = 0;  // calls of inference_fn marked
};

// Packs each finished recording (trace_packer.h) and says what happened.
std::vector<std::string> pack_recordings(const std::vector<std::string>& recordings);
// What one packing did, as a line for the user (none when the file was
// already packed).
std::optional<std::string> pack_note(const std::string& file, const PackResult& p);

RecordResult run_recorded(const RecordRequest& request);

}  // namespace edgemem
