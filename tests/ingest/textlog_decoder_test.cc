#include <algorithm>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ingest/textlog_decoder.h"
#include "test_support.h"

namespace edgemem::test {
namespace {

struct Decoded {
  TraceContext context;
  Recorder sink;
  DecodeStats stats;
};

std::unique_ptr<Decoded> decode(const std::string& text, size_t chunk = 0) {
  auto d = std::make_unique<Decoded>();
  TextLogDecoder decoder(d->context, d->sink);
  size_t step = chunk ? chunk : std::max<size_t>(text.size(), 1);
  for (size_t i = 0; i < text.size(); i += step)
    decoder.feed({reinterpret_cast<const uint8_t*>(text.data()) + i, std::min(step, text.size() - i)});
  decoder.finish();
  d->stats = decoder.stats();
  return d;
}

TEST(TextLog, ReadsTheSeedRecordsWithSiteAndPool) {
  auto d = decode(
      "[MEM][1200] ALLOC size=644 align=4 offset=41232 site=lstm.cc:88 pool=arena0\n"
      "[MEM][1300] FREE offset=41232 pool=arena0\n"
      "[MEM][1400] ALLOC_FAIL size=4096 align=16\n"
      "[MEM][1500] INFER begin 7\n"
      "[MEM][1600] INFER end 7\n");
  ASSERT_EQ(d->sink.events.size(), 5u);
  const Event& a = d->sink.events[0];
  EXPECT_EQ(a.kind, EventKind::alloc);
  EXPECT_EQ(a.time, 1200u);
  EXPECT_EQ(a.size, 644u);
  EXPECT_EQ(a.align, 4u);
  EXPECT_EQ(a.address, 41232u);
  EXPECT_EQ(d->context.sites.name(a.site), "lstm.cc:88");
  EXPECT_EQ(d->context.pools.at(a.pool).name, "arena0");
  EXPECT_EQ(d->context.pools.at(a.pool).kind, PoolKind::arena);
  EXPECT_EQ(d->sink.events[1].kind, EventKind::free);
  EXPECT_EQ(d->sink.events[2].kind, EventKind::alloc_failed);
  EXPECT_EQ(d->sink.events[2].size, 4096u);
  EXPECT_EQ(d->sink.events[3].kind, EventKind::inference_begin);
  EXPECT_EQ(d->sink.events[3].size, 7u);
  EXPECT_EQ(d->sink.events[4].kind, EventKind::inference_end);
}

// More sites than the decoder's first site cache holds (2,048 before it
// grows): every line still gets its own site's id, before and after the
// cache doubles, whichever order the sites come back in.
TEST(TextLog, ThousandsOfSitesKeepTheirIdsAsTheSiteCacheGrows) {
  std::string text;
  constexpr int kSites = 20000;
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < kSites; ++i) {
      const int site = pass == 0 ? i : (i * 7919) % kSites;  // a second pass in another order
      text += fmt::format("[MEM][1] ALLOC size=8 addr={} site=f{}.c:{}\n", 0x1000 + 16 * (pass * kSites + i), site,
                          site % 97);
    }
  auto d = decode(text);
  ASSERT_EQ(d->sink.events.size(), 2u * kSites);
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < kSites; ++i) {
      const int site = pass == 0 ? i : (i * 7919) % kSites;
      ASSERT_EQ(d->context.sites.name(d->sink.events[pass * kSites + i].site), fmt::format("f{}.c:{}", site, site % 97))
          << pass << " " << i;
    }
}

TEST(TextLog, SkipsAndCountsNoiseHandlesCrlfAndPrefixes) {
  auto d = decode("boot ok\r\n"
                  "I (123) app: [MEM][10] ALLOC size=8 addr=0x20000010\r\n"
                  "random line\n"
                  "[MEM][20] FREE addr=0x20000010\r\n");
  EXPECT_EQ(d->stats.skipped_lines, 2u);
  ASSERT_EQ(d->sink.events.size(), 2u);
  EXPECT_EQ(d->sink.events[0].address, 0x20000010u);
  EXPECT_EQ(d->context.pools.at(d->sink.events[0].pool).kind, PoolKind::heap);
}

// A record whose tag lost a byte on the line is damage, not other output:
// skipped as a plain line, a damaged INFER end cut an inference without a
// word of data lost (a bit flip in a QEMU capture: 49 inferences of 50).
TEST(TextLog, ARecordWithADamagedTagIsMalformedNotOtherOutput) {
  auto d = decode("[MEM][10] INFER begin 1\n"
                  "[MEM\\[20] INFER end 1\n"
                  "[MEN][30] ALLOC size=8 addr=0x20000010\n"
                  "[MEMORY][40] pool stats\n"
                  "[INFO][50] ready\n"
                  "[MEM][60] FREE addr=0x20000010\n");
  EXPECT_EQ(d->stats.malformed_lines, 2u);
  EXPECT_EQ(d->stats.skipped_lines, 2u);  // [MEMORY] and [INFO] are other output
  ASSERT_TRUE(d->stats.first_problem);
  EXPECT_EQ(d->stats.first_problem->line, 2u);
  EXPECT_EQ(d->stats.first_problem->what, "a [MEM] record whose tag has a damaged byte");
  EXPECT_EQ(d->sink.events.size(), 2u);
}

