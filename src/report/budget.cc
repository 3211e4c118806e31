#include "report/budget.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "plan/fit.h"
#include "report/names.h"
#include "report/units.h"

namespace edgemem {
namespace {

using nlohmann::json;

struct BudgetError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A symbol the map gives only an upper bound for cannot be judged against
// a limit it exceeds; the ELF's symbol table has its size.
std::string only_bounded(const std::string& rule, const std::string& name, uint64_t bound) {
  return fmt::format("{}: the map gives {} as at most {}: ld lists where it starts, not where it ends (an LTO build, "
                     "no -ffunction-sections/-fdata-sections, or a section of its own that may hold more); check "
                     "with --elf FW.elf instead of --map",
                     rule, name, units::bytes(bound));
}

// A key of a given JSON type, or its default when absent; the library's own
// type error named no key.
bool flag(const json& b, const char* key, const std::string& rule) {
  if (!b.contains(key)) return false;
  if (!b[key].is_boolean()) throw BudgetError(fmt::format("{}.{}: expected true or false", rule, key));
  return b[key].get<bool>();
}

std::string word(const json& b, const char* key, const std::string& rule, const char* otherwise) {
  if (!b.contains(key)) return otherwise;
  if (!b[key].is_string()) throw BudgetError(fmt::format("{}.{}: expected a string", rule, key));
  return b[key].get<std::string>();
}

// A limit that may have a fraction: a percent, a rate.
double real(const json& limits, const char* key, const std::string& rule) {
  const json& v = limits.at(key);
  if (!v.is_number() || v.get<double>() < 0) throw BudgetError(fmt::format("{}.{}: expected a number >= 0", rule, key));
  return v.get<double>();
}

// A percent limit as the fraction the JSON gives: the double nearest its
// decimal (94.7 % is 0.947, where 94.7 / 100 wrote 0.9470000000000001).
double fraction_of_percent(double percent) {
  const std::string shown = fmt::format("{:.15g}", percent / 100);
  double read = 0;
  std::from_chars(shown.data(), shown.data() + shown.size(), read);
  return read;
}

// A measured value beside its limit, with one decimal or as many more as
// it takes to show it on the limit's same side (6.96 against 7 is not
// "7.0"; a leak of 0.04 B against 0 is not "0.0").
std::string beside(double value, double limit) {
  // The text is what is judged: fmt rounds exactly (ties to even), and
  // from_chars reads it back without the C locale.
  auto side = [limit](double v) { return (v > limit) - (v < limit); };
  for (int digits = 1; digits <= 6; ++digits) {
    std::string shown = fmt::format("{:.{}f}", value, digits);
    double read = 0;
    std::from_chars(shown.data(), shown.data() + shown.size(), read);
    if (side(read) == side(value)) return units::group_digits(shown);
  }
  return units::group_digits(fmt::format("{}", value));
}

// A count or a byte limit: a whole number, never silently rounded.
uint64_t number(const json& limits, const char* key, const std::string& rule) {
  double v = real(limits, key, rule);
  if (v != static_cast<double>(static_cast<uint64_t>(v)))
    throw BudgetError(fmt::format("{}.{}: expected a whole number, got {}", rule, key, v));
  return static_cast<uint64_t>(v);
}

// A byte limit: a number, or a size as the command line takes it ("64K").
uint64_t size(const json& limits, const char* key, const std::string& rule) {
  const json& v = limits.at(key);
  if (!v.is_string()) return number(limits, key, rule);
  std::string error;
  auto n = units::parse_size(v.get<std::string>(), error);
  if (!n) throw BudgetError(fmt::format("{}.{}: {}", rule, key, error));
  return *n;
}

// Keys match in any case (renamed here to their spelling); an unknown key is
// an error naming the nearest known one.
void only_keys(json& object, const std::string& rule, std::initializer_list<const char*> allowed) {
  if (!object.is_object()) throw BudgetError(fmt::format("{}: expected an object", rule.empty() ? "budget" : rule));
  std::vector<std::string> known(allowed.begin(), allowed.end());
  std::vector<std::string> keys;
  for (const auto& item : object.items()) keys.push_back(item.key());
  for (const auto& key : keys) {
    auto canonical = names::match(key, known);
    if (!canonical)
      throw BudgetError(fmt::format("{}{}{}", rule, rule.empty() ? "" : ": ", names::unknown("key", key, known)));
    if (*canonical != key) {
      object[*canonical] = std::move(object[key]);
      object.erase(key);
    }
  }
}

template <typename T>
const T& need(const T* input, const std::string& rule, const char* what) {
  if (!input) throw BudgetError(fmt::format("{}: needs {}", rule, what));
  return *input;
}

class Evaluator {
 public:
  explicit Evaluator(const BudgetInputs& in) : in_(in) {}
  std::vector<BudgetOutcome> out;

  void add(std::string rule, bool ok, std::string message, BudgetUnit unit, json measured, json limit) {
    out.push_back({std::move(rule), ok, std::move(message), unit, std::move(measured), std::move(limit), std::nullopt});
  }

