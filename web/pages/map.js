// The map page: verdict cards, one bar per memory region (used of length,
// headroom or the overflow in red), a zoomable treemap of region > output
// section > input object > symbol with the arena, weights, stack and heap
// marked, and the largest symbols. doc comes from src/report/map_html.cc.
EM.pages.map = function (doc) {
  "use strict";
  const { bytes, el, note } = EM;

  EM.setTitle("edgemem map: " + doc.map, doc.toolchain + (doc.elf ? ", checked against " + doc.elf.file : ""));
  EM.findings(doc.verdicts, document.getElementById("verdicts"), document.getElementById("verdicts"));

  // Regions, in the map's order, with the text report's numbers.
  const regions = document.getElementById("regions");
  for (const r of doc.regions) {
    const name = el("div", "name", r.name);
    name.append(el("span", "kind", r.kind + ", " + r.origin));
    const bar = el("div", "bar");
    const numbers = el("div", "num");
    const rest = el("div");
    if (r.position_only) {
      bar.classList.add("position");
      numbers.textContent = bytes(r.used_bytes);
      rest.textContent = "placed at an address, not a capacity";
    } else {
      const used = el("div", "used");
      used.style.width = (r.length_bytes ? Math.min(1, r.used_bytes / r.length_bytes) * 100 : 100) + "%";
      bar.append(used);
      numbers.textContent = bytes(r.used_bytes) + " of " + bytes(r.length_bytes) + (r.used_percent ? "  " + r.used_percent : "");
      if (r.overflow_bytes) {
        bar.classList.add("over");
        rest.className = "overflow";
        rest.textContent = "OVERFLOWED by " + bytes(r.overflow_bytes);
      } else {
        rest.className = "free";
        rest.textContent = bytes(r.length_bytes - r.used_bytes) + " free";
      }
    }
    bar.title = r.name;
    regions.append(name, bar, numbers, rest);
  }
  const t = doc.totals;
  document.getElementById("totals").textContent = "code " + bytes(t.code_bytes) + ", read-only data " + bytes(t.ro_data_bytes) +
    ", read-write data " + bytes(t.rw_data_bytes) + ", zero-initialised " + bytes(t.zi_data_bytes) +
    (doc.elf ? "; ELF text " + bytes(doc.elf.text_bytes) + ", data " + bytes(doc.elf.data_bytes) + ", bss " + bytes(doc.elf.bss_bytes) : "");

  // What someone fitting a model looks for, named the way fit and check name it.
  const kindColour = { code: "#3f6fa8", rodata: "#4f9a4a", data: "#e07b24", bss: "#8e63a6", other: "#8a939e" };
  const kindName = { code: "code", rodata: "read-only data", data: "read-write data", bss: "zero-initialised", other: "other" };
  const roleColour = { "tensor arena": "#d0021b", "model weights": "#f2b300", stack: "#00a3b4", heap: "#7a4b2a" };
  const roleOrder = Object.keys(roleColour);
  const h = doc.highlights;
  const highlights = document.getElementById("highlights");
  const card = (role, what, text, name) => {
    const c = el("div", "hl");
    c.style.borderLeftColor = roleColour[role];
    c.append(el("span", "what", what));
    if (name != null) c.append(el("span", "name", name), document.createTextNode(" "));
    c.append(el("span", null, text));
    highlights.append(c);
  };
  // "at most": the map lists where the symbol starts, not where it ends.
  const size = (s) => (s.at_most ? "≤ " : "") + bytes(s.bytes);
  const where = (s) => size(s) + (s.section ? " in " + s.section : "") + (s.object ? " (" + s.object + ")" : "");
  const arena = h["tensor arena"];
  if (arena) card("tensor arena", "Tensor arena", where(arena) + "; the one edgemem fit and check take as declared", arena.name);
  else card("tensor arena", "Tensor arena", "no symbol named like an arena");
  const w = h["model weights"];
  if (w.count) card("model weights", "Model weights", w.count + " symbol" + (w.count === 1 ? "" : "s") + ", " + size(w) +
                    "; largest " + size(w.largest[0]), w.largest[0].name);
  else card("model weights", "Model weights", "no symbol named like weights (g_model, *_wt, *_bias)");
  if (h.stack) card("stack", "Stack", where(h.stack) + "; the main stack edgemem check budgets against", h.stack.name);
  if (h.heap) card("heap", "Heap", where(h.heap), h.heap.name);

  // The treemap. Each view shows three levels below the zoomed node;
  // blocks under 0.2 % of the view fold into "(N smaller)", so a map of
  // thousands of symbols stays a few hundred rectangles.
  const width = Math.max(900, Math.min(1400, document.getElementById("page").clientWidth || 1200)), height = 620;
  const levels = 3, maxShown = 40, minShare = 0.002;
  // The roles each subtree holds, so a section shows that the arena is inside it.
  const mark = (node) => {
    node.roles = new Set(node.r ? [node.r] : []);
    for (const c of node.c || []) for (const r of mark(c)) node.roles.add(r);
    return node.roles;
  };
  mark(doc.tree);
  const fold = (node, depth, view) => {
    const out = { data: node, name: node.n, bytes: node.b, kind: node.k, role: node.r, roles: node.roles };
    if (!node.c || depth === 0) return out;
    const kept = [], rest = [];
    node.c.forEach((c, i) => ((i < maxShown && c.b >= view * minShare) || c.roles.size ? kept : rest).push(c));
    out.children = kept.map((c) => fold(c, depth - 1, view));
    if (rest.length) {
      const folded = rest.reduce((n, c) => n + (c.folded || 1), 0);
      out.children.push({ name: "(" + folded + " smaller)", bytes: rest.reduce((s, c) => s + c.b, 0), kind: node.k, roles: new Set() });
    }
    return out;
  };
  const trail = [doc.tree];
  const crumbs = document.getElementById("crumbs");
  const box = document.getElementById("treemap");
  const svg = d3.select(box).append("svg").attr("width", width).attr("height", height).attr("role", "img");
  const shorten = (text, px) => {
    const fits = Math.floor(px / 6.5);
    return text.length <= fits ? text : fits > 3 ? text.slice(0, fits - 1) + "\u2026" : "";
  };
  // Objects are paths: the block shows the file name, its tooltip the whole path.
  const label = (name) => name.replace(/^.*[/\\](?=[^/\\]*$)/, "") || name;
  const fill = (d) => (d.data.role ? roleColour[d.data.role] : kindColour[d.data.kind] || "#5b6470");
  const outline = (d) => roleOrder.find((r) => d.data.roles.has(r));
  const show = () => {
    const top = trail[trail.length - 1];
    crumbs.replaceChildren();
    trail.forEach((node, i) => {
      const b = el("button", null, (i ? node.n : "all regions") + " (" + bytes(node.b) + ")");
      b.disabled = i === trail.length - 1;
      b.addEventListener("click", () => { trail.length = i + 1; show(); });
      crumbs.append(b);
    });
    const root = d3.hierarchy(fold(top, levels, top.b)).sum((d) => (d.children ? 0 : Math.max(d.bytes, 0)));
    // Blocks with children keep a strip on top for their label.
    d3.treemap().size([width, height]).paddingTop((d) => (d.depth > 0 && d.depth < levels && d.children ? 16 : 0))
      .paddingInner(1).round(true)(root);
    svg.selectAll("*").remove();
    if (!root.value) {
      svg.append("text").attr("class", "dark").attr("x", 8).attr("y", 20).text("Nothing with a size here.");
      return;
    }
    const nodes = root.descendants().filter((d) => d.depth > 0);
    const cell = svg.selectAll("g").data(nodes).join("g")
      .attr("transform", (d) => "translate(" + d.x0 + "," + d.y0 + ")")
      .classed("zoomable", (d) => !!(d.data.data && d.data.data.c));
    cell.append("rect")
      .attr("width", (d) => Math.max(0, d.x1 - d.x0)).attr("height", (d) => Math.max(0, d.y1 - d.y0))
      .attr("fill", (d) => (d.children ? (d.depth === 1 ? "#e3e7ec" : "#cfd5dc") : fill(d)))
      .attr("stroke", (d) => (outline(d) ? roleColour[outline(d)] : null))
      .attr("stroke-width", (d) => (outline(d) ? 3 : null))
      .attr("stroke-dasharray", (d) => (outline(d) && !d.data.role ? "5,3" : null));
    cell.append("title").text((d) => d.ancestors().reverse().slice(1).map((a) => a.data.name).join(" > ") + "\n" +
      bytes(d.data.bytes) + (d.data.kind ? ", " + kindName[d.data.kind] : "") + (d.data.role ? ", " + d.data.role : ""));
    cell.filter((d) => d.x1 - d.x0 > 30 && d.y1 - d.y0 > 13).append("text")
      .attr("class", (d) => (d.children ? "dark" : null))
      .attr("x", 4).attr("y", 12)
      .text((d) => shorten(label(d.data.name) + " " + bytes(d.data.bytes), d.x1 - d.x0 - 6));
    cell.on("click", (event, d) => {
      // A grandchild without children of its own zooms to its parent.
      const target = d.data.data && d.data.data.c ? d : d.parent;
      if (!target || target.depth === 0) return;
      for (const a of target.ancestors().reverse().slice(1)) trail.push(a.data.data);
      show();
    });
  };
  show();

  const legend = document.getElementById("legend");
  const swatch = (colour, text, dashed) => {
    const s = el("span", "swatch");
    s.style.background = dashed ? "#fff" : colour;
    if (dashed) s.style.border = "2px dashed " + colour;
    const item = el("span");
    item.append(s, document.createTextNode(text));
    legend.append(item);
  };
  for (const k of ["code", "rodata", "data", "bss"]) swatch(kindColour[k], kindName[k]);
  for (const r of roleOrder) swatch(roleColour[r], r);
  swatch("#d0021b", "holds a marked symbol", true);
  note(legend, "Click a block to zoom in, a button above to zoom out. A \"(load image)\" block is initialised data " +
       "stored in one region and copied to the one it runs in at start-up: both hold its bytes.");

  // The largest symbols, as the text report lists them.
  const body = document.querySelector("#symbols tbody");
  for (const s of doc.symbols) {
    const tr = el("tr", roleColour[s.role] ? "role" : null);
    tr.append(el("td", "num", size(s)), el("td", null, s.role), el("td", "name", s.name),
              el("td", "name", s.section || ""), el("td", "name", s.object || ""));
    body.append(tr);
  }
  document.getElementById("symbols-note").textContent = doc.symbols.length < doc.symbol_count
    ? "The " + doc.symbols.length + " largest of " + doc.symbol_count.toLocaleString("en-US") + " symbols (edgemem map --top N for more)."
    : "";
};
