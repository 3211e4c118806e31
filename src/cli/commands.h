// One function per subcommand; main.cc only wires them to CLI11.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "edgemem/analysis_result.h"
#include "edgemem/report.h"
#include "edgemem/trace_session.h"

namespace CLI {
class App;
}

namespace edgemem::cli {

struct AnalyzeArgs {
  std::string path;
  std::string format = "auto";
  uint64_t arena_size = 0;
  std::optional<double> clock_hz;
  unsigned tpiu_stream = 1;
  std::string elf;  // symbolise return-address sites with this ELF
  bool json = false;
  std::optional<std::string> fail_on;  // set when given, even empty (refused then)
  std::string html;  // also write the HTML report to this file
  // Exports (docs/exports.md), each written when its path is set.
  std::string perfetto, chrome_json, folded, folded_peak, speedscope;
  std::string textlog;  // the events as a [MEM] text log, written while decoding
  std::string model;  // a .tflite: compare edgemem's plan with this TFLite Micro capture
  std::string target = "cortex-m";  // whose struct sizes that plan uses
  std::string metrics_file;  // also write Prometheus text metrics to this file (atomically)
};

// Exit codes: 0 ok, 1 a --fail-on rule broke, 2 bad usage or unreadable input,
// 128 + the signal when SIGINT/SIGTERM cut the read short (the report of what
// was decoded is printed all the same).
int run_analyze(const AnalyzeArgs& args);

// Decodes and analyses a trace as `analyze` does, printing the session's
// notes. On input that yields no events it returns nullopt (exit 2), after
// saying how many bytes were read when an interrupt (interrupt.h) ended it.
// `tap` sees every decoded event (TraceSessionOptions::event_tap).
std::optional<TraceRun> run_trace(const AnalyzeArgs& args, EventTap tap = {});
// For a command that judges whole traces (diff, check), after run_trace and
// catch_interrupts(): when an interrupt cut the read short, says so and
// returns the exit code (128 + the signal); 0 when none did.
int interrupted_trace(const std::string& path, const std::optional<TraceRun>& run, std::string_view command);
// How much of a trace `run` covers: "N bytes", and what they unpacked to.
std::string read_so_far(const TraceRun& run);
// How to read a trace, the flags `analyze` and `watch` share: --format,
// --arena-size, --clock-hz, --tpiu-stream, --elf.
void add_trace_options(CLI::App& cmd, AnalyzeArgs& args);
// The session those flags ask for; unset (after saying why) for an unknown --format.
std::optional<TraceSessionOptions> trace_session_options(const AnalyzeArgs& args);

// Prints "edgemem: WHAT: WHY" on stderr and returns exit code 2.
int fail(const std::string& what, const std::string& why);
// The same for an error that names the file at fault first ("FILE: line N: ...").
int fail(const std::string& error);

void add_analyze_command(CLI::App& app);
void add_demo_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_map_command(CLI::App& app);
void add_stack_command(CLI::App& app);
void add_fit_command(CLI::App& app);
void add_check_command(CLI::App& app);
void add_diff_command(CLI::App& app);
void add_watch_command(CLI::App& app);
void add_record_command(CLI::App& app);

}  // namespace edgemem::cli
