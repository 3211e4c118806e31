// The differential test every streaming decoder owes (STYLE.md): the same
// bytes, however they arrive, give the same analysis. Every trace in the
// repository is fed whole, a byte at a time and in random chunks, and its
// emt / text log / seed payload is also carried as target/ sends it (ITM
// port writes) and inside TPIU frames; the `analyze --json` document must
// not change.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <random>
#include <set>

#include "edgemem/report.h"
#include "test_support.h"

namespace edgemem::test {
namespace {

namespace fs = std::filesystem;

struct Trace {
  std::string path;
  Format format;
  std::string bytes;
};

// Where traces live; enumerated at run time so new captures are covered.
// A fuzz corpus directory is named after the decoder it feeds; elsewhere the
// sniffer decides, and files it refuses (models, maps, the firmware ELF)
// are not traces.
std::vector<Trace> repository_traces() {
  const fs::path root(EDGEMEM_SOURCE_DIR);
  static const std::set<std::string> kSourceExtensions = {".cc", ".h", ".c", ".sh", ".py", ".md", ".txt", ".json",
                                                          ".cmake"};
  std::vector<Trace> traces;
  auto add = [&](const fs::path& file, std::optional<Format> format) {
    std::string bytes = read_file(file.string());
    if (bytes.empty()) return;
    if (!format) format = sniff_trace({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}).format;
    if (format) traces.push_back({fs::relative(file, root).string(), *format, std::move(bytes)});
  };
  for (const auto& e : fs::directory_iterator(root / "examples/traces"))
    if (e.is_regular_file()) add(e.path(), std::nullopt);
  for (const auto& dir : fs::directory_iterator(root / "fuzz/corpus")) {
    std::optional<Format> format = parse_format(dir.path().filename().string());
    if (!dir.is_directory() || !format) continue;  // tflite, linker_map, stack: other commands' inputs
    for (const auto& e : fs::directory_iterator(dir.path()))
      if (e.is_regular_file()) add(e.path(), format);
  }
  for (const auto& e : fs::recursive_directory_iterator(root / "tests"))
    if (e.is_regular_file() && !kSourceExtensions.contains(e.path().extension().string()) &&
        e.path().filename() != "CMakeLists.txt")
      add(e.path(), std::nullopt);
  std::sort(traces.begin(), traces.end(), [](const Trace& a, const Trace& b) { return a.path < b.path; });
  return traces;
}

using Chunker = std::function<size_t(size_t remaining)>;

// The analyze --json document, as the CLI builds it, minus `excluded` keys
// of "input".
std::string analyze_json(Format format, const std::string& bytes, const Chunker& next_chunk,
                         const std::vector<std::string>& excluded = {}) {
  TraceContext context;
  Analyzer analyzer(context, {});
  auto decoder = make_decoder(format, context, analyzer);
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  for (size_t at = 0; at < bytes.size();) {
    size_t n = std::min(next_chunk(bytes.size() - at), bytes.size() - at);
    decoder->feed({p + at, n});
    at += n;
  }
  decoder->finish();
  analyzer.set_trace_clock(decoder->clock_hz());
  AnalysisResult result = analyzer.finish();
  InputSummary input{"trace", std::string(decoder->format_name()), decoder->stats(), context.time_base};
  nlohmann::json j = to_json(input, result);
  for (const auto& key : excluded) j["input"].erase(key);
  return j.dump(1);
}

Chunker whole() {
  return [](size_t remaining) { return remaining; };
}
Chunker bytewise() {
  return [](size_t) { return size_t{1}; };
}
// Mostly short reads (records straddle them), sometimes long ones.
Chunker random_chunks(uint32_t seed) {
  auto rng = std::make_shared<std::mt19937>(seed);
  return [rng](size_t) {
    size_t roll = (*rng)() % 8;
    return roll < 6 ? 1 + (*rng)() % 24 : 1 + (*rng)() % 5000;
  };
}

// target/edgemem.c itm_send(): port 1 gets 32-bit writes, the tail a byte
// at a time. A printf over ITM (CMSIS ITM_SendChar) writes port 0 bytewise.
std::string itm_wrapped(Format payload, const std::string& bytes) {
  std::string out;
  if (payload == Format::log) {
    for (char c : bytes) {
      out += '\x01';  // port 0, 1 byte
      out += c;
    }
    return out;
  }
  size_t i = 0;
  for (; bytes.size() - i >= 4; i += 4) {
    out += '\x0B';  // port 1, 4 bytes
    out += bytes.substr(i, 4);
  }
  for (; i < bytes.size(); ++i) {
    out += '\x09';  // port 1, 1 byte
    out += bytes[i];
  }
  return out;
}

// CoreSight TPIU formatter frames carrying `itm` as source ID 1 (docs/formats/itm.md):
// even bytes hold data (LSB in the frame's last byte) or an ID change,
// odd bytes hold data. After the data the source switches to ID 0 (null)
// so the padding of the last frame belongs to nobody.
std::string tpiu_wrapped(const std::string& itm) {
  struct Symbol {
    bool id_change;
    uint8_t value;
  };
  std::vector<Symbol> symbols{{true, 1}};
  for (char c : itm) symbols.push_back({false, static_cast<uint8_t>(c)});
  symbols.push_back({true, 0});
  std::string out("\xFF\xFF\xFF\x7F", 4);  // full sync: frames start here
  size_t at = 0;
  auto next = [&](size_t ahead) { return at + ahead < symbols.size() ? symbols[at + ahead] : Symbol{false, 0}; };
  while (at < symbols.size()) {
    uint8_t frame[16] = {};
    uint8_t aux = 0;
    for (unsigned k = 0; k < 8; ++k) {
      Symbol s0 = next(0), s1 = next(1);
      if (k == 7) {  // the last even byte has no odd partner
        frame[14] = s0.id_change ? static_cast<uint8_t>(s0.value << 1 | 1) : static_cast<uint8_t>(s0.value & 0xFE);
        if (!s0.id_change) aux |= static_cast<uint8_t>((s0.value & 1) << k);
        ++at;
        break;
      }
      if (s0.id_change) {  // the new ID takes the odd byte (the two changes are never adjacent)
        frame[2 * k] = static_cast<uint8_t>(s0.value << 1 | 1);
        frame[2 * k + 1] = s1.value;
        at += 2;
      } else if (s1.id_change) {  // the odd byte still belongs to the old ID (aux bit set)
        frame[2 * k] = static_cast<uint8_t>(s1.value << 1 | 1);
        frame[2 * k + 1] = s0.value;
        aux |= static_cast<uint8_t>(1u << k);
        at += 2;
      } else {
        frame[2 * k] = static_cast<uint8_t>(s0.value & 0xFE);
        aux |= static_cast<uint8_t>((s0.value & 1) << k);
        frame[2 * k + 1] = s1.value;
        at += 2;
      }
    }
    frame[15] = aux;
    out.append(reinterpret_cast<const char*>(frame), 16);
  }
  return out;
}

TEST(SameBytes, RepositoryHoldsTraces) {
  auto traces = repository_traces();
  ASSERT_FALSE(traces.empty()) << "no traces found under examples/traces, fuzz/corpus or tests";
  std::set<Format> formats;
  for (const auto& t : traces) formats.insert(t.format);
  EXPECT_TRUE(formats.contains(Format::emt) && formats.contains(Format::log) && formats.contains(Format::seedbin));
}

TEST(SameBytes, AnyChunkingGivesTheSameAnalysis) {
  for (const auto& t : repository_traces()) {
    SCOPED_TRACE(t.path);
    std::string reference = analyze_json(t.format, t.bytes, whole());
    EXPECT_EQ(analyze_json(t.format, t.bytes, bytewise()), reference) << "fed a byte at a time";
    for (uint32_t seed : {1u, 2u, 3u})
      EXPECT_EQ(analyze_json(t.format, t.bytes, random_chunks(seed)), reference) << "random chunks, seed " << seed;
  }
}

TEST(SameBytes, PayloadsCarriedOverItmAndTpiuGiveTheSameAnalysis) {
  // Wrapping legitimately changes only what describes the carrier: its
  // format name, its byte count, its packet/frame counts, and where in the
  // carrier's bytes the first problem sat (the payload offset and port are
  // reported instead). Every number about memory must be identical.
  const std::vector<std::string> carrier = {"format", "bytes", "packets", "first_problem"};
  size_t wrapped = 0;
  for (const auto& t : repository_traces()) {
    if (t.format != Format::emt && t.format != Format::log && t.format != Format::seedbin) continue;
    SCOPED_TRACE(t.path);
    ++wrapped;
    std::string reference = analyze_json(t.format, t.bytes, whole(), carrier);
    std::string itm = itm_wrapped(t.format, t.bytes);
    EXPECT_EQ(analyze_json(Format::itm, itm, whole(), carrier), reference) << "in ITM port writes";
    EXPECT_EQ(analyze_json(Format::itm, itm, random_chunks(4), carrier), reference) << "in ITM, random chunks";
    std::string tpiu = tpiu_wrapped(itm);
    EXPECT_EQ(analyze_json(Format::tpiu, tpiu, whole(), carrier), reference) << "in TPIU frames";
    EXPECT_EQ(analyze_json(Format::tpiu, tpiu, random_chunks(5), carrier), reference) << "in TPIU, random chunks";
  }
  EXPECT_GT(wrapped, 0u);
}

// A capture that began while the device was already sending joins its emt
// stream mid-record: over ITM the stream is still emt, read from its next
// SYNC as the emt decoder reads the same bytes (port 1 was once taken for
// seed records whenever its first byte was no SYNC, and its bytes read as
// invented events: a 2 GB peak, guard failures at inference 2,659,500,801).
TEST(SameBytes, AnEmtStreamJoinedMidRecordOverItmIsStillEmt) {
  static const std::string kSync = "\x7E" "emt";
  size_t joined = 0;
  for (const auto& t : repository_traces()) {
    if (t.format != Format::emt || !t.bytes.starts_with(kSync)) continue;
    // A later SYNC, within the 16 KiB port 1 is looked at to tell its record set.
    size_t second = t.bytes.find(kSync, 1);
    if (second == std::string::npos || second > 16000 || second < 40) continue;
    for (size_t back : {1, 3, 17, 37}) {
      SCOPED_TRACE(t.path + ", joined " + std::to_string(back) + " bytes before its second SYNC");
      const std::string cut = t.bytes.substr(second - back);
      std::string reference = analyze_json(Format::emt, cut, whole(), {"format", "bytes", "packets", "first_problem"});
      ASSERT_NE(nlohmann::json::parse(reference)["input"]["events"], 0);
      std::string itm = itm_wrapped(Format::emt, cut);
      EXPECT_EQ(analyze_json(Format::itm, itm, random_chunks(6), {"format", "bytes", "packets", "first_problem"}), reference);
      EXPECT_EQ(analyze_json(Format::tpiu, tpiu_wrapped(itm), whole(), {"format", "bytes", "packets", "first_problem"}),
                reference);
    }
    ++joined;
  }
  EXPECT_GT(joined, 0u);
}

// A live watch reads a decoder's counts before the end (Decoder::progress):
// half-way through any trace, however carried, the events it has counted
// are the events it has delivered. (They once read 0 until finish() for
// every decoder, which the metrics served as edgemem_events_total 0.)
TEST(SameBytes, ProgressCountsTheEventsDeliveredSoFar) {
  struct Counter : EventSink {
    // The resets a restart sends every pool are the decoder's, not records
    // of the trace: not counted among its events.
    explicit Counter(const TraceContext& c) : context(c) {}
    const TraceContext& context;
    uint64_t events = 0, restarts = 0, resets_of_restarts = 0;
    void on_event(const Event& e) override {
      if (context.device_restarts != restarts) {
        resets_of_restarts += (context.device_restarts - restarts) * context.pools.size();
        restarts = context.device_restarts;
      }
      if (e.kind == EventKind::arena_reset && resets_of_restarts > 0) {
        --resets_of_restarts;
        return;
      }
      resets_of_restarts = 0;
      ++events;
    }
  };
  auto check = [](Format format, const std::string& bytes, const char* carrier) {
    SCOPED_TRACE(carrier);
    TraceContext context;
    Counter sink(context);
    auto decoder = make_decoder(format, context, sink);
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
    decoder->feed({p, bytes.size() / 2});
    EXPECT_EQ(decoder->progress().events, sink.events) << "half-way";
    decoder->feed({p + bytes.size() / 2, bytes.size() - bytes.size() / 2});
    EXPECT_EQ(decoder->progress().events, sink.events) << "all fed";
    EXPECT_EQ(decoder->progress().bytes, bytes.size());
    decoder->finish();
    EXPECT_EQ(decoder->stats().events, sink.events) << "finished";
  };
  for (const auto& t : repository_traces()) {
    SCOPED_TRACE(t.path);
    check(t.format, t.bytes, "as it is");
    if (t.format != Format::emt && t.format != Format::log && t.format != Format::seedbin) continue;
    std::string itm = itm_wrapped(t.format, t.bytes);
    check(Format::itm, itm, "in ITM");
    check(Format::tpiu, tpiu_wrapped(itm), "in TPIU");
  }
}

}  // namespace
}  // namespace edgemem::test
