#include "report/plan_report.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "report/style.h"
#include "report/units.h"

namespace edgemem {
namespace {

using units::bytes;
using units::fraction;
using units::bytes_human;

std::string_view target_id(plan::Target t) { return t == plan::Target::x86_64 ? "x86-64" : "cortex-m"; }

// What kernel scratch adds to the head. Greedy placement with more buffers
// may happen to pack tighter, so the difference is not assumed positive.
uint64_t scratch_growth(const plan::ArenaBudget& b) {
  return b.head_bytes > b.tensor_bytes ? b.head_bytes - b.tensor_bytes : 0;
}

nlohmann::json items_json(const std::vector<plan::BudgetItem>& items) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& i : items) a.push_back({{"what", i.what}, {"bytes", i.bytes}, {"source", i.source}});
  return a;
}

std::string verdict(const plan::PlanReport& r) {
  const plan::ArenaBudget& b = r.budget;
  if (r.unrunnable())
    return style::bad(fmt::format("TFLite Micro cannot run this model: {}; no arena size is recommended",
                                  fmt::join(b.blockers, ", "))) + "\n";
  std::string out = fmt::format("recommended arena (kTensorArenaSize, {}): {}{}\n", target_id(b.target),
                                style::strong(bytes_human(b.recommended_bytes)),
                                b.complete ? "" : style::warn(" -- INCOMPLETE, see below"));
  if (!r.declared) return out;
  uint64_t d = *r.declared;
  if (r.declared_short())
    out += fmt::format("declared {}: {} -- AllocateTensors() is expected to fail\n", bytes_human(d),
                       style::bad("SHORT by " + bytes(b.recommended_bytes - d)));
  else if (r.declared_needs_alignment())
    out += fmt::format("declared {}: {} -- the recommendation adds {} for an array that is not\n", bytes_human(d),
                       style::warn("enough only if the array is 16-byte aligned (alignas(16))"),
                       bytes(b.alignment_bytes));
  else
    out += fmt::format("declared {}: {}, {} ({:.0f} %) can be reclaimed\n", bytes_human(d), style::good("enough"),
                       bytes(d - b.recommended_bytes), 100 * fraction(d - b.recommended_bytes, d));
  return out;
}

void budget_text(std::string& out, const plan::ArenaBudget& b) {
  uint64_t head_need = std::max({b.head_bytes, b.planning_bytes, b.prepare_bytes});
  out += fmt::format("\nwhat the recommended arena holds ({}, reference kernels)\n", target_id(b.target));
  if (!b.complete)
    out += style::warn(fmt::format("  INCOMPLETE: no cost model for {}; add their scratch (and, for subgraphs, their tensors)\n", fmt::join(b.unmodelled, ", ")));
  auto row = [&](std::string_view name, uint64_t n, std::string_view what) {
    out += fmt::format("  {:<11} {:>12}  {}\n", name, bytes(n), what);
  };
  row("head", b.head_bytes,
      fmt::format("tensors {} + {} more for kernel scratch planned beside them (TFLite Micro's greedy plan)",
                  bytes(b.tensor_bytes), bytes(scratch_growth(b))));
  for (const auto& s : b.scratch) out += fmt::format("  {:<11} {:>12}    {}\n", "", bytes(s.bytes), s.what);
  row("planning", b.planning_bytes,
      head_need == b.planning_bytes && b.planning_bytes > b.head_bytes
          ? "temporary, while AllocateTensors() plans: larger than the head (arena_used_bytes() will not show it)"
          : "temporary, while AllocateTensors() plans");
  row("tail", b.tail_bytes, "persistent");
  for (const auto& t : b.tail) out += fmt::format("  {:<11} {:>12}    {}\n", "", bytes(t.bytes), t.what);
  row("allocator", b.allocator_bytes, "MicroAllocator's own objects");
  row("alignment", b.alignment_bytes, "if the arena array is not 16-byte aligned");
  if (!b.runnable()) return;
  // The parts do not simply add up: AllocateTensors() peaks at one of three
  // moments, each beside only the tail made by then.
  const uint64_t final_state = b.allocator_bytes + b.tail_bytes + b.head_bytes;
  const uint64_t peak = std::max({final_state, b.planning_peak_bytes, b.prepare_peak_bytes});
  auto moment = [&](uint64_t n) { return n == peak ? fmt::format("{} (the largest)", bytes(n)) : bytes(n); };
  row("size", b.recommended_bytes,
      fmt::format("the largest of AllocateTensors()' three moments + alignment: final plan (head + tail + "
                  "allocator) {}, planning {}, a kernel's Prepare {} (each beside the tail made by then)",
                  moment(final_state), moment(b.planning_peak_bytes), moment(b.prepare_peak_bytes)));
}

}  // namespace

