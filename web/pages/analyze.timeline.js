// Memory per pool over trace time (doc.analysis.timelines): bytes in use and
// live blocks, one line per pool, for every trace, with or without
// inference markers. The series are already reduced with each bucket's
// lowest and highest point kept, so spikes are drawn. Inference spans
// (doc.analysis.inference_marks) are a thin track along the top.
EM.timelineCharts = function (figure, a) {
  "use strict";
  const { el, note, grouped, bytes } = EM;
  const lines = a.timelines.filter((t) => t.used_bytes.length);
  figure.dataset.pools = lines.length;
  if (!lines.length) {
    note(figure, "No pool saw an allocation: nothing to draw over time.");
    return;
  }
  const axis = EM.traceAxis(a), toX = axis.toX;
  const palette = ["#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#e08a00", "#00838f", "#5d4037", "#ad1457"];
  const spans = a.inference_marks.spans.filter((s) => s.begin != null && s.end != null);
  const track = (u) => {
    const ctx = u.ctx, { top } = u.bbox;
    ctx.fillStyle = "rgba(21,101,192,0.25)";
    for (const s of spans) {
      const x0 = u.valToPos(toX(s.begin), "x", true), x1 = u.valToPos(toX(s.end), "x", true);
      if (x1 < u.bbox.left || x0 > u.bbox.left + u.bbox.width) continue;
      ctx.fillRect(x0, top, Math.max(1, x1 - x0), 5 * devicePixelRatio);
    }
  };
  const row = el("div", "chart-row");
  figure.append(row);
  const chart = (key, yLabel, format) => {
    const joined = EM.joinAll(lines.map((t) => [t[key].map((p) => toX(p[0])), t[key].map((p) => p[1])]));
    // Every point of every pool has its place (the test counts them).
    figure.dataset[key === "used_bytes" ? "pointsUsed" : "pointsBlocks"] = joined.slice(1).reduce((n, ys) => n + ys.filter((v) => v != null).length, 0);
    const box = el("div");
    row.append(box);
    new uPlot({ width: 540, height: 240,
      series: [{ label: axis.label, value: axis.value }].concat(lines.map((t, i) => ({
        label: "'" + t.pool + "'", stroke: palette[i % palette.length], width: 1.5, spanGaps: true,
        value: (u, v) => (v == null ? "--" : format(v)) }))),
      scales: { x: { time: false } },
      axes: [{ label: axis.label, space: 110, values: axis.ticks }, { values: (u, s) => s.map((v) => (Number.isInteger(v) ? grouped(v) : "")), size: 70, label: yLabel }],
      hooks: { drawClear: [track] } }, joined, box);
  };
  chart("used_bytes", "bytes in use", bytes);
  // Summary records count no blocks: those pools have no live-block line.
  if (lines.some((t) => t.live_blocks.length)) chart("live_blocks", "live blocks", grouped);
  const m = a.inference_marks;
  note(figure, (spans.length ? "Top track: inferences" + (m.dropped ? " (" + grouped(m.spans.length) + " of " + grouped(m.total) +
                 ", evenly spread)" : "") + ". " : "") +
               "Heap: bytes in live blocks; arena: the top of its highest live block. Each line keeps the lowest and highest point of every stretch it merges.");
};
