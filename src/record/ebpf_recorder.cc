#include "record/ebpf_recorder.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "record/attach.h"
#include "record/clock_ns.h"
#include "record/ebpf_elf_functions.h"
#include "record/ebpf_process_maps.h"
#include "record/ebpf_script.h"
#include "record/inference_function.h"
#include "record/mmap_watch.h"
#include "record/unprobed_libraries.h"

namespace edgemem {
namespace fs = std::filesystem;

namespace {

// Records are written once every CPU's output buffer has been read past
// them (UprobeRecording::write_settled), less this for the calls dated from
// when they were entered (a realloc preempted for longer than this could be
// written late).
constexpr uint64_t kEnteredSlackNs = 1'000'000'000;
// Records held at most (100-160 MB if every stack has 64 frames): more wait
// only while a CPU's buffer goes unread or the CPU was taken offline.
constexpr size_t kMaxWaiting = size_t{1} << 18;

// After the user stops an attached recording, how long bpftrace is given
// to read its buffers up to the stop.
constexpr uint64_t kCatchUpNs = 10'000'000'000;

struct Child {
  pid_t pid = -1;
  int out = -1, err = -1;
};

// bpftrace in a process group of its own: Ctrl-C at the terminal reaches
// edgemem, which then stops bpftrace so that it reads its buffers out.
// `libraries`: a directory searched first, with unprobed copies.
Child spawn_bpftrace(int pid, const std::string& script, const std::string& libraries) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return {};
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return {};
  }
  Child c;
  c.pid = fork();
  if (c.pid == 0) {
    setpgid(0, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    // Stacks stay addresses: the recording's reader symbolises them with DWARF.
    setenv("BPFTRACE_NO_USER_SYMBOLS", "1", 1);
    // 4 MiB per CPU (the default is 256 KiB): bpftrace formats every line in
    // user space and falls behind a busy allocator; at 1 MiB a loop of 20,000
    // malloc/free pairs lost half its events on a loaded 2-core machine.
    setenv("BPFTRACE_PERF_RB_PAGES", "1024", 1);
    // Says when every probe is attached (the recording starts then).
    setenv(std::string(kBpftraceAttachedNotice).c_str(), "1", 1);
    if (!libraries.empty()) {
      const char* was = getenv("LD_LIBRARY_PATH");
      setenv("LD_LIBRARY_PATH", (was && *was ? libraries + ":" + was : libraries).c_str(), 1);
    }
    std::string p = std::to_string(pid);
    execlp("bpftrace", "bpftrace", "-p", p.c_str(), script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  c.out = out[0];
  c.err = err[0];
  return c;
}

// The program is forked and waits on a pipe until the probes are in place,
// then execs: every allocation of the new image is seen.
struct Waiting {
  pid_t pid = -1;
  int go = -1;       // write a byte: exec
  int failed = -1;   // the exec's errno, or EOF when it succeeded
};

Waiting fork_waiting(const std::string& path, const std::vector<std::string>& command) {
  int go[2], failed[2];
  if (pipe2(go, O_CLOEXEC) != 0) return {};
  if (pipe2(failed, O_CLOEXEC) != 0) {
    close(go[0]);
    close(go[1]);
    return {};
  }
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  Waiting w;
  w.pid = fork();
  if (w.pid == 0) {
    signal(SIGINT, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);  // edgemem ignores these; an ignored signal stays ignored across exec
    signal(SIGXFSZ, SIG_DFL);
    char byte;
    close(go[1]);
    if (read(go[0], &byte, 1) != 1) _exit(127);
    execv(path.c_str(), argv.data());
    int e = errno;
    (void)!write(failed[1], &e, sizeof e);
    _exit(127);
  }
  close(go[0]);
  close(failed[1]);
  w.go = go[1];
  w.failed = failed[0];
  return w;
}

std::string first_error_line(const std::string& said) {
  std::string chosen;
  size_t at = 0;
  while (at < said.size()) {
    size_t end = said.find('\n', at);
    if (end == std::string::npos) end = said.size();
    std::string line = said.substr(at, end - at);
    at = end + 1;
    if (line.find("RLIMIT_MEMLOCK") != std::string::npos || line.empty() || line == kBpftraceAttachedNotice) continue;
    if (chosen.empty() || (line.starts_with("ERROR") && !chosen.starts_with("ERROR"))) chosen = line;
  }
  return chosen;
}

}  // namespace

std::string uprobes_unavailable() {
  if (geteuid() != 0)
    return "the eBPF recorder needs root (uprobes and BPF programs need CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN); run "
           "edgemem as root";
  if (find_in_path("bpftrace").empty()) return "the eBPF recorder needs bpftrace, which is not installed (apt-get install bpftrace)";
  std::error_code ec;
  if (!fs::exists("/sys/bus/event_source/devices/uprobe", ec))
    return "this kernel has no uprobes (CONFIG_UPROBES and CONFIG_UPROBE_EVENTS); use a kernel built with them";
  if (!fs::exists("/sys/kernel/tracing/uprobe_events", ec) && fs::exists("/sys/kernel/tracing", ec) &&
      mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) != 0)
    return fmt::format("tracefs is not mounted and could not be ({}); run: mount -t tracefs nodev /sys/kernel/tracing",
                       strerror(errno));
  return {};
}

UprobeResult record_with_uprobes(const UprobeRequest& request) {
  UprobeResult result;
  auto failed = [&](std::string why) {
    result.error = std::move(why);
    result.exit_code = 2;
    return result;
  };
  if (std::string why = uprobes_unavailable(); !why.empty()) return failed(why);

  // What to probe: the C library this process maps (a program not started
  // yet will map ours), the user's function in the program or its libraries.
  std::string program;
  std::vector<std::string> objects;
  if (request.pid) {
    objects = objects_of(request.pid);
    if (objects.empty()) return failed(fmt::format("no process {} (or its memory map is unreadable)", request.pid));
    program = objects.front();
  } else {
    program = find_in_path(request.command.front());
    if (program.empty()) {
      result.error = fmt::format("cannot run {}: no such program", request.command.front());
      result.exit_code = 127;
      return result;
    }
    objects.push_back(program);
  }
  UprobeTargets targets;
  auto mapped = read_mapped_objects(request.pid ? request.pid : getpid());
  if (!request.pid && request.unprobed)  // the program will load the libraries we run on copies of
    for (MappedObject& o : mapped) o.path = request.unprobed->original(o.path);
  std::string libc_path = find_libc(mapped), why;
  if (request.unprobed && request.unprobed->is_copy(libc_path))  // would leave the program unprobed
    return failed(fmt::format("{} is edgemem's private copy of the C library, not the one programs load", libc_path));
  auto libc = libc_path.empty() ? std::nullopt : read_elf_functions(libc_path, why);
  if (!libc || !libc->find_exact("malloc"))
    return failed(fmt::format("{} maps no C library whose malloc can be probed{}",
                              request.pid ? fmt::format("process {}", request.pid) : program, why.empty() ? "" : " (" + why + ")"));
  auto add_probes = [&](const std::string& path, const ElfFunctions& elf, const std::vector<std::string>& names) {
    std::set<uint64_t> addresses;
    for (const std::string& name : names)
      if (const ElfFunction* f = elf.find_exact(name); f && addresses.insert(f->address).second)
        targets.allocators.push_back({path, name, f->size});
  };
  add_probes(libc_path, *libc, kAllocationFunctions);
  add_probes(libc_path, *libc, kMappingFunctions);
  if (std::string cxx = find_libstdcxx(mapped); !cxx.empty())
    if (auto elf = read_elf_functions(cxx, why)) add_probes(cxx, *elf, kOperatorNew);
  // A program that replaces operator new: libstdc++'s new[] and nothrow new
  // call its own, whose allocator call then served no probed new (the
  // caller's frame was lost, sites read "operator new[];operator new").
  std::string no_elf;
  if (auto elf = read_elf_functions(program, no_elf)) add_probes(program, *elf, kOperatorNew);
  if (!request.inference_fn.empty()) {
    auto f = find_inference_function(request.inference_fn, objects, why);
    if (!f) return failed(why);
    targets.inference = UprobeTargets::Function{f->path, f->symbol};
  }

  Waiting waiting;
  if (!request.pid) {
    waiting = fork_waiting(program, request.command);
    if (waiting.pid < 0) return failed(fmt::format("cannot start {}: {}", program, strerror(errno)));
  }
  int pid = request.pid ? request.pid : waiting.pid;
  targets.pid = pid;
  // A program we start may end before its /proc maps are read (a short one
  // on a loaded machine did): the kernel's own mapping records are kept.
  std::unique_ptr<MmapWatch> mappings;
  if (!request.pid) {
    std::string no_watch;
    mappings = MmapWatch::open(pid, no_watch);
  }
  targets.ready_call = ready_call_for(getpid());

  char script_path[] = "/tmp/edgemem-uprobes-XXXXXX.bt";
  int script_fd = mkstemps(script_path, 3);
  std::string script = bpftrace_script(targets);
  bool script_ok = script_fd >= 0 && write(script_fd, script.data(), script.size()) == static_cast<ssize_t>(script.size());
  if (script_fd >= 0) close(script_fd);
  auto end_waiting = [&] {
    if (waiting.pid < 0) return;
    close(waiting.go);  // the program is not started: it exits (127)
    close(waiting.failed);
    waitpid(waiting.pid, nullptr, 0);
    waiting.pid = -1;
  };
  if (!script_ok) {
    end_waiting();
    return failed(fmt::format("cannot write the bpftrace script in /tmp: {}", strerror(errno)));
  }

  EmtV2FileWriter writer;
  if (!writer.open(request.output, why)) {
    unlink(script_path);
    end_waiting();
    return failed(why);
  }
  writer.wall(realtime_ns(), monotonic_ns());
  const size_t cpus = static_cast<size_t>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  UprobeRecording recording(writer, pid, cpus);
  if (request.pid) {
    recording.attached();
    recording.refresh_modules();
  }

  Child bpftrace = spawn_bpftrace(pid, script_path, request.unprobed ? request.unprobed->directory() : std::string());
  if (bpftrace.pid < 0) {
    unlink(script_path);
    end_waiting();
    return failed(fmt::format("cannot start bpftrace: {}", strerror(errno)));
  }
  BpftraceOutputParser parser;
  std::vector<UprobeRecord> records;
  std::string said;  // bpftrace's stderr
  bool out_open = true, err_open = true, target_ended = false, started = false, stopping = false, stopped = false;
  uint64_t stopped_at = 0;
  uint64_t lost_seen = 0, quiet_since = 0, last_modules = 0, spawned = monotonic_ns();
  bool heard = false;     // anything from bpftrace
  bool notified = false;  // bpftrace's notice on standard error (before 0.23)
  std::string err_tail;   // where that notice may be split between reads
  uint64_t attached_at = UINT64_MAX, detaching_at = UINT64_MAX;
  bool timed_out = false;
  int program_status = 0;
  while (out_open || err_open) {
    // A stream at its end is left out (poll ignores negative descriptors).
    pollfd fds[2] = {{out_open ? bpftrace.out : -1, POLLIN, 0}, {err_open ? bpftrace.err : -1, POLLIN, 0}};
    int n = poll(fds, 2, 50);
    if (n < 0 && errno != EINTR) break;
    char buf[65536];
    bool got = false;
    for (int i = 0; i < 2; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t r = read(fds[i].fd, buf, sizeof buf);
      if (r <= 0) {
        if (r == 0 || errno != EINTR) (i == 0 ? out_open : err_open) = false;
        continue;
      }
      heard = true;
      if (i == 0) {
        const size_t before = records.size();
        parser.feed({buf, static_cast<size_t>(r)}, records);
        // The CPUs' heartbeats go on after the process has ended: output is
        // quiet when nothing else comes.
        got = got || std::any_of(records.begin() + static_cast<std::ptrdiff_t>(before), records.end(),
                                 [](const UprobeRecord& u) { return u.kind != UprobeRecord::Kind::heartbeat; });
      } else {
        got = true;
        err_tail.append(buf, static_cast<size_t>(r));
        notified = notified || err_tail.find(kBpftraceAttachedNotice) != std::string::npos;
        err_tail.erase(0, err_tail.size() > kBpftraceAttachedNotice.size() ? err_tail.size() - kBpftraceAttachedNotice.size() : 0);
        if (said.size() < 8192) said.append(buf, static_cast<size_t>(r));
      }
    }
    if (parser.lost_events() > lost_seen) {
      recording.lost(parser.lost_events() - lost_seen);
      lost_seen = parser.lost_events();
    }
    uint64_t now = monotonic_ns();
    // bpftrace is running: it has loaded the copies of our libraries.
    if (request.unprobed && heard) request.unprobed->remove();
    // Attached: bpftrace says every probe is (it attaches them one at a
    // time, the uprobes last, in reverse order: counting its perf events
    // let the recording start before malloc's), and the script's readiness
    // tracepoints answer, so its output reaches us.
    if (!started) (void)getpgid(static_cast<pid_t>(targets.ready_call));
    if (!started && parser.ready() && (notified || parser.probes_attached())) {
      started = true;
      if (waiting.pid >= 0) {
        char go = 1;
        (void)!write(waiting.go, &go, 1);
        close(waiting.go);
        int exec_error = 0;
        bool exec_failed = read(waiting.failed, &exec_error, sizeof exec_error) == sizeof exec_error;
        close(waiting.failed);
        if (exec_failed) {
          result.error = fmt::format("cannot run {}: {}", program, strerror(exec_error));
          result.exit_code = 127;
        }
      }
      if (request.attached) request.attached(pid);
      attached_at = now;
    }
    // What the probes saw while bpftrace attached or detached them, some
    // in place and some not, is left out: before all were attached
    // (allocations whose frees were not yet probed) and after bpftrace was
    // told to stop (it detached malloc's probes 1.3 s before free's, and
    // the recording of a process that ran on held 4,000 frees of blocks it
    // never saw allocated).
    for (UprobeRecord& r : records)
      if (r.time >= attached_at && r.time < detaching_at) recording.add(std::move(r));
    records.clear();
    // The module map: at once for a running process; for a program we
    // started, once it has exec'd (before that it is a copy of edgemem).
    if (started && !target_ended && now - last_modules > 200'000'000 && (request.pid || exe_of(pid) != exe_of(getpid()))) {
      recording.refresh_modules();
      last_modules = now;
    }
    if (mappings) recording.add_modules(mappings->objects());
    // Attaching takes bpftrace a few seconds (it compiles the script with LLVM).
    if (!started && !timed_out && now - spawned > 120'000'000'000) {
      kill(bpftrace.pid, SIGKILL);
      timed_out = true;
    }
    recording.write_settled(kEnteredSlackNs, kMaxWaiting);
    if (started && !target_ended) {
      if (request.pid) {
        target_ended = !process_running(pid);
        stopped = !target_ended && request.stop && request.stop();
        target_ended = target_ended || stopped;
        if (stopped) stopped_at = now;
      } else if (waitpid(waiting.pid, &program_status, WNOHANG) == waiting.pid) {
        target_ended = true;
        waiting.pid = -1;
      }
      if (target_ended) quiet_since = now;
    }
    // Once the process has ended, bpftrace is stopped after its output has
    // been quiet for a moment: what the kernel wrote into its buffers is
    // read first. A process the user stopped recording runs on and is never
    // quiet: bpftrace is stopped once every CPU's buffer has been read up to
    // the stop (bpftrace falls seconds behind a busy allocator), or 10 s after it.
    if (target_ended && got && !stopped) quiet_since = now;
    const bool caught_up = stopped ? recording.heard_up_to() >= stopped_at || now - stopped_at > kCatchUpNs
                                   : now - quiet_since > 300'000'000;
    if (target_ended && !stopping && caught_up) {
      detaching_at = monotonic_ns();
      kill(bpftrace.pid, SIGINT);
      stopping = true;
    }
  }
  close(bpftrace.out);
  close(bpftrace.err);
  int status = 0;
  waitpid(bpftrace.pid, &status, 0);
  unlink(script_path);
  parser.finish(records);
  for (UprobeRecord& r : records)
    if (r.time >= attached_at && r.time < detaching_at) recording.add(std::move(r));
  if (mappings) recording.add_modules(mappings->objects());
  recording.finish();
  result.stats = recording.stats();
  if (mappings) {
    result.stats.lost_mappings = mappings->lost();
    result.stats.mappings_maybe_lost = mappings->found_full();
  }
  bool closed = writer.close(why);
  if (!started) {
    end_waiting();
    std::string line = first_error_line(said);
    if (timed_out) return failed("bpftrace did not attach its probes within 2 minutes");
    return failed(WIFEXITED(status) && WEXITSTATUS(status) == 127
                      ? "bpftrace could not be started"
                      : fmt::format("bpftrace could not attach its probes ({})", line.empty() ? "no reason given" : line));
  }
  if (!closed) return failed(why);
  if (waiting.pid >= 0) waitpid(waiting.pid, &program_status, 0);
  if (!request.pid && result.exit_code != 127) {
    if (WIFSIGNALED(program_status)) {
      result.signal = WTERMSIG(program_status);
      result.exit_code = 128 + result.signal;
    } else {
      result.exit_code = WEXITSTATUS(program_status);
    }
  }
  return result;
}

}  // namespace edgemem
