// The Perfetto export read back two ways: with libprotobuf and the classes
// protoc made from proto/perfetto_trace.proto, and by hand from the wire
// format with Perfetto's field numbers, so a wrong number in our .proto
// cannot pass by being read back with the same wrong number.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string_view>

#include "edgemem/exports.h"
#include "proto/perfetto_trace.pb.h"
#include "report/exports_test_support.h"

namespace edgemem::test {
namespace {

namespace pp = perfetto::protos;

struct Decoded {
  std::map<std::string, uint64_t> track_by_name;
  std::map<uint64_t, const pp::TrackDescriptor*> tracks;
  std::map<uint64_t, std::vector<std::pair<uint64_t, double>>> counters;  // per track: (timestamp, value)
  std::map<uint64_t, std::vector<const pp::TrackEvent*>> events;         // instants and slices per track
};

Decoded decode(const pp::Trace& trace) {
  Decoded d;
  for (const pp::TracePacket& p : trace.packet()) {
    EXPECT_EQ(p.trusted_packet_sequence_id(), 1u);
    if (p.has_track_descriptor()) {
      d.tracks[p.track_descriptor().uuid()] = &p.track_descriptor();
      d.track_by_name[p.track_descriptor().name()] = p.track_descriptor().uuid();
    } else if (p.has_track_event()) {
      const pp::TrackEvent& e = p.track_event();
      if (e.type() == pp::TrackEvent::TYPE_COUNTER)
        d.counters[e.track_uuid()].emplace_back(p.timestamp(), e.has_counter_value() ? static_cast<double>(e.counter_value())
                                                                                    : e.double_counter_value());
      else
        d.events[e.track_uuid()].push_back(&e);
    }
  }
  return d;
}

TEST(PerfettoExport, TheDemoTraceDecodesWithEveryCounterOfTheAnalysis) {
  const TraceRun& run = demo_run();
  const AnalysisResult& r = run.result;
  ASSERT_FALSE(r.timelines.empty());
  pp::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(perfetto_trace(run.input, r)));
  Decoded d = decode(trace);
  ASSERT_TRUE(trace.packet(0).has_track_descriptor());
  EXPECT_EQ(trace.packet(0).sequence_flags(), 1u);  // SEQ_INCREMENTAL_STATE_CLEARED
  ASSERT_TRUE(r.clock_hz) << "the demo capture names its clock";
  const double ns_per_cycle = 1e9 / *r.clock_hz;

  for (const PoolTimeline& t : r.timelines) {
    ASSERT_TRUE(d.track_by_name.count(t.pool + " used bytes")) << t.pool;
    uint64_t used = d.track_by_name[t.pool + " used bytes"];
    EXPECT_EQ(d.tracks[used]->counter().unit(), pp::CounterDescriptor::UNIT_SIZE_BYTES);
    EXPECT_EQ(d.tracks[d.tracks[used]->parent_uuid()]->name(), "pool " + t.pool);
    const auto& values = d.counters[used];
    ASSERT_EQ(values.size(), t.used_bytes.size());
    for (size_t i = 0; i < values.size(); ++i) {
      EXPECT_EQ(values[i].second, static_cast<double>(t.used_bytes[i].second)) << i;
      EXPECT_NEAR(static_cast<double>(values[i].first), static_cast<double>(t.used_bytes[i].first) * ns_per_cycle, 1.0);
    }
    const auto& live = d.counters[d.track_by_name[t.pool + " live blocks"]];
    ASSERT_EQ(live.size(), t.live_blocks.size());
    for (size_t i = 0; i < live.size(); ++i) EXPECT_EQ(live[i].second, static_cast<double>(t.live_blocks[i].second));
  }
  for (const PoolFragmentation& f : r.fragmentation.pools) {
    const auto& rates = d.counters[d.track_by_name[f.pool + " fragmentation rate"]];
    ASSERT_EQ(rates.size(), f.curve.size()) << f.pool;
    for (size_t i = 0; i < rates.size(); ++i) EXPECT_DOUBLE_EQ(rates[i].second, f.curve[i].second);
  }

