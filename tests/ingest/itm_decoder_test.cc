#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "ingest/itm_packet.h"
#include "ingest/itm_port_router.h"
#include "test_support.h"

namespace edgemem::test {
namespace {

struct Collect : ItmPacketParser::Handler {
  std::vector<ItmPacket> packets;
  size_t corrupt = 0;
  void on_packet(const ItmPacket& p) override { packets.push_back(p); }
  void on_corrupt(uint8_t, size_t) override { ++corrupt; }
};

uint64_t le(const nlohmann::json& bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes.size(); ++i) v |= bytes[i].get<uint64_t>() << (8 * i);
  return v;
}

// Vectors from rtic-scope/itm (one per packet kind), transcribed in the corpus.
TEST(ItmPackets, MatchTheIndependentPacketVectors) {
  std::string text = read_file(corpus("itm/itm_packet_vectors.json"));
  auto vectors = nlohmann::json::parse(text);
  size_t checked = 0;
  for (const auto& c : vectors["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    Collect got;
    ItmPacketParser parser(got);
    for (const auto& b : c["bytes"]) parser.push(b.get<uint8_t>());
    EXPECT_EQ(got.corrupt, 0u);
    ASSERT_EQ(got.packets.size(), c["expected"].size());
    for (size_t i = 0; i < got.packets.size(); ++i) {
      const ItmPacket& p = got.packets[i];
      const auto& e = c["expected"][i];
      std::string type = e["type"];
      if (type == "Sync") EXPECT_EQ(p.kind, ItmPacketKind::sync);
      else if (type == "Overflow") EXPECT_EQ(p.kind, ItmPacketKind::overflow);
      else if (type == "LocalTimestamp1" || type == "LocalTimestamp2") {
        EXPECT_EQ(p.kind, ItmPacketKind::local_timestamp);
        EXPECT_EQ(p.value, e["ts"].get<uint64_t>());
        if (e.contains("data_relation")) {
          EXPECT_EQ(p.relation, 0u);  // "Sync" = TC 0
        }
      } else if (type == "GlobalTimestamp1") {
        EXPECT_EQ(p.kind, ItmPacketKind::global_timestamp1);
        EXPECT_EQ(p.value, e["ts"].get<uint64_t>());
        EXPECT_EQ(p.wrap, e["wrap"].get<bool>());
        EXPECT_EQ(p.clock_change, e["clkch"].get<bool>());
      } else if (type == "GlobalTimestamp2") {
        EXPECT_EQ(p.kind, ItmPacketKind::global_timestamp2);
        EXPECT_EQ(p.value, e["ts"].get<uint64_t>());
      } else if (type == "Extension") {
        EXPECT_EQ(p.kind, ItmPacketKind::extension);
        EXPECT_EQ(p.value, e["page"].get<uint64_t>());
      } else if (type == "Instrumentation") {
        EXPECT_EQ(p.kind, ItmPacketKind::instrumentation);
        EXPECT_EQ(p.address, e["port"].get<uint8_t>());
        EXPECT_EQ(p.size, e["payload"].size());
        EXPECT_EQ(p.value, le(e["payload"]));
      } else if (type == "EventCounterWrap") {
        EXPECT_EQ(p.kind, ItmPacketKind::event_counter);
        // Payload bits: CPI, EXC, SLEEP, LSU, FOLD, CYC from bit 0 up.
        EXPECT_EQ(bool(p.value & 0x01), e["cpi"].get<bool>());
        EXPECT_EQ(bool(p.value & 0x02), e["exc"].get<bool>());
        EXPECT_EQ(bool(p.value & 0x04), e["sleep"].get<bool>());
        EXPECT_EQ(bool(p.value & 0x08), e["lsu"].get<bool>());
        EXPECT_EQ(bool(p.value & 0x10), e["fold"].get<bool>());
        EXPECT_EQ(bool(p.value & 0x20), e["cyc"].get<bool>());
      } else if (type == "ExceptionTrace") {
        EXPECT_EQ(p.kind, ItmPacketKind::exception_trace);
        EXPECT_EQ(p.value, e["exception_number"].get<uint64_t>());
        EXPECT_EQ(p.function, 3u);  // "Returned"
      } else if (type == "PCSample") {
        EXPECT_EQ(p.kind, ItmPacketKind::pc_sample);
        if (e["pc"].is_null()) {
          EXPECT_TRUE(p.sleeping);
        } else {
          EXPECT_EQ(p.value, e["pc"].get<uint64_t>());
        }
      } else if (type == "DataTracePC") {
        EXPECT_EQ(p.kind, ItmPacketKind::data_trace_pc);
        EXPECT_EQ(p.address, e["comparator"].get<uint8_t>());
        EXPECT_EQ(p.value, e["pc"].get<uint64_t>());
      } else if (type == "DataTraceAddress") {
        EXPECT_EQ(p.kind, ItmPacketKind::data_trace_address);
        EXPECT_EQ(p.address, e["comparator"].get<uint8_t>());
        EXPECT_EQ(p.value, le(e["data"]));
      } else if (type == "DataTraceValue") {
        EXPECT_EQ(p.kind, ItmPacketKind::data_trace_value);
        EXPECT_EQ(p.address, e["comparator"].get<uint8_t>());
        EXPECT_TRUE(p.write);
        EXPECT_EQ(p.size, e["value"].size());
        EXPECT_EQ(p.value, le(e["value"]));
      } else {
        ADD_FAILURE() << "unhandled vector type " << type;
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 18u);  // packets over the 12 cases
}

// A real SWO capture from an STM32F105 (sigrok-dumps), compared with the
// counts sigrok's own arm_itm decoder reports for it.
TEST(ItmCapture, Stm32f105StreamMatchesSigrokCounts) {
  std::string bytes = read_file(corpus("itm/sigrok_stm32f105_itm_stream1.bin"));
  ASSERT_EQ(bytes.size(), 2619u);
  Collect got;
  ItmPacketParser parser(got);
  for (char b : bytes) parser.push(static_cast<uint8_t>(b));
  std::map<ItmPacketKind, size_t> kinds;
  std::map<uint64_t, size_t> pcs;
  std::string port0, port1_text;
  size_t port1_words = 0, irq28_enter = 0;
  for (const auto& p : got.packets) {
    ++kinds[p.kind];
    if (p.kind == ItmPacketKind::pc_sample) ++pcs[p.value];
    if (p.kind == ItmPacketKind::instrumentation && p.address == 0) port0 += static_cast<char>(p.value);
    if (p.kind == ItmPacketKind::instrumentation && p.address == 1) {
      if (p.size == 1) port1_text += static_cast<char>(p.value);
      else ++port1_words;
    }
    if (p.kind == ItmPacketKind::exception_trace && p.value == 16 + 28 && p.function == 1) ++irq28_enter;
  }
  EXPECT_EQ(got.corrupt, 0u);
  EXPECT_EQ(kinds[ItmPacketKind::overflow], 14u);
  EXPECT_EQ(pcs[0x08000216], 148u);
  EXPECT_EQ(pcs[0x08000218], 140u);
  EXPECT_EQ(pcs[0x08000214], 93u);
  EXPECT_EQ(irq28_enter, 8u);
  EXPECT_EQ(port0, "OnOffOnOffOnOffOnOffOnOff");
  EXPECT_EQ(port1_text, "SortSortSortSortSortSortSortSort");
  EXPECT_EQ(port1_words, 40u);
}

// Through the router: port 0 text becomes markers, split where another
// source's packet interrupts it, as sigrok does.
TEST(ItmCapture, PortZeroTextBecomesMarkers) {
  std::string bytes = read_file(corpus("itm/sigrok_stm32f105_itm_stream1.bin"));
  TraceContext ctx;
  Recorder sink;
  ItmDecoder d(ctx, sink);
  d.feed({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  d.finish();
  std::map<std::string, int> marks;
  for (const auto& e : sink.events)
    if (e.kind == EventKind::mark) ++marks[std::string(ctx.sites.name(e.site))];
  EXPECT_EQ(marks["On"], 5);
  EXPECT_EQ(marks["Off"], 5);
  EXPECT_EQ(d.stats().overflows, 14u);
  EXPECT_EQ(d.port_packets(1), 72u);
}

// edgemem's own use of ITM (docs/formats/itm.md): 32-bit writes to port 1
// carry seed-binary records, local timestamps give the time.
std::string stim(uint8_t port, const std::string& payload) {
  std::string out;
  size_t i = 0;
  while (i < payload.size()) {
    size_t n = payload.size() - i >= 4 ? 4 : payload.size() - i >= 2 ? 2 : 1;
    out += static_cast<char>((port << 3) | (n == 4 ? 3 : n));
    out += payload.substr(i, n);
    i += n;
  }
  return out;
}

TEST(ItmEvents, MemoryRecordsOnPortOneWithTimestampsAndCounters) {
  std::string rec;
  rec += '\xB1'; be32(rec, 1);
  rec += '\xA3'; be32(rec, 644); be32(rec, 0x20000100); be32(rec, 0x08000abc);
  rec += '\xB2'; be32(rec, 1);
  std::string stream("\x00\x00\x00\x00\x00\x80", 6);  // sync
  stream += "\xC0\x90\x4E";                           // local timestamp 10000
  stream += stim(1, rec.substr(0, 8));
  stream += "\x30";                                   // local timestamp 3
  stream += stim(1, rec.substr(8));
  stream += stim(2, std::string("\x2A\x00\x00\x00", 4));  // counter 42
  auto run = analyse(Format::itm, stream);
  EXPECT_EQ(run->stats.syncs, 1u);
  EXPECT_EQ(run->stats.corrupt_bytes, 0u);
  EXPECT_EQ(run->result.inferences, 1u);
  EXPECT_EQ(run->result.counts.counters, 1u);
  ASSERT_EQ(run->result.leaks.size(), 0u);  // one block from one inference: not a trend
  ASSERT_EQ(run->result.persistent.size(), 1u);
  EXPECT_EQ(run->result.persistent[0].site, "0x08000abc");
  EXPECT_EQ(run->result.peak.time, 10003u);
}

TEST(ItmEvents, OverflowDropsTheHalfBuiltRecordAndIsReported) {
  std::string rec;
  rec += '\xA2'; be32(rec, 32); be32(rec, 0x20000000);
  std::string stream = stim(1, rec.substr(0, 4));
  stream += '\x70';  // overflow: the rest of the record never arrived
  stream += stim(1, rec);
  auto run = analyse(Format::itm, stream);
  EXPECT_EQ(run->stats.overflows, 1u);
  EXPECT_EQ(run->stats.corrupt_bytes, 4u);
  EXPECT_EQ(run->result.counts.allocs, 1u);
}

// emt on port 1: after lost data the next byte may be mid-record, so the
// decoder waits for the next SYNC instead of reading a shifted record.
TEST(ItmEvents, OverflowInAnEmtStreamSkipsToTheNextSync) {
  std::string sync("\x7E" "emt!" "\x00", 6);
  std::string alloc("\x20\x05\x00\x04\x00\x00\x00\x00\x84\x02\x00\x00\x00\x00\x00\x00", 16);
  std::string stream = stim(1, sync + alloc.substr(0, 8));
  stream += '\x70';  // overflow: the rest of the ALLOC32 was dropped
  stream += stim(1, alloc.substr(0, 8) + sync + alloc);  // a shifted record, then SYNC and a whole one
  auto run = analyse(Format::itm, stream);
  EXPECT_EQ(run->stats.overflows, 1u);
  EXPECT_EQ(run->result.counts.allocs, 1u);
  EXPECT_EQ(run->stats.corrupt_bytes, 16u);  // the half record before and the shifted bytes after the loss
}

// A capture whose ITM timestamps start after the first events (a probe that
// enabled them late) keeps the payload's clock throughout (here the order of
// seed records): switching would make time jump from record 2 to cycle 100,000.
// A local timestamp follows the packets it stamps, so a capture's first
// seed record always comes before its first timestamp: the ITM clock takes
// over then (it once never did, and every timestamp of the capture was lost).
TEST(ItmEvents, TimestampsAfterTheFirstSeedRecordsTakeOverTheClock) {
  std::string first, second;
  first += '\xA2'; be32(first, 32); be32(first, 0x20000000);
  second += '\xA2'; be32(second, 64); be32(second, 0x20000040);
  std::string stream = stim(1, first);
  stream += "\xC0\xA0\x8D\x06";  // local timestamp 100,000
  stream += stim(1, second);
  auto run = analyse(Format::itm, stream);
  EXPECT_EQ(run->result.counts.allocs, 2u);
  EXPECT_EQ(run->result.peak.time, 1u + 100000u);  // after record 0, as the clock counts on from it
  EXPECT_EQ(run->context.time_base, TimeBase::cycles);
}

// A probe that sends GTS1 and no GTS2 (bits 25:0 of the global clock only):
// when those bits wrap, the high bits went up by one. The clock once stalled
// there until the low bits passed their old value (a 1,000,000-cycle loop
// read as 49,405 cycles per inference).
TEST(ItmEvents, GlobalTimestampBitsThatWrapWithoutGts2CarryIntoTheHighBits) {
  auto gts1 = [](uint64_t v, bool wrap) {
    std::string p("\x94");
    p += static_cast<char>((v & 0x7f) | 0x80);
    p += static_cast<char>(((v >> 7) & 0x7f) | 0x80);
    p += static_cast<char>(((v >> 14) & 0x7f) | 0x80);
    p += static_cast<char>(((v >> 21) & 0x1f) | (wrap ? 0x40 : 0));
    return p;
  };
  std::string a, b;
  a += '\xA2'; be32(a, 32); be32(a, 0x20000000);
  b += '\xA2'; be32(b, 64); be32(b, 0x20000040);
  std::string stream = gts1(0x3FFFFF0, false) + stim(1, a) + gts1(0x10, true) + stim(1, b);
  auto run = analyse(Format::itm, stream);
  EXPECT_EQ(run->result.counts.allocs, 2u);
  EXPECT_EQ(run->result.peak.time, 0x4000010u);
}

// A GTS1 of fewer than 4 bytes carries only the low bits that changed, 7 a
// byte; the bits above are the previous packet's (ARMv7-M D4.2.5, as
// rtic-scope's itm decoder merges them). Read as the whole value, every
// such packet added 2^26 to the time.
TEST(ItmEvents, AShortGlobalTimestampReplacesOnlyItsLowBits) {
  std::string full("\x94", 1);
  const uint64_t start = 0x1234567;
  full += static_cast<char>((start & 0x7f) | 0x80);
  full += static_cast<char>(((start >> 7) & 0x7f) | 0x80);
  full += static_cast<char>(((start >> 14) & 0x7f) | 0x80);
  full += static_cast<char>((start >> 21) & 0x1f);
  std::string a, b, c;
  a += '\xA2'; be32(a, 32); be32(a, 0x20000000);
  b += '\xA2'; be32(b, 64); be32(b, 0x20000040);
  c += '\xA2'; be32(c, 32); be32(c, 0x20000100);
  // One byte: bits 6:0 become 0x7F (0x123457F); two: bits 13:0 become 0x2000 (0x1236000).
  const std::string one("\x94\x7F", 2), two("\x94\x80\x40", 3);
  auto run = analyse(Format::itm, full + stim(1, a) + one + stim(1, b) + two + stim(1, c));
  EXPECT_EQ(run->result.counts.allocs, 3u);
  EXPECT_EQ(run->result.peak.bytes, 128u);
  EXPECT_EQ(run->result.peak.time, 0x1236000u);  // it read 0x9236000: 2^26 added per short packet
}

// An overflow packet inside a port-0 line: characters of it were dropped on
// the device, so it is not decoded ("size=644" lost "44" and read as a 6 B
// block), as port 1 drops its half-built record.
TEST(ItmEvents, APortZeroLineThatLostBytesToAnOverflowIsNotDecoded) {
  std::string stream = stim(0, "[MEM][10] ALLOC size=6");
  stream += '\x70';  // overflow: "44" never arrived
  stream += stim(0, " addr=0x20003000\n[MEM][20] ALLOC size=32 addr=0x20004000\n");
  auto run = analyse(Format::itm, stream);
  EXPECT_EQ(run->stats.overflows, 1u);
  EXPECT_EQ(run->stats.malformed_lines, 1u);
  EXPECT_EQ(run->result.counts.allocs, 1u);
  EXPECT_EQ(run->result.peak.bytes, 32u);
  // What follows to the newline is the same line's tail, no marker word
  // ("3000" read as a mark once its line was dropped).
  std::string tail = stim(0, "[MEM][10] ALLOC size=644 addr=0x2000");
  tail += '\x70';
  tail += stim(0, "3000\n[MEM][20] ALLOC size=32 addr=0x20004000\n");
  auto cut = analyse(Format::itm, tail);
  EXPECT_EQ(cut->result.counts.allocs, 1u);
  EXPECT_EQ(cut->result.counts.marks, 0u);
}

// Extension packets page the stimulus ports (ARMv7-M D4.2.6): a write to
// port 33 is port 1 of page 1, not port 1. Merged into port 1's records,
// one such write broke the emt stream ("check byte ... no memory events").
TEST(ItmEvents, StimulusPortPagesAreNotPortOne) {
  std::string sync("\x7E" "emt!" "\x00", 6);
  std::string alloc("\x20\x05\x00\x04\x00\x00\x00\x00\x84\x02\x00\x00\x00\x00\x00\x00", 16);
  const std::string page1("\x18", 1), page0("\x08", 1);  // C=0 EX page, SH=0: stimulus ports
  std::string stream = stim(1, sync + alloc.substr(0, 8));
  stream += page1 + stim(1, "junk") + page0;  // port 33
  stream += stim(1, alloc.substr(8));
  TraceContext ctx;
  Recorder sink;
  ItmDecoder d(ctx, sink);
  d.feed({reinterpret_cast<const uint8_t*>(stream.data()), stream.size()});
  d.finish();
  EXPECT_EQ(d.stats().corrupt_bytes, 0u);
  EXPECT_EQ(d.port_packets(33), 1u);
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events[0].size, 644u);
}

// [MEM] lines carry their own stamps: once used, they stay the clock.
TEST(ItmEvents, TimestampsAfterStampedLinesDoNotSwitchTheClock) {
  std::string stream = stim(0, "[MEM][500] ALLOC size=16 offset=0 site=a.c:1\n");
  stream += "\xC0\xA0\x8D\x06";  // local timestamp 100,000
  stream += stim(0, "[MEM][700] ALLOC size=32 offset=16 site=a.c:2\n");
  auto run = analyse(Format::itm, stream);
  EXPECT_EQ(run->result.counts.allocs, 2u);
  EXPECT_EQ(run->result.peak.time, 700u);
}

// PC samples and port-2 writes land between the characters of a printf'd
// line: it still ends at its newline (every record of such a capture was
// lost, the pieces read as markers). A marker word still ends at them.
TEST(ItmEvents, OtherPacketsInsideAPortZeroMemLineDoNotCutIt) {
  const std::string text = "[MEM][10] ALLOC size=100 addr=0x1000\n[MEM][20] ALLOC size=200 addr=0x2000\n"
                           "[MEM][30] FREE addr=0x1000\n";
  for (std::string between : {std::string("\x17\x00\x10\x00\x08", 5), std::string("\x13\x07\x00\x00\x00", 5)}) {
    std::string stream;
    for (size_t i = 0; i < text.size(); ++i) {
      stream += stim(0, text.substr(i, 1));
      if (i % 11 == 5) stream += between;  // a PC sample, or a 32-bit write to port 2
    }
    stream += stim(0, "On") + between + stim(0, "Off") + between + stim(0, "phase:1") + between + stim(0, "layer[3]") + between;
    // A logger's prefix before the record: a blank or ':' says it is no marker word.
    for (char c : std::string("I (12) app: [MEM][40] ALLOC size=8 addr=0x3000\n")) stream += stim(0, std::string(1, c)) + between;
    auto run = analyse(Format::itm, stream);
    EXPECT_EQ(run->result.counts.allocs, 3u);
    EXPECT_EQ(run->result.counts.frees, 1u);
    EXPECT_EQ(run->result.counts.marks, 5u);  // On, Off, phase:1, layer[3], and the prefix's "I", cut before its blank
    EXPECT_EQ(run->stats.malformed_lines, 0u);
    ASSERT_EQ(run->result.pools.size(), 1u);
    EXPECT_EQ(run->result.pools[0].final_bytes, 208u);
  }
}

TEST(ItmEvents, MemLinesOnPortZeroAreDecodedAsTheTextLog) {
  std::string stream = stim(0, "[MEM][0] ALLOC size=16 offset=0 site=a.c:1\n[MEM][0] FREE offset=0\n");
  auto run = analyse(Format::itm, stream);
  EXPECT_EQ(run->result.counts.allocs, 1u);
  EXPECT_EQ(run->result.counts.frees, 1u);
  EXPECT_EQ(run->result.counts.marks, 0u);
}

// A capture that ends inside a printed line cut it off, as a text log's
// last line without a newline is: counted as truncated, never decoded (it
// was dropped in silence). So is a marker word: it may be cut short.
TEST(ItmEvents, ACaptureEndingInsideAPrintedLineCountsItTruncated) {
  const std::string cut = "[MEM][120] ALLOC size=32 addr=0x11";
  auto run = analyse(Format::itm, stim(0, "[MEM][110] ALLOC size=16 addr=0x1000\n" + cut));
  EXPECT_EQ(run->result.counts.allocs, 1u);
  EXPECT_EQ(run->stats.truncated_bytes, cut.size());
  EXPECT_EQ(data_loss_check(run->stats, run->result.counts).status, CheckStatus::found);
  auto word = analyse(Format::itm, stim(0, "[MEM][110] ALLOC size=16 addr=0x1000\nDone"));
  EXPECT_EQ(word->stats.truncated_bytes, 4u);
  EXPECT_EQ(word->result.counts.marks, 0u);
}

// Port 1's record set is told by its first bytes, not its first byte alone,
// and soon enough for a live watch: seed records once eight chain from some
// byte (a capture joined two bytes into one, sent a byte per write, is
// decoded before its end), a stray port-1 byte beside port-0 text after
// 4,096 held packets. An overflow's half record is still dropped.
TEST(ItmEvents, PortOneIsToldByItsFirstBytesSoonEnoughForALiveWatch) {
  std::string seed;
  for (uint32_t i = 0; i < 12; ++i) {
    seed += '\xA2';
    be32(seed, 32);
    be32(seed, 0x20000000 + 64 * i);
  }
  auto delivered_before_the_end = [](const std::string& stream) {
    TraceContext context;
    Recorder sink;
    auto decoder = make_decoder(Format::itm, context, sink);
    decoder->feed({reinterpret_cast<const uint8_t*>(stream.data()), stream.size()});
    return sink.events.size();
  };
  std::string bytewise;
  for (char c : seed.substr(2)) bytewise += stim(1, std::string(1, c));
  EXPECT_EQ(delivered_before_the_end(bytewise), 11u);
  auto joined = analyse(Format::itm, bytewise);
  EXPECT_EQ(joined->result.counts.allocs, 11u);
  EXPECT_EQ(joined->stats.corrupt_bytes, 7u);  // the rest of the first record
  std::string stray = stim(1, "\x42");
  for (int i = 0; i < 600; ++i) stray += stim(0, fmt::format("[MEM][{}] ALLOC size=16 addr=0x{:x}\n", i, 0x1000 + 16 * i));
  EXPECT_GT(delivered_before_the_end(stray), 100u);  // 4-byte writes: past 4,096 packets by line 460
  auto lost = analyse(Format::itm, stim(1, seed.substr(0, 5)) + "\x70" + stim(1, seed));
  EXPECT_EQ(lost->result.counts.allocs, 12u);
  EXPECT_EQ(lost->stats.corrupt_bytes, 5u);  // the half record the overflow cut
}

TEST(ItmEvents, APortZeroProblemIsPlacedAtItsLineNotAtTheEnd) {
  std::string good = stim(0, "[MEM][0] ALLOC size=16 offset=0 site=a.c:1\n");
  std::string bad = stim(0, "[MEM][1] ALLOC size=banana offset=16\n");
  std::string stream = good + bad;
  for (int i = 0; i < 100; ++i) stream += good;
  auto run = analyse(Format::itm, stream);
  ASSERT_TRUE(run->stats.first_problem);
  // The packet carrying the bad line's newline is its last one.
  EXPECT_GE(run->stats.first_problem->offset, good.size());
  EXPECT_LT(run->stats.first_problem->offset, good.size() + bad.size());
  EXPECT_NE(run->stats.first_problem->what.find("ITM port 0 line 2: "), std::string::npos)
      << run->stats.first_problem->what;
}

}  // namespace
}  // namespace edgemem::test
