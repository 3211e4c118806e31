// Where `--inference-fn NAME` lives, for both ways of probing it (the gdb
// probe, inference_probe.h, and eBPF uprobes): the program's path, and the
// first of the candidate objects that defines NAME, with a did-you-mean
// line when none does.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace edgemem {

// PROGRAM as execvp would find it (absolute), or empty.
std::string find_in_path(const std::string& program);

// The executable of a running process, or empty.
std::string exe_of(int pid);

// The candidates of `--pid PID`: its executable, then the other objects it
// maps with code; empty when the process is gone.
std::vector<std::string> objects_of(int pid);

struct InferenceFunction {
  std::string path;    // the object that defines it
  std::string symbol;  // as in its symbol table (mangled for C++)
};

// NAME in the first object that defines it; `error` names the nearest
// name when none does.
std::optional<InferenceFunction> find_inference_function(const std::string& name,
                                                         const std::vector<std::string>& objects, std::string& error);

}  // namespace edgemem
