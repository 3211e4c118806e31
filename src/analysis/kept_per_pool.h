// Which findings of one kind a bounded list keeps: the first 100, and past
// them each pool's first, so a pool whose first overflow, guard failure or
// failed request came after another pool's hundred is still named (watch
// raised no alert for it, and the reports named none). Counts stay exact
// apart from the lists.
#pragma once

#include <cstddef>
#include <vector>

#include "edgemem/pool_table.h"

namespace edgemem {

class KeptPerPool {
 public:
  static constexpr size_t kKept = 100;
  // Whether the next finding of `pool` is kept, given `kept` kept so far.
  bool keep(PoolId pool, size_t kept) {
    if (pool >= named_.size()) named_.resize(pool + 1, false);
    if (kept >= kKept && named_[pool]) return false;
    named_[pool] = true;
    return true;
  }

 private:
  std::vector<bool> named_;  // per pool: one of its findings is kept
};

}  // namespace edgemem
