#include "plan/reorder.h"

#include <algorithm>
#include <unordered_map>

#include "plan/lifetimes.h"

namespace edgemem::plan {
namespace {

struct Graph {
  size_t ops = 0;
  std::vector<uint64_t> bytes;                // per tensor, aligned; 0 = not planned
  std::vector<std::vector<int32_t>> writes;   // per op: planned tensors it produces
  std::vector<std::vector<int32_t>> reads;    // per op: planned tensors it consumes
  std::vector<std::vector<size_t>> deps;      // per op: ops that must run first
  std::vector<uint32_t> readers;              // per tensor: ops reading it
  std::vector<bool> output;                   // graph outputs live to the end
  uint64_t initial = 0;                       // live before the first op
};

Graph build(const TfliteModel& m) {
  Graph g;
  g.ops = m.ops.size();
  g.bytes.assign(m.tensors.size(), 0);
  for (const PlanBuffer& b : planned_buffers(m)) g.bytes[static_cast<size_t>(b.tensor)] = b.bytes;
  g.readers.assign(m.tensors.size(), 0);
  g.output.assign(m.tensors.size(), false);
  for (int32_t t : m.outputs) g.output[static_cast<size_t>(t)] = true;
  std::vector<int32_t> producer(m.tensors.size(), -1);
  g.writes.resize(g.ops);
  g.reads.resize(g.ops);
  g.deps.resize(g.ops);
  for (size_t i = 0; i < g.ops; ++i)
    for (int32_t t : m.ops[i].outputs)
      if (t >= 0) {
        producer[static_cast<size_t>(t)] = static_cast<int32_t>(i);
        if (g.bytes[static_cast<size_t>(t)]) g.writes[i].push_back(t);
      }
  for (size_t i = 0; i < g.ops; ++i)
    for (int32_t t : m.ops[i].inputs) {
      if (t < 0) continue;
      if (producer[static_cast<size_t>(t)] >= 0 && producer[static_cast<size_t>(t)] != static_cast<int32_t>(i))
        g.deps[i].push_back(static_cast<size_t>(producer[static_cast<size_t>(t)]));
      if (g.bytes[static_cast<size_t>(t)]) {
        g.reads[i].push_back(t);
        ++g.readers[static_cast<size_t>(t)];
      }
    }
  // Graph inputs and tensors nobody writes are live from the start.
  for (size_t t = 0; t < m.tensors.size(); ++t)
    if (g.bytes[t] && producer[t] < 0) g.initial += g.bytes[t];
  return g;
}

// Runs `order` and returns the peak of live bytes (an op's outputs are
// allocated while its inputs are still live).
uint64_t peak_of(const Graph& g, const std::vector<int32_t>& order) {
  std::vector<uint32_t> left = g.readers;
  uint64_t live = g.initial, peak = live;
  for (int32_t op : order) {
    for (int32_t t : g.writes[static_cast<size_t>(op)]) live += g.bytes[static_cast<size_t>(t)];
    peak = std::max(peak, live);
    for (int32_t t : g.reads[static_cast<size_t>(op)])
      if (--left[static_cast<size_t>(t)] == 0 && !g.output[static_cast<size_t>(t)]) live -= g.bytes[static_cast<size_t>(t)];
    for (int32_t t : g.writes[static_cast<size_t>(op)])
      if (left[static_cast<size_t>(t)] == 0 && !g.output[static_cast<size_t>(t)]) live -= g.bytes[static_cast<size_t>(t)];
  }
  return peak;
}

using Set = std::vector<uint64_t>;  // executed operators, one bit each

struct SetHash {
  size_t operator()(const Set& s) const {
    size_t h = 0;
    for (uint64_t w : s) h = h * 0x9E3779B97F4A7C15ull + w;
    return h;
  }
};

bool has(const Set& s, size_t i) { return (s[i / 64] >> (i % 64)) & 1; }

struct State {
  uint64_t peak = 0;       // best peak reaching this set
  uint64_t live = 0;       // live bytes after executing the set (same for every order)
  Set from;                // predecessor set on the best path
  int32_t op = -1;         // operator that led here
};

std::vector<int32_t> greedy_order(const Graph& g) {
  // Run the ready operator that leaves the fewest bytes live.
  std::vector<int32_t> order;
  std::vector<bool> done(g.ops, false);
  std::vector<uint32_t> left = g.readers;
  for (size_t step = 0; step < g.ops; ++step) {
    int32_t best = -1;
    int64_t best_delta = 0;
    for (size_t o = 0; o < g.ops; ++o) {
      if (done[o] || !std::all_of(g.deps[o].begin(), g.deps[o].end(), [&](size_t d) { return done[d]; })) continue;
      int64_t delta = 0;
      for (int32_t t : g.writes[o]) delta += static_cast<int64_t>(g.bytes[static_cast<size_t>(t)]);
      for (int32_t t : g.reads[o])
        if (left[static_cast<size_t>(t)] == 1 && !g.output[static_cast<size_t>(t)]) delta -= static_cast<int64_t>(g.bytes[static_cast<size_t>(t)]);
      if (best < 0 || delta < best_delta) {
        best = static_cast<int32_t>(o);
        best_delta = delta;
      }
    }
    done[static_cast<size_t>(best)] = true;
    for (int32_t t : g.reads[static_cast<size_t>(best)]) --left[static_cast<size_t>(t)];
    order.push_back(best);
  }
  return order;
}

}  // namespace

ReorderResult best_operator_order(const TfliteModel& model, size_t max_states) {
  Graph g = build(model);
  ReorderResult r;
  std::vector<int32_t> original(g.ops);
  for (size_t i = 0; i < g.ops; ++i) original[i] = static_cast<int32_t>(i);
  r.original_peak_bytes = peak_of(g, original);

  // Dynamic program, layer by layer (sets of k executed operators).
  const size_t words = (g.ops + 63) / 64;
  std::unordered_map<Set, State, SetHash> layer, all;
  Set empty(words, 0);
  layer.emplace(empty, State{g.initial, g.initial, {}, -1});
  all.emplace(empty, layer.at(empty));
  for (size_t k = 0; k < g.ops && r.exhaustive; ++k) {
    std::unordered_map<Set, State, SetHash> next;
    for (const auto& entry : layer) {
      const Set& set = entry.first;  // named, not bound: lambdas below capture it
      const State& st = entry.second;
      for (size_t o = 0; o < g.ops; ++o) {
        if (has(set, o) || !std::all_of(g.deps[o].begin(), g.deps[o].end(), [&](size_t d) { return has(set, d); }))
          continue;
        uint64_t live = st.live, outs = 0;
        for (int32_t t : g.writes[o]) outs += g.bytes[static_cast<size_t>(t)];
        uint64_t peak = std::max(st.peak, live + outs);
        live += outs;
        Set after = set;
        after[o / 64] |= uint64_t{1} << (o % 64);
        // A tensor dies once every reader has run.
        auto dead = [&](int32_t t) {
          if (g.output[static_cast<size_t>(t)]) return false;
          for (size_t p = 0; p < g.ops; ++p)
            if (!has(after, p) && std::count(g.reads[p].begin(), g.reads[p].end(), t)) return false;
          return true;
        };
        for (int32_t t : g.reads[o])
          if (dead(t)) live -= g.bytes[static_cast<size_t>(t)];
        for (int32_t t : g.writes[o])
          if (dead(t)) live -= g.bytes[static_cast<size_t>(t)];
        auto [it, inserted] = next.try_emplace(after, State{peak, live, set, static_cast<int32_t>(o)});
        if (!inserted && peak < it->second.peak) it->second = State{peak, live, set, static_cast<int32_t>(o)};
      }
    }
    for (const auto& [set, st] : next) all[set] = st;
    layer = std::move(next);
    if (all.size() > max_states) r.exhaustive = false;
  }
  if (r.exhaustive && layer.size() == 1) {
    // Walk back from the full set.
    Set at = layer.begin()->first;
    r.peak_bytes = layer.begin()->second.peak;
    while (all.at(at).op >= 0) {
      r.order.push_back(all.at(at).op);
      at = all.at(at).from;
    }
    std::reverse(r.order.begin(), r.order.end());
  } else {
    r.exhaustive = false;
    r.order = greedy_order(g);
    r.peak_bytes = peak_of(g, r.order);
    if (r.peak_bytes > r.original_peak_bytes) {  // never recommend a worse order
      r.order = original;
      r.peak_bytes = r.original_peak_bytes;
    }
  }
  return r;
}

TfliteModel with_operator_order(const TfliteModel& model, const std::vector<int32_t>& order) {
  TfliteModel out = model;
  out.ops.clear();
  for (int32_t i : order) out.ops.push_back(model.ops[static_cast<size_t>(i)]);
  return out;
}

}  // namespace edgemem::plan
