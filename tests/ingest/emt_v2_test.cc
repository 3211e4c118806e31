// emt version 2, the chunked layout `edgemem record` writes: the documented
// bytes, threads merged back into the recorded order, what a killed process
// leaves, damage, and the differential check (the same bytes split any way
// give the same events).
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <filesystem>
#include <random>
#include <set>

#include <fmt/format.h>

#include "edgemem/emt_v2.h"
#include "ingest/emt_chunk_builder.h"
#include "ingest/emt_decoder.h"
#include "test_support.h"

namespace edgemem::test {
namespace {

namespace e2 = emt2;

std::string header_page() {
  std::string s("\x7E" "emt!" "\x00" "\x01\x02\x00", 9);
  s.resize(e2::kHeaderBytes, '\0');
  return s;
}

std::string varint(uint64_t v) {
  uint8_t buf[10];
  size_t n = e2::put_varint(buf, v);
  return std::string(reinterpret_cast<char*>(buf), n);
}


uint64_t zigzag(int64_t delta) { return (static_cast<uint64_t>(delta) << 1) ^ static_cast<uint64_t>(delta >> 63); }

std::string rec(uint8_t tag, std::initializer_list<uint64_t> fields, const std::string& text = {}, bool with_text = false) {
  std::string s(1, static_cast<char>(tag));
  for (uint64_t f : fields) s += varint(f);
  if (with_text) s += varint(text.size()) + text;
  return s;
}

std::vector<Event> decode(const std::string& bytes, DecodeStats* stats = nullptr, size_t step = 0) {
  TraceContext context;
  Recorder sink;
  auto decoder = make_decoder(Format::emt, context, sink);
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  if (!step) step = bytes.size();
  for (size_t i = 0; i < bytes.size(); i += step) decoder->feed({p + i, std::min(step, bytes.size() - i)});
  decoder->finish();
  if (stats) *stats = decoder->stats();
  return sink.events;
}

// The byte-level example of docs/formats/emt.md, version 2.
const std::string kDocRecords(
    "\x36\x01\xE5\x81\x01\x04" "main"             // THREAD seq 1, tid 16613
    "\x33\x01\x00\xB4\xA4\x80\x02"                // NODE 1, root, 0x401234
    "\x30\x01\x00\xC0\xCA\x82\x04\x80\x01\x00\x01"  // ALLOC seq 2, 0x4052a0 (zigzag from 0), 128 B, node 1
    "\x31\x01\x00\x00",                           // FREE seq 3, the same address (delta 0)
    32);

TEST(EmtV2, DecodesTheDocumentedExample) {
  std::string bytes = header_page() + chunk(1, 0, 0, kDocRecords);
  TraceContext context;
  Recorder sink;
  auto decoder = make_decoder(Format::emt, context, sink);
  decoder->feed({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  decoder->finish();
  const DecodeStats& s = decoder->stats();
  EXPECT_EQ(s.corrupt_bytes, 0u);
  EXPECT_EQ(s.truncated_bytes, 0u);
  EXPECT_EQ(s.dropped_records, 0u);
  ASSERT_EQ(sink.events.size(), 2u);
  const Event& a = sink.events[0];
  EXPECT_EQ(a.kind, EventKind::alloc);
  EXPECT_EQ(a.address, 0x4052a0u);
  EXPECT_EQ(a.size, 128u);
  EXPECT_EQ(a.thread, 16613u);
  EXPECT_EQ(a.time, 2u);
  EXPECT_EQ(context.sites.name(a.site), "0x401234");
  EXPECT_EQ(context.pools.at(a.pool).name, "malloc");
  EXPECT_EQ(sink.events[1].kind, EventKind::free);
  EXPECT_EQ(sink.events[1].time, 3u);
  EXPECT_EQ(context.time_base, TimeBase::sequence);
  EXPECT_EQ(context.thread_names.at(16613), "main") << "the THREAD record names its thread";
}

// Thread 2's chunk comes first in the file but its records are later in the
// process: the reader restores the recorded order, so the address thread 1
// frees at seq 3 and thread 2 reuses at seq 4 is never live twice.
std::string two_threads() {
  std::string t1 = rec(e2::kThread, {1, 100}, "a", true) + rec(e2::kNode, {1, 0, 0x1000}) +
                   rec(e2::kAlloc, {1, 0, zigzag(0x5000), 64, 0, 1}) +  // seq 2
                   rec(e2::kFree, {1, 0, zigzag(0)}) +                  // seq 3, 0x5000
                   rec(e2::kInferEnd, {3, 7});                  // seq 6
  std::string t2 = rec(e2::kThread, {4, 200}, "b", true) +
                   rec(e2::kNode, {1, 0, 0x2000}) + rec(e2::kAlloc, {1, 0, zigzag(0x5000), 32, 0, 1});  // seq 5
  // Thread 2's THREAD record is seq 4: its chunk's base is 0 (its first chunk).
  return header_page() + chunk(2, 0, 0, t2) + chunk(1, 1, 0, t1);
}

TEST(EmtV2, ThreadsAreMergedInRecordedOrder) {
  DecodeStats s;
  auto events = decode(two_threads(), &s);
  EXPECT_EQ(s.corrupt_bytes, 0u);
  EXPECT_EQ(s.dropped_records, 0u);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].kind, EventKind::alloc);
  EXPECT_EQ(events[0].thread, 100u);
  EXPECT_EQ(events[1].kind, EventKind::free);
  EXPECT_EQ(events[2].kind, EventKind::alloc);
  EXPECT_EQ(events[2].size, 32u);
  EXPECT_EQ(events[2].thread, 200u);
  EXPECT_EQ(events[3].kind, EventKind::inference_end);
  EXPECT_EQ(events[3].size, 7u);
  for (size_t i = 1; i < events.size(); ++i) EXPECT_LT(events[i - 1].time, events[i].time);
}

// A hundred threads taking turns: each one's chunk holds every hundredth
// number, so the merge holds 99 chunks (1.19 M records) waiting for the
// last one's first record. Past a bound of a million records the reader
// counted a million of them lost and applied them out of order: a helper's
// 100-thread program read 1.2 M lost records, 300,000 double frees and
// 957,744 B live that valgrind saw freed.
TEST(EmtV2, AHundredThreadsTakingTurnsAreMergedWhole) {
  const uint64_t threads = 100, each = 12000;
  std::string bytes = header_page();
  for (uint64_t t = 0; t < threads; ++t) {
    std::string records;
    uint64_t address = 0;
    for (uint64_t i = 0; i < each; ++i) {
      const uint64_t seq = t + 1 + i * threads, at = 0x100000 + 16 * seq;
      records += rec(e2::kFree, {i ? threads : t + 1, 0, zigzag(static_cast<int64_t>(at - address))});
      address = at;
    }
    ASSERT_LE(records.size(), e2::kChunkBytes - e2::kChunkHeaderBytes);
    bytes += chunk(static_cast<uint32_t>(t + 1), static_cast<uint32_t>(t), 0, records);
  }
  DecodeStats s;
  auto events = decode(bytes, &s);
  EXPECT_EQ(s.dropped_records, 0u);
  EXPECT_EQ(s.out_of_order_records, 0u);
  ASSERT_EQ(events.size(), threads * each);
  size_t in_order = 0;
  for (size_t i = 0; i < events.size(); ++i) in_order += events[i].address == 0x100000 + 16 * (i + 1);
  EXPECT_EQ(in_order, events.size());
}

TEST(EmtV2, NodesOfDifferentThreadsDoNotMix) {
  auto run = analyse(Format::emt, two_threads());
  std::set<std::string> sites;
  for (const auto& b : run->result.sites) sites.insert(b.site);
  EXPECT_TRUE(sites.contains("0x1000"));
  EXPECT_TRUE(sites.contains("0x2000"));
}

TEST(EmtV2, SameBytesSplitAnyWayGiveTheSameEvents) {
  std::string bytes = two_threads();
  auto whole = decode(bytes);
  for (size_t step : {1u, 7u, 4095u, 4097u, 65536u, 65537u}) EXPECT_EQ(decode(bytes, nullptr, step), whole) << step;
  std::mt19937 rng(12);
  for (int round = 0; round < 5; ++round) {
    TraceContext context;
    Recorder sink;
    auto decoder = make_decoder(Format::emt, context, sink);
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
    for (size_t i = 0; i < bytes.size();) {
      size_t n = std::min<size_t>(bytes.size() - i, 1 + rng() % 9000);
      decoder->feed({p + i, n});
      i += n;
    }
    decoder->finish();
    EXPECT_EQ(sink.events, whole) << round;
  }
}

// A SIGKILLed process leaves claimed chunks partly written and the zeros
// of chunks the file had grown by: the records are all there, nothing is
// damage.
TEST(EmtV2, WhatAKilledProcessLeavesDecodesCleanly) {
  std::string bytes = header_page() + chunk(1, 0, 0, kDocRecords) + std::string(3 * e2::kChunkBytes, '\0');
  DecodeStats s;
  auto events = decode(bytes, &s);
  EXPECT_EQ(events.size(), 2u);
  EXPECT_EQ(s.corrupt_bytes, 0u);
  EXPECT_EQ(s.truncated_bytes, 0u);
  EXPECT_FALSE(s.first_problem);
}

// The recorder grows its file by whole chunks, so a file that ends inside
// a claimed chunk was cut, even past that chunk's records: the chunks after
// it are missing (their records once read as lost before they were written,
// and the leak check judged the part as if it were the whole run).
TEST(EmtV2, AFileEndingInsideAChunksPaddingWasCut) {
  const std::string whole = header_page() + chunk(1, 0, 0, kDocRecords);
  ASSERT_EQ(whole.size(), e2::kHeaderBytes + e2::kChunkBytes);
  DecodeStats s;
  decode(whole, &s);
  EXPECT_FALSE(s.recording_cut);
  for (size_t keep : {e2::kChunkHeaderBytes + kDocRecords.size(), e2::kChunkBytes / 2, e2::kChunkBytes - 1}) {
    SCOPED_TRACE(keep);
    auto events = decode(whole.substr(0, e2::kHeaderBytes + keep), &s);
    EXPECT_EQ(events.size(), 2u);
    EXPECT_TRUE(s.recording_cut);
    EXPECT_EQ(s.cut_at, e2::kHeaderBytes);
    EXPECT_EQ(s.cut_bytes_present, keep);
    EXPECT_EQ(s.cut_chunk_missing, 0u);
    EXPECT_EQ(s.truncated_bytes, 0u);
  }
  // Cut inside a chunk no thread claimed: nothing says records are missing.
  decode(whole + std::string(100, '\0'), &s);
  EXPECT_FALSE(s.recording_cut);
}

TEST(EmtV2, ASequenceNumberNeverWrittenIsCountedLost) {
  std::string records = rec(e2::kNode, {1, 0, 0x1000}) + rec(e2::kAlloc, {2, 0, zigzag(0x5000), 64, 0, 1}) +
                        rec(e2::kAlloc, {3, 0, zigzag(0x1000), 64, 0, 1});
  DecodeStats s;
  auto events = decode(header_page() + chunk(1, 0, 0, records), &s);
  EXPECT_EQ(events.size(), 2u);
  EXPECT_EQ(s.dropped_records, 3u);  // seq 1, 3 and 4 were taken and never written
}

// A process that could not go on recording counts its calls after that
// into a STOPPED record, 9 bytes long whatever the count: 1,000 here.
TEST(EmtV2, AStoppedRecordingSaysSoWithTheCallsNotRecorded) {
  const std::string stopped("\x3A\xE8\x87\x80\x80\x80\x80\x80\x80\x00", 10);
  static_assert(e2::kStoppedBytes == 10);
  DecodeStats s;
  auto events = decode(header_page() + chunk(1, 0, 0, kDocRecords + stopped), &s);
  EXPECT_EQ(events.size(), 2u);
  EXPECT_TRUE(s.recording_stopped);
  EXPECT_EQ(s.calls_not_recorded, 1000u);
  EXPECT_EQ(s.corrupt_bytes, 0u);
  DecodeStats whole;
  decode(header_page() + chunk(1, 0, 0, kDocRecords), &whole);
  EXPECT_FALSE(whole.recording_stopped);
}

// RESIZE (a mapping trimmed by munmap): the rest of the block keeps its
// stack, the trims are no temporaries, and its free afterwards finds it at
// its new address (and, as nothing came between, is one).
TEST(EmtV2, AResizedMappingKeepsItsSiteAndIsNoTemporary) {
  std::string records = rec(e2::kThread, {1, 7}, "t", true) + rec(e2::kNode, {1, 0, 0x1234}) +
                        rec(e2::kAlloc, {1, e2::kPoolMmap, zigzag(0x400000), 0x400000, 0, 1}) +  // seq 2, 4 MiB
                        rec(e2::kResize, {1, e2::kPoolMmap, 0x400000, 0x400000, 0x300000}) +     // its tail went
                        rec(e2::kResize, {1, e2::kPoolMmap, 0x400000, 0x600000, 0x100000});      // its head went
  DecodeStats s;
  auto events = decode(header_page() + chunk(1, 0, 0, records), &s);
  EXPECT_EQ(s.corrupt_bytes, 0u);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2].kind, EventKind::realloc);
  EXPECT_EQ(events[2].old_address, 0x400000u);
  EXPECT_EQ(events[2].address, 0x600000u);
  EXPECT_EQ(events[2].size, 0x100000u);
  EXPECT_EQ(events[2].site, kUnknownSite);