  // A stack need beside the roots it could not bound: the JSON's `measured`
  // leaves them out, and "+ unbounded" in the message alone was missed.
  void add_stack(std::string rule, bool ok, std::string message, uint64_t need, uint64_t limit,
                 const std::vector<const StackRoot*>& unbounded) {
    add(std::move(rule), ok, std::move(message), BudgetUnit::bytes, need, limit);
    std::vector<std::string>& why = out.back().unbounded.emplace();
    for (const StackRoot* r : unbounded) why.push_back(fmt::format("{}: {}", r->function, fmt::join(r->reasons, "; ")));
  }

  // A root whose stack has no bound breaks the budget, naming why.
  void require_bounded(const StackRoot& r) {
    if (!r.unbounded) return;
    std::string why;
    for (const auto& reason : r.reasons) why += (why.empty() ? "" : "; ") + reason;
    add("stack.allow_unbounded", false, fmt::format("{} is unbounded: {}", r.function, why), BudgetUnit::bytes,
        r.worst_case_bytes, nullptr);
  }

  // Frames without a call graph (.su files alone) give no worst case: its
  // "0 B" once passed any limit.
  static void require_call_graph(const StackReport& st, const std::string& rule) {
    if (st.roots.empty())
      throw BudgetError(fmt::format("{}: the stack input holds frames only, no call graph, so no worst case ({})", rule,
                                    st.source == "Clang" ? "Clang writes none: build with GCC's -fcallgraph-info=su"
                                                         : "build with -fcallgraph-info=su beside -fstack-usage"));
  }

  void regions(json& b) {
    const LinkerMap& map = need(in_.map, "regions", "a linker map (inputs.map or --map)");
    for (auto item : b.items()) {  // no structured binding: lambdas below capture the name
      std::vector<std::string> have;
      for (const auto& r : map.regions) have.push_back(r.name);
      auto matched = names::match(item.key(), have);
      if (map.regions.empty())
        throw BudgetError(map.toolchain == "ELF"
                              ? fmt::format("regions.{}: an ELF names no memory regions (they are the linker "
                                            "script's); give the linker map: --map FW.map", item.key())
                              : fmt::format("regions.{}: the map names no memory regions (its linker script has no "
                                            "MEMORY block)", item.key()));
      if (!matched) throw BudgetError(fmt::format("regions: {} in the map", names::unknown("region", item.key(), have)));
      const std::string name = *matched;  // the map's spelling
      json& limits = item.value();
      std::string rule = "regions." + name;
      only_keys(limits, rule, {"max_bytes", "max_percent", "min_free_bytes"});
      auto it = std::find_if(map.regions.begin(), map.regions.end(), [&](const MapRegion& r) { return r.name == name; });
      uint64_t used = it->used, free = it->length > used ? it->length - used : 0;
      double pct = it->length ? 100.0 * static_cast<double>(used) / static_cast<double>(it->length) : 0;
      // With a load image the map cannot confirm (a NOLOAD section reads
      // the same) the region uses `used` or `low`: a limit that one holds
      // and the other breaks is not judged.
      const uint64_t low = used - it->unsure_bytes;
      auto settled = [&](const std::string& limit, bool with, bool without) {
        if (with != without)
          throw BudgetError(fmt::format("{}.{}: {} uses {} if {} {} a load image there, {} if not, and the map reads the "
                                        "same for a NOLOAD section: give the ELF of the same link too (--elf FW.elf)",
                                        rule, limit, name, units::bytes(used), fmt::join(it->unsure_images, ", "),
                                        it->unsure_images.size() == 1 ? "has" : "have", units::bytes(low)));
      };
      if (limits.contains("max_bytes")) {
        uint64_t max = size(limits, "max_bytes", rule);
        settled("max_bytes", used <= max, low <= max);
        add(rule + ".max_bytes", used <= max, fmt::format("{} uses {}, limit {}", name, units::bytes(used), units::bytes(max)),
            BudgetUnit::bytes, used, max);
      }
      if (limits.contains("max_percent")) {
        double max = real(limits, "max_percent", rule);
        if (max > 100)
          throw BudgetError(fmt::format("{}.max_percent: {:g} % only an overflowed region (a failed link) could "
                                        "break; expected 0 to 100", rule, max));
        // A region without a length (IAR's place-at ones) has no percentage: never a silent pass.
        if (it->length == 0)
          throw BudgetError(fmt::format("{}.max_percent: the map gives region {} no length, so no percentage of it can "
                                        "be judged; use max_bytes", rule, name));
        settled("max_percent", pct <= max,
                100.0 * static_cast<double>(low) / static_cast<double>(it->length) <= max);
        add(rule + ".max_percent", pct <= max,
            fmt::format("{} uses {} % ({} of {}), limit {:g} %", name, beside(pct, max), units::bytes(used),
                        units::bytes(it->length), max),
            BudgetUnit::fraction, pct / 100, fraction_of_percent(max));
      }
      if (limits.contains("min_free_bytes")) {
        uint64_t min = size(limits, "min_free_bytes", rule);
        if (it->length == 0)  // once "0 B free": broken, on a number the map never gave
          throw BudgetError(fmt::format("{}.min_free_bytes: the map gives region {} no length, so its free bytes are "
                                        "unknown; use max_bytes", rule, name));
        settled("min_free_bytes", free >= min, (it->length > low ? it->length - low : 0) >= min);
        add(rule + ".min_free_bytes", free >= min,
            fmt::format("{} has {} free, at least {} wanted", name, units::bytes(free), units::bytes(min)), BudgetUnit::bytes,
            free, min);
      }
    }
  }

