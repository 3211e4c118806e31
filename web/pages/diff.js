// The diff page: the biggest changes first, then each group (regions,
// sections, objects, symbols for two images; the run's numbers, pools and
// sites for two traces) with before, after and the change as text prints
// them, sorted by the size of the change, a bar per row. doc comes from
// src/report/diff_html.cc.
EM.pages.diff = function (doc) {
  "use strict";
  const { el } = EM;

  EM.setTitle("edgemem diff", doc.before + " \u2192 " + doc.after + " (" + doc.compares + ")");
  EM.findings(doc.verdicts, document.getElementById("verdicts"), document.getElementById("verdicts"));

  const groups = document.getElementById("groups");
  for (const g of doc.groups) {
    const section = el("section", "group");
    section.append(el("h2", null, g.title + " (" + g.changed + " changed)"));
    if (g.note) section.append(el("p", "note", g.note));
    groups.append(section);
    if (!g.rows.length) {
      section.append(el("p", "note", "No change."));
      continue;
    }
    // Bars share one scale per group; rows of another unit (a fraction, a
    // band beside bytes) are scaled among their own kind.
    const largest = new Map();
    for (const r of g.rows) largest.set(r.unit, Math.max(largest.get(r.unit) || 0, Math.abs(r.delta)));
    const table = el("table");
    const head = el("tr");
    for (const [text, cls] of [["", null], ["before", "num"], ["after", "num"], ["change", "num"], ["", "num"], ["", null]])
      head.append(el("th", cls, text));
    table.append(el("thead"), el("tbody"));
    table.tHead.append(head);
    for (const r of g.rows) {
      const tr = el("tr");
      const name = el("td", "name", r.label);
      if (r.added || r.removed) name.append(el("span", "tag", r.added ? "[new]" : "[gone]"));
      const direction = r.delta > 0 ? "grew" : "shrank";
      const bar = el("div", "delta");
      const part = el("div", direction);
      part.style.width = (Math.abs(r.delta) / (largest.get(r.unit) || 1)) * 50 + "%";
      bar.append(el("div", "axis"), part);
      const barCell = el("td");
      barCell.append(bar);
      tr.append(name, el("td", "num", r.before), el("td", "num", r.after), el("td", "num " + direction, r.change),
                el("td", "num", r.ratio), barCell);
      table.tBodies[0].append(tr);
    }
    section.append(table);
    if (g.changed > g.rows.length)
      section.append(el("p", "note", (g.changed - g.rows.length) + " more changed rows (edgemem diff --top N shows more)."));
  }
};
