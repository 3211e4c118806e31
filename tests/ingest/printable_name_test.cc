// Names from a device or a damaged capture reach the terminal: control
// characters and bytes that are not UTF-8 are shown as \xNN, not sent.
#include <gtest/gtest.h>

#include "edgemem/pool_table.h"
#include "edgemem/site_table.h"
#include "ingest/printable_name.h"
#include "test_support.h"

namespace edgemem::test {
namespace {

TEST(PrintableName, KeepsTextAndUtf8AndEscapesTheRest) {
  EXPECT_EQ(printable_name("tflm.persistent"), "tflm.persistent");
  EXPECT_EQ(printable_name("main (app.c:12)"), "main (app.c:12)");
  EXPECT_EQ(printable_name("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"), "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  EXPECT_EQ(printable_name(std::string("a\x1B[2Jb\x00\x7F\n", 9)), "a\\x1B[2Jb\\x00\\x7F\\x0A");
  EXPECT_EQ(printable_name("\xC2\x9B" "31m"), "\\xC2\\x9B31m");  // U+009B, a C1 control (CSI)
  EXPECT_EQ(printable_name("\xC0\xAF"), "\\xC0\\xAF");            // overlong '/'
  EXPECT_EQ(printable_name("\xED\xA0\x80"), "\\xED\\xA0\\x80");   // a surrogate
  EXPECT_EQ(printable_name("\xF4\x90\x80\x80"), "\\xF4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(printable_name("x\xE2\x82"), "x\\xE2\\x82");          // cut short
  // Bidirectional controls turn the rest of a line around (a site ending in
  // U+202E printed the report's next words backwards); their neighbours stay.
  EXPECT_EQ(printable_name("evil\xE2\x80\xAE"), "evil\\xE2\\x80\\xAE");  // U+202E
  EXPECT_EQ(printable_name("\xE2\x81\xA6x\xE2\x81\xA9"), "\\xE2\\x81\\xA6x\\xE2\\x81\\xA9");  // U+2066, U+2069
  EXPECT_EQ(printable_name("\xE2\x80\x8F\xD8\x9C"), "\\xE2\\x80\\x8F\\xD8\\x9C");  // U+200F, U+061C
  EXPECT_EQ(printable_name("\xE2\x80\x94\xE2\x80\xAF\xE2\x81\xA5"), "\xE2\x80\x94\xE2\x80\xAF\xE2\x81\xA5");  // dashes and spaces stay
  EXPECT_TRUE(is_printable_name("caf\xC3\xA9"));
  EXPECT_FALSE(is_printable_name("\x01"));
  EXPECT_FALSE(is_printable_name("\xFF"));
}

TEST(PrintableName, TablesHoldThePrintableFormAndFindItAgain) {
  SiteTable sites;
  const SiteId a = sites.intern("bad\x1B" "site");
  EXPECT_EQ(sites.name(a), "bad\\x1Bsite");
  EXPECT_EQ(sites.intern("bad\x1B" "site"), a);
  EXPECT_EQ(sites.intern("bad\\x1Bsite"), a);  // the escaped text is the name
  const SiteId b = sites.intern("ok");
  sites.rename(b, "re\x07named");
  EXPECT_EQ(sites.name(b), "re\\x07named");

  PoolTable pools;
  const PoolId p = pools.intern("heap\x1B]0;owned\x07", PoolKind::heap);
  EXPECT_EQ(pools.at(p).name, "heap\\x1B]0;owned\\x07");
  PoolInfo info;
  info.name = "heap\x1B]0;owned\x07";
  info.kind = PoolKind::arena;
  info.size = 4096;
  EXPECT_EQ(pools.declare(info), p);  // a declaration reaches the pool its name made
  EXPECT_EQ(pools.at(p).size, 4096u);
  EXPECT_EQ(pools.at(p).name, "heap\\x1B]0;owned\\x07");
}

// A capture whose pool and file names carry an escape sequence: the report
// shows them escaped.
TEST(PrintableName, AnEmtCaptureWithControlBytesInItsNamesReportsThemEscaped) {
  const std::string s =
      std::string("\x7E" "emt!" "\x00" "\x01\x01\x00", 9) +
      std::string("\x02\x00\x01\x00\x80\x80\x01\x00\x05" "a\x1B[2J" "\x00", 15) +  // POOL 0 arena "a ESC [2J"
      std::string("\x03\x01\x03" "m\x0A" "c", 6) +                                 // STRING 1 "m\nc"
      std::string("\x10\x05\x00\x00\x84\x05\x04\xF4\x80\x80\x01", 11);             // ALLOC 644 B at m\nc:58
  auto run = analyse(Format::emt, s);
  EXPECT_EQ(run->stats.corrupt_bytes, 0u);
  ASSERT_EQ(run->context.pools.size(), 1u);
  EXPECT_EQ(run->context.pools.at(0).name, "a\\x1B[2J");
  ASSERT_EQ(run->result.persistent.size(), 1u);
  EXPECT_EQ(run->result.persistent[0].site, "m\\x0Ac:58");
}

}  // namespace
}  // namespace edgemem::test
