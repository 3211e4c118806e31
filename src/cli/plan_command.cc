// edgemem plan MODEL.tflite: the tensor arena TFLite Micro would plan, the
// smaller one edgemem finds, and the bound no plan can beat.
#include <algorithm>
#include <fstream>
#include <iterator>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
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
};

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
                            {"bytes", b.bytes},
                            {"first_op", op_of(b.first)},
                            {"last_op", op_of(b.last)},
                            {"offset", chosen.offsets[i]}});
  }
  j["arena_bytes"] = chosen.arena_bytes;
  j["planner"] = chosen.strategy;
  j["tflm_greedy_bytes"] = tflm.arena_bytes;
  j["lower_bound_bytes"] = bound;
  j["offline_plan"] = model->offline_offsets.has_value();
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
    return 0;
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
  fmt::print("\npeak at op {}: {} B live in {} tensors\n", op_of(static_cast<int32_t>(peak_scope)),
             live[peak_scope], j["peak_tensors"].size());
  fmt::print("\n{:>5}  {:>9}  {:>5}..{:<5} {:>9}  {}\n", "id", "bytes", "first", "last", "offset", "name");
  for (size_t i = 0; i < planned.size(); ++i) {
    const auto& b = planned[i];
    fmt::print("{:>5}  {:>9}  {:>5}..{:<5} {:>9}  {}\n", b.tensor, b.bytes, op_of(b.first), op_of(b.last),
               chosen.offsets[i], model->tensors[static_cast<size_t>(b.tensor)].name);
  }
  return 0;
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
  cmd->add_flag("--reorder", args->reorder, "Search the operator order with the lowest peak (Liberis & Lane)");
  cmd->callback([args] { throw CLI::RuntimeError(run_plan(*args)); });
}

}  // namespace edgemem::cli
