// Temporary allocations, as heaptrack counts them but per thread: a block
// freed by the thread that made it, with no allocation and no free of that
// thread in between (a scratch buffer made and dropped at once, the first
// thing to move to the stack or a reused buffer). Counted per call site.
#pragma once

#include <cstdint>
#include <vector>

#include "dense_index.h"
#include "edgemem/analysis_result.h"
#include "edgemem/decoder.h"
#include "live_map.h"
#include "pool_tracker.h"

namespace edgemem {

class TemporaryAnalysis {
 public:
  // Inline: every allocation and free comes here.
  void allocated(PoolId pool, uint32_t thread, const Block& b) {
    ++allocations_;
    last_of(thread) = {b.address, b.time, pool, true};
  }
  // A free made by `thread`.
  void freed(PoolId pool, uint32_t thread, const Block& b) {
    Last& last = last_of(thread);
    // The same block (not a later one at the same address), made by this thread.
    const bool temporary = last.open && b.thread == thread && last.address == b.address && last.time == b.time &&
                           last.pool == pool;
    last.open = false;  // any free of the thread ends the run, as heaptrack's does
    if (temporary) count(b);
  }
  void finish(const PoolTracker& tracker, const TraceContext& context, AnalysisResult& out) const;

 private:
  // A thread's last allocation while no free of that thread followed it.
  struct Last {
    uint64_t address = 0, time = 0;
    PoolId pool = 0;
    bool open = false;
  };
  Last& last_of(uint32_t thread) {
    uint32_t i = threads_.of(thread);
    if (i >= rows_) [[unlikely]]
      add_rows(i);
    return last_[i];
  }
  void add_rows(uint32_t up_to);
  void count(const Block& temporary);
  struct Counts {
    uint64_t count = 0, bytes = 0;
  };

  // Threads past the cap share one row, and their runs break each other's:
  // a program that starts a thread per request has its temporaries counted
  // exactly for its first 65,536 threads (1.5 MiB of rows at most).
  DenseIndex threads_{65536};
  std::vector<Last> last_;  // by thread index; the overflow index shares the last one
  uint32_t rows_ = 0;       // last_.size(), kept: size() divides by the row's size
  std::vector<Counts> sites_;  // by SiteId (SiteTable is bounded)
  uint64_t count_ = 0, bytes_ = 0, allocations_ = 0;
};

}  // namespace edgemem
