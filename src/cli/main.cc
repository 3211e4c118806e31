#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"

int edgemem::cli::fail(const std::string& what, const std::string& why) {
  fmt::print(stderr, "edgemem: {}: {}\n", what, why);
  return 2;
}

int main(int argc, char** argv) {
  CLI::App app{"edgemem: memory of on-device inference, made visible"};
  app.set_version_flag("--version", EDGEMEM_VERSION);
  app.require_subcommand(1);
  edgemem::cli::add_analyze_command(app);
  edgemem::cli::add_demo_command(app);
  edgemem::cli::add_plan_command(app);
  edgemem::cli::add_map_command(app);
  edgemem::cli::add_stack_command(app);
  edgemem::cli::add_fit_command(app);
  edgemem::cli::add_check_command(app);
  edgemem::cli::add_diff_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    // Usage errors exit 2 as the rest of edgemem's bad input does.
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return 0;
}
