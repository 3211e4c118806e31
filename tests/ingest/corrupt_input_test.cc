// Damaged input: truncated, bit-flipped or random. Every decoder must keep
// what it decoded before the damage, count what it skipped, and never crash.
#include <gtest/gtest.h>

#include <random>

#include "test_support.h"

namespace edgemem::test {
namespace {

std::string valid_seedbin(int n) {
  std::string bin;
  for (int i = 0; i < n; ++i) {
    bin += '\xA2'; be32(bin, 32); be32(bin, 0x20000000 + i * 32);
  }
  return bin;
}

TEST(CorruptInput, FlippedByteKeepsEverythingBeforeIt) {
  std::string bin = valid_seedbin(100);
  bin[9 * 50] = '\x5A';  // the header of record 50 is destroyed
  auto run = analyse(Format::seedbin, bin);
  EXPECT_GE(run->result.counts.allocs, 50u);  // records 0..49 intact
  EXPECT_GT(run->stats.corrupt_bytes, 0u);
  ASSERT_TRUE(run->stats.first_problem);
  EXPECT_EQ(run->stats.first_problem->offset, 450u);
}

TEST(CorruptInput, TruncationAtEveryLengthNeverLosesWholeRecords) {
  std::string bin = valid_seedbin(20);
  for (size_t cut = 0; cut <= bin.size(); ++cut) {
    auto run = analyse(Format::seedbin, bin.substr(0, cut));
    EXPECT_EQ(run->result.counts.allocs, cut / 9);
    EXPECT_EQ(run->stats.truncated_bytes, cut % 9);
  }
}

TEST(CorruptInput, RandomBytesInEveryFormatAreSurvived) {
  std::mt19937 rng(1234);
  for (Format f : {Format::log, Format::seedbin, Format::itm, Format::tpiu}) {
    for (int round = 0; round < 20; ++round) {
      std::string junk(4096, '\0');
      for (char& c : junk) c = static_cast<char>(rng());
      AnalyzerOptions options;
      options.default_pool_size = 65536;
      auto run = analyse(f, junk, options, 1 + round * 97);
      EXPECT_EQ(run->stats.bytes, junk.size());
    }
  }
}

TEST(CorruptInput, ItmGarbageBetweenValidPacketsIsCountedAndSkipped) {
  // Reserved header 0x04 between two port-1 bytes of a seed record.
  std::string stream;
  std::string rec;
  rec += '\xF1'; be32(rec, 0x20000000);
  for (size_t i = 0; i < rec.size(); ++i) {
    stream += '\x09';
    stream += rec[i];
    if (i == 0) stream += '\x04';
  }
  auto run = analyse(Format::itm, stream);
  EXPECT_EQ(run->stats.corrupt_bytes, 1u);
  EXPECT_EQ(run->result.counts.frees, 1u);
}

}  // namespace
}  // namespace edgemem::test
