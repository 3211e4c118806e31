#include "report/diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/units.h"

namespace edgemem {
namespace {

// A headline value with its id, text label and unit; tables of sizes are bytes.
struct Value {
  double v = 0;
  DiffUnit unit = DiffUnit::bytes;
  std::string label;
  bool upper_bound = false;
};
using Table = std::map<std::string, Value>;

Table bytes_table(const std::map<std::string, double>& sizes) {
  Table t;
  for (const auto& [name, v] : sizes) t[name] = {v, DiffUnit::bytes, ""};
  return t;
}

// Joins two name -> value tables into rows, biggest change first.
DiffGroup join(std::string id, std::string title, const Table& a, const Table& b) {
  DiffGroup g{std::move(id), std::move(title), {}};
  for (const auto& [name, v] : a) {
    auto it = b.find(name);
    g.rows.push_back({name, v.label, v.unit, v.v, it == b.end() ? 0 : it->second.v, false, it == b.end(),
                      v.upper_bound || (it != b.end() && it->second.upper_bound)});
  }
  for (const auto& [name, v] : b)
    if (!a.count(name)) g.rows.push_back({name, v.label, v.unit, 0, v.v, true, false, v.upper_bound});
  std::stable_sort(g.rows.begin(), g.rows.end(), [](const DiffRow& x, const DiffRow& y) {
    return std::fabs(x.delta()) > std::fabs(y.delta());
  });
  return g;
}

std::map<std::string, double> regions(const LinkerMap& m) {
  std::map<std::string, double> out;
  for (const auto& r : m.regions) out[r.name] += static_cast<double>(r.used);
  return out;
}
// GNU ld lists an output section that received nothing, at size 0; armlink,
// IAR and an ELF leave it out. Empty is absent on every side, so a section
// that emptied is [gone] whichever linker wrote the maps.
std::map<std::string, double> sections(const LinkerMap& m) {
  std::map<std::string, double> out;
  for (const auto& s : m.sections)
    if (s.kind != SectionKind::debug && s.size > 0) out[s.name] += static_cast<double>(s.size);
  return out;
}
// GCC's LTO writes each partition to a temporary file of a new name every
// link (/tmp/ccvYTmV7.ltrans0.ltrans.o): named by its partition, so two
// builds compare partition to partition, not as one [gone] and one [new].
std::string object_row(const std::string& object) {
  static const std::regex ltrans(R"(^.*/cc[A-Za-z0-9]+\.(ltrans[0-9]+)\.ltrans\.o$)");
  std::smatch m;
  return std::regex_match(object, m, ltrans) ? m[1].str() + ".o (LTO partition)" : object;
}
std::map<std::string, double> objects(const LinkerMap& m) {
  std::map<std::string, double> out;
  for (const auto& c : m.contributions)
    if (section_kind(m, c.section) != SectionKind::debug) out[object_row(c.object)] += static_cast<double>(c.size);
  return out;
}
// Names more than one symbol of either image has (file-local statics,
// __func__): their rows are told apart by object, in both images alike.
std::set<std::string> shared_names(const LinkerMap& a, const LinkerMap& b) {
  std::set<std::string> out;
  for (const LinkerMap* m : {&a, &b}) {
    std::set<std::string> seen;
    for (const auto& s : m->symbols)
      if (!seen.insert(s.name).second) out.insert(s.name);
  }
  return out;
}

// One row per symbol; one per (name, object) for a shared name, those of
// one object (or of an ELF, which names none) summed. Taking the largest of
// a name once hid every change but the largest one's.
Table symbols(const LinkerMap& m, const std::set<std::string>& shared) {
  Table out;
  for (const auto& s : m.symbols) {
    const bool qualified = shared.contains(s.name) && !s.object.empty();
    Value& v = out[qualified ? s.name + " (" + object_row(s.object) + ")" : s.name];
    v.v += static_cast<double>(s.size);
    v.upper_bound |= s.size_is_upper_bound;
  }
  return out;
}

double d(uint64_t n) { return static_cast<double>(n); }

}  // namespace

std::string_view to_string(DiffUnit unit) {
  switch (unit) {
    case DiffUnit::bytes: return "bytes";
    case DiffUnit::count: return "count";
    case DiffUnit::fraction: return "fraction";
    case DiffUnit::bytes_per_inference: return "bytes_per_inference";
    case DiffUnit::band: return "band";
  }
  return "bytes";
}

std::vector<DiffGroup> diff_maps(const LinkerMap& a, const LinkerMap& b) {
  auto totals = [](const LinkerMap& m) {
    return Table{{"code_bytes", {d(m.totals.code), DiffUnit::bytes, "code"}},
                 {"ro_data_bytes", {d(m.totals.ro_data), DiffUnit::bytes, "read-only data"}},
                 {"rw_data_bytes", {d(m.totals.rw_data), DiffUnit::bytes, "read-write data"}},
                 {"zi_data_bytes", {d(m.totals.zi_data), DiffUnit::bytes, "zero-initialised"}}};
  };
  return {join("totals", "totals", totals(a), totals(b)),
          join("regions", "regions", bytes_table(regions(a)), bytes_table(regions(b))),
          join("sections", "sections", bytes_table(sections(a)), bytes_table(sections(b))),
          join("objects", "objects", bytes_table(objects(a)), bytes_table(objects(b))),
          join("symbols", "symbols", symbols(a, shared_names(a, b)), symbols(b, shared_names(a, b)))};
}

std::vector<DiffGroup> diff_traces(const AnalysisResult& a, const AnalysisResult& b) {
  auto headline = [](const AnalysisResult& r) {
    uint64_t leaked = 0;
    for (const auto& l : r.leaks) leaked += l.bytes;
    // And what every boot before a restart leaked: the capture's leak, not only its last boot's.
    leaked += r.restarts.leaked_bytes;
    Table table{
        {"peak_bytes", {d(r.peak_bytes), DiffUnit::bytes, "peak"}},
        {"inferences", {d(r.inferences), DiffUnit::count, "inferences"}},
        {"alloc_failures", {d(r.fragmentation.alloc_failures), DiffUnit::count, "failed allocations"}}};
    // A check that did not run found nothing, not 0: "overflows -1 (1 -> 0)"
    // once read as an improvement where the second run declared no size.
    auto checked = [](const Check& c) { return c.status != CheckStatus::not_checked; };
    if (checked(r.checks.leaks)) table["leaked_bytes"] = {d(leaked), DiffUnit::bytes, "leaked"};
    if (checked(r.checks.overflow)) table["overflows"] = {d(r.overflow_count), DiffUnit::count, "overflows"};
    if (checked(r.checks.lifo))
      table["lifo_stranded_bytes"] = {d(r.lifo.max_stranded_bytes), DiffUnit::bytes, "stranded arena bytes (LIFO)"};
    // Per-inference numbers need inference markers: without them they are not 0, but not measured.
    if (const auto rate = r.known_leak_rate())
      table["leak_rate_bytes_per_inference"] = {*rate, DiffUnit::bytes_per_inference, "leak rate"};
    if (r.inferences)
      table["max_inference_peak_bytes"] = {d(r.peak.max_inference_peak), DiffUnit::bytes, "max inference peak"};
    // Unmeasured fragmentation (no pool extent known) is left out rather than shown as 0.
    const FragmentationResult& f = r.fragmentation;
    if (f.max_rate) table["fragmentation_max_rate"] = {*f.max_rate, DiffUnit::fraction, "fragmentation, max"};
    if (f.final_rate) table["fragmentation_final_rate"] = {*f.final_rate, DiffUnit::fraction, "fragmentation, final"};
    if (f.band) table["fragmentation_band"] = {d(static_cast<uint64_t>(*f.band)), DiffUnit::band, "fragmentation band"};
    return table;
  };
  auto pools = [](const AnalysisResult& r) {
    std::map<std::string, double> out;
    for (const auto& p : r.pools) out[p.name] = d(p.peak_bytes);
    return out;
  };
  auto sites = [](const AnalysisResult& r) {
    std::map<std::string, double> out;
    for (const auto& s : r.sites) out[s.site] = d(s.live_bytes);
    return out;
  };
  // A number measured in one run only (fragmentation of a pool whose size
  // only one trace declares) is not compared: missing is not 0.
  Table before = headline(a), after = headline(b);
  std::erase_if(before, [&](const auto& row) { return !after.contains(row.first); });
  std::erase_if(after, [&](const auto& row) { return !before.contains(row.first); });
  // Fragmentation is over the pools of known extent: over different pools
  // (one trace leaves a heap's base out) the runs' rates are of different
  // things, and once read "band better (danger -> healthy)".
  auto judged = [](const AnalysisResult& r) {
    std::set<std::string> out;
    for (const PoolFragmentation& p : r.fragmentation.pools)
      if (p.known_extent) out.insert(p.pool);
    return out;
  };
  std::string note;
  if (const auto judged_a = judged(a), judged_b = judged(b); judged_a != judged_b) {
    for (Table* t : {&before, &after})
      std::erase_if(*t, [](const auto& row) { return row.first.starts_with("fragmentation_"); });
    auto names = [](const std::set<std::string>& pools) {
      return pools.empty() ? std::string("none") : fmt::format("{}", fmt::join(pools, ", "));
    };
    note = fmt::format("fragmentation not compared: measured over different pools of known extent (before: {}; "
                       "after: {})",
                       names(judged_a), names(judged_b));
  }
  // A run that lists only its first sites (sites_omitted) cannot say that a
  // site it leaves out held nothing: such a site is compared only where
  // both runs list it.
  // Such a site is said, though, with the largest left out (a site of 1 MiB
  // gone from the other run's list read "0 changed"). What the other run
  // held there is not bounded by its smallest listed site: its leaking
  // sites are listed beside the largest, however small.
  Table sites_before = bytes_table(sites(a)), sites_after = bytes_table(sites(b));
  const Table listed_before = sites_before, listed_after = sites_after;
  std::vector<std::string> unlisted;
  auto leave_out = [&](Table& own, const Table& other, const AnalysisResult& omitting, const char* own_run,
                       const char* other_run) {
    if (!omitting.sites_omitted) return;
    std::optional<std::pair<std::string, double>> largest;
    size_t n = 0;
    for (const auto& [site, v] : own)
      if (!other.contains(site)) {
        ++n;
        if (!largest || v.v > largest->second) largest = std::pair{site, v.v};
      }
    std::erase_if(own, [&](const auto& row) { return !other.contains(row.first); });
    if (!n) return;
    unlisted.push_back(fmt::format("{} listed {} only, not compared (the {} run lists only the sites holding most, "
                                   "and its leaking ones): the largest, {}, held {} B {}",
                                   units::counted(n, "site", "sites"), own_run, other_run, largest->first,
                                   units::grouped(static_cast<uint64_t>(largest->second)), own_run));
  };
  leave_out(sites_before, listed_after, b, "before", "after");
  leave_out(sites_after, listed_before, a, "after", "before");
  DiffGroup run = join("run", "run", before, after);
  run.note = std::move(note);
  DiffGroup site_group = join("site_live_bytes", "live bytes at the end, per site", sites_before, sites_after);
  site_group.note = fmt::format("{}", fmt::join(unlisted, "; "));
  return {std::move(run), join("pool_peaks", "pool peaks", bytes_table(pools(a)), bytes_table(pools(b))),
          std::move(site_group)};
}

}  // namespace edgemem
