// edgemem plan MODEL.tflite: the tensor arena TFLite Micro would plan, the
// smaller one edgemem finds, and the bound no plan can beat.
#include <algorithm>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/input_stream.h"
#include "cli/options.h"
#include "plan/arena_budget.h"
#include "plan/lifetimes.h"
#include "plan/planners.h"
#include "plan/reorder.h"
#include "report/plan_report.h"

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

// Scopes are TFLite Micro's: 0 = before the first op, op i runs at i + 1.
int32_t op_of(int32_t scope) { return std::max(scope - 1, 0); }

int run_plan(const PlanArgs& args) {
  auto file = read_whole_file(args.model);
  if (!file) return fail(args.model, "cannot open");
  std::string error;
  auto model = plan::read_tflite({reinterpret_cast<const uint8_t*>(file->data()), file->size()}, error);
  if (!model) return fail(args.model, error);
  std::vector<plan::PlanBuffer> planned = plan::planned_buffers(*model);
  std::vector<plan::Buffer> buffers = plan::planner_input(planned);
  plan::Plan tflm = plan::tflm_greedy_plan(buffers);
  plan::Plan chosen = args.planner == "greedy" ? tflm : plan::best_plan(buffers);

  PlanReport r;
  r.model = args.model;
  r.operators = static_cast<int32_t>(model->ops.size());
  r.constant_bytes = model->constant_bytes;
  for (size_t i = 0; i < planned.size(); ++i) {
    const auto& b = planned[i];
    const auto& tensor = model->tensors[static_cast<size_t>(b.tensor)];
    r.tensors.push_back({b.tensor, tensor.name, tensor.bytes, b.bytes, op_of(b.first), op_of(b.last), chosen.offsets[i]});
  }
  r.planner = chosen.strategy;
  r.arena_bytes = chosen.arena_bytes;
  r.tflm_greedy_bytes = tflm.arena_bytes;
  r.lower_bound_bytes = plan::lower_bound(buffers);
  r.offline_plan = model->offline_offsets.has_value();
  r.budget = plan::arena_budget(*model, plan::target_named(args.target));
  if (args.declared) r.declared = args.declared;

  // Live bytes per scope, and the tensors that make the peak.
  std::vector<uint64_t> live(static_cast<size_t>(r.operators) + 1, 0);
  for (const auto& b : planned)
    for (int32_t s = std::max(b.first, 0); s <= b.last && s <= r.operators; ++s) live[static_cast<size_t>(s)] += b.bytes;
  auto peak_scope = static_cast<int32_t>(std::max_element(live.begin(), live.end()) - live.begin());
  r.live_bytes.assign(live.begin() + 1, live.end());
  r.peak_op = op_of(peak_scope);
  r.peak_live_bytes = live[static_cast<size_t>(peak_scope)];
  for (const auto& b : planned)
    if (b.first <= peak_scope && b.last >= peak_scope) r.peak_tensors.push_back(b.tensor);

  if (args.reorder) {
    plan::ReorderResult o = plan::best_operator_order(*model);
    plan::Plan reordered = plan::best_plan(plan::planner_input(plan::planned_buffers(plan::with_operator_order(*model, o.order))));
    r.reorder = PlanReorder{o.order, o.exhaustive, o.peak_bytes, o.original_peak_bytes, reordered.arena_bytes};
  }
  fmt::print("{}", args.json ? plan_json(r) : plan_text(r));
  return r.against_user() ? 1 : 0;
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand("plan", "Plan the tensor arena of a .tflite model");
  cmd->add_option("model", args->model, "The .tflite model")->required();
  add_name_option(*cmd, "--planner", args->planner, "best (edgemem) | greedy (TFLite Micro's)", "--planner",
                  {"best", "greedy"});
  cmd->add_flag("--json", args->json, "Print the edgemem.plan/1 JSON document");
  add_name_option(*cmd, "--target", args->target, "Struct sizes of the runtime: cortex-m (32-bit) | x86-64", "--target",
                  {"cortex-m", "x86-64"});
  add_size_option(*cmd, "--declared", args->declared, "The kTensorArenaSize the firmware declares, to compare");
  cmd->add_flag("--reorder", args->reorder, "Search the operator order with the lowest peak (Liberis & Lane)");
  exit_code_help(*cmd, "the --declared arena is shorter than the recommended one",
                 "edgemem plan --declared 64K model.tflite || echo 'kTensorArenaSize is too small'");
  cmd->callback([args] { throw CLI::RuntimeError(run_plan(*args)); });
}

}  // namespace edgemem::cli
