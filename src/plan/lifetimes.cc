#include "plan/lifetimes.h"

namespace edgemem::plan {

std::vector<PlanBuffer> planned_buffers(const TfliteModel& m) {
  constexpr int32_t kUnset = -1;
  std::vector<int32_t> first(m.tensors.size(), kUnset), last(m.tensors.size(), kUnset);
  auto created = [&](int32_t t, int32_t scope) {
    first[t] = scope;
    last[t] = scope;
  };
  for (int32_t t : m.inputs) created(t, 0);
  for (int32_t t : m.outputs) created(t, 0);
  int32_t scope = 0;
  for (const TfliteOp& op : m.ops) {
    ++scope;
    for (int32_t t : op.outputs)
      if (t >= 0) created(t, scope);
    for (int32_t t : op.inputs)
      if (t >= 0) last[t] = scope;  // -1 marks an omitted optional input
    for (int32_t t : op.outputs)
      if (t >= 0) last[t] = scope;
  }
  for (int32_t t : m.outputs) last[t] = scope;

  std::vector<PlanBuffer> out;
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const TfliteTensor& t = m.tensors[i];
    if (t.has_data || t.is_variable || t.bytes == 0) continue;
    if (first[i] == kUnset && last[i] == kUnset) continue;  // never touched by the graph
    PlanBuffer b;
    b.tensor = static_cast<int32_t>(i);
    b.bytes = align_up(t.bytes, kBufferAlignment);
    b.first = first[i];
    b.last = last[i];
    if (m.offline_offsets) b.offline_offset = (*m.offline_offsets)[i];
    out.push_back(b);
  }
  return out;
}

std::vector<Buffer> planner_input(const std::vector<PlanBuffer>& planned) {
  std::vector<Buffer> out;
  out.reserve(planned.size());
  for (const PlanBuffer& b : planned) out.push_back({b.bytes, b.first, b.last, b.offline_offset});
  return out;
}

}  // namespace edgemem::plan
