#include <filesystem>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"

namespace edgemem::cli {

// The demo capture ships with the source: the QEMU firmware's leak variant
// and its ELF (scripts/make-demo-trace.sh rebuilds both).
void add_demo_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("demo", "Analyse the bundled inference trace");
  cmd->add_flag("--json", *json, "Print JSON instead of the summary");
  cmd->callback([json] {
    std::filesystem::path traces = std::filesystem::path(EDGEMEM_SOURCE_DIR) / "examples/traces";
    std::filesystem::path trace = traces / "kws_leak.emt";
    if (!std::filesystem::exists(trace)) {
      fmt::print(stderr, "edgemem: demo trace {} is missing (run scripts/make-demo-trace.sh)\n", trace.string());
      throw CLI::RuntimeError(2);
    }
    AnalyzeArgs args;
    args.path = trace.string();
    args.elf = (traces / "kws_leak.elf").string();
    args.json = *json;
    int rc = run_analyze(args);
    if (!*json && rc == 0)
      fmt::print("\nTry it on your own trace:  edgemem analyze TRACE [--arena-size N] [--json] "
                 "[--fail-on leak,overflow]\n");
    throw CLI::RuntimeError(rc);
  });
}

}  // namespace edgemem::cli
