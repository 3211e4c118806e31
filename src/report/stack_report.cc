#include "report/stack_report.h"

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "report/style.h"
#include "report/units.h"

namespace edgemem {
namespace {

using units::bytes;

// The main stack's worst case: thread code plus every handler nested, each
// with its exception frame, when there are handlers (their priorities, set
// at run time, decide how deep they nest: one level only if none preempts
// another); unbounded when any root it counts is.
struct MainStack {
  uint64_t bytes = 0;
  std::vector<const StackRoot*> unbounded;
};

MainStack main_stack(const StackReport& r) {
  MainStack m;
  m.bytes = r.interrupts.handlers ? r.interrupts.all_nested_bytes : r.interrupts.thread_bytes;
  for (const auto& root : r.roots)
    if (root.unbounded) m.unbounded.push_back(&root);
  return m;
}

nlohmann::json optional_text(const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); }

}  // namespace

std::vector<StackVerdict> stack_verdicts(const StackReport& r) {
  const InterruptBudget& irq = r.interrupts;
  if (r.roots.empty())
    return {{true, "no call graph", "",
             r.source == "Clang" ? "frames only, no worst case (Clang writes no call graph: GCC's -fcallgraph-info=su does)"
                                 : "frames only, no worst case (add -fcallgraph-info=su)"}};
  MainStack m = main_stack(r);
  std::vector<StackVerdict> out;
  const InterruptBudget* weak = r.interrupts_if_weak ? &*r.interrupts_if_weak : nullptr;
  out.push_back({false, "main stack worst case", bytes(m.bytes),
                 (irq.handlers == 1 ? fmt::format(" (thread {} + its one handler and its {} exception frame)",
                                                  bytes(irq.thread_bytes), bytes(irq.frame_bytes))
                  : irq.handlers    ? fmt::format(" (thread {} + every handler nested, each with its {} exception frame; "
                                                  "{} if no handler preempts another)",
                                                  bytes(irq.thread_bytes), bytes(irq.frame_bytes),
                                                  bytes(irq.one_level_bytes))
                                    : "") +
                     (weak ? fmt::format("; {} were {} weak (note)",
                                         bytes(weak->handlers ? weak->all_nested_bytes : weak->thread_bytes),
                                         fmt::join(r.weak_or_static, ", "))
                           : "")});
  if (!m.unbounded.empty()) {
    // The worst first; a tree of library code without call graphs has
    // a thousand such roots, and the line names a few.
    std::vector<std::string> names;
    for (const auto* root : m.unbounded)
      if (names.size() < 5) names.push_back(root->function);
    if (m.unbounded.size() > names.size()) names.push_back(fmt::format("and {} more", m.unbounded.size() - names.size()));
    out.push_back({true, "UNBOUNDED", "",
                   fmt::format("{} {} no bound ({}); the number above counts known frames only", m.unbounded.size(),
                               m.unbounded.size() == 1 ? "root has" : "roots have", fmt::join(names, ", "))});
  }
  return out;
}

