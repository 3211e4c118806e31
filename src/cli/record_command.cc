#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "record/attach.h"
#include "record/ebpf_recorder.h"
#include "record/inference_probe.h"
#include "record/launcher.h"

namespace edgemem::cli {

namespace {

struct RecordArgs {
  std::string output = "edgemem.emt";
  std::vector<std::string> command;
  int pid = 0;
  // gdb (the preload library; --inference-fn: a gdb probe), ebpf (bpftrace
  // uprobes, root), auto (gdb, else eBPF where ptrace is refused)
  std::string via = "auto";
  std::string inference_fn;
};

// Why the recording cannot be written at `output`, said before the program
// starts: a directory (the packer's rename would replace an empty one), or
// a new file in a folder that is missing or not writable.
std::string output_problem(const std::string& output) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(output, ec))
    return fmt::format("{} is a directory; give a file in it, e.g. -o {}", output, (fs::path(output) / "run.emt").string());
  if (fs::exists(output, ec) && !fs::is_regular_file(output, ec))
    return fmt::format("{} is not a regular file (a device or pipe): the recording is written by a rename over it; "
                       "give a file",
                       output);
  if (access(output.c_str(), W_OK) == 0) return {};  // an existing file it may write
  fs::path folder = fs::path(output).parent_path();
  if (folder.empty()) folder = ".";
  if (!fs::is_directory(folder, ec)) return fmt::format("cannot write {}: there is no directory {}", output, folder.string());
  if (access(folder.c_str(), W_OK) != 0)
    return fmt::format("cannot write {}: {} ({})", output, folder.string(), strerror(errno));
  return {};
}

std::string self_path() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// This command again, on unprobed copies of our C and C++ libraries
// (record/unprobed_libraries.h). Returns only when that cannot be done: the
// recording then runs here, slower.
void run_again_unprobed(const RecordArgs& args) {
  std::string why;
  std::optional<UnprobedLibraries> copies = UnprobedLibraries::copy_own(why);
  if (copies) {
    std::vector<std::string> words = {self_path(), "record", "--via", "ebpf", "--output=" + args.output};
    if (args.pid) words.insert(words.end(), {"--pid", std::to_string(args.pid)});
    if (!args.inference_fn.empty()) words.insert(words.end(), {"--inference-fn", args.inference_fn});
    if (!args.command.empty()) {
      words.push_back("--");
      words.insert(words.end(), args.command.begin(), args.command.end());
    }
    std::vector<std::string> environment = copies->environment_for_run_again();
    std::vector<char*> argv, envp;
    for (std::string& w : words) argv.push_back(w.data());
    for (std::string& e : environment) envp.push_back(e.data());
    argv.push_back(nullptr);
    envp.push_back(nullptr);
    execve("/proc/self/exe", argv.data(), envp.data());
    why = fmt::format("cannot run edgemem again: {}", strerror(errno));
  }
  fmt::print(stderr, "edgemem: {}; edgemem and bpftrace run on the probed libraries, their own allocations trap "
                     "too, and they may fall behind (set TMPDIR to a directory mounted exec; docs/record.md)\n", why);
}

