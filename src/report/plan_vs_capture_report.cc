#include "report/plan_vs_capture_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/style.h"
#include "report/units.h"

namespace edgemem {
namespace {

using units::bytes;

std::string_view target_id(plan::Target t) { return t == plan::Target::x86_64 ? "x86-64" : "cortex-m"; }

std::string optional_offset(const std::optional<uint64_t>& offset) {
  return offset ? units::grouped(*offset) : std::string("-");
}

nlohmann::json optional_json(const std::optional<uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

}  // namespace

std::string plan_vs_capture_text(const plan::PlanVsCapture& c, const std::string& model_path) {
  std::string out = fmt::format("\npredicted vs measured: edgemem's plan of {} ({}) beside the capture\n", model_path,
                                target_id(c.target));
  auto total = [&](std::string_view name, uint64_t predicted, uint64_t captured) {
    out += fmt::format("  {:<5} edgemem {:>12}  TFLite Micro {:>12}  {}\n", name, bytes(predicted), bytes(captured),
                       predicted == captured ? style::good("same") : style::bad(units::signed_bytes(
                                                                          static_cast<int64_t>(predicted) -
                                                                          static_cast<int64_t>(captured))));
  };
  total("head", c.predicted_head_bytes, c.captured_head_bytes);
  total("tail", c.predicted_tail_bytes, c.captured_tail_bytes);
  out += "  tail by structure (edgemem / TFLite Micro):\n";
  for (const plan::TailComparison& t : c.tail)
    out += fmt::format("    {:<58} {:>10} {:>10}{}\n", t.what, bytes(t.predicted_bytes), bytes(t.captured_bytes),
                       t.predicted_bytes == t.captured_bytes ? "" : style::bad("  differs"));
  size_t same = 0, head = 0;
  for (const plan::TensorComparison& t : c.tensors) {
    if (t.region != plan::TensorRegion::head) continue;
    ++head;
    same += t.matches();
  }
  out += fmt::format("  tensors in the head: {} of {} at the offset edgemem plans\n", same, head);
  for (const plan::TensorComparison& t : c.tensors)
    if (t.region == plan::TensorRegion::head && !t.matches())
      out += fmt::format("    tensor {:<4} edgemem offset {:>10} ({}), TFLite Micro {:>10} ({})\n", t.tensor,
                         optional_offset(t.predicted_offset), bytes(t.predicted_bytes),
                         optional_offset(t.captured_offset), bytes(t.captured_bytes));
  if (c.matches()) {
    out += style::good("  the plan matches the capture: every tensor offset, the head and the tail") + "\n";
    return out;
  }
  out += style::bad(fmt::format("  {} difference{}:", c.differences.size(), c.differences.size() == 1 ? "" : "s")) +
         "\n";
  for (const std::string& d : c.differences) out += "    " + d + "\n";
  return out;
}

nlohmann::json plan_vs_capture_json(const plan::PlanVsCapture& c, const std::string& model_path) {
  nlohmann::json tensors = nlohmann::json::array();
  for (const plan::TensorComparison& t : c.tensors)
    tensors.push_back({{"id", t.tensor},
                       {"name", t.name},
                       {"region", t.region == plan::TensorRegion::head ? "head" : "tail"},
                       {"predicted_offset", optional_json(t.predicted_offset)},
                       {"captured_offset", optional_json(t.captured_offset)},
                       {"predicted_bytes", t.predicted_bytes},
                       {"captured_bytes", t.captured_bytes},
                       {"matches", t.matches()}});
  nlohmann::json tail = nlohmann::json::array();
  for (const plan::TailComparison& t : c.tail)
    tail.push_back({{"kind", t.kind},
                    {"what", t.what},
                    {"predicted_bytes", t.predicted_bytes},
                    {"captured_bytes", t.captured_bytes},
                    {"sites", t.sites}});
  return {{"model", model_path},
          {"target", target_id(c.target)},
          {"arena_bytes", c.arena_bytes},
          {"head", {{"predicted_bytes", c.predicted_head_bytes}, {"captured_bytes", c.captured_head_bytes}}},
          {"tail",
           {{"predicted_bytes", c.predicted_tail_bytes}, {"captured_bytes", c.captured_tail_bytes}, {"items", tail}}},
          {"tensors", tensors},
          {"differences", c.differences},
          {"matches", c.matches()}};
}

std::string analyze_json_with_capture(const InputSummary& input, const AnalysisResult& result,
                                      const plan::PlanVsCapture& c, const std::string& model_path) {
  nlohmann::json doc = to_json(input, result);
  doc["plan_vs_capture"] = plan_vs_capture_json(c, model_path);
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace edgemem
