// Perfetto's native trace (TracePacket / TrackEvent protobuf, written with
// the classes protoc generates from proto/perfetto_trace.proto). One
// sequence; a root track names the input and its time base; under it an
// "inferences" track of slices and, per pool, a group of counter tracks
// (used bytes, live blocks, fragmentation rate) and an events track of
// instants. Perfetto's JSON import is legacy and slow on big traces; this
// is the format its UI and trace processor read natively.
#include <optional>
#include <type_traits>
#include <variant>

#include <fmt/format.h>

#include "edgemem/exports.h"
#include "proto/perfetto_trace.pb.h"
#include "timeline_tracks.h"
#include "trace_clock.h"

namespace edgemem {

namespace pp = perfetto::protos;

namespace {

constexpr uint32_t kSequence = 1;  // every packet is on one writer's sequence

class TraceWriter {
 public:
  explicit TraceWriter(const TraceClock& clock) : clock_(clock) {}

  uint64_t track(const std::string& name, std::optional<uint64_t> parent, const std::string& description = "") {
    return describe(name, parent, description)->uuid();
  }
  uint64_t counter_track(const std::string& name, uint64_t parent, pp::CounterDescriptor::Unit unit,
                         const std::string& unit_name = "", const std::string& description = "") {
    pp::TrackDescriptor* d = describe(name, parent, description);
    d->mutable_counter()->set_unit(unit);
    if (!unit_name.empty()) d->mutable_counter()->set_unit_name(unit_name);
    return d->uuid();
  }

  void counter(uint64_t track, uint64_t time, uint64_t value) {
    event(track, time, pp::TrackEvent::TYPE_COUNTER)->set_counter_value(static_cast<int64_t>(value));
  }
  void counter(uint64_t track, uint64_t time, double value) {
    event(track, time, pp::TrackEvent::TYPE_COUNTER)->set_double_counter_value(value);
  }
  void instant(uint64_t track, const TimelineMark& m) {
    pp::TrackEvent* e = event(track, m.time, pp::TrackEvent::TYPE_INSTANT);
    e->set_name(m.name);
    for (const MarkArg& a : m.args) annotate(e, a);
  }
  void inference(uint64_t track, const InferenceSpan& s) {
    std::string name = fmt::format("inference {}", s.number);
    MarkArg number{"inference", s.number};
    if (s.begin_time && !s.end_time && !s.running) {
      // It never ended (its thread began another): an open slice would hold the rest of the trace.
      instant(track, {*s.begin_time, name + " begins (no end marker)", {number}});
    } else if (s.begin_time) {
      pp::TrackEvent* b = event(track, *s.begin_time, pp::TrackEvent::TYPE_SLICE_BEGIN);
      b->set_name(name);
      annotate(b, number);
      // One still running when the trace ended stays open: Perfetto marks it "did not end".
      if (s.end_time) event(track, *s.end_time, pp::TrackEvent::TYPE_SLICE_END);
    } else {
      instant(track, {*s.end_time, name + " ends (no begin marker)", {number}});
    }
  }
  std::string bytes() const { return trace_.SerializeAsString(); }

 private:
  pp::TrackDescriptor* describe(const std::string& name, std::optional<uint64_t> parent, const std::string& description) {
    pp::TrackDescriptor* d = packet()->mutable_track_descriptor();
    d->set_uuid(next_uuid_++);
    d->set_name(name);
    if (parent) d->set_parent_uuid(*parent);
    if (!description.empty()) d->set_description(description);
    return d;
  }
  pp::TracePacket* packet() {
    pp::TracePacket* p = trace_.add_packet();
    p->set_trusted_packet_sequence_id(kSequence);
    // The first packet starts the sequence's state; nothing here is interned.
    if (trace_.packet_size() == 1) p->set_sequence_flags(pp::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
    return p;
  }
  pp::TrackEvent* event(uint64_t track, uint64_t time, pp::TrackEvent::Type type) {
    pp::TracePacket* p = packet();
    p->set_timestamp(clock_.ns(time));
    pp::TrackEvent* e = p->mutable_track_event();
    e->set_type(type);
    e->set_track_uuid(track);
    return e;
  }
  static void annotate(pp::TrackEvent* e, const MarkArg& a) {
    pp::DebugAnnotation* d = e->add_debug_annotations();
    d->set_name(a.name);
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, uint64_t>) d->set_uint_value(v);
          else if constexpr (std::is_same_v<V, double>) d->set_double_value(v);
          else d->set_string_value(v);
        },
        a.value);
  }

