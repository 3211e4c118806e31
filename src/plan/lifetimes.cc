#include "plan/lifetimes.h"

namespace edgemem::plan {

std::vector<PlanBuffer> planned_buffers(const TfliteModel& m) {
  // AllocationInfoBuilder (micro_allocation_info.cc): UpdateFirstCreated
  // records only the first scope that creates a tensor, UpdateLastUsed every
  // later one. A tensor written twice lives from its FIRST writer.
  constexpr int32_t kUnset = -1;
  std::vector<int32_t> first(m.tensors.size(), kUnset), last(m.tensors.size(), kUnset);
  auto created = [&](int32_t t, int32_t scope) {
    if (first[static_cast<size_t>(t)] == kUnset) first[static_cast<size_t>(t)] = scope;
  };
  auto used = [&](int32_t t, int32_t scope) { last[static_cast<size_t>(t)] = scope; };
  for (int32_t t : m.inputs) {
    created(t, 0);
    used(t, 0);
  }
  int32_t scope = 0;
  for (const TfliteOp& op : m.ops) {
    ++scope;
    for (int32_t t : op.outputs)
      if (t >= 0) created(t, scope);
    for (int32_t t : op.inputs)
      if (t >= 0) used(t, scope);  // -1 marks an omitted optional input
    for (int32_t t : op.outputs)
      if (t >= 0) used(t, scope);
  }
  // Graph outputs live to the end; one no operator writes is created there.
  for (int32_t t : m.outputs) {
    created(t, scope);
    used(t, scope);
  }

  std::vector<PlanBuffer> out;
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const TfliteTensor& t = m.tensors[i];
    const int64_t offline = m.offline_offsets ? (*m.offline_offsets)[i] : -1;
    // needs_allocating: no inline data, not a variable (unless the offline
    // plan places it), not empty. A tensor no operator touches is planned
    // too, over the uninitialised lifetime -1..-1.
    if (t.has_data || t.bytes == 0 || (t.is_variable && offline == -1)) continue;
    PlanBuffer b;
    b.tensor = static_cast<int32_t>(i);
    b.bytes = align_up(t.bytes, kBufferAlignment);
    b.first = first[i];
    b.last = last[i];
    b.offline_offset = offline;
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
