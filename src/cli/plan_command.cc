// edgemem plan MODEL.tflite: the tensor arena TFLite Micro would plan, the
// smaller one edgemem finds, and the bound no plan can beat.
#include <algorithm>
#include <fstream>
#include <iterator>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "plan/arena_budget.h"
#include "plan/lifetimes.h"
#include "plan/planners.h"
#include "plan/reorder.h"

namespace edgemem::cli {
namespace {

struct PlanArgs {
  std::string model;
  std::string planner = "best";
  bool json = false;
  bool reorder = false;
  std::string target = "cortex-m";
  uint64_t declared = 0;
};

nlohmann::json items_json(const std::vector<plan::BudgetItem>& items) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& i : items) a.push_back({{"what", i.what}, {"bytes", i.bytes}, {"source", i.source}});
  return a;
}

// What kernel scratch adds to the head. Greedy placement with more buffers
// may happen to pack tighter, so the difference is not assumed positive.
uint64_t scratch_growth(const plan::ArenaBudget& b) {
  return b.head_bytes > b.tensor_bytes ? b.head_bytes - b.tensor_bytes : 0;
}

nlohmann::json budget_json(const plan::ArenaBudget& b) {
  return {{"target", b.target == plan::Target::x86_64 ? "x86-64" : "cortex-m"},
          {"head_bytes", b.head_bytes},
          {"tensor_bytes", b.tensor_bytes},
          {"scratch_bytes", scratch_growth(b)},
          {"scratch", items_json(b.scratch)},
          {"tail_bytes", b.tail_bytes},
          {"tail", items_json(b.tail)},
          {"allocator_bytes", b.allocator_bytes},
          {"planning_bytes", b.planning_bytes},
          {"planning", items_json(b.planning)},
          {"prepare_bytes", b.prepare_bytes},
          {"alignment_bytes", b.alignment_bytes},
          {"complete", b.complete},
          {"unmodelled_operators", b.unmodelled},
          {"tflm_blockers", b.blockers}};
}

void print_budget(const plan::ArenaBudget& b, uint64_t declared) {
  if (!b.runnable()) {
    fmt::print("\nTFLite Micro cannot run this model: {}; no arena size is recommended\n", fmt::join(b.blockers, ", "));
    return;
  }
  uint64_t head_need = std::max({b.head_bytes, b.planning_bytes, b.prepare_bytes});
  fmt::print("\nrecommended arena (kTensorArenaSize, {}, reference kernels): {} B{}\n",
             b.target == plan::Target::x86_64 ? "x86-64" : "cortex-m", b.recommended_bytes,
             b.complete ? "" : fmt::format("  -- INCOMPLETE: no cost model for {}; add their scratch",
                                           fmt::join(b.unmodelled, ", ")));
  fmt::print("  head        {:>9} B  tensors {} B + kernel scratch {} B (TFLite Micro's greedy plan)\n", b.head_bytes,
             b.tensor_bytes, scratch_growth(b));
  for (const auto& s : b.scratch) fmt::print("{:14}{:>9} B    {}\n", "", s.bytes, s.what);
  fmt::print("  planning    {:>9} B  temporary, while AllocateTensors() plans{}\n", b.planning_bytes,
             head_need == b.planning_bytes && b.planning_bytes > b.head_bytes
                 ? " -- larger than the head, so it sets the size (arena_used_bytes() will not show it)"
                 : "");
  fmt::print("  tail        {:>9} B  persistent\n", b.tail_bytes);
  for (const auto& t : b.tail) fmt::print("{:14}{:>9} B    {}\n", "", t.bytes, t.what);
  fmt::print("  allocator   {:>9} B  MicroAllocator's own objects\n", b.allocator_bytes);
  fmt::print("  alignment   {:>9} B  if the arena array is not 16-byte aligned\n", b.alignment_bytes);
  if (declared) {
    if (declared >= b.recommended_bytes)
      fmt::print("declared {} B: {} B ({:.0f} %) can be reclaimed\n", declared, declared - b.recommended_bytes,
                 100.0 * static_cast<double>(declared - b.recommended_bytes) / static_cast<double>(declared));
    else
      fmt::print("declared {} B: {} B SHORT -- AllocateTensors() is expected to fail\n", declared,
                 b.recommended_bytes - declared);
  }
}

