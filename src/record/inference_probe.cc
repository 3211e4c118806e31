#include "record/inference_probe.h"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "record/inference_function.h"
#include "record/inference_probe_script.h"

namespace edgemem {
namespace fs = std::filesystem;

namespace {

#if defined(__x86_64__)
constexpr const char* kArch = "x86_64";
#elif defined(__aarch64__)
constexpr const char* kArch = "aarch64";
#else
constexpr const char* kArch = nullptr;
#endif

// A Python str of any bytes (paths need not be UTF-8), as os.fsdecode
// gives them back to the open() calls.
std::string py_string(const std::string& s) {
  std::string q = "os.fsdecode(b'";
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7F && c != '\\' && c != '\'') q += static_cast<char>(c);
    else q += fmt::format("\\x{:02x}", c);
  }
  return q + "')";
}

// The script in a private temp dir, with its values in front.
std::optional<InferenceProbe> write_probe(const InferenceFunction& f, const std::string& ld_preload, bool attach,
                                          std::string& error) {
  if (!kArch) {
    error = "--inference-fn without root probes x86-64 and AArch64 programs only; record with eBPF as root: --via ebpf";
    return std::nullopt;
  }
  if (find_in_path("gdb").empty()) {
    error = "--inference-fn without root needs gdb (Debian package gdb); or record with eBPF as root: --via ebpf";
    return std::nullopt;
  }
  char dir[] = "/tmp/edgemem-infer-XXXXXX";
  if (!mkdtemp(dir)) {
    error = fmt::format("cannot create a temp dir in /tmp for the gdb probe: {}", strerror(errno));
    return std::nullopt;
  }
  InferenceProbe probe;
  probe.dir = dir;
  std::string script = probe.dir + "/probe.py";
  std::ofstream out(script);
  out << "import os\n"
      << "MARKS = " << py_string(probe.marks()) << "\n"
      << "LOG = " << py_string(probe.log()) << "\n"
      << "READY = " << py_string(probe.ready()) << "\n"
      << "STOP = " << py_string(probe.stop()) << "\n"
      << "SYMBOL = " << py_string(f.symbol) << "\n"
      << "ARCH = '" << kArch << "'\n"
      << "PRELOAD = " << py_string(ld_preload) << "\n"
      << "ATTACH = " << (attach ? "True" : "False") << "\n"
      << kInferenceProbeScript;
  out.close();
  if (!out) {
    error = fmt::format("cannot write the gdb probe {}: {}", script, strerror(errno));
    std::error_code ec;
    fs::remove_all(probe.dir, ec);
    return std::nullopt;
  }
  // gdb on Linux drives threads in non-stop mode underneath all-stop, and
  // runs a breakpoint's stop() with only the thread that hit it stopped:
  // another could take a number between the probe's read and its write,
  // and two records would share it. Real all-stop stops every thread
  // first; it can only be chosen before gdb attaches (-iex).
  probe.gdb = {"gdb", "-batch", "-nx", "-q", "-iex", "maint set target-non-stop off", "-x", script};
  return probe;
}

}  // namespace

std::optional<InferenceProbe> prepare_inference_run(const std::string& name, const std::vector<std::string>& command,
                                                    const std::string& ld_preload, std::string& error, int& exit_code) {
  exit_code = 2;
  std::string program = find_in_path(command.front());
  if (program.empty()) {
    error = fmt::format("cannot run {}: no such program", command.front());
    exit_code = 127;
    return std::nullopt;
  }
  auto f = find_inference_function(name, {program}, error);
  if (!f) return std::nullopt;
  auto probe = write_probe(*f, ld_preload, false, error);
  if (!probe) return std::nullopt;
  probe->gdb.push_back("--args");
  probe->gdb.push_back(program);
  probe->gdb.insert(probe->gdb.end(), command.begin() + 1, command.end());
  return probe;
}

std::optional<InferenceProbe> prepare_inference_attach(const std::string& name, int pid, std::string& error) {
  std::vector<std::string> objects = objects_of(pid);
  if (objects.empty()) {
    error = fmt::format("no process {} (or its memory map is unreadable)", pid);
    return std::nullopt;
  }
  auto f = find_inference_function(name, objects, error);
  if (!f) return std::nullopt;
  auto probe = write_probe(*f, "", true, error);
  if (!probe) return std::nullopt;
  probe->gdb.insert(probe->gdb.begin() + 1, {"-p", std::to_string(pid)});
  return probe;
}

ProbeOutcome finish_inference_probe(const InferenceProbe& probe, const std::string& recording, bool merge) {
  ProbeOutcome outcome;
  std::error_code ec;
  if (!fs::exists(probe.marks(), ec)) {
    fs::remove_all(probe.dir, ec);
    return outcome;  // gdb never got as far as the program
  }
  auto marks = read_inference_marks(probe.marks(), outcome.error);
  if (!marks) return outcome;
  outcome.exit_code = marks->exit_code;
  outcome.signal = marks->signal;
  outcome.inferences = marks->inferences;
  if (!merge && marks->inferences == 0) {
    fs::remove_all(probe.dir, ec);  // no call was made: nothing to keep for later
    return outcome;
  }
  if (!merge) {
    outcome.error = fmt::format("the {} inference marks were not added to {}: they are in {}", marks->inferences,
                                recording, probe.marks());
    return outcome;
  }
  if (!append_inference_marks(recording, *marks, outcome.error)) return outcome;
  fs::remove_all(probe.dir, ec);
  return outcome;
}

std::string last_gdb_line(const InferenceProbe& probe) {
  std::ifstream log(probe.log());
  std::string line, last;
  while (std::getline(log, line))
    if (!line.empty()) last = line;
  return last.empty() ? "no output" : last;
}

}  // namespace edgemem