  const TraceClock& clock_;
  pp::Trace trace_;
  uint64_t next_uuid_ = 1;
};

std::string pool_description(const PoolSummary& p) {
  std::string size = p.size ? fmt::format("{} B", p.size) : "size unknown";
  // An arena's usage is its top, padding and holes included: not the blocks' bytes.
  return fmt::format("{} pool, {}; peak {} B, {} B {} at the end ({})", to_string(p.kind), size, p.peak_bytes,
                     p.final_bytes, p.kind == PoolKind::arena ? "up to the top" : "in use",
                     p.live_count ? fmt::format("{} live block{}", *p.live_count, *p.live_count == 1 ? "" : "s")
                                  : "live blocks not known: summary records");
}

}  // namespace

std::string perfetto_trace(const InputSummary& input, const AnalysisResult& result) {
  TraceClock clock(input, result);
  TraceWriter w(clock);
  std::string root_name = "edgemem " + input.path;
  if (!clock.real()) root_name += input.time_base == TimeBase::cycles ? " (time: cycles, not ns)" : " (time: event number, not ns)";
  std::string notes = clock.description();
  for (const std::string& note : {inference_note(result), events_note(result)})
    if (!note.empty()) notes += "; " + note;
  uint64_t root = w.track(root_name, std::nullopt, notes);

  // Inferences that overlap (threads running several at once) on tracks of their own.
  std::vector<uint64_t> lane_tracks{w.track("inferences", root, inference_note(result))};
  const std::vector<InferenceSpan>& spans = result.inference_marks.spans;
  const std::vector<size_t> lanes = inference_lanes(spans);
  for (size_t i = 0; i < spans.size(); ++i) {
    while (lane_tracks.size() <= lanes[i])
      lane_tracks.push_back(w.track(fmt::format("inferences, overlapping ({})", lane_tracks.size() + 1), root,
                                    "inferences that began while one on the tracks above was still running"));
    w.inference(lane_tracks[lanes[i]], spans[i]);
  }

  for (const PoolTracks& t : pool_tracks(result)) {
    const std::string& name = t.pool->name;
    uint64_t group = w.track("pool " + name, root, pool_description(*t.pool));
    // A counter holds each value to the next point: a reduced series
    // says so, or a spike kept as one point reads as lasting to the next.
    auto reduced_note = [](uint64_t kept, uint64_t samples) {
      return samples > kept
                 ? fmt::format("{} of {} samples kept (each stretch keeps its first, lowest, highest and last): the "
                               "peaks and the end are exact, the value between two points is not the pool's",
                               kept, samples)
                 : std::string();
    };
    if (t.timeline) {
      const std::string reduced = reduced_note(t.timeline->used_bytes.size(), t.timeline->samples);
      uint64_t used = w.counter_track(name + " used bytes", group, pp::CounterDescriptor::UNIT_SIZE_BYTES, "", reduced);
      for (const auto& [time, v] : t.timeline->used_bytes) w.counter(used, time, v);
      if (!t.timeline->live_blocks.empty()) {  // a pool in summary mode tells no blocks
        uint64_t live = w.counter_track(name + " live blocks", group, pp::CounterDescriptor::UNIT_COUNT, "", reduced);
        for (const auto& [time, v] : t.timeline->live_blocks) w.counter(live, time, v);
      }
    }
    if (t.fragmentation) {
      uint64_t rate = w.counter_track(name + " fragmentation rate", group, pp::CounterDescriptor::UNIT_UNSPECIFIED,
                                      "1 - largest free / total free",
                                      reduced_note(t.fragmentation->curve.size(), t.fragmentation->samples));
      for (const auto& [time, v] : t.fragmentation->curve) w.counter(rate, time, v);
    }
    if (!t.marks.empty()) {
      uint64_t events = w.track(name + " events", group, "leaks (first and latest live block), failed allocations, "
                                                         "overflows, guard failures");
      for (const TimelineMark& m : t.marks) w.instant(events, m);
    }
  }
  return w.bytes();
}

}  // namespace edgemem
