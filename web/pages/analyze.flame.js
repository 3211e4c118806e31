// Flame graphs (d3-flame-graph) of what is live at one moment: the root is
// the moment, then one frame per pool (none for an entry of no pool), then the site's frames (a site may be
// a call stack, frames joined by ";" from the root), widths in bytes. Labels
// are d3 text nodes; the library's HTML tooltip is not installed.
// `empty`: what to say when there are no entries (by default, that nothing was live).
EM.flameGraph = function (figure, entries, rootName, empty) {
  "use strict";
  const { note, bytesHuman, grouped } = EM;
  if (!entries.length) {
    note(figure, empty || "Nothing was live.");
    figure.dataset.frames = 0;
    return;
  }
  let frames = 1;
  // `unknown`: some of its bytes are in blocks not counted (an entry's count null: summary records).
  const node = (name) => ({ name, value: 0, blocks: 0, unknown: false, children: [], index: new Map() });
  const child = (parent, name) => {
    let c = parent.index.get(name);
    if (!c) {
      c = node(name);
      parent.index.set(name, c);
      parent.children.push(c);
      ++frames;
    }
    return c;
  };
  const root = node(rootName);
  for (const e of entries) {
    const path = e.pool == null ? [root] : [root, child(root, "pool " + e.pool)];
    for (const frame of e.site.split(";")) path.push(child(path[path.length - 1], frame));
    for (const n of path) {
      n.value += e.bytes;
      if (e.count == null) n.unknown = true;
      else n.blocks += e.count;
    }
  }
  figure.dataset.frames = frames;
  figure.dataset.bytes = root.value;
  const chart = flamegraph.default()
    .width(1080)
    .cellHeight(20)
    .minFrameSize(1)
    .transitionDuration(0)
    .sort(true)
    .label((d) => d.data.name + ": " + bytesHuman(d.data.value) + " in " +
      (!d.data.unknown ? EM.counted(d.data.blocks, "block")
       : d.data.blocks ? EM.counted(d.data.blocks, "block") + " and blocks not known" : "blocks not known"));
  const box = document.createElement("div");
  figure.append(box);
  d3.select(box).datum(root).call(chart);
  note(figure, "Width: live bytes. Click a frame to zoom into it, the bottom frame to zoom out.");
};