std::string plan_text(const plan::PlanReport& r) {
  std::string out = verdict(r);
  out += fmt::format("\nedgemem plan: {} ({} operators, {} planned tensors, {} of constants)\n\n", r.model, r.operators,
                     r.tensors.size(), bytes(r.constant_bytes));
  out += fmt::format("  {:<36} {:>14}\n", fmt::format("tensors, edgemem ({})", r.planner), bytes(r.arena_bytes));
  out += fmt::format("  {:<36} {:>14}{}\n", "tensors, TFLite Micro greedy", bytes(r.tflm_greedy_bytes),
                     r.tflm_greedy_bytes > r.arena_bytes ? fmt::format("  ({} more)", bytes(r.tflm_greedy_bytes - r.arena_bytes))
                                                         : std::string());
  // An offline plan (Vela's) fixes its tensors' offsets, sharing bytes on
  // purpose: the bound is its extent or the online tensors' live peak.
  out += fmt::format("  {:<36} {:>14}{}\n",
                     r.offline_plan ? "lower bound (offline plan)" : "lower bound (peak of live tensors)",
                     bytes(r.lower_bound_bytes),
                     r.arena_bytes == r.lower_bound_bytes ? "  (edgemem's plan is optimal)" : "");
  if (r.reorder) {
    const plan::PlanReorder& o = *r.reorder;
    uint64_t gain = o.original_lower_bound_bytes - o.lower_bound_bytes;
    if (gain == 0)
      out += fmt::format("reorder: the model's operator order already has the lowest peak{}\n",
                         o.exhaustive ? "" : " that a greedy search finds");
    else
      out += fmt::format("reorder: {} operator order lowers the bound {} -> {} ({} less); arena {}\n         order {}\n",
                         o.exhaustive ? "the best" : "a greedy", bytes(o.original_lower_bound_bytes),
                         bytes(o.lower_bound_bytes), bytes(gain), bytes(o.arena_bytes), fmt::join(o.order, ","));
  }
  if (!r.unrunnable()) budget_text(out, r.budget);
  out += fmt::format("\npeak {}: {} live in {} tensors\n",
                     r.peak_op >= 0 ? fmt::format("at op {}", r.peak_op) : std::string("before the first operator"),
                     bytes(r.peak_live_bytes), r.peak_tensors.size());
  out += fmt::format("\n{:>5}  {:>12}  {:>5}..{:<5} {:>12}  {}\n", "id", "size", "first", "last", "offset", "name");
  for (const auto& t : r.tensors)
    out += fmt::format("{:>5}  {:>12}  {:>5}..{:<5} {:>12}  {}\n", t.id, bytes(t.bytes), t.first_op, t.last_op,
                       units::grouped(t.offset), t.name);
  return out;
}

std::string plan_json(const plan::PlanReport& r) {
  const plan::ArenaBudget& b = r.budget;
  nlohmann::json j;
  j["schema"] = "edgemem.plan/1";
  j["model"] = r.model;
  j["operators"] = r.operators;
  j["constant_bytes"] = r.constant_bytes;
  j["tensors"] = nlohmann::json::array();
  for (const auto& t : r.tensors)
    j["tensors"].push_back({{"id", t.id}, {"name", t.name.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.name)}, {"bytes", t.bytes},
                            {"aligned_bytes", t.aligned_bytes}, {"first_op", t.first_op},
                            {"last_op", t.last_op}, {"offset", t.offset}, {"tflm_offset", t.tflm_offset}});
  j["arena_bytes"] = r.arena_bytes;
  j["planner"] = r.planner;
  j["tflm_greedy_bytes"] = r.tflm_greedy_bytes;
  j["lower_bound_bytes"] = r.lower_bound_bytes;
  j["offline_plan"] = r.offline_plan;
  j["recommended_arena_bytes"] = r.unrunnable() ? nlohmann::json(nullptr) : nlohmann::json(b.recommended_bytes);
  j["arena_budget"] = {{"target", target_id(b.target)},
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
  j["declared_arena_bytes"] = r.declared ? nlohmann::json(*r.declared) : nlohmann::json(nullptr);
  j["declared_short_bytes"] =
      r.declared ? nlohmann::json(r.declared_short() ? b.recommended_bytes - *r.declared : 0) : nlohmann::json(nullptr);
  j["verdict"] = r.unrunnable()                 ? "tflm_cannot_run"
                 : !r.declared                  ? "no_declared_arena"
                 : r.declared_short()           ? "declared_short"
                 : r.declared_needs_alignment() ? "declared_enough_if_aligned"
                                                : "declared_enough";
  j["timeline"] = nlohmann::json::array();
  for (size_t op = 0; op < r.live_bytes.size(); ++op)
    j["timeline"].push_back({{"op", op}, {"live_bytes", r.live_bytes[op]}});
  j["peak"] = {{"op", r.peak_op >= 0 ? nlohmann::json(r.peak_op) : nlohmann::json(nullptr)},
               {"live_bytes", r.peak_live_bytes}};
  j["peak_tensors"] = r.peak_tensors;
  if (r.reorder) {
    const plan::PlanReorder& o = *r.reorder;
    j["reorder"] = {{"order", o.order},
                    {"exhaustive", o.exhaustive},
                    {"lower_bound_bytes", o.lower_bound_bytes},
                    {"original_lower_bound_bytes", o.original_lower_bound_bytes},
                    {"gain_bytes", o.original_lower_bound_bytes - o.lower_bound_bytes},
                    {"arena_bytes", o.arena_bytes}};
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace edgemem
