// The diff page's data: the text report's headline as a card, then each group
// with the rows that changed most, the numbers as the text prints them and
// the signed change for the bars (web/pages/diff.js draws them).
#include "report/diff_report.h"
#include "report/html_page.h"

namespace edgemem {

using nlohmann::json;

json diff_page_data(const DiffReport& r, size_t top) {
  DiffHeadline headline = diff_headline(r);
  json d = {{"before", r.before}, {"after", r.after}, {"compares", r.kind}};
  d["verdicts"] = json::array({{{"tag", headline.changed ? "[CHANGED]" : "[NO CHANGE]"}, {"text", headline.text},
                                {"more", json::array()}}});
  d["groups"] = json::array();
  for (const DiffGroup& g : r.groups) {
    json rows = json::array();
    size_t changed = 0;
    for (const DiffRow& row : g.rows) {
      if (row.delta() == 0) continue;
      if (changed++ >= top) continue;  // counted, not shown: as the text's --top
      rows.push_back({{"label", diff_label(row)}, {"unit", to_string(row.unit)}, {"added", row.added},
                      {"removed", row.removed}, {"before", diff_value(row.before, row.unit)},
                      {"after", diff_value(row.after, row.unit)}, {"change", diff_change(row.delta(), row.unit)},
                      {"ratio", diff_ratio(row)}, {"delta", row.delta()}});
    }
    d["groups"].push_back({{"id", g.id}, {"title", g.title}, {"changed", changed}, {"rows", std::move(rows)}});
    if (!g.note.empty()) d["groups"].back()["note"] = g.note;
  }
  return d;
}

std::string diff_html(const DiffReport& r, size_t top) { return html::page("diff", diff_page_data(r, top)); }

}  // namespace edgemem