  void sized(json& b, const char* kind) {
    const LinkerMap& map = need(in_.map, kind, "a linker map (inputs.map or --map)");
    for (auto item : b.items()) {
      const std::string name = item.key();
      json& limits = item.value();
      std::string rule = std::string(kind) + "." + name;
      only_keys(limits, rule, {"max_bytes"});
      uint64_t bytes = 0;
      bool found = false, at_most = false;
      if (std::string(kind) == "sections") {
        for (const MapSection& s : map.sections)
          if (s.name == name) bytes += s.size, found = true;
      } else {
        for (const MapSymbol& s : map.symbols)
          if (s.name == name) bytes = std::max(bytes, s.size), found = true, at_most |= s.size_is_upper_bound;
      }
      if (!found)
        throw BudgetError(map.toolchain == "ELF"
                              ? fmt::format("{}: not in the ELF's symbols (an ELF names C++ functions mangled, as nm "
                                            "does without -C)", rule)
                              : fmt::format("{}: not in the map", rule));
      uint64_t max = size(limits, "max_bytes", rule);
      // A bound within the limit holds; one past it says nothing.
      if (at_most && bytes > max) throw BudgetError(only_bounded(rule, name, bytes));
      add(rule + ".max_bytes", bytes <= max,
          fmt::format("{} is {}{}, limit {}", name, at_most ? "at most " : "", units::bytes(bytes), units::bytes(max)),
          BudgetUnit::bytes, bytes, max);
    }
  }

  void stack(json& b) {
    only_keys(b, "stack", {"main_stack_bytes", "nesting", "roots", "allow_unbounded"});
    const StackReport& st = need(in_.stack, "stack", "stack input (inputs.stack or --stack)");
    bool allow_unbounded = flag(b, "allow_unbounded", "stack");
    if (b.contains("main_stack_bytes")) {
      require_call_graph(st, "stack.main_stack_bytes");
      uint64_t configured = 0;
      std::string where;
      if (b["main_stack_bytes"] == "map") {
        auto reserved = reserved_stack(need(in_.map, "stack.main_stack_bytes", "a linker map to read the stack size from"));
        if (!reserved) throw BudgetError("stack.main_stack_bytes: the map reserves no stack section or symbol");
        configured = reserved->second;
        where = fmt::format(" ({} in the map)", reserved->first);
      } else {
        configured = size(b, "main_stack_bytes", "stack");
      }
      // Every handler nested unless told: priorities are set at run time,
      // and one level passed a stack that overflowed by 200 B under three.
      std::string nesting = word(b, "nesting", "stack", "all");
      if (nesting != "all" && nesting != "none" && nesting != "one_level")
        throw BudgetError("stack.nesting: expected one_level, all or none");
      auto need_of = [&](const InterruptBudget& b) {
        if (b.handlers == 0) return b.thread_bytes;
        return nesting == "all" ? b.all_nested_bytes : nesting == "none" ? b.thread_bytes : b.one_level_bytes;
      };
      // A definition weak or static, which the graph cannot tell: the larger need is judged.
      const InterruptBudget& irq = st.interrupts_if_weak && need_of(*st.interrupts_if_weak) > need_of(st.interrupts)
                                       ? *st.interrupts_if_weak
                                       : st.interrupts;
      const uint64_t need_bytes = need_of(irq);
      const std::string if_weak =
          &irq == &st.interrupts
              ? ""
              : fmt::format(" were {} weak ({} if static)", fmt::join(st.weak_or_static, ", "),
                            units::bytes(need_of(st.interrupts)));
      // Every root the number counts: any thread root may be the deepest,
      // and under nesting any handler (an unbounded one once passed beside
      // "needs 584 B" with its recursion left out).
      std::vector<const StackRoot*> unbounded;
      for (const StackRoot& r : st.roots)
        if (r.unbounded && (!r.interrupt || (irq.handlers && nesting != "none"))) unbounded.push_back(&r);
      add_stack("stack.main_stack_bytes", need_bytes <= configured,
                fmt::format("main stack needs {}{} (thread {}{}){}, configured {}{}", units::bytes(need_bytes),
                            unbounded.empty() ? "" : " + unbounded", units::bytes(irq.thread_bytes),
                            irq.handlers && nesting != "none"
                                ? fmt::format(" + interrupts, {}", nesting == "all" ? "all nested" : "one level")
                                : "",
                            if_weak, units::bytes(configured), where) +
                    // A handler the vector table names otherwise counts as thread code.
                    (irq.handlers && st.elf.empty() && st.source != "Keil"
                         ? "; handlers known by name only: --elf FW.elf reads the vector table"
                         : ""),
                need_bytes, configured, unbounded);
      if (!allow_unbounded) {
        if (unbounded.size() <= 3) {
          for (const StackRoot* r : unbounded) require_bounded(*r);
        } else {
          std::vector<std::string> names;
          for (size_t i = 0; i < 3; ++i) names.push_back(unbounded[i]->function);
          add("stack.allow_unbounded", false,
              fmt::format("{} roots the main stack counts are unbounded ({} and {} more; edgemem stack names why)",
                          unbounded.size(), fmt::join(names, ", "), unbounded.size() - names.size()),
              BudgetUnit::bytes, need_bytes, nullptr);
        }
      }
    }
  }