  // The leak shows as two instants (its first block still live, its latest), and every inference as a slice.
  ASSERT_FALSE(r.leaks.empty());
  size_t leak_marks = 0;
  for (const auto& [track, events] : d.events)
    for (const pp::TrackEvent* e : events)
      if (e->type() == pp::TrackEvent::TYPE_INSTANT && e->name().rfind("leak", 0) == 0) ++leak_marks;
  EXPECT_EQ(leak_marks, 2 * r.leaks.size());
  const auto& slices = d.events[d.track_by_name["inferences"]];
  size_t begins = std::count_if(slices.begin(), slices.end(), [](auto* e) { return e->type() == pp::TrackEvent::TYPE_SLICE_BEGIN; });
  ASSERT_GT(r.inference_marks.spans.size(), 0u);
  EXPECT_EQ(begins, r.inference_marks.spans.size());
  EXPECT_EQ(slices.front()->name(), "inference " + std::to_string(r.inference_marks.spans.front().number));
}

// A protobuf wire reader of our own: (field number, wire type, varint or bytes).
struct Field {
  uint32_t number = 0, type = 0;
  uint64_t varint = 0;
  std::string_view bytes;
};

uint64_t varint(std::string_view& in) {
  uint64_t v = 0;
  for (int shift = 0; !in.empty(); shift += 7) {
    auto b = static_cast<uint8_t>(in.front());
    in.remove_prefix(1);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  throw std::runtime_error("truncated varint");
}

std::vector<Field> fields(std::string_view in) {
  std::vector<Field> out;
  while (!in.empty()) {
    uint64_t key = varint(in);
    Field f;
    f.number = static_cast<uint32_t>(key >> 3);
    f.type = static_cast<uint32_t>(key & 7);
    if (f.type == 0) {
      f.varint = varint(in);
    } else if (f.type == 2) {
      uint64_t n = varint(in);
      f.bytes = in.substr(0, n);
      in.remove_prefix(n);
    } else if (f.type == 1) {  // fixed64: double_counter_value
      f.bytes = in.substr(0, 8);
      in.remove_prefix(8);
    } else {
      throw std::runtime_error("unexpected wire type " + std::to_string(f.type));
    }
    out.push_back(f);
  }
  return out;
}

const Field* find(const std::vector<Field>& fs, uint32_t number) {
  for (const Field& f : fs)
    if (f.number == number) return &f;
  return nullptr;
}

TEST(PerfettoExport, TheBytesCarryPerfettosFieldNumbersReadByHand) {
  const TraceRun& run = demo_run();
  std::string bytes = perfetto_trace(run.input, run.result);
  // Trace.packet = 1, length-delimited: the file starts with tag 0x0a.
  ASSERT_EQ(static_cast<uint8_t>(bytes[0]), 0x0a);
  std::vector<Field> packets = fields(bytes);
  for (const Field& p : packets) ASSERT_EQ(p.number, 1u);

  // The first packet: trusted_packet_sequence_id = 10, sequence_flags = 13,
  // track_descriptor = 60 {uuid = 1, name = 2}.
  std::vector<Field> first = fields(packets[0].bytes);
  ASSERT_TRUE(find(first, 10) && find(first, 13) && find(first, 60));
  EXPECT_EQ(find(first, 10)->varint, 1u);
  EXPECT_EQ(find(first, 13)->varint, 1u);
  std::vector<Field> root = fields(find(first, 60)->bytes);
  ASSERT_TRUE(find(root, 1) && find(root, 2));
  EXPECT_EQ(find(root, 2)->bytes, "edgemem " + run.input.path);
  // The raw tag of track_descriptor: (60 << 3) | 2 = 482 = varint e2 03.
  EXPECT_NE(packets[0].bytes.find("\xe2\x03"), std::string_view::npos);

  // The used-bytes counter of the first pool: a descriptor with
  // counter = 8 {unit = 3: UNIT_SIZE_BYTES}, then events with timestamp = 8
  // and track_event = 11 {type = 9: 4 (COUNTER), track_uuid = 11, counter_value = 30}.
  const PoolTimeline& t = run.result.timelines.front();
  uint64_t uuid = 0;
  std::vector<uint64_t> values;
  for (const Field& p : packets) {
    std::vector<Field> packet = fields(p.bytes);
    if (const Field* d = find(packet, 60)) {
      std::vector<Field> desc = fields(d->bytes);
      if (find(desc, 2) && find(desc, 2)->bytes == t.pool + " used bytes") {
        uuid = find(desc, 1)->varint;
        ASSERT_TRUE(find(desc, 8));
        EXPECT_EQ(find(fields(find(desc, 8)->bytes), 3)->varint, 3u);
      }
    } else if (const Field* e = find(packet, 11)) {
      std::vector<Field> event = fields(e->bytes);
      if (uuid && find(event, 11) && find(event, 11)->varint == uuid) {
        EXPECT_EQ(find(event, 9)->varint, 4u);
        ASSERT_TRUE(find(packet, 8));
        ASSERT_TRUE(find(event, 30));
        values.push_back(find(event, 30)->varint);
      }
    }
  }
  ASSERT_NE(uuid, 0u);
  ASSERT_EQ(values.size(), t.used_bytes.size());
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(values[i], t.used_bytes[i].second);
}

TEST(PerfettoExport, WithoutAClockTheRootTrackSaysTimeIsNotNanoseconds) {
  AnalysisResult r;
  r.inference_marks.spans.push_back({7, 100, 250});
  r.inference_marks.total = 1;
  InputSummary input{"t.log", "log", {}, TimeBase::sequence};
  pp::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(perfetto_trace(input, r)));
  EXPECT_EQ(trace.packet(0).track_descriptor().name(), "edgemem t.log (time: event number, not ns)");
  EXPECT_NE(trace.packet(0).track_descriptor().description().find("sequence number"), std::string::npos);
  // The inference slice keeps the raw numbers as its timestamps.
  std::vector<uint64_t> stamps;
  for (const auto& p : trace.packet())
    if (p.has_track_event()) stamps.push_back(p.timestamp());
  EXPECT_EQ(stamps, (std::vector<uint64_t>{100, 250}));
}

// A begin whose end never came (its thread began another) is an instant:
// an open slice would nest the next inferences inside it to the trace's end.
// One still running when the trace ended stays open, last or not.
TEST(PerfettoExport, OnlyAnInferenceStillRunningStaysOpen) {
  AnalysisResult r;
  r.inference_marks.spans = {{1, 10, std::nullopt}, {2, 60, 70}, {3, 80, std::nullopt, true}};
  r.inference_marks.total = 3;
  pp::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(perfetto_trace({"t.log", "log", {}, TimeBase::sequence}, r)));
  Decoded d = decode(trace);
  std::vector<std::pair<int, std::string>> seen;  // type, name
  for (const pp::TrackEvent* e : d.events[d.track_by_name.at("inferences")]) seen.emplace_back(e->type(), e->name());
  using T = pp::TrackEvent;
  EXPECT_EQ(seen, (std::vector<std::pair<int, std::string>>{{T::TYPE_INSTANT, "inference 1 begins (no end marker)"},
                                                             {T::TYPE_SLICE_BEGIN, "inference 2"},
                                                             {T::TYPE_SLICE_END, ""},
                                                             {T::TYPE_SLICE_BEGIN, "inference 3"}}));
  // Thread 1's inference 2 still running while thread 2 ran 3 and 4: it was
  // "inference 2 begins (no end marker)", since only the last could stay open.
  r.inference_marks.spans = {{1, 5, 6}, {2, 10, std::nullopt, true}, {3, 20, 30}, {4, 40, 50}};
  ASSERT_TRUE(trace.ParseFromString(perfetto_trace({"t.log", "log", {}, TimeBase::sequence}, r)));
  d = decode(trace);
  std::map<std::string, std::vector<std::pair<int, std::string>>> lanes;
  for (const pp::TracePacket& p : trace.packet())
    if (p.has_track_event() && p.track_event().type() != T::TYPE_COUNTER)
      lanes[d.tracks.at(p.track_event().track_uuid())->name()].emplace_back(p.track_event().type(), p.track_event().name());
  using Lane = std::vector<std::pair<int, std::string>>;
  EXPECT_EQ(lanes["inferences"], (Lane{{T::TYPE_SLICE_BEGIN, "inference 1"}, {T::TYPE_SLICE_END, ""},
                                       {T::TYPE_SLICE_BEGIN, "inference 2"}}));
  EXPECT_EQ(lanes["inferences, overlapping (2)"], (Lane{{T::TYPE_SLICE_BEGIN, "inference 3"}, {T::TYPE_SLICE_END, ""},
                                                        {T::TYPE_SLICE_BEGIN, "inference 4"}, {T::TYPE_SLICE_END, ""}}));
}

