// The HTML report embeds trace strings as data: a site name that is markup
// must not end the data block, open a comment, or appear as markup anywhere.
// (The browser side is tests/report/html_report_test.sh.)
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "edgemem/report.h"
#include "report/style.h"
#include "test_support.h"

namespace edgemem::test {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string page_for_site(const std::string& site) {
  std::string log = "[MEM][0] POOL name=heap kind=heap base=0x20000000 size=4096\n";
  for (int i = 1; i <= 3; ++i)
    log += "[MEM][" + std::to_string(10 * i) + "] INFER begin\n[MEM][" + std::to_string(10 * i + 1) +
           "] ALLOC size=16 addr=" + std::to_string(0x20000000 + 64 * i) + " site=" + site + " pool=heap\n[MEM][" +
           std::to_string(10 * i + 2) + "] INFER end\n";
  auto run = analyse(Format::log, log);
  InputSummary in{"t.log", "log", run->stats, run->context.time_base};
  return html_report(in, run->result);
}

TEST(HtmlReport, MarkupInSiteNamesStaysInsideTheDataBlock) {
  const std::string plain = page_for_site("model.c:58");
  const std::string hostile = page_for_site("</script><!--<img/src=x/onerror=alert(1)>");
  EXPECT_EQ(count(hostile, "</script"), count(plain, "</script"));
  EXPECT_EQ(count(hostile, "<!--"), count(plain, "<!--"));
  EXPECT_EQ(hostile.find("<img"), std::string::npos);
}

// On a terminal the text report is coloured; the page takes its words only.
TEST(HtmlReport, NoTerminalColourInThePage) {
  style::set_colour(style::When::always);
  const std::string page = page_for_site("model.c:58");
  style::set_colour(style::When::never);
  EXPECT_EQ(page.find("\x1b"), std::string::npos);
  EXPECT_EQ(page.find("\\u001b"), std::string::npos);
}

TEST(HtmlReport, DataBlockHoldsTheAnalysisAndTheFindingsInTextReportOrder) {
  const std::string page = page_for_site("</script>model.c:58");
  const std::string open = "<script type=\"application/json\" id=\"edgemem-data\">";
  size_t begin = page.find(open);
  ASSERT_NE(begin, std::string::npos);
  begin += open.size();
  size_t end = page.find("</script>", begin);
  ASSERT_NE(end, std::string::npos);
  auto data = nlohmann::json::parse(page.substr(begin, end - begin));
  ASSERT_EQ(data["analysis"]["leaks"].size(), 1u);
  EXPECT_EQ(data["analysis"]["leaks"][0]["site"], "</script>model.c:58");
  ASSERT_FALSE(data["summary"].empty());
  EXPECT_EQ(data["summary"][0]["tag"], "[LEAK]");
  EXPECT_EQ(data["summary"][0]["text"], "16 B per inference at </script>model.c:58");
  EXPECT_FALSE(data["summary"][0]["more"].empty());
}

}  // namespace
}  // namespace edgemem::test