  void roots(json& b) {
    const StackReport& st = need(in_.stack, "stack.roots", "stack input (inputs.stack or --stack)");
    require_call_graph(st, "stack.roots");
    bool allow_unbounded = flag(b, "allow_unbounded", "stack");
    for (const auto& item : b["roots"].items()) {
      const std::string name = item.key();
      const json& limit = item.value();
      std::string rule = "stack.roots." + name;
      if (!limit.is_number() && !limit.is_string()) throw BudgetError(rule + ": expected the root's stack size in bytes");
      auto it = std::find_if(st.roots.begin(), st.roots.end(), [&](const StackRoot& r) { return r.function == name; });
      if (it == st.roots.end()) {
        // "vInferenceTask" for GCC's C++ "void vInferenceTask(void*)", when one root has that bare name.
        auto bare = [&](const StackRoot& r) { return bare_function_name(r.function) == name; };
        it = std::find_if(st.roots.begin(), st.roots.end(), bare);
        if (it != st.roots.end() && std::find_if(std::next(it), st.roots.end(), bare) != st.roots.end())
          throw BudgetError(rule + ": more than one root is named so: give the whole name as edgemem stack prints it");
      }
      if (it == st.roots.end()) throw BudgetError(rule + ": no such root in the stack analysis");
      uint64_t max = size(b["roots"], name.c_str(), "stack.roots");
      const uint64_t need = it->if_weak_bytes.value_or(it->worst_case_bytes);
      add_stack(rule, need <= max,
                fmt::format("{} needs {}{}{}, configured {}", name, units::bytes(need),
                            it->unbounded ? " + unbounded" : "",
                            it->if_weak_bytes ? fmt::format(" were {} weak ({} if static)",
                                                            fmt::join(st.weak_or_static, ", "),
                                                            units::bytes(it->worst_case_bytes))
                                              : "",
                            units::bytes(max)),
                need, max, it->unbounded ? std::vector<const StackRoot*>{&*it} : std::vector<const StackRoot*>{});
      if (!allow_unbounded) require_bounded(*it);
    }
  }

  void arena(json& b) {
    only_keys(b, "arena", {"min_margin_bytes", "min_margin_percent"});
    uint64_t min_bytes = b.contains("min_margin_bytes") ? size(b, "min_margin_bytes", "arena") : 0;
    double min_pct = b.contains("min_margin_percent") ? real(b, "min_margin_percent", "arena") : 0;
    // A margin is at most the whole arena: as a region's max_percent over
    // 100, a limit no input can meet is a mistake in the budget (it broke).
    if (min_pct > 100)
      throw BudgetError(fmt::format("arena.min_margin_percent: {:g} % no arena can leave (its margin is at most all "
                                    "of it); expected 0 to 100",
                                    min_pct));
    bool checked = false;
    const bool by_bytes = b.contains("min_margin_bytes"), by_percent = b.contains("min_margin_percent");
    // One outcome per minimum set, each with its own unit, so the JSON's
    // measured and limit are the ones judged (a percent minimum once read
    // as a byte limit of 0); with neither, the margin must not be negative.
    auto judge = [&](const std::string& what, uint64_t size, uint64_t used, const std::string& basis) {
      int64_t margin = static_cast<int64_t>(size) - static_cast<int64_t>(used);
      double pct = size ? 100.0 * static_cast<double>(margin) / static_cast<double>(size) : 0;
      const std::string stands = fmt::format("{} is {}: {} {} leaves {} ({} %)", what, units::bytes(size),
                                             units::bytes(used), basis, units::signed_bytes(margin), beside(pct, min_pct));
      if (by_bytes || !by_percent)
        add("arena." + what, margin >= static_cast<int64_t>(min_bytes),
            stands + (by_bytes ? fmt::format(", at least {} wanted", units::bytes(min_bytes)) : ""), BudgetUnit::bytes,
            margin, min_bytes);
      if (by_percent)
        add(by_bytes ? "arena." + what + ".min_margin_percent" : "arena." + what, pct >= min_pct,
            stands + fmt::format(", at least {:g} % wanted", min_pct), BudgetUnit::fraction, pct / 100,
            fraction_of_percent(min_pct));
      checked = true;
    };
    if (in_.arena && !in_.arena->runnable()) {  // no arena size to hold a margin against
      add("arena.model", false,
          fmt::format("TFLite Micro cannot run the model: {}; no arena size can be recommended",
                      fmt::join(in_.arena->blockers, ", ")),
          by_percent && !by_bytes ? BudgetUnit::fraction : BudgetUnit::bytes, nullptr,
          by_percent && !by_bytes ? json(fraction_of_percent(min_pct)) : json(min_bytes));
      checked = true;
    } else if (in_.arena && in_.map) {
      if (const MapSymbol* declared = largest_symbol_with_role(*in_.map, "tensor arena")) {
        if (declared->size_is_upper_bound) throw BudgetError(only_bounded("arena", declared->name, declared->size));
        judge(declared->name, declared->size, plan::declared_arena_need(*in_.arena, *declared), "needed (model)");
      }
    }
    if (in_.trace)
      for (const PoolSummary& p : in_.trace->pools)
        if (p.size) {
          // Pools that spend one arena from both ends share its margin: the
          // analysis' margin counts the partner too, the pool's own peak does not.
          // A pool declared again with another size is held to the size its
          // least margin was under (a 600 B peak under 1,024 B is no break
          // of the 512 B declared after it), and its peak there.
          const uint64_t size = p.margin_size ? p.margin_size : p.size;
          double shared = p.peak_margin_pct ? static_cast<double>(size) * (1 - *p.peak_margin_pct / 100.0) : 0;
          auto used = static_cast<uint64_t>(std::llround(std::max(shared, 0.0)));
          judge(p.name, size, p.sized_again ? used : std::max(used, p.peak_bytes),
                "at peak with any pool sharing it (trace)");
        }
    if (!checked)
      throw BudgetError("arena: needs a model with a map that declares the arena, or a trace with sized pools");
  }