// Inferences of several threads overlap and end in any order: on one track
// an end closes the latest begun, so inference 2 read 2 -> 6 and inference 1
// read 1 -> 8. Each slice now nests nothing: overlapping ones get their own
// track.
TEST(PerfettoExport, OverlappingInferencesAreSlicesOfTheirOwnTracks) {
  AnalysisResult r;
  r.inference_marks.spans = {{1, 1, 6}, {2, 2, 8}, {3, 7, 9}, {4, 10, std::nullopt, true}};
  r.inference_marks.total = 4;
  pp::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(perfetto_trace({"t.log", "log", {}, TimeBase::sequence}, r)));
  Decoded d = decode(trace);
  std::map<std::string, std::vector<std::pair<uint64_t, std::string>>> slices;  // per track: (time, begin name or "end")
  for (const pp::TracePacket& p : trace.packet())
    if (p.has_track_event() && p.track_event().type() != pp::TrackEvent::TYPE_COUNTER)
      slices[d.tracks.at(p.track_event().track_uuid())->name()].emplace_back(
          p.timestamp(), p.track_event().type() == pp::TrackEvent::TYPE_SLICE_END ? "end" : p.track_event().name());
  using Track = std::vector<std::pair<uint64_t, std::string>>;
  EXPECT_EQ(slices["inferences"], (Track{{1, "inference 1"}, {6, "end"}, {7, "inference 3"}, {9, "end"},
                                         {10, "inference 4"}}));
  EXPECT_EQ(slices["inferences, overlapping (2)"], (Track{{2, "inference 2"}, {8, "end"}}));
  EXPECT_EQ(slices.size(), 2u);
}

