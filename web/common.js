// What every report page shares: number formats that match the text reports
// (src/report/units.cc), element helpers and the findings cards. Every string
// from a trace, map or model reaches the page through textContent, an SVG
// text node's textContent or a canvas, never as markup, so a name cannot
// inject elements.
const EM = (function () {
  "use strict";
  const grouped = (n) => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const bytes = (n) => grouped(n) + " B";
  // "1 block", "2 blocks": a count and its noun, grouped as the text reports do.
  const counted = (n, noun) => grouped(n) + " " + noun + (Math.round(n) === 1 ? "" : "s");
  // n / unit with `digits` decimals, a tie rounded to even as the text
  // reports' fmt does (toFixed rounds 211.25 up to 211.3; fmt gives 211.2).
  const ratio = (n, unit, digits) => {
    const scale = 10 ** digits, scaled = n * scale;
    let q = Math.floor(scaled / unit);
    const twice = 2 * (scaled - q * unit);
    if (twice > unit || (twice === unit && q % 2 === 1)) q += 1;
    return (q / scale).toFixed(digits);
  };
  const bytesHuman = (n) => {
    if (n >= 1024 * 1024 * 1024) return bytes(n) + " (" + ratio(n, 1024 ** 3, 2) + " GiB)";
    if (n >= 1024 * 1024) return bytes(n) + " (" + ratio(n, 1024 ** 2, 2) + " MiB)";
    if (n >= 10 * 1024) return bytes(n) + " (" + ratio(n, 1024, 1) + " KiB)";
    return bytes(n);
  };
  const percent = (fraction) => (fraction * 100).toFixed(1) + " %";

  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  };
  const note = (parent, text) => parent.append(el("p", "note", text));

  // Findings as cards, worst first, in the order the text report prints
  // them: entries {tag, text, more[]} where tag "[LEAK]" etc. is a verdict
  // and a plain tag is a fact ("Input", "Peak", ...).
  const severity = { "[OVERFLOW]": "danger", "[GUARD]": "danger", "[ALLOC FAIL]": "danger", "[LEAK]": "danger",
                     "[DATA LOST]": "danger", "[SHORT]": "danger", "[DOES NOT FIT]": "danger", "[BROKEN]": "danger",
                     "[FRAGMENT]": "warning", "[GROWTH]": "warning", "[LIFO]": "warning", "[INCOMPLETE]": "warning", "[NOT CHECKED]": "warning",
                     "[SELF-CHECK FAILED]": "danger", "[MISMATCH]": "danger", "[OVERFLOWED]": "danger",
                     "[UNBOUNDED]": "warning", "[no call graph]": "warning",
                     "[OK]": "ok", "[FITS]": "ok", "[NO CHANGE]": "ok" };
  const findings = (entries, verdicts, facts) => {
    for (const entry of entries) {
      if (entry.tag.startsWith("[") || entry.tag === "") {
        // A fragmentation finding is as bad as its band.
        const level = entry.tag === "[FRAGMENT]" && /: danger \(/.test(entry.text) ? "danger" : severity[entry.tag];
        const card = el("div", "verdict " + (level || ""));
        const head = el("div");
        head.append(el("span", "tag", entry.tag.replace(/^\[|\]$/g, "")), el("span", null, entry.text));
        card.append(head);
        for (const line of entry.more) card.append(el("div", "more", line));
        verdicts.append(card);
      } else {
        facts.append(el("div", "key", entry.tag), el("div", null, [entry.text].concat(entry.more).join("\n")));
        facts.lastChild.style.whiteSpace = "pre-wrap";
      }
    }
  };

  const setTitle = (title, subtitle) => {
    document.getElementById("title").textContent = title;
    document.getElementById("subtitle").textContent = subtitle;
  };

  // uPlot's aligned data from series of [xs, ys] whose points may share an
  // x (a spike up and down at one time, a summary record's peak then its
  // use): each point keeps a slot of its own, where uPlot.join kept only the
  // last value at an x and a pool's 50,000 B spike was drawn flat at 0.
  // Slots a series has no point in are undefined, as uPlot.join leaves
  // them: bridged by spanGaps, and the legend shows the nearest point (null
  // would be a gap the legend shows as "--").
  const joinAll = (series) => {
    const slots = new Map();  // x -> how many points one series has there at most
    for (const [xs] of series) {
      const here = new Map();
      for (const x of xs) here.set(x, (here.get(x) || 0) + 1);
      for (const [x, n] of here) slots.set(x, Math.max(slots.get(x) || 0, n));
    }
    const xs = [...slots.keys()].sort((a, b) => a - b);
    const first = new Map();
    const out = [[]];
    for (const x of xs) {
      first.set(x, out[0].length);
      for (let k = 0; k < slots.get(x); ++k) out[0].push(x);
    }
    for (const [sx, sy] of series) {
      const ys = new Array(out[0].length).fill(undefined), used = new Map();
      sx.forEach((x, i) => {
        const k = used.get(x) || 0;
        used.set(x, k + 1);
        ys[first.get(x) + k] = sy[i];
      });
      out.push(ys);
    }
    return out;
  };
  // A trace's time axis: cycles of a known clock as seconds, else cycles or
  // events. A value keeps nanoseconds and ticks the decimals their spacing
  // needs: significant digits read "10 s" for every tick of a millisecond
  // capture whose clock started 10 s before it.
  const traceAxis = (a) => {
    const hz = a.input.time_base === "cycles" && a.clock_hz ? a.clock_hz : null;
    const label = hz ? "seconds" : a.input.time_base === "cycles" ? "cycles" : "event";
    const seconds = (v, places) => {
      const s = v.toFixed(places);
      return places > 0 ? s.replace(/\.?0+$/, "") : s;
    };
    return { label, toX: (t) => (hz ? t / hz : t),
             value: (u, v) => (v == null ? "--" : hz ? seconds(v, 9) + " s" : grouped(v)),
             ticks: (u, splits) => {
               if (!hz) return splits.map((v) => grouped(v));
               const step = splits.length > 1 ? Math.abs(splits[1] - splits[0]) : 0;
               const places = step > 0 ? Math.min(9, Math.max(0, Math.ceil(-Math.log10(step) - 1e-9))) : 3;
               return splits.map((v) => v.toFixed(places));
             } };
  };
  return { pages: {}, grouped, counted, bytes, bytesHuman, percent, el, note, findings, setTitle, joinAll, traceAxis };
})();
