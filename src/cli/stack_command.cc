// edgemem stack DIR|FILES...: worst-case stack per root from GCC's .su/.ci.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/input_stream.h"
#include "cli/kind_hint.h"
#include "cli/options.h"
#include "cli/report_file.h"
#include "edgemem/decoder.h"
#include "report/stack_report.h"
#include "static/elf_image.h"
#include "static/stack_usage.h"

namespace edgemem::cli {
namespace {

struct StackArgs {
  std::vector<std::string> paths;
  std::string html, elf;
  bool json = false, fpu = false;
  size_t top = 10;
};

int run_stack(const StackArgs& args) {
  std::vector<std::string> inputs = args.paths;
  if (!args.elf.empty()) inputs.push_back(args.elf);
  if (std::string clash = clashing_outputs(inputs, {{"--html", args.html}}); !clash.empty()) return fail(clash);
  std::string error;
  std::optional<ElfImage> elf;
  if (!args.elf.empty() && !(elf = read_elf_image(args.elf, error))) return fail(error);
  auto report = analyze_stack(args.paths, args.fpu, error, elf ? LinkedImage{args.elf, &*elf} : LinkedImage{});
  if (!report) {
    // One file that is no stack report: say what it is.
    if (args.paths.size() == 1)
      if (auto head = read_head(args.paths[0], kSniffBytes)) error += kind_hint(args.paths[0], *head, "stack");
    return fail(error);
  }
  fmt::print("{}", args.json ? stack_json(*report) : stack_text(*report, args.top));
  if (!args.html.empty() && !write_report_file(args.html, stack_html(*report, args.top), "--html")) return 2;
  return 0;
}

}  // namespace

void add_stack_command(CLI::App& app) {
  auto args = std::make_shared<StackArgs>();
  CLI::App* cmd = app.add_subcommand("stack", "Worst-case stack per root from GCC .su/.ci files or a Keil .htm call graph (Clang .su files: frames only)");
  file_name(cmd->add_option("paths", args->paths, "Directories (searched recursively), .su/.ci files, or a Keil .htm report"))->required();
  cmd->add_flag("--json", args->json, "Print the edgemem.stack/1 JSON document");
  file_name(cmd->add_option("--html", args->html, "Also write a self-contained HTML page (each root's worst path as a call tree) to this file"));
  file_name(cmd->add_option("--elf", args->elf,
                            "The ELF linked from these objects: settles weak against static definitions and leaves out roots "
                            "the linker removed"));
  cmd->add_flag("--fpu", args->fpu, "Exception frames include the FPU context (108 B instead of 36 B, each with the alignment pad)");
  whole_number(cmd->add_option("--top", args->top, "Heaviest frames to list"))->capture_default_str();
  exit_code_help(*cmd, "(not used: stack states no limit; put one in a budget and run edgemem check)",
                 "edgemem stack build/ --json > stack.json");
  cmd->callback([args] { throw CLI::RuntimeError(run_stack(*args)); });
}

}  // namespace edgemem::cli