  void leak(json& b) {
    only_keys(b, "leak", {"max_bytes_per_inference", "max_leaked_bytes"});
    const AnalysisResult& t = need(in_.trace, "leak", "a trace (inputs.trace or --trace)");
    // Summary records tell a pool's use, not its blocks: nothing is known
    // leaked by site, and the rate per inference is the pools' growth.
    const bool summaries_only = t.counts.summaries > 0 && t.counts.allocs + t.counts.reallocs == 0;
    // A leak check that did not run found no leak, not 0 B of one (a rate
    // per inference without markers is refused below for what it lacks).
    // After a restart it is the latest boot's own check: a leak in a boot
    // before it breaks a limit, but does not make the latest boot judged
    // (one inference keeping 10,000 B there once passed beside it).
    // A latest boot that ended no inference (a capture stopped just after
    // the device rebooted) hides no per-inference leak, as such a boot
    // before it does not.
    // `broken_before`: a judged boot before the latest is over the limit,
    // which breaks it whatever the latest boot shows; groups listed while
    // the check did not run (a cut recording's) neither hold nor break it.
    const Check& own_check = t.restarts.total ? t.restarts.latest_boot : t.checks.leaks;
    const bool nothing_to_judge = t.restarts.total && t.inferences > 0 && t.inferences == t.inferences_before_latest_boot;
    // (A summary-mode trace's rate is its pools' growth, measured without the check.)
    const bool unchecked = own_check.status == CheckStatus::not_checked && !nothing_to_judge && !summaries_only;
    auto require_checked = [&](const char* key, bool broken_before) {
      const Check& c = own_check;
      if (!broken_before && unchecked)
        throw BudgetError(fmt::format("leak.{}: the leak check did not run on {} ({})", key,
                                      t.restarts.total ? "the latest boot" : "this trace",
                                      c.reason.empty() ? "NOT CHECKED in its report" : c.reason));
    };
    // Records lost mid-trace can hide a leak: what arrived within the limit
    // does not show the device is (8 flipped bits left 2,144 B of 9,440).
    // Beyond it, it breaks all the same.
    auto within_limit_on_loss = [&](const char* key, bool ok, const std::string& measured) {
      if (ok && !t.lost_mid_trace.empty())
        throw BudgetError(fmt::format("leak.{}: records were lost mid-trace ({}), so {} in what arrived does not show "
                                      "the limit holds; capture again without loss (see [DATA LOST] in the report)",
                                      key, t.lost_mid_trace, measured));
    };
    // Each boot is judged on its own, the ones before the latest as they
    // went down (a leak of 1,600 B that ended in a restart once passed as
    // "0.0 B per inference over 100 inferences", 50 of them judged): the
    // limit holds for the worst boot. A boot that could not be judged (one
    // inference, summary records) can hide a leak: within the limit then
    // says nothing of it; beyond it, it breaks.
    const uint64_t judged = t.inferences - t.inferences_before_latest_boot;
    const std::string restarted =
        t.restarts.total ? fmt::format("the device started again {} time{}", units::grouped(t.restarts.total),
                                       t.restarts.total == 1 ? "" : "s")
                         : "";
    // A boot with no inference ended (a boot banner) hides no per-inference leak.
    const Restart* unjudged = t.restarts.unjudged_boots ? &*t.restarts.first_unjudged : nullptr;
    auto within_limit_on_restart = [&](const char* key, bool ok, const std::string& measured) {
      if (ok && unjudged)
        throw BudgetError(fmt::format("leak.{}: {} in the trace, and {} before the latest could not be judged (boot "
                                      "{}: {}), so {} does not show the limit holds for {}; capture one boot, or give "
                                      "the trace from its last BOOT on",
                                      key, restarted, units::counted(t.restarts.unjudged_boots, "boot", "boots"),
                                      units::grouped(unjudged->boot), unjudged->leak_check.reason, measured,
                                      t.restarts.unjudged_boots == 1 ? "it" : "them"));
    };
    // The boot before a restart that measured the most, if it is above the
    // latest's; an unjudged latest boot's groups measure nothing to cite.
    auto worst_earlier_boot = [&](double latest, const std::optional<Restart>& most, auto measure) -> const Restart* {
      return most && (unchecked || measure(*most) > latest) ? &*most : nullptr;
    };
    auto in_boot = [&](const Restart* boot) {
      return fmt::format(" in boot {}, before the device started again{}", units::grouped(boot->boot),
                         t.inferences ? fmt::format(" ({} inferences)", units::grouped(boot->inferences)) : "");
    };
    std::string unrated_rate;  // why max_bytes_per_inference cannot be judged, if it cannot
    if (b.contains("max_bytes_per_inference")) {
      // Bytes per inference, a size string too as the byte limits take ("32", "1K").
      double max = b["max_bytes_per_inference"].is_string()
                       ? static_cast<double>(size(b, "max_bytes_per_inference", "leak"))
                       : real(b, "max_bytes_per_inference", "leak");
      // A rate that could not be measured cannot be shown to hold.
      if (t.inferences == 0)
        throw BudgetError("leak.max_bytes_per_inference: the trace has no inference markers (INFER begin/end), so no "
                          "rate per inference was measured; limit leak.max_leaked_bytes instead");
      // A summary-mode trace's leak check never runs by site: its rate is the
      // pools', and one inference end is no slope.
      if (summaries_only && judged < 2)
        throw BudgetError(fmt::format("leak.max_bytes_per_inference: {} inference{} ended{}: a rate needs two",
                                      judged, judged == 1 ? "" : "s", t.restarts.total ? " in the latest boot" : ""));
      // A leak that stopped on its own adds nothing now, but the build
      // leaked at its rate while it ran: the gate counts it.
      double rate = t.leak_rate_bytes_per_inference;
      for (const SiteLeak& l : t.leaks)
        if (l.bytes_per_inference && l.growth && l.growth->stopped_on_its_own())
          rate += *l.bytes_per_inference;
      // A summary-mode pool that grew and stopped: its steps' rate.
      if (summaries_only)
        for (const PoolWatermark& w : t.watermarks)
          if (w.stopped_growing() && w.stairs.steps > 0)
            rate += w.stairs.step_bytes / std::max(w.stairs.period_inferences, 1.0);
      const Restart* worst = worst_earlier_boot(rate, t.restarts.fastest_leak,
                                                [](const Restart& boot) { return boot.leak_bytes_per_inference; });
      if (worst) rate = worst->leak_bytes_per_inference;
      if (!summaries_only)
        require_checked("max_bytes_per_inference",
                        t.restarts.fastest_leak && t.restarts.fastest_leak->leak_bytes_per_inference > max);
      // A leak found with no rate per inference leaves the rate unknown, not
      // the others' sum: a limit they hold cannot be shown to hold (one on a
      // thread that marks no inferences read "leaks 0.0 B per inference" and
      // passed a limit of 0); one they break is broken all the same. The
      // refusal waits for max_leaked_bytes: a break there is the verdict.
      if (rate <= max) {
        const auto unrated = std::find_if(t.leaks.begin(), t.leaks.end(),
                                          [](const SiteLeak& l) { return !l.bytes_per_inference; });
        if (unrated != t.leaks.end())
          unrated_rate = fmt::format("leak.max_bytes_per_inference: the leak at {} has no rate per inference ({}); "
                                     "limit leak.max_leaked_bytes instead",
                                     unrated->site, unrated->off_inference_thread
                                                        ? "it grows on a thread that marks no inferences: a producer "
                                                          "may run ahead of the inferences or behind them"
                                                        : "no inference ended while it grew");
        else if (t.restarts.first_unrated_leak_boot)
          unrated_rate = fmt::format("leak.max_bytes_per_inference: a leak in boot {}, before the device started "
                                     "again, has no rate per inference (it grows on a thread that marks no "
                                     "inferences); limit leak.max_leaked_bytes instead",
                                     units::grouped(*t.restarts.first_unrated_leak_boot));
      }
      if (unrated_rate.empty()) {
        within_limit_on_loss("max_bytes_per_inference", rate <= max, units::decimal(rate, 1) + " B per inference");
        within_limit_on_restart("max_bytes_per_inference", rate <= max, units::decimal(rate, 1) + " B per inference");
        add("leak.max_bytes_per_inference", rate <= max,
            fmt::format("leaks {} B per inference{}, limit {:g} B", beside(rate, max),
                        worst ? in_boot(worst)
                        : t.restarts.total
                            ? fmt::format(" over {} inferences of the latest boot, the worst of every boot ({} in the "
                                          "trace: {})",
                                          units::grouped(judged), units::grouped(t.inferences), restarted)
                            : fmt::format(" over {} inferences", units::grouped(judged)),
                        max),
            BudgetUnit::bytes_per_inference, rate, max);
      }
    }
    if (b.contains("max_leaked_bytes")) {
      uint64_t max = size(b, "max_leaked_bytes", "leak"), total = 0;
      if (summaries_only)
        throw BudgetError("leak.max_leaked_bytes: the trace holds summary records only, which carry no blocks, so "
                          "no bytes leaked by site are known; limit leak.max_bytes_per_inference instead");
      for (const auto& l : t.leaks) total += l.bytes;
      const Restart* worst = worst_earlier_boot(static_cast<double>(total), t.restarts.most_leaked, [](const Restart& boot) {
        return static_cast<double>(boot.leaked_bytes);
      });
      if (worst) total = worst->leaked_bytes;
      require_checked("max_leaked_bytes",
                      t.restarts.most_leaked && t.restarts.most_leaked->leaked_bytes > max);
      const std::vector<SiteLeak>& leaks = worst ? worst->leaks : t.leaks;
      const uint64_t sites = worst ? worst->leaking_groups : t.leaks.size();
      within_limit_on_loss("max_leaked_bytes", total <= max, units::bytes(total) + " leaked");
      within_limit_on_restart("max_leaked_bytes", total <= max, units::bytes(total) + " leaked");
      add("leak.max_leaked_bytes", total <= max,
          fmt::format("{} leaked at {} site(s){}{}, limit {}", units::bytes(total), sites,
                      leaks.empty() ? "" : " (first " + leaks.front().site + ")",
                      worst              ? in_boot(worst)
                      : t.restarts.total ? fmt::format(" in the latest boot, the worst of every boot ({})", restarted)
                                         : "",
                      units::bytes(max)),
          BudgetUnit::bytes, total, max);
    }
    if (!unrated_rate.empty() && (out.empty() || out.back().rule != "leak.max_leaked_bytes" || out.back().ok))
      throw BudgetError(unrated_rate);
  }

