#include "static/deepest_chains.h"

#include <algorithm>
#include <functional>

namespace edgemem {

DeepestChains::DeepestChains(std::vector<uint64_t> frame, std::vector<std::vector<uint32_t>> callees)
    : frame_(std::move(frame)), callees_(std::move(callees)) {
  find_cycles();
  memo_.resize(frame_.size());
  exit_.resize(frame_.size());
  on_path_.resize(frame_.size());
}

// Tarjan's strongly connected components.
void DeepestChains::find_cycles() {
  const uint32_t n = static_cast<uint32_t>(frame_.size());
  constexpr uint32_t unseen = UINT32_MAX;
  std::vector<uint32_t> index(n, unseen), low(n), open;
  std::vector<bool> on_open(n);
  cycle_.assign(n, 0);
  uint32_t next = 0;
  std::function<void(uint32_t)> visit = [&](uint32_t v) {
    index[v] = low[v] = next++;
    open.push_back(v);
    on_open[v] = true;
    for (uint32_t c : callees_[v]) {
      if (index[c] == unseen) {
        visit(c);
        low[v] = std::min(low[v], low[c]);
      } else if (on_open[c]) {
        low[v] = std::min(low[v], index[c]);
      }
    }
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
  for (uint32_t v = 0; v < n; ++v)
    if (index[v] == unseen) visit(v);
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
  chain.path = best_path_;
  chain.complete = steps_ <= kSearchLimit;
  if (best_exit_) {
    const Chain& rest = *memo_[*best_exit_];
    chain.path.insert(chain.path.end(), rest.path.begin(), rest.path.end());
    chain.complete = chain.complete && rest.complete;
  }
  memo_[function] = std::move(chain);
  return *memo_[function];
}

void DeepestChains::search(uint32_t v, uint64_t bytes) {
  if (++steps_ > kSearchLimit) return;
  // Stop in v, leaving the cycle by v's heaviest call out (or by none).
  if (uint64_t here = bytes + exit_[v].bytes; !found_ || here > best_bytes_) {
    found_ = true;
    best_bytes_ = here;
    best_path_ = path_;
    best_exit_ = exit_[v].callee;
  }
  const uint32_t id = cycle_[v];
  for (uint32_t c : callees_[v]) {
    if (cycle_[c] != id || on_path_[c]) continue;
    // Nothing longer is left to find than every frame not yet on the path
    // plus the heaviest way out.
    if (bytes + left_ + max_exit_[id] <= best_bytes_) return;
    on_path_[c] = true;
    path_.push_back(c);
    left_ -= frame_[c];
    search(c, bytes + frame_[c]);
    left_ += frame_[c];
    path_.pop_back();
    on_path_[c] = false;
    if (steps_ > kSearchLimit) return;
  }
}

}  // namespace edgemem
