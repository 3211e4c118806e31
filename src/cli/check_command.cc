// edgemem check --budget FILE: memory budgets for CI. Reads what the budget
// needs (map, ELF, stack files, trace, model), evaluates every limit and
// exits 1 with one line per broken budget.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/input_stream.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "edgemem/analyzer.h"
#include "plan/arena_budget.h"
#include "report/budget.h"
#include "report/check_report.h"
#include "report/names.h"
#include "report/style.h"
#include "static/elf_image.h"
#include "static/linker_map.h"
#include "static/stack_usage.h"

namespace edgemem::cli {
namespace {

namespace fs = std::filesystem;

struct CheckArgs {
  std::string budget, map, elf, trace, model;
  std::vector<std::string> stack;
  std::string target = "cortex-m";
  std::string format = "auto";  // of the trace
  bool fpu = false, json = false;
};

int run_check(CheckArgs args) {
  std::string why;
  auto text = read_whole_file(args.budget, why, text_input("a budget (JSON)"));
  if (!text) return fail(args.budget, why);
  std::optional<nlohmann::json> parsed = parse_budget(*text, why);
  if (!parsed) return fail(args.budget, why);
  nlohmann::json budget = std::move(*parsed);
  // Inputs named in the budget are relative to it; the command line wins.
  // Keys match in any case, as every budget key does.
  auto member = [](const nlohmann::json& object, const char* key) -> const nlohmann::json* {
    if (!object.is_object()) return nullptr;
    for (const auto& item : object.items())
      if (names::match(item.key(), {key})) return &item.value();
    return nullptr;
  };
  fs::path base = fs::path(args.budget).parent_path();
  const nlohmann::json* inputs = member(budget, "inputs");
  // A misspelt input ("modle") left its limits judged on nothing, or not at all.
  if (inputs) {
    const std::vector<std::string> keys = {"map", "elf", "stack", "trace", "model"};
    if (!inputs->is_object()) return fail(args.budget, "inputs: expected an object naming map, elf, stack, trace or model");
    for (const auto& item : inputs->items()) {
      const auto key = names::match(item.key(), keys);
      if (!key) return fail(args.budget, "inputs: " + names::unknown("key", item.key(), keys));
      const bool paths = *key == "stack" && item.value().is_array() &&
                         std::all_of(item.value().begin(), item.value().end(), [](const auto& p) { return p.is_string(); });
      if (!item.value().is_string() && !paths)
        return fail(args.budget, fmt::format("inputs.{}: expected a path{}", item.key(),
                                             *key == "stack" ? ", or a list of paths" : ""));
    }
  }
  auto from_budget = [&](std::string& arg, const char* key) {
    const nlohmann::json* v = inputs ? member(*inputs, key) : nullptr;
    if (arg.empty() && v && v->is_string()) arg = (base / v->get<std::string>()).string();
  };
  // The image is a map, an ELF, or both of one link: the command line's
  // stands for the budget's (a map from the command line beside the
  // budget's ELF of another build would be judged as one image).
  if (args.map.empty() && args.elf.empty()) {
    from_budget(args.map, "map");
    from_budget(args.elf, "elf");
  }
  from_budget(args.trace, "trace");
  from_budget(args.model, "model");
  if (const nlohmann::json* s = inputs ? member(*inputs, "stack") : nullptr; s && args.stack.empty()) {
    if (s->is_string()) args.stack.push_back((base / s->get<std::string>()).string());
    if (s->is_array())
      for (const auto& p : *s)
        if (p.is_string()) args.stack.push_back((base / p.get<std::string>()).string());
  }

  std::string error;
  std::optional<LinkerMap> map;
  std::optional<ElfImage> elf;
  if (!args.elf.empty()) {
    elf = read_elf_image(args.elf, error);
    if (!elf) return fail(error);
  }
  if (!args.map.empty()) {
    auto t = read_whole_file(args.map, error, text_input("a linker map"));
    if (!t) return fail(args.map, error);
    map = parse_linker_map(*t, error);
    if (!map) return fail(args.map, error);
    if (elf) {
      // The ELF settles what the map cannot (NOLOAD load images, sizes it
      // only bounds), if it is of the same link.
      if (const auto differ = compare_with_map(*elf, *map); !differ.empty())
        return fail(args.elf, fmt::format("is not of the link {} describes ({}{}): give the ELF and the map of one build",
                                          args.map, differ.front(), differ.size() > 1 ? ", ..." : ""));
      classify_by_elf(*map, *elf);
    }
  } else if (elf) {
    map = to_linker_map(*elf);
  }
  std::optional<StackReport> stack;
  if (!args.stack.empty()) {
    // The image the stack files were built into settles weak against static.
    stack = analyze_stack(args.stack, args.fpu, error, elf ? LinkedImage{args.elf, &*elf} : LinkedImage{});
    if (!stack) return fail(error);
  }
  std::optional<TraceRun> trace;
  if (!args.trace.empty()) {
    AnalyzeArgs a;
    a.path = args.trace;
    a.format = args.format;
    catch_interrupts();  // Ctrl-C on an endless input says how far it got
    trace = run_trace(a);
    if (int code = interrupted_trace(a.path, trace, "check")) return code;
    if (!trace) return 2;
  }
  std::optional<plan::ArenaBudget> arena;
  if (!args.model.empty()) {
    auto bytes = read_whole_file(args.model, error, plan::tflite_input());
    if (!bytes) return fail(args.model, error);
    auto model = plan::read_tflite({reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()}, error);
    if (!model) return fail(args.model, error);
    arena = plan::arena_budget(*model, plan::target_named(args.target));
  }

  BudgetInputs in{map ? &*map : nullptr, stack ? &*stack : nullptr, trace ? &trace->result : nullptr,
                  arena ? &*arena : nullptr};
  auto outcomes = evaluate_budget(budget, in, error);
  if (!error.empty()) {
    // Refused (exit 2), with the limits judged beside it that broke.
    if (!args.json) {
      for (const BudgetOutcome& o : outcomes) fmt::print("{} {} {}\n", style::bad("BROKEN"), o.rule, o.message);
      std::fflush(stdout);  // above the refusal on stderr, in a pipe too
    }
    return fail(args.budget, error);
  }

  std::optional<CheckTrace> judged;
  if (trace) {
    const AnalysisResult& r = trace->result;
    judged = CheckTrace{args.trace,
                        r.inferences,
                        r.inferences - r.inferences_before_latest_boot,
                        r.restarts.total,
                        r.restarts.leaking_boots,
                        r.restarts.unjudged_boots,
                        {}};
    // Lost at the end too (a capture cut mid-record, a gzip cut short): said,
    // not only on stderr; a loss mid-trace is refused by the limits it touches.
    if (Check loss = data_loss_check(trace->input.stats, r.counts); loss.status == CheckStatus::found)
      judged->data_lost = loss.reason;
    // An arena margin is judged per sized pool, a fragmentation band over
    // the pools of known extent (base and size): the others are named, not
    // passed in silence.
    auto judged_by = [&](std::string_view prefix) {
      return std::any_of(outcomes.begin(), outcomes.end(), [&](const BudgetOutcome& o) { return o.rule.starts_with(prefix); });
    };
    std::map<std::string, std::vector<std::string>> unjudged;  // pool -> the limits it was not judged by
    if (judged_by("arena."))
      for (const PoolSummary& p : r.pools)
        if (!p.size) unjudged[p.name].push_back("arena margin");
    if (judged_by("fragmentation.max_band"))
      for (const PoolFragmentation& p : r.fragmentation.pools)
        if (!p.known_extent) unjudged[p.pool].push_back("fragmentation band");
    for (const auto& [pool, limits] : unjudged) {
      judged->unsized_pools.push_back(pool);
      judged->unsized_limits.push_back(fmt::format("'{}' ({})", pool, fmt::join(limits, ", ")));
    }
  }
  fmt::print("{}", args.json ? check_json(args.budget, outcomes, judged) : check_text(outcomes, judged));
  for (const auto& o : outcomes)
    if (!o.ok) return 1;
  return 0;
}

}  // namespace

void add_check_command(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand("check", "Evaluate a memory budget file for CI: exit 1 when one breaks");
  file_name(cmd->add_option("--budget", args->budget, "The budget (JSON, edgemem.budget/1; docs/check.md)"))->required();
  file_name(cmd->add_option("--map", args->map, "Linker map (GNU ld, armlink, IAR)"));
  file_name(cmd->add_option("--elf", args->elf, "Linked ELF: alone, or beside its map to settle what the map cannot tell"));
  file_name(cmd->add_option("--stack", args->stack, "Directories or .su/.ci files, or a Keil .htm report"));
  file_name(cmd->add_option("--trace", args->trace, "A memory trace, for leak, fragmentation and arena margins"));
  add_name_option(*cmd, "--format", args->format, "The trace's format: auto | log | seedbin | itm | tpiu | emt", "--format",
                  {"auto", "log", "seedbin", "itm", "tpiu", "emt"});
  file_name(cmd->add_option("--model", args->model, "The .tflite model, for the arena the firmware declares"));
  add_name_option(*cmd, "--target", args->target, "cortex-m | x86-64", "--target", {"cortex-m", "x86-64"});
  cmd->add_flag("--fpu", args->fpu, "Exception frames include the FPU context (108 B with the alignment pad)");
  cmd->add_flag("--json", args->json, "Print the edgemem.check/2 JSON document");
  exit_code_help(*cmd, "a budget is broken (each one listed after the verdict)",
                 "edgemem check --budget budget.json --map fw.map || echo 'over budget'");
  cmd->callback([args] { throw CLI::RuntimeError(run_check(*args)); });
}

}  // namespace edgemem::cli
