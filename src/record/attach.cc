#include "record/attach.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace edgemem {
namespace fs = std::filesystem;

namespace {

// Runs a program, returning its exit status and everything it printed.
int run_capturing(const std::vector<std::string>& argv, std::string& output) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(out[1], 2);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  char buf[4096];
  ssize_t n;
  while ((n = read(out[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) output.append(buf, static_cast<size_t>(n));
  close(out[0]);
  int status = 0;
  if (pid < 0) return -1;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// gdb strings are C literals.
std::string c_literal(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

// From /proc/PID/stat: the state letter ('Z' a zombie; '?' when unreadable)
// and whether it is a kernel thread (PF_KTHREAD in the flags, the 9th
// field). COMM, the 2nd, may hold spaces and parentheses: the fields after
// it are read from its last ')'.
struct ProcessState {
  char state = '?';
  bool kernel_thread = false;
};
ProcessState process_state(int pid) {
  ProcessState out;
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  if (close == std::string::npos) return out;
  std::istringstream rest(line.substr(close + 1));
  std::string field;
  unsigned long long flags = 0;
  rest >> out.state;
  for (int i = 4; i <= 8 && rest >> field; ++i) {
  }
  if (rest >> flags) out.kernel_thread = (flags & 0x00200000) != 0;  // PF_KTHREAD
  return out;
}

// The mapped file of /proc/PID/maps named like the preload library, if any:
// a process edgemem already records (started by record, or attached to).
std::string recorder_loaded(int pid, const std::string& preload) {
  const std::string name = fs::path(preload).filename().string();
  std::ifstream maps(fmt::format("/proc/{}/maps", pid));
  std::string line;
  while (std::getline(maps, line)) {
    auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    // The file may have been replaced since it was mapped (edgemem reinstalled while it records).
    std::string path = line.substr(slash);
    if (path.ends_with(" (deleted)")) path.resize(path.size() - 10);
    if (fs::path(path).filename() == name) return path;
  }
  return {};
}

}  // namespace

AttachResult attach_recorder(int pid, const std::string& output, const std::string& preload, bool own_markers) {
  // /proc/PID/stat is world-readable: what the process is comes before whose it is.
  const ProcessState state = process_state(pid);
  if (state.state == 'Z')
    return {fmt::format("process {} has exited (a zombie its parent has not reaped): nothing is left to record", pid)};
  if (state.kernel_thread)
    return {fmt::format("process {} is a kernel thread: it has no heap of its own to record", pid)};
  if (kill(pid, 0) != 0) {
    if (errno == EPERM)
      return {fmt::format("process {} belongs to another user: run edgemem record as that user (gdb attaches to "
                          "one's own processes) or as root (ptrace or eBPF)", pid)};
    return {fmt::format("no process {} ({})", pid, strerror(errno))};
  }
  // Loading the recorder a second time crashed the program (SIGSEGV in
  // dlopen, under the first one's hooks).
  if (std::string loaded = recorder_loaded(pid, preload); !loaded.empty())
    return {fmt::format("process {} is already being recorded (edgemem's recorder {} is loaded in it): its recording "
                        "goes on where that edgemem record began it",
                        pid, loaded)};
  if (state.state == 'T')
    return {fmt::format("process {} is stopped (by a signal or a job control stop): continue it first (kill -CONT {}), "
                        "as gdb cannot load the recorder into a stopped program",
                        pid, pid)};
  std::error_code ec;
  std::string path = fs::absolute(output, ec).string();
  fs::remove(path, ec);
  // The casts give gdb the signatures libc's missing debug info would.
  const std::string set_env = "call ((int(*)(const char*, const char*, int))setenv)";
  std::vector<std::string> gdb = {
      "gdb", "-p", std::to_string(pid), "-batch", "-nx",
      "-ex", set_env + "(\"EDGEMEM_OUTPUT\", " + c_literal(path) + ", 1)",
      "-ex", set_env + "(\"EDGEMEM_ATTACH\", \"1\", 1)",
      "-ex", set_env + "(\"EDGEMEM_OWN_MARKERS\", \"" + (own_markers ? "1" : "0") + "\", 1)",
      "-ex", "call ((void*(*)(const char*, int))dlopen)(" + c_literal(preload) + ", 2)",
      "-ex", "call ((char*(*)(void))dlerror)()",
      "-ex", "detach"};
  std::string said;
  int status = run_capturing(gdb, said);
  if (status == 127) return {"gdb is not installed (Debian package gdb)", true};
  if (said.find("ptrace: Operation not permitted") != std::string::npos)
    return {fmt::format("ptrace refused attaching to {} (kernel.yama.ptrace_scope, already traced, or not the "
                        "process's owner)",
                        pid),
            true};
  if (said.find("(void *) 0x0\n") != std::string::npos || !fs::exists(path, ec)) {
    // Loaded and then gone is a recording; gone before it loaded is not.
    if (!process_running(pid))
      return {fmt::format("process {} exited while the recorder was being loaded into it: nothing to record", pid)};
    std::string last = said.substr(said.rfind('$') == std::string::npos ? 0 : said.rfind('$'));
    if (auto nl = last.find('\n'); nl != std::string::npos) last.resize(nl);
    return {fmt::format("the recorder could not be loaded into {} (gdb: {})", pid, last.empty() ? "no output" : last)};
  }
  return {};
}

bool process_running(int pid) { return kill(pid, 0) == 0 && process_state(pid).state != 'Z'; }

}  // namespace edgemem