// A viewer holds a counter's value to its next point: a reduced series
// says so on its tracks (a one-event spike read as lasting 72 inferences).
TEST(PerfettoExport, AReducedCounterSaysSo) {
  AnalysisResult r;
  r.pools.push_back({"heap", PoolKind::heap, 0, 100, 0, 0, std::nullopt});
  PoolTimeline t;
  t.pool = "heap";
  for (uint64_t i = 0; i < 3; ++i) t.used_bytes.push_back({i * 10, i * 100});
  t.samples = 3;
  r.timelines.push_back(t);
  auto described = [&](const AnalysisResult& result) {
    pp::Trace trace;
    EXPECT_TRUE(trace.ParseFromString(perfetto_trace({"t.log", "log", {}, TimeBase::sequence}, result)));
    Decoded d = decode(trace);
    return d.tracks.at(d.track_by_name.at("heap used bytes"))->description();
  };
  EXPECT_EQ(described(r), "");
  r.timelines[0].samples = 18002;
  EXPECT_EQ(described(r).rfind("3 of 18002 samples kept", 0), 0u) << described(r);

  // The fragmentation curve is reduced the same way (its track once said nothing).
  PoolFragmentation f;
  f.pool = "heap";
  f.curve = {{0, 0.0}, {10, 0.5}};
  f.samples = 2001;
  r.fragmentation.pools.push_back(f);
  pp::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(perfetto_trace({"t.log", "log", {}, TimeBase::sequence}, r)));
  Decoded d = decode(trace);
  EXPECT_EQ(d.tracks.at(d.track_by_name.at("heap fragmentation rate"))->description().rfind("2 of 2001 samples kept", 0),
            0u);
}

}  // namespace
}  // namespace edgemem::test