// ESP-IDF's log macros colour each line and close it with ESC[0m; a Windows
// terminal logs "\r\r\n". Both ends once made the last value of the record
// unreadable ("expected a number after 'addr='") and the line was dropped.
TEST(TextLog, ColourCodesAndCarriageReturnsAtALinesEndAreNoPartOfItsLastValue) {
  auto d = decode("\x1b[0;32mI (123) app: [MEM][100] ALLOC size=64 addr=0x3ffb1000\x1b[0m\r\n"
                  "\x1b[0;32mI (124) app: [MEM][200] ALLOC size=32 addr=0x3ffb2000 site=main.c:5\x1b[0m\r\n"
                  "[MEM][300] FREE addr=0x3ffb1000 \r\r\n"
                  "[MEM][400] INFER end\r\r\n");
  EXPECT_EQ(d->stats.malformed_lines, 0u);
  ASSERT_EQ(d->sink.events.size(), 4u);
  EXPECT_EQ(d->sink.events[0].address, 0x3ffb1000u);
  EXPECT_EQ(d->context.sites.name(d->sink.events[1].site), "main.c:5");
  EXPECT_EQ(d->sink.events[2].kind, EventKind::free);
  EXPECT_EQ(d->sink.events[3].kind, EventKind::inference_end);
}

// "unknown key=value fields are ignored so firmware can add fields": a
// value that is no number (task=main) once dropped the whole record.
TEST(TextLog, FieldsOfNewerFirmwareAreIgnoredWhateverTheirValue) {
  auto d = decode("[MEM][1] ALLOC size=16 addr=0x20 site=a.c:1 task=main\n"
                  "[MEM][2] FREE addr=0x20 task=main tag=x.y foo= core=0x1g\n"
                  "[MEM][3] INFER begin 1 task=main\n");
  EXPECT_EQ(d->stats.malformed_lines, 0u);
  ASSERT_EQ(d->sink.events.size(), 3u);
  EXPECT_EQ(d->sink.events[0].size, 16u);
  EXPECT_EQ(d->sink.events[1].kind, EventKind::free);
  EXPECT_EQ(d->sink.events[2].kind, EventKind::inference_begin);
  EXPECT_EQ(d->sink.events[2].size, 1u);
  // A known key still wants its number.
  EXPECT_EQ(decode("[MEM][1] ALLOC size=big addr=0x20\n")->stats.malformed_lines, 1u);
}

TEST(TextLog, TruncatedLastLineIsCountedNotEmitted) {
  auto d = decode("[MEM][1] ALLOC size=16 offset=0\n[MEM][2] ALLOC size=12");
  EXPECT_EQ(d->sink.events.size(), 1u);
  EXPECT_EQ(d->stats.truncated_bytes, 22u);  // "[MEM][2] ALLOC size=12"
}

TEST(TextLog, MalformedRecordNamesItsLine) {
  auto d = decode("ok\n[MEM][1] ALLOC size=abc offset=0\n[MEM][2] FROB x=1\n[MEM][3] FREE offset=0\n");
  EXPECT_EQ(d->stats.malformed_lines, 2u);
  ASSERT_TRUE(d->stats.first_problem);
  EXPECT_EQ(d->stats.first_problem->line, 2u);
  EXPECT_NE(d->stats.first_problem->what.find("size="), std::string::npos);
  EXPECT_EQ(d->sink.events.size(), 1u);  // the good line after them still counts
}

// A record placed both ways was read as a heap block without a word; the
// format says offset= is an arena's, addr= a heap's.
TEST(TextLog, ARecordWithBothOffsetAndAddrIsMalformed) {
  auto d = decode("[MEM][1] ALLOC size=8 offset=16 addr=0x20000010\n[MEM][2] ALLOC size=8 addr=0x20 ptr=0x30\n");
  EXPECT_EQ(d->stats.malformed_lines, 1u);
  ASSERT_TRUE(d->stats.first_problem);
  EXPECT_EQ(d->stats.first_problem->line, 1u);
  EXPECT_EQ(d->stats.first_problem->what, "expected offset= (arena) or addr= (heap), not both");
  ASSERT_EQ(d->sink.events.size(), 1u);  // a repeated heap address: the last one, as before
  EXPECT_EQ(d->sink.events[0].address, 0x30u);
}

