// One way to write and read sizes: every command prints 34,128 B, and every
// size option takes 64K, 1M, 0x10000 or decimal and refuses what is not a size.
#include <gtest/gtest.h>

#include "report/units.h"

namespace edgemem::units {
namespace {

std::optional<uint64_t> size(std::string_view text) {
  std::string error;
  auto n = parse_size(text, error);
  EXPECT_EQ(n.has_value(), error.empty()) << text;
  return n;
}

TEST(Units, SizesAsAnEmbeddedEngineerTypesThem) {
  EXPECT_EQ(size("65536"), 65536u);
  EXPECT_EQ(size("0x10000"), 65536u);
  EXPECT_EQ(size("0X1f"), 31u);
  EXPECT_EQ(size("64K"), 65536u);
  EXPECT_EQ(size("64k"), 65536u);
  EXPECT_EQ(size("64KiB"), 65536u);
  EXPECT_EQ(size("1M"), 1048576u);
  EXPECT_EQ(size("2G"), 2147483648u);
  EXPECT_EQ(size("100B"), 100u);
}

TEST(Units, WhatIsNotASizeIsRefusedNotWrapped) {
  std::string error;
  EXPECT_FALSE(parse_size("-5", error));  // was 18 EB
  EXPECT_NE(error.find("negative"), std::string::npos);
  EXPECT_FALSE(size("0"));
  EXPECT_FALSE(size("0x0"));
  EXPECT_FALSE(size(""));
  EXPECT_FALSE(size("1.5M"));
  EXPECT_FALSE(size("64Q"));
  EXPECT_FALSE(size("0x10K"));
  EXPECT_FALSE(size("99999999999999999999"));
  EXPECT_FALSE(size("17179869184G"));  // 2^64 bytes
  EXPECT_FALSE(size("K"));
}

// 16kB is 16,000 B in SI and 16,384 B to many tools: once read as 16,384
// in silence, a budget's "max_bytes": "16kB" passed 384 B over 16,000.
TEST(Units, KilobytesAreAmbiguousAndRefused) {
  std::string error;
  EXPECT_FALSE(parse_size("16kB", error));
  EXPECT_EQ(error, "'16kB' is ambiguous: 16,000 B in SI, 16,384 B as many tools count; write 16K or 16KiB for "
                   "16,384, or 16000");
  for (const char* text : {"1MB", "2GB", "64KB", "64kb", "1mb"}) EXPECT_FALSE(size(text)) << text;
  EXPECT_EQ(size("64KiB"), 65536u);
  EXPECT_EQ(size("1MiB"), 1048576u);
  EXPECT_EQ(size("100b"), 100u);
}

TEST(Units, NumbersCarryASeparatorAUnitAndAddressesAreHex) {
  EXPECT_EQ(grouped(0), "0");
  EXPECT_EQ(grouped(999), "999");
  EXPECT_EQ(grouped(1000), "1,000");
  EXPECT_EQ(bytes(1081344), "1,081,344 B");
  EXPECT_EQ(bytes_human(1081344), "1,081,344 B (1.03 MiB)");
  EXPECT_EQ(bytes_human(16004), "16,004 B (15.6 KiB)");
  EXPECT_EQ(bytes_human(4096), "4,096 B");  // small enough to read as it is
  EXPECT_EQ(signed_bytes(-8), "-8 B");
  EXPECT_EQ(signed_bytes(1024), "+1,024 B");
  EXPECT_EQ(signed_bytes(0), "0 B");
  EXPECT_EQ(address(0x20000000), "0x20000000");
  EXPECT_EQ(address(0x40), "0x00000040");
  EXPECT_EQ(percent(0.123), "12.3 %");
  // Never on an edge the value is not on: 1,099 B of a 10 MB arena read "margin 100.0%".
  EXPECT_EQ(percent(0.99989), "99.99 %");
  EXPECT_EQ(percent(1.0), "100.0 %");
  EXPECT_EQ(percent(0.00005), "0.01 %");
  EXPECT_EQ(percent(1e-9), "0.0000001 %");
  EXPECT_EQ(percent(1e-13), "> 0.0 %");
  EXPECT_EQ(percent(0.0), "0.0 %");
  EXPECT_EQ(percent_value(-0.004), "-0.004");
  EXPECT_EQ(percent_value(100.00001), "100.00001");
  EXPECT_EQ(percent_value(100 + 1e-12), "> 100.0");
  // Rates and ratios group their whole part too: "8588.0 B per inference"
  // stood beside "1,024 B" in one report.
  EXPECT_EQ(decimal(8588.04, 1), "8,588.0");
  EXPECT_EQ(decimal(124.94, 1), "124.9");
  EXPECT_EQ(decimal(999.96, 1), "1,000.0");
  EXPECT_EQ(decimal(-1234567.0, 0), "-1,234,567");
  EXPECT_EQ(decimal(33541.7, 1, true), "+33,541.7");
  EXPECT_EQ(decimal(-0.5, 1, true), "-0.5");
  EXPECT_EQ(group_digits("6000.25"), "6,000.25");
  EXPECT_EQ(group_digits("-1e+20"), "-1e+20");
  EXPECT_EQ(group_digits("inf"), "inf");
}

// Counts in messages read as people write them: "1 byte", "26,893 compressed
// bytes" (once "1 bytes after the end of the gzip data", "the 26893 compressed bytes").
// watch's status line on a terminal is cut to its width: by characters, so
// a pool named in Cyrillic (two bytes a letter) is never cut inside a
// letter (the line once ended in half of one, invalid UTF-8).
TEST(Units, ALineIsCutToAWidthInCharactersNeverInsideOne) {
  EXPECT_EQ(fit_columns("pool heap", 4), "pool");
  EXPECT_EQ(fit_columns("pool heap", 40), "pool heap");
  const std::string cyrillic = "пул памяти";  // 10 characters, 19 bytes
  EXPECT_EQ(fit_columns(cyrillic, 3), "пул");
  EXPECT_EQ(fit_columns(cyrillic, 10), cyrillic);
  EXPECT_EQ(fit_columns("a€b", 2), "a€");  // a three-byte character
  EXPECT_EQ(fit_columns("", 5), "");
}

TEST(Units, ACountTakesItsNounInTheSingularForOne) {
  EXPECT_EQ(counted(0, "byte", "bytes"), "0 bytes");
  EXPECT_EQ(counted(1, "call", "calls"), "1 call");
  EXPECT_EQ(counted(26893, "compressed byte", "compressed bytes"), "26,893 compressed bytes");
}

}  // namespace
}  // namespace edgemem::units
