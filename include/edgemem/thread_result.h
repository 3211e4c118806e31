// Plain values of the per-thread split and the temporary allocations of a
// trace; presenters read only these (AnalysisResult holds them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace edgemem {

// One thread. A block is charged to the thread that made it, whichever
// thread frees it; `frees` counts the frees this thread made.
struct ThreadSummary {
  uint32_t tid = 0;  // Event::thread: the kernel thread id in a recording, 0 when the trace names none
  // The name the recording gives it (emt v2: the kernel's name of the thread
  // when it first allocated, so a name set after that is not seen); empty
  // when the trace has none.
  std::string name;
  // Every thread met after ThreadIndex::kMaxThreads, pooled in one row.
  bool other_threads = false;
  bool marks_inferences = false;
  uint64_t allocs = 0, frees = 0, alloc_bytes = 0;
  uint64_t peak_live_bytes = 0;                 // most bytes live at once in blocks it made
  uint64_t live_bytes = 0, live_count = 0;      // of its blocks at the end
  uint64_t leaked_bytes = 0, leaked_count = 0;  // of AnalysisResult::leaks, the blocks it made
  uint64_t frees_of_others = 0;                 // blocks another thread made that it freed
  uint64_t freed_by_others = 0, freed_by_others_bytes = 0;  // its blocks another thread freed
};

// The live blocks of one leak made by one thread.
struct ThreadShare {
  uint32_t tid = 0;
  uint64_t bytes = 0, count = 0;
};

// Blocks made on one thread and freed on another: a pipeline's hand-off.
struct ThreadHandOff {
  uint32_t from_tid = 0, to_tid = 0;  // allocated on, freed on
  uint64_t count = 0, bytes = 0;
};

struct ThreadsResult {
  std::vector<ThreadSummary> threads;  // in the order the trace met them
  std::vector<ThreadHandOff> hand_offs;  // by count, most first
  uint64_t cross_thread_frees = 0, cross_thread_free_bytes = 0;
};

// A site whose blocks were freed right after they were made.
struct TemporarySite {
  std::string site;
  uint64_t count = 0, bytes = 0;  // temporary allocations and their bytes
  uint64_t allocs = 0;            // every allocation at the site
};

// heaptrack's "temporary allocation", per thread: a block freed by the
// thread that made it with no allocation and no free of that thread in
// between (a realloc is the free of the old block and the allocation of
// the new one, as heaptrack counts it).
struct TemporaryResult {
  uint64_t count = 0, bytes = 0;
  uint64_t allocations = 0;  // every allocation, the share's denominator
  std::vector<TemporarySite> top;  // most temporary allocations first, at most kTopTemporarySites
};

inline constexpr size_t kTopTemporarySites = 10;

}  // namespace edgemem
