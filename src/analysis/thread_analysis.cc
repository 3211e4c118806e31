#include "thread_analysis.h"

#include <algorithm>

namespace edgemem {

void ThreadAnalysis::add_row(uint32_t tid) {
  threads_.push_back({.tid = tid});
  ++rows_;
}

void ThreadAnalysis::handed_off(uint32_t thread, const Block& b) {
  ++at(index(thread)).frees_of_others;
  Counters& o = at(index(b.thread));
  ++o.freed_by_others;
  o.freed_by_others_bytes += b.size;
  ++cross_frees_;
  cross_bytes_ += b.size;
  const uint32_t pair = pair_index_.of(uint64_t{b.thread} << 32 | thread);
  if (pair == pair_index_.overflow()) return;
  if (pair == hand_offs_.size()) hand_offs_.push_back({.from_tid = b.thread, .to_tid = thread});
  ++hand_offs_[pair].count;
  hand_offs_[pair].bytes += b.size;
}


void ThreadAnalysis::finish(const TraceContext& context, AnalysisResult& out) const {
  ThreadsResult& r = out.threads;
  auto summary = [&](const Counters& c) {
    ThreadSummary s;
    s.tid = c.tid;
    s.marks_inferences = c.marks;
    s.allocs = c.allocs;
    s.frees = c.frees;
    s.alloc_bytes = c.alloc_bytes;
    s.peak_live_bytes = c.peak_live_bytes;
    s.live_bytes = c.live_bytes;
    s.live_count = c.live_count;
    s.frees_of_others = c.frees_of_others;
    s.freed_by_others = c.freed_by_others;
    s.freed_by_others_bytes = c.freed_by_others_bytes;
    if (auto name = context.thread_names.find(c.tid); name != context.thread_names.end()) s.name = name->second;
    return s;
  };
  for (const Counters& c : threads_) r.threads.push_back(summary(c));
  if (other_.allocs + other_.frees > 0) {
    r.threads.push_back(summary(other_));
    r.threads.back().tid = 0;
    r.threads.back().name.clear();
    r.threads.back().other_threads = true;
  }
  // Leaks were judged per group; each group says which threads made its blocks.
  for (const SiteLeak& leak : out.leaks)
    for (const ThreadShare& share : leak.threads) {
      auto t = std::find_if(r.threads.begin(), r.threads.end(),
                            [&](const ThreadSummary& s) { return !s.other_threads && s.tid == share.tid; });
      if (t == r.threads.end())  // a thread met after the table was full
        t = std::find_if(r.threads.begin(), r.threads.end(), [](const ThreadSummary& s) { return s.other_threads; });
      if (t == r.threads.end()) continue;
      t->leaked_bytes += share.bytes;
      t->leaked_count += share.count;
    }
  r.hand_offs = hand_offs_;
  std::sort(r.hand_offs.begin(), r.hand_offs.end(), [](const ThreadHandOff& a, const ThreadHandOff& b) {
    return a.count != b.count ? a.count > b.count : a.bytes > b.bytes;
  });
  r.cross_thread_frees = cross_frees_;
  r.cross_thread_free_bytes = cross_bytes_;
}

}  // namespace edgemem
