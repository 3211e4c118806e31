// The trace session: bytes pushed in any split give one answer, what is not
// a trace is refused with a note, and a stopped read still reports what it saw.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "edgemem/trace_session.h"

namespace edgemem {
namespace {

std::span<const uint8_t> bytes_of(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

std::string leaking_log(int inferences) {
  std::string log;
  for (int i = 1; i <= inferences; ++i)
    log += fmt::format("[MEM][{}] INFER begin {}\n[MEM][{}] ALLOC size=644 offset={} site=lstm.cc:88\n[MEM][{}] INFER end {}\n",
                       10 * i, i, 10 * i + 1, 644 * (i - 1), 10 * i + 2, i);
  return log;
}

TraceOutcome push(const std::string& bytes, size_t chunk) {
  TraceSession session("t.log", {});
  for (size_t i = 0; i < bytes.size(); i += chunk)
    session.feed(bytes_of(bytes).subspan(i, std::min(chunk, bytes.size() - i)));
  return session.finish();
}

TEST(TraceSession, BytesPushedOneAtATimeGiveTheSameAnswerAsAllAtOnce) {
  std::string log = leaking_log(1000);  // longer than the 64 KiB sniff window
  ASSERT_GT(log.size(), 64u * 1024);
  TraceOutcome whole = push(log, log.size()), single = push(log, 1), odd = push(log, 4093);
  ASSERT_TRUE(whole.run && single.run && odd.run);
  EXPECT_TRUE(whole.notes.empty());
  EXPECT_EQ(whole.run->input.format, "log");
  EXPECT_EQ(whole.run->result.inferences, 1000u);
  ASSERT_EQ(whole.run->result.leaks.size(), 1u);
  EXPECT_DOUBLE_EQ(*whole.run->result.leaks[0].bytes_per_inference, 644.0);
  InputSummary in = whole.run->input;
  EXPECT_EQ(json_report(in, whole.run->result), json_report(single.run->input, single.run->result));
  EXPECT_EQ(json_report(in, whole.run->result), json_report(odd.run->input, odd.run->result));
}

TEST(TraceSession, AnElfIsRefusedWithANoteNamingTheInputAndWhatToRunInstead) {
  TraceSession session("fw.elf", {});
  std::string elf = std::string("\x7f" "ELF\x01\x01\x01", 7) + std::string(200, '\0');
  session.feed(bytes_of(elf));
  session.feed(bytes_of(std::string(70 * 1024, '\0')));  // past the sniff window: the verdict is in
  EXPECT_FALSE(session.accepting());
  TraceOutcome out = session.finish();
  EXPECT_FALSE(out.run);
  ASSERT_EQ(out.notes.size(), 1u);
  EXPECT_EQ(out.notes[0].rfind("fw.elf: an ELF file, not a trace", 0), 0u) << out.notes[0];
  EXPECT_NE(out.notes[0].find("edgemem map --elf fw.elf"), std::string::npos) << out.notes[0];
}

TEST(TraceSession, MalformedLinesAreAWarningNoteAndTheRestIsAnalysed) {
  TraceOutcome out = push("[MEM][x] ALLOC size=1\n" + leaking_log(3), 7);
  ASSERT_TRUE(out.run);
  ASSERT_EQ(out.notes.size(), 1u);
  EXPECT_EQ(out.notes[0], "warning: t.log:1: expected [MEM][<cycles>] with a number in the second bracket "
                          "(0 corrupt bytes, 1 malformed lines skipped; the rest was analysed)");
  EXPECT_EQ(out.run->result.inferences, 3u);
}

// A file that ends inside its first record says so, not that it holds no
// trace at all.
TEST(TraceSession, AnInputCutInsideItsFirstRecordSaysSo) {
  TraceSessionOptions options;
  options.format = Format::log;
  TraceSession session("t.log", options);
  session.feed(bytes_of("[MEM][10] ALLOC size=644 offs"));
  TraceOutcome out = session.finish();
  EXPECT_FALSE(out.run);
  ASSERT_EQ(out.notes.size(), 1u);
  EXPECT_EQ(out.notes[0], "t.log: the input ends inside a record (29 bytes of it, cut off) before any whole memory "
                          "event (as --format log)");
}

// A text log decoded as the format asked for, which its bytes are not: one
// line, naming what it looks like (it was a warning line, then the error).
TEST(TraceSession, AForcedFormatTheBytesAreNotIsOneLineSayingWhatTheyLookLike) {
  TraceSessionOptions options;
  options.format = Format::emt;
  TraceSession session("t.log", options);
  session.feed(bytes_of(leaking_log(5)));
  TraceOutcome out = session.finish();
  EXPECT_FALSE(out.run);
  ASSERT_EQ(out.notes.size(), 1u);
  EXPECT_EQ(out.notes[0].rfind("t.log: offset 0: ", 0), 0u) << out.notes[0];
  EXPECT_TRUE(out.notes[0].ends_with("(as --format emt); no memory events decoded; its bytes look like log: leave out "
                                     "--format"))
      << out.notes[0];
}

// Raw ITM forced as TPIU: its bytes read as frames scattered over many
// sources and gave hundreds of junk marks without a word (an exemption
// once kept ITM and TPIU out of the forced-format warning).
TEST(TraceSession, RawItmForcedAsTpiuIsSaidToLookLikeItm) {
  std::string emt = test::read_file(std::string(EDGEMEM_SOURCE_DIR) + "/examples/traces/kws_leak.emt");
  std::string itm;
  for (size_t i = 0; i + 4 <= emt.size(); i += 4) itm += static_cast<char>((1 << 3) | 3) + emt.substr(i, 4);
  TraceSessionOptions options;
  options.format = Format::tpiu;
  TraceSession session("swo.bin", options);
  session.feed(bytes_of(itm));
  TraceOutcome out = session.finish();
  const bool said = std::any_of(out.notes.begin(), out.notes.end(), [](const std::string& n) {
    return n.find("as --format tpiu") != std::string::npos && n.find("look like itm") != std::string::npos;
  });
  EXPECT_TRUE(said) << (out.notes.empty() ? "no notes" : out.notes[0]);
}

// An emt capture forced as the seed binary or ITM decodes a few "events"
// from its bytes: a helper's capture read a corrupted guard, a 2 GB peak
// and dropped trace data, exit 0 (1 under --fail-on). Damage beside a
// format the bytes do not look like is refused, with what they look like.
TEST(TraceSession, AForcedFormatThatDecodesDamageIsRefused) {
  const std::string emt = test::read_file(std::string(EDGEMEM_SOURCE_DIR) + "/examples/traces/kws_leak.emt");
  for (Format f : {Format::seedbin, Format::itm}) {
    TraceSessionOptions options;
    options.format = f;
    TraceSession session("cap.bin", options);
    session.feed(bytes_of(emt));
    TraceOutcome out = session.finish();
    EXPECT_FALSE(out.run) << to_string(f);
    ASSERT_FALSE(out.notes.empty());
    EXPECT_NE(out.notes.back().find("did not decode"), std::string::npos) << out.notes.back();
    EXPECT_NE(out.notes.back().find("its bytes look like emt: leave out --format"), std::string::npos) << out.notes.back();
  }
}

// A followed file that starts over (truncated, rotated) cuts the record it
// was in the middle of: counted as cut where the stream started over (lost
// mid-stream, not at its end), not glued to the new file's first line
// (which was then lost as malformed; found in review).
TEST(TraceSession, AStreamCutStartsOverInsteadOfGluingTheCutRecordToTheNewBytes) {
  TraceSessionOptions options;
  options.format = Format::log;
  TraceSession session("t.log", options);
  session.feed(bytes_of("[MEM][5] INFER beg"));
  session.cut_stream();
  session.feed(bytes_of(leaking_log(3)));
  TraceOutcome out = session.finish();
  ASSERT_TRUE(out.run);
  EXPECT_EQ(out.run->input.stats.malformed_lines, 0u);
  EXPECT_EQ(out.run->input.stats.stream_cut_bytes, 18u);
  EXPECT_EQ(out.run->input.stats.truncated_bytes, 0u);
  EXPECT_EQ(out.run->result.inferences, 3u);
  // The same before the format is decided (no --format: the bytes are held
  // back to tell it): the cut decodes them first (in review it did nothing).
  TraceSession automatic("t.log", {});
  automatic.feed(bytes_of("[MEM][5] INFER beg"));
  automatic.cut_stream();
  automatic.feed(bytes_of(leaking_log(3)));
  out = automatic.finish();
  ASSERT_TRUE(out.run);
  EXPECT_EQ(out.run->input.stats.malformed_lines, 0u);
  EXPECT_EQ(out.run->input.stats.stream_cut_bytes, 18u);
  EXPECT_EQ(out.run->input.stats.truncated_bytes, 0u);
}

// A rotation that cuts a record whose start is itself a whole [MEM] line
// ("ALLOC size=6" of "size=64"), the new file going on with its rest: the
// cut record is truncated, and the rest, no [MEM] line, skipped (a helper
// found watch counting neither).
TEST(TraceSession, ARecordCutByARotationIsTruncatedThoughItReadsAsALine) {
  TraceSession session("r.log", {});
  session.feed(bytes_of("[MEM][0] POOL name=heap kind=heap size=65536 base=0x20000000\n[MEM][1] INFER begin 1\n"
                        "[MEM][2] ALLOC size=64 addr=0x20000100 site=a\n[MEM][3] ALLOC size=6"));
  session.cut_stream();
  session.feed(bytes_of("4 addr=0x20000200 site=b\n[MEM][5] INFER end 1\n"));
  session.stopped();  // as watch ends, by Ctrl-C: the cut before is still counted
  TraceOutcome out = session.finish();
  ASSERT_TRUE(out.run);
  EXPECT_EQ(out.run->input.stats.stream_cut_bytes, 21u);
  EXPECT_EQ(out.run->input.stats.truncated_bytes, 0u);
  EXPECT_EQ(out.run->input.stats.skipped_lines, 1u);
  EXPECT_EQ(out.run->result.inferences, 1u);
}

TEST(TraceSession, ObserversAttachThroughTheSession) {
  struct Count : InferenceObserver {
    uint64_t last_used = 0, n = 0;
    void on_inference(const InferenceRecord& r) override {
      ++n;
      last_used = r.pools.at(0).used_bytes;
    }
  } count;
  TraceSession session("t.log", {});
  session.analyzer().add_observer(count);
  std::string log = leaking_log(5);
  session.feed(bytes_of(log));
  EXPECT_EQ(count.n, 0u);  // still held back: too little to judge the format by
  TraceOutcome out = session.finish();
  EXPECT_EQ(count.n, 5u);
  EXPECT_EQ(count.last_used, 644u * 5);
  ASSERT_TRUE(out.run);
}

TEST(TraceSession, AStoppedReadReportsWhatItReadUntilThen) {
  std::string log = leaking_log(40000);  // a few MiB: several 1 MiB reads
  auto path = std::filesystem::temp_directory_path() / fmt::format("edgemem_session_{}.log", ::getpid());
  {
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_TRUE(f);
    std::fwrite(log.data(), 1, log.size(), f);
    std::fclose(f);
  }
  int reads = 0;
  uint64_t progressed = 0;
  TraceOutcome cut = analyse_trace_file(
      path, {}, [&] { return reads++ == 1; }, [&](uint64_t b) { progressed = b; });
  TraceOutcome all = analyse_trace_file(path, {});
  std::filesystem::remove(path);
  ASSERT_TRUE(cut.run && all.run);
  EXPECT_EQ(cut.run->input.stats.bytes, 1u << 20);
  EXPECT_EQ(progressed, 1u << 20);
  EXPECT_LT(cut.run->result.inferences, all.run->result.inferences);
  EXPECT_GT(cut.run->result.inferences, 0u);
  EXPECT_EQ(all.run->result.inferences, 40000u);
}

TEST(TraceSession, AnUnreadableFileIsOneNoteAndNoRun) {
  TraceOutcome out = analyse_trace_file("/nonexistent/trace.emt", {});
  EXPECT_FALSE(out.run);
  ASSERT_EQ(out.notes.size(), 1u);
  EXPECT_EQ(out.notes[0], "/nonexistent/trace.emt: cannot open (No such file or directory)");
}

}  // namespace
}  // namespace edgemem
