// edgemem map FW.map: regions, output sections, what each object costs, the
// largest symbols, and the model/arena/stack/heap among them.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/input_stream.h"
#include "cli/kind_hint.h"
#include "cli/options.h"
#include "cli/report_file.h"
#include "report/map_report.h"
#include "static/elf_image.h"
#include "static/linker_map.h"

namespace edgemem::cli {
namespace {

struct MapArgs {
  std::string map, elf, html;
  bool json = false;
  size_t top = 15;
};

int run_map(MapArgs args) {
  if (std::string clash = clashing_outputs({args.map, args.elf}, {{"--html", args.html}}); !clash.empty()) return fail(clash);
  std::string error;
  if (args.map.empty() && args.elf.empty()) return fail("map", "give a map file, --elf FW.elf, or both");
  std::optional<std::string> text;
  if (!args.map.empty()) {
    text = read_whole_file(args.map, error, linker_map_input(args.map));
    if (!text) return fail(args.map, error);
    // An ELF given where the map goes is read as the ELF it is.
    if (text->starts_with("\x7f" "ELF")) {
      if (!args.elf.empty())
        return fail(args.map, fmt::format("is an ELF, not a linker map; run `edgemem map --elf {} FW.map`", args.map));
      args.elf = args.map;
      args.map.clear();
    }
  }
  std::optional<ElfImage> elf;
  if (!args.elf.empty()) {
    elf = read_elf_image(args.elf, error);
    if (!elf) return fail(error);
  }
  std::optional<LinkerMap> map;
  if (args.map.empty()) {
    map = to_linker_map(*elf);
  } else {
    map = parse_linker_map(*text, error);
    if (!map) return fail(args.map, error + kind_hint(args.map, *text, "map"));
  }
  MapReport report;
  report.path = args.map.empty() ? args.elf : args.map;
  report.map = &*map;
  if (elf) {
    report.elf_path = args.elf;
    report.elf = &*elf;
  }
  if (elf && !args.map.empty()) {
    report.compared = true;
    report.mismatches = compare_with_map(*elf, *map);
    classify_by_elf(*map, *elf);  // after the comparison, which reads the map as linked
  }
  report.top = args.top;
  fmt::print("{}", args.json ? map_json(report) : map_text(report));
  if (!args.html.empty() && !write_report_file(args.html, map_html(report), "--html")) return 2;
  return report.against_user() ? 1 : 0;
}

}  // namespace

void add_map_command(CLI::App& app) {
  auto args = std::make_shared<MapArgs>();
  CLI::App* cmd = app.add_subcommand("map", "Read a linker map (GNU ld, armlink, IAR): regions, sections, objects, symbols");
  file_name(cmd->add_option("map", args->map, "The .map file (an ELF here is read as --elf)"));
  file_name(cmd->add_option("--elf", args->elf, "The linked ELF: sections and symbols as size -A and nm -S see them"));
  cmd->add_flag("--json", args->json, "Print the edgemem.map/2 JSON document");
  file_name(cmd->add_option("--html", args->html, "Also write a self-contained HTML page (region bars, treemap, symbols) to this file"));
  whole_number(cmd->add_option("--top", args->top, "Symbols to list"))->capture_default_str();
  exit_code_help(*cmd, "the map and the ELF are not from the same link, a region overflowed, or the map's own totals "
                 "disagree with its sections (SELF-CHECK FAILED)",
                 "edgemem map fw.map --elf fw.elf || echo 'stale map'");
  cmd->callback([args] { throw CLI::RuntimeError(run_map(*args)); });
}

}  // namespace edgemem::cli
