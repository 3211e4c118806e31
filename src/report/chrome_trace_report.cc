// Chrome's Trace Event Format (JSON object form), for chrome://tracing and
// Perfetto's legacy importer: one process per pool holding its counters
// ("C") and events ("i"), and a process for the inferences ("X", or "B"
// for one still running at the end). Timestamps are microseconds.
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "edgemem/exports.h"
#include "timeline_tracks.h"
#include "trace_clock.h"

namespace edgemem {

using nlohmann::json;

namespace {

json args_of(const std::vector<MarkArg>& args) {
  json out = json::object();
  for (const MarkArg& a : args) std::visit([&](const auto& v) { out[a.name] = v; }, a.value);
  return out;
}

class Writer {
 public:
  explicit Writer(const TraceClock& clock) : clock_(clock) {}
  double us(uint64_t time) const { return static_cast<double>(clock_.ns(time)) / 1000.0; }
  void process(int pid, const std::string& name, int sort_index) {
    events_.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", name}}}});
    events_.push_back(
        {{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"tid", 0}, {"args", {{"sort_index", sort_index}}}});
  }
  template <typename Y>
  void counter(int pid, const std::string& name, const std::string& key, const std::vector<std::pair<uint64_t, Y>>& s) {
    for (const auto& [time, value] : s)
      events_.push_back({{"ph", "C"}, {"name", name}, {"pid", pid}, {"tid", 0}, {"ts", us(time)}, {"args", {{key, value}}}});
  }
  void instant(int pid, uint64_t time, const std::string& name, json args) {
    events_.push_back({{"ph", "i"}, {"s", "p"}, {"name", name}, {"pid", pid}, {"tid", 0}, {"ts", us(time)},
                       {"args", std::move(args)}});
  }
  // `lane`: the thread row it is drawn on, so overlapping ones do not nest.
  void inference(int pid, const InferenceSpan& s, size_t lane) {
    std::string name = "inference " + std::to_string(s.number);
    json args = {{"inference", s.number}};
    if (s.begin_time && s.end_time)
      events_.push_back({{"ph", "X"}, {"name", name}, {"pid", pid}, {"tid", lane}, {"ts", us(*s.begin_time)},
                         {"dur", us(*s.end_time) - us(*s.begin_time)}, {"args", args}});
    else if (s.begin_time && s.running)  // still running when the trace ended: a begin without its end
      events_.push_back({{"ph", "B"}, {"name", name}, {"pid", pid}, {"tid", lane}, {"ts", us(*s.begin_time)}, {"args", args}});
    else if (s.begin_time)  // it never ended (its thread began another): its end is unknown
      instant(pid, *s.begin_time, name + " begins (no end marker)", args);
    else
      instant(pid, *s.end_time, name + " ends (no begin marker)", args);
  }
  json take() { return std::move(events_); }

 private:
  const TraceClock& clock_;
  json events_ = json::array();
};

}  // namespace

std::string chrome_trace_json(const InputSummary& input, const AnalysisResult& result) {
  TraceClock clock(input, result);
  Writer w(clock);
  const int inferences_pid = 1;
  w.process(inferences_pid, "inferences", 0);
  const std::vector<InferenceSpan>& spans = result.inference_marks.spans;
  const std::vector<size_t> lanes = inference_lanes(spans);
  for (size_t i = 0; i < spans.size(); ++i) w.inference(inferences_pid, spans[i], lanes[i]);
  int pid = inferences_pid;
  for (const PoolTracks& t : pool_tracks(result)) {
    ++pid;
    w.process(pid, "pool " + t.pool->name, pid);
    if (t.timeline) {
      w.counter(pid, "used bytes", "bytes", t.timeline->used_bytes);
      if (!t.timeline->live_blocks.empty()) w.counter(pid, "live blocks", "blocks", t.timeline->live_blocks);
    }
    if (t.fragmentation) w.counter(pid, "fragmentation rate", "rate", t.fragmentation->curve);
    for (const TimelineMark& m : t.marks) w.instant(pid, m.time, m.name, args_of(m.args));
  }
  json other = {{"source", input.path}, {"format", input.format}, {"time", clock.description()}};
  if (std::string note = inference_note(result); !note.empty()) other["inferences"] = note;
  if (std::string note = events_note(result); !note.empty()) other["events"] = note;
  json doc = {{"traceEvents", w.take()}, {"displayTimeUnit", "ns"}, {"otherData", other}};
  return doc.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace edgemem