  void fragmentation(json& b) {
    only_keys(b, "fragmentation", {"max_band", "max_alloc_failures"});
    const AnalysisResult& t = need(in_.trace, "fragmentation", "a trace (inputs.trace or --trace)");
    if (b.contains("max_band")) {
      auto max = b["max_band"].is_string() ? parse_band(b["max_band"].get<std::string>()) : std::nullopt;
      if (!max) throw BudgetError("fragmentation.max_band: expected healthy, warning or danger");
      const FragmentationResult& f = t.fragmentation;
      // A band that could not be measured cannot be shown to hold.
      // Nor can one within the limit where some pools were not measured.
      if ((!f.band || (f.unmeasured_pools && *f.band <= *max && *max != Band::danger)) &&
          !t.checks.fragmentation.reason.empty())
        throw BudgetError("fragmentation.max_band: not judged: " + t.checks.fragmentation.reason);
      if (!f.band)
        throw BudgetError("fragmentation.max_band: the trace declares no pool extent (POOL name= base= size=, or "
                          "--arena-size for an arena), so fragmentation was not measured");
      auto rate = [](const std::optional<double>& r) { return r ? fmt::format("{:.0f} %", *r * 100) : "not measured"; };
      add("fragmentation.max_band", *f.band <= *max,
          fmt::format("fragmentation is {} (max {}, final {}, {} failed allocation(s)), limit {}", to_string(*f.band),
                      rate(f.max_rate), rate(f.final_rate), f.alloc_failures, to_string(*max)),
          BudgetUnit::band, to_string(*f.band), to_string(*max));
    }
    if (b.contains("max_alloc_failures")) {
      uint64_t max = number(b, "max_alloc_failures", "fragmentation");
      add("fragmentation.max_alloc_failures", t.fragmentation.alloc_failures <= max,
          fmt::format("{} failed allocation(s), limit {}", t.fragmentation.alloc_failures, max), BudgetUnit::count,
          t.fragmentation.alloc_failures, max);
    }
  }

