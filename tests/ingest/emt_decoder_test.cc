#include <gtest/gtest.h>

#include "ingest/emt_decoder.h"
#include "test_support.h"

namespace edgemem::test {
namespace {

// The byte-level example of docs/formats/emt.md.
const std::string kExample(
    "\x7E" "emt!" "\x00"                               // SYNC, time 0
    "\x01\x01\xC0\xF0\xF5\x0B"                         // HEADER v1, 25 MHz
    "\x02\x00\x01\x00\x80\x80\x01\x00\x05" "arena" "\x00"  // POOL 0 arena, 16384 B
    "\x03\x01\x07" "model.c"                           // STRING 1
    "\x14\x0A\x01"                                     // INFER begin 1, dt 10
    "\x10\x05\x00\x00\x84\x05\x04\xF4\x80\x80\x01"     // ALLOC dt 5 offset 0, 644 B, align 4, model.c:58
    "\x15\x64\x01",                                    // INFER end 1, dt 100
    54);

TEST(Emt, DecodesTheDocumentedExample) {
  auto run = analyse(Format::emt, kExample);
  EXPECT_EQ(run->stats.corrupt_bytes, 0u);
  EXPECT_EQ(run->stats.events, 3u);
  ASSERT_EQ(run->context.pools.size(), 1u);
  EXPECT_EQ(run->context.pools.at(0).name, "arena");
  EXPECT_EQ(run->context.pools.at(0).size, 16384u);
  EXPECT_EQ(run->context.pools.at(0).kind, PoolKind::arena);
  ASSERT_EQ(run->result.persistent.size(), 1u);
  EXPECT_EQ(run->result.persistent[0].site, "model.c:58");
  EXPECT_EQ(run->result.persistent[0].bytes, 644u);
  EXPECT_EQ(run->result.peak.time, 15u);
}

// The fixed-width records the device writes on its hot path.
TEST(Emt, FixedWidthAllocAndFree) {
  // Pool 0 is not declared (a stream joined after its POOL records): its
  // kind is a guess, so address 0 is a block (an arena's first offset), not NULL.
  std::string s = std::string("\x7E" "emt!" "\x00", 6) +
                  std::string("\x20\x05\x00\x04\x00\x00\x00\x00\x84\x02\x00\x00\x74\x00\x20\x00", 16) +
                  std::string("\x03\x01\x07" "model.c", 10) +  // a STRING between events
                  std::string("\x21\x03\x00\x00\x00\x00\x00\x74\x00\x20\x00", 11);
  auto run = analyse(Format::emt, s);
  EXPECT_EQ(run->stats.corrupt_bytes, 0u);
  EXPECT_EQ(run->result.counts.allocs, 1u);
  EXPECT_EQ(run->result.counts.frees, 1u);
  EXPECT_EQ(run->result.counts.unknown_frees, 0u);
  EXPECT_EQ(run->result.peak.bytes, 644u);
  EXPECT_EQ(run->result.sizes.aligned_requests, 1u);
}

// Version 1 is the device library's: a 32-bit target, where a block over
// 1 GiB is damaged input (bytes lost over a TCP reconnect), not a 2.5 GB
// "overflow" of a 16 KB arena, as seed binary records are judged.
TEST(Emt, ABlockOverOneGibFromADeviceIsImpossible) {
  std::string s = std::string("\x7E" "emt!" "\x00", 6) + std::string("\x01\x01\x00", 3) +  // HEADER v1
                  std::string("\x20\x05\x00\x04\x29\x02\x00\x21\x51\x1C\x58\x95\x00\x00\x00\x00", 16) +
                  std::string("\x20\x05\x00\x04\x00\x00\x00\x20\x84\x02\x00\x00\x00\x00\x00\x00", 16);
  auto run = analyse(Format::emt, s);
  EXPECT_EQ(run->stats.impossible_events, 1u);
  EXPECT_EQ(run->result.counts.allocs, 1u);
  EXPECT_EQ(run->result.peak.bytes, 644u);
}

// A board that reboots mid-capture: the device library writes SYNC and
// HEADER again at each boot. The second boot's blocks at the first boot's
// addresses were "allocations over a live block" (data lost) and its time
// went back; each pool is reset there and time continues.
TEST(Emt, ADeviceThatStartsAgainResetsItsPoolsAndItsTimeGoesOn) {
  auto boot = [](uint8_t sync_time) {
    std::string b = std::string("\x7E" "emt!", 5) + static_cast<char>(sync_time) + std::string("\x01\x01\x00", 3);
    b += std::string("\x02\x00\x00\x80\x80\x80\x80\x02\x80\x20\x08\x04heap\x00", 17);  // heap at 0x20000000, 4 KiB
    b += std::string("\x20\x05\x00\x08\x00\x00\x00\x20\x40\x00\x00\x00\x00\x00\x00\x00", 16);  // 64 B at 0x20000000
    return b;
  };
  auto run = analyse(Format::emt, boot(100) + boot(40));
  EXPECT_EQ(run->stats.device_restarts, 1u);
  EXPECT_EQ(run->stats.time_went_back, 0u);
  EXPECT_EQ(run->result.counts.replaced_blocks, 0u);
  EXPECT_EQ(run->result.counts.resets, 1u);
  ASSERT_EQ(run->result.pools.size(), 1u);
  EXPECT_EQ(run->result.pools[0].live_count, 1u);
  EXPECT_EQ(run->result.pools[0].final_bytes, 64u);
  EXPECT_EQ(data_loss_check(run->stats, run->result.counts).status, CheckStatus::clean);
  EXPECT_EQ(run->result.peak.bytes, 64u);
}

// A board that leaks until it reboots: each boot leaks 32 B per inference
// from empty. Judged as one run, no boot passed the first one's height and
// the capture read "no leak"; the leak is judged within the latest boot.
TEST(Emt, ALeakThatEachBootRepeatsIsFound) {
  auto boot = [] {
    std::string b = std::string("\x7E" "emt!" "\x00", 6) + std::string("\x01\x01\x00", 3);
    b += std::string("\x02\x00\x00\x80\x80\x80\x80\x02\x80\x80\x04\x08\x04heap\x00", 18);  // 64 KiB at 0x20000000
    for (uint32_t i = 1; i <= 100; ++i) {
      b += std::string("\x14\x01", 2) + static_cast<char>(i);                                     // INFER begin i
      std::string alloc("\x20\x01\x00\x08\x00\x00\x00\x20\x20\x00\x00\x00\x00\x00\x00\x00", 16);  // 32 B
      const uint32_t at = 0x20008000 + 32 * i;
      for (int k = 0; k < 4; ++k) alloc[4 + k] = static_cast<char>(at >> (8 * k));
      b += alloc + std::string("\x15\x01", 2) + static_cast<char>(i);                              // INFER end i
    }
    return b;
  };
  auto run = analyse(Format::emt, boot() + boot() + boot());
  EXPECT_EQ(run->stats.device_restarts, 2u);
  ASSERT_EQ(run->result.leaks.size(), 1u);
  EXPECT_DOUBLE_EQ(*run->result.leaks[0].bytes_per_inference, 32.0);
  EXPECT_EQ(run->result.leaks[0].bytes, 100u * 32);
}

// A board that went down inside its 5th inference: the report says so, with
// what it held, and that inference is not counted as one that completed.
TEST(Emt, ARestartSaysWhatTheDeviceWasDoing) {
  auto boot = [](int inferences, bool ends_last) {
    std::string b = std::string("\x7E" "emt!" "\x00", 6) + std::string("\x01\x01\x00", 3);
    b += std::string("\x02\x00\x00\x80\x80\x80\x80\x02\x80\x80\x04\x08\x04heap\x00", 18);  // 64 KiB at 0x20000000
    for (int i = 1; i <= inferences; ++i) {
      b += std::string("\x14\x01", 2) + static_cast<char>(i);                                     // INFER begin i
      std::string alloc("\x20\x01\x00\x08\x00\x00\x00\x20\x20\x00\x00\x00\x00\x00\x00\x00", 16);  // 32 B
      const uint32_t at = 0x20008000 + 32 * i;
      for (int k = 0; k < 4; ++k) alloc[4 + k] = static_cast<char>(at >> (8 * k));
      b += alloc;
      if (i < inferences || ends_last) b += std::string("\x15\x01", 2) + static_cast<char>(i);  // INFER end i
    }
    return b;
  };
  auto run = analyse(Format::emt, boot(5, false) + boot(3, true) + boot(2, true));
  ASSERT_EQ(run->result.restarts.total, 2u);
  ASSERT_EQ(run->result.restarts.kept.size(), 2u);
  EXPECT_EQ(run->result.restarts.kept[0].during_inference, 5u);
  EXPECT_EQ(run->result.restarts.kept[0].after_inference, std::nullopt);
  EXPECT_EQ(run->result.restarts.kept[0].bytes_in_use, 5u * 32);
  EXPECT_EQ(run->result.restarts.kept[1].during_inference, std::nullopt);
  EXPECT_EQ(run->result.restarts.kept[1].after_inference, 3u);
  EXPECT_EQ(run->result.restarts.kept[1].bytes_in_use, 3u * 32);
  EXPECT_EQ(run->result.inferences, 4u + 3 + 2);

  // Died in its first inference, before any end marker: never ended, in
  // any series (it was ended at the restart, and only its count taken back).
  auto first = analyse(Format::emt, boot(1, false) + boot(2, true));
  ASSERT_EQ(first->result.restarts.kept.size(), 1u);
  EXPECT_EQ(first->result.restarts.kept[0].during_inference, 1u);
  EXPECT_EQ(first->result.inferences, 2u);
  ASSERT_EQ(first->result.inference_marks.spans.size(), 3u);
  EXPECT_EQ(first->result.inference_marks.spans[0].end_time, std::nullopt);
  ASSERT_EQ(first->result.watermarks.size(), 1u);
  EXPECT_EQ(first->result.watermarks[0].series.size(), 2u);

  // Firmware that marks only begins: the last inference may have finished.
  std::string begins_only = boot(3, false);
  for (size_t at; (at = begins_only.find(std::string("\x15\x01", 2))) != std::string::npos;) begins_only.erase(at, 3);
  auto begins = analyse(Format::emt, begins_only + begins_only);
  ASSERT_EQ(begins->result.restarts.kept.size(), 1u);
  EXPECT_EQ(begins->result.restarts.kept[0].during_inference, std::nullopt);
  EXPECT_EQ(begins->result.restarts.kept[0].after_inference, 3u);
}

TEST(Emt, ChunkBoundariesDoNotMatter) {
  for (size_t chunk : {1u, 2u, 3u, 7u}) {
    auto run = analyse(Format::emt, kExample, {}, chunk);
    EXPECT_EQ(run->stats.events, 3u) << chunk;
    EXPECT_EQ(run->stats.corrupt_bytes, 0u) << chunk;
  }
}

TEST(Emt, DamageIsSkippedUpToTheNextSync) {
  std::string damaged = kExample;
  damaged[27] = '\x55';  // the STRING record's tag: not a record
  damaged += std::string("\x7E" "emt!" "\x90\x4E", 7);                 // SYNC at 10000
  damaged += std::string("\x10\x00\x00\x80\x01\x10\x04\x00", 8);       // ALLOC 16 B at offset 128
  auto run = analyse(Format::emt, damaged);
  EXPECT_GT(run->stats.corrupt_bytes, 0u);
  ASSERT_TRUE(run->stats.first_problem);
  EXPECT_EQ(run->stats.first_problem->offset, 27u);
  EXPECT_EQ(run->result.counts.allocs, 1u);  // the ALLOC after the SYNC survives
  EXPECT_EQ(run->result.peak.time, 10000u);
}

TEST(Emt, DeviceDropsAreReported) {
  std::string s = std::string("\x7E" "emt!" "\x00", 6) + std::string("\x04\x07", 2) +
                  std::string("\x14\x01\x01", 3);
  auto run = analyse(Format::emt, s);
  EXPECT_EQ(run->stats.dropped_records, 7u);
  // Counted as they arrive: `watch` reads progress() while the device runs
  // (they once showed only at the end, with no data-loss alert until then).
  TraceContext context;
  struct Nothing : EventSink {
    void on_event(const Event&) override {}
  } sink;
  auto decoder = make_decoder(Format::emt, context, sink);
  decoder->feed({reinterpret_cast<const uint8_t*>(s.data()), 8});
  EXPECT_EQ(decoder->progress().dropped_records, 7u);
}

TEST(Emt, FirmwareCaptureIsReadWhole) {
  std::string bytes = read_file(std::string(EDGEMEM_SOURCE_DIR) + "/examples/traces/kws_leak.emt");
  ASSERT_FALSE(bytes.empty());
  EXPECT_EQ(sniff_trace({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}).format, Format::emt);
  auto run = analyse(Format::emt, bytes);
  EXPECT_EQ(run->stats.corrupt_bytes, 0u);
  EXPECT_EQ(run->stats.truncated_bytes, 0u);
  EXPECT_EQ(run->result.inferences, 50u);
  ASSERT_EQ(run->result.leaks.size(), 1u);
  EXPECT_EQ(run->result.leaks[0].bytes, 32200u);
}

}  // namespace
}  // namespace edgemem::test

