// edgemem stack DIR|FILES...: worst-case stack per root from GCC's .su/.ci.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "static/stack_usage.h"

namespace edgemem::cli {
namespace {

struct StackArgs {
  std::vector<std::string> paths;
  bool json = false, fpu = false;
  size_t top = 10;
};

std::string joined(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : std::string(sep)) + p;
  return out;
}

int run_stack(const StackArgs& args) {
  std::string error;
  auto report = analyze_stack(args.paths, args.fpu, error);
  if (!report) {
    fmt::print(stderr, "edgemem: {}\n", error);
    return 2;
  }
  if (args.json) {
    nlohmann::json j;
    j["schema"] = "edgemem.stack/1";
    j["source"] = report->source;
    j["functions"] = nlohmann::json::array();
    for (const auto& f : report->functions)
      j["functions"].push_back({{"name", f.name}, {"file", f.file}, {"frame_bytes", f.frame_bytes}, {"qualifier", f.qualifier}});
    j["roots"] = nlohmann::json::array();
    for (const auto& r : report->roots)
      j["roots"].push_back({{"function", r.function}, {"worst_case_bytes", r.worst_case_bytes}, {"path", r.path},
                            {"unbounded", r.unbounded}, {"reasons", r.reasons}, {"interrupt", r.interrupt},
                            {"stated_bytes", r.stated_bytes ? nlohmann::json(*r.stated_bytes) : nlohmann::json(nullptr)}});
    const InterruptBudget& irq = report->interrupts;
    j["main_stack"] = {{"thread_bytes", irq.thread_bytes}, {"one_level_bytes", irq.one_level_bytes},
                       {"all_nested_bytes", irq.all_nested_bytes}, {"exception_frame_bytes", irq.frame_bytes},
                       {"handlers", irq.handlers}};
    if (report->stated_max_bytes)
      j["stated"] = {{"max_bytes", *report->stated_max_bytes}, {"unknown", report->stated_unknown},
                     {"chain", report->stated_chain}};
    fmt::print("{}\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    return 0;
  }
  fmt::print("edgemem stack: {} functions from {} {} file{}\n\n", report->functions.size(), report->files,
             report->source, report->files == 1 ? "" : "s");
  for (const auto& r : report->roots) {
    fmt::print("{:<24} {:>7} B{}  {}\n", r.function, r.worst_case_bytes, r.unbounded ? "+ (unbounded)" : "",
               joined(r.path, " > "));
    for (const auto& why : r.reasons) fmt::print("{:<24}           {}\n", "", why);
  }
  const InterruptBudget& irq = report->interrupts;
  if (irq.handlers)
    fmt::print("\nmain stack: thread {} B; + the deepest handler and its {} B exception frame: {} B; "
               "every handler nested: {} B{}\n",
               irq.thread_bytes, irq.frame_bytes, irq.one_level_bytes, irq.all_nested_bytes,
               irq.frame_bytes == 32 ? " (--fpu: 104 B frames)" : "");
  if (report->stated_max_bytes)
    fmt::print("\nKeil states: maximum stack usage {} B{} via {}\n", *report->stated_max_bytes,
               report->stated_unknown.empty() ? "" : " + unknown (" + report->stated_unknown + ")",
               joined(report->stated_chain, " > "));
  if (report->roots.empty()) fmt::print("(no .ci call graph given: frames only; add -fcallgraph-info=su)\n");
  fmt::print("\nheaviest frames\n");
  for (size_t i = 0; i < report->functions.size() && i < args.top; ++i) {
    const auto& f = report->functions[i];
    fmt::print("{:>7} B  {:<10} {}  ({})\n", f.frame_bytes, f.qualifier, f.name, f.file);
  }
  return 0;
}

}  // namespace

void add_stack_command(CLI::App& app) {
  auto args = std::make_shared<StackArgs>();
  CLI::App* cmd = app.add_subcommand("stack", "Worst-case stack per root from GCC .su/.ci files or a Keil .htm call graph");
  cmd->add_option("paths", args->paths, "Directories (searched recursively), .su/.ci files, or a Keil .htm report")->required();
  cmd->add_flag("--json", args->json, "Print the edgemem.stack/1 JSON document");
  cmd->add_flag("--fpu", args->fpu, "Exception frames include the FPU context (104 B instead of 32 B)");
  cmd->add_option("--top", args->top, "Heaviest frames to list")->capture_default_str();
  cmd->callback([args] { throw CLI::RuntimeError(run_stack(*args)); });
}

}  // namespace edgemem::cli
