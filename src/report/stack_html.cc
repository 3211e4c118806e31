// The stack page's data: the text report's verdicts as cards, the main-stack
// budget, each root's worst path with every frame and the running total, and
// the heaviest frames (web/pages/stack.js draws them).
#include "report/html_page.h"
#include "report/stack_report.h"

namespace edgemem {

using nlohmann::json;

json stack_page_data(const StackReport& r, size_t top) {
  json d = {{"source", r.source}, {"files", r.files}, {"function_count", r.functions.size()}};
  d["verdicts"] = json::array();
  for (const StackVerdict& v : stack_verdicts(r))
    d["verdicts"].push_back({{"tag", "[" + v.tag + "]"}, {"text", v.value + v.text}, {"more", json::array()}});
  const InterruptBudget& irq = r.interrupts;
  d["main_stack"] = {{"thread_bytes", irq.thread_bytes}, {"one_level_bytes", irq.one_level_bytes},
                     {"all_nested_bytes", irq.all_nested_bytes}, {"exception_frame_bytes", irq.frame_bytes},
                     {"handlers", irq.handlers}};
  d["roots"] = json::array();
  for (const StackRoot& root : r.roots) {
    json frames = json::array();
    uint64_t total = 0;
    for (size_t i = 0; i < root.path.size(); ++i) {
      uint64_t frame = i < root.path_frame_bytes.size() ? root.path_frame_bytes[i] : 0;
      total += frame;
      frames.push_back({{"function", root.path[i]}, {"frame_bytes", frame}, {"cumulative_bytes", total}});
    }
    d["roots"].push_back({{"function", root.function}, {"file", root.file}, {"worst_case_bytes", root.worst_case_bytes},
                          {"unbounded", root.unbounded}, {"reasons", root.reasons}, {"interrupt", root.interrupt},
                          {"stated_bytes", root.stated_bytes ? json(*root.stated_bytes) : json(nullptr)},
                          {"path", std::move(frames)}});
  }
  d["heaviest"] = json::array();
  for (size_t i = 0; i < r.functions.size() && i < top; ++i) {
    const StackFunction& f = r.functions[i];
    d["heaviest"].push_back({{"function", f.name}, {"file", f.file}, {"frame_bytes", f.frame_bytes}, {"qualifier", f.qualifier}});
  }
  d["stated"] = r.stated_max_bytes ? json{{"max_bytes", *r.stated_max_bytes}, {"unknown", r.stated_unknown},
                                          {"chain", r.stated_chain}}
                                   : json(nullptr);
  return d;
}

std::string stack_html(const StackReport& r, size_t top) { return html::page("stack", stack_page_data(r, top)); }

}  // namespace edgemem