  auto kept = analyse(Format::emt, header_page() + chunk(1, 0, 0, records));
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->result.temporaries.count, 0u);
  ASSERT_EQ(kept->result.sites.size(), 1u);
  EXPECT_EQ(kept->result.sites[0].site, "0x1234");
  EXPECT_EQ(kept->result.sites[0].live_bytes, 0x100000u);
  EXPECT_EQ(kept->result.peak_bytes, 0x400000u);

  auto freed = analyse(Format::emt, header_page() + chunk(1, 0, 0, records + rec(e2::kFree, {1, e2::kPoolMmap,
                                                                                       zigzag(0x600000 - 0x400000)})));
  ASSERT_TRUE(freed);
  EXPECT_EQ(freed->result.counts.unknown_frees, 0u);
  EXPECT_EQ(freed->result.sites[0].live_bytes, 0u);
  EXPECT_EQ(freed->result.temporaries.count, 1u);
  EXPECT_EQ(freed->result.temporaries.bytes, 0x100000u);
}

TEST(EmtV2, ADamagedChunkIsSkippedAndNamed) {
  std::string bad = chunk(1, 0, 0, kDocRecords);
  bad[0] = 'X';
  std::string bytes = header_page() + bad + chunk(2, 1, 0, rec(e2::kAlloc, {4, 0, zigzag(0x7000), 16, 0, 0}));
  DecodeStats s;
  auto events = decode(bytes, &s);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].address, 0x7000u);
  EXPECT_EQ(s.corrupt_bytes, e2::kChunkBytes);
  ASSERT_TRUE(s.first_problem);
  EXPECT_EQ(s.first_problem->offset, e2::kHeaderBytes);
}

