// The plan page: the verdict, the recommended arena in its parts, TFLite
// Micro's greedy plan beside edgemem's (operator x arena offset, one
// rectangle per tensor), live bytes per operator with the peak, and the
// tensor table (doc.plan is the edgemem.plan/1 document, doc.verdict the text
// report's verdict lines, doc.arena_parts the recommended arena in parts).
EM.pages.plan = function (doc) {
  "use strict";
  const p = doc.plan;
  const b = p.arena_budget;
  const { grouped, bytes, bytesHuman, el, note } = EM;
  const unrunnable = p.verdict === "tflm_cannot_run";
  const opName = (i) => doc.operator_names[i] || "";
  // A peak before the first operator (graph inputs alone) has op null.
  const peakAt = () => doc.peak.op === null ? "peak before the first operator" : "peak at op " + doc.peak.op + " (" + opName(doc.peak.op) + ")";
  const tensorName = (t) => (t.name == null ? "(unnamed tensor " + t.id + ")" : t.name);
  const peakIds = new Set(doc.peak.tensors);

  EM.setTitle("edgemem plan: " + p.model, grouped(p.operators) + " operators, " + grouped(p.tensors.length) +
              " planned tensors, " + bytes(p.constant_bytes) + " of constants");

  // The verdict, in the text report's words; a model TFLite Micro cannot run gets no number.
  const verdicts = document.getElementById("verdicts");
  const card = el("div", "verdict " + (unrunnable || p.verdict === "declared_short" ? "danger"
                                 : b.complete && p.verdict !== "declared_enough_if_aligned" ? "ok" : "warning"));
  card.append(el("div", null, doc.verdict[0]));
  for (const line of doc.verdict.slice(1)) card.append(el("div", "more", line));
  verdicts.append(card);
  if (!unrunnable && !b.complete) {
    const warn = el("div", "verdict warning");
    warn.append(el("span", "tag", "INCOMPLETE"),
                el("span", null, "no cost model for " + b.unmodelled_operators.join(", ") + "; add their scratch"));
    verdicts.append(warn);
  }

  // The three arena sizes of the tensors, as the text report lists them.
  const facts = document.getElementById("facts");
  const fact = (key, value) => facts.append(el("div", "key", key), el("div", null, value));
  fact("tensors, edgemem (" + p.planner + ")", bytes(p.arena_bytes));
  fact("tensors, TFLite Micro greedy", bytes(p.tflm_greedy_bytes) +
       (p.tflm_greedy_bytes > p.arena_bytes ? "  (" + bytes(p.tflm_greedy_bytes - p.arena_bytes) + " more)" : ""));
  fact("lower bound (peak of live tensors)", bytes(p.lower_bound_bytes) +
       (p.arena_bytes === p.lower_bound_bytes ? "  (edgemem's plan is optimal)" : ""));
  fact("peak", peakAt() + ": " + bytes(doc.peak.live_bytes) +
       " live in " + doc.peak.tensors.length + " tensors");
  if (p.offline_plan) fact("offline plan", "the model's metadata fixes tensor offsets; both planners keep them");
  if (p.reorder) {
    const o = p.reorder;
    fact("reorder", o.gain_bytes === 0
      ? "the model's operator order already has the lowest peak" + (o.exhaustive ? "" : " that a greedy search finds")
      : (o.exhaustive ? "the best" : "a greedy") + " operator order lowers the bound " + bytes(o.original_lower_bound_bytes) +
        " -> " + bytes(o.lower_bound_bytes) + " (" + bytes(o.gain_bytes) + " less); arena " + bytes(o.arena_bytes));
  }

  const svgOf = (parent, width, height) =>
    d3.select(parent).append("svg").attr("width", width).attr("height", height).attr("viewBox", [0, 0, width, height]);
  const byteTicks = (axis) => axis.tickFormat((v) => grouped(v));

  // The recommended arena as one stacked bar of its parts (they add up to it).
  const arena = document.getElementById("plan-arena");
  if (unrunnable) {
    arena.querySelector("#arena-parts").remove();
    note(arena, "No arena size is recommended, so none is broken down: TFLite Micro cannot run this model: " +
         b.tflm_blockers.join(", ") + ".");
  } else {
    const total = doc.arena_parts.reduce((s, x) => s + x.bytes, 0);
    const partColour = { tensors: "#1565c0", scratch: "#64b5f6", allocator: "#8d6e63", temporary: "#e08a00", alignment: "#9e9e9e" };
    const tailShades = ["#2e7d32", "#66bb6a", "#1b5e20", "#a5d6a7"];
    let tails = 0;
    const parts = doc.arena_parts.map((x) => ({ ...x, colour: partColour[x.part] || tailShades[tails++ % tailShades.length] }));
    const width = 960, height = 64, left = 4, right = 4;
    const extent = Math.max(total, p.declared_arena_bytes || 0);
    const x = d3.scaleLinear().domain([0, extent]).range([left, width - right]);
    const svg = svgOf(document.getElementById("arena-bar"), width, height);
    let at = 0;
    for (const part of parts) {
      const x0 = x(at), w = Math.max(1, x(at + part.bytes) - x0);
      const g = svg.append("g");
      g.append("rect").attr("class", "segment").attr("x", x0).attr("y", 4).attr("width", w).attr("height", 32)
        .attr("fill", part.colour);
      g.append("title").text(part.what + ": " + bytes(part.bytes));
      if (w > 80) g.append("text").attr("x", x0 + 4).attr("y", 24).style("fill", "#fff").text(bytes(part.bytes));
      at += part.bytes;
    }
    svg.append("text").attr("x", left).attr("y", 54).text("recommended " + bytesHuman(total));
    if (p.declared_arena_bytes != null) {
      const dx = x(p.declared_arena_bytes);
      svg.append("line").attr("class", "declared").attr("x1", dx).attr("x2", dx).attr("y1", 0).attr("y2", 40);
      svg.append("text").attr("x", Math.min(dx + 4, width - 200)).attr("y", 54).style("fill", "#c62828")
        .text("declared " + bytesHuman(p.declared_arena_bytes));
    }
    const body = document.querySelector("#arena-parts tbody");
    for (const part of parts) {
      const swatch = el("span", "swatch");
      swatch.style.background = part.colour;
      const cell = el("td");
      cell.append(swatch);
      const tr = el("tr");
      tr.append(cell, el("td", null, part.what), el("td", "num", bytes(part.bytes)),
                el("td", "num", EM.percent(part.bytes / total)));
      body.append(tr);
    }
    const sum = el("tr");
    sum.append(el("td"), el("th", null, "recommended arena (kTensorArenaSize)"), el("th", "num", bytes(total)), el("td"));
    body.append(sum);
  }

  // Both plans on one operator x offset scale, zoomed together.
  const yMax = Math.max(p.arena_bytes, p.tflm_greedy_bytes, 16);
  const plans = [
    { id: "plan-tflm", key: "tflm_offset", arena: p.tflm_greedy_bytes, title: "TFLite Micro greedy: " + bytes(p.tflm_greedy_bytes) },
    { id: "plan-edgemem", key: "offset", arena: p.arena_bytes, title: "edgemem (" + p.planner + "): " + bytes(p.arena_bytes) },
  ];
  const W = 560, H = 400, m = { left: 84, right: 12, top: 10, bottom: 40 };
  const x0 = d3.scaleLinear().domain([0, Math.max(1, p.operators)]).range([m.left, W - m.right]);
  const y0 = d3.scaleLinear().domain([0, yMax]).range([H - m.bottom, m.top]);
  const colour = (t) => d3.schemeTableau10[t.id % 10];
  const charts = [];
  let syncing = false;
  const zoom = d3.zoom().scaleExtent([1, 256])
    .extent([[m.left, m.top], [W - m.right, H - m.bottom]])
    .translateExtent([[m.left, m.top], [W - m.right, H - m.bottom]])
    .on("zoom", function (event) {
      for (const c of charts) c.draw(event.transform);
      if (syncing) return;
      syncing = true;  // the other chart takes the same transform without echoing it back
      for (const c of charts) if (c.svg.node() !== this) c.svg.call(zoom.transform, event.transform);
      syncing = false;
    });
  const hover = (id, on) => {
    for (const c of charts) c.rects.classed("hover", (t) => on && t.id === id);
  };
  for (const plan of plans) {
    const figure = document.getElementById(plan.id);
    figure.querySelector("figcaption").textContent = plan.title;
    const svg = svgOf(figure, W, H);
    svg.append("defs").append("clipPath").attr("id", plan.id + "-clip").append("rect")
      .attr("x", m.left).attr("y", m.top).attr("width", W - m.left - m.right).attr("height", H - m.top - m.bottom);
    const area = svg.append("g").attr("clip-path", "url(#" + plan.id + "-clip)");
    const peakBand = area.append("rect").attr("class", "peak-op").attr("y", m.top).attr("height", H - m.top - m.bottom);
    const rects = area.selectAll("rect.tensor").data(p.tensors).join("rect")
      .attr("class", (t) => (peakIds.has(t.id) ? "tensor peak" : "tensor")).attr("fill", colour)
      .on("mouseenter", (event, t) => hover(t.id, true)).on("mouseleave", (event, t) => hover(t.id, false));
    rects.append("title").text((t) => tensorName(t) + "\n" + bytes(t.bytes) + " (" + bytes(t.aligned_bytes) + " aligned)" +
      "\nops " + t.first_op + ".." + t.last_op + "\noffset " + grouped(t[plan.key]) + " .. " + grouped(t[plan.key] + t.aligned_bytes));
    const arenaLine = area.append("line").attr("class", "arena-line").attr("x1", m.left).attr("x2", W - m.right);
    const arenaLabel = area.append("text").attr("text-anchor", "end").attr("x", W - m.right - 4)
      .text("arena " + bytes(plan.arena));
    const xAxis = svg.append("g").attr("transform", "translate(0," + (H - m.bottom) + ")");
    const yAxis = svg.append("g").attr("transform", "translate(" + m.left + ",0)");
    svg.append("text").attr("x", (m.left + W - m.right) / 2).attr("y", H - 6).attr("text-anchor", "middle").text("operator");
    svg.append("text").attr("transform", "rotate(-90)").attr("x", -(H - m.bottom + m.top) / 2).attr("y", 12)
      .attr("text-anchor", "middle").text("arena offset (bytes)");
    const draw = (transform) => {
      const x = transform.rescaleX(x0), y = transform.rescaleY(y0);
      rects.attr("x", (t) => x(t.first_op)).attr("width", (t) => Math.max(1, x(t.last_op + 1) - x(t.first_op)))
        .attr("y", (t) => y(t[plan.key] + t.aligned_bytes))
        .attr("height", (t) => Math.max(0.5, y(t[plan.key]) - y(t[plan.key] + t.aligned_bytes)));
      if (doc.peak.op !== null) peakBand.attr("x", x(doc.peak.op)).attr("width", Math.max(1, x(doc.peak.op + 1) - x(doc.peak.op)));
      arenaLine.attr("y1", y(plan.arena)).attr("y2", y(plan.arena));
      arenaLabel.attr("y", y(plan.arena) < m.top + 16 ? y(plan.arena) + 14 : y(plan.arena) - 4);  // below the line at the top
      xAxis.call(d3.axisBottom(x).ticks(8).tickFormat((v) => (Number.isInteger(v) ? grouped(v) : "")));
      yAxis.call(byteTicks(d3.axisLeft(y).ticks(8)));
    };
    draw(d3.zoomIdentity);
    svg.call(zoom);
    charts.push({ svg, rects, draw });
  }

  // Live bytes per operator, the peak in red, both plans' arena sizes as lines.
  const live = document.getElementById("live");
  const LW = 960, LH = 240, lm = { left: 84, right: 12, top: 10, bottom: 40 };
  const series = p.timeline;
  const top = Math.max(yMax, ...series.map((s) => s.live_bytes)) * 1.05;
  const lx = d3.scaleBand().domain(series.map((s) => s.op)).range([lm.left, LW - lm.right]).padding(series.length > 200 ? 0 : 0.15);
  const ly = d3.scaleLinear().domain([0, top]).range([LH - lm.bottom, lm.top]);
  const lsvg = svgOf(live, LW, LH);
  const bars = lsvg.append("g").selectAll("rect").data(series).join("rect")
    .attr("class", (s) => (s.op === doc.peak.op ? "bar-peak" : "bar"))
    .attr("x", (s) => lx(s.op)).attr("width", Math.max(1, lx.bandwidth()))
    .attr("y", (s) => ly(s.live_bytes)).attr("height", (s) => ly(0) - ly(s.live_bytes));
  bars.append("title").text((s) => "op " + s.op + " " + opName(s.op) + ": " + bytes(s.live_bytes) + " live");
  for (const [cls, value, label] of [["arena-line", p.arena_bytes, "edgemem plan " + bytes(p.arena_bytes)],
                                     ["greedy-line", p.tflm_greedy_bytes, "TFLite Micro greedy " + bytes(p.tflm_greedy_bytes)]]) {
    lsvg.append("line").attr("class", cls).attr("x1", lm.left).attr("x2", LW - lm.right).attr("y1", ly(value)).attr("y2", ly(value));
    lsvg.append("text").attr("x", cls === "arena-line" ? lm.left + 4 : LW - lm.right - 4)
      .attr("text-anchor", cls === "arena-line" ? "start" : "end").attr("y", ly(value) - 4).text(label);
  }
  const every = Math.max(1, Math.ceil(series.length / 24));
  lsvg.append("g").attr("transform", "translate(0," + (LH - lm.bottom) + ")")
    .call(d3.axisBottom(lx).tickValues(series.map((s) => s.op).filter((op) => op % every === 0)));
  lsvg.append("g").attr("transform", "translate(" + lm.left + ",0)").call(byteTicks(d3.axisLeft(ly).ticks(6)));
  lsvg.append("text").attr("x", (lm.left + LW - lm.right) / 2).attr("y", LH - 6).attr("text-anchor", "middle").text("operator");

  // The peak and the tensors that make it, largest first.
  const peak = document.getElementById("peak");
  peak.append(el("p", null, peakAt() + ": " + bytes(doc.peak.live_bytes) +
                            " live in " + doc.peak.tensors.length + " tensors"));
  const list = el("ul");
  for (const t of p.tensors.filter((t) => peakIds.has(t.id)).sort((a, c) => c.aligned_bytes - a.aligned_bytes))
    list.append(el("li", null, tensorName(t) + ": " + bytes(t.aligned_bytes) + " (ops " + t.first_op + ".." + t.last_op + ")"));
  peak.append(list);

  // Every planned tensor, in the text report's order.
  document.getElementById("offset-edgemem").textContent = "Offset, edgemem (" + p.planner + ")";
  const body = document.querySelector("#tensors tbody");
  for (const t of p.tensors) {
    const tr = el("tr", peakIds.has(t.id) ? "peak" : null);
    tr.append(el("td", "num", String(t.id)), el("td", "name", t.name == null ? "" : t.name), el("td", "num", bytes(t.bytes)),
              el("td", "num", bytes(t.aligned_bytes)), el("td", "num", t.first_op + ".." + t.last_op),
              el("td", "num", grouped(t.offset)), el("td", "num", grouped(t.tflm_offset)));
    tr.addEventListener("mouseenter", () => hover(t.id, true));
    tr.addEventListener("mouseleave", () => hover(t.id, false));
    body.append(tr);
  }
};
