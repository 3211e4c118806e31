// The live loop through a scripted source: a trace trickling in is decoded
// before the 64 KiB sniffing window fills, ticks carry snapshots, alerts
// arrive as inferences end, and --until / the end of the input stop it.
#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <deque>

#include "watch/soak_trace.h"
#include "watch/watcher.h"

namespace edgemem::watch {
namespace {

using namespace std::chrono_literals;

// Hands out the given pieces, one per read, then nothing (or the end).
class ScriptedSource final : public LiveSource {
 public:
  ScriptedSource(const std::string& bytes, size_t piece, bool ends) : ends_(ends) {
    for (size_t i = 0; i < bytes.size(); i += piece) pieces_.push_back(bytes.substr(i, piece));
  }
  SourceRead read(std::span<uint8_t> buffer, std::chrono::milliseconds) override {
    SourceRead out;
    if (pieces_.empty()) {
      out.ended = ends_;
      return out;
    }
    std::string p = std::move(pieces_.front());
    pieces_.pop_front();
    std::copy(p.begin(), p.end(), buffer.begin());
    out.bytes = p.size();
    return out;
  }

 private:
  std::deque<std::string> pieces_;
  bool ends_;
};

TraceSessionOptions heap_of_16m() {
  TraceSessionOptions o;
  o.analyzer.default_pool_size = 16 << 20;
  return o;
}

// A watch of `source` with --until `until`, in the given format, and its notes.
struct Watched {
  TraceOutcome out;
  std::vector<std::string> notes;
};
Watched watch_until(LiveSource& source, Format format, uint64_t until, const std::function<bool()>& stop = {}) {
  TraceSessionOptions options = heap_of_16m();
  options.format = format;
  TraceSession session("live", options);
  Watcher watcher(session);
  Watched w;
  WatchHandlers h;
  h.note = [&](const std::string& n) { w.notes.push_back(n); };
  w.out = watcher.run(source, {1s, until, std::nullopt}, h, stop);
  return w;
}

TEST(TraceSession, ALiveStreamIsDecodedOnceItsFirstBytesShowTheFormat) {
  TraceSession session("live", heap_of_16m());
  EXPECT_FALSE(session.start_if_known());  // nothing yet
  std::string log = test::soak_log(3, std::nullopt);
  ASSERT_LT(log.size(), 1024u);
  session.feed({reinterpret_cast<const uint8_t*>(log.data()), log.size()});
  EXPECT_FALSE(session.snapshot()) << "held back for sniffing";
  EXPECT_TRUE(session.start_if_known());
  auto run = session.snapshot();
  ASSERT_TRUE(run);
  EXPECT_EQ(run->result.inferences, 3u);
  EXPECT_EQ(run->input.format, "log");
  EXPECT_EQ(session.finish().run->result.inferences, 3u);
}

TEST(TraceSession, BytesThatDoNotShowAFormatYetAreNotRefusedEarly) {
  TraceSession session("live", {});
  std::string text = "booting...\n";
  session.feed({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  EXPECT_FALSE(session.start_if_known());
  EXPECT_TRUE(session.accepting());
}

TEST(Watcher, AlertsAsTheLeakShowsAndAFinalTickWithEverything) {
  std::string log = test::soak_log(400, 200, 3);
  ScriptedSource source(log, 4096, true);
  TraceSession session("live", heap_of_16m());
  Watcher watcher(session);
  std::vector<Alert> alerts;
  std::vector<uint64_t> ticks;
  WatchHandlers h;
  h.alert = [&](const Alert& a) { alerts.push_back(a); };
  h.tick = [&](const TraceRun& run, const AlertEngine&) { ticks.push_back(run.result.inferences); };
  std::vector<std::string> notes;
  h.note = [&](const std::string& n) { notes.push_back(n); };
  TraceOutcome out = watcher.run(source, {1ms, std::nullopt, std::nullopt}, h, {});
  ASSERT_TRUE(out.run);
  EXPECT_EQ(out.run->result.inferences, 400u);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].kind, AlertKind::leak);
  EXPECT_LE(alerts[0].inference - 200, 100u);
  ASSERT_FALSE(ticks.empty());
  EXPECT_EQ(ticks.back(), 400u);
  EXPECT_EQ(notes.back(), "end of input");
}

TEST(Watcher, UntilStopsAtTheFirstReadThatReachesIt) {
  std::string log = test::soak_log(100, std::nullopt);
  ScriptedSource source(log, 200, false);  // never ends by itself
  // --format log: decoded as it arrives, a read of 200 bytes ends at most one inference.
  auto [out, notes] = watch_until(source, Format::log, 30);
  ASSERT_TRUE(out.run);
  EXPECT_GE(out.run->result.inferences, 30u);
  EXPECT_LE(out.run->result.inferences, 31u);
  EXPECT_NE(notes.back().find("(--until 30)"), std::string::npos) << notes.back();
  // The watch cut the stream in a record (200-byte reads): not data lost.
  EXPECT_EQ(out.run->input.stats.truncated_bytes, 0u);
}

// A device log gzip'd as it is written (each inference flushed, as
// `gzip` behind a pipe or a logger with Z_SYNC_FLUSH does): the watch
// decodes each read as it comes. Held back for 4 KiB pieces, as `analyze`
// holds it, this 100-inference stream showed nothing until it ended.
TEST(Watcher, ACompressedStreamIsDecodedAsItArrives) {
  const std::string log = test::soak_log(100, std::nullopt);
  z_stream z{};
  ASSERT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string packed;
  for (size_t at = 0; at < log.size();) {
    const size_t end = log.find("INFER end", at);
    const size_t line_end = end == std::string::npos ? log.size() : log.find('\n', end) + 1;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(log.data() + at));
    z.avail_in = static_cast<uInt>(line_end - at);
    std::string out(z.avail_in + 1024, '\0');
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    ASSERT_EQ(deflate(&z, Z_SYNC_FLUSH), Z_OK);
    packed += out.substr(0, out.size() - z.avail_out);
    at = line_end;
  }
  deflateEnd(&z);
  ASSERT_LT(packed.size(), 4096u);
  ScriptedSource source(packed, 40, false);  // never ends by itself
  int reads = 0;
  auto [out, notes] = watch_until(source, Format::log, 30, [&] { return ++reads > 1000; });
  ASSERT_TRUE(out.run);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes.back().find("(--until 30)"), std::string::npos) << notes.back();
  EXPECT_GE(out.run->result.inferences, 30u);
  EXPECT_LE(out.run->result.inferences, 33u);
  EXPECT_EQ(out.run->input.stats.compression, "gzip");
}

