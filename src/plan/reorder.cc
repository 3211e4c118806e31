#include "plan/reorder.h"

#include <algorithm>
#include <unordered_map>

#include "plan/lifetimes.h"
#include "plan/planners.h"

namespace edgemem::plan {
namespace {

using Set = std::vector<uint64_t>;  // executed operators, one bit each

struct SetHash {
  size_t operator()(const Set& s) const {
    size_t h = 0;
    for (uint64_t w : s) h = h * 0x9E3779B97F4A7C15ull + w;
    return h;
  }
};

bool has(const Set& s, size_t i) { return (s[i / 64] >> (i % 64)) & 1; }

// The planned tensors under the lifetime rules of planned_buffers(), seen
// from the set of operators executed so far: with operator o run next, at
// scope |S| + 1, a tensor is live when it has been created (a graph input, a
// tensor nobody writes that is not a graph output, or one an operator in
// S + o writes: its FIRST writer dates it) and is still needed (a graph
// output, or an operator not in S reads or writes it). A graph output no
// operator writes is created at the last scope. So an operator's inputs and
// outputs are live together, as the lower bound counts them.
struct Graph {
  size_t ops = 0;
  struct Tensor {
    uint64_t bytes = 0;
    bool input = false, output = false;
    std::vector<size_t> writers, touchers;  // touchers: operators reading or writing it
  };
  std::vector<Tensor> tensors;                  // planned tensors only
  std::vector<std::vector<size_t>> touches;     // per op: planned tensors it reads or writes
  std::vector<std::vector<size_t>> deps;        // per op: ops that must run first
  uint64_t start_peak = 0;                      // live before the first op (scopes -1 and 0)
  uint64_t start_live = 0;                      // of that, what is still live at scope 1 whatever the order
  uint64_t end_only = 0;                        // graph outputs nobody writes: live at the last scope only
};

bool base_created(const Graph::Tensor& t) { return t.input || (t.writers.empty() && !t.output); }

Graph build(const TfliteModel& m) {
  Graph g;
  g.ops = m.ops.size();
  std::vector<int32_t> index(m.tensors.size(), -1);
  const std::vector<PlanBuffer> planned = planned_buffers(m);
  uint64_t at_minus_one = 0, at_zero = 0;
  for (const PlanBuffer& b : planned) {
    index[static_cast<size_t>(b.tensor)] = static_cast<int32_t>(g.tensors.size());
    g.tensors.push_back({b.bytes, false, false, {}, {}});
    if (b.first <= -1 && b.last >= -1) at_minus_one += b.bytes;
    if (b.first <= 0 && b.last >= 0) at_zero += b.bytes;
  }
  g.start_peak = std::max(at_minus_one, at_zero);
  for (int32_t t : m.inputs)
    if (index[static_cast<size_t>(t)] >= 0) g.tensors[static_cast<size_t>(index[static_cast<size_t>(t)])].input = true;
  for (int32_t t : m.outputs)
    if (index[static_cast<size_t>(t)] >= 0) g.tensors[static_cast<size_t>(index[static_cast<size_t>(t)])].output = true;
  g.touches.resize(g.ops);
  g.deps.resize(g.ops);
  // Every tensor's writers and readers, in the model's order.
  std::vector<std::vector<size_t>> writers(m.tensors.size()), touchers(m.tensors.size());
  for (size_t i = 0; i < g.ops; ++i) {
    for (int32_t t : m.ops[i].outputs)
      if (t >= 0) writers[static_cast<size_t>(t)].push_back(i);
    for (const auto* list : {&m.ops[i].inputs, &m.ops[i].outputs})
      for (int32_t t : *list)
        if (t >= 0 && (touchers[static_cast<size_t>(t)].empty() || touchers[static_cast<size_t>(t)].back() != i))
          touchers[static_cast<size_t>(t)].push_back(i);
  }
  for (size_t t = 0; t < m.tensors.size(); ++t) {
    // A reader runs after the tensor's writer. A tensor written more than
    // once (or in place), or read before it is written, keeps every operator
    // touching it in the model's order, or a reader could see another value.
    if (writers[t].size() > 1 || (writers[t].size() == 1 && touchers[t].front() != writers[t].front())) {
      for (size_t k = 1; k < touchers[t].size(); ++k) g.deps[touchers[t][k]].push_back(touchers[t][k - 1]);
    } else if (writers[t].size() == 1) {
      for (size_t op : touchers[t])
        if (op != writers[t][0]) g.deps[op].push_back(writers[t][0]);
    }
    if (index[t] < 0) continue;
    Graph::Tensor& tensor = g.tensors[static_cast<size_t>(index[t])];
    tensor.writers = writers[t];
    tensor.touchers = touchers[t];
    for (size_t op : touchers[t]) g.touches[op].push_back(static_cast<size_t>(index[t]));
  }
  for (const Graph::Tensor& t : g.tensors) {
    if (base_created(t) && (t.output || !t.touchers.empty())) g.start_live += t.bytes;
    if (!t.input && t.writers.empty() && t.output) g.end_only += t.bytes;
  }
  return g;
}

bool any_in(const std::vector<size_t>& ops, const Set& s) {
  return std::any_of(ops.begin(), ops.end(), [&](size_t o) { return has(s, o); });
}
bool all_in(const std::vector<size_t>& ops, const Set& s) {
  return std::all_of(ops.begin(), ops.end(), [&](size_t o) { return has(s, o); });
}

// Running `o` after the set `done` whose live bytes (created and still
// needed at the next scope) are `live`: the bytes live while o runs, and
// those still live after it.
struct Step {
  uint64_t during = 0, after = 0;
};
Step step(const Graph& g, const Set& done, uint64_t live, size_t o) {
  Set with = done;
  with[o / 64] |= uint64_t{1} << (o % 64);
  uint64_t created = 0, dying = 0;
  for (size_t t : g.touches[o]) {
    const Graph::Tensor& tensor = g.tensors[t];
    const bool was_live = base_created(tensor) || any_in(tensor.writers, done);
    const bool now_live = base_created(tensor) || any_in(tensor.writers, with);
    if (!was_live && now_live) created += tensor.bytes;
    if (now_live && !tensor.output && all_in(tensor.touchers, with)) dying += tensor.bytes;
  }
  Step s;
  s.during = live + created;
  bool last = true;
  for (size_t i = 0; i < g.ops && last; ++i) last = has(with, i);
  if (last) s.during += g.end_only;
  s.after = live + created - dying;
  return s;
}

bool ready(const Graph& g, const Set& done, size_t o) { return !has(done, o) && all_in(g.deps[o], done); }

struct State {
  uint64_t peak = 0;  // best peak reaching this set
  uint64_t live = 0;  // live bytes after executing the set (the same for every order)
  Set from;           // predecessor set on the best path
  int32_t op = -1;    // operator that led here
};

std::vector<int32_t> greedy_order(const Graph& g) {
  // Run the ready operator that leaves the fewest bytes live.
  std::vector<int32_t> order;
  Set done((g.ops + 63) / 64, 0);
  uint64_t live = g.start_live;
  for (size_t k = 0; k < g.ops; ++k) {
    int32_t best = -1;
    Step best_step;
    for (size_t o = 0; o < g.ops; ++o) {
      if (!ready(g, done, o)) continue;
      Step s = step(g, done, live, o);
      if (best < 0 || s.after < best_step.after) {
        best = static_cast<int32_t>(o);
        best_step = s;
      }
    }
    if (best < 0) break;  // a cycle: cannot happen in a valid model
    done[static_cast<size_t>(best) / 64] |= uint64_t{1} << (static_cast<size_t>(best) % 64);
    live = best_step.after;
    order.push_back(best);
  }
  return order;
}

// The bound of an order, as plan reports it: the lower bound of the model
// run in that order.
uint64_t peak_of(const TfliteModel& m, const std::vector<int32_t>& order) {
  return lower_bound(planner_input(planned_buffers(with_operator_order(m, order))));
}

}  // namespace

ReorderResult best_operator_order(const TfliteModel& model, size_t max_states) {
  Graph g = build(model);
  ReorderResult r;
  std::vector<int32_t> original(g.ops);
  for (size_t i = 0; i < g.ops; ++i) original[i] = static_cast<int32_t>(i);
  r.original_peak_bytes = peak_of(model, original);

  // Dynamic program, layer by layer (sets of k executed operators).
  const size_t words = (g.ops + 63) / 64;
  std::unordered_map<Set, State, SetHash> layer, all;
  Set empty(words, 0);
  layer.emplace(empty, State{g.start_peak, g.start_live, {}, -1});
  all.emplace(empty, layer.at(empty));
  for (size_t k = 0; k < g.ops && r.exhaustive; ++k) {
    std::unordered_map<Set, State, SetHash> next;
    for (const auto& [set, st] : layer) {
      for (size_t o = 0; o < g.ops; ++o) {
        if (!ready(g, set, o)) continue;
        Step s = step(g, set, st.live, o);
        const uint64_t peak = std::max(st.peak, s.during);
        Set after = set;
        after[o / 64] |= uint64_t{1} << (o % 64);
        auto [it, inserted] = next.try_emplace(after, State{peak, s.after, set, static_cast<int32_t>(o)});
        if (!inserted && peak < it->second.peak) it->second = State{peak, s.after, set, static_cast<int32_t>(o)};
      }
    }
    for (const auto& [set, st] : next) all[set] = st;
    layer = std::move(next);
    if (all.size() > max_states) r.exhaustive = false;
  }
  if (r.exhaustive && layer.size() == 1) {
    // Walk back from the full set.
    Set at = layer.begin()->first;
    while (all.at(at).op >= 0) {
      r.order.push_back(all.at(at).op);
      at = all.at(at).from;
    }
    std::reverse(r.order.begin(), r.order.end());
  } else {
    r.exhaustive = false;
    r.order = greedy_order(g);
  }
  // The bound is the lower bound's own, computed the same way for both orders.
  r.peak_bytes = r.order.size() == g.ops ? peak_of(model, r.order) : UINT64_MAX;
  if (r.peak_bytes > r.original_peak_bytes) {  // never recommend a worse order
    r.order = original;
    r.peak_bytes = r.original_peak_bytes;
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