// The eBPF recorder, attached to a process or running the program; its
// counts say what uprobes could and could not see.
int record_with_ebpf(const RecordArgs& args) {
  UnprobedLibraries unprobed = UnprobedLibraries::adopt();
  if (!unprobed.ran_again() && uprobes_unavailable().empty()) run_again_unprobed(args);
  UprobeRequest request{args.output, args.pid, args.command, args.inference_fn, {}, {}, &unprobed};
  if (args.pid) {
    catch_interrupts();
    request.stop = [] { return interrupted() != 0; };
    request.attached = [&](int pid) {
      fmt::print(stderr, "edgemem: recording process {} with eBPF uprobes into {} until it exits (Ctrl-C stops)\n", pid,
                 args.output);
    };
  } else {
    // Like system(): Ctrl-C goes to the program, and we record until it exits.
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
  }
  UprobeResult r = record_with_uprobes(request);
  if (!r.error.empty()) {
    fmt::print(stderr, "edgemem: record: {}\n", r.error);
    return r.exit_code;
  }
  const UprobeStats& s = r.stats;
  std::string calls = args.inference_fn.empty() ? "" : fmt::format(", {} calls of {} (inferences)", s.inferences, args.inference_fn);
  fmt::print(stderr, "edgemem: recorded {} allocations ({} failed) and {} frees{}\n", s.allocations + s.failed, s.failed,
             s.frees, calls);
  if (s.unknown_frees)
    fmt::print(stderr, "edgemem: {} frees were of blocks allocated before the probes were attached (not recorded)\n",
               s.unknown_frees);
  if (s.lost)
    fmt::print(stderr, "edgemem: DATA LOSS: {} events were lost (bpftrace's per-CPU buffer was full); bytes and counts "
                       "are short by them\n", s.lost);
  if (s.lost_mappings || s.mappings_maybe_lost)
    fmt::print(stderr, "edgemem: the kernel {} of the program's mapping records (a burst of mmaps filled the "
                       "watcher's buffer): a library mapped then and unmapped before /proc was read would have its "
                       "frames left as addresses\n",
               s.lost_mappings ? fmt::format("dropped {}", s.lost_mappings) : "may have dropped some");
  if (r.signal)
    fmt::print(stderr, "edgemem: {} was killed by signal {} ({})\n", args.command[0], r.signal, strsignal(r.signal));
  fmt::print(stderr, "edgemem: analyse it with: edgemem analyze {}\n", args.output);
  return args.pid ? 0 : r.exit_code;
}

void say_inferences(uint64_t calls, const std::string& name) {
  if (calls == 0)
    fmt::print(stderr, "edgemem: no call of {} was seen (inlined at its call sites? mark it "
                       "__attribute__((noinline)), or use edgemem_marker.h)\n", name);
  else
    fmt::print(stderr, "edgemem: {} calls of {} (inferences)\n", calls, name);
}

