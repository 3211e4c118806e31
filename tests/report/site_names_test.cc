// Sites in text lists: the innermost frame, with callers only where two rows
// would otherwise read the same.
#include <gtest/gtest.h>

#include "report/site_names.h"
#include "report/thread_sections.h"

namespace edgemem {
namespace {

TEST(SiteNames, EachRowGetsTheFewestFramesThatTellItApart) {
  std::vector<std::string_view> sites{"main;run;load (a.cc:3);operator new", "main;run;step (a.cc:9);operator new",
                                      "main;parse (b.cc:1)", "x;parse (b.cc:1)", "parse (b.cc:1)", "solo"};
  std::vector<std::string_view> names = distinct_tails(sites);
  ASSERT_EQ(names.size(), sites.size());
  EXPECT_EQ(names[0], "load (a.cc:3);operator new");
  EXPECT_EQ(names[1], "step (a.cc:9);operator new");
  EXPECT_EQ(names[2], "main;parse (b.cc:1)");
  EXPECT_EQ(names[3], "x;parse (b.cc:1)");
  EXPECT_EQ(names[4], "parse (b.cc:1)") << "a site that is another's tail is shown whole";
  EXPECT_EQ(names[5], "solo");
}

TEST(SiteNames, FramesAreWholeNotCharacterTails) {
  // "xparse" ends with "parse" as text but not as a frame.
  std::vector<std::string_view> names = distinct_tails({"a;parse", "b;xparse"});
  EXPECT_EQ(names[0], "parse");
  EXPECT_EQ(names[1], "xparse");
  EXPECT_EQ(innermost_frame("a;b;c"), "c");
  EXPECT_EQ(innermost_frame("c"), "c");
}

// Two temporaries sites that differ only in a caller were once printed as
// two identical rows.
TEST(SiteNames, TemporarySitesThatShareTheirInnermostFrameReadApart) {
  TemporaryResult r;
  r.count = 30;
  r.allocations = 40;
  r.bytes = 3000;
  r.top = {{"main;decode (d.cc:5);make_buffer (m.cc:2)", 20, 2000, 20},
           {"main;encode (e.cc:7);make_buffer (m.cc:2)", 10, 1000, 20}};
  std::string text = temporaries_text(r);
  EXPECT_NE(text.find("decode (d.cc:5);make_buffer (m.cc:2)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("encode (e.cc:7);make_buffer (m.cc:2)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("main;"), std::string::npos) << text;
}

}  // namespace
}  // namespace edgemem
