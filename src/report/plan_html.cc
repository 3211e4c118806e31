// The plan page's data: the edgemem.plan/1 document, the text report's
// verdict lines, and what the JSON leaves out that the page draws: operator
// names, the peak, and the recommended arena as parts that add up to it
// (web/pages/plan.js draws them).
#include <algorithm>

#include <nlohmann/json.hpp>

#include "report/html_page.h"
#include "report/plan_report.h"
#include "report/style.h"

namespace edgemem {
namespace {

using nlohmann::json;

// The recommended arena as the final plan's parts (head, tail, allocator),
// what AllocateTensors() needs above that for a moment, and the alignment
// slack: arena_budget() recommends alignment + max(final plan, planning
// peak, prepare peak), so the parts sum to the recommendation exactly.
json arena_parts(const plan::ArenaBudget& b) {
  json parts = json::array();
  auto part = [&](std::string_view kind, std::string_view what, uint64_t bytes) {
    if (bytes) parts.push_back({{"part", kind}, {"what", what}, {"bytes", bytes}});
  };
  // A greedy plan of more buffers may pack tighter, so the tensors alone are capped at the head.
  uint64_t tensors = std::min(b.tensor_bytes, b.head_bytes);
  part("tensors", "tensors (TFLite Micro's greedy plan)", tensors);
  part("scratch", "kernel scratch", b.head_bytes - tensors);
  for (const plan::BudgetItem& t : b.tail) part("tail", t.what, t.bytes);
  part("allocator", "MicroAllocator's own objects", b.allocator_bytes);
  const uint64_t final_state = b.head_bytes + b.tail_bytes + b.allocator_bytes;
  const uint64_t peak = std::max(b.planning_peak_bytes, b.prepare_peak_bytes);
  if (peak > final_state)
    part("temporary",
         b.planning_peak_bytes >= b.prepare_peak_bytes
             ? "temporary, while AllocateTensors() plans (arena_used_bytes() does not show it)"
             : "temporary, while a kernel prepares (arena_used_bytes() does not show it)",
         peak - final_state);
  part("alignment", "if the arena array is not 16-byte aligned", b.alignment_bytes);
  return parts;
}

}  // namespace

std::string plan_html(const plan::PlanReport& r) {
  std::string text;
  {
    style::Plain plain;  // the page takes the text report's words, not its terminal colours
    text = plan_text(r);
  }
  json peak = {{"op", r.peak_op >= 0 ? json(r.peak_op) : json(nullptr)}, {"live_bytes", r.peak_live_bytes}, {"tensors", r.peak_tensors}};
  return html::page("plan", {{"plan", json::parse(plan_json(r))},
                             {"verdict", html::verdict_lines(text)},
                             {"operator_names", r.operator_names},
                             {"peak", peak},
                             {"arena_parts", r.unrunnable() ? json::array() : arena_parts(r.budget)}});
}

}  // namespace edgemem
