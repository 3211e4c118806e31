#include <cstdio>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/input_stream.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "cli/report_file.h"
#include "edgemem/report.h"
#include "edgemem/trace_session.h"
#include "report/metrics_report.h"
#include "watch/atomic_file.h"

namespace edgemem::cli {

std::optional<TraceRun> run_trace(const AnalyzeArgs& args) {
  TraceSessionOptions options;
  auto format = parse_format(args.format);
  if (!format) {
    fmt::print(stderr, "edgemem: unknown --format '{}' (expected auto, log, seedbin, itm, tpiu or emt)\n", args.format);
    return std::nullopt;
  }
  options.format = *format;
  options.elf = args.elf;
  options.analyzer.clock_hz = args.clock_hz;
  options.analyzer.default_pool_size = args.arena_size;
  options.decoder.tpiu_stream = args.tpiu_stream;
  TraceOutcome outcome;
  {
    ReadProgress progress(args.path);  // its line is cleared before any note is printed
    outcome = analyse_trace_file(
        args.path, options, [] { return interrupted() != 0; }, [&](uint64_t bytes) { progress.update(bytes); });
  }
  for (const std::string& note : outcome.notes) fmt::print(stderr, "edgemem: {}\n", note);
  return std::move(outcome.run);
}

int run_analyze(const AnalyzeArgs& args) {
  FailOn rules;
  try {
    rules = parse_fail_on(args.fail_on);
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "edgemem: {}\n", e.what());
    return 2;
  }
  catch_interrupts();
  auto run = run_trace(args);
  if (interrupted()) {
    // Ctrl-C on a long or live capture: report what was decoded so far.
    uint64_t read = run ? run->input.stats.bytes : 0;
    fmt::print(stderr, "edgemem: interrupted after {} bytes; the report covers only what was decoded until then\n", read);
    if (run && !args.json) fmt::print("interrupted after {} bytes: partial report\n\n", read);
  }
  if (!run) return interrupted() ? 128 + interrupted() : 2;
  if (args.json)
    fmt::print("{}\n", json_report(run->input, run->result));
  else
    fmt::print("{}", text_report(run->input, run->result));
  bool written = args.html.empty() || write_report_file(args.html, html_report(run->input, run->result), "--html");
  if (!args.metrics_file.empty()) {
    std::string error = watch::write_file_atomically(
        args.metrics_file, metrics_report({&run->input, &run->result, "", {}}, MetricsFormat::prometheus));
    if (!error.empty()) fmt::print(stderr, "edgemem: --metrics-file {}\n", error);
    written = written && error.empty();
  }

  // Broken rules are named even when the report could not be written (exit 2 then: bad usage wins).
  auto broken = broken_rules(rules, run->result);
  for (const auto& b : broken) fmt::print(stderr, "edgemem: fail-on {}\n", b);
  if (!written) return 2;
  if (interrupted()) return 128 + interrupted();  // the shell's code for a run cut short
  return broken.empty() ? 0 : 1;
}

void add_analyze_command(CLI::App& app) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* cmd = app.add_subcommand("analyze", "Decode a memory trace and report leaks, fragmentation, overflow and peak");
  cmd->add_option("trace", args->path, "Trace file, or - for stdin")->required();
  add_name_option(*cmd, "--format", args->format, "auto | log | seedbin | itm | tpiu | emt", "--format",
                  {"auto", "log", "seedbin", "itm", "tpiu", "emt"});
  add_size_option(*cmd, "--arena-size", args->arena_size, "Size of pools the trace does not declare");
  cmd->add_option("--clock-hz", args->clock_hz, "CPU clock for cycle timestamps, to forecast in seconds");
  cmd->add_option("--tpiu-stream", args->tpiu_stream, "TPIU source ID carrying ITM")->capture_default_str();
  cmd->add_option("--elf", args->elf, "Firmware ELF: turn return-address sites into function (file:line)");
  cmd->add_flag("--json", args->json, "Print the edgemem.analyze/1 JSON document instead of the summary");
  cmd->add_option("--html", args->html, "Also write a self-contained HTML report (charts, sites) to this file");
  cmd->add_option("--metrics-file", args->metrics_file,
                  "Also write Prometheus text metrics (docs/metrics.md) to this file, atomically: batch jobs");
  cmd->add_option("--fail-on", args->fail_on,
                  "Exit 1 when any of these hold: leak,overflow,guard,lifo,alloc-failure,fragmentation=warning|danger");
  exit_code_help(*cmd, "a --fail-on rule holds (leak, overflow, ...); 130 when interrupted (partial report printed)",
                 "edgemem analyze --fail-on leak,overflow trace.emt || echo 'leak or overflow'");
  cmd->callback([args] { throw CLI::RuntimeError(run_analyze(*args)); });
}

}  // namespace edgemem::cli