// Scopes are TFLite Micro's: 0 = before the first op, op i runs at i + 1.
int32_t op_of(int32_t scope) { return std::max(scope - 1, 0); }

int run_plan(const PlanArgs& args) {
  std::ifstream in(args.model, std::ios::binary);
  if (!in) {
    fmt::print(stderr, "edgemem: {}: cannot open\n", args.model);
    return 2;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string error;
  auto model = plan::read_tflite(bytes, error);
  if (!model) {
    fmt::print(stderr, "edgemem: {}: {}\n", args.model, error);
    return 2;
  }
  std::vector<plan::PlanBuffer> planned = plan::planned_buffers(*model);
  std::vector<plan::Buffer> buffers = plan::planner_input(planned);
  plan::Plan tflm = plan::tflm_greedy_plan(buffers);
  plan::Plan chosen = args.planner == "greedy" ? tflm : plan::best_plan(buffers);
  uint64_t bound = plan::lower_bound(buffers);

  // Live bytes per operator and the tensors that make the peak.
  int32_t ops = static_cast<int32_t>(model->ops.size());
  std::vector<uint64_t> live(static_cast<size_t>(ops) + 1, 0);
  for (const auto& b : planned)
    for (int32_t s = std::max(b.first, 0); s <= b.last && s <= ops; ++s) live[static_cast<size_t>(s)] += b.bytes;
  size_t peak_scope = static_cast<size_t>(std::max_element(live.begin(), live.end()) - live.begin());

  nlohmann::json j;
  j["schema"] = "edgemem.plan/1";
  j["model"] = args.model;
  j["operators"] = ops;
  j["constant_bytes"] = model->constant_bytes;
  j["tensors"] = nlohmann::json::array();
  for (size_t i = 0; i < planned.size(); ++i) {
    const auto& b = planned[i];
    j["tensors"].push_back({{"id", b.tensor},
                            {"name", model->tensors[static_cast<size_t>(b.tensor)].name},
                            {"bytes", model->tensors[static_cast<size_t>(b.tensor)].bytes},
                            {"aligned_bytes", b.bytes},
                            {"first_op", op_of(b.first)},
                            {"last_op", op_of(b.last)},
                            {"offset", chosen.offsets[i]}});
  }
  j["arena_bytes"] = chosen.arena_bytes;
  j["planner"] = chosen.strategy;
  j["tflm_greedy_bytes"] = tflm.arena_bytes;
  j["lower_bound_bytes"] = bound;
  j["offline_plan"] = model->offline_offsets.has_value();
  plan::ArenaBudget budget =
      plan::arena_budget(*model, plan::target_named(args.target));
  j["recommended_arena_bytes"] = budget.runnable() ? nlohmann::json(budget.recommended_bytes) : nlohmann::json(nullptr);
  j["arena_budget"] = budget_json(budget);
  if (args.declared) j["declared_arena_bytes"] = args.declared;
  j["timeline"] = nlohmann::json::array();
  for (int32_t s = 1; s <= ops; ++s) j["timeline"].push_back({{"op", s - 1}, {"live_bytes", live[static_cast<size_t>(s)]}});
  j["peak_tensors"] = nlohmann::json::array();
  for (const auto& b : planned)
    if (b.first <= static_cast<int32_t>(peak_scope) && b.last >= static_cast<int32_t>(peak_scope))
      j["peak_tensors"].push_back(b.tensor);

  if (args.reorder) {
    plan::ReorderResult r = plan::best_operator_order(*model);
    plan::Plan reordered = plan::best_plan(plan::planner_input(plan::planned_buffers(plan::with_operator_order(*model, r.order))));
    j["reorder"] = {{"order", r.order},
                    {"exhaustive", r.exhaustive},
                    {"lower_bound_bytes", r.peak_bytes},
                    {"original_lower_bound_bytes", r.original_peak_bytes},
                    {"gain_bytes", r.original_peak_bytes - r.peak_bytes},
                    {"arena_bytes", reordered.arena_bytes}};
  }

  if (args.json) {
    fmt::print("{}\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    return budget.runnable() ? 0 : 1;
  }
  fmt::print("edgemem plan: {} ({} operators, {} planned tensors, {} B of constants)\n\n", args.model, ops,
             planned.size(), model->constant_bytes);
  fmt::print("arena (edgemem, {:<22}) {:>10} B\n", chosen.strategy, chosen.arena_bytes);
  fmt::print("arena (TFLite Micro greedy)          {:>10} B{}\n", tflm.arena_bytes,
             tflm.arena_bytes > chosen.arena_bytes
                 ? fmt::format("  ({} B more)", tflm.arena_bytes - chosen.arena_bytes)
                 : std::string());
  fmt::print("lower bound (peak of live tensors)   {:>10} B{}\n", bound,
             chosen.arena_bytes == bound ? "  (edgemem's plan is optimal)" : "");
  if (args.reorder) {
    const auto& r = j["reorder"];
    uint64_t gain = r["gain_bytes"];
    if (gain == 0)
      fmt::print("reorder: the model's operator order already has the lowest peak{}\n",
                 r["exhaustive"].get<bool>() ? "" : " that a greedy search finds");
    else
      fmt::print("reorder: {} operator order lowers the bound {} -> {} B ({} B less); arena {} B\n         order {}\n",
                 r["exhaustive"].get<bool>() ? "the best" : "a greedy", r["original_lower_bound_bytes"].get<uint64_t>(),
                 r["lower_bound_bytes"].get<uint64_t>(), gain, r["arena_bytes"].get<uint64_t>(), r["order"].dump());
  }
  print_budget(budget, args.declared);
  fmt::print("\npeak at op {}: {} B live in {} tensors\n", op_of(static_cast<int32_t>(peak_scope)),
             live[peak_scope], j["peak_tensors"].size());
  fmt::print("\n{:>5}  {:>9}  {:>5}..{:<5} {:>9}  {}\n", "id", "bytes", "first", "last", "offset", "name");
  for (size_t i = 0; i < planned.size(); ++i) {
    const auto& b = planned[i];
    fmt::print("{:>5}  {:>9}  {:>5}..{:<5} {:>9}  {}\n", b.tensor, b.bytes, op_of(b.first), op_of(b.last),
               chosen.offsets[i], model->tensors[static_cast<size_t>(b.tensor)].name);
  }
  return budget.runnable() ? 0 : 1;
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand("plan", "Plan the tensor arena of a .tflite model");
  cmd->add_option("model", args->model, "The .tflite model")->required();
  cmd->add_option("--planner", args->planner, "best (edgemem) | greedy (TFLite Micro's)")
      ->check(CLI::IsMember({"best", "greedy"}))
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print the edgemem.plan/1 JSON document");
  cmd->add_option("--target", args->target, "Struct sizes of the runtime: cortex-m (32-bit) | x86-64")
      ->check(CLI::IsMember({"cortex-m", "x86-64"}))
      ->capture_default_str();
  cmd->add_option("--declared", args->declared, "The kTensorArenaSize the firmware declares, to compare");
  cmd->add_flag("--reorder", args->reorder, "Search the operator order with the lowest peak (Liberis & Lane)");
  cmd->callback([args] { throw CLI::RuntimeError(run_plan(*args)); });
}

}  // namespace edgemem::cli