// Stamps that go back without a 32-bit wrap (a restart, a corrupt stamp)
// were kept as given: the exports drew the usage out of order and a viewer
// sorting by time ended on the wrong value. A 64-bit stamp is never taken
// for a 32-bit wrap (10,000,000,100 then 100 read as 4,294,967,396).
TEST(TextLog, StampsThatGoBackAreCountedAndTimeContinues) {
  auto d = decode("[MEM][1000] ALLOC size=100 addr=0x1000\n[MEM][2000] ALLOC size=100 addr=0x2000\n"
                  "[MEM][500] FREE addr=0x2000\n[MEM][600] FREE addr=0x1000\n"
                  "[MEM][4294967000] ALLOC size=1 addr=0x3000\n[MEM][100] FREE addr=0x3000\n"
                  "[MEM][10000000000] ALLOC size=1 addr=0x3000\n[MEM][100] FREE addr=0x3000\n");
  ASSERT_EQ(d->sink.events.size(), 8u);
  std::vector<uint64_t> times;
  for (const Event& e : d->sink.events) times.push_back(e.time);
  // 500 continues from 2000 (+1500); 100 after 4294967000 is a wrap; 100
  // after 10^10 is not.
  EXPECT_EQ(times, (std::vector<uint64_t>{1000, 2000, 2000, 2100, 4294968500, 4294968896, 14294968796, 14294968796}));
  EXPECT_EQ(d->stats.time_went_back, 2u);
  EXPECT_EQ(d->stats.time_went_back_line, 3u);
  EXPECT_FALSE(d->stats.first_problem);  // not a problem of a line: a malformed one after it is the first named
}

// The device library's BOOT line: the first starts the capture; one after
// records is a restart (pools reset, time goes on, not "went back"), and
// the analysis says which inference it went down in.
TEST(TextLog, ABootLineAfterRecordsIsARestart) {
  const std::string boot = "[MEM][5] BOOT\n[MEM][9] POOL name=heap kind=heap base=0x20000000 size=4096\n";
  const std::string run = "[MEM][20] INFER begin 1\n[MEM][30] ALLOC size=64 addr=0x20000100 pool=heap\n"
                          "[MEM][40] INFER end 1\n[MEM][50] INFER begin 2\n[MEM][60] ALLOC size=64 addr=0x20000200 pool=heap\n";
  auto d = decode(boot + run + boot + run);
  EXPECT_EQ(d->stats.device_restarts, 1u);
  EXPECT_EQ(d->stats.time_went_back, 0u);
  // A BOOT line stamped on the old clock, the new one's first stamp below it:
  // no going back either (it once counted one).
  auto late = decode("[MEM][100] ALLOC size=8 addr=0x10\n[MEM][200] BOOT\n[MEM][5] ALLOC size=8 addr=0x10\n"
                     "[MEM][6] ALLOC size=8 addr=0x20\n[MEM][3] FREE addr=0x20\n");
  EXPECT_EQ(late->stats.time_went_back, 1u);  // the last line's, not the first after the BOOT
  EXPECT_EQ(late->stats.time_went_back_line, 5u);
  EXPECT_EQ(d->stats.malformed_lines, 0u);
  std::vector<uint64_t> times;
  for (const Event& e : d->sink.events) times.push_back(e.time);
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));
  auto r = analyse(Format::log, boot + run + boot + run);
  EXPECT_EQ(r->result.counts.replaced_blocks, 0u);  // the second boot's blocks at the first one's addresses
  ASSERT_EQ(r->result.restarts.kept.size(), 1u);
  EXPECT_EQ(r->result.restarts.kept[0].during_inference, 2u);
  EXPECT_EQ(r->result.restarts.kept[0].bytes_in_use, 128u);
  EXPECT_EQ(r->result.inferences, 2u);
  ASSERT_EQ(r->result.pools.size(), 1u);
  EXPECT_EQ(r->result.pools[0].final_bytes, 128u);
}

TEST(TextLog, ChunkBoundariesDoNotChangeTheResult) {
  std::string text;
  for (int i = 0; i < 200; ++i)
    text += "[MEM][" + std::to_string(i) + "] ALLOC size=" + std::to_string(i + 1) + " offset=" + std::to_string(i * 64) + " site=a.c:" + std::to_string(i % 7) + "\r\nnoise\n";
  auto whole = decode(text);
  for (size_t chunk : {1u, 3u, 17u, 4096u}) {
    auto parts = decode(text, chunk);
    ASSERT_EQ(parts->sink.events.size(), whole->sink.events.size());
    for (size_t i = 0; i < whole->sink.events.size(); ++i) {
      EXPECT_EQ(parts->sink.events[i].size, whole->sink.events[i].size);
      EXPECT_EQ(parts->sink.events[i].address, whole->sink.events[i].address);
    }
    EXPECT_EQ(parts->stats.skipped_lines, 200u);
  }
}

TEST(TextLog, UnwrapsThe32BitCycleCounter) {
  auto d = decode("[MEM][4294967000] ALLOC size=1 offset=0\n[MEM][500] FREE offset=0\n");
  ASSERT_EQ(d->sink.events.size(), 2u);
  EXPECT_EQ(d->sink.events[1].time, 4294967296u + 500u);
}

TEST(TextLog, PoolDeclarationSetsGeometry) {
  auto d = decode("[MEM][0] POOL name=heap kind=heap base=0x20010000 size=49152\n");
  ASSERT_EQ(d->context.pools.size(), 1u);
  EXPECT_EQ(d->context.pools.at(0).base, 0x20010000u);
  EXPECT_EQ(d->context.pools.at(0).size, 49152u);
  EXPECT_EQ(d->context.pools.at(0).kind, PoolKind::heap);
}

}  // namespace
}  // namespace edgemem::test
