#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/interrupt.h"
#include "record/attach.h"
#include "record/launcher.h"

namespace edgemem::cli {

namespace {

struct RecordArgs {
  std::string output = "edgemem.emt";
  std::vector<std::string> command;
  int pid = 0;
};

std::string self_path() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// The process records into the file until it exits; we wait with it, and
// Ctrl-C stops only the waiting.
int attach(const RecordArgs& args, const std::string& preload) {
  std::string why = attach_recorder(args.pid, args.output, preload);
  if (!why.empty()) return fail("record --pid", why);
  fmt::print(stderr, "edgemem: recording process {} into {} until it exits (Ctrl-C stops waiting, not the recording)\n",
             args.pid, args.output);
  catch_interrupts();
  while (!interrupted() && process_running(args.pid)) usleep(200 * 1000);
  if (!process_running(args.pid))
    for (const std::string& note : pack_recordings({args.output})) fmt::print(stderr, "edgemem: {}\n", note);
  fmt::print(stderr, "edgemem: analyse it with: edgemem analyze {}\n", args.output);
  return 0;
}

int run_record(const RecordArgs& args) {
  std::string tried;
  auto preload = find_preload_library(self_path(), tried);
  if (!preload)
    return fail("record", fmt::format("the preload library is not installed beside edgemem (looked for {}); build the "
                                      "edgemem_preload target or reinstall", tried));
  if (args.pid && !args.command.empty()) return fail("record", "give either --pid PID or -- PROG ARGS, not both");
  if (args.pid) return attach(args, *preload);
  if (args.command.empty()) return fail("record", "nothing to record: give -- PROG ARGS or --pid PID");
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
  cmd->add_option("--pid", args->pid, "Attach to this running process instead (through gdb)");
  cmd->footer(
      "Exit codes:\n  N    the program's own (128 + S when signal S ended it; --pid: 0 once it has ended)\n"
      "  2    nothing could be recorded (no preload library, attach refused)\n"
      "  127  the program could not be started\n"
      "Example:\n  edgemem record -o run.emt -- ./app --frames 100 && edgemem analyze run.emt\n"
      "  edgemem record --pid 2048 -o gateway.emt");
  cmd->callback([args] { throw CLI::RuntimeError(run_record(*args)); });
}

}  // namespace edgemem::cli
