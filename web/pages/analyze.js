// The analyze page: findings, memory per pool over time and per inference,
// fragmentation, request sizes, the layout over time, flame graphs of what
// was live and the sites of one trace (doc.analysis is the edgemem.analyze/1
// document, doc.summary the text report's findings).
EM.pages.analyze = function (doc) {
  "use strict";
  const a = doc.analysis;

  const { grouped, bytes, bytesHuman, el, note } = EM;
  // As the text reports give a rate: two decimals under 1 B, else one unless whole (1.5 B read "2 B").
  const rateBytes = (per) => {
    if (Math.abs(per) < 1) return per.toFixed(2) + " B";
    const [whole, tenth] = Math.abs(per).toFixed(1).split(".");
    return (per < 0 ? "-" : "") + grouped(Number(whole)) + (tenth === "0" ? "" : "." + tenth) + " B";
  };
  // Byte and count axes label whole numbers only; uPlot may split a small range into halves.
  const axisGrouped = (u, splits) => splits.map((v) => (v == null || !Number.isInteger(v) ? "" : grouped(v)));

  // Header and the findings, in the text report's order (worst first).
  EM.setTitle("edgemem: " + a.input.path,
              a.input.format + ", " + EM.counted(a.input.events, "event") + ", " + EM.counted(a.inferences, "inference"));
  EM.findings(doc.summary, document.getElementById("verdicts"), document.getElementById("facts"));

  const chartSize = { width: 560, height: 260 };

  EM.timelineCharts(document.getElementById("timeline"), a);

  // Memory per pool: the sampled usage, the least-squares line its slope is
  // of and, when the pool has a size, the forecast to exhaustion.
  const memory = document.getElementById("memory");
  const forecast = a.exhaustion_forecast;
  if (!a.watermark.length)
    note(memory, a.inferences ? "No pool was used: nothing to follow from inference to inference."
                              : "No completed inferences: no per-inference series.");
  // The pool the forecast is about first, then growing pools, then flat ones.
  const rank = (w) => (forecast && forecast.pool === w.pool ? 0 : w.slope_bytes_per_inference > 0 ? 1 : 2);
  const charts = el("div", "chart-row");
  memory.append(charts);
  for (const w of a.watermark.slice().sort((x, y) => rank(x) - rank(y))) {
    if (!w.series.length) continue;
    const pool = a.pools.find((p) => p.name === w.pool) || {};
    // A device numbers each boot's inferences anew: the latest boot's run of
    // rising numbers is drawn, as the fit and the forecast are of it (earlier
    // boots drawn over it zigzagged back and forth on one axis).
    let bootStart = a.restarts.total ? w.series.length - 1 : 0;
    while (bootStart > 0 && w.series[bootStart - 1][0] < w.series[bootStart][0]) bootStart--;
    const xs = w.series.slice(bootStart).map((p) => p[0]);
    const ys = w.series.slice(bootStart).map((p) => p[1]);
    const last = xs.length - 1;
    const line = w.fit_line;
    const along = (x) => (line.to[0] > line.from[0]
      ? line.from[1] + (line.to[1] - line.from[1]) * (x - line.from[0]) / (line.to[0] - line.from[0]) : line.from[1]);
    const fit = xs.map((x) => (line && x >= line.from[0] && x <= line.to[0] ? along(x) : null));
    const fc = xs.map((x, i) => (i === last ? ys[last] : null));
    let ahead = null;
    if (forecast && forecast.pool === w.pool && !forecast.already_exhausted && pool.size) {
      // Past ten times the trace the line would flatten the measured part; the note says it instead.
      if (forecast.inferences <= 10 * Math.max(1, xs[last] - xs[0])) ahead = xs[last] + forecast.inferences;
    }
    const data = [xs.slice(), ys.slice()];
    const series = [{ label: "inference" },
      { label: "in use", stroke: "#1565c0", width: 2, value: (u, v) => (v == null ? "--" : bytes(v)) }];
    if (line) {
      data.push(fit);
      series.push({ label: "fitted slope " + (w.slope_bytes_per_inference > 0 ? "+" : "") +
                      rateBytes(w.slope_bytes_per_inference) + "/inference",
                    stroke: "#c62828", dash: [6, 4], spanGaps: true, value: (u, v) => (v == null ? "--" : bytes(v)) });
    }
    if (ahead != null) {
      data.push(fc);
      series.push({ label: "forecast to exhaustion +" + rateBytes(forecast.bytes_per_inference) + "/inference",
                    stroke: "#e08a00", dash: [2, 4], spanGaps: true, width: 2,
                    value: (u, v) => (v == null ? "--" : bytes(v)) });
      // At the forecast's own rate, one point past the measured ones: where the
      // end-of-inference usage stands when the pool can no longer hold an
      // inference's peak (below the size by the inference's temporaries and
      // what a shared arena's other end holds).
      const atEnd = ys[last] + forecast.inferences * forecast.bytes_per_inference;
      for (const column of data) column.push(column === data[0] ? ahead : column === fc ? atEnd : null);
    }
    // A pool size far above the usage would flatten the curve to its floor;
    // then the title names the size instead of drawing it.
    const sizeDrawn = pool.size && (ahead != null || Math.max(...ys) * 4 >= pool.size);
    if (sizeDrawn) {
      data.push(data[0].map(() => pool.size));
      series.push({ label: "pool size", stroke: "#5b6470", width: 1, value: () => bytes(pool.size) });
    }
    const box = el("div");
    charts.append(box);
    new uPlot({ width: 390, height: 200, series,
      title: "'" + w.pool + "' (" + w.shape + ")" + (pool.size && !sizeDrawn ? ", of " + EM.bytesHuman(pool.size) : ""),
      scales: { x: { time: false } },
      axes: [{ label: "inference" }, { values: axisGrouped, size: 70, label: "bytes in use" }] }, data, box);
    if (bootStart > 0)
      note(box, "The device's latest boot: " + EM.counted(a.restarts.total, "restart") + " before it, whose " +
                "inferences it numbered anew, are left out of this chart (the usage over time above shows them).");
    if (forecast && forecast.pool === w.pool) {
      if (forecast.already_exhausted) note(box, "'" + w.pool + "' is already exhausted.");
      else note(box, "'" + w.pool + "' runs out in " + grouped(forecast.inferences) + " more inferences at " +
                rateBytes(forecast.bytes_per_inference) + "/inference (" + bytes(forecast.remaining_bytes) + " left)" +
                (ahead == null ? ", beyond this chart." : "."));
    }
  }

  // Fragmentation with the bands the analysis judges by: healthy < 10 %,
  // warning 10-25 %, danger > 25 %.
  const frag = document.getElementById("fragmentation");
  const curves = a.fragmentation.pools.filter((p) => p.curve.length);
  const blocks = a.counts.allocs + a.counts.reallocs > 0;
  // A device in summary mode sends its pools' numbers, no blocks or sites.
  const summariesOnly = a.counts.summaries > 0 && !blocks;
  if (!curves.length) note(frag, "No fragmentation curve: " + (summariesOnly
    ? "the summary records gave no largest free block, or no pool size." : blocks
    ? "no pool had free space between blocks." : "the trace holds no allocation."));
  else {
    // On the memory-over-time charts' axis (seconds where the clock is known).
    const axis = EM.traceAxis(a);
    const joined = EM.joinAll(curves.map((p) => [p.curve.map((c) => axis.toX(c[0])), p.curve.map((c) => c[1] * 100)]));
    const top = Math.max(30, ...curves.map((p) => p.max_rate * 100 * 1.1));
    // The bands judge a rate only over a pool of known extent; over an observed span they would mislead.
    const judged = curves.some((p) => p.extent === "known");
    const bands = (u) => {
      if (!judged) return;
      const ctx = u.ctx, { left, width } = u.bbox;
      for (const [lo, hi, colour] of [[0, 10, "rgba(46,125,50,0.10)"], [10, 25, "rgba(224,138,0,0.14)"], [25, top, "rgba(198,40,40,0.10)"]]) {
        const y1 = u.valToPos(hi, "y", true), y0 = u.valToPos(lo, "y", true);
        ctx.fillStyle = colour;
        ctx.fillRect(left, y1, width, y0 - y1);
      }
    };
    const palette = ["#6a1b9a", "#1565c0", "#00838f", "#5d4037"];
    const box = el("div");
    frag.append(box);
    new uPlot({ ...chartSize,
      series: [{ label: axis.label, value: axis.value }].concat(curves.map((p, i) => ({
        label: "'" + p.pool + "'" + (p.extent === "known" ? "" : " (observed span, not judged)"),
        stroke: palette[i % palette.length], width: 2, spanGaps: true,
        value: (u, v) => (v == null ? "--" : v.toFixed(0) + "%") }))),
      scales: { x: { time: false }, y: { range: [0, top] } },
      axes: [{ label: axis.label, space: 110, values: axis.ticks },
             { values: (u, s) => s.map((v) => v + "%"), label: "fragmentation" }],
      hooks: { drawClear: [bands] } }, joined, box);
    note(frag, judged ? "Bands: healthy < 10%, warning 10-25%, danger > 25%." +
                        (a.fragmentation.band ? " This trace: " + a.fragmentation.band + "." : "")
                      : "No pool of known size: rates over the span the blocks touched, not judged (no bands).");
  }

  // Request sizes, one bar per histogram bucket.
  const sizes = document.getElementById("sizes");
  const hist = a.sizes.histogram.filter((b) => b.count);
  if (!hist.length) note(sizes, summariesOnly ? "Summary records give no request sizes." : "No allocation requests.");
  else {
    const labels = hist.map((b) => (b.min === b.max ? grouped(b.min) : grouped(b.min) + "-" + grouped(b.max)));
    const box = el("div");
    sizes.append(box);
    new uPlot({ ...chartSize,
      series: [{ label: "size", value: (u, i) => (i == null ? "--" : labels[i] + " B") },
               { label: "requests", fill: "rgba(21,101,192,0.6)", stroke: "#1565c0",
                 paths: uPlot.paths.bars({ size: [0.8, 60] }), points: { show: false },
                 value: (u, v) => (v == null ? "--" : grouped(v)) }],
      scales: { x: { time: false, range: [-0.5, hist.length - 0.5] },
                y: { range: (u, min, max) => [0, Math.max(1, max) * 1.1] } },
      axes: [{ splits: () => hist.map((b, i) => i), values: (u, s) => s.map((i) => labels[i] || ""), label: "request size (B)",
               rotate: hist.length > 6 ? -40 : 0, size: hist.length > 6 ? 70 : 50 },
             { values: axisGrouped, label: "requests", size: 70 }] },
      [hist.map((b, i) => i), hist.map((b) => b.count)], box);
  }

  // Where the blocks sat, and what was live at the end and at the peak.
  // The page sends the layout's site names as frame indices (src/report/page_bounds.cc).
  a.layout.sites = a.layout.site_stacks.map((ids) => ids.map((i) => a.layout.site_frames[i]).join(";"));
  EM.layoutChart(document.getElementById("layout"), a.layout, new Set(a.leaks.map((l) => l.site)), EM.traceAxis(a));
  const noSites = summariesOnly ? "Summary records name no sites or blocks: what held the memory is not known." : null;
  // Bytes below an arena's top that no block held (freed out of order,
  // padding, lost) are part of its usage: their own frame, so each graph is
  // as wide as the usage the pool rows give. The peak's holders name them;
  // at the end they are an arena's usage less its live blocks.
  const belowTop = a.peak.live_at_peak.filter((h) => h.count === 0 && h.site.startsWith("(below an arena's top"))
    .map((h) => ({ pool: null, site: h.site, bytes: h.bytes, count: 0 }));
  const belowLabel = belowTop.length ? belowTop[0].site : "(below an arena's top, in no block: freed out of order, padding or lost)";
  // A pool summary records told (live blocks not known): its bytes are its
  // own frame, not "in no block" (they read so beside a heap traced in full).
  const unknownSite = "(summary records: what holds these bytes is not known)";
  const summarised = a.pools.filter((q) => q.live_blocks == null);
  let belowAtEnd = 0;
  if (!summariesOnly)
    for (const p of a.pools.filter((q) => q.kind === "arena" && q.live_blocks != null)) {
      const held = a.layout.live_at_end.filter((e) => e.pool === p.name).reduce((sum, e) => sum + e.bytes, 0);
      belowAtEnd += Math.max(0, p.final_bytes - held);
    }
  let endEntries = belowAtEnd ? a.layout.live_at_end.concat([{ pool: null, site: belowLabel, bytes: belowAtEnd, count: 0 }])
                              : a.layout.live_at_end;
  if (!summariesOnly)
    endEntries = endEntries.concat(summarised.filter((p) => p.final_bytes > 0)
      .map((p) => ({ pool: p.name, site: unknownSite, bytes: p.final_bytes, count: null })));
  EM.flameGraph(document.getElementById("flame-end"), endEntries, "live at the end", noSites);
  // Summary records prove a lower bound on the peak; the pools' own peaks added, an upper one.
  const peakBytes = (a.peak.exact ? "" : "at least ") + bytes(a.peak.bytes) +
                    (a.peak.at_most != null ? ", at most " + bytes(a.peak.at_most) : "");
  // What the peak's holders leave out of it is the summarised pools' share.
  let peakEntries = a.layout.live_at_peak.concat(belowTop);
  const heldAtPeak = peakEntries.reduce((sum, e) => sum + e.bytes, 0);
  if (!summariesOnly && summarised.length && a.peak.bytes > heldAtPeak)
    peakEntries = peakEntries.concat([{ pool: null, site: unknownSite, bytes: a.peak.bytes - heldAtPeak, count: null }]);
  const peakWhen = a.peak.inference == null ? ""
    : ", inference " + grouped(a.peak.inference) + (a.restarts.total ? " of boot " + grouped(a.peak.boot) : "");
  EM.flameGraph(document.getElementById("flame-peak"), peakEntries, "live at the peak (" + peakBytes + peakWhen + ")", noSites);

  // Sites: the leaking groups first (a group may be a site or, for unnamed
  // sites, a block size), then every site by live bytes.
  const siteBySite = new Map(a.sites.map((x) => [x.site, x]));
  const persistentBySite = new Map(a.persistent.map((p) => [p.site, p]));
  // A cut recording's groups grew up to the cut: listed, not judged leaks (the text's [LEAK?]).
  const leaksJudged = a.checks.leaks.status !== "not_checked";
  // Boots before a restart, judged as each went down: their leaking sites
  // are marked too (their blocks went with the reset, so they hold nothing
  // at the end), after the latest boot's.
  const earlier = new Map();  // site -> Map(boot -> its groups' bytes per inference there, added; null unknown)
  const earlierInPool = new Map();  // site + "\0" + pool -> the same, of that pool's group
  // Past the first 256 restarts the JSON keeps the worst boots only.
  const keptBoots = new Set(a.restarts.kept.map((x) => x.boot));
  const worst = [a.restarts.most_leaked, a.restarts.fastest_leak].filter((x) => x && !keptBoots.has(x.boot));
  if (worst.length === 2 && worst[0].boot === worst[1].boot) worst.pop();
  for (const r of a.restarts.kept.concat(worst).filter((x) => x.leak_check.status === "found"))
    for (const l of r.leaks) {  // one group per pool: a site leaking in two pools is one boot, at both rates
      for (const [map, key] of [[earlier, l.site], [earlierInPool, l.site + "\0" + l.pool]]) {
        if (!map.has(key)) map.set(key, new Map());
        const boots = map.get(key);
        const had = boots.has(r.boot) ? boots.get(r.boot) : null;
        boots.set(r.boot, l.bytes_per_inference == null ? had : (had || 0) + l.bytes_per_inference);
      }
    }
  // `pool`: of a row that names its pool (its rate there, not the site's in every pool).
  const inBoots = (site, pool) => {
    const boots = [...(pool != null ? earlierInPool.get(site + "\0" + pool) : earlier.get(site))];
    const shown = boots.slice(0, 5).map(([boot]) => grouped(boot)).join(", ") +
                  (boots.length > 5 ? " and " + grouped(boots.length - 5) + " more" : "");
    const rates = boots.map(([, rate]) => rate).filter((rate) => rate != null);
    const rate = rates.length ? Math.max(...rates) : null;
    return (boots.length > 1 ? "boots " : "boot ") + shown +
           (rate == null ? "" : " (" + (boots.length > 1 ? "up to " : "") + rateBytes(rate) + " per inference)");
  };
  // A site's row sums its pools; a leak group is of one pool: its bytes
  // allocated are the site's only where the site made no other allocation
  // (a site leaking in two pools showed both pools' bytes in each row).
  const groupsOfSite = new Map();
  for (const l of a.leaks) groupsOfSite.set(l.site, (groupsOfSite.get(l.site) || 0) + 1);
  const leakRows = a.leaks.map((l) => ({
    site: l.site, leak: true, allocs: l.allocs, frees: l.frees, live_bytes: l.bytes, live_count: l.count,
    alloc_bytes: siteBySite.has(l.site) && siteBySite.get(l.site).allocs === l.allocs ? siteBySite.get(l.site).alloc_bytes : null,
    finding: (leaksJudged ? "leak" : "leak? growing up to the cut, not judged") +
             (groupsOfSite.get(l.site) > 1 ? " in pool '" + l.pool + "'" : "") +
             (l.bytes_per_inference != null ? ", " + rateBytes(l.bytes_per_inference) + " per inference" : "") +
             (groupsOfSite.get(l.site) > 1
               ? (earlierInPool.has(l.site + "\0" + l.pool) ? "; also a leak in " + inBoots(l.site, l.pool) : "")
               : earlier.has(l.site) ? "; also a leak in " + inBoots(l.site) : "") }));
  const leakSites = new Set(a.leaks.map((l) => l.site));
  // A site past the listed ones (the first 1,000 by live bytes) is in the
  // summed row below: its own numbers are not known.
  const earlierRows = [...earlier.keys()].filter((site) => !leakSites.has(site)).map((site) => ({
    ...(siteBySite.get(site) || { site }), leak: true,
    finding: "leak in " + inBoots(site) + ", before the device started again" }));
  const siteRows = a.sites.filter((x) => !leakSites.has(x.site) && !earlier.has(x.site))
    .sort((x, y) => (y.live_bytes - x.live_bytes) || (y.alloc_bytes - x.alloc_bytes))
    .map((x) => ({ ...x, finding: persistentBySite.has(x.site) ? persistentBySite.get(x.site).reason.replace(/_/g, " ") : "" }));
  const body = document.querySelector("#sites tbody");
  const cell = (v, show) => el("td", "num", v == null ? "" : show(v));
  for (const r of leakRows.concat(earlierRows, siteRows)) {
    const tr = el("tr", r.leak ? "leak" : null);
    tr.append(el("td", "site", r.site), el("td", null, r.finding), cell(r.allocs, grouped), cell(r.frees, grouped),
              cell(r.allocs == null ? null : r.allocs - r.frees, grouped), cell(r.live_bytes, bytesHuman),
              cell(r.live_count, grouped), cell(r.alloc_bytes, bytesHuman));
    body.append(tr);
  }
  // What the JSON keeps of the boots before a restart bounds what is marked.
  if (a.restarts.leaking_boots && (a.restarts.dropped > 0 || a.restarts.kept.some((x) => x.leaking_groups > x.leaks.length)))
    document.getElementById("sites").after(el("p", "note",
      "Leaks of boots before a restart are marked from the first 256 restarts (and the worst boots after them), " +
      "16 leaking groups of each: " + EM.counted(a.restarts.leaking_boots, "boot") +
      " before the latest leaked in all (the findings above name them)."));
  if (summariesOnly) document.getElementById("sites").after(el("p", "note", "Summary records name no sites."));
  const omitted = a.sites_omitted;  // the analysis lists the first 1,000 sites and sums the rest
  if (omitted && omitted.count) {
    const tr = el("tr", "omitted");
    tr.append(el("td", "site", "(" + grouped(omitted.count) + " more sites, none holding more, summed)"),
              el("td", null, ""), el("td", "num", grouped(omitted.allocs)), el("td", "num", grouped(omitted.frees)),
              el("td", "num", grouped(omitted.allocs - omitted.frees)), el("td", "num", bytesHuman(omitted.live_bytes)),
              el("td", "num", grouped(omitted.live_count)), el("td", "num", bytesHuman(omitted.alloc_bytes)));
    body.append(tr);
  }

  // The per-thread split, when more than one thread made or freed a block;
  // a block is charged to the thread that made it.
  const threads = document.getElementById("threads");
  if (a.threads.filter((t) => t.allocs + t.frees > 0).length > 1) {
    threads.hidden = false;
    if (!leaksJudged)
      Array.from(threads.querySelectorAll("th")).find((th) => th.textContent === "Leaked").textContent = "In groups growing at the cut (not judged)";
    const tbody = threads.querySelector("tbody");
    for (const t of a.threads) {
      const tr = el("tr", t.leaked_bytes ? "leak" : null);
      tr.append(el("td", "num", t.other_threads ? "(other threads)" : String(t.tid)),
                el("td", null, (t.name || "") + (t.marks_inferences ? " (marks inferences)" : "")),
                el("td", "num", grouped(t.allocs)), el("td", "num", grouped(t.frees)),
                el("td", "num", bytesHuman(t.alloc_bytes)), el("td", "num", bytesHuman(t.peak_live_bytes)),
                el("td", "num", bytesHuman(t.live_bytes)), el("td", "num", bytesHuman(t.leaked_bytes)),
                el("td", "num", grouped(t.freed_by_other_threads) + " (" + bytes(t.freed_by_other_threads_bytes) + ")"),
                el("td", "num", grouped(t.frees_of_other_threads_blocks)));
      tbody.append(tr);
    }
    const x = a.cross_thread_frees;
    const name = (tid) => {
      const t = a.threads.find((u) => u.tid === tid);
      return String(tid) + (t && t.name ? " '" + t.name + "'" : "");
    };
    note(threads, x.count
      ? EM.counted(x.count, "block") + " (" + bytes(x.bytes) + ") made on one thread " + (x.count === 1 ? "was" : "were") + " freed on another" +
        (x.pairs.length ? "; most: " + grouped(x.pairs[0].count) + " made on " + name(x.pairs[0].from_tid) +
                          ", freed on " + name(x.pairs[0].to_tid) : "") + "."
      : "Every block was freed by the thread that made it.");
  }

  // Blocks freed by their thread right after they were made (heaptrack's temporary allocations).
  const temp = a.temporary_allocations;
  const temporaries = document.getElementById("temporaries");
  if (temp.count) {
    temporaries.hidden = false;
    const tbody = temporaries.querySelector("tbody");
    for (const s of temp.top_sites) {
      const tr = el("tr");
      tr.append(el("td", "site", s.site), el("td", "num", grouped(s.count)),
                el("td", "num", grouped(s.allocs)), el("td", "num", bytesHuman(s.bytes)));
      tbody.append(tr);
    }
    temporaries.querySelector("table").before(el("p", "note",
      grouped(temp.count) + " of " + grouped(temp.allocations) + " allocations (" + (100 * temp.share).toFixed(1) + "%, " +
      bytes(temp.bytes) + ") were freed by their thread with no allocation or free between; the sites with the most:"));
  }

  // Milliseconds from navigation to a drawn page (bench/html_report_bench.sh reads it).
  document.body.dataset.renderMs = Math.round(performance.now());
};
