#include <filesystem>
#include <system_error>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/options.h"

namespace edgemem::cli {
namespace {

// An installed edgemem finds its data beside itself (PREFIX/bin/edgemem ->
// PREFIX/share/edgemem/traces), so a moved prefix still works; a build tree
// falls back to the source it was built from.
std::filesystem::path installed_traces() {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return (exe.parent_path() / EDGEMEM_INSTALLED_TRACES_FROM_BIN).lexically_normal();
}

}  // namespace

// The demo capture is the QEMU firmware's leak variant and its ELF
// (scripts/make-demo-trace.sh rebuilds both).
void add_demo_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto html = std::make_shared<std::string>("edgemem-demo.html");
  CLI::App* cmd = app.add_subcommand("demo", "Analyse the bundled inference trace");
  cmd->add_flag("--json", *json, "Print JSON instead of the summary");
  file_name(cmd->add_option("--html", *html, "Where to write the HTML report"))->capture_default_str();
  exit_code_help(*cmd, "(not used: the bundled trace's findings are the demonstration)",
                 "edgemem demo --html /tmp/report.html && xdg-open /tmp/report.html");
  cmd->callback([json, html] {
    std::filesystem::path installed = installed_traces();
    std::filesystem::path source = std::filesystem::path(EDGEMEM_SOURCE_DIR) / "examples/traces";
    std::filesystem::path traces;
    for (const auto& dir : {installed, source})
      if (!dir.empty() && std::filesystem::exists(dir / "kws_leak.emt")) {
        traces = dir;
        break;
      }
    if (traces.empty())
      throw CLI::RuntimeError(fail("demo", fmt::format("kws_leak.emt is in neither {} nor {} (reinstall edgemem, "
                                                       "or run scripts/make-demo-trace.sh in the source tree)",
                                                       installed.empty() ? "<no /proc/self/exe>" : installed.string(),
                                                       source.string())));
    AnalyzeArgs args;
    args.path = (traces / "kws_leak.emt").string();
    args.elf = (traces / "kws_leak.elf").string();
    args.json = *json;
    args.html = *html;
    int rc = run_analyze(args);
    if (!*json && rc == 0)
      fmt::print("\nTry it on your own trace:  edgemem analyze TRACE [--arena-size N] [--json] "
                 "[--fail-on leak,overflow]\n");
    throw CLI::RuntimeError(rc);
  });
}

}  // namespace edgemem::cli
