#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/analyze_model.h"
#include "cli/commands.h"
#include "cli/input_stream.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "cli/report_file.h"
#include "cli/textlog_file.h"
#include "edgemem/exports.h"
#include "edgemem/report.h"
#include "edgemem/trace_session.h"
#include "report/plan_vs_capture_report.h"
#include "report/metrics_report.h"
#include "watch/atomic_file.h"

namespace edgemem::cli {

std::optional<TraceSessionOptions> trace_session_options(const AnalyzeArgs& args) {
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
  return options;
}

void add_trace_options(CLI::App& cmd, AnalyzeArgs& args) {
  add_name_option(cmd, "--format", args.format, "auto | log | seedbin | itm | tpiu | emt", "--format",
                  {"auto", "log", "seedbin", "itm", "tpiu", "emt"});
  add_size_option(cmd, "--arena-size", args.arena_size, "Size of pools the trace does not declare");
  cmd.add_option("--clock-hz", args.clock_hz, "CPU clock for cycle timestamps, to forecast in seconds")
      ->check(CLI::Validator(
          [](std::string& text) {
            // A zero or negative clock would turn every time into nonsense (or a division by zero).
            char* end = nullptr;
            double hz = std::strtod(text.c_str(), &end);
            // inf (or 1e400, which strtod makes inf) would turn every time into 0.
            return *end == '\0' && hz > 0 && std::isfinite(hz)
                       ? std::string()
                       : "expected the CPU clock in Hz above 0, as 80000000 or 80e6";
          },
          "HZ"));
  // IDs 0 (null) and 0x70-0x7F (reserved) carry no trace source.
  cmd.add_option("--tpiu-stream", args.tpiu_stream, "TPIU source ID carrying ITM (1-111)")
      ->check(CLI::Range(1, 0x6F))
      ->capture_default_str();
  file_name(cmd.add_option("--elf", args.elf, "Firmware ELF: turn return-address sites into function (file:line)"));
}

std::optional<TraceRun> run_trace(const AnalyzeArgs& args, EventTap tap) {
  auto options = trace_session_options(args);
  if (!options) return std::nullopt;
  options->event_tap = std::move(tap);
  TraceOutcome outcome;
  uint64_t read = 0;
  {
    ReadProgress progress(args.path);  // its line is cleared before any note is printed
    outcome = analyse_trace_file(args.path, *options, [] { return interrupted() != 0; }, [&](uint64_t bytes) {
      read = bytes;
      progress.update(bytes);
    });
  }
  for (const std::string& note : outcome.notes) fmt::print(stderr, "edgemem: {}\n", note);
  if (!outcome.run && interrupted())
    fmt::print(stderr, "edgemem: {}: interrupted after {} bytes, before a memory event was decoded\n", args.path, read);
  return std::move(outcome.run);
}

int interrupted_trace(const std::string& path, const std::optional<TraceRun>& run, std::string_view command) {
  if (!interrupted()) return 0;
  // Without a run run_trace said how far it got.
  if (run)
    fmt::print(stderr, "edgemem: {}: interrupted after {}: {} judges whole traces, not part of one\n", path,
               read_so_far(*run), command);
  return 128 + interrupted();
}

std::string read_so_far(const TraceRun& run) {
  // Of a compressed file, the file's bytes read and what they unpacked to.
  const DecodeStats& s = run.input.stats;
  return s.compressed_bytes ? fmt::format("{} bytes of the file ({} bytes unpacked)", s.compressed_bytes, s.bytes)
                            : fmt::format("{} bytes", s.bytes);
}

namespace {

// The export files asked for; false when any could not be written (each says why).
bool write_exports(const AnalyzeArgs& args, const TraceRun& run) {
  struct Export {
    const std::string& path;
    const char *option, *what;
    std::function<std::string()> render;
  };
  const InputSummary& in = run.input;
  const AnalysisResult& r = run.result;
  const Export exports[] = {
      {args.perfetto, "--perfetto", "Perfetto trace", [&] { return perfetto_trace(in, r); }},
      {args.chrome_json, "--chrome-json", "Chrome trace", [&] { return chrome_trace_json(in, r); }},
      {args.folded, "--folded", "folded stacks (live at end)", [&] { return folded_stacks(r, LiveSet::at_end); }},
      {args.folded_peak, "--folded-peak", "folded stacks (live at peak)", [&] { return folded_stacks(r, LiveSet::at_peak); }},
      {args.speedscope, "--speedscope", "speedscope profile", [&] { return speedscope_json(in, r); }},
  };
  bool all = true;
  for (const Export& e : exports)
    if (!e.path.empty()) all &= write_report_file(e.path, e.render(), e.option, e.what);
  return all;
}

}  // namespace

int run_analyze(const AnalyzeArgs& args) {
  FailOn rules;
  try {
    if (args.fail_on) rules = parse_fail_on(*args.fail_on);
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "edgemem: {}\n", e.what());
    return 2;
  }
  // The capture is read twice, by the analysis and by the comparison.
  if (!args.model.empty() && args.path == "-")
    return fail("--model", "needs the capture as a file, not stdin: save it first (edgemem analyze FILE --model M)");
  if (args.model.empty() && args.target != "cortex-m")
    return fail("--target", "sizes the structs of a --model plan: give --model MODEL.tflite, or leave --target out");
  const OutputFiles outputs = {{"--html", args.html},
                               {"--perfetto", args.perfetto},
                               {"--chrome-json", args.chrome_json},
                               {"--folded", args.folded},
                               {"--folded-peak", args.folded_peak},
                               {"--speedscope", args.speedscope},
                               {"--textlog", args.textlog},
                               {"--metrics-file", args.metrics_file}};
  // An output on standard output (`--folded - | flamegraph.pl`) moves the
  // text summary to stderr; the JSON document has nowhere else to go.
  if (std::string clash = clashing_outputs({args.path, args.elf, args.model}, outputs, args.json); !clash.empty())
    return fail(clash);
  std::FILE* summary = stdout;
  for (const auto& [option, path] : outputs)
    if (!path.empty() && is_stdout(path)) summary = stderr;
  // A text log that cannot be opened is said at once; the report and the
  // other exports are still written (exit 2 at the end), as for the others.
  TextLogFile textlog;
  bool textlog_open = !args.textlog.empty() && textlog.open(args.textlog);
  catch_interrupts();
  auto run = textlog_open
                 ? run_trace(args, [&](const Event& e, const TraceContext& c, const Decoder& d) { textlog.on_event(e, c, d); })
                 : run_trace(args);
  // Closed before the report, so its size and warnings are said whatever the
  // report does; a trace that could not be read leaves an earlier file as it was.
  bool textlog_written = args.textlog.empty() || (run && textlog_open && textlog.close(run->input.stats));
  if (interrupted() && run) {
    // Ctrl-C on a long or live capture: report what was decoded so far.
    const std::string read = read_so_far(*run);
    fmt::print(stderr, "edgemem: interrupted after {}; the report covers only what was decoded until then\n", read);
    if (!args.json) fmt::print(summary, "interrupted after {}: partial report\n\n", read);
  }
  if (!run) return interrupted() ? 128 + interrupted() : 2;
  run->input.interrupted = interrupted() != 0;
  // A capture the model cannot be compared with (cut short, another model)
  // still gets its report; the comparison's error makes the exit 2.
  std::optional<plan::PlanVsCapture> compared;
  const bool compare_failed = !args.model.empty() && !(compared = compare_with_model(args));
  if (args.json) {
    fmt::print("{}\n", compared ? analyze_json_with_capture(run->input, run->result, *compared, args.model)
                                : json_report(run->input, run->result));
  } else {
    fmt::print(summary, "{}", text_report(run->input, run->result));
    if (compared) fmt::print(summary, "{}", plan_vs_capture_text(*compared, args.model));
  }
  bool written = args.html.empty() || write_report_file(args.html, html_report(run->input, run->result), "--html");
  written &= write_exports(args, *run) && textlog_written;
  if (!args.metrics_file.empty()) {
    std::string metrics = metrics_report({&run->input, &run->result, "", {}}, MetricsFormat::prometheus);
    if (is_stdout(args.metrics_file)) {
      written &= write_report_file(args.metrics_file, metrics, "--metrics-file", "metrics");
    } else {
      std::string error = watch::write_file_atomically(args.metrics_file, metrics);
      if (!error.empty()) fmt::print(stderr, "edgemem: --metrics-file {}\n", error);
      written = written && error.empty();
    }
  }

