// The heap/arena layout over time (doc.analysis.layout): one canvas per
// pool, offset up, time right, one rectangle per block from its alloc to its
// free (or the end), coloured by site. Blocks the analysis aggregated are
// drawn beneath as grey density (mean bytes occupied per cell). Wheel and
// drag zoom and pan (d3.zoom); a double click resets. The line under each
// chart describes the block under the pointer, and before any hover the
// largest block still live at the end, so what leaks is named at a glance.
EM.layoutChart = function (figure, layout, leakSites, axis) {
  "use strict";
  const { el, note, grouped, bytes } = EM;
  const drawnTotal = layout.pools.reduce((n, p) => n + p.blocks.length, 0);
  figure.dataset.blocksDrawn = drawnTotal;
  if (!layout.pools.length) {
    note(figure, "No allocations: nothing to lay out.");
    return;
  }
  const end = Math.max(layout.end_time, layout.start_time + 1);
  // In seconds where the clock is known, as the memory-over-time charts are.
  const timeName = axis.label;
  const when = (t) => (timeName === "seconds" ? axis.value(null, axis.toX(t)) : timeName + " " + grouped(t));
  const hex = (n) => "0x" + n.toString(16);

  // Colours: leaking sites first, then the sites covering the most of the
  // charts; past ten sites one grey, so colours stay tellable apart.
  const area = new Map();
  const blocksOf = new Map();
  for (const p of layout.pools)
    for (const b of p.blocks) {
      area.set(b[4], (area.get(b[4]) || 0) + b[1] * ((b[3] == null ? end : b[3]) - b[2] + 1));
      blocksOf.set(b[4], (blocksOf.get(b[4]) || 0) + 1);
    }
  const ranked = [...area.keys()].sort((x, y) =>
    (leakSites.has(layout.sites[y]) - leakSites.has(layout.sites[x])) || area.get(y) - area.get(x));
  const palette = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#bcbd22", "#393b79"];
  const other = "#aab2bb";
  const colour = new Map(ranked.map((s, i) => [s, i < palette.length ? palette[i] : other]));

  // Legend entries that would read alike (two stacks into one allocator
  // frame of a stripped binary) show their innermost frames as written,
  // more of them until they differ.
  const coloured = ranked.slice(0, palette.length);
  const label = new Map(coloured.map((s) => [s, layout.site_labels[s]]));
  for (let frames = 2; frames <= 8; ++frames) {
    const seen = new Map();
    for (const s of coloured) seen.set(label.get(s), (seen.get(label.get(s)) || 0) + 1);
    const alike = coloured.filter((s) => seen.get(label.get(s)) > 1);
    if (!alike.length) break;
    for (const s of alike) label.set(s, layout.sites[s].split(";").slice(-frames).join(";"));
  }
  const legend = el("ul", "layout-legend");
  coloured.forEach((s) => {
    const item = el("li");
    item.dataset.blocks = blocksOf.get(s);
    const swatch = el("i", "swatch");
    swatch.style.background = colour.get(s);
    item.append(swatch, el("span", "site", label.get(s)),
                el("span", "count", " " + EM.counted(blocksOf.get(s), "block")));
    legend.append(item);
  });
  if (ranked.length > palette.length) {
    const rest = ranked.slice(palette.length).reduce((n, s) => n + blocksOf.get(s), 0);
    const item = el("li");
    const swatch = el("i", "swatch");
    swatch.style.background = other;
    item.append(swatch, el("span", null, EM.grouped(ranked.length - palette.length) + " other sites, " + EM.counted(rest, "block")));
    legend.append(item);
  }
  figure.append(legend);

  for (const pool of layout.pools) drawPool(pool);

  // What was not drawn block by block, in words.
  const aggregated = layout.pools.reduce((n, p) => n + (p.raster ? p.raster.blocks : 0), 0);
  const aggregatedLive = layout.pools.reduce((n, p) => n + (p.raster ? p.raster.live_blocks : 0), 0);
  note(figure, aggregated === 0
    ? "Every one of the " + grouped(layout.blocks_seen) + " blocks is drawn."
    : "Drawn block by block: " + grouped(drawnTotal) + " of " + grouped(layout.blocks_seen) +
      " blocks (at most " + grouped(layout.block_cap) + ": every block live at the end first, then a sample weighted by size x lifetime). " +
      "The other " + grouped(aggregated) + (aggregatedLive ? " (" + grouped(aggregatedLive) + " of them live at the end)" : "") +
      " are the grey density: mean bytes they occupied per cell.");

  function drawPool(pool) {
    const box = el("div", "layout-pool");
    const bands = bandsOf(pool);
    const split = bands.length > 1;
    const W = 1080, m = { left: 84, right: 12, top: 8, bottom: 34 }, gap = 16, minBand = 40;
    const H = Math.max(300, m.top + m.bottom + bands.length * (minBand + gap));
    const canvas = el("canvas");
    canvas.dataset.blocks = pool.blocks.length;
    canvas.dataset.bands = bands.length;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = W * dpr;
    canvas.height = H * dpr;
    canvas.style.width = W + "px";
    canvas.style.height = H + "px";
    const detail = el("div", "layout-detail");
    const title = el("div", "layout-title", "'" + pool.pool + "' (" + pool.kind + ")" +
      (split ? ", " + bands.length + " address regions far apart, each in a band of its own, offsets from its start"
             : pool.kind === "heap" ? ", offsets from " + hex(pool.origin) : ", arena offsets") +
      (pool.size ? ", " + bytes(pool.size) : ""));
    box.append(title, canvas, detail);
    figure.append(box);

    // Each band gets a height growing with the square root of its span, so a
    // 100 KiB brk heap stays visible beside 60 MiB of mmap chunks.
    const plotBottom = H - m.bottom, room = H - m.top - m.bottom - gap * (bands.length - 1);
    const weight = bands.map((b) => Math.sqrt(b.hi - b.lo));
    const weights = weight.reduce((a, w) => a + w, 0);
    let floor = plotBottom;
    bands.forEach((b, i) => {
      const h = split ? minBand + (room - minBand * bands.length) * weight[i] / weights : room;
      b.y0 = floor;  // pixel of b.lo
      b.y1 = floor - h;  // pixel of b.hi
      floor = b.y1 - gap;
    });
    const bandOf = (offset) => {
      for (const b of bands) if (offset <= b.hi) return b;
      return bands[bands.length - 1];
    };
    // Offset -> pixel before zoom, and back (null in a gap between bands).
    const y = (v) => {
      const b = bandOf(v);
      return b.y0 + (Math.min(Math.max(v, b.lo), b.hi) - b.lo) / (b.hi - b.lo) * (b.y1 - b.y0);
    };
    const yInvert = (p) => {
      for (const b of bands)
        if (p <= b.y0 && p >= b.y1) return b.lo + (p - b.y0) / (b.y1 - b.y0) * (b.hi - b.lo);
      return null;
    };
    const x = d3.scaleLinear().domain([layout.start_time, end]).range([m.left, W - m.right]);
    let zx = x, zoomY = d3.zoomIdentity;
    const zy = (v) => zoomY.applyY(y(v));
    const zyInvert = (p) => yInvert(zoomY.invertY(p));

    // Blocks grouped by colour: one fillStyle per group.
    const byColour = new Map();
    for (const b of pool.blocks) {
      const c = colour.get(b[4]);
      if (!byColour.has(c)) byColour.set(c, []);
      byColour.get(c).push(b);
    }
    const groups = [...byColour.entries()].sort((p, q) => (p[0] === other ? -1 : q[0] === other ? 1 : 0));
    const rasters = bands.flatMap((b) => b.rasters);
    let cellMax = 0;
    for (const r of rasters) for (const v of r.bytes) cellMax = Math.max(cellMax, v);
    const sized = (n) => {
      for (const [unit, k] of [["TiB", 2 ** 40], ["GiB", 2 ** 30], ["MiB", 2 ** 20], ["KiB", 1024]])
        if (n >= k) return +(n / k).toFixed(n % k ? 1 : 0) + " " + unit;
      return n + " B";
    };

    const ctx = canvas.getContext("2d");
    const draw = () => {
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, W, H);
      ctx.save();
      ctx.beginPath();
      ctx.rect(m.left, m.top, W - m.left - m.right, H - m.top - m.bottom);
      ctx.clip();
      ctx.fillStyle = "#fafbfc";
      ctx.fillRect(m.left, m.top, W - m.left - m.right, H - m.top - m.bottom);
      if (cellMax > 0)
        for (const r of rasters)
          for (let t = 0; t < r.times; ++t) {
            const x0 = zx(r.time0 + t * r.time_step), x1 = zx(r.time0 + (t + 1) * r.time_step);
            if (x1 < m.left || x0 > W - m.right) continue;
            for (let o = 0; o < r.offsets; ++o) {
              const v = r.bytes[t * r.offsets + o];
              if (!v) continue;
              const y1 = zy(r.offset0 + o * r.offset_step), y0 = zy(r.offset0 + (o + 1) * r.offset_step);
              ctx.fillStyle = "rgba(91,100,112," + (0.15 + 0.75 * Math.min(1, v / r.offset_step)).toFixed(3) + ")";
              ctx.fillRect(x0, y0, Math.max(1, x1 - x0), Math.max(1, y1 - y0));
            }
          }
      for (const [c, blocks] of groups) {
        ctx.fillStyle = c;
        for (const b of blocks) {
          const x0 = zx(b[2]), x1 = zx(b[3] == null ? end : b[3]);
          if (x1 < m.left || x0 > W - m.right) continue;
          const y0 = zy(b[0] + b[1]), y1 = zy(b[0]);
          ctx.fillRect(x0, y0, Math.max(1, x1 - x0), Math.max(1, y1 - y0));
        }
      }
      if (pool.size && !split && pool.size <= bands[0].hi) {
        ctx.strokeStyle = "#5b6470";
        ctx.setLineDash([4, 4]);
        ctx.beginPath();
        ctx.moveTo(m.left, zy(pool.size));
        ctx.lineTo(W - m.right, zy(pool.size));
        ctx.stroke();
        ctx.setLineDash([]);
      }
      // The gaps between bands: addresses no block of this pool touched.
      ctx.font = "10px system-ui, sans-serif";
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      for (let i = 1; i < bands.length; ++i) {
        const below = bands[i - 1], above = bands[i];
        const g0 = zoomY.applyY(below.y1), g1 = zoomY.applyY(above.y0);
        ctx.fillStyle = "#e4e7eb";
        ctx.fillRect(m.left, g1, W - m.left - m.right, g0 - g1);
        ctx.fillStyle = "#5b6470";
        ctx.fillText(sized(above.lo - below.hi) + " of addresses without blocks", (m.left + W - m.right) / 2, (g0 + g1) / 2);
      }
      if (split) {
        ctx.textAlign = "left";
        ctx.textBaseline = "top";
        for (const b of bands) {
          const label = (pool.kind === "heap" ? hex(pool.origin + b.lo) : "offset " + grouped(b.lo)) + " (" + sized(b.hi - b.lo) + ")";
          ctx.fillStyle = "rgba(255,255,255,0.85)";
          ctx.fillRect(m.left + 2, zoomY.applyY(b.y1) + 1, ctx.measureText(label).width + 4, 13);
          ctx.fillStyle = "#3b434c";
          ctx.fillText(label, m.left + 4, zoomY.applyY(b.y1) + 2);
        }
      }
      ctx.restore();
      // Axes.
      ctx.fillStyle = "#3b434c";
      ctx.strokeStyle = "#8a939e";
      ctx.font = "11px system-ui, sans-serif";
      ctx.textAlign = "center";
      ctx.textBaseline = "top";
      // Ticks at round values of the axis' own unit.
      const sx = d3.scaleLinear().domain(zx.domain().map(axis.toX)).range(zx.range());
      const ticks = sx.ticks(8), labels = axis.ticks(null, ticks);
      ticks.forEach((v, i) => {
        ctx.fillRect(sx(v), H - m.bottom, 1, 4);
        ctx.fillText(labels[i], sx(v), H - m.bottom + 6);
      });
      ctx.fillText(timeName, (m.left + W - m.right) / 2, H - 13);
      ctx.textAlign = "right";
      ctx.textBaseline = "middle";
      for (const b of bands) {
        // Ticks over the part of the band in view (zoomed, it may be a sliver).
        const p0 = zoomY.applyY(b.y0), p1 = zoomY.applyY(b.y1), q0 = Math.min(p0, H - m.bottom), q1 = Math.max(p1, m.top);
        if (q0 - q1 < 1) continue;
        // A band's ticks count bytes from its start in KiB or MiB, so they read 64 KiB, not 65.5 KiB.
        const base = split ? b.lo : 0;
        const [unit, unitName] = !split ? [1, ""] : b.hi - b.lo >= 2 * 2 ** 20 ? [2 ** 20, " MiB"]
                                 : b.hi - b.lo >= 2 * 1024 ? [1024, " KiB"] : [1, " B"];
        const whole = d3.scaleLinear().domain([(b.lo - base) / unit, (b.hi - base) / unit]).range([p0, p1]);
        const shown = d3.scaleLinear().domain([whole.invert(q0), whole.invert(q1)]).range([q0, q1]);
        for (const tick of shown.ticks(Math.max(2, Math.min(6, Math.floor((q0 - q1) / 40))))) {
          const p = shown(tick), o = tick * unit;
          if (!Number.isInteger(o)) continue;
          ctx.fillRect(m.left - 4, p, 4, 1);
          ctx.fillText(split ? +tick.toPrecision(6) + unitName : grouped(o), m.left - 6, p);
        }
      }
      ctx.save();
      ctx.translate(12, (m.top + H - m.bottom) / 2);
      ctx.rotate(-Math.PI / 2);
      ctx.textAlign = "center";
      ctx.fillText(split ? "offset in its region" : "offset (B)", 0, 0);
      ctx.restore();
      ctx.strokeRect(m.left + 0.5, m.top + 0.5, W - m.left - m.right, H - m.top - m.bottom);
    };

    const describe = (b) => {
      const freed = b[3] == null ? "live at the end" : "freed at " + when(b[3]);
      return [layout.sites[b[4]],
              bytes(b[1]) + " at offset " + grouped(b[0]) + (pool.kind === "heap" ? " (" + hex(pool.origin + b[0]) + ")" : ""),
              "allocated at " + when(b[2]) + ", " + freed];
    };
    // heading: a line above the block's (or null); a block's first line is its site.
    const show = (heading, lines, site) => {
      detail.textContent = "";
      if (heading) detail.append(el("div", null, heading));
      lines.forEach((line, i) => detail.append(el("div", site && i === 0 ? "site" : null, line)));
    };
    // Before any hover: the largest block live at the end, else the largest drawn.
    let first = null;
    for (const b of pool.blocks)
      if (!first || (b[3] == null) > (first[3] == null) || ((b[3] == null) === (first[3] == null) && b[1] > first[1])) first = b;
    const rest = () => (first ? show("Largest " + (first[3] == null ? "block live at the end" : "block") + ":", describe(first), true)
                              : show(null, ["Every block of this pool is in the grey density."], false));
    rest();

    const hit = (px, py) => {
      for (let i = pool.blocks.length - 1; i >= 0; --i) {
        const b = pool.blocks[i];
        const x0 = zx(b[2]), x1 = Math.max(x0 + 1, zx(b[3] == null ? end : b[3]));
        const y0 = zy(b[0] + b[1]), y1 = Math.max(y0 + 1, zy(b[0]));
        if (px >= x0 - 1 && px <= x1 + 1 && py >= y0 - 1 && py <= y1 + 1) return b;
      }
      return null;
    };
    canvas.addEventListener("mousemove", (e) => {
      const rect = canvas.getBoundingClientRect();
      const px = e.clientX - rect.left, py = e.clientY - rect.top;
      const b = hit(px, py);
      if (b) return show(null, describe(b), true);
      const offset = zyInvert(py);
      for (const r of offset == null ? [] : rasters) {
        const t = Math.floor((zx.invert(px) - r.time0) / r.time_step), o = Math.floor((offset - r.offset0) / r.offset_step);
        if (t >= 0 && t < r.times && o >= 0 && o < r.offsets && r.bytes[t * r.offsets + o])
          return show("Aggregated blocks:", [bytes(r.bytes[t * r.offsets + o]) + " of " + bytes(r.offset_step) + " occupied on average",
                       "offsets " + grouped(r.offset0 + o * r.offset_step) + "-" + grouped(r.offset0 + (o + 1) * r.offset_step) +
                       ", " + when(r.time0 + t * r.time_step) + " to " + when(r.time0 + (t + 1) * r.time_step)], false);
      }
      rest();
    });
    canvas.addEventListener("mouseleave", rest);

    const zoom = d3.zoom().scaleExtent([1, 1e7])
      .extent([[m.left, m.top], [W - m.right, H - m.bottom]])
      .translateExtent([[m.left, m.top], [W - m.right, H - m.bottom]])
      .on("zoom", (e) => {
        zx = e.transform.rescaleX(x);
        zoomY = e.transform;
        draw();
      });
    d3.select(canvas).call(zoom).on("dblclick.zoom", () => d3.select(canvas).call(zoom.transform, d3.zoomIdentity));
    draw();
  }

  // The pool's address bands, lowest first: {lo, hi, rasters}. One for the
  // whole pool, or one per region when its blocks lie far apart (regions
  // closer than a quarter of their joint span share a band).
  function bandsOf(pool) {
    const rasterSpan = (r) => [r.offset0, r.offset0 + r.offsets * r.offset_step];
    if (!pool.regions) {
      let top = 1;
      for (const b of pool.blocks) top = Math.max(top, b[0] + b[1]);
      const r = pool.raster;
      if (r) top = Math.max(top, rasterSpan(r)[1]);
      if (pool.size && pool.size <= 2 * top) top = Math.max(top, pool.size);
      return [{ lo: r ? Math.min(0, r.offset0) : 0, hi: top, rasters: r ? [r] : [] }];
    }
    const bands = [];
    for (const g of pool.regions) {
      const band = { lo: g.offset, hi: Math.max(g.end, g.offset + 1), rasters: g.raster ? [g.raster] : [] };
      if (g.raster) [band.lo, band.hi] = [Math.min(band.lo, rasterSpan(g.raster)[0]), Math.max(band.hi, rasterSpan(g.raster)[1])];
      const last = bands[bands.length - 1];
      if (last && band.lo - last.hi <= (band.hi - last.lo) / 4) {
        last.hi = Math.max(last.hi, band.hi);
        last.rasters.push(...band.rasters);
      } else {
        bands.push(band);
      }
    }
    return bands;
  }
};
