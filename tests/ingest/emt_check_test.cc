// emt records with check bytes ("~emt#" streams, docs/formats/emt.md): a
// record damaged in transit is found and skipped, not read as an event
// that never happened.
#include <gtest/gtest.h>

#include <random>

#include "ingest/emt_decoder.h"
#include "test_support.h"

namespace edgemem::test {
namespace {

// The checked byte-level example of docs/formats/emt.md.
const std::string kChecked(
    "\x7E" "emt#" "\x00" "\x21"                                  // SYNC, time 0
    "\x01\x01\xC0\xF0\xF5\x0B" "\xCE"                            // HEADER v1, 25 MHz
    "\x02\x00\x01\x00\x80\x80\x01\x00\x05" "arena" "\x00" "\x7E"  // POOL 0 arena, 16384 B
    "\x03\x01\x07" "model.c" "\x27"                              // STRING 1
    "\x14\x0A\x01" "\x1F"                                        // INFER begin 1, dt 10
    "\x10\x05\x00\x00\x84\x05\x04\xF4\x80\x80\x01" "\x65"        // ALLOC 644 B at model.c:58
    "\x15\x64\x01" "\x70",                                       // INFER end 1, dt 100
    61);

std::vector<Event> events_of(const std::string& bytes, DecodeStats* stats = nullptr) {
  TraceContext context;
  Recorder sink;
  EmtDecoder decoder(context, sink);
  decoder.feed({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  decoder.finish();
  if (stats) *stats = decoder.stats();
  return sink.events;
}

bool same_event(const Event& a, const Event& b) {
  return a.time == b.time && a.kind == b.kind && a.address == b.address && a.size == b.size &&
         a.old_address == b.old_address && a.align == b.align;
}

// Whether `got` is `truth` with events left out: nothing invented, nothing
// changed. (Site ids depend on the order names were met, so sites are left
// out; the time and address pin an event.)
bool only_lost_events(const std::vector<Event>& truth, const std::vector<Event>& got) {
  size_t t = 0;
  for (const Event& e : got) {
    while (t < truth.size() && !same_event(truth[t], e)) ++t;
    if (t++ == truth.size()) return false;
  }
  return true;
}

TEST(EmtCheck, DecodesTheDocumentedExample) {
  auto run = analyse(Format::emt, kChecked);
  EXPECT_EQ(run->stats.corrupt_bytes, 0u);
  EXPECT_EQ(run->stats.events, 3u);
  EXPECT_EQ(run->stats.checked_records, 7u);
  EXPECT_EQ(run->stats.failed_checks, 0u);
  EXPECT_EQ(run->stats.unchecked_events, 0u);
  ASSERT_EQ(run->result.persistent.size(), 1u);
  EXPECT_EQ(run->result.persistent[0].site, "model.c:58");
  EXPECT_EQ(run->result.persistent[0].bytes, 644u);
  EXPECT_EQ(run->result.peak.time, 15u);
}

// The ALLOC's size byte 0x84 (644 = 0x284) damaged to 0x85: without check
// bytes it is read as 645 B; with them the record is refused, named, and
// the stream goes on at the next SYNC.
TEST(EmtCheck, ADamagedSizeIsRefusedNotRead) {
  std::string damaged = kChecked;
  size_t at = damaged.find("\x10\x05\x00\x00\x84", 0, 5) + 4;
  damaged[at] = '\x85';
  damaged += std::string("\x7E" "emt#" "\x90\x4E" "\xFF", 8);  // SYNC at 10000
  damaged += std::string("\x14\x05\x02" "\x13", 4);             // INFER begin 2
  DecodeStats stats;
  auto events = events_of(damaged, &stats);
  EXPECT_EQ(stats.failed_checks, 1u);
  EXPECT_EQ(stats.corrupt_bytes, 16u);  // the ALLOC and INFER end, skipped to the SYNC
  ASSERT_TRUE(stats.first_problem);
  EXPECT_EQ(stats.first_problem->offset, at - 4);
  EXPECT_EQ(stats.first_problem->what,
            "an emt record (tag 0x10) whose check byte is 0x65, not 0x64: damaged in transit");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, EventKind::inference_begin);
  EXPECT_EQ(events[1].kind, EventKind::inference_begin);
  EXPECT_EQ(events[1].time, 10005u);
  auto run = analyse(Format::emt, damaged);
  Check lost = data_loss_check(run->stats, run->result.counts);
  EXPECT_EQ(lost.status, CheckStatus::found);
  EXPECT_EQ(lost.reason, "16 corrupt bytes skipped (1 emt record failed its check byte: damaged in transit)");
}

// The same damage without check bytes is read as a 645 B allocation: the
// decoder cannot tell. A report that sees other damage says so.
TEST(EmtCheck, DamageInAStreamWithoutCheckBytesIsSaidToGoUnseen) {
  const std::string plain(
      "\x7E" "emt!" "\x00"
      "\x02\x00\x01\x00\x80\x80\x01\x00\x05" "arena" "\x00"
      "\x10\x05\x00\x00\x85\x05\x04\x00"  // 645 B: damaged, unseen
      "\xFF\xFF"                               // damage that is seen
      "\x7E" "emt!" "\x10" "\x14\x01\x01",
      40);
  auto run = analyse(Format::emt, plain);
  EXPECT_EQ(run->result.peak.bytes, 645u);
  EXPECT_EQ(run->stats.corrupt_bytes, 2u);
  EXPECT_EQ(run->stats.checked_records, 0u);
  Check lost = data_loss_check(run->stats, run->result.counts);
  EXPECT_EQ(lost.reason,
            "2 corrupt bytes skipped; the emt records carry no check bytes, so damage that still decodes was read as "
            "it came (the device library writes them unless built with -DEDGEMEM_CHECK=0)");
}

// One flipped bit turns the SYNC marker "#" into "!": the SYNC then reads
// as one without check bytes, and its check byte (0x21 here, FREE32's tag)
// as a record. A SYNC without them after SYNCs with them must be a device
// started again (a HEADER follows); anything else is damage.
TEST(EmtCheck, AFlippedSyncMarkerIsDamageNotARecord) {
  std::string stream = kChecked + kChecked.substr(0, 7) + kChecked.substr(14);  // SYNC, POOL, STRING, events again
  stream[61 + 4] = '!';  // the second SYNC's marker
  DecodeStats stats;
  auto events = events_of(stream, &stats);
  EXPECT_GT(stats.corrupt_bytes, 0u);
  EXPECT_EQ(events.size(), 3u) << "only the first part's events";
  ASSERT_TRUE(stats.first_problem);
  EXPECT_EQ(stats.first_problem->offset, 61u + 6u);
  EXPECT_EQ(stats.first_problem->what,
            "an emt SYNC without check bytes, in a stream whose SYNCs have them, and no HEADER after it: its marker "
            "is damaged");

  // A device started again with a build without check bytes: read as such.
  std::string rebooted = kChecked + std::string("\x7E" "emt!" "\x00", 6) + std::string("\x01\x01\x00", 3) +
                         std::string("\x14\x0A\x02", 3) + std::string("\x7E" "emt!" "\x64", 6) +
                         std::string("\x15\x01\x02", 3);
  auto run = analyse(Format::emt, rebooted);
  EXPECT_EQ(run->stats.corrupt_bytes, 0u);
  EXPECT_EQ(run->stats.device_restarts, 1u);
  EXPECT_EQ(run->stats.events, 5u);
  EXPECT_EQ(run->stats.unchecked_events, 2u);
}

// A short capture whose opening SYNC is damaged (its check byte fails) is
// still known for emt by its marker, and read with the damage reported.
TEST(EmtCheck, AShortCaptureWithADamagedOpeningSyncIsStillEmt) {
  std::string damaged = kChecked;
  damaged[5] = '\x01';  // the SYNC's time
  auto verdict = sniff_trace({reinterpret_cast<const uint8_t*>(damaged.data()), damaged.size()});
  EXPECT_EQ(verdict.format, Format::emt);
}

// A live watch counts a failed check before the skipped bytes, which join
// the corrupt ones at the next SYNC: the loss is said from the first.
TEST(EmtCheck, AFailedCheckIsDataLostBeforeItsBytesAreCounted) {
  DecodeStats stats;
  stats.failed_checks = 1;
  Check lost = data_loss_check(stats, {});
  EXPECT_EQ(lost.status, CheckStatus::found);
  EXPECT_EQ(lost.reason, "1 emt record failed its check byte: damaged in transit");
}

// Every single-byte change (four per byte) of a capture from the QEMU
// firmware, which the device library writes with check bytes: each is
// reported, and the decoder loses events but almost never invents or alters
// one (4 in 27,372 here: a tag turned into a shorter record's, ALLOC32's
// 0x20 into FREE32's 0x21 or INFER's 0x14, or a varint's length bit
// flipped, re-frames the bytes, and the new frame's check byte matches by
// chance, 1 time in 256). The same changes of a capture without check bytes
// (a TFLite Micro one) alter events about half the time: a damaged time
// delta shifts every event after it until the next SYNC.
TEST(EmtCheck, DamagedBytesLoseEventsInsteadOfInventingThem) {
  const std::string capture = read_file(std::string(EDGEMEM_SOURCE_DIR) + "/examples/traces/kws_leak.emt");
  DecodeStats whole_stats;
  const std::vector<Event> truth = events_of(capture, &whole_stats);
  ASSERT_GT(whole_stats.checked_records, 500u);
  ASSERT_EQ(whole_stats.unchecked_events, 0u);

  // The share of changes after which the events are not `whole` less some.
  auto altered_share = [](const std::string& bytes, const std::vector<Event>& whole, uint64_t* found) {
    std::mt19937 random(7);
    size_t trials = 0, altered = 0;
    for (size_t at = 0; at < bytes.size(); ++at)
      for (uint8_t mask : {uint8_t{0x01}, uint8_t{0x02}, uint8_t{0x80}, static_cast<uint8_t>(1 + random() % 255)}) {
        std::string damaged = bytes;
        damaged[at] = static_cast<char>(damaged[at] ^ mask);
        DecodeStats stats;
        auto got = events_of(damaged, &stats);
        ++trials;
        if (!only_lost_events(whole, got)) ++altered;
        if (found && (stats.failed_checks || stats.corrupt_bytes || stats.truncated_bytes)) ++*found;
      }
    return static_cast<double>(altered) / static_cast<double>(trials);
  };
  uint64_t found = 0;
  double checked = altered_share(capture, truth, &found);
  EXPECT_LT(checked, 0.001) << "of single-byte changes altered or invented an event";
  EXPECT_EQ(found, capture.size() * 4) << "single-byte changes were not reported as damage";

  const std::string v1 =
      read_file(std::string(EDGEMEM_TEST_DATA_DIR) + "/tflm_captures/mlperftiny_ad01_int8.emt");
  DecodeStats v1_stats;
  const std::vector<Event> v1_truth = events_of(v1, &v1_stats);
  ASSERT_EQ(v1_stats.checked_records, 0u);
  double unchecked = altered_share(v1, v1_truth, nullptr);
  EXPECT_GT(unchecked, 20 * checked);
  std::printf("altered by one damaged byte: %.5f with check bytes (%.0f of %zu), %.4f without\n", checked,
              checked * static_cast<double>(capture.size() * 4), capture.size() * 4, unchecked);
}

}  // namespace
}  // namespace edgemem::test
