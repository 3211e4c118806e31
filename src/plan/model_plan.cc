#include "plan/model_plan.h"

#include <algorithm>

#include "plan/lifetimes.h"
#include "plan/planners.h"
#include "plan/reorder.h"

namespace edgemem::plan {
namespace {

// Scopes are TFLite Micro's: 0 = before the first op, op i runs at i + 1.
int32_t op_of(int32_t scope) { return std::max(scope - 1, 0); }

}  // namespace

PlanReport plan_model(const TfliteModel& model, const std::string& path, const PlanOptions& options) {
  std::vector<PlanBuffer> planned = planned_buffers(model);
  std::vector<Buffer> buffers = planner_input(planned);
  Plan tflm = tflm_greedy_plan(buffers);
  Plan chosen = options.planner == Planner::tflm_greedy ? tflm : best_plan(buffers);

  PlanReport r;
  r.model = path;
  r.operators = static_cast<int32_t>(model.ops.size());
  for (const TfliteOp& op : model.ops) r.operator_names.push_back(operator_name(op));
  r.constant_bytes = model.constant_bytes;
  for (size_t i = 0; i < planned.size(); ++i) {
    const PlanBuffer& b = planned[i];
    const TfliteTensor& tensor = model.tensors[static_cast<size_t>(b.tensor)];
    r.tensors.push_back(
        {b.tensor, tensor.name, tensor.bytes, b.bytes, op_of(b.first), op_of(b.last), chosen.offsets[i], tflm.offsets[i]});
  }
  r.planner = chosen.strategy;
  r.arena_bytes = chosen.arena_bytes;
  r.tflm_greedy_bytes = tflm.arena_bytes;
  r.lower_bound_bytes = lower_bound(buffers);
  r.offline_plan = model.offline_offsets.has_value();
  r.budget = arena_budget(model, options.target);
  r.declared = options.declared;

  // Live bytes per scope, and the tensors that make the peak. Operator i
  // runs at scope i + 1; scopes -1 and 0 come before the first operator
  // (graph inputs, tensors nobody writes): a peak there has no operator.
  const int32_t scopes = r.operators + 2;  // -1 .. operators
  std::vector<uint64_t> live(static_cast<size_t>(scopes), 0);
  for (const PlanBuffer& b : planned)
    for (int32_t s = std::max(b.first, -1); s <= b.last && s <= r.operators; ++s) live[static_cast<size_t>(s + 1)] += b.bytes;
  // The first scope with the most bytes live; the lower bound counts the same.
  const auto peak_scope = static_cast<int32_t>(std::max_element(live.begin(), live.end()) - live.begin()) - 1;
  r.live_bytes.assign(live.begin() + 2, live.end());
  r.peak_op = peak_scope >= 1 ? peak_scope - 1 : -1;
  r.peak_live_bytes = live[static_cast<size_t>(peak_scope + 1)];
  for (const PlanBuffer& b : planned)
    if (b.first <= peak_scope && b.last >= peak_scope) r.peak_tensors.push_back(b.tensor);

  if (options.reorder) {
    ReorderResult o = best_operator_order(model);
    Plan reordered = best_plan(planner_input(planned_buffers(with_operator_order(model, o.order))));
    r.reorder = PlanReorder{o.order, o.exhaustive, o.peak_bytes, o.original_peak_bytes, reordered.arena_bytes};
  }
  return r;
}

}  // namespace edgemem::plan