TEST(EmtV2, ARecordWithAnUnknownTagEndsItsChunk) {
  std::string records = kDocRecords.substr(0, 17) + "\x55\x01\x02";
  DecodeStats s;
  auto events = decode(header_page() + chunk(1, 0, 0, records), &s);
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(s.corrupt_bytes, 3u);
  ASSERT_TRUE(s.first_problem);
  EXPECT_EQ(s.first_problem->offset, e2::kHeaderBytes + e2::kChunkHeaderBytes + 17);
}

// Judging a format by its first bytes reads the stacks without opening any
// module's symbols: their frames stay addresses.
[[gnu::noinline]] int named_function(int x) { return x * 3 + 1; }

TEST(EmtV2, StacksAreNamedUnlessTheDecoderIsOnlyJudgingTheFormat) {
  Dl_info self{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&named_function), &self), 0);
  const auto base = reinterpret_cast<uint64_t>(self.dli_fbase);
  const uint64_t call = reinterpret_cast<uint64_t>(&named_function) + 4;  // a return address inside it
  std::string records = rec(e2::kModule, {1, base, base, call + 4096}, std::filesystem::canonical("/proc/self/exe").string(), true) +
                        rec(e2::kNode, {1, 0, call}) + rec(e2::kAlloc, {1, 0, zigzag(0x5000), 16, 0, 1});
  std::string bytes = header_page() + chunk(1, 0, 0, records);
  for (bool named : {true, false}) {
    TraceContext context;
    Recorder sink;
    EmtDecoder decoder(context, sink, named);
    decoder.feed({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
    decoder.finish();
    ASSERT_EQ(sink.events.size(), 1u);
    std::string site(context.sites.name(sink.events[0].site));
    if (named) EXPECT_NE(site.find("named_function"), std::string::npos) << site;
    else EXPECT_EQ(site, fmt::format("{:#x}", call));
  }
}

TEST(EmtV2, VersionOneStreamsStillDecode) {
  std::string v1("\x7E" "emt!" "\x00" "\x01\x01\x00" "\x10\x05\x00\x80\x20\x40\x00\x00", 17);
  DecodeStats s;
  auto events = decode(v1, &s);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].size, 64u);
  EXPECT_EQ(s.corrupt_bytes, 0u);
}

}  // namespace
}  // namespace edgemem::test
