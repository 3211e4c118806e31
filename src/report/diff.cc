#include "report/diff.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace edgemem {
namespace {

// Joins two name -> value tables into rows, biggest change first.
DiffGroup join(std::string title, std::string unit, const std::map<std::string, double>& a,
               const std::map<std::string, double>& b) {
  DiffGroup g{std::move(title), std::move(unit), {}};
  for (const auto& [name, v] : a) {
    auto it = b.find(name);
    g.rows.push_back({name, v, it == b.end() ? 0 : it->second, false, it == b.end()});
  }
  for (const auto& [name, v] : b)
    if (!a.count(name)) g.rows.push_back({name, 0, v, true, false});
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
std::map<std::string, double> sections(const LinkerMap& m) {
  std::map<std::string, double> out;
  for (const auto& s : m.sections)
    if (s.kind != SectionKind::debug) out[s.name] += static_cast<double>(s.size);
  return out;
}
std::map<std::string, double> objects(const LinkerMap& m) {
  std::map<std::string, double> out;
  for (const auto& c : m.contributions)
    if (section_kind(m, c.section) != SectionKind::debug) out[c.object] += static_cast<double>(c.size);
  return out;
}
std::map<std::string, double> symbols(const LinkerMap& m) {
  std::map<std::string, double> out;
  for (const auto& s : m.symbols) out[s.name] = std::max(out[s.name], static_cast<double>(s.size));
  return out;
}

}  // namespace

std::vector<DiffGroup> diff_maps(const LinkerMap& a, const LinkerMap& b) {
  auto totals = [](const LinkerMap& m) {
    return std::map<std::string, double>{{"code", static_cast<double>(m.totals.code)},
                                         {"read-only data", static_cast<double>(m.totals.ro_data)},
                                         {"read-write data", static_cast<double>(m.totals.rw_data)},
                                         {"zero-initialised", static_cast<double>(m.totals.zi_data)}};
  };
  return {join("totals", "B", totals(a), totals(b)), join("regions", "B", regions(a), regions(b)),
          join("sections", "B", sections(a), sections(b)), join("objects", "B", objects(a), objects(b)),
          join("symbols", "B", symbols(a), symbols(b))};
}

std::vector<DiffGroup> diff_traces(const AnalysisResult& a, const AnalysisResult& b) {
  auto headline = [](const AnalysisResult& r) {
    uint64_t leaked = 0;
    for (const auto& l : r.leaks) leaked += l.bytes;
    std::map<std::string, double> out{
        {"peak bytes", static_cast<double>(r.peak_bytes)},
        {"leaked bytes", static_cast<double>(leaked)},
        {"leak rate (B/inference)", r.leak_rate_bytes_per_inference},
        {"inferences", static_cast<double>(r.inferences)},
        {"max inference peak", static_cast<double>(r.peak.max_inference_peak)},
        {"failed allocations", static_cast<double>(r.fragmentation.alloc_failures)},
        {"overflows", static_cast<double>(r.overflow_count)},
        {"stranded arena bytes (LIFO)", static_cast<double>(r.lifo.max_stranded_bytes)}};
    // Unmeasured fragmentation is left out rather than shown as 0.
    const FragmentationResult& f = r.fragmentation;
    if (f.max_rate) out["fragmentation max %"] = *f.max_rate * 100;
    if (f.final_rate) out["fragmentation final %"] = *f.final_rate * 100;
    if (f.band) out["fragmentation band (0 healthy, 1 warning, 2 danger)"] = static_cast<double>(*f.band);
    return out;
  };
  auto pools = [](const AnalysisResult& r) {
    std::map<std::string, double> out;
    for (const auto& p : r.pools) out[p.name] = static_cast<double>(p.peak_bytes);
    return out;
  };
  auto sites = [](const AnalysisResult& r) {
    std::map<std::string, double> out;
    for (const auto& s : r.sites) out[s.site] = static_cast<double>(s.live_bytes);
    return out;
  };
  return {join("run", "", headline(a), headline(b)), join("pool peaks", "B", pools(a), pools(b)),
          join("live bytes at the end, per site", "B", sites(a), sites(b))};
}

}  // namespace edgemem