// A soak capture kept as one zstd file, piped in: zstd hands out a whole
// block (128 KiB, hundreds of inferences) at once, and the watch once
// decoded all of it before looking at --until again (and all the bytes held
// back to tell the format, when it was not given).
TEST(Watcher, UntilStopsInsideABlockOfDecompressedOutput) {
  const std::string log = test::soak_log(3000, std::nullopt);
  std::string packed(ZSTD_compressBound(log.size()), '\0');
  packed.resize(ZSTD_compress(packed.data(), packed.size(), log.data(), log.size(), 3));
  ASSERT_FALSE(ZSTD_isError(packed.size()));
  for (const Format format : {Format::log, Format::automatic}) {
    ScriptedSource source(packed, 64 << 10, false);
    auto [out, notes] = watch_until(source, format, 30);
    ASSERT_TRUE(out.run);
    EXPECT_GE(out.run->result.inferences, 30u);
    EXPECT_LE(out.run->result.inferences, 31u) << (format == Format::log ? "--format log" : "format judged");
    EXPECT_NE(notes.back().find("(--until 30)"), std::string::npos) << notes.back();
    EXPECT_EQ(out.run->input.stats.compression, "zstd");
    EXPECT_TRUE(out.run->input.stats.compression_problem.empty()) << "stopped, not cut off";
  }
}

TEST(Watcher, StopsWhenAskedAndReportsWhatWasSeen) {
  std::string log = test::soak_log(50, std::nullopt);
  ScriptedSource source(log, 512, false);
  TraceSession session("live", heap_of_16m());
  Watcher watcher(session);
  int reads = 0;
  TraceOutcome out = watcher.run(source, {1ms, std::nullopt, std::nullopt}, {}, [&] { return ++reads > 1000; });
  ASSERT_TRUE(out.run);
  EXPECT_EQ(out.run->result.inferences, 50u);
}

// A followed file rotated (or truncated) while its writer was mid-line:
// that record is lost mid-stream, said as such (not as "a cut-off last
// record") and raised as data loss, unlike the cut where a watch stops.
TEST(Watcher, ARecordCutWhereTheFileStartsOverIsDataLoss) {
  class Rotating final : public LiveSource {
   public:
    SourceRead read(std::span<uint8_t> buffer, std::chrono::milliseconds) override {
      SourceRead out;
      if (step_ == 2) {
        out.ended = true;
        return out;
      }
      const std::string& p = step_ == 0 ? first_ : second_;
      std::copy(p.begin(), p.end(), buffer.begin());
      out.bytes = p.size();
      out.restarted = step_++ == 1;
      return out;
    }

   private:
    const std::string log_ = test::soak_log(40, std::nullopt);
    const std::string first_ = log_.substr(0, log_.size() / 2 + 7), second_ = test::soak_log(20, std::nullopt);
    int step_ = 0;
  } source;
  TraceSessionOptions options = heap_of_16m();
  options.format = Format::log;
  TraceSession session("live", options);
  Watcher watcher(session);
  std::vector<Alert> alerts;
  WatchHandlers h;
  h.alert = [&](const Alert& a) { alerts.push_back(a); };
  TraceOutcome out = watcher.run(source, {1ms, std::nullopt, std::nullopt}, h, {});
  ASSERT_TRUE(out.run);
  const DecodeStats& s = out.run->input.stats;
  EXPECT_GT(s.stream_cut_bytes, 0u);
  EXPECT_EQ(s.truncated_bytes, 0u);
  EXPECT_TRUE(std::any_of(alerts.begin(), alerts.end(), [](const Alert& a) { return a.kind == AlertKind::data_loss; }));
}

TEST(ParseDuration, UnitsAndRefusals) {
  EXPECT_EQ(parse_duration("500ms"), 500ms);
  EXPECT_EQ(parse_duration("1.5"), 1500ms);
  EXPECT_EQ(parse_duration("10s"), 10s);
  EXPECT_EQ(parse_duration("5m"), 300s);
  EXPECT_EQ(parse_duration("2h"), 7200s);
  EXPECT_EQ(parse_duration("1d"), 86400s);
  EXPECT_FALSE(parse_duration("soon"));
  EXPECT_FALSE(parse_duration("0s"));
  EXPECT_FALSE(parse_duration("-1s"));
  EXPECT_FALSE(parse_duration("10 s"));
  EXPECT_EQ(parse_duration("3650d"), 3650 * 24h);
  EXPECT_FALSE(parse_duration("3651d"));
  EXPECT_FALSE(parse_duration("99999999999999999999d"));  // once a negative time: the watch stopped at once
}

}  // namespace
}  // namespace edgemem::watch
