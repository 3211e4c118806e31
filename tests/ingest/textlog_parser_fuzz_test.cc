// The hand-specialised [MEM] line parser must accept, reject and report
// exactly what the plain one did: random logs built from every syntax the
// format has, then damaged byte by byte, go through both, and the events,
// the counters, the first problem and the interned tables must match.
#include <gtest/gtest.h>

#include <random>

#include "ingest/textlog_decoder.h"
#include "test_support.h"
#include "textlog_reference_decoder.h"

namespace edgemem::test {
namespace {

struct Outcome {
  TraceContext context;
  Recorder sink;
  DecodeStats stats;
};

template <typename D>
std::unique_ptr<Outcome> decode(const std::string& text, bool marks, std::optional<uint64_t> clock, std::mt19937& rng) {
  auto out = std::make_unique<Outcome>();
  D decoder(out->context, out->sink);
  decoder.set_marks_from_plain_lines(marks);
  if (clock) decoder.set_external_time(*clock);
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  for (size_t at = 0; at < text.size();) {
    size_t n = std::min<size_t>(text.size() - at, rng() % 4 == 0 ? 1 + rng() % 3 : 1 + rng() % 300);
    decoder.feed({p + at, n});
    at += n;
  }
  decoder.finish();
  out->stats = decoder.stats();
  return out;
}

template <typename T>
const T& pick(std::mt19937& rng, const std::vector<T>& from) {
  return from[rng() % from.size()];
}

std::string random_line(std::mt19937& rng) {
  static const std::vector<std::string> prefixes = {"", "", "", "I (123) app: ", "  ", "noise", "[MEM]", "x[MEM]["};
  static const std::vector<std::string> tags = {"[MEM][", "[MEM][", "[MEM][", "[MEM] [", "[mem][", ""};
  static const std::vector<std::string> stamps = {"1200", "0", "4294967000", "500", "0x1F", "0X1f", "0x", "", "-1",
                                                  "18446744073709551616", "12a", "0x0x5", "+3", "7 ", "0xg"};
  static const std::vector<std::string> closes = {"]", "]", "]", "] ", "", "]]"};
  static const std::vector<std::string> verbs = {"ALLOC", "FREE", "REALLOC", "ALLOC_FAIL", "INFER", "RESET", "GUARD",
                                                 "MARK", "COUNTER", "POOL", "DROP", "BOOT", "BOOTX", "alloc", "FROB", "=ALLOC", "ALLOC=1", ""};
  static const std::vector<std::string> keys = {"size", "offset", "addr", "ptr", "old", "align", "thread", "tid",
                                                "base", "value", "site", "pool", "name", "kind", "shares", "x",
                                                "", "sizes", "SIZE"};
  static const std::vector<std::string> values = {"16", "0", "644", "0x20000010", "0X10", "abc", "", "0x",
                                                  "18446744073709551615", "18446744073709551616", "lstm.cc:88",
                                                  "arena0", "heap", "arena", "a=b", "-4"};
  static const std::vector<std::string> words = {"begin", "end", "ok", "corrupt", "7", "x", "layer3"};
  static const std::vector<std::string> blanks = {" ", " ", "\t", "  "};
  static const std::vector<std::string> endings = {"\n", "\n", "\r\n", "\r\r\n", "\x1b[0m\r\n", " \x1b[0;32m\x1b[0m\n"};
  std::string line = pick(rng, prefixes);
  if (rng() % 10 == 0) {
    line += pick(rng, words);  // a plain line: console output or a marker
  } else {
    line += pick(rng, tags) + pick(rng, stamps) + pick(rng, closes) + pick(rng, blanks) + pick(rng, verbs);
    for (int n = rng() % 6; n > 0; --n) {
      line += pick(rng, blanks);
      if (rng() % 4 == 0) line += pick(rng, words);
      else line += pick(rng, keys) + "=" + pick(rng, values);
    }
  }
  for (int n = rng() % 8 == 0 ? 1 + rng() % 3 : 0; n > 0 && !line.empty(); --n) {  // damage
    size_t at = rng() % line.size();
    switch (rng() % 3) {
      case 0: line[at] = static_cast<char>(rng() % 128); break;
      case 1: line.erase(at, 1); break;
      default: line.insert(at, 1, " =]\t0x"[rng() % 6]); break;
    }
  }
  return line + pick(rng, endings);
}

void expect_same(const Outcome& fast, const Outcome& slow, const std::string& text) {
  SCOPED_TRACE(::testing::PrintToString(text.substr(0, 2000)));
  ASSERT_EQ(fast.sink.events.size(), slow.sink.events.size());
  for (size_t i = 0; i < fast.sink.events.size(); ++i) ASSERT_EQ(fast.sink.events[i], slow.sink.events[i]) << "event " << i;
  const DecodeStats &a = fast.stats, &b = slow.stats;
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.skipped_lines, b.skipped_lines);
  EXPECT_EQ(a.malformed_lines, b.malformed_lines);
  EXPECT_EQ(a.truncated_bytes, b.truncated_bytes);
  EXPECT_EQ(a.markers_dropped, b.markers_dropped);
  EXPECT_EQ(a.time_went_back, b.time_went_back);
  EXPECT_EQ(a.time_went_back_line, b.time_went_back_line);
  EXPECT_EQ(a.device_restarts, b.device_restarts);
  ASSERT_EQ(a.first_problem.has_value(), b.first_problem.has_value());
  if (a.first_problem) {
    EXPECT_EQ(a.first_problem->offset, b.first_problem->offset);
    EXPECT_EQ(a.first_problem->line, b.first_problem->line);
    EXPECT_EQ(a.first_problem->what, b.first_problem->what);
  }
  EXPECT_EQ(fast.context.time_base, slow.context.time_base);
  ASSERT_EQ(fast.context.sites.size(), slow.context.sites.size());
  for (SiteId id = 0; id < fast.context.sites.size(); ++id)
    EXPECT_EQ(fast.context.sites.name(id), slow.context.sites.name(id));
  ASSERT_EQ(fast.context.pools.size(), slow.context.pools.size());
  for (PoolId id = 0; id < fast.context.pools.size(); ++id) {
    const PoolInfo &p = fast.context.pools.at(id), &q = slow.context.pools.at(id);
    EXPECT_EQ(p.name, q.name);
    EXPECT_EQ(p.kind, q.kind);
    EXPECT_EQ(p.base, q.base);
    EXPECT_EQ(p.size, q.size);
    EXPECT_EQ(p.shares, q.shares);
    EXPECT_EQ(p.declared, q.declared);
  }
}

TEST(TextLogParserFuzz, RandomAndDamagedLogsDecodeAsTheReferenceParserDoes) {
  std::mt19937 rng(20261201);
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    for (int n = 1 + rng() % 40; n > 0; --n) text += random_line(rng);
    if (rng() % 5 == 0) text.resize(rng() % (text.size() + 1));  // a cut-off capture
    bool marks = rng() % 3 == 0;
    std::optional<uint64_t> clock;
    if (rng() % 4 == 0) clock = rng();
    uint32_t chunking = rng();
    std::mt19937 fast_rng(chunking), slow_rng(chunking + 1);
    auto fast = decode<TextLogDecoder>(text, marks, clock, fast_rng);
    auto slow = decode<ReferenceTextLogDecoder>(text, marks, clock, slow_rng);
    expect_same(*fast, *slow, text);
    if (HasFatalFailure() || HasNonfatalFailure()) return;
  }
}

// Thousands of distinct sites, more than the parser's site cache holds,
// revisited in random order: every event must keep the id the table gives.
TEST(TextLogParserFuzz, ManySitesKeepTheirIdsPastTheSiteCache) {
  std::mt19937 rng(7);
  std::string text;
  for (int i = 0; i < 40000; ++i)
    text += "[MEM][" + std::to_string(i) + "] ALLOC size=8 addr=" + std::to_string(16 * i) + " site=f" +
            std::to_string(rng() % 5000) + ".c:" + std::to_string(rng() % 3) + " pool=p" + std::to_string(rng() % 3) +
            "\n";
  std::mt19937 fast_rng(1), slow_rng(2);
  auto fast = decode<TextLogDecoder>(text, false, std::nullopt, fast_rng);
  auto slow = decode<ReferenceTextLogDecoder>(text, false, std::nullopt, slow_rng);
  expect_same(*fast, *slow, "40000 lines over 15000 sites");
}

}  // namespace
}  // namespace edgemem::test
