// A debugger's dump of target/'s RAM ring (the em_ring struct, then its
// storage) reads as the stream it holds: the bytes from its tail to its
// head, in the order written, however the ring wrapped. The storage read
// as a stream instead gives the newest bytes before older ones.
#include <gtest/gtest.h>

#include <fstream>

#include <fmt/format.h>

#include "edgemem/report.h"
#include "edgemem/trace_session.h"
#include "report/units.h"
#include "session/ring_dump.h"
#include "test_support.h"

namespace edgemem {
namespace {

void put_u32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s += static_cast<char>(v >> (8 * i) & 0xFF);
}

// The struct as a 32-bit target lays it out (or a 64-bit one: 4 bytes of
// padding, an 8-byte pointer), then `size` bytes holding `stream` at
// positions [tail, head) masked, and stale bytes elsewhere.
std::string ring_dump(const std::string& stream, uint32_t size, uint32_t tail, uint32_t dropped, bool wide = false) {
  const uint32_t head = tail + static_cast<uint32_t>(stream.size());
  std::string dump = "ERNG";
  put_u32(dump, size);
  put_u32(dump, head);
  put_u32(dump, tail);
  put_u32(dump, dropped);
  put_u32(dump, 0x20000400);
  if (wide) put_u32(dump, 0), put_u32(dump, 0);
  std::string storage(size, '\x5A');  // stale bytes of the lap before
  for (uint32_t i = 0; i < stream.size(); ++i) storage[(tail + i) & (size - 1)] = stream[i];
  return dump + storage;
}

std::string write(const std::string& name, const std::string& bytes) {
  const std::string path = (test::scratch_dir("edgemem-ring") / name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string json_of(const TraceOutcome& o) {
  return o.run ? json_report(o.run->input, o.run->result) : std::string("no run");
}

TEST(RingDump, ReadsAsTheStreamItHoldsWrappedOrNot) {
  const std::string capture = test::read_file(std::string(EDGEMEM_SOURCE_DIR) + "/examples/traces/kws_leak.emt");
  const std::string plain = write("plain.emt", capture);
  TraceOutcome whole = analyse_trace_file(plain, {});
  ASSERT_TRUE(whole.run);
  const uint32_t size = 8192;
  ASSERT_LE(capture.size(), size);
  struct Case {
    const char* name;
    uint32_t tail;
    bool wide;
  };
  for (const Case& c : {Case{"from-zero", 0, false}, Case{"wrapped", 3 * size + size - 100, false},
                        Case{"wide", 5000, true}}) {
    const std::string path = write(std::string(c.name) + ".ring", ring_dump(capture, size, c.tail, 0, c.wide));
    TraceOutcome dumped = analyse_trace_file(path, {});
    ASSERT_TRUE(dumped.run) << c.name << ": " << (dumped.notes.empty() ? "" : dumped.notes.back());
    // The same answer as the plain capture: input.path aside.
    dumped.run->input.path = whole.run->input.path;
    EXPECT_EQ(json_of(dumped), json_of(whole)) << c.name;
    ASSERT_FALSE(dumped.notes.empty());
    EXPECT_NE(dumped.notes[0].find(fmt::format("an em_ring dump (8,192 B ring): read the {} bytes not drained",
                                               units::grouped(capture.size()))),
              std::string::npos)
        << dumped.notes[0];
  }
}

// Records dropped after the last one that fit have no record to ride on:
// only the ring's counter tells them (a capture once read 228 records lost
// where the device had dropped 273).
TEST(RingDump, DropsAfterTheLastRecordComeFromTheRingsCounter) {
  const std::string capture = test::read_file(std::string(EDGEMEM_SOURCE_DIR) + "/examples/traces/kws_leak.emt");
  TraceOutcome o = analyse_trace_file(write("dropped.ring", ring_dump(capture, 8192, 0, 45)), {});
  ASSERT_TRUE(o.run);
  EXPECT_EQ(o.run->input.stats.dropped_records, 45u);
  EXPECT_NE(text_report(o.run->input, o.run->result).find("[DATA LOST]"), std::string::npos);
}

TEST(RingDump, ADumpThatIsNotOneRingIsRefusedInOneLine) {
  const std::string capture = test::read_file(std::string(EDGEMEM_SOURCE_DIR) + "/examples/traces/kws_leak.emt");
  std::string not_a_power = ring_dump(capture, 8192, 0, 0);
  not_a_power[5] = 0x1F;  // size 0x1F00
  std::string cut = ring_dump(capture, 8192, 0, 0);
  cut.resize(cut.size() - 1);
  std::string past = ring_dump(capture, 8192, 0, 0);
  past[10] = 0x7F;  // head far past the tail
  for (const auto& [name, dump, said] :
       {std::tuple<std::string, std::string, std::string>{"size.ring", not_a_power, "offset 4: an em_ring's size is a power of two"},
        {"cut.ring", cut, "bytes of storage, 8216 or 8224 bytes in all; this one has 8215"},
        {"head.ring", past, "offset 8: the head"}}) {
    TraceOutcome o = analyse_trace_file(write(name, dump), {});
    EXPECT_FALSE(o.run) << name;
    ASSERT_EQ(o.notes.size(), 1u) << name;
    EXPECT_NE(o.notes[0].find(said), std::string::npos) << o.notes[0];
  }
}

}  // namespace
}  // namespace edgemem
