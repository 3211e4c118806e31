// edgemem diff A B: what grew between two builds (maps or ELFs) or two runs
// (traces). Traces stream through the analyzer as `analyze` reads them; only
// maps, which are text of bounded size, are read whole.
#include <algorithm>
#include <filesystem>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/input_stream.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "cli/report_file.h"
#include "edgemem/decoder.h"
#include "ingest/non_trace_signatures.h"
#include "report/diff_report.h"
#include "static/elf_image.h"
#include "static/linker_map.h"

namespace edgemem::cli {
namespace {

struct DiffArgs {
  std::string before, after, html;
  std::string format = "auto";  // of two traces
  size_t top = 20;
  bool json = false, all = false;
};

// A linker map or ELF read as a map, decided from the first bytes: ELF
// magic, or text without a [MEM] record that parses as a map. nullopt with
// `error` empty: not an image, so a trace.
std::optional<LinkerMap> read_image(const std::string& path, std::string& error, bool& elf_image) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    error = fmt::format("{}: a directory, expected a map, an ELF or a trace", path);
    return std::nullopt;
  }
  auto head = read_head(path, kSniffBytes);
  if (!head) {
    error = fmt::format("{}: {}", path, cannot_open(path));
    return std::nullopt;
  }
  if (head->empty()) {
    error = fmt::format("{}: empty file, expected a map, an ELF or a trace", path);
    return std::nullopt;
  }
  if (head->starts_with("\x7f" "ELF")) {
    elf_image = true;
    auto elf = read_elf_image(path, error);
    return elf ? std::optional<LinkerMap>(to_linker_map(*elf)) : std::nullopt;
  }
  bool text = std::all_of(head->begin(), head->end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u >= 0x20 || u == '\n' || u == '\r' || u == '\t' || u == '\f';
  });
  if (!text || head->find("[MEM]") != std::string::npos) return std::nullopt;
  auto file = read_whole_file(path, error, text_input("a linker map"));
  if (!file) {
    error = fmt::format("{}: {}", path, error);
    return std::nullopt;
  }
  std::string why;
  auto map = parse_linker_map(*file, why);
  // A map the parser gives up on (cut short, say) is said to be one, with
  // the parser's reason, rather than read as a trace.
  const auto* bytes = reinterpret_cast<const uint8_t*>(head->data());
  if (!map)
    if (auto other = recognise_non_trace({bytes, head->size()}); other && other->looks_like.find("linker map") != std::string::npos)
      error = fmt::format("{}: {}", path, why);
  return map;
}

int run_diff(const DiffArgs& args) {
  if (std::string clash = clashing_outputs({args.before, args.after}, {{"--html", args.html}}); !clash.empty()) return fail(clash);
  std::string error;
  bool a_elf = false, b_elf = false;
  auto a = read_image(args.before, error, a_elf);
  if (!error.empty()) return fmt::print(stderr, "edgemem: {}\n", error), 2;
  auto b = read_image(args.after, error, b_elf);
  if (!error.empty()) return fmt::print(stderr, "edgemem: {}\n", error), 2;
  // A map counts input sections, fill and regions; an ELF, its sections and
  // symbol sizes: between the two, every row would differ with nothing grown.
  if (a && b && a_elf != b_elf) {
    fmt::print(stderr, "edgemem: diff: {} is {} but {} is {}; they count sections and symbols differently: compare two "
               "maps or two ELFs (to check a map against its own ELF: edgemem map {} --elf {})\n", args.before,
               a_elf ? "an ELF image" : "a linker map", args.after, b_elf ? "an ELF image" : "a linker map",
               a_elf ? args.after : args.before, a_elf ? args.before : args.after);
    return 2;
  }
  if (a.has_value() != b.has_value()) {
    fmt::print(stderr, "edgemem: diff: {} is {} but {} is {}; compare two maps/ELFs or two traces\n", args.before,
               a ? "a map or ELF" : "no map or ELF", args.after, b ? "a map or ELF" : "no map or ELF");
    return 2;
  }
  DiffReport report{args.before, args.after, a ? "images" : "traces", {}, {}, {}};
  if (a) {
    report.groups = diff_maps(*a, *b);
  } else {
    AnalyzeArgs ta, tb;
    ta.path = args.before;
    tb.path = args.after;
    ta.format = tb.format = args.format;
    catch_interrupts();  // Ctrl-C on an endless input says how far it got
    auto ra = run_trace(ta);
    if (int code = interrupted_trace(ta.path, ra, "diff")) return code;
    if (!ra) return 2;
    auto rb = run_trace(tb);
    if (int code = interrupted_trace(tb.path, rb, "diff")) return code;
    if (!rb) return 2;
    report.groups = diff_traces(ra->result, rb->result);
    for (const auto& [run, lost] : {std::pair{&*ra, &report.before_lost}, {&*rb, &report.after_lost}})
      if (Check loss = data_loss_check(run->input.stats, run->result.counts); loss.status == CheckStatus::found)
        *lost = loss.reason;
  }
  fmt::print("{}", args.json ? diff_json(report) : diff_text(report, args.top, args.all));
  if (!args.html.empty() && !write_report_file(args.html, diff_html(report, args.top), "--html")) return 2;
  return 0;
}

}  // namespace

void add_diff_command(CLI::App& app) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* cmd = app.add_subcommand("diff", "What grew: two maps/ELFs (regions, sections, objects, symbols) or two traces");
  file_name(cmd->add_option("before", args->before, "Map, ELF or trace before"))->required();
  file_name(cmd->add_option("after", args->after, "Map, ELF or trace after"))->required();
  whole_number(cmd->add_option("--top", args->top, "Rows per group"))->capture_default_str();
  add_name_option(*cmd, "--format", args->format, "Two traces' format: auto | log | seedbin | itm | tpiu | emt",
                  "--format", {"auto", "log", "seedbin", "itm", "tpiu", "emt"});
  file_name(cmd->add_option("--html", args->html, "Also write a self-contained HTML page (what grew, with bars) to this file"));
  cmd->add_flag("--all", args->all, "Show unchanged rows too");
  cmd->add_flag("--json", args->json, "Print the edgemem.diff/2 JSON document (every row)");
  exit_code_help(*cmd, "(not used: a diff states no limit; use edgemem check for one)",
                 "edgemem diff old.map new.map --top 5");
  cmd->callback([args] { throw CLI::RuntimeError(run_diff(*args)); });
}

}  // namespace edgemem::cli
