#include <cstdio>
#include <stdexcept>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/input_stream.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "cli/report_file.h"
#include "edgemem/analyzer.h"
#include "edgemem/report.h"
#include "static/elf_symbolizer.h"

namespace edgemem::cli {
namespace {

constexpr size_t kSniffBytes = 64 * 1024;

std::string where(const std::string& path, const DecodeProblem& p) {
  return p.line ? fmt::format("{}:{}", path, p.line) : fmt::format("{}: offset {}", path, p.offset);
}

}  // namespace

std::optional<TraceRun> run_trace(const AnalyzeArgs& args) {
  std::unique_ptr<ElfSymbolizer> symbolizer;
  if (!args.elf.empty()) {
    std::string why;
    symbolizer = ElfSymbolizer::open(args.elf, why);
    if (!symbolizer) {
      fmt::print(stderr, "edgemem: {}: {} (expected the firmware ELF with debug info)\n", args.elf, why);
      return std::nullopt;
    }
  }
  auto format = parse_format(args.format);
  if (!format) {
    fmt::print(stderr, "edgemem: unknown --format '{}' (expected auto, log, seedbin, itm, tpiu or emt)\n", args.format);
    return std::nullopt;
  }
  TraceContext context;
  AnalyzerOptions options;
  options.clock_hz = args.clock_hz;
  options.default_pool_size = args.arena_size;
  Analyzer analyzer(context, options);
  DecoderOptions decoder_options;
  decoder_options.tpiu_stream = args.tpiu_stream;

  // With --format auto the first bytes are held back until the format is known.
  std::unique_ptr<Decoder> decoder;
  std::vector<uint8_t> head;
  std::string refusal;  // --format auto found no trace: what the input is instead
  auto start = [&](std::span<const uint8_t> sniffed) {
    Format f = *format;
    if (f == Format::automatic) {
      SniffVerdict verdict = sniff_trace(sniffed);
      if (!verdict.format) {
        refusal = verdict.refusal(args.path);
        return false;
      }
      f = *verdict.format;
    }
    decoder = make_decoder(f, context, analyzer, decoder_options);
    return true;
  };
  std::string error = read_stream(args.path, [&](std::span<const uint8_t> bytes) {
    if (!refusal.empty()) return;
    if (!decoder) {
      head.insert(head.end(), bytes.begin(), bytes.end());
      if (head.size() < kSniffBytes && *format == Format::automatic) return;
      if (!start(head)) return;
      decoder->feed(head);
      head.clear();
      return;
    }
    decoder->feed(bytes);
  });
  if (!error.empty()) {
    fmt::print(stderr, "edgemem: {}: {}\n", args.path, error);
    if (!decoder) return std::nullopt;
  }
  if (!decoder && refusal.empty() && start(head)) decoder->feed(head);
  if (!decoder) {
    fmt::print(stderr, "edgemem: {}\n", refusal);
    return std::nullopt;
  }
  decoder->finish();
  if (symbolizer) symbolizer->symbolize(context.sites);
  analyzer.set_trace_clock(decoder->clock_hz());
  AnalysisResult result = analyzer.finish();

  TraceRun run{{args.path, std::string(decoder->format_name()), decoder->stats(), context.time_base}, std::move(result)};
  const InputSummary& input = run.input;
  const DecodeStats& s = input.stats;
  if (s.events == 0) {
    if (s.first_problem)
      fmt::print(stderr, "edgemem: {}: {} (as --format {}); no memory events decoded\n", where(args.path, *s.first_problem),
                 s.first_problem->what, input.format);
    else if (s.bytes == 0)
      fmt::print(stderr, "edgemem: {}: empty input, expected a trace\n", args.path);
    else
      fmt::print(stderr, "edgemem: {}: no memory events found in {} bytes as --format {} (expected [MEM] lines, "
                 "seed binary records, emt or ITM packets)\n", args.path, s.bytes, input.format);
    return std::nullopt;
  }
  if (s.first_problem && (s.corrupt_bytes || s.malformed_lines))
    fmt::print(stderr, "edgemem: warning: {}: {} ({} corrupt bytes, {} malformed lines skipped; the rest was analysed)\n",
               where(args.path, *s.first_problem), s.first_problem->what, s.corrupt_bytes, s.malformed_lines);
  return run;
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
  if (!args.html.empty() && !write_report_file(args.html, html_report(run->input, run->result), "--html")) return 2;

  auto broken = broken_rules(rules, run->result);
  for (const auto& b : broken) fmt::print(stderr, "edgemem: fail-on {}\n", b);
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
  cmd->add_option("--fail-on", args->fail_on,
                  "Exit 1 when any of these hold: leak,overflow,guard,lifo,alloc-failure,fragmentation=warning|danger");
  exit_code_help(*cmd, "a --fail-on rule holds (leak, overflow, ...); 130 when interrupted (partial report printed)",
                 "edgemem analyze --fail-on leak,overflow trace.emt || echo 'leak or overflow'");
  cmd->callback([args] { throw CLI::RuntimeError(run_analyze(*args)); });
}

}  // namespace edgemem::cli
