// The fit page: the verdict first (FITS / DOES NOT FIT / TFLite Micro cannot
// run the model), then flash and RAM as bars of their parts against the
// capacity, with the headroom or the overrun (doc.fit is the edgemem.fit/2
// document, doc.verdict the text report's verdict lines, doc.shares each
// total's share of its capacity as the text report rounds it).
EM.pages.fit = function (doc) {
  "use strict";
  const f = doc.fit;
  const { bytes, bytesHuman, el, note } = EM;
  const unrunnable = f.verdict === "tflm_cannot_run";

  EM.setTitle("edgemem fit: " + f.model, (f.map ? "with " + f.map + (f.toolchain ? " (" + f.toolchain + ")" : "") : "without a map") +
              ", on " + (f.chip || "the map's memory regions") + (f.core ? " (" + f.core + ")" : ""));

  const severity = { fits: "ok", fits_after_enlarging_arena: "warning", does_not_fit: "danger", tflm_cannot_run: "danger" };
  const card = el("div", "verdict " + severity[f.verdict]);
  card.append(el("div", null, doc.verdict[0]));
  for (const line of doc.verdict.slice(1)) card.append(el("div", "more", line.trim()));
  document.getElementById("verdicts").append(card);

  const facts = document.getElementById("facts");
  const fact = (key, value) => facts.append(el("div", "key", key), el("div", null, value));
  fact("capacities from", { mcu: "the MCU table (" + f.chip + ")", custom: "--ram and --flash", map: "the map's memory regions" }[f.capacity_source]);
  fact("runtime structs", f.target);
  if (!unrunnable) fact("recommended arena", bytesHuman(f.arena.recommended_bytes) + (f.arena.estimate_complete ? "" :
    "  INCOMPLETE: no cost model for " + f.arena.unmodelled_operators.join(", ")));
  if (f.model_symbol) fact("model weights", "linked in already: " + f.model_symbol);

  // One memory as a bar: its parts in order, the capacity as a line, the
  // headroom up to it or the overrun past it.
  const colours = ["#1565c0", "#e08a00", "#6a1b9a", "#00838f", "#5d4037"];
  const bar = (figure, id, parts, need, capacity, label) => {
    const width = 960, height = 78, left = 4, right = 4;
    const x = d3.scaleLinear().domain([0, Math.max(need, capacity, 1)]).range([left, width - right]);
    const svg = d3.select(figure).append("svg").attr("width", width).attr("height", height).attr("viewBox", [0, 0, width, height]);
    svg.append("defs").append("pattern").attr("id", id + "-hatch").attr("width", 8).attr("height", 8)
      .attr("patternUnits", "userSpaceOnUse").attr("patternTransform", "rotate(45)")
      .append("rect").attr("width", 4).attr("height", 8).attr("fill", "rgba(198,40,40,0.55)");
    let at = 0;
    parts.forEach((part, i) => {
      const x0 = x(at), w = Math.max(1, x(at + part.bytes) - x0);
      const g = svg.append("g");
      g.append("rect").attr("class", "segment").attr("x", x0).attr("y", 6).attr("width", w).attr("height", 34)
        .attr("fill", colours[i % colours.length]);
      g.append("title").text(part.what + ": " + bytes(part.bytes));
      if (w > 90) g.append("text").attr("x", x0 + 4).attr("y", 27).style("fill", "#fff").text(bytes(part.bytes));
      at += part.bytes;
    });
    if (need <= capacity) {
      const g = svg.append("g");
      g.append("rect").attr("class", "headroom").attr("x", x(need)).attr("y", 6).attr("width", Math.max(0, x(capacity) - x(need)))
        .attr("height", 34);
      g.append("title").text("headroom: " + bytes(capacity - need));
      if (x(capacity) - x(need) > 120) g.append("text").attr("x", x(need) + 4).attr("y", 27).text("headroom " + bytes(capacity - need));
    } else {
      const g = svg.append("g");
      g.append("rect").attr("class", "overrun").attr("x", x(capacity)).attr("y", 2).attr("width", x(need) - x(capacity))
        .attr("height", 42).attr("fill", "url(#" + id + "-hatch)");
      g.append("title").text("over capacity by " + bytes(need - capacity));
      svg.append("text").attr("x", width - right).attr("y", 62).attr("text-anchor", "end").style("fill", "#c62828")
        .text("over by " + bytes(need - capacity));
    }
    svg.append("line").attr("class", "capacity").attr("x1", x(capacity)).attr("x2", x(capacity)).attr("y1", 0).attr("y2", 48);
    const wide = x(capacity) > 240;  // the label ends at the capacity line unless that is too near the left
    svg.append("text").attr("x", wide ? x(capacity) : x(capacity) + 4).attr("y", 62).attr("text-anchor", wide ? "end" : "start")
      .text(label + " " + bytes(capacity));
  };

  // The parts and the total as the text report prints them.
  const table = (figure, parts, rows) => {
    const t = el("table");
    const body = el("tbody");
    parts.forEach((part, i) => {
      const swatch = el("span", "swatch");
      swatch.style.background = colours[i % colours.length];
      const cell = el("td");
      cell.append(swatch);
      const tr = el("tr");
      tr.append(cell, el("td", null, part.what), el("td", "num", bytes(part.bytes)), el("td"));
      body.append(tr);
    });
    for (const [what, value, verdict, good] of rows) {
      const tr = el("tr");
      tr.append(el("td"), el("th", null, what), el("td", "num", value), el("td", good ? "good" : "bad", verdict));
      body.append(tr);
    }
    t.append(body);
    figure.append(t);
  };
  const total = (need, capacity, share, fits) =>
    ["total", bytes(need) + " of " + bytes(capacity) + " (" + share + ")", fits ? "fits" : "SHORT by " + bytes(need - capacity), fits];

  const flash = document.getElementById("fit-flash");
  bar(flash, "fit-flash", f.flash.lines, f.flash.need_bytes, f.flash.capacity_bytes, "flash");
  table(flash, f.flash.lines, [total(f.flash.need_bytes, f.flash.capacity_bytes, doc.shares.flash, f.flash.fits)]);
  if (f.model_symbol) note(flash, "The weights are linked in already: " + f.model_symbol + ".");

  const ram = document.getElementById("fit-ram");
  if (unrunnable) {
    const statics = f.ram.lines.reduce((s, l) => s + l.bytes, 0);
    bar(ram, "fit-ram", f.ram.lines, statics, f.ram.capacity_bytes, "RAM");
    table(ram, f.ram.lines, []);
    note(ram, "No RAM need is judged, since no arena size can be recommended: TFLite Micro cannot run this model: " +
              f.arena.tflm_blockers.join(", ") + ".");
    return;
  }
  bar(ram, "fit-ram", f.ram.lines, f.ram.need_bytes, f.ram.capacity_bytes, "RAM");
  const rows = [total(f.ram.need_bytes, f.ram.capacity_bytes, doc.shares.ram, f.ram.fits),
    ["arena in one block", bytes(f.arena.placed_bytes) + " of " + bytes(f.ram.arena_block_free_bytes) + " contiguous",
     f.ram.arena_fits_block ? "fits" : "DOES NOT FIT", f.ram.arena_fits_block]];
  if (f.arena.symbol != null) {
    const need = f.arena.declared_need_bytes;  // less the alignment allowance for an aligned array
    const enough = f.arena.declared_bytes >= need;
    rows.push(["declared " + f.arena.symbol, bytes(f.arena.declared_bytes),
      enough ? bytes(f.arena.declared_bytes - need) + " can be reclaimed"
             : bytes(need - f.arena.declared_bytes) + " too small, AllocateTensors() is expected to fail", enough]);
  }
  table(ram, f.ram.lines, rows);
  const block = el("figure");
  block.append(el("figcaption", null, "The arena in one contiguous block"));
  ram.after(block);
  bar(block, "fit-block", [{ what: "tensor arena", bytes: f.arena.placed_bytes }], f.arena.placed_bytes,
      f.ram.arena_block_free_bytes, "largest free block");
};
