// The per-thread split: what each thread allocated and freed, what its
// blocks held at their peak and at the end, what of the leaks it made, and
// the blocks one thread made and another freed (a pipeline's hand-off from
// a preprocessing thread to the inference thread). A block is charged to
// the thread that made it (Block::thread), whoever frees it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "dense_index.h"
#include "edgemem/analysis_result.h"
#include "edgemem/decoder.h"
#include "live_map.h"

namespace edgemem {

class ThreadAnalysis {
 public:
  static constexpr uint32_t kMaxThreads = 4096;
  static constexpr uint32_t kMaxHandOffs = 4096;  // pairs of threads; past it, counted in the totals only

  // Inline, as index() is: every memory event comes here, nearly always
  // from the thread of the event before.
  void allocated(uint32_t thread, const Block& b) {
    Counters& c = at(index(thread));
    ++c.allocs;
    c.alloc_bytes += b.size;
    ++c.live_count;
    c.peak_live_bytes = std::max(c.peak_live_bytes, c.live_bytes += b.size);
  }
  // A free made by `thread`.
  void freed(uint32_t thread, const Block& b) {
    freed_late(thread, b);
    dropped(b);
  }
  // The free of a block already dropped() (a later block lay over it first).
  void freed_late(uint32_t thread, const Block& b) {
    ++at(index(thread)).frees;
    if (b.thread != thread) [[unlikely]]  // threads past the cap share a row but are still two threads
      handed_off(thread, b);
  }
  // Gone without a free: an arena reset, or an allocation over a live block (its free was lost).
  void dropped(const Block& b) {
    Counters& o = at(index(b.thread));
    --o.live_count;
    o.live_bytes -= b.size;
  }
  void marks_inferences(uint32_t thread) { at(index(thread)).marks = true; }
  // After the leak analysis has filled out.leaks (its blocks' threads).
  void finish(const TraceContext& context, AnalysisResult& out) const;

 private:
  struct Counters {
    uint32_t tid = 0;
    bool marks = false;
    uint64_t allocs = 0, frees = 0, alloc_bytes = 0;
    uint64_t live_bytes = 0, live_count = 0, peak_live_bytes = 0;
    uint64_t frees_of_others = 0, freed_by_others = 0, freed_by_others_bytes = 0;
  };
  // Makes its counters on first sight (out of line: rare, and inlined it
  // would make every caller save registers).
  uint32_t index(uint32_t tid) {
    uint32_t i = index_.of(tid);
    if (i == rows_ && i != index_.overflow()) [[unlikely]]
      add_row(tid);
    return i;
  }
  void add_row(uint32_t tid);
  // A block freed by another thread than the one that made it.
  void handed_off(uint32_t by_thread, const Block& b);
  Counters& at(uint32_t i) { return i < rows_ ? threads_[i] : other_; }

  DenseIndex index_{kMaxThreads};
  std::vector<Counters> threads_;
  uint32_t rows_ = 0;  // threads_.size(), kept: size() divides by the row's size
  Counters other_;  // threads past kMaxThreads
  DenseIndex pair_index_{kMaxHandOffs};
  std::vector<ThreadHandOff> hand_offs_;
  uint64_t cross_frees_ = 0, cross_bytes_ = 0;
};

}  // namespace edgemem
