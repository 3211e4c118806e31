// The stack page: verdict cards, the main-stack budget, then every root
// (entry point, thread, handler) worst first with its worst path as an
// indented call tree (own frame, running total) and, for an unbounded root,
// why. doc comes from src/report/stack_html.cc.
EM.pages.stack = function (doc) {
  "use strict";
  const { bytes, el } = EM;

  EM.setTitle("edgemem stack", doc.function_count.toLocaleString("en-US") + " functions from " + doc.files + " " + doc.source +
              " file" + (doc.files === 1 ? "" : "s"));
  const facts = document.getElementById("facts");
  EM.findings(doc.verdicts, document.getElementById("verdicts"), facts);
  const fact = (key, text) => facts.append(el("div", "key", key), el("div", null, text));
  const m = doc.main_stack;
  if (m.handlers)
    fact("Main stack", "thread " + bytes(m.thread_bytes) + "; every handler nested: " + bytes(m.all_nested_bytes) +
         "; + the deepest handler and its " + bytes(m.exception_frame_bytes) + " exception frame only (no handler " +
         "preempts another): " + bytes(m.one_level_bytes) + " (" + m.handlers + " handler" + (m.handlers === 1 ? "" : "s") + ")");
  if (doc.stated)
    fact("Keil states", "maximum stack usage " + bytes(doc.stated.max_bytes) +
         (doc.stated.unknown ? " + unknown (" + doc.stated.unknown + ")" : "") + " via " + doc.stated.chain.join(" > "));

  // The function a reason names ("recursion: f", "indirect call in g"), so
  // the row on the path that causes it is flagged.
  const named = (reason) => {
    const at = reason.indexOf(": ");
    if (at >= 0) return reason.slice(at + 2);
    const marker = reason.lastIndexOf(" in ");
    return marker >= 0 ? reason.slice(marker + 4) : null;
  };
  const roots = document.getElementById("roots");
  if (!doc.roots.length) roots.append(el("p", "note", "No call graph (.ci files): frames only, no path to show."));
  const worst = Math.max(1, ...doc.roots.map((r) => r.worst_case_bytes));
  const openRoots = 10;  // the rest start folded: a large image has hundreds of roots
  // Roots of one name (a file's own definition beside another's) are told apart by their files, as in the text.
  const timesNamed = new Map();
  for (const root of doc.roots) timesNamed.set(root.function, (timesNamed.get(root.function) || 0) + 1);
  doc.roots.forEach((root, i) => {
    const box = el("details", "root" + (root.unbounded ? " unbounded" : ""));
    box.open = i < openRoots;
    const head = el("summary");
    const h3 = el("h3");
    const title = timesNamed.get(root.function) > 1 && root.file ? root.function + " (" + root.file + ")" : root.function;
    h3.append(el("span", "fn", title), el("span", "num", bytes(root.worst_case_bytes)));
    if (root.unbounded) h3.append(el("span", "flag", "+ unbounded"));
    if (root.interrupt) h3.append(el("span", "irq", "interrupt handler"));
    if (root.stated_bytes != null) h3.append(el("span", "muted", "Keil states " + bytes(root.stated_bytes)));
    head.append(h3);
    box.append(head);
    const why = new Map();
    for (const reason of root.reasons) {
      box.append(el("div", "reason", reason));
      const fn = named(reason);
      if (fn) why.set(fn, (why.has(fn) ? why.get(fn) + "; " : "") + reason);
    }
    const calls = el("div", "calls");
    calls.append(el("div", "head", "call path"), el("div", "head num", "own frame"), el("div", "head num", "cumulative"), el("div", "head"));
    root.path.forEach((f, depth) => {
      const name = el("div", "fn" + (why.has(f.function) ? " flagged" : ""), (depth ? "\u2514 " : "") + f.function);
      name.style.paddingLeft = Math.min(depth, 24) * 14 + "px";
      if (why.has(f.function)) name.title = why.get(f.function);
      const bar = el("div", "cum");
      const fillBar = el("div");
      fillBar.style.width = (f.cumulative_bytes / worst) * 100 + "%";
      bar.append(fillBar);
      calls.append(name, el("div", "num", bytes(f.frame_bytes)), el("div", "num", bytes(f.cumulative_bytes)), bar);
    });
    box.append(calls);
    roots.append(box);
  });

  const body = document.querySelector("#heaviest tbody");
  for (const f of doc.heaviest) {
    const tr = el("tr");
    tr.append(el("td", "num", bytes(f.frame_bytes)), el("td", null, f.qualifier), el("td", "fn", f.function), el("td", "site", f.file));
    body.append(tr);
  }
};
