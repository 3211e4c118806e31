// The deepest call chain from each function of a call graph: the heaviest
// path, summing frame sizes, that calls no function twice. Functions that
// reach each other (a cycle: mutual recursion, a printf that logs) are
// searched path by path, pruned by what the rest of the cycle could still
// add; a function entered from outside its cycle cannot reach back to the
// path above it, so its chain is the same wherever it is called from and is
// computed once.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace edgemem {

struct Chain {
  uint64_t bytes = 0;
  std::vector<uint32_t> own;      // the function first, within its cycle
  std::optional<uint32_t> next;   // the function the chain leaves the cycle by: its chain follows
  bool complete = true;           // false: a cycle had too many paths to search them all
};

class DeepestChains {
 public:
  // callees[n]: the functions n calls, by index (calls to itself allowed).
  // Every chain is found here, callees' cycles first, so no search waits on
  // another: a call graph thousands of calls deep needs no deep recursion.
  DeepestChains(std::vector<uint64_t> frame, std::vector<std::vector<uint32_t>> callees);
  const Chain& from(uint32_t function);
  // The whole chain from `function`, the function first.
  std::vector<uint32_t> path(uint32_t function);
  // Cycles in the order found: each one's calls out of it go to cycles before it.
  uint32_t cycles() const { return static_cast<uint32_t>(members_.size()); }
  // Functions that can call themselves again, directly or through others.
  bool in_cycle(uint32_t function) const { return cyclic_[cycle_[function]]; }
  uint32_t cycle(uint32_t function) const { return cycle_[function]; }
  const std::vector<uint32_t>& members(uint32_t cycle) const { return members_[cycle]; }

  // Calls searched inside one cycle, from one entry, before its chain is
  // given as the deepest found so far.
  static constexpr uint64_t kSearchLimit = 1'000'000;

 private:
  void find_cycles();
  void find_exits(uint32_t cycle);
  void search(uint32_t v, uint64_t bytes);

  std::vector<uint64_t> frame_;
  std::vector<std::vector<uint32_t>> callees_;
  std::vector<uint32_t> cycle_;
  std::vector<bool> cyclic_;
  std::vector<std::vector<uint32_t>> members_;  // by cycle
  std::vector<uint64_t> cycle_bytes_;           // sum of the cycle's frames
  std::vector<uint64_t> max_exit_;              // the heaviest exit anywhere in the cycle
  std::vector<bool> exits_found_;
  std::vector<std::optional<Chain>> memo_;
  struct Exit {
    uint64_t bytes = 0;
    std::optional<uint32_t> callee;  // the heaviest call out of the cycle
  };
  std::vector<Exit> exit_;  // by function: its heaviest call out of its cycle
  // The search in progress: one at a time, since every exit of a cycle is
  // found before its search starts.
  std::vector<bool> on_path_;
  std::vector<uint32_t> path_;
  uint64_t left_ = 0;  // frames of the cycle not on the path
  uint64_t steps_ = 0;
  uint64_t best_bytes_ = 0;
  std::vector<uint32_t> best_path_;  // within the cycle; then best_exit_'s chain
  std::optional<uint32_t> best_exit_;
  bool found_ = false;
};

}  // namespace edgemem