// gdb stays attached with the --inference-fn probe until the process exits
// or Ctrl-C (gdb then detaches: the process runs on, recording, without
// the probe). The marks join the recording once the process has exited.
int probe_attached(const RecordArgs& args, const InferenceProbe& probe) {
  fmt::print(stderr, "edgemem: recording process {} into {}, each call of {} an inference, until it exits (Ctrl-C "
                     "stops the probe, not the recording)\n", args.pid, args.output, args.inference_fn);
  pid_t gdb = fork();
  if (gdb == 0) {
    setpgid(0, 0);  // Ctrl-C reaches edgemem, which asks gdb to detach
    FILE* log = fopen(probe.log().c_str(), "a");
    if (log) {
      dup2(fileno(log), 1);
      dup2(fileno(log), 2);
    }
    std::vector<char*> argv;
    for (const std::string& a : probe.gdb) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  if (gdb < 0) return fail("record --pid", fmt::format("cannot start gdb: {}", strerror(errno)));
  catch_interrupts();
  bool asked = false;
  int status = 0;
  bool ready = false;
  while (waitpid(gdb, &status, WNOHANG) == 0) {
    if (!ready && access(probe.ready().c_str(), F_OK) == 0) {
      ready = true;
      fmt::print(stderr, "edgemem: probing the calls of {} in process {}\n", args.inference_fn, args.pid);
    }
    if (interrupted() && !asked) {
      // The script detaches at a SIGINT of the process once this file
      // exists (gdb keeps that SIGINT from the process).
      FILE* stop = fopen(probe.stop().c_str(), "w");
      if (stop) fclose(stop);
      kill(args.pid, SIGINT);
      asked = true;
    }
    usleep(100 * 1000);
  }
  bool ended = !process_running(args.pid);
  const std::string gdb_said = last_gdb_line(probe);  // before the probe's files go
  ProbeOutcome p = finish_inference_probe(probe, args.output, ended);
  if (!p.error.empty()) fmt::print(stderr, "edgemem: {}\n", p.error);
  if (!p.exit_code && !p.signal && !asked) fmt::print(stderr, "edgemem: the gdb probe ended early (gdb: {})\n", gdb_said);
  say_inferences(p.inferences, args.inference_fn);
  if (ended)
    for (const std::string& note : pack_recordings({args.output})) fmt::print(stderr, "edgemem: {}\n", note);
  fmt::print(stderr, "edgemem: analyse it with: edgemem analyze {}\n", args.output);
  return 0;
}

// The process records into the file until it exits; we wait with it, and
// Ctrl-C stops only the waiting.
int attach(const RecordArgs& args, const std::string& preload) {
  std::optional<InferenceProbe> probe;
  if (!args.inference_fn.empty() && args.via != "ebpf") {
    std::string why;
    probe = prepare_inference_attach(args.inference_fn, args.pid, why);
    if (!probe) return fail("record --pid", why);
  }
  AttachResult a = attach_recorder(args.pid, args.output, preload, !probe);
  if (a.error.empty() && probe) return probe_attached(args, *probe);
  if (a.error.empty()) {
    fmt::print(stderr, "edgemem: recording process {} into {} until it exits (Ctrl-C stops waiting, not the recording)\n",
               args.pid, args.output);
    catch_interrupts();
    // Packed as the process writes it, so little is left when it exits
    // (after days of a service, the whole file would take minutes).
    RecordingPacker packer(args.output);
    while (!interrupted() && process_running(args.pid)) {
      packer.pack_left_chunks();
      usleep(200 * 1000);
    }
    if (!process_running(args.pid))
      if (std::optional<std::string> note = pack_note(args.output, packer.finish()))
        fmt::print(stderr, "edgemem: {}\n", *note);
    fmt::print(stderr, "edgemem: analyse it with: edgemem analyze {}\n", args.output);
    return 0;
  }
  if (probe) {
    std::error_code ec;
    std::filesystem::remove_all(probe->dir, ec);
  }
  if (!a.ptrace_unavailable || args.via == "gdb") return fail("record --pid", a.error);
  if (std::string why = uprobes_unavailable(); !why.empty())
    return fail("record --pid", fmt::format("{}, and {}; or start the program as: edgemem record -- PROG", a.error, why));
  fmt::print(stderr, "edgemem: {}: recording with eBPF uprobes instead\n", a.error);
  return record_with_ebpf(args);
}

// A wrapper (a shell script, pyenv's python3 shim) that execs the real
// program leaves the output with the wrapper's few allocations and the
// program's in FILE.PID: it is named, and analysed instead. Children's
// recordings are counted, the largest named.
void say_other_recordings(const RecordArgs& args, const RecordResult& r) {
  if (r.exec_image && *r.exec_image != r.recordings.front())
    fmt::print(stderr, "edgemem: {} ran another program in its place (exec), recorded in {}; {} holds only what ran "
               "before\n", args.command[0], *r.exec_image, r.recordings.front());
  else if (r.exec_image)
    fmt::print(stderr, "edgemem: {} ran another program in its place (exec), recorded in {}\n", args.command[0],
               *r.exec_image);
  std::error_code ec;
  size_t others = 0;
  std::string largest;
  uintmax_t largest_bytes = 0;
  for (size_t i = 1; i < r.recordings.size(); ++i) {
    if (r.recordings[i] == r.exec_image) continue;
    ++others;
    if (uintmax_t bytes = std::filesystem::file_size(r.recordings[i], ec); !ec && bytes >= largest_bytes) {
      largest_bytes = bytes;
      largest = r.recordings[i];
    }
  }
  if (others)
    fmt::print(stderr, "edgemem: {} more recording{} of processes it started or programs it ran before (FILE.PID), the "
               "largest {} ({} B)\n", others, others == 1 ? "" : "s", largest, largest_bytes);
}

int run_record(const RecordArgs& args) {
  if (args.pid && !args.command.empty()) return fail("record", "give either --pid PID or -- PROG ARGS, not both");
  if (!args.pid && args.command.empty()) return fail("record", "nothing to record: give -- PROG ARGS or --pid PID");
  if (std::string why = output_problem(args.output); !why.empty()) return fail("record -o", why);
  if (!args.pid && args.via == "gdb" && args.inference_fn.empty())
    return fail("record", "--via gdb is for --pid and --inference-fn; a program started by record is recorded with the "
                          "preload library");
  if (args.via == "ebpf") return record_with_ebpf(args);
  std::string tried;
  auto preload = find_preload_library(self_path(), tried);
  if (!preload)
    return fail("record", fmt::format("the preload library is not installed beside edgemem (looked for {}); build the "
                                      "edgemem_preload target or reinstall", tried));
  if (args.pid) return attach(args, *preload);
  RecordResult r = run_recorded({args.output, args.command, *preload, args.inference_fn});
  if (!r.error.empty()) {
    fmt::print(stderr, "edgemem: record: {}\n", r.error);
    return r.exit_code;
  }
  if (r.signal)
    fmt::print(stderr, "edgemem: {} was killed by signal {} ({}); the recording keeps every allocation made before it\n",
               args.command[0], r.signal, strsignal(r.signal));
  if (r.recordings.empty()) {
    fmt::print(stderr, "edgemem: {} left no recording at {} (was it a static binary, or did it clear LD_PRELOAD?)\n",
               args.command[0], args.output);
    return 2;  // nothing could be recorded
  }
  for (const std::string& file : r.recordings) fmt::print(stderr, "edgemem: recording: {}\n", file);
  for (const std::string& note : r.notes) fmt::print(stderr, "edgemem: {}\n", note);
  if (!args.inference_fn.empty()) say_inferences(r.inferences, args.inference_fn);
  say_other_recordings(args, r);
  fmt::print(stderr, "edgemem: analyse it with: edgemem analyze {}\n", r.exec_image.value_or(r.recordings.front()));
  return r.exit_code;
}

}  // namespace

