#include "report/budget.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

namespace edgemem {
namespace {

using nlohmann::json;

struct BudgetError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

uint64_t number(const json& limits, const char* key, const std::string& rule) {
  const json& v = limits.at(key);
  if (!v.is_number() || v.get<double>() < 0) throw BudgetError(fmt::format("{}.{}: expected a number >= 0", rule, key));
  return v.get<uint64_t>();
}

void only_keys(const json& object, const std::string& rule, std::initializer_list<const char*> allowed) {
  if (!object.is_object()) throw BudgetError(fmt::format("{}: expected an object", rule.empty() ? "budget" : rule));
  for (const auto& [key, value] : object.items()) {
    bool known = false;
    for (const char* a : allowed) known |= key == a;
    if (!known) {
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      throw BudgetError(fmt::format("{}{}{}: unknown key (expected {})", rule, rule.empty() ? "" : ".", key, list));
    }
  }
}

template <typename T>
const T& need(const T* input, const std::string& rule, const char* what) {
  if (!input) throw BudgetError(fmt::format("{}: needs {}", rule, what));
  return *input;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The main stack the image reserves: a stack section (.stack, armlink's
// STACK) or the largest symbol named like a stack (Stack_Mem, IAR's CSTACK).
std::optional<std::pair<std::string, uint64_t>> reserved_stack(const LinkerMap& map) {
  for (const MapSection& s : map.sections)
    if (s.kind == SectionKind::bss && lower(s.name).find("stack") != std::string::npos &&
        lower(s.name).find("heap") == std::string::npos && s.size)
      return std::make_pair(s.name, s.size);
  const MapSymbol* best = nullptr;
  for (const MapSymbol& s : map.symbols)
    if (symbol_role(s, section_kind(map, s.section)) == "stack" && (!best || s.size > best->size)) best = &s;
  if (best && best->size) return std::make_pair(best->name, best->size);
  return std::nullopt;
}

class Evaluator {
 public:
  explicit Evaluator(const BudgetInputs& in) : in_(in) {}
  std::vector<BudgetOutcome> out;

  void add(std::string rule, bool ok, std::string message) { out.push_back({std::move(rule), ok, std::move(message)}); }

  // A root whose stack has no bound breaks the budget, naming why.
  void require_bounded(const StackRoot& r) {
    if (!r.unbounded) return;
    std::string why;
    for (const auto& reason : r.reasons) why += (why.empty() ? "" : "; ") + reason;
    add("stack.allow_unbounded", false, fmt::format("{} is unbounded: {}", r.function, why));
  }

  void regions(const json& b) {
    const LinkerMap& map = need(in_.map, "regions", "a linker map (inputs.map or --map)");
    for (const auto& item : b.items()) {  // no structured binding: lambdas below capture the name
      const std::string name = item.key();
      const json& limits = item.value();
      std::string rule = "regions." + name;
      only_keys(limits, rule, {"max_bytes", "max_percent", "min_free_bytes"});
      auto it = std::find_if(map.regions.begin(), map.regions.end(), [&](const MapRegion& r) { return r.name == name; });
      if (it == map.regions.end()) {
        std::string have;
        for (const auto& r : map.regions) have += (have.empty() ? "" : ", ") + r.name;
        throw BudgetError(fmt::format("{}: the map has no such region (it has {})", rule, have));
      }
      uint64_t used = it->used, free = it->length > used ? it->length - used : 0;
      double pct = it->length ? 100.0 * static_cast<double>(used) / static_cast<double>(it->length) : 0;
      if (limits.contains("max_bytes")) {
        uint64_t max = number(limits, "max_bytes", rule);
        add(rule + ".max_bytes", used <= max, fmt::format("{} uses {} B, limit {} B", name, used, max));
      }
      if (limits.contains("max_percent")) {
        uint64_t max = number(limits, "max_percent", rule);
        add(rule + ".max_percent", pct <= static_cast<double>(max),
            fmt::format("{} uses {:.1f} % ({} of {} B), limit {} %", name, pct, used, it->length, max));
      }
      if (limits.contains("min_free_bytes")) {
        uint64_t min = number(limits, "min_free_bytes", rule);
        add(rule + ".min_free_bytes", free >= min, fmt::format("{} has {} B free, at least {} B wanted", name, free, min));
      }
    }
  }

  void sized(const json& b, const char* kind) {
    const LinkerMap& map = need(in_.map, kind, "a linker map (inputs.map or --map)");
    for (const auto& [name, limits] : b.items()) {
      std::string rule = std::string(kind) + "." + name;
      only_keys(limits, rule, {"max_bytes"});
      uint64_t size = 0;
      bool found = false;
      if (std::string(kind) == "sections") {
        for (const MapSection& s : map.sections)
          if (s.name == name) size += s.size, found = true;
      } else {
        for (const MapSymbol& s : map.symbols)
          if (s.name == name) size = std::max(size, s.size), found = true;
      }
      if (!found) throw BudgetError(fmt::format("{}: not in the map", rule));
      uint64_t max = number(limits, "max_bytes", rule);
      add(rule + ".max_bytes", size <= max, fmt::format("{} is {} B, limit {} B", name, size, max));
    }
  }

  void stack(const json& b) {
    only_keys(b, "stack", {"main_stack_bytes", "nesting", "roots", "allow_unbounded"});
    const StackReport& st = need(in_.stack, "stack", "stack input (inputs.stack or --stack)");
    bool allow_unbounded = b.value("allow_unbounded", false);
    if (b.contains("main_stack_bytes")) {
      uint64_t configured = 0;
      std::string where;
      if (b["main_stack_bytes"] == "map") {
        auto reserved = reserved_stack(need(in_.map, "stack.main_stack_bytes", "a linker map to read the stack size from"));
        if (!reserved) throw BudgetError("stack.main_stack_bytes: the map reserves no stack section or symbol");
        configured = reserved->second;
        where = fmt::format(" ({} in the map)", reserved->first);
      } else {
        configured = number(b, "main_stack_bytes", "stack");
      }
      std::string nesting = b.value("nesting", "one_level");
      const InterruptBudget& irq = st.interrupts;
      uint64_t need_bytes = nesting == "all" ? irq.all_nested_bytes : nesting == "none" ? irq.thread_bytes : irq.one_level_bytes;
      if (nesting != "all" && nesting != "none" && nesting != "one_level")
        throw BudgetError("stack.nesting: expected one_level, all or none");
      if (irq.handlers == 0) need_bytes = irq.thread_bytes;
      add("stack.main_stack_bytes", need_bytes <= configured,
          fmt::format("main stack needs {} B (thread {} B{}), configured {} B{}", need_bytes, irq.thread_bytes,
                      irq.handlers && nesting != "none"
                          ? fmt::format(" + interrupts, {}", nesting == "all" ? "all nested" : "one level")
                          : "",
                      configured, where));
      for (const StackRoot& r : st.roots)
        if (!r.interrupt && r.worst_case_bytes == irq.thread_bytes) {
          if (!allow_unbounded) require_bounded(r);
          break;
        }
    }
  }

  void roots(const json& b) {
    const StackReport& st = need(in_.stack, "stack.roots", "stack input (inputs.stack or --stack)");
    bool allow_unbounded = b.value("allow_unbounded", false);
    for (const auto& item : b["roots"].items()) {
      const std::string name = item.key();
      const json& limit = item.value();
      std::string rule = "stack.roots." + name;
      if (!limit.is_number()) throw BudgetError(rule + ": expected the root's stack size in bytes");
      auto it = std::find_if(st.roots.begin(), st.roots.end(), [&](const StackRoot& r) { return r.function == name; });
      if (it == st.roots.end()) throw BudgetError(rule + ": no such root in the stack analysis");
      uint64_t max = limit.get<uint64_t>();
      add(rule, it->worst_case_bytes <= max,
          fmt::format("{} needs {} B{}, configured {} B", name, it->worst_case_bytes, it->unbounded ? " + unbounded" : "", max));
      if (!allow_unbounded) require_bounded(*it);
    }
  }

  void arena(const json& b) {
    only_keys(b, "arena", {"min_margin_bytes", "min_margin_percent"});
    uint64_t min_bytes = b.contains("min_margin_bytes") ? number(b, "min_margin_bytes", "arena") : 0;
    uint64_t min_pct = b.contains("min_margin_percent") ? number(b, "min_margin_percent", "arena") : 0;
    bool checked = false;
    auto judge = [&](const std::string& what, uint64_t size, uint64_t used, const std::string& basis) {
      int64_t margin = static_cast<int64_t>(size) - static_cast<int64_t>(used);
      double pct = size ? 100.0 * static_cast<double>(margin) / static_cast<double>(size) : 0;
      bool ok = margin >= static_cast<int64_t>(min_bytes) && pct >= static_cast<double>(min_pct);
      add("arena." + what, ok,
          fmt::format("{}: {} B of {} B {} leaves {} B ({:.1f} %), at least {} B and {} % wanted", what, used, size,
                      basis, margin, pct, min_bytes, min_pct));
      checked = true;
    };
    if (in_.arena && in_.map) {
      const MapSymbol* declared = nullptr;
      for (const MapSymbol& s : in_.map->symbols)
        if (symbol_role(s, section_kind(*in_.map, s.section)) == "tensor arena" && (!declared || s.size > declared->size))
          declared = &s;
      if (declared) judge(declared->name, declared->size, in_.arena->recommended_bytes, "needed (model)");
    }
    if (in_.trace)
      for (const PoolSummary& p : in_.trace->pools)
        if (p.size) judge(p.name, p.size, p.peak_bytes, "at peak (trace)");
    if (!checked)
      throw BudgetError("arena: needs a model with a map that declares the arena, or a trace with sized pools");
  }

  void leak(const json& b) {
    only_keys(b, "leak", {"max_bytes_per_inference", "max_leaked_bytes"});
    const AnalysisResult& t = need(in_.trace, "leak", "a trace (inputs.trace or --trace)");
    if (b.contains("max_bytes_per_inference")) {
      uint64_t max = number(b, "max_bytes_per_inference", "leak");
      add("leak.max_bytes_per_inference", t.leak_rate_bytes_per_inference <= static_cast<double>(max),
          fmt::format("leaks {:.1f} B per inference over {} inferences, limit {} B", t.leak_rate_bytes_per_inference,
                      t.inferences, max));
    }
    if (b.contains("max_leaked_bytes")) {
      uint64_t max = number(b, "max_leaked_bytes", "leak"), total = 0;
      for (const auto& l : t.leaks) total += l.bytes;
      add("leak.max_leaked_bytes", total <= max,
          fmt::format("{} B leaked at {} site(s){}, limit {} B", total, t.leaks.size(),
                      t.leaks.empty() ? "" : " (first " + t.leaks.front().site + ")", max));
    }
  }

  void fragmentation(const json& b) {
    only_keys(b, "fragmentation", {"max_band", "max_alloc_failures"});
    const AnalysisResult& t = need(in_.trace, "fragmentation", "a trace (inputs.trace or --trace)");
    if (b.contains("max_band")) {
      auto max = b["max_band"].is_string() ? parse_band(b["max_band"].get<std::string>()) : std::nullopt;
      if (!max) throw BudgetError("fragmentation.max_band: expected healthy, warning or danger");
      const FragmentationResult& f = t.fragmentation;
      // A band that could not be measured cannot be shown to hold.
      if (!f.band)
        throw BudgetError("fragmentation.max_band: the trace declares no pool extent (POOL name= base= size=, or "
                          "--arena-size for an arena), so fragmentation was not measured");
      auto rate = [](const std::optional<double>& r) { return r ? fmt::format("{:.0f} %", *r * 100) : "not measured"; };
      add("fragmentation.max_band", *f.band <= *max,
          fmt::format("fragmentation is {} (max {}, final {}, {} failed allocation(s)), limit {}", to_string(*f.band),
                      rate(f.max_rate), rate(f.final_rate), f.alloc_failures, to_string(*max)));
    }
    if (b.contains("max_alloc_failures")) {
      uint64_t max = number(b, "max_alloc_failures", "fragmentation");
      add("fragmentation.max_alloc_failures", t.fragmentation.alloc_failures <= max,
          fmt::format("{} failed allocation(s), limit {}", t.fragmentation.alloc_failures, max));
    }
  }

 private:
  const BudgetInputs& in_;
};

}  // namespace

std::vector<BudgetOutcome> evaluate_budget(const json& budget, const BudgetInputs& in, std::string& error) {
  try {
    only_keys(budget, "", {"schema", "inputs", "regions", "sections", "symbols", "stack", "arena", "leak", "fragmentation"});
    if (budget.contains("schema") && budget["schema"] != "edgemem.budget/1")
      throw BudgetError("schema: expected \"edgemem.budget/1\"");
    Evaluator e(in);
    if (budget.contains("regions")) e.regions(budget["regions"]);
    if (budget.contains("sections")) e.sized(budget["sections"], "sections");
    if (budget.contains("symbols")) e.sized(budget["symbols"], "symbols");
    if (budget.contains("stack")) {
      e.stack(budget["stack"]);
      if (budget["stack"].contains("roots")) {
        if (!budget["stack"]["roots"].is_object()) throw BudgetError("stack.roots: expected an object of root: bytes");
        e.roots(budget["stack"]);
      }
    }
    if (budget.contains("arena")) e.arena(budget["arena"]);
    if (budget.contains("leak")) e.leak(budget["leak"]);
    if (budget.contains("fragmentation")) e.fragmentation(budget["fragmentation"]);
    if (e.out.empty()) throw BudgetError("the budget sets no limit");
    // One line per broken budget: drop repeats (an unbounded root named twice).
    std::set<std::string> seen;
    std::vector<BudgetOutcome> out;
    for (auto& o : e.out)
      if (seen.insert(o.rule + o.message).second) out.push_back(std::move(o));
    return out;
  } catch (const BudgetError& x) {
    error = x.what();
  } catch (const json::exception& x) {
    error = fmt::format("budget: {}", x.what());
  }
  return {};
}

}  // namespace edgemem
