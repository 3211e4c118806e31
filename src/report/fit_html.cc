// The fit page's data: the edgemem.fit/2 document, the text report's verdict
// lines, and each total's share of its capacity formatted as the text report
// prints it (web/pages/fit.js draws them).
#include <nlohmann/json.hpp>

#include "report/fit_report.h"
#include "report/html_page.h"
#include "report/style.h"
#include "report/units.h"

namespace edgemem {

std::string fit_html(const FitReport& rep) {
  std::string text;
  {
    style::Plain plain;  // the page takes the text report's words, not its terminal colours
    text = fit_text(rep);
  }
  const plan::FitResult& r = rep.result;
  // One rounding for page and terminal: the text report's "(424.2 %)".
  nlohmann::json shares = {{"flash", fit_share(r.flash_need, r.flash_capacity)}, {"ram", fit_share(r.ram_need, r.ram_capacity)}};
  return html::page("fit", {{"fit", nlohmann::json::parse(fit_json(rep))},
                            {"verdict", html::verdict_lines(text)},
                            {"shares", shares}});
}

}  // namespace edgemem
