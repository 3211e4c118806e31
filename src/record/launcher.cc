#include "record/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "record/inference_probe.h"

namespace edgemem {
namespace fs = std::filesystem;

std::optional<std::string> find_preload_library(const std::string& edgemem_binary, std::string& tried) {
  std::error_code ec;
  fs::path bin = fs::weakly_canonical(fs::path(edgemem_binary), ec).parent_path();
  const fs::path candidates[] = {bin / "lib/edgemem", bin.parent_path() / "lib/edgemem",
                                 bin.parent_path() / "lib64/edgemem", bin.parent_path() / "lib/x86_64-linux-gnu/edgemem",
                                 bin.parent_path() / "lib/aarch64-linux-gnu/edgemem"};
  tried.clear();
  for (const fs::path& dir : candidates) {
    fs::path lib = dir / "libedgemem_preload.so";
    if (fs::is_regular_file(lib, ec)) return lib.string();
    tried += (tried.empty() ? "" : ", ") + lib.string();
  }
  return std::nullopt;
}

std::optional<std::string> pack_note(const std::string& file, const PackResult& p) {
  if (p.packed && p.chunks_packed_while_written > 0)
    return fmt::format("packed {}: {} bytes chunked, {} bytes packed ({} of its {} chunks while the program ran)", file,
                       p.chunked_bytes, p.packed_bytes, p.chunks_packed_while_written, p.chunks);
  if (p.packed) return fmt::format("packed {}: {} bytes chunked, {} bytes packed", file, p.chunked_bytes, p.packed_bytes);
  if (!p.why_not.empty()) return fmt::format("{} is not packed: {}", file, p.why_not);
  return std::nullopt;
}

namespace {

// FILE.PID or FILE.PID.N, as the preload library names a child's recording
// (not FILE.packing, or a file of the user's own beside it).
bool is_pid_suffix(const std::string& suffix) {
  size_t dot = suffix.find('.');
  auto digits = [](std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return dot == std::string::npos ? digits(suffix)
                                  : digits(std::string_view(suffix).substr(0, dot)) &&
                                        digits(std::string_view(suffix).substr(dot + 1));
}

// The recording of the last program process `pid` became by exec: the
// preload names each image's FILE.PID, then FILE.PID.1, FILE.PID.2, ...
std::optional<std::string> last_exec_image(const std::string& output, pid_t pid,
                                           const std::vector<std::string>& children) {
  const std::string own = fmt::format("{}.{}", output, pid);
  std::optional<std::string> last;
  long last_n = -1;
  for (const std::string& file : children) {
    long n = -1;
    if (file == own) n = 0;
    else if (file.starts_with(own + ".")) n = std::strtol(file.c_str() + own.size() + 1, nullptr, 10);
    if (n > last_n) {
      last_n = n;
      last = file;
    }
  }
  return last;
}

// The program being waited for, for the forwarding handler.
volatile sig_atomic_t recorded_pid = 0;

// SIGTERM and SIGHUP (a service manager stopping it, `timeout`, a closed
// terminal) end the program as they would have ended it run alone, and the
// recording is finished as after any end, instead of leaving the program
// running without its parent and the file unpacked.
void forward_to_program(int signal) {
  const int saved = errno;  // the interrupted code may be about to read its own
  if (recorded_pid > 0) kill(static_cast<pid_t>(recorded_pid), signal);
  errno = saved;
}

// Waits for the program; meanwhile packs what it has finished writing every
// few milliseconds (woken at once when it ends, through its pidfd).
void wait_packing(pid_t pid, int& status, RecordingPacker* packer) {
  int pidfd = packer ? static_cast<int>(syscall(SYS_pidfd_open, pid, 0)) : -1;
  if (pidfd >= 0) {
    for (;;) {
      pid_t done = waitpid(pid, &status, WNOHANG);
      if (done == pid || (done < 0 && errno != EINTR)) break;
      packer->pack_left_chunks();
      pollfd ended{pidfd, POLLIN, 0};
      poll(&ended, 1, 20);
    }
    close(pidfd);
    return;
  }
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

RecordResult run_recorded(const RecordRequest& request) {
  RecordResult result;
  std::error_code ec;
  fs::path output = fs::absolute(request.output, ec);
  fs::remove(output, ec);
  // FILE.PID recordings of this run, not those an earlier run left.
  // (less a second: file times come from the coarse kernel clock).
  auto started = fs::file_time_type::clock::now() - std::chrono::seconds(1);
  std::string ld_preload = request.preload;
  if (const char* existing = getenv("LD_PRELOAD"); existing && *existing) ld_preload += std::string(":") + existing;

  std::optional<InferenceProbe> probe;
  if (!request.inference_fn.empty()) {
    probe = prepare_inference_run(request.inference_fn, request.command, ld_preload, result.error, result.exit_code);
    if (!probe) return result;
  }
  std::vector<char*> argv;
  for (const std::string& a : probe ? probe->gdb : request.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  // The child reports a failed exec through this pipe (closed on a good one).
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) {
    result.error = fmt::format("cannot start {}: {}", request.command[0], strerror(errno));
    result.exit_code = 2;
    return result;
  }
  // Like system(): Ctrl-C and Ctrl-\ go to the program, and we wait for
  // it. Without the probe, SIGTERM and SIGHUP are passed on to it (with it,
  // gdb would get them and kill the program: they end edgemem as before).
  // They are held back over the fork, so one that comes meanwhile reaches
  // the program once its pid is known.
  struct sigaction ignore {}, forward {}, old_int {}, old_quit {}, old_term {}, old_hup {};
  ignore.sa_handler = SIG_IGN;
  forward.sa_handler = forward_to_program;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  sigset_t held, old_mask;
  sigemptyset(&held);
  sigaddset(&held, SIGTERM);
  sigaddset(&held, SIGHUP);
  const bool forwarding = !probe;
  if (forwarding) {
    sigprocmask(SIG_BLOCK, &held, &old_mask);
    recorded_pid = 0;
    sigaction(SIGTERM, &forward, &old_term);
    sigaction(SIGHUP, &forward, &old_hup);
  }
  pid_t pid = fork();
  if (pid == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    if (forwarding) {
      sigaction(SIGTERM, &old_term, nullptr);
      sigaction(SIGHUP, &old_hup, nullptr);
      sigprocmask(SIG_SETMASK, &old_mask, nullptr);  // (a signal held back meanwhile is the parent's to forward)
    }
    signal(SIGPIPE, SIG_DFL);  // edgemem ignores these; an ignored signal stays ignored across exec
    signal(SIGXFSZ, SIG_DFL);
    // gdb passes LD_PRELOAD to the program only.
    if (probe) unsetenv("LD_PRELOAD");
    else setenv("LD_PRELOAD", ld_preload.c_str(), 1);
    setenv("EDGEMEM_OUTPUT", output.c_str(), 1);
    if (probe) setenv("EDGEMEM_OWN_MARKERS", "0", 1);  // the probe marks the inferences
    else unsetenv("EDGEMEM_OWN_MARKERS");
    execvp(argv[0], argv.data());
    int err = errno;
    (void)!write(ready[1], &err, sizeof err);
    _exit(127);
  }
  if (forwarding) {
    recorded_pid = pid;
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  }
  close(ready[1]);
  int exec_error = 0;
  ssize_t got = -1;
  while (pid > 0 && (got = read(ready[0], &exec_error, sizeof exec_error)) < 0 && errno == EINTR) {
  }
  bool exec_failed = got == static_cast<ssize_t>(sizeof exec_error);
  close(ready[0]);
  int status = 0;
  // Without the probe (whose marks are appended to the file at the end),
  // the recording is packed while the program runs, on another core if it
  // has one, so that little is left to pack when it ends.
  std::optional<RecordingPacker> packer;
  if (pid > 0 && !exec_failed) {
    if (!probe) packer.emplace(output.string());
    wait_packing(pid, status, packer ? &*packer : nullptr);
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  if (forwarding) {
    recorded_pid = 0;
    sigaction(SIGTERM, &old_term, nullptr);
    sigaction(SIGHUP, &old_hup, nullptr);
  }
  if (pid < 0 || exec_failed) {
    result.error = fmt::format("cannot run {}: {}", request.command[0], strerror(pid < 0 ? errno : exec_error));
    result.exit_code = 127;
    if (probe) fs::remove_all(probe->dir, ec);
    return result;
  }
  if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    result.exit_code = 128 + result.signal;
  } else {
    result.exit_code = WEXITSTATUS(status);
  }
  if (probe) {
    // gdb's status is gdb's: the program's comes with the marks.
    const std::string gdb_said = last_gdb_line(*probe);  // before the probe's files go
    ProbeOutcome p = finish_inference_probe(*probe, output.string(), fs::exists(output, ec));
    if (!p.exit_code && !p.signal) {
      result.error = fmt::format("gdb could not run {} with the --inference-fn probe (gdb: {})", request.command[0],
                                 gdb_said);
      result.exit_code = 2;
      if (!p.error.empty()) result.error += "; " + p.error;
      fs::remove_all(probe->dir, ec);
      return result;
    }
    result.signal = p.signal.value_or(0);
    result.exit_code = p.signal ? 128 + *p.signal : *p.exit_code;
    result.inferences = p.inferences;
    if (!p.error.empty()) result.notes.push_back(p.error);
  }
  if (fs::exists(output, ec)) result.recordings.push_back(output.string());
  std::string prefix = output.filename().string() + ".";
  std::vector<std::string> children;
  for (const auto& entry : fs::directory_iterator(output.parent_path(), ec)) {
    std::string name = entry.path().filename().string();
    if (name.starts_with(prefix) && is_pid_suffix(name.substr(prefix.size())) && entry.last_write_time(ec) >= started)
      children.push_back(entry.path().string());
  }
  std::sort(children.begin(), children.end());
  result.recordings.insert(result.recordings.end(), children.begin(), children.end());
  if (!probe) result.exec_image = last_exec_image(output.string(), pid, children);
  // The program has ended (a forked child that outlives it keeps its file
  // locked and chunked): what it wrote is packed to a few bytes an event.
  for (const std::string& file : result.recordings) {
    PackResult p = packer && file == output.string() ? packer->finish() : pack_recording(file);
    if (std::optional<std::string> note = pack_note(file, p)) result.notes.push_back(*note);
  }
  return result;
}

std::vector<std::string> pack_recordings(const std::vector<std::string>& recordings) {
  std::vector<std::string> notes;
  for (const std::string& file : recordings)
    if (std::optional<std::string> note = pack_note(file, pack_recording(file))) notes.push_back(*note);
  return notes;
}

}  // namespace edgemem
