#include "plan/plan_vs_capture.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace edgemem::plan {
namespace {

// The capture's site names (tools/tflm_oracle/capture_probe.cc) as the
// kinds arena_budget() gives its tail items.
std::string tail_kind(const std::string& what) {
  if (what == "SingleArenaBufferAllocator" || what == "GreedyMemoryPlanner" || what == "MicroAllocator" ||
      what == "StartModelAllocation")
    return "allocator";
  if (what == "TfLiteEvalTensor[]") return "eval_tensors";
  if (what == "NodeAndRegistration[]") return "nodes";
  if (what == "FinishModelAllocation") return "scratch_handles";
  if (what == "variable tensors") return "variables";
  if (what == "graph I/O TfLiteTensor*[]" || what == "graph I/O TfLiteTensor") return "io_tensors";
  for (std::string_view stage : {".options", ".Init", ".Prepare"})
    if (what.size() > stage.size() && what.ends_with(stage)) return "op:" + what.substr(0, what.size() - stage.size());
  return "unmodelled:" + what;
}

std::string tensor_label(const TfliteModel& m, int32_t t) {
  const bool known = t >= 0 && static_cast<size_t>(t) < m.tensors.size();
  return known && !m.tensors[static_cast<size_t>(t)].name.empty()
             ? fmt::format("tensor {} ({})", t, m.tensors[static_cast<size_t>(t)].name)
             : fmt::format("tensor {}", t);
}

void compare_tensors(const TfliteModel& m, const ArenaBudget& b, const TflmCapture& c, PlanVsCapture& out) {
  std::map<int32_t, TensorComparison> rows;
  auto row = [&](int32_t t) -> TensorComparison& {
    TensorComparison& r = rows[t];
    r.tensor = t;
    if (t >= 0 && static_cast<size_t>(t) < m.tensors.size()) {
      r.name = m.tensors[static_cast<size_t>(t)].name;
      r.predicted_bytes = m.tensors[static_cast<size_t>(t)].bytes;
    }
    return r;
  };
  for (const HeadPlacement& p : b.head_plan) row(p.tensor).predicted_offset = p.offset;
  const uint64_t tail_start = c.arena_bytes > c.tail_bytes ? c.arena_bytes - c.tail_bytes : 0;
  for (const CapturedTensor& t : c.tensors) {
    TensorComparison& r = row(t.tensor);
    r.captured_bytes = t.bytes;
    if (t.offset >= tail_start) {
      // A variable tensor: the plan puts it in the tail too, without an offset.
      r.region = TensorRegion::tail;
      const bool variable = static_cast<size_t>(t.tensor) < m.tensors.size() &&
                            m.tensors[static_cast<size_t>(t.tensor)].is_variable;
      if (!variable)
        out.differences.push_back(fmt::format("{}: TFLite Micro keeps it in the tail ({} B), edgemem does not "
                                              "count it as a variable tensor",
                                              tensor_label(m, t.tensor), t.bytes));
      else if (r.predicted_bytes != t.bytes)
        out.differences.push_back(fmt::format("{}: variable of {} B in the tail, edgemem counts {} B",
                                              tensor_label(m, t.tensor), t.bytes, r.predicted_bytes));
      continue;
    }
    r.captured_offset = t.offset;
  }
  for (auto& [t, r] : rows) {
    if (r.region == TensorRegion::tail) {
      out.tensors.push_back(r);
      continue;
    }
    const std::string label = tensor_label(m, t);
    if (r.predicted_offset && !r.captured_offset)
      out.differences.push_back(fmt::format("{}: edgemem plans it at offset {}, TFLite Micro placed it outside the "
                                            "arena head",
                                            label, *r.predicted_offset));
    else if (!r.predicted_offset && r.captured_offset)
      out.differences.push_back(fmt::format("{}: TFLite Micro placed it at offset {} ({} B), edgemem does not plan it",
                                            label, *r.captured_offset, r.captured_bytes));
    else if (r.predicted_offset != r.captured_offset)
      out.differences.push_back(fmt::format("{}: placed at offset {}, edgemem plans offset {}", label,
                                            *r.captured_offset, *r.predicted_offset));
    else if (r.predicted_bytes != r.captured_bytes)
      out.differences.push_back(fmt::format("{}: {} B at offset {}, edgemem counts {} B", label, r.captured_bytes,
                                            *r.captured_offset, r.predicted_bytes));
    out.tensors.push_back(r);
  }
  // Variables the plan counts in the tail that the capture does not show there.
  for (size_t t = 0; t < m.tensors.size(); ++t)
    if (m.tensors[t].is_variable && !rows.contains(static_cast<int32_t>(t)))
      out.differences.push_back(fmt::format("{}: edgemem counts it as a variable in the tail, the capture does not "
                                            "place it in the arena",
                                            tensor_label(m, static_cast<int32_t>(t))));
}

void compare_tail(const ArenaBudget& b, const TflmCapture& c, PlanVsCapture& out) {
  std::vector<TailComparison> rows;
  auto row = [&](const std::string& kind) -> TailComparison& {
    for (TailComparison& r : rows)
      if (r.kind == kind) return r;
    rows.push_back({kind, "", 0, 0, {}});
    return rows.back();
  };
  for (const CapturedTailBlock& block : c.tail) {
    TailComparison& r = row(tail_kind(block.what));
    r.captured_bytes += block.charged;
    r.sites.push_back(fmt::format("{}:{}", block.what, block.index));
    if (r.what.empty()) r.what = block.what;
  }
  TailComparison& allocator = row("allocator");
  allocator.what = "allocator objects and subgraph table";
  allocator.predicted_bytes = b.allocator_bytes;
  for (const BudgetItem& item : b.tail) {
    TailComparison& r = row(item.kind);
    r.what = item.what;
    r.predicted_bytes += item.bytes;
  }
  for (const TailComparison& r : rows) {
    if (r.predicted_bytes == r.captured_bytes) continue;
    if (r.kind.starts_with("unmodelled:"))
      out.differences.push_back(fmt::format("tail: {} B for {} ({}), which edgemem does not model", r.captured_bytes,
                                            r.what, fmt::join(r.sites, ", ")));
    else if (r.captured_bytes == 0)
      out.differences.push_back(fmt::format("tail: edgemem counts {} B for {}, the capture shows none",
                                            r.predicted_bytes, r.what));
    else
      out.differences.push_back(fmt::format("tail: {} takes {} B, edgemem counts {} B", r.what, r.captured_bytes,
                                            r.predicted_bytes));
  }
  for (const CapturedTailBlock& block : c.tail_later)
    out.differences.push_back(fmt::format("tail: {} B allocated during an inference at {}:{}: edgemem models no "
                                          "persistent allocation after AllocateTensors()",
                                          block.bytes, block.what, block.index));
  out.tail = std::move(rows);
}

}  // namespace

PlanVsCapture compare_plan_with_capture(const TfliteModel& m, Target target, const TflmCapture& c) {
  const ArenaBudget b = arena_budget(m, target);
  PlanVsCapture out;
  out.target = target;
  out.arena_bytes = c.arena_bytes;
  out.predicted_head_bytes = b.head_bytes;
  out.captured_head_bytes = c.head_bytes;
  out.predicted_tail_bytes = b.allocator_bytes + b.tail_bytes;
  out.captured_tail_bytes = c.tail_bytes;
  if (out.predicted_head_bytes != out.captured_head_bytes)
    out.differences.push_back(fmt::format("head: TFLite Micro planned {} B, edgemem plans {} B", c.head_bytes,
                                          b.head_bytes));
  if (out.predicted_tail_bytes != out.captured_tail_bytes)
    out.differences.push_back(fmt::format("tail: TFLite Micro used {} B after AllocateTensors(), edgemem counts {} B",
                                          c.tail_bytes, out.predicted_tail_bytes));
  compare_tensors(m, b, c, out);
  compare_tail(b, c, out);
  return out;
}

}  // namespace edgemem::plan
