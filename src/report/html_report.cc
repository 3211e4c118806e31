// The analyze page's data: the analyze JSON document and the text report's
// findings (web/pages/analyze.js draws them).
#include "edgemem/report.h"
#include "report/html_page.h"
#include "report/page_bounds.h"
#include "report/style.h"

namespace edgemem {

std::string html_report(const InputSummary& input, const AnalysisResult& result) {
  std::string text;
  {
    style::Plain plain;  // the page takes the text report's words, not its terminal colours
    text = text_report(input, result);
  }
  nlohmann::json analysis = to_json(input, result);
  page_bounds::bound_analysis(analysis);
  return html::page("analyze", {{"analysis", std::move(analysis)}, {"summary", html::findings(text)}});
}

}  // namespace edgemem
