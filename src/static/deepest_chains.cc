#include "static/deepest_chains.h"

#include <algorithm>

namespace edgemem {

DeepestChains::DeepestChains(std::vector<uint64_t> frame, std::vector<std::vector<uint32_t>> callees)
    : frame_(std::move(frame)), callees_(std::move(callees)) {
  find_cycles();
  memo_.resize(frame_.size());
  exit_.resize(frame_.size());
  on_path_.resize(frame_.size());
  for (uint32_t id = 0; id < members_.size(); ++id) find_exits(id);
}

// Tarjan's strongly connected components, with its own stack of calls
// (a chain 50,000 calls deep overflowed the machine's).
void DeepestChains::find_cycles() {
  const uint32_t n = static_cast<uint32_t>(frame_.size());
  constexpr uint32_t unseen = UINT32_MAX;
  std::vector<uint32_t> index(n, unseen), low(n), open;
  std::vector<bool> on_open(n);
  cycle_.assign(n, 0);
  uint32_t next = 0;
  auto close = [&](uint32_t v) {
    if (low[v] != index[v]) return;
    const uint32_t id = static_cast<uint32_t>(members_.size());
    members_.emplace_back();
    cycle_bytes_.push_back(0);
    uint32_t w;
    do {
      w = open.back();
      open.pop_back();
      on_open[w] = false;
      cycle_[w] = id;
      members_[id].push_back(w);
      cycle_bytes_[id] += frame_[w];
    } while (w != v);
    bool self_call = std::find(callees_[v].begin(), callees_[v].end(), v) != callees_[v].end();
    cyclic_.push_back(members_[id].size() > 1 || self_call);
  };
  struct Visit {
    uint32_t v;
    size_t callee = 0;  // the next of v's callees to look at
  };
  std::vector<Visit> calls;
  auto enter = [&](uint32_t v) {
    index[v] = low[v] = next++;
    open.push_back(v);
    on_open[v] = true;
    calls.push_back({v});
  };
  for (uint32_t root = 0; root < n; ++root) {
    if (index[root] != unseen) continue;
    enter(root);
    while (!calls.empty()) {
      Visit& top = calls.back();
      const uint32_t v = top.v;
      if (top.callee < callees_[v].size()) {
        const uint32_t c = callees_[v][top.callee++];
        if (index[c] == unseen) enter(c);  // `top` may move: not used after this
        else if (on_open[c]) low[v] = std::min(low[v], index[c]);
        continue;
      }
      calls.pop_back();
      close(v);
      if (!calls.empty()) low[calls.back().v] = std::min(low[calls.back().v], low[v]);
    }
  }
  max_exit_.assign(members_.size(), 0);
  exits_found_.assign(members_.size(), false);
}

void DeepestChains::find_exits(uint32_t id) {
  if (exits_found_[id]) return;
  exits_found_[id] = true;
  for (uint32_t v : members_[id]) {
    Exit& e = exit_[v];
    for (uint32_t c : callees_[v]) {
      if (cycle_[c] == id) continue;
      // Ties go to the first call, as the graph lists them.
      if (uint64_t b = from(c).bytes; !e.callee || b > e.bytes) e = Exit{b, c};
    }
    max_exit_[id] = std::max(max_exit_[id], e.bytes);
  }
}

const Chain& DeepestChains::from(uint32_t function) {
  if (memo_[function]) return *memo_[function];
  const uint32_t id = cycle_[function];
  find_exits(id);
  found_ = false;
  best_bytes_ = 0;
  best_exit_.reset();
  steps_ = 0;
  left_ = cycle_bytes_[id] - frame_[function];
  on_path_[function] = true;
  path_.assign({function});
  search(function, frame_[function]);
  on_path_[function] = false;

  Chain chain;
  chain.bytes = best_bytes_;
  chain.own = best_path_;
  chain.next = best_exit_;
  chain.complete = steps_ <= kSearchLimit;
  if (best_exit_) chain.complete = chain.complete && memo_[*best_exit_]->complete;
  memo_[function] = std::move(chain);
  return *memo_[function];
}

std::vector<uint32_t> DeepestChains::path(uint32_t function) {
  std::vector<uint32_t> out;
  for (std::optional<uint32_t> f = function; f;) {
    const Chain& c = from(*f);
    out.insert(out.end(), c.own.begin(), c.own.end());
    f = c.next;
  }
  return out;
}

// Depth first over the cycle's paths from path_'s one function, with its
// own stack (a cycle of 100,000 functions is as deep).
void DeepestChains::search(uint32_t start, uint64_t start_bytes) {
  struct Step {
    uint32_t v;
    uint64_t bytes;    // the path's frames up to v
    size_t callee = 0;  // the next of v's callees to try
  };
  std::vector<Step> steps;
  // The best path is path_'s first `best_length` functions until path_ is cut below that.
  size_t best_length = 0;
  bool best_pending = false;
  auto enter = [&](uint32_t v, uint64_t bytes) {
    if (++steps_ > kSearchLimit) return false;
    // Stop in v, leaving the cycle by v's heaviest call out (or by none).
    if (uint64_t here = bytes + exit_[v].bytes; !found_ || here > best_bytes_) {
      found_ = true;
      best_bytes_ = here;
      best_length = path_.size();
      best_pending = true;
      best_exit_ = exit_[v].callee;
    }
    steps.push_back({v, bytes});
    return true;
  };
  auto leave = [&] {  // the last function on the path
    const uint32_t v = path_.back();
    if (best_pending && path_.size() == best_length) {
      best_path_ = path_;
      best_pending = false;
    }
    left_ += frame_[v];
    path_.pop_back();
    on_path_[v] = false;
  };
  if (enter(start, start_bytes)) {
    const uint32_t id = cycle_[start];
    while (!steps.empty()) {
      Step& s = steps.back();
      const std::vector<uint32_t>& callees = callees_[s.v];
      bool deeper = false, cut = false;
      while (s.callee < callees.size()) {
        const uint32_t c = callees[s.callee++];
        if (cycle_[c] != id || on_path_[c]) continue;
        // Nothing longer is left to find than every frame not yet on the
        // path plus the heaviest way out.
        if (s.bytes + left_ + max_exit_[id] <= best_bytes_) break;
        on_path_[c] = true;
        path_.push_back(c);
        left_ -= frame_[c];
        const uint64_t bytes = s.bytes + frame_[c];  // `s` may move in enter()
        if (!enter(c, bytes)) {
          leave();
          cut = true;
        } else {
          deeper = true;
        }
        break;
      }
      if (cut) break;
      if (deeper) continue;
      steps.pop_back();
      if (!steps.empty()) leave();  // the start is the caller's to take off
    }
    // Cut at the search limit: take the rest of the path off, as returning would.
    while (path_.size() > 1) leave();
  }
  if (best_pending) best_path_.assign(path_.begin(), path_.begin() + static_cast<std::ptrdiff_t>(best_length));
}

}  // namespace edgemem