  // Broken rules are named even when the report could not be written (exit 2 then: bad usage wins).
  auto broken = broken_rules(rules, run->result);
  for (const auto& b : broken) fmt::print(stderr, "edgemem: fail-on {}\n", b);
  const auto unjudged = unjudged_rules(rules, run->result);
  for (const auto& u : unjudged) fmt::print(stderr, "edgemem: fail-on {}\n", u);
  if (!written || compare_failed) return 2;
  if (interrupted()) return 128 + interrupted();  // the shell's code for a run cut short
  if (!broken.empty() || (compared && !compared->matches())) return 1;
  // A gate that judged none of its rules passed nothing.
  return args.fail_on && unjudged.size() == rule_count(rules) ? 2 : 0;
}

void add_analyze_command(CLI::App& app) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* cmd = app.add_subcommand("analyze", "Decode a memory trace and report leaks, fragmentation, overflow and peak");
  file_name(cmd->add_option("trace", args->path, "Trace file, or - for stdin"))->required();
  add_trace_options(*cmd, *args);
  cmd->add_flag("--json", args->json, "Print the edgemem.analyze/1 JSON document instead of the summary");
  file_name(cmd->add_option("--html", args->html, "Also write a self-contained HTML report (charts, sites) to this file"));
  file_name(cmd->add_option("--perfetto", args->perfetto, "Also write a Perfetto trace (ui.perfetto.dev): counters per pool, events, inferences"));
  file_name(cmd->add_option("--chrome-json", args->chrome_json, "Also write the same as Chrome Trace Event JSON (chrome://tracing)"));
  file_name(cmd->add_option("--folded", args->folded, "Also write folded stacks of the bytes live at the end (flamegraph.pl)"));
  file_name(cmd->add_option("--folded-peak", args->folded_peak, "Also write folded stacks of the bytes live at the peak"));
  file_name(cmd->add_option("--speedscope", args->speedscope, "Also write a speedscope profile (speedscope.app) of live bytes"));
  file_name(cmd->add_option("--textlog", args->textlog,
                            "Also write the events as a [MEM] text log, sites as call stacks (analyze reads it back)"));
  file_name(cmd->add_option("--model", args->model,
                            "The .tflite a TFLite Micro capture ran: put edgemem's plan beside it, tensor by tensor"));
  add_name_option(*cmd, "--target", args->target, "With --model: cortex-m | x86-64 struct sizes", "--target",
                  {"cortex-m", "x86-64"});
  file_name(cmd->add_option("--metrics-file", args->metrics_file,
                            "Also write Prometheus text metrics (docs/metrics.md) to this file, atomically: batch jobs"));
  cmd->add_option("--fail-on", args->fail_on,
                  "Exit 1 when any of these hold: leak,overflow,guard,lifo,alloc-failure,fragmentation=warning|danger");
  exit_code_help(*cmd, "a --fail-on rule holds (leak, overflow, ...) or the --model plan differs from the capture",
                 "edgemem analyze --fail-on leak,overflow trace.emt || echo 'leak or overflow'",
                 "  130/143  interrupted by Ctrl-C / SIGTERM: the report of what was read is printed\n");
  cmd->callback([args] { throw CLI::RuntimeError(run_analyze(*args)); });
}

}  // namespace edgemem::cli
