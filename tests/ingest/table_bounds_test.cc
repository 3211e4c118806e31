// Interned tables stay at their caps however many distinct names a trace
// carries, and the names past a cap are counted, so memory does not grow
// with trace length (DESIGN.md: decoders are streaming, constant memory).
//
// 10 M distinct names by default; EDGEMEM_BOUNDS_STRINGS scales it, and
// sanitizer builds default to 1 M to stay quick.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>

#include <fmt/format.h>

#include "edgemem/report.h"
#include "ingest/emt_decoder.h"
#include "ingest/textlog_decoder.h"
#include "test_support.h"

#if defined(__SANITIZE_ADDRESS__)
#define EDGEMEM_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EDGEMEM_TEST_ASAN 1
#endif
#endif

#ifdef EDGEMEM_TEST_ASAN
// From <sanitizer/allocator_interface.h>, which clang ships and GCC does not;
// both runtimes export it.
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#else
#include <malloc.h>
#endif

namespace edgemem::test {
namespace {

// Heap bytes in use now. ru_maxrss is a lifetime peak of the whole test
// binary, which earlier tests may already have raised; what this test must
// show is that the decoder's own retained memory stays small.
size_t heap_in_use() {
#ifdef EDGEMEM_TEST_ASAN
  return __sanitizer_get_current_allocated_bytes();
#else
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
#endif
}

// At least 1 M, so every table in every test below overflows.
uint64_t distinct_names() {
  if (const char* n = std::getenv("EDGEMEM_BOUNDS_STRINGS")) return std::max<uint64_t>(1'000'000, std::strtoull(n, nullptr, 10));
#ifdef EDGEMEM_TEST_ASAN
  return 1'000'000;
#else
  return 10'000'000;
#endif
}

constexpr size_t kMiB = 1 << 20;

struct Counter : EventSink {
  uint64_t events = 0;
  void on_event(const Event&) override { ++events; }
};

// Generates record i into `out`; fed to the decoder 64 KiB at a time, so the
// input itself is never held.
void stream(Decoder& decoder, uint64_t count, const std::function<void(std::string&, uint64_t)>& record) {
  std::string buffer;
  for (uint64_t i = 0; i < count; ++i) {
    record(buffer, i);
    if (buffer.size() >= 64 * 1024) {
      decoder.feed({reinterpret_cast<const uint8_t*>(buffer.data()), buffer.size()});
      buffer.clear();
    }
  }
  decoder.feed({reinterpret_cast<const uint8_t*>(buffer.data()), buffer.size()});
  decoder.finish();
}

TEST(TableBounds, TenMillionDistinctSitesInATextLog) {
  uint64_t n = distinct_names();
  size_t before = heap_in_use();
  TraceContext ctx;
  Counter sink;
  auto decoder = make_decoder(Format::log, ctx, sink);
  stream(*decoder, n, [](std::string& out, uint64_t i) {
    fmt::format_to(std::back_inserter(out), "[MEM][{}] ALLOC size=16 addr={} site=f{}.c:1 pool=p{}\n", i, 16 * i + 16, i, i);
  });
  size_t grown = heap_in_use() - before;
  EXPECT_EQ(sink.events, n);
  EXPECT_EQ(ctx.sites.size(), SiteTable::kMaxSites + 1);  // + "(other sites)"
  EXPECT_EQ(ctx.pools.size(), PoolTable::kMaxPools + 1);  // + "(other pools)"
  const DecodeStats& s = decoder->stats();
  EXPECT_EQ(s.sites_dropped, n - (SiteTable::kMaxSites - 1));  // id 0 is "?", the unknown site
  EXPECT_EQ(s.pools_dropped, n - PoolTable::kMaxPools);
  nlohmann::json j = to_json(InputSummary{"t.log", "log", s, ctx.time_base}, AnalysisResult{});
  EXPECT_EQ(j["input"]["sites_dropped"], s.sites_dropped);
  EXPECT_EQ(j["input"]["pools_dropped"], s.pools_dropped);
  EXPECT_LT(grown, 64 * kMiB) << grown / kMiB << " MiB retained";
}

// Declarations are no events: 1,030 pools declared, one block each, read
// "12 events whose pool did not fit" where 6 events did not.
TEST(TableBounds, PoolsDroppedCountsEventsNotDeclarations) {
  std::string log;
  for (size_t i = 0; i < PoolTable::kMaxPools + 6; ++i)
    log += fmt::format("[MEM][{0}] POOL name=p{0} kind=heap size=4096 base={1}\n"
                       "[MEM][{0}] ALLOC size=10 addr={1} pool=p{0}\n",
                       i, 0x10000 * (i + 1));
  auto run = analyse(Format::log, log);
  EXPECT_EQ(run->stats.pools_dropped, 6u);
}

TEST(TableBounds, ItmPortZeroConsoleLinesAreNotSites) {
  uint64_t n = distinct_names() / 4;  // each line is several ITM packets
  size_t before = heap_in_use();
  TraceContext ctx;
  Counter sink;
  auto decoder = make_decoder(Format::itm, ctx, sink);
  stream(*decoder, n, [](std::string& out, uint64_t i) {
    // Every other line is console output; the rest are one-word markers.
    std::string line = i % 2 ? fmt::format("m{}\n", i) : fmt::format("tick {} ok\n", i);
    for (char c : line) {
      out += static_cast<char>(0x01);  // port 0, 1 byte
      out += c;
    }
  });
  size_t grown = heap_in_use() - before;
  const DecodeStats& s = decoder->stats();
  EXPECT_EQ(ctx.sites.size(), 1 + TextLogDecoder::kMaxMarkers);
  EXPECT_EQ(s.markers_dropped, n / 2 - TextLogDecoder::kMaxMarkers);
  EXPECT_EQ(s.skipped_lines, n - TextLogDecoder::kMaxMarkers);
  EXPECT_EQ(sink.events, TextLogDecoder::kMaxMarkers);
  // The report says how many of the skipped lines were marks past the cap (once only the JSON did).
  InputSummary in;
  in.format = "itm";
  in.stats = s;
  EXPECT_NE(text_report(in, AnalysisResult{}).find("one-word lines past the cap on distinct marks"), std::string::npos);
  EXPECT_LT(grown, 64 * kMiB) << grown / kMiB << " MiB retained";
}

TEST(TableBounds, EmtStringRecordsAndSitesAreCapped) {
  uint64_t n = distinct_names() / 4;
  size_t before = heap_in_use();
  TraceContext ctx;
  Counter sink;
  auto decoder = make_decoder(Format::emt, ctx, sink);
  stream(*decoder, n, [](std::string& out, uint64_t i) {
    auto varint = [&](uint64_t v) {
      for (; v >= 0x80; v >>= 7) out += static_cast<char>(v | 0x80);
      out += static_cast<char>(v);
    };
    if (i == 0) out += std::string("\x7E" "emt!" "\x00", 6);
    std::string name = fmt::format("f{}.c", i);
    out += '\x03';  // STRING i
    varint(i);
    varint(name.size());
    out += name;
    out += '\x10';  // ALLOC dt 1, pool i, address, 16 B, align 8, site: file i line 1 or a code address
    varint(1);
    varint(i);
    varint(16 * i + 16);
    varint(16);
    varint(8);
    varint(i % 2 ? (0x08000000 + 2 * i) << 1 | 1 : ((i << 20) | 1) << 1);
  });
  size_t grown = heap_in_use() - before;
  const DecodeStats& s = decoder->stats();
  EXPECT_EQ(s.strings_dropped, n - EmtDecoder::kMaxStrings);
  EXPECT_EQ(ctx.sites.size(), SiteTable::kMaxSites + 1);
  EXPECT_GT(s.sites_dropped, 0u);
  EXPECT_EQ(ctx.pools.size(), PoolTable::kMaxPools + 1);
  EXPECT_EQ(sink.events, n);
  EXPECT_LT(grown, 64 * kMiB) << grown / kMiB << " MiB retained";
}

}  // namespace
}  // namespace edgemem::test