 private:
  const BudgetInputs& in_;
};

}  // namespace

std::string_view to_string(BudgetUnit unit) {
  switch (unit) {
    case BudgetUnit::bytes: return "bytes";
    case BudgetUnit::fraction: return "fraction";
    case BudgetUnit::bytes_per_inference: return "bytes_per_inference";
    case BudgetUnit::count: return "count";
    case BudgetUnit::band: return "band";
  }
  return "bytes";
}

std::optional<nlohmann::json> parse_budget(std::string_view text, std::string& error) {
  struct OpenObject {
    bool by_case;  // its keys are section, symbol or root names
    std::vector<std::string> keys;
  };
  std::vector<OpenObject> open_objects;
  std::string last_key, repeated;
  // A budget is a few levels deep; a document nested thousands deep is not
  // one, and building it recursively overflowed the stack (SIGSEGV).
  constexpr int kMaxDepth = 64;
  bool too_deep = false;
  auto watch_keys = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (depth > kMaxDepth) {
      too_deep = true;
      return false;  // dropped: nothing that deep is built
    }
    if (event == E::object_start)
      open_objects.push_back({(open_objects.size() == 1 && names::match(last_key, {"sections", "symbols"})) ||
                                  (open_objects.size() == 2 && names::match(last_key, {"roots"})),
                              {}});
    if (event == E::object_end && !open_objects.empty()) open_objects.pop_back();
    if (event == E::key && !open_objects.empty()) {
      last_key = parsed.get<std::string>();
      OpenObject& o = open_objects.back();
      for (const std::string& k : o.keys)
        if (repeated.empty() && (o.by_case ? k == last_key : names::match(last_key, {k}).has_value()))
          repeated = k == last_key ? fmt::format("\"{}\" twice", k) : fmt::format("\"{}\" and \"{}\"", k, last_key);
      o.keys.push_back(last_key);
    }
    return true;
  };
  nlohmann::json budget;
  try {
    budget = nlohmann::json::parse(text, watch_keys);
  } catch (const nlohmann::json::parse_error& e) {
    error = fmt::format("offset {}: expected a JSON budget (edgemem.budget/1)", e.byte);
    return std::nullopt;
  } catch (const nlohmann::json::out_of_range&) {  // 1e400: a number no double holds
    error = "a number too large for any limit (over 1.8e308): expected a JSON budget (edgemem.budget/1)";
    return std::nullopt;
  }
  if (too_deep) {
    error = fmt::format("nested more than {} levels deep: not a budget (edgemem.budget/1 is a few levels of objects)",
                        kMaxDepth);
    return std::nullopt;
  }
  if (!repeated.empty()) {
    error = fmt::format("one object has the key {} (keys match in any case): give each once, or one of the limits "
                        "would be dropped unsaid",
                        repeated);
    return std::nullopt;
  }
  return budget;
}