std::string stack_text(const StackReport& r, size_t top) {
  std::string out;
  const InterruptBudget& irq = r.interrupts;
  for (const StackVerdict& v : stack_verdicts(r)) {
    if (!v.warn) out += fmt::format("{}: {}{}\n", v.tag, style::strong(v.value), v.text);
    else if (v.tag == "UNBOUNDED") out += style::warn("  + " + v.tag + ": " + v.text) + "\n";  // under the number it qualifies
    else out += style::warn(v.tag + ": " + v.text) + "\n";
  }
  for (const std::string& note : r.notes) out += style::warn("note: " + note) + "\n";
  out += fmt::format("\nedgemem stack: {} function{} from {} {} file{}\n", r.functions.size(),
                     r.functions.size() == 1 ? "" : "s", r.files, r.source, r.files == 1 ? "" : "s");
  if (irq.handlers)
    out += fmt::format("main stack: thread {}; every handler nested, {} exception frames{}: {}; + the deepest handler "
                       "and its frame only (no handler preempts another): {}\n",
                       bytes(irq.thread_bytes), bytes(irq.frame_bytes),
                       irq.frame_bytes == kExceptionFrameBytes ? " (--fpu: 108 B)" : "", bytes(irq.all_nested_bytes),
                       bytes(irq.one_level_bytes));
  if (r.stated_max_bytes)
    out += fmt::format("Keil states: maximum stack usage {}{} via {}\n", bytes(*r.stated_max_bytes),
                       r.stated_unknown.empty() ? "" : " + unknown (" + r.stated_unknown + ")", fmt::join(r.stated_chain, " > "));
  // Roots that share a name (a weak default handler in startup.c, the
  // strong one in app.c) are told apart by their files.
  std::map<std::string_view, size_t> named;
  for (const auto& root : r.roots) ++named[root.function];
  std::vector<std::string> names;
  size_t width = 24;  // the name column, widened for longer names up to a point
  for (const auto& root : r.roots) {
    names.push_back(named[root.function] > 1 && !root.file.empty() ? fmt::format("{} ({})", root.function, root.file)
                                                                   : root.function);
    width = std::max(width, std::min<size_t>(names.back().size(), 48));
  }
  if (!r.roots.empty()) out += fmt::format("\n{:<{}} {:>10}  path\n", "root", width, "worst case");
  for (size_t i = 0; i < r.roots.size(); ++i) {
    const StackRoot& root = r.roots[i];
    out += fmt::format("{:<{}} {:>10}{}{}  {}\n", names[i], width, bytes(root.worst_case_bytes),
                       root.unbounded ? style::warn(" + unbounded") : "",
                       root.if_weak_bytes ? style::warn(fmt::format(" ({} if weak)", bytes(*root.if_weak_bytes))) : "",
                       fmt::join(root.path, " > "));
    for (const auto& why : root.reasons) out += fmt::format("{:<{}}{}\n", "", width + 13, why);  // under the path
  }
  out += "\nheaviest frames\n";
  for (size_t i = 0; i < r.functions.size() && i < top; ++i) {
    const auto& f = r.functions[i];
    out += fmt::format("{:>10}  {:<16} {}  ({})\n", bytes(f.frame_bytes), f.qualifier, f.name, f.file);
  }
  return out;
}

std::string stack_json(const StackReport& r) {
  nlohmann::json j;
  j["schema"] = "edgemem.stack/1";
  j["source"] = r.source;
  MainStack m = main_stack(r);
  j["worst_case"] = r.roots.empty() ? nlohmann::json(nullptr)
                                    : nlohmann::json{{"main_stack_bytes", m.bytes}, {"unbounded", !m.unbounded.empty()}};
  j["functions"] = nlohmann::json::array();
  for (const auto& f : r.functions)
    j["functions"].push_back(
        {{"name", f.name}, {"file", optional_text(f.file)}, {"frame_bytes", f.frame_bytes}, {"qualifier", f.qualifier}});
  j["roots"] = nlohmann::json::array();
  for (const auto& root : r.roots)
    j["roots"].push_back({{"function", root.function}, {"file", optional_text(root.file)},
                          {"worst_case_bytes", root.worst_case_bytes}, {"path", root.path},
                          {"unbounded", root.unbounded}, {"reasons", root.reasons}, {"interrupt", root.interrupt},
                          {"stated_bytes", root.stated_bytes ? nlohmann::json(*root.stated_bytes) : nlohmann::json(nullptr)},
                          {"if_weak_bytes", root.if_weak_bytes ? nlohmann::json(*root.if_weak_bytes) : nlohmann::json(nullptr)}});
  j["notes"] = r.notes;
  auto main_stack_json = [](const InterruptBudget& irq) {
    return nlohmann::json{{"thread_bytes", irq.thread_bytes}, {"one_level_bytes", irq.one_level_bytes},
                          {"all_nested_bytes", irq.all_nested_bytes}, {"exception_frame_bytes", irq.frame_bytes},
                          {"handlers", irq.handlers}};
  };
  j["main_stack"] = main_stack_json(r.interrupts);
  j["elf"] = optional_text(r.elf);
  j["not_linked"] = r.not_linked;
  j["weak_or_static"] = r.weak_or_static;
  j["main_stack_if_weak"] = r.interrupts_if_weak ? main_stack_json(*r.interrupts_if_weak) : nlohmann::json(nullptr);
  j["stated"] = r.stated_max_bytes ? nlohmann::json{{"max_bytes", *r.stated_max_bytes},
                                                    {"unknown", optional_text(r.stated_unknown)},
                                                    {"chain", r.stated_chain}}
                                   : nlohmann::json(nullptr);
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace edgemem