void add_record_command(CLI::App& app) {
  auto args = std::make_shared<RecordArgs>();
  CLI::App* cmd = app.add_subcommand("record", "Run a Linux program and record every heap allocation with its call stack");
  file_name(cmd->add_option("-o,--output", args->output, "The recording (emt v3); forked children write OUTPUT.PID"))
      ->capture_default_str();
  cmd->add_option("command", args->command, "The program and its arguments, after --");
  whole_number_from_one(
      cmd->add_option("--pid", args->pid, "Attach to this running process instead (through gdb, else eBPF uprobes)"));
  add_name_option(*cmd, "--via", args->via,
                  "How: gdb injects the preload library and probes --inference-fn (needs ptrace, not root); ebpf "
                  "probes the C library with bpftrace (needs root); auto tries gdb, then eBPF where ptrace is refused",
                  "--via method", {"auto", "gdb", "ebpf"});
  cmd->add_option("--inference-fn", args->inference_fn,
                  "Each outermost call of this function of the program is one inference (gdb breakpoints; --via ebpf: "
                  "uprobes)");
  cmd->footer(
      "Exit codes:\n  N    the program's own (128 + S when signal S ended it; --pid: 0 once it has ended)\n"
      "  2    nothing could be recorded (no preload library, attach refused, no eBPF)\n"
      "  127  the program could not be started\n"
      "Example:\n  edgemem record -o run.emt -- ./app --frames 100 && edgemem analyze run.emt\n"
      "  edgemem record --pid 2048 -o gateway.emt\n"
      "  edgemem record --inference-fn run_inference -o run.emt -- ./app");
  cmd->callback([args] { throw CLI::RuntimeError(run_record(*args)); });
}

}  // namespace edgemem::cli
