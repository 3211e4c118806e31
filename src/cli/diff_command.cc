// edgemem diff A B: what grew between two builds (maps or ELFs) or two runs
// (traces).
#include <cmath>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/input_stream.h"
#include "report/diff.h"
#include "static/elf_image.h"
#include "static/linker_map.h"

namespace edgemem::cli {
namespace {

struct DiffArgs {
  std::string before, after;
  size_t top = 20;
  bool json = false, all = false;
};

// A linker map or ELF read as a map; nullopt (and `is_image` false) when the
// file is neither, so it can be tried as a trace.
std::optional<LinkerMap> read_image(const std::string& path, bool& is_image, std::string& error) {
  is_image = false;
  auto file = read_whole_file(path);
  if (!file) {
    error = fmt::format("{}: cannot open", path);
    return std::nullopt;
  }
  const std::string& text = *file;
  if (text.starts_with("\x7f" "ELF")) {
    is_image = true;
    auto elf = read_elf_image(path, error);
    return elf ? std::optional<LinkerMap>(to_linker_map(*elf)) : std::nullopt;
  }
  std::string why;
  auto map = parse_linker_map(text, why);
  is_image = map.has_value();
  return map;
}

std::string fmt_value(double v, const std::string& unit, bool sign = false) {
  if (unit == "B" || std::floor(v) == v) return sign ? fmt::format("{:+.0f}", v) : fmt::format("{:.0f}", v);
  return sign ? fmt::format("{:+.1f}", v) : fmt::format("{:.1f}", v);
}

void print_groups(const std::vector<DiffGroup>& groups, const DiffArgs& args) {
  for (const auto& g : groups) {
    size_t changed = 0;
    for (const auto& r : g.rows) changed += r.delta() != 0;
    fmt::print("\n{} ({} changed)\n", g.title, changed);
    size_t shown = 0;
    for (const auto& r : g.rows) {
      if ((r.delta() == 0 && !args.all) || shown == args.top) break;
      ++shown;
      std::string pct = r.before != 0 ? fmt::format(" ({:+.1f} %)", 100.0 * r.delta() / r.before) : "";
      std::string tag = r.added ? "  [new]" : r.removed ? "  [gone]" : "";
      fmt::print("  {:>12} -> {:>12}  {:>12}{:<12}  {}{}\n", fmt_value(r.before, g.unit), fmt_value(r.after, g.unit),
                 fmt_value(r.delta(), g.unit, true), pct, r.name, tag);
    }
  }
}

int run_diff(const DiffArgs& args) {
  std::string error;
  bool image_a = false, image_b = false;
  auto a = read_image(args.before, image_a, error);
  if (!error.empty()) return fmt::print(stderr, "edgemem: {}\n", error), 2;
  auto b = read_image(args.after, image_b, error);
  if (!error.empty()) return fmt::print(stderr, "edgemem: {}\n", error), 2;
  if (image_a != image_b) {
    fmt::print(stderr, "edgemem: diff: {} is {} but {} is {}; compare two maps/ELFs or two traces\n", args.before,
               image_a ? "a map or ELF" : "not", args.after, image_b ? "a map or ELF" : "not");
    return 2;
  }
  std::vector<DiffGroup> groups;
  std::string kind;
  if (image_a) {
    groups = diff_maps(*a, *b);
    kind = "images";
  } else {
    AnalyzeArgs ta, tb;
    ta.path = args.before;
    tb.path = args.after;
    auto ra = run_trace(ta);
    if (!ra) return 2;
    auto rb = run_trace(tb);
    if (!rb) return 2;
    groups = diff_traces(ra->result, rb->result);
    kind = "traces";
  }
  if (args.json) {
    nlohmann::json j = {{"schema", "edgemem.diff/1"}, {"before", args.before}, {"after", args.after}, {"kind", kind}};
    j["groups"] = nlohmann::json::array();
    for (const auto& g : groups) {
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& r : g.rows)
        rows.push_back({{"name", r.name}, {"before", r.before}, {"after", r.after}, {"delta", r.delta()},
                        {"added", r.added}, {"removed", r.removed}});
      j["groups"].push_back({{"title", g.title}, {"unit", g.unit}, {"rows", rows}});
    }
    fmt::print("{}\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    return 0;
  }
  fmt::print("edgemem diff: {} -> {} ({})\n", args.before, args.after, kind);
  print_groups(groups, args);
  return 0;
}

}  // namespace

void add_diff_command(CLI::App& app) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* cmd = app.add_subcommand("diff", "What grew: two maps/ELFs (regions, sections, objects, symbols) or two traces");
  cmd->add_option("before", args->before, "Map, ELF or trace before")->required();
  cmd->add_option("after", args->after, "Map, ELF or trace after")->required();
  cmd->add_option("--top", args->top, "Rows per group")->capture_default_str();
  cmd->add_flag("--all", args->all, "Show unchanged rows too");
  cmd->add_flag("--json", args->json, "Print the edgemem.diff/1 JSON document (every row)");
  cmd->callback([args] { throw CLI::RuntimeError(run_diff(*args)); });
}

}  // namespace edgemem::cli
