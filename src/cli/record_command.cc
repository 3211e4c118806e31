#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/interrupt.h"
#include "record/attach.h"
#include "record/ebpf_recorder.h"
#include "record/launcher.h"

namespace edgemem::cli {

namespace {

struct RecordArgs {
  std::string output = "edgemem.emt";
  std::vector<std::string> command;
  int pid = 0;
  std::string via = "auto";  // --pid: gdb (the preload library), ebpf (bpftrace uprobes), auto (gdb, else eBPF)
  std::string inference_fn;
};

std::string self_path() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// The eBPF recorder, attached to a process or running the program; its
// counts say what uprobes could and could not see.
int record_with_ebpf(const RecordArgs& args) {
  UprobeRequest request{args.output, args.pid, args.command, args.inference_fn, {}, {}};
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
  if (r.signal)
    fmt::print(stderr, "edgemem: {} was killed by signal {} ({})\n", args.command[0], r.signal, strsignal(r.signal));
  fmt::print(stderr, "edgemem: analyse it with: edgemem analyze {}\n", args.output);
  return args.pid ? 0 : r.exit_code;
}

// The process records into the file until it exits; we wait with it, and
// Ctrl-C stops only the waiting.
int attach(const RecordArgs& args, const std::string& preload) {
  AttachResult a = attach_recorder(args.pid, args.output, preload);
  if (a.error.empty()) {
    fmt::print(stderr, "edgemem: recording process {} into {} until it exits (Ctrl-C stops waiting, not the recording)\n",
               args.pid, args.output);
    catch_interrupts();
    while (!interrupted() && process_running(args.pid)) usleep(200 * 1000);
    if (!process_running(args.pid))
      for (const std::string& note : pack_recordings({args.output})) fmt::print(stderr, "edgemem: {}\n", note);
    fmt::print(stderr, "edgemem: analyse it with: edgemem analyze {}\n", args.output);
    return 0;
  }
  if (!a.ptrace_unavailable || args.via == "gdb") return fail("record --pid", a.error);
  if (std::string why = uprobes_unavailable(); !why.empty())
    return fail("record --pid", fmt::format("{}, and {}; or start the program as: edgemem record -- PROG", a.error, why));
  fmt::print(stderr, "edgemem: {}: recording with eBPF uprobes instead\n", a.error);
  return record_with_ebpf(args);
}

int run_record(const RecordArgs& args) {
  if (args.pid && !args.command.empty()) return fail("record", "give either --pid PID or -- PROG ARGS, not both");
  if (!args.pid && args.command.empty()) return fail("record", "nothing to record: give -- PROG ARGS or --pid PID");
  if (!args.inference_fn.empty() && args.via == "gdb")
    return fail("record", "--inference-fn is recorded with eBPF uprobes (its calls and the allocations on one clock); "
                          "drop --via gdb");
  if (!args.pid && args.via == "gdb") return fail("record", "--via gdb is for --pid; a program started by record is "
                                                            "recorded with the preload library");
  if (args.via == "ebpf" || !args.inference_fn.empty()) return record_with_ebpf(args);
  std::string tried;
  auto preload = find_preload_library(self_path(), tried);
  if (!preload)
    return fail("record", fmt::format("the preload library is not installed beside edgemem (looked for {}); build the "
                                      "edgemem_preload target or reinstall", tried));
  if (args.pid) return attach(args, *preload);
  RecordResult r = run_recorded({args.output, args.command, *preload});
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
    return r.exit_code;
  }
  for (const std::string& file : r.recordings) fmt::print(stderr, "edgemem: recording: {}\n", file);
  for (const std::string& note : r.notes) fmt::print(stderr, "edgemem: {}\n", note);
  fmt::print(stderr, "edgemem: analyse it with: edgemem analyze {}\n", r.recordings.front());
  return r.exit_code;
}

}  // namespace

void add_record_command(CLI::App& app) {
  auto args = std::make_shared<RecordArgs>();
  CLI::App* cmd = app.add_subcommand("record", "Run a Linux program and record every heap allocation with its call stack");
  cmd->add_option("-o,--output", args->output, "The recording (emt v2); forked children write OUTPUT.PID")
      ->capture_default_str();
  cmd->add_option("command", args->command, "The program and its arguments, after --");
  cmd->add_option("--pid", args->pid, "Attach to this running process instead (through gdb, else eBPF uprobes)");
  cmd->add_option("--via", args->via,
                  "How: gdb injects the preload library (needs ptrace); ebpf probes the C library with bpftrace "
                  "(needs root); auto tries gdb, then eBPF where ptrace is refused")
      ->check(CLI::IsMember({"auto", "gdb", "ebpf"}))
      ->capture_default_str();
  cmd->add_option("--inference-fn", args->inference_fn,
                  "Each call of this function of the program is one inference (recorded with eBPF uprobes)");
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
