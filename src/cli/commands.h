// One function per subcommand; main.cc only wires them to CLI11.
#pragma once

#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace edgemem::cli {

struct AnalyzeArgs {
  std::string path;
  std::string format = "auto";
  uint64_t arena_size = 0;
  std::optional<double> clock_hz;
  unsigned tpiu_stream = 1;
  std::string elf;  // symbolise return-address sites with this ELF
  bool json = false;
  std::string fail_on;
};

// Exit codes: 0 ok, 1 a --fail-on rule broke, 2 bad usage or unreadable input.
int run_analyze(const AnalyzeArgs& args);

void add_analyze_command(CLI::App& app);
void add_demo_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_map_command(CLI::App& app);
void add_stack_command(CLI::App& app);
void add_fit_command(CLI::App& app);

}  // namespace edgemem::cli