std::vector<BudgetOutcome> evaluate_budget(const json& given, const BudgetInputs& in, std::string& error) {
  json budget = given;  // keys are respelled in place as they match
  try {
    only_keys(budget, "", {"schema", "inputs", "regions", "sections", "symbols", "stack", "arena", "leak", "fragmentation"});
    if (budget.contains("schema") && budget["schema"] != "edgemem.budget/1")
      throw BudgetError("schema: expected \"edgemem.budget/1\"");
    Evaluator e(in);
    // Every group is judged even after one is refused: the refusal is the
    // error (exit 2), and the limits the others broke are still said
    // (a refused leak rate hid a broken failure limit until it was fixed).
    std::string refused;
    size_t refusals = 0;
    auto judge = [&](const char* key, auto&& evaluate) {
      if (!budget.contains(key)) return;
      try {
        evaluate(budget[key]);
      } catch (const BudgetError& x) {
        if (refusals++ == 0) refused = x.what();
      }
    };
    judge("regions", [&](json& b) { e.regions(b); });
    judge("sections", [&](json& b) { e.sized(b, "sections"); });
    judge("symbols", [&](json& b) { e.sized(b, "symbols"); });
    judge("stack", [&](json& b) {
      e.stack(b);
      if (b.contains("roots")) {
        if (!b["roots"].is_object()) throw BudgetError("stack.roots: expected an object of root: bytes");
        e.roots(b);
      }
    });
    judge("arena", [&](json& b) { e.arena(b); });
    judge("leak", [&](json& b) { e.leak(b); });
    judge("fragmentation", [&](json& b) { e.fragmentation(b); });
    if (refusals == 0 && e.out.empty()) throw BudgetError("the budget sets no limit");
    // The map of a link that failed (a region overflowed) is no firmware: a
    // FLASH limit held beside a RAM that did not fit.
    if (in.map)
      for (const MapRegion& r : in.map->regions) {
        if (overflow_unsure(r)) {
          if (refusals++ == 0)
            refused = fmt::format("regions.{}.overflowed: {} overflowed by {} if {} {} a load image there, and "
                                  "fits if not; the map reads the same for a NOLOAD section: give the ELF of the "
                                  "same link too (--elf FW.elf; a link that failed wrote none, and did overflow)",
                                  r.name, r.name, units::bytes(overflow_bytes(r)), fmt::join(r.unsure_images, ", "),
                                  r.unsure_images.size() == 1 ? "has" : "have");
        } else if (const uint64_t over = overflow_bytes(r)) {
          e.add("regions." + r.name + ".overflowed", false,
                fmt::format("{} overflowed by {}: the map is of a link that failed", r.name, units::bytes(over)),
                BudgetUnit::bytes, r.used, r.length);
        }
      }
    // One line per broken budget: drop repeats (an unbounded root named twice).
    // After a refusal, only the broken ones: nothing holds while one is refused.
    std::set<std::string> seen;
    std::vector<BudgetOutcome> out;
    for (auto& o : e.out)
      if ((refusals == 0 || !o.ok) && seen.insert(o.rule + o.message).second) out.push_back(std::move(o));
    if (refusals > 0)
      error = refused + (refusals > 1 ? fmt::format(" (and {} more limit group{} refused)", refusals - 1,
                                                    refusals > 2 ? "s" : "")
                                      : "");
    return out;
  } catch (const BudgetError& x) {
    error = x.what();
  } catch (const json::exception& x) {
    error = fmt::format("budget: {}", x.what());
  }
  return {};
}

}  // namespace edgemem
