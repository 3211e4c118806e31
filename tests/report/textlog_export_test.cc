#include <gtest/gtest.h>

#include <fmt/format.h>

#include "edgemem/report.h"
#include "edgemem/trace_session.h"
#include "ingest/textlog_decoder.h"
#include "ingest/textlog_escape.h"
#include "report/textlog_export.h"
#include "test_support.h"

namespace edgemem::test {
namespace {

std::vector<Event> decode(const std::string& text, TraceContext& context) {
  Recorder sink;
  TextLogDecoder decoder(context, sink);
  decoder.feed({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  decoder.finish();
  EXPECT_EQ(decoder.stats().malformed_lines, 0u) << text;
  return sink.events;
}

TEST(TextLogEscape, KeepsEveryByteThroughOneToken) {
  std::string name = "operator new(unsigned long) (new_op.cc:50);main\t(a.c:3) 100%=x\x01";
  std::string escaped = textlog_escape(name);
  EXPECT_EQ(escaped.find_first_of(" \t=\x01"), std::string::npos) << escaped;
  EXPECT_EQ(textlog_unescape(escaped), name);
  EXPECT_EQ(textlog_escape("lstm.cc:88"), "lstm.cc:88");  // a seed site is written as it was
}

TEST(TextLogEscape, DecoderReadsEscapedSitesAndLeavesOtherPercentSignsAlone) {
  TraceContext context;
  auto events = decode(
      "[MEM][1] ALLOC size=8 addr=0x10 site=main%20(a.c:1);f%20(b.c:2)\n"
      "[MEM][2] ALLOC size=8 addr=0x20 site=50%done\n"
      "[MEM][3] MARK warm%20up\n",
      context);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(context.sites.name(events[0].site), "main (a.c:1);f (b.c:2)");
  EXPECT_EQ(context.sites.name(events[1].site), "50%done");
  EXPECT_EQ(context.sites.name(events[2].site), "warm up");
}

// Every event kind with a text form, written and read back, is the same event.
TEST(TextLogExport, WrittenEventsReadBackTheSame) {
  TraceContext source;
  PoolInfo arena;
  arena.name = "tensor arena";
  arena.kind = PoolKind::arena;
  arena.size = 4096;
  arena.base = 0x20000000;
  arena.declared = true;
  PoolId a = source.pools.declare(arena);
  PoolId h = source.pools.intern("malloc", PoolKind::heap);
  SiteId stack = source.sites.intern("main (main.c:3);operator new(unsigned long) (new_op.cc:50)");
  SiteId mark = source.sites.intern("warm up=1");
  SiteId counter = source.sites.intern("tokens");
  std::vector<Event> events = {
      {.time = 1, .address = 0x7f0010, .size = 24, .site = stack, .align = 16, .thread = 7, .pool = h, .kind = EventKind::alloc},
      {.time = 2, .address = 64, .size = 100, .site = stack, .align = 4, .pool = a, .kind = EventKind::alloc},
      {.time = 3, .size = 5, .kind = EventKind::inference_begin},
      {.time = 4, .address = 0x7f0100, .size = 48, .old_address = 0x7f0010, .site = stack, .pool = h, .kind = EventKind::realloc},
      {.time = 5, .size = 1 << 20, .align = 8, .pool = a, .kind = EventKind::alloc_failed},
      {.time = 6, .address = 64, .pool = a, .kind = EventKind::free},
      {.time = 7, .site = mark, .kind = EventKind::mark},
      {.time = 8, .size = 12, .site = counter, .kind = EventKind::counter},
      {.time = 9, .size = 1, .pool = a, .kind = EventKind::guard_check},
      {.time = 10, .pool = a, .kind = EventKind::arena_reset},
      {.time = 11, .size = 5, .kind = EventKind::inference_end},
  };
  TextLogWriter writer;
  std::string text;
  for (const Event& e : events) writer.write(e, source, text);

  TraceContext read;
  std::vector<Event> back = decode(text, read);
  ASSERT_EQ(back.size(), events.size()) << text;
  for (size_t i = 0; i < events.size(); ++i) {
    Event want = events[i], got = back[i];
    EXPECT_EQ(source.sites.name(want.site), read.sites.name(got.site)) << i << "\n" << text;
    if (want.kind == EventKind::alloc || want.kind == EventKind::free || want.kind == EventKind::realloc ||
        want.kind == EventKind::alloc_failed || want.kind == EventKind::guard_check ||
        want.kind == EventKind::arena_reset) {
      EXPECT_EQ(source.pools.at(want.pool).name, read.pools.at(got.pool).name) << i;
    }
    want.site = got.site = 0;
    want.pool = got.pool = 0;
    EXPECT_EQ(want, got) << i << "\n" << text;
  }
  const PoolInfo& declared = read.pools.at(back[1].pool);
  EXPECT_EQ(declared.kind, PoolKind::arena);
  EXPECT_EQ(declared.size, 4096u);
  EXPECT_EQ(declared.base, 0x20000000u);
  EXPECT_EQ(read.pools.at(back[0].pool).kind, PoolKind::heap);
  EXPECT_EQ(writer.summaries_left_out(), 0u);
}

// `log` decoded and written back as the decoder meets each line, as
// --textlog writes it.
std::string written_back(const std::string& log) {
  TraceContext source;
  Recorder sink;
  TextLogDecoder decoder(source, sink);
  TextLogWriter writer;
  std::string text;
  size_t written = 0;
  for (size_t at = 0, end; at < log.size(); at = end + 1) {
    end = log.find('\n', at);
    decoder.feed({reinterpret_cast<const uint8_t*>(log.data() + at), end + 1 - at});
    for (; written < sink.events.size(); ++written) writer.write(sink.events[written], source, text);
  }
  decoder.finish();
  for (; written < sink.events.size(); ++written) writer.write(sink.events[written], source, text);
  return text;
}

// A pool declared, or declared again, in the middle of a trace: its POOL
// line carries the time of the record it comes before, so the log's time
// never goes back (every POOL line once read [MEM][0], and a log read back
// counted a stamp going back and moved every later time).
TEST(TextLogExport, APoolDeclaredMidTraceKeepsTheLogsTimeGoingForward) {
  const std::string log =
      "[MEM][10] POOL name=h kind=heap size=1000 base=0x1000\n[MEM][100] INFER begin 1\n"
      "[MEM][150] ALLOC size=10 addr=0x1000 pool=h site=a\n[MEM][200] POOL name=h kind=heap size=2000 base=0x1000\n"
      "[MEM][300] INFER end 1\n[MEM][400] INFER begin 2\n[MEM][450] ALLOC size=10 addr=0x1100 pool=h site=a\n"
      "[MEM][500] INFER end 2\n";
  const std::string text = written_back(log);
  EXPECT_NE(text.find("size=2000"), std::string::npos) << text;
  EXPECT_EQ(text.find("[MEM][0] "), std::string::npos) << text;
  auto again = analyse(Format::log, text);
  EXPECT_EQ(again->stats.time_went_back, 0u) << text;
  EXPECT_EQ(again->result.peak.time, analyse(Format::log, log)->result.peak.time);
}

// A device restart is written as the BOOT it was: once the reset of each
// pool, read back as no restart, and the arena's fit ran across both boots.
TEST(TextLogExport, ARestartIsWrittenAsABootLine) {
  std::string log;
  uint64_t t = 1;
  for (int boot = 0; boot < 2; ++boot) {
    log += fmt::format("[MEM][{}] BOOT\n[MEM][{}] POOL name=ar kind=arena size=4000\n", t, t + 1);
    log += fmt::format("[MEM][{}] POOL name=hp kind=heap size=4096 base=0x1000\n", t + 2);
    t += 3;
    for (int i = 1; i <= 5; ++i, t += 3)
      log += fmt::format("[MEM][{}] INFER begin {}\n[MEM][{}] ALLOC size=100 offset={} pool=ar site=a\n"
                         "[MEM][{}] INFER end {}\n",
                         t, i, t + 1, 100 * (i - 1), t + 2, i);
  }
  const std::string text = written_back(log);
  EXPECT_EQ(text.find("RESET"), std::string::npos) << text;
  auto original = analyse(Format::log, log);
  auto again = analyse(Format::log, text);
  ASSERT_EQ(original->result.restarts.total, 1u);
  EXPECT_EQ(again->result.restarts.total, 1u) << text;
  EXPECT_EQ(again->stats.events, original->stats.events) << text;
  again->stats.bytes = original->stats.bytes;  // the written log's numbers are spelled otherwise
  EXPECT_EQ(json_report({"t", "log", again->stats, again->context.time_base}, again->result),
            json_report({"t", "log", original->stats, original->context.time_base}, original->result));
}

TEST(TextLogExport, PoolSummariesAreCountedNotWritten) {
  TraceContext context;
  PoolId p = context.pools.intern("pool0", PoolKind::heap);
  TextLogWriter writer;
  std::string text;
  writer.write({.size = 10, .pool = p, .kind = EventKind::pool_summary}, context, text);
  EXPECT_EQ(text, "");
  EXPECT_EQ(writer.summaries_left_out(), 1u);
}

// What the trace lost is written as DROP lines, so the log reads back as
// having lost data: the export read as whole, and a trace whose
// fragmentation was not judged (records lost) was judged from its log.
TEST(TextLogExport, WhatTheTraceLostIsWrittenAsDropLines) {
  const std::string trace =
      "[MEM][1] POOL name=h kind=heap size=4096 base=0x1000\n"
      "[MEM][2] ALLOC size=100 addr=0x1000 pool=h site=a\n"
      "[MEM][3] DROP 5\n"
      "[MEM][4] ALLOC size=100 addr=0x1100 pool=h site=b\n"
      "[MEM][5] ALLOC size=oops addr=0x1200 pool=h\n"
      "[MEM][6] FREE addr=0x1000 pool=h\n"
      "[MEM][7] ALLOC size=100 addr=0x12";  // cut off
  TextLogWriter writer;
  std::string text;
  TraceSessionOptions options;
  options.format = Format::log;
  options.event_tap = [&](const Event& e, const TraceContext& c, const Decoder& d) {
    writer.losses(d.progress(), e.time, text);
    writer.write(e, c, text);
  };
  TraceSession session("t.log", options);
  session.feed({reinterpret_cast<const uint8_t*>(trace.data()), trace.size()});
  TraceOutcome outcome = session.finish();
  ASSERT_TRUE(outcome.run);
  writer.end(outcome.run->input.stats, text);
  // Before the record after each loss: 5 dropped, 1 malformed line; the cut
  // last line is a cut line at the end (lost at the end, not mid-trace).
  EXPECT_NE(text.find("[MEM][4] DROP 5\n[MEM][4] ALLOC"), std::string::npos) << text;
  EXPECT_NE(text.find("[MEM][6] DROP 1\n[MEM][6] FREE"), std::string::npos) << text;
  EXPECT_TRUE(text.ends_with("[MEM][6] FREE addr=0x1000 pool=h\n[MEM][6] (the trace was cut off here)")) << text;
  auto back = analyse(Format::log, text);
  EXPECT_EQ(back->stats.dropped_records, 6u);
  EXPECT_GT(back->stats.truncated_bytes, 0u);
  EXPECT_EQ(data_loss_check(back->stats, back->result.counts).status, CheckStatus::found);
  // Cut off at its end only: the log is cut off too, and loses nothing mid-way.
  TextLogWriter cut;
  std::string cut_text;
  DecodeStats ended;
  ended.truncated_bytes = 12;
  cut.end(ended, cut_text);
  EXPECT_EQ(cut_text, "[MEM][0] (the trace was cut off here)");
  // Nothing lost, nothing written.
  TextLogWriter quiet;
  std::string none;
  quiet.losses(DecodeStats{}, 1, none);
  EXPECT_EQ(none, "");
}

}  // namespace
}  // namespace edgemem::test
