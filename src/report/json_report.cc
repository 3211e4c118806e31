#include "edgemem/analyzer.h"
#include "edgemem/report.h"
#include "report/thread_sections.h"

namespace edgemem {

using nlohmann::json;

namespace {

json optional(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
json optional(const std::optional<uint64_t>& v) { return v ? json(*v) : json(nullptr); }
json text_or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }
json count_or_null(const std::optional<uint64_t>& v) { return v ? json(*v) : json(nullptr); }

json check(const Check& c) { return {{"status", to_string(c.status)}, {"reason", text_or_null(c.reason)}}; }

json growth(const std::optional<LeakGrowth>& g) {
  if (!g) return nullptr;
  return {{"kind", to_string(g->pattern)},
          {"period_inferences", g->pattern == LeakPattern::every_nth ? json(g->period) : json(nullptr)},
          {"growth_inferences", g->growth_inferences},
          {"first_inference", g->growth_inferences ? json(g->first_inference) : json(nullptr)},
          {"late_start", g->late_start},
          {"growth_bytes", g->bytes_per_growth},
          {"stopped_after_inference", optional(g->stopped_after_inference)},
          {"failed_requests", g->failed_requests},
          {"inferences_since_stop", g->inferences_since_stop}};
}

json leaks_json(const std::vector<SiteLeak>& leaks) {
  json out = json::array();
  for (const auto& l : leaks)
    out.push_back({{"site", l.site},
                   {"pool", l.pool},
                   {"bytes", l.bytes},
                   {"count", l.count},
                   {"bytes_per_inference", optional(l.bytes_per_inference)},
                   {"pattern", growth(l.growth)},
                   {"type_hint", text_or_null(l.type_hint)},
                   {"block_size", l.block_size ? json(l.block_size) : json(nullptr)},
                   {"allocs", l.allocs},
                   {"frees", l.frees},
                   {"first_time", l.first_time},
                   {"last_time", l.last_time},
                   {"off_inference_thread", l.off_inference_thread},
                   {"threads", thread_shares_json(l.threads)}});
  return out;
}

template <typename X, typename Y>
json series(const std::vector<std::pair<X, Y>>& points) {
  json a = json::array();
  for (const auto& [x, y] : points) a.push_back({x, y});
  return a;
}

json pool_site_bytes(const std::vector<PoolSiteBytes>& entries) {
  json a = json::array();
  for (const auto& e : entries) a.push_back({{"pool", e.pool}, {"site", e.site}, {"bytes", e.bytes}, {"count", e.count}});
  return a;
}

json raster(const std::optional<LayoutRaster>& r) {
  if (!r) return nullptr;
  return {{"time0", r->time0}, {"time_step", r->time_step}, {"offset0", r->offset0}, {"offset_step", r->offset_step},
          {"times", r->times}, {"offsets", r->offsets}, {"bytes", r->bytes},
          {"blocks", r->blocks}, {"live_blocks", r->live_blocks}};
}

json layout(const LayoutResult& l) {
  json pools = json::array();
  uint64_t drawn = 0;
  for (const auto& p : l.pools) {
    // [offset, size, alloc_time, free_time or null, site]: 20,000 blocks as objects would triple the report.
    json blocks = json::array();
    for (const auto& b : p.blocks)
      blocks.push_back({b.offset, b.size, b.alloc_time, b.free_time ? json(*b.free_time) : json(nullptr), b.site});
    drawn += p.blocks.size();
    json regions = nullptr;
    if (!p.regions.empty()) {
      regions = json::array();
      for (const auto& r : p.regions)
        regions.push_back({{"offset", r.offset}, {"end", r.end}, {"blocks", r.blocks}, {"raster", raster(r.raster)}});
    }
    pools.push_back({{"pool", p.pool}, {"kind", to_string(p.kind)}, {"origin", p.origin},
                     {"size", p.size ? json(p.size) : json(nullptr)}, {"blocks", blocks}, {"raster", raster(p.raster)},
                     {"regions", regions}});
  }
  return {{"start_time", l.start_time}, {"end_time", l.end_time}, {"block_cap", l.block_cap},
          {"blocks_seen", l.blocks_seen}, {"blocks_drawn", drawn}, {"sites", l.sites}, {"pools", pools},
          {"live_at_end", pool_site_bytes(l.live_at_end)}, {"live_at_peak", pool_site_bytes(l.live_at_peak)}};
}

}  // namespace

json to_json(const InputSummary& in, const AnalysisResult& r) {
  json j;
  j["schema"] = "edgemem.analyze/1";
  const DecodeStats& s = in.stats;
  j["input"] = {{"path", in.path},
                {"format", in.format},
                {"events", s.events},
                {"bytes", s.bytes},
                {"skipped_lines", s.skipped_lines},
                {"corrupt_bytes", s.corrupt_bytes},
                {"malformed_lines", s.malformed_lines},
                {"truncated_bytes", s.truncated_bytes},
                {"stream_cut_bytes", s.stream_cut_bytes},
                {"overflow_packets", s.overflows},
                {"dropped_records", s.dropped_records},
                {"out_of_order_records", s.out_of_order_records},
                {"checked_records", s.checked_records},
                {"failed_checks", s.failed_checks},
                {"recording_stopped", s.recording_stopped},
                {"calls_not_recorded", s.calls_not_recorded},
                {"recording_cut", s.recording_cut},
                {"attached", s.attached},
                {"frees_before_attach", s.frees_before_attach},
                {"bytes_freed_before_attach", s.bytes_freed_before_attach},
                {"impossible_events", s.impossible_events},
                {"sites_dropped", s.sites_dropped},
                {"pools_dropped", s.pools_dropped},
                {"strings_dropped", s.strings_dropped},
                {"markers_dropped", s.markers_dropped},
                {"time_went_back", s.time_went_back},
                {"device_restarts", s.device_restarts},
                {"modules_changed", s.modules_changed},
                {"time_base", in.time_base == TimeBase::cycles ? "cycles" : "sequence"},
                {"interrupted", in.interrupted},
                {"packets", s.packets}};
  j["input"]["cut"] = nullptr;
  if (s.recording_cut)
    j["input"]["cut"] = {{"in", s.cut_in_packed_frame ? "packed_frame" : "chunk"},
                         {"at", s.cut_at},
                         {"bytes_present", s.cut_bytes_present},
                         {"chunk_bytes_missing", s.cut_chunk_missing}};
  j["input"]["first_problem"] = nullptr;
  if (s.first_problem)
    j["input"]["first_problem"] = {{"offset", s.first_problem->offset},
                                   {"line", s.first_problem->line ? json(s.first_problem->line) : json(nullptr)},
                                   {"what", s.first_problem->what}};
  j["input"]["first_impossible"] = s.first_impossible.empty() ? json(nullptr) : json(s.first_impossible);
  j["input"]["compression"] = nullptr;
  if (!s.compression.empty())
    j["input"]["compression"] = {
        {"format", s.compression},
        {"compressed_bytes", s.compressed_bytes},
        {"problem", s.compression_problem.empty() ? json(nullptr) : json(s.compression_problem)},
        {"unread_compressed_bytes", s.compressed_bytes_unread}};
  j["inferences"] = r.inferences;
  j["overlapping_inferences"] = r.overlapping_inferences;
  j["peak_bytes"] = r.peak_bytes;

  j["leaks"] = leaks_json(r.leaks);
  j["persistent"] = json::array();
  for (const auto& p : r.persistent)
    j["persistent"].push_back({{"site", p.site}, {"pool", p.pool}, {"bytes", p.bytes}, {"count", p.count},
                               {"reason", to_string(p.reason)}});
  j["leak_rate_bytes_per_inference"] = r.known_leak_rate() ? json(*r.known_leak_rate()) : json(nullptr);
  if (r.exhaustion_forecast)
    j["exhaustion_forecast"] = {{"inferences", r.exhaustion_forecast->inferences},
                                {"seconds", optional(r.exhaustion_forecast->seconds)},
                                {"pool", r.exhaustion_forecast->pool},
                                {"remaining_bytes", r.exhaustion_forecast->remaining_bytes},
                                {"bytes_per_inference", r.exhaustion_forecast->bytes_per_inference},
                                {"already_exhausted", r.exhaustion_forecast->already_exhausted}};
  else
    j["exhaustion_forecast"] = nullptr;

  const FragmentationResult& f = r.fragmentation;
  json failures = json::array();
  for (const auto& x : f.failures)
    failures.push_back({{"time", x.time}, {"pool", x.pool}, {"site", x.site}, {"size", x.size},
                        {"total_free", optional(x.total_free)}, {"largest_free", optional(x.largest_free)},
                        {"inference", count_or_null(x.inference)}, {"boot", x.boot}, {"fragmentation", x.fragmentation},
                        {"live_blocks", x.live_blocks}});
  json frag_pools = json::array();
  for (const auto& p : f.pools)
    frag_pools.push_back({{"pool", p.pool}, {"extent", p.known_extent ? "known" : "observed"},
                          {"max_rate", p.max_rate}, {"final_rate", p.final_rate},
                          {"total_free", p.total_free}, {"largest_free", p.largest_free},
                          {"curve", series(p.curve)}});
  j["fragmentation"] = {{"max_rate", optional(f.max_rate)},
                        {"final_rate", optional(f.final_rate)},
                        {"band", f.band ? json(to_string(*f.band)) : json(nullptr)},
                        {"alloc_failures", f.alloc_failures},
                        {"failures_per_1000_inferences", optional(f.failures_per_1000_inferences)},
                        {"min_largest_free_to_request", optional(f.min_largest_to_request)},
                        {"failures", failures},
                        {"pools", frag_pools}};

  j["overflows"] = json::array();
  for (const auto& o : r.overflows)
    j["overflows"].push_back({{"time", o.time}, {"site", o.site}, {"pool", o.pool}, {"offset", o.offset},
                              {"size", o.size}, {"arena_size", o.arena_size}, {"over_by", o.over_by},
                              {"available", o.available}});
  j["overflow_count"] = r.overflow_count;
  j["guard_failures"] = r.guard_failure_count;
  j["guard_checks"] = r.guard_checks;
  json guards = json::array();
  for (const auto& g : r.guard_failures)
    guards.push_back({{"time", g.time}, {"inference", count_or_null(g.inference)}, {"boot", g.boot}, {"pool", g.pool}, {"site", g.site}});
  j["guard_failure_events"] = guards;

  j["pools"] = json::array();
  for (const auto& p : r.pools)
    j["pools"].push_back({{"name", p.name}, {"kind", to_string(p.kind)}, {"size", p.size ? json(p.size) : json(nullptr)},
                          {"peak_bytes", p.peak_bytes}, {"final_bytes", p.final_bytes},
                          {"live_blocks", optional(p.live_count)}, {"peak_margin_pct", optional(p.peak_margin_pct)},
                          {"peak_margin", p.peak_margin_pct ? json(*p.peak_margin_pct / 100) : json(nullptr)}});

  json marks = json::array();
  for (const auto& w : r.watermarks)
    marks.push_back({{"pool", w.pool}, {"samples", w.samples}, {"slope_bytes_per_inference", w.slope},
                     {"fit_line", w.fit_line ? json{{"from", {w.fit_line->from_inference, w.fit_line->from_bytes}},
                                                    {"to", {w.fit_line->to_inference, w.fit_line->to_bytes}}}
                                             : json(nullptr)},
                     {"shape", to_string(w.shape)},
                     {"stairs", {{"steps", w.stairs.steps}, {"step_bytes", w.stairs.step_bytes},
                                 {"period_inferences", w.stairs.steps >= 2 ? json(w.stairs.period_inferences) : json(nullptr)}}},
                     {"series", series(w.series)},
                     {"grew_until_inference", optional(w.grew_until_inference)},
                     {"late_rise", w.late_rise ? json{{"from_inference", w.late_rise->from_inference},
                                                      {"bytes_per_inference", w.late_rise->bytes_per_inference}}
                                               : json(nullptr)},
                     {"floor_trend", w.floor_trend ? json{{"bytes_per_inference", w.floor_trend->bytes_per_inference},
                                                          {"p_value", w.floor_trend->p_value},
                                                          {"inferences", w.floor_trend->inferences},
                                                          {"at_inference", w.floor_trend->at_inference}}
                                                    : json(nullptr)}});
  j["watermark"] = marks;

  json lifo_sites = json::array();
  for (const auto& l : r.lifo.sites)
    lifo_sites.push_back({{"site", l.site}, {"violations", l.violations}, {"bytes", l.bytes}});
  j["lifo"] = {{"violations", r.lifo.violations}, {"max_stranded_bytes", r.lifo.max_stranded_bytes},
               {"final_stranded_bytes", r.lifo.final_stranded_bytes}, {"sites", lifo_sites}};

  json holders = json::array();
  for (const auto& h : r.peak.live_at_peak)
    holders.push_back({{"site", h.site}, {"bytes", h.bytes}, {"count", h.count}});
  json per_inference = nullptr;
  if (r.inferences)
    per_inference = {{"max", r.peak.max_inference_peak}, {"max_at", r.peak.max_inference_index},
                     {"min", r.peak.min_inference_peak}, {"mean", r.peak.mean_inference_peak}};
  j["peak"] = {{"bytes", r.peak.bytes}, {"exact", r.peak.exact}, {"at_most", optional(r.peak.at_most)},
               {"time", r.peak.time}, {"inference", count_or_null(r.peak.inference)},
               {"boot", r.peak.boot}, {"live_at_peak", holders}, {"per_inference", per_inference}};

  json hist = json::array();
  for (const auto& b : r.sizes.histogram)
    hist.push_back({{"min", b.min}, {"max", b.max}, {"count", b.count}, {"bytes", b.bytes}});
  j["sizes"] = {{"histogram", hist},
                {"alignment", {{"aligned_requests", r.sizes.aligned_requests},
                               {"padding_bytes", r.sizes.padding_bytes},
                               {"padding_bytes_at_8", r.sizes.padding_bytes_at_8},
                               {"max_align", r.sizes.max_align}}}};

  json sites = json::array();
  for (const auto& s2 : r.sites)
    sites.push_back({{"site", s2.site}, {"allocs", s2.allocs}, {"frees", s2.frees},
                     {"alloc_bytes", s2.alloc_bytes}, {"live_bytes", s2.live_bytes}, {"live_count", s2.live_count}});
  j["sites"] = sites;
  j["sites_omitted"] = nullptr;
  if (const auto& o = r.sites_omitted)
    j["sites_omitted"] = {{"count", o->count}, {"allocs", o->allocs}, {"frees", o->frees}, {"alloc_bytes", o->alloc_bytes},
                          {"live_bytes", o->live_bytes}, {"live_count", o->live_count}};
  const EventCounts& c = r.counts;
  j["counts"] = {{"allocs", c.allocs}, {"frees", c.frees}, {"reallocs", c.reallocs}, {"failed", c.failed},
                 {"marks", c.marks}, {"counters", c.counters}, {"resets", c.resets},
                 {"unknown_frees", c.unknown_frees}, {"replaced_blocks", c.replaced_blocks},
                 {"summaries", c.summaries}, {"placements", c.placements}};
  j["layout"] = layout(r.layout);
  j["cycles_per_inference"] = optional(r.cycles_per_inference);
  j["clock_hz"] = optional(r.clock_hz);
  json timelines = json::array();
  for (const auto& t : r.timelines)
    timelines.push_back({{"pool", t.pool}, {"samples", t.samples}, {"used_bytes", series(t.used_bytes)},
                         {"live_blocks", series(t.live_blocks)}});
  j["timelines"] = timelines;
  json spans = json::array();
  for (const auto& s3 : r.inference_marks.spans)
    spans.push_back({{"inference", s3.number}, {"begin", count_or_null(s3.begin_time)}, {"end", count_or_null(s3.end_time)},
                     {"running", s3.running}});
  j["inference_marks"] = {{"total", r.inference_marks.total}, {"dropped", r.inference_marks.dropped}, {"spans", spans}};
  auto restart = [](const Restart& x) -> json {
    return {{"time", x.time}, {"during_inference", count_or_null(x.during_inference)},
            {"after_inference", count_or_null(x.after_inference)}, {"bytes_in_use", x.bytes_in_use},
            {"boot", x.boot}, {"inferences", x.inferences}, {"leak_check", check(x.leak_check)},
            {"leaking_groups", x.leaking_groups}, {"leaked_bytes", x.leaked_bytes},
            {"leak_bytes_per_inference",
             x.inferences && x.leak_rate_known ? json(x.leak_bytes_per_inference) : json(nullptr)},
            {"leaks", leaks_json(x.leaks)}};
  };
  // The worst boots and the first unjudged one, past the kept ones too (text and check name them).
  auto restart_or_null = [&](const std::optional<Restart>& x) { return x ? restart(*x) : json(nullptr); };
  json restarts = json::array();
  for (const Restart& x : r.restarts.kept) restarts.push_back(restart(x));
  j["restarts"] = {{"total", r.restarts.total}, {"dropped", r.restarts.total - r.restarts.kept.size()},
                   {"leaking_boots", r.restarts.leaking_boots}, {"unjudged_boots", r.restarts.unjudged_boots},
                   {"most_leaked", restart_or_null(r.restarts.most_leaked)},
                   {"fastest_leak", restart_or_null(r.restarts.fastest_leak)},
                   {"first_unjudged", restart_or_null(r.restarts.first_unjudged)}, {"kept", restarts}};
  j["threads"] = threads_json(r.threads);
  j["cross_thread_frees"] = cross_thread_frees_json(r.threads);
  j["temporary_allocations"] = temporaries_json(r.temporaries);
  j["checks"] = {{"leaks", check(r.checks.leaks)},
                 {"overflow", check(r.checks.overflow)},
                 {"guards", check(r.checks.guards)},
                 {"fragmentation", check(r.checks.fragmentation)},
                 {"lifo", check(r.checks.lifo)},
                 {"data_loss", check(data_loss_check(in.stats, r.counts))}};
  return j;
}

std::string json_report(const InputSummary& input, const AnalysisResult& result) {
  return to_json(input, result).dump(2, ' ', false, json::error_handler_t::replace);
}

}  // namespace edgemem