namespace edgemem::test {
namespace {

std::span<const uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::vector<Event> decode_emt(const std::string& bytes, size_t chunk) {
  TraceContext ctx;
  Recorder sink;
  EmtDecoder decoder(ctx, sink);
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  for (size_t i = 0; i < bytes.size(); i += chunk) decoder.feed({p + i, std::min(chunk, bytes.size() - i)});
  decoder.finish();
  return sink.events;
}

bool same(const Event& a, const Event& b) {
  return a.time == b.time && a.kind == b.kind && a.address == b.address && a.size == b.size &&
         a.old_address == b.old_address && a.site == b.site && a.pool == b.pool && a.align == b.align;
}

// A record that straddles two reads used to have its time delta added once
// per attempt to parse it: 890 cycles per inference read whole, 913 through
// a pipe in 16-byte writes.
TEST(Emt, ARecordStraddlingReadsKeepsItsTime) {
  std::string bytes = read_file(std::string(EDGEMEM_SOURCE_DIR) + "/examples/traces/kws_leak.emt");
  ASSERT_FALSE(bytes.empty());
  std::vector<Event> whole = decode_emt(bytes, bytes.size());
  ASSERT_GT(whole.size(), 100u);
  for (size_t chunk : {1u, 2u, 3u, 5u, 16u, 17u, 4096u}) {
    std::vector<Event> split = decode_emt(bytes, chunk);
    ASSERT_EQ(split.size(), whole.size()) << chunk;
    for (size_t i = 0; i < whole.size(); ++i)
      ASSERT_TRUE(same(split[i], whole[i])) << "chunk " << chunk << ", event " << i << ": time " << split[i].time
                                            << " instead of " << whole[i].time;
  }
}

// A 400 MHz CYCCNT wraps every 10.7 s, and the device library sends a SYNC
// every 256 records: at one inference a second they span several wraps. The
// SYNC's 32-bit time is taken in the wrap the records' deltas reached; taken
// against the previous SYNC's alone, time went back by 2^32, unsaid.
TEST(Emt, ASyncAfterSeveralClockWrapsKeepsTimeGoingOn) {
  const std::string sync0("\x7E" "emt!" "\x00", 6), header("\x01\x01\x00", 3);
  const std::string begin_after_0x70000000("\x14\x80\x80\x80\x80\x07\x01", 7);  // INFER begin 1
  const std::string sync_at_0x50000010("\x7E" "emt!" "\x90\x80\x80\x80\x05", 10);  // 0x1'5000'0010, wrapped
  const std::string end_after_1("\x15\x01\x01", 3);                                  // INFER end 1
  std::string s = sync0 + header;
  for (int i = 0; i < 3; ++i) s += begin_after_0x70000000;
  s += sync_at_0x50000010 + end_after_1;
  for (size_t chunk : {s.size(), size_t{1}}) {
    std::vector<Event> events = decode_emt(s, chunk);
    ASSERT_EQ(events.size(), 4u);
    EXPECT_EQ(events[0].time, 0x70000000u);
    EXPECT_EQ(events[2].time, 0x150000000u);
    EXPECT_EQ(events[3].time, 0x150000011u) << "chunk " << chunk;
  }
}

// A live stream that stops and goes on (`watch tcp://`: the server hung up
// and was reconnected) is cut there. Between records of a stream with
// check bytes, it goes on being read: a server that buffers resumes where
// it stopped and loses nothing (every record up to the next SYNC was
// skipped); without check bytes, or inside a record, the next SYNC is
// waited for, as bytes from elsewhere would read as events.
TEST(Emt, AStreamCutBetweenCheckedRecordsLosesNothing) {
  auto checked = [](std::string record) {
    uint8_t x = 0;
    for (char c : record) x ^= static_cast<uint8_t>(c);
    return record + static_cast<char>(x);
  };
  const std::string begin_1 = checked(std::string("\x14\x0A\x01", 3)), end_1 = checked(std::string("\x15\x05\x01", 3));
  const std::string begin_2 = checked(std::string("\x14\x0A\x02", 3)), end_2 = checked(std::string("\x15\x05\x02", 3));
  const std::string head = checked(std::string("\x7E" "emt#" "\x00", 6)) + checked(std::string("\x01\x01\x00", 3));
  auto cut_after = [&](const std::string& before, const std::string& after) {
    TraceContext ctx;
    Recorder sink;
    EmtDecoder decoder(ctx, sink);
    decoder.feed(bytes_of(before));
    decoder.cut();
    decoder.feed(bytes_of(after));
    decoder.finish();
    return std::make_pair(sink.events.size(), decoder.stats().corrupt_bytes + decoder.stats().truncated_bytes);
  };
  EXPECT_EQ(cut_after(head + begin_1 + end_1, begin_2 + end_2), std::make_pair(size_t{4}, uint64_t{0}));
  // Inside a record: the half before the cut and what follows up to a SYNC are lost.
  EXPECT_EQ(cut_after(head + begin_1 + end_1.substr(0, 2), end_1.substr(2) + begin_2 + end_2).first, 1u);
}

// Pools and strings take effect only once their record is complete.
TEST(Emt, AHalfReadPoolRecordDeclaresNothing) {
  std::string s = std::string("\x7E" "emt!" "\x00", 6) + std::string("\x02\x00\x01\x00\x80\x80\x01\x00\x05" "are", 12);
  TraceContext ctx;
  Recorder sink;
  EmtDecoder decoder(ctx, sink);
  decoder.feed(bytes_of(s));
  EXPECT_EQ(ctx.pools.size(), 0u);
  decoder.feed(bytes_of(std::string("na\x00", 3)));
  ASSERT_EQ(ctx.pools.size(), 1u);
  EXPECT_EQ(ctx.pools.at(0).name, "arena");
  EXPECT_TRUE(ctx.pools.at(0).declared);
}

// A text longer than any record is damage: skipped to the next SYNC.
TEST(Emt, AnImpossiblyLongTextIsSkippedToTheNextSync) {
  std::string s = std::string("\x7E" "emt!" "\x00", 6) + std::string("\x18\x01\xFF\xFF\x03", 5) + "xx" +
                  std::string("\x7E" "emt!" "\x00", 6) + std::string("\x14\x01\x01", 3);
  auto run = analyse(Format::emt, s);
  EXPECT_EQ(run->stats.corrupt_bytes, 7u);
  EXPECT_EQ(run->stats.events, 1u);
  ASSERT_TRUE(run->stats.first_problem);
  EXPECT_EQ(run->stats.first_problem->offset, 6u);
}

}  // namespace
}  // namespace edgemem::test
