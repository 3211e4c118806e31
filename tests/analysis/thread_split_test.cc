// The per-thread split and temporary allocations, fed event by event as a
// recording of a threaded process delivers them.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "analysis/thread_analysis.h"
#include "test_support.h"

namespace edgemem::test {
namespace {

struct Process {
  TraceContext context;
  Analyzer analyzer{context};
  PoolId heap = context.pools.intern("malloc", PoolKind::heap);
  uint64_t time = 0, next_address = 0x10000;

  void send(Event e) {
    e.time = ++time;
    e.pool = heap;
    analyzer.on_event(e);
  }
  uint64_t alloc(uint32_t thread, const char* site, uint64_t size) {
    next_address += 0x1000;
    send({.address = next_address, .size = size, .site = context.sites.intern(site), .thread = thread,
          .kind = EventKind::alloc});
    return next_address;
  }
  void free(uint32_t thread, uint64_t address) { send({.address = address, .thread = thread, .kind = EventKind::free}); }
  uint64_t realloc(uint32_t thread, uint64_t old, uint64_t size) {
    next_address += 0x1000;
    send({.address = next_address, .size = size, .old_address = old, .thread = thread, .kind = EventKind::realloc});
    return next_address;
  }
  void marker(uint32_t thread, EventKind kind, uint64_t number) { send({.size = number, .thread = thread, .kind = kind}); }
};

const ThreadSummary& thread(const AnalysisResult& r, uint32_t tid) {
  auto t = std::find_if(r.threads.threads.begin(), r.threads.threads.end(),
                        [&](const ThreadSummary& s) { return s.tid == tid && !s.other_threads; });
  if (t == r.threads.threads.end()) throw std::runtime_error("no thread " + std::to_string(tid));
  return *t;
}

// A preprocessing thread makes each frame; the inference thread frees it
// after the model ran, and leaks a descriptor every inference.
TEST(ThreadSplit, APipelinesHandOffIsChargedToTheThreadThatMadeTheBlocks) {
  Process p;
  const uint32_t main = 500, pre = 501;
  for (uint64_t i = 1; i <= 8; ++i) {
    uint64_t frame = p.alloc(pre, "preprocess", 3072);
    p.marker(main, EventKind::inference_begin, i);
    uint64_t scratch = p.alloc(main, "run_model", 1000);
    p.free(main, scratch);
    p.alloc(main, "describe", 128);
    p.marker(main, EventKind::inference_end, i);
    p.free(main, frame);
  }
  AnalysisResult r = p.analyzer.finish();
  ASSERT_EQ(r.threads.threads.size(), 2u);
  const ThreadSummary& m = thread(r, main);
  const ThreadSummary& w = thread(r, pre);
  EXPECT_EQ(r.threads.threads[0].tid, pre) << "in the order the trace met them";
  EXPECT_TRUE(m.marks_inferences);
  EXPECT_FALSE(w.marks_inferences);
  EXPECT_EQ(w.allocs, 8u);
  EXPECT_EQ(w.frees, 0u);
  EXPECT_EQ(w.alloc_bytes, 8u * 3072);
  EXPECT_EQ(w.peak_live_bytes, 3072u) << "each frame is freed before the next one is made";
  EXPECT_EQ(w.live_bytes, 0u);
  EXPECT_EQ(w.freed_by_others, 8u);
  EXPECT_EQ(w.freed_by_others_bytes, 8u * 3072);
  EXPECT_EQ(m.allocs, 16u);
  EXPECT_EQ(m.frees, 16u) << "its scratch buffers and the frames";
  EXPECT_EQ(m.frees_of_others, 8u);
  EXPECT_EQ(m.alloc_bytes, 8u * 1128);
  EXPECT_EQ(m.peak_live_bytes, 7u * 128 + 1000);
  EXPECT_EQ(m.live_bytes, 8u * 128);
  EXPECT_EQ(m.live_count, 8u);
  ASSERT_EQ(r.leaks.size(), 1u);
  EXPECT_EQ(m.leaked_bytes, 8u * 128);
  EXPECT_EQ(m.leaked_count, 8u);
  EXPECT_EQ(w.leaked_bytes, 0u);
  ASSERT_EQ(r.leaks[0].threads.size(), 1u);
  EXPECT_EQ(r.leaks[0].threads[0].tid, main);
  EXPECT_EQ(r.threads.cross_thread_frees, 8u);
  EXPECT_EQ(r.threads.cross_thread_free_bytes, 8u * 3072);
  ASSERT_EQ(r.threads.hand_offs.size(), 1u);
  const ThreadHandOff& h = r.threads.hand_offs[0];
  EXPECT_EQ(h.from_tid, pre);
  EXPECT_EQ(h.to_tid, main);
  EXPECT_EQ(h.count, 8u);
}

// One leaking site fed by two threads: each is charged its own blocks.
TEST(ThreadSplit, ALeakMadeByTwoThreadsIsSplitBetweenThem) {
  Process p;
  for (int i = 0; i < 40; ++i) {
    p.alloc(1, "descriptor", 128);
    if (i % 2 == 0) p.alloc(2, "descriptor", 128);
    p.free(1, p.alloc(1, "scratch", 64));
  }
  AnalysisResult r = p.analyzer.finish();
  ASSERT_EQ(r.leaks.size(), 1u);
  ASSERT_EQ(r.leaks[0].threads.size(), 2u);
  EXPECT_EQ(r.leaks[0].threads[0].tid, 1u) << "most bytes first";
  EXPECT_EQ(r.leaks[0].threads[0].count, 40u);
  EXPECT_EQ(r.leaks[0].threads[1].count, 20u);
  EXPECT_EQ(thread(r, 1).leaked_bytes, 40u * 128);
  EXPECT_EQ(thread(r, 2).leaked_bytes, 20u * 128);
  EXPECT_EQ(r.threads.cross_thread_frees, 0u);
}

// A process that starts a thread per request: the split stays bounded.
TEST(ThreadSplit, ThreadsPastTheCapShareOneRow) {
  Process p;
  const uint32_t threads = ThreadAnalysis::kMaxThreads + 10;
  for (uint32_t t = 1; t <= threads; ++t) p.free(t, p.alloc(t, "request", 16));
  AnalysisResult r = p.analyzer.finish();
  ASSERT_EQ(r.threads.threads.size(), ThreadAnalysis::kMaxThreads + 1u);
  const ThreadSummary& other = r.threads.threads.back();
  EXPECT_TRUE(other.other_threads);
  EXPECT_EQ(other.allocs, 10u);
  EXPECT_EQ(other.frees, 10u);
  EXPECT_EQ(r.temporaries.count, threads) << "each request's block was made and freed at once";
  EXPECT_EQ(r.threads.cross_thread_frees, 0u);
}

TEST(ThreadSplit, AHandOffBetweenTwoThreadsPastTheCapIsStillCrossThread) {
  Process p;
  const uint32_t first = ThreadAnalysis::kMaxThreads + 1;
  for (uint32_t t = 1; t < first; ++t) p.free(t, p.alloc(t, "request", 16));
  p.free(first + 1, p.alloc(first, "handed", 64));
  AnalysisResult r = p.analyzer.finish();
  EXPECT_EQ(r.threads.cross_thread_frees, 1u);
  EXPECT_EQ(r.threads.cross_thread_free_bytes, 64u);
  EXPECT_EQ(r.threads.threads.back().freed_by_others, 1u) << "both share the row of other threads";
  EXPECT_EQ(r.threads.threads.back().frees_of_others, 1u);
}

TEST(Temporaries, AFreeRightAfterItsAllocationOnTheSameThreadIsTemporary) {
  Process p;
  uint64_t a = p.alloc(1, "scratch", 100);
  p.free(1, a);  // temporary
  uint64_t b = p.alloc(1, "kept", 10), c = p.alloc(1, "inner", 20);
  p.free(1, c);  // temporary: the last allocation
  p.free(1, b);  // not: c was made after it
  uint64_t d = p.alloc(1, "kept", 10);
  uint64_t x = p.alloc(2, "other thread", 30);  // another thread's allocation does not break thread 1's run
  p.free(1, d);  // temporary
  uint64_t e = p.alloc(1, "kept", 10);
  p.free(1, x);  // a free of thread 1 between: e is no longer temporary (heaptrack's rule)
  p.free(1, e);
  uint64_t f = p.alloc(2, "handed", 40);
  p.free(1, f);  // freed by another thread: not temporary
  uint64_t g = p.alloc(1, "grown", 16);
  p.realloc(1, g, 32);  // realloc frees the block just made: temporary, as heaptrack counts it
  AnalysisResult r = p.analyzer.finish();
  EXPECT_EQ(r.temporaries.allocations, 9u);
  EXPECT_EQ(r.temporaries.count, 4u);
  EXPECT_EQ(r.temporaries.bytes, 100u + 20 + 10 + 16);
  ASSERT_EQ(r.temporaries.top.size(), 4u);
  EXPECT_EQ(r.temporaries.top[0].site, "scratch") << "equal counts: more bytes first";
  EXPECT_EQ(r.temporaries.top[1].site, "inner");
  EXPECT_EQ(r.temporaries.top[2].site, "grown");
  EXPECT_EQ(r.temporaries.top[3].site, "kept");
  EXPECT_EQ(r.temporaries.top[3].allocs, 3u);
  EXPECT_EQ(r.temporaries.top[3].count, 1u);
}

// A text log names threads (thread=N) and reallocs: the same rules.
TEST(Temporaries, ATextLogsReallocAndThreadsFollowTheSameRule) {
  auto run = analyse(Format::log,
                     "[MEM][1] ALLOC size=64 align=4 addr=0x1000 site=a.c:1 thread=7\n"
                     "[MEM][2] ALLOC size=64 align=4 addr=0x2000 site=b.c:1 thread=8\n"
                     "[MEM][3] FREE addr=0x1000 thread=7\n"
                     "[MEM][4] FREE addr=0x2000 thread=7\n");
  const AnalysisResult& r = run->result;
  EXPECT_EQ(r.temporaries.count, 1u);
  ASSERT_EQ(r.temporaries.top.size(), 1u);
  EXPECT_EQ(r.temporaries.top[0].site, "a.c:1");
  EXPECT_EQ(r.threads.cross_thread_frees, 1u);
  EXPECT_EQ(thread(r, 7).frees, 2u);
  EXPECT_EQ(thread(r, 8).freed_by_others_bytes, 64u);
}

// Two threads running inferences at once (an --inference-fn both threads
// call): their markers interleave, and the report says the per-inference
// numbers mix them. A frame begun on one thread and ended on another, or
// firmware that marks only begins, is one sequence, not an overlap.
TEST(ThreadSplit, InferencesThatOverlapOnTwoThreadsAreSaid) {
  const std::string overlapping =
      "[MEM][10] INFER begin 1 thread=1\n[MEM][20] INFER begin 7 thread=2\n[MEM][25] ALLOC size=8 addr=0x100 thread=1\n"
      "[MEM][30] INFER end 1 thread=1\n[MEM][40] INFER end 7 thread=2\n[MEM][50] INFER begin 2 thread=1\n"
      "[MEM][55] INFER begin 8 thread=2\n[MEM][60] INFER end 8 thread=2\n";
  auto run = analyse(Format::log, overlapping);
  EXPECT_EQ(run->result.overlapping_inferences, 2u);
  EXPECT_NE(text_of(*run).find("Inferences    2 began on one thread while another thread's was open"), std::string::npos)
      << text_of(*run);

  const std::string handed_on =
      "[MEM][10] INFER begin 1 thread=1\n[MEM][25] ALLOC size=8 addr=0x100 thread=1\n[MEM][30] INFER end 1 thread=2\n"
      "[MEM][50] INFER begin 2 thread=1\n[MEM][60] INFER end 2 thread=2\n";
  EXPECT_EQ(analyse(Format::log, handed_on)->result.overlapping_inferences, 0u);
  const std::string begins_only =
      "[MEM][10] INFER begin 1 thread=1\n[MEM][25] ALLOC size=8 addr=0x100 thread=1\n[MEM][30] INFER begin 2 thread=2\n"
      "[MEM][50] INFER begin 3 thread=1\n";
  EXPECT_EQ(analyse(Format::log, begins_only)->result.overlapping_inferences, 0u);
}

// Three threads each run 40 inferences, interleaved, each keeping one 128 B
// block: an end closes its own thread's inference. The latest begun was
// closed instead (an ONNX Runtime tester's three threads: 121 inferences
// for 120, spans left open and duplicated, 4 overlaps counted for 86).
TEST(ThreadSplit, EachThreadsEndClosesItsOwnInference) {
  struct Thread {
    int step = 0, done = 0;
  };
  Thread threads[3];
  // Thread 1's first inference runs alone, so an end is seen before the
  // others begin (before one, a begin ends the inference before it: below).
  std::string log = "[MEM][1] INFER begin 99 thread=1\n[MEM][2] ALLOC size=128 addr=0x8000 site=model.c:9 thread=1\n"
                    "[MEM][3] INFER end 99 thread=1\n";
  uint64_t time = 3, address = 0x10000, overlaps = 0;
  uint32_t rng = 12345;
  for (int left = 3 * 40 * 3; left > 0; --left) {
    int t;
    do {
      rng = rng * 1103515245u + 12345u;
      t = static_cast<int>((rng >> 16) % 3);
    } while (threads[t].done == 40);
    Thread& th = threads[t];
    const uint64_t number = 100 * (t + 1) + th.done;
    const int tid = t + 1;
    if (th.step == 0) {
      bool other_open = false;
      for (int u = 0; u < 3; ++u) other_open |= u != t && threads[u].step != 0;
      overlaps += other_open;
      log += fmt::format("[MEM][{}] INFER begin {} thread={}\n", ++time, number, tid);
    } else if (th.step == 1) {
      log += fmt::format("[MEM][{}] ALLOC size=128 addr={:#x} site=model.c:9 thread={}\n", ++time, address += 128, tid);
    } else {
      log += fmt::format("[MEM][{}] INFER end {} thread={}\n", ++time, number, tid);
      ++th.done;
    }
    th.step = (th.step + 1) % 3;
  }
  ASSERT_GT(overlaps, 40u) << "the schedule interleaves the threads";
  auto run = analyse(Format::log, log);
  const AnalysisResult& r = run->result;
  EXPECT_EQ(r.inferences, 121u);
  EXPECT_EQ(r.overlapping_inferences, overlaps);
  ASSERT_EQ(r.inference_marks.spans.size(), 121u);
  std::set<uint64_t> numbers;
  for (const InferenceSpan& s : r.inference_marks.spans) {
    EXPECT_TRUE(s.begin_time && s.end_time) << s.number;
    EXPECT_LT(*s.begin_time, *s.end_time) << s.number;
    numbers.insert(s.number);
  }
  EXPECT_EQ(numbers.size(), 121u);
  ASSERT_EQ(r.leaks.size(), 1u);
  EXPECT_EQ(r.leaks[0].bytes, 121u * 128);
  ASSERT_TRUE(r.leaks[0].bytes_per_inference);
  EXPECT_DOUBLE_EQ(*r.leaks[0].bytes_per_inference, 128.0);
}

// A thread that begins once and never ends (an exception past
// --inference-fn's return probe) leaves the other thread's inferences
// whole: counted, and its leak found.
TEST(ThreadSplit, AnInferenceNeverEndedLeavesTheOtherThreadsCounted) {
  std::string log = "[MEM][1] INFER begin 99 thread=2\n[MEM][2] INFER end 99 thread=2\n[MEM][3] INFER begin 1 thread=1\n";
  for (int i = 0; i < 50; ++i)
    log += fmt::format("[MEM][{}] INFER begin {} thread=2\n[MEM][{}] ALLOC size=100 addr={:#x} site=run.c:4 thread=2\n"
                       "[MEM][{}] INFER end {} thread=2\n",
                       10 + 3 * i, 100 + i, 11 + 3 * i, 0x1000 + 0x100 * i, 12 + 3 * i, 100 + i);
  auto run = analyse(Format::log, log);
  const AnalysisResult& r = run->result;
  EXPECT_EQ(r.inferences, 51u);
  EXPECT_EQ(r.overlapping_inferences, 50u);
  EXPECT_EQ(r.inference_marks.spans.size(), 52u);
  ASSERT_EQ(r.leaks.size(), 1u);
  ASSERT_TRUE(r.leaks[0].bytes_per_inference);
  EXPECT_DOUBLE_EQ(*r.leaks[0].bytes_per_inference, 100.0);
}

// Before any end marker a begin ends the inference before it (firmware may
// mark only begins), whichever thread began it. When that thread's end then
// comes, it is that inference's: its span ends there, and it does not close
// another thread's (two threads' first inferences read as 3 for 2, the
// second's span cut short, its end taken for the third's).
TEST(ThreadSplit, AnEndAfterAnotherThreadsBeginEndsItsOwnInference) {
  auto run = analyse(Format::log,
                     "[MEM][10] INFER begin 1 thread=1\n[MEM][20] INFER begin 2 thread=2\n"
                     "[MEM][30] ALLOC size=8 addr=0x100 site=a.c:1 thread=1\n[MEM][40] INFER end 1 thread=1\n"
                     "[MEM][50] INFER end 2 thread=2\n[MEM][60] INFER begin 3 thread=1\n[MEM][70] INFER end 3 thread=1\n");
  const AnalysisResult& r = run->result;
  EXPECT_EQ(r.inferences, 3u);
  EXPECT_EQ(r.overlapping_inferences, 1u);
  ASSERT_EQ(r.inference_marks.spans.size(), 3u);
  const uint64_t ends[] = {40, 50, 70};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r.inference_marks.spans[i].number, i + 1);
    EXPECT_EQ(r.inference_marks.spans[i].end_time, std::optional<uint64_t>(ends[i])) << i;
  }
  // Marking only begins, two threads taking turns: one sequence, as before.
  std::string begins_only;
  for (int i = 1; i <= 60; ++i)
    begins_only += fmt::format("[MEM][{}] INFER begin {} thread={}\n[MEM][{}] ALLOC size=64 addr={:#x} site=run.c:4 thread={}\n",
                               2 * i, i, 1 + i % 2, 2 * i + 1, 0x1000 + 0x100 * i, 1 + i % 2);
  auto alternating = analyse(Format::log, begins_only);
  EXPECT_EQ(alternating->result.inferences, 59u);
  ASSERT_EQ(alternating->result.leaks.size(), 1u);
  EXPECT_DOUBLE_EQ(*alternating->result.leaks[0].bytes_per_inference, 64.0);
}

// A dispatcher begins each inference and hands it to a worker, which ends
// it; the dispatcher runs one or two ahead, beginning the next before the
// worker has ended the one before. Numbered ends find their own inference:
// each end closed the latest begun instead, so 20 inferences read as 21 and
// a leak from the 5th as "from inference 6 on".
TEST(ThreadSplit, AWorkerEndsTheInferenceItWasHandedByItsNumber) {
  for (int ahead : {1, 2}) {
    std::string log;
    uint64_t time = 0;
    auto line = [&](const std::string& what) { log += fmt::format("[MEM][{}] {}\n", time += 10, what); };
    auto begin = [&](int n) {
      line(fmt::format("INFER begin {} thread=1", n));
      line(fmt::format("ALLOC size=64 addr={:#x} site=pre.c:1 thread=1", 0x1000 + 0x100 * n));
    };
    std::vector<uint64_t> ends;
    for (int n = 1; n <= ahead; ++n) begin(n);
    for (int n = 1; n <= 20; ++n) {
      if (n + ahead <= 20) begin(n + ahead);
      line(fmt::format("FREE addr={:#x} thread=2", 0x1000 + 0x100 * n));
      if (n >= 5) line(fmt::format("ALLOC size=128 addr={:#x} site=model.c:9 thread=2", 0x100000 + 0x100 * n));
      line(fmt::format("INFER end {} thread=2", n));
      ends.push_back(time);
    }
    auto run = analyse(Format::log, log);
    const AnalysisResult& r = run->result;
    EXPECT_EQ(r.inferences, 20u) << ahead;
    EXPECT_EQ(r.overlapping_inferences, 0u) << ahead << ": the dispatcher's own, not another thread's";
    ASSERT_EQ(r.inference_marks.spans.size(), 20u) << ahead;
    for (size_t i = 0; i < 20; ++i) {
      EXPECT_EQ(r.inference_marks.spans[i].number, i + 1) << ahead;
      EXPECT_EQ(r.inference_marks.spans[i].end_time, std::optional<uint64_t>(ends[i])) << ahead << " " << i;
    }
    ASSERT_EQ(r.leaks.size(), 1u) << ahead;
    EXPECT_EQ(r.leaks[0].bytes, 16u * 128) << ahead;
    ASSERT_TRUE(r.leaks[0].growth) << ahead;
    EXPECT_EQ(r.leaks[0].growth->first_inference, 5u) << ahead;
    ASSERT_TRUE(r.leaks[0].bytes_per_inference) << ahead;
    EXPECT_DOUBLE_EQ(*r.leaks[0].bytes_per_inference, 128.0) << ahead;
  }
}

// The first inference's end is lost, so its number is remembered as ended
// by the next begin. A later inference of the same number — after a reboot,
// or a counter that wraps — ends by its own end, not that old one's (a
// reviewer's traces read 5 inferences for 6 with the leak at 48 B, and 299
// for 300 with 42 overlaps).
TEST(ThreadSplit, ALostEndDoesNotTakeTheEndOfALaterInferenceOfItsNumber) {
  std::string rebooted;
  uint64_t time = 0, address = 0x20000000;
  auto line = [&](std::string& log, const std::string& what) { log += fmt::format("[MEM][{}] {}\n", time += 10, what); };
  auto inference = [&](std::string& log, int n, bool ended) {
    line(log, fmt::format("INFER begin {} thread=1", n));
    line(log, fmt::format("ALLOC size=32 addr={:#x} site=x.c:1 thread=2", address += 0x100));
    if (ended) line(log, fmt::format("INFER end {} thread=2", n));
  };
  for (int n = 1; n <= 3; ++n) inference(rebooted, n, n != 1);
  line(rebooted, "BOOT");
  for (int n = 1; n <= 3; ++n) inference(rebooted, n, true);
  auto run = analyse(Format::log, rebooted);
  EXPECT_EQ(run->result.inferences, 6u);
  ASSERT_EQ(run->result.leaks.size(), 1u);
  ASSERT_TRUE(run->result.leaks[0].bytes_per_inference);
  EXPECT_DOUBLE_EQ(*run->result.leaks[0].bytes_per_inference, 32.0);

  std::string wrapping;
  time = 0;
  address = 0x1000;
  for (int k = 1; k <= 300; ++k) inference(wrapping, k % 256, k != 1);
  run = analyse(Format::log, wrapping);
  EXPECT_EQ(run->result.inferences, 300u);
  EXPECT_EQ(run->result.overlapping_inferences, 0u);
}

}  // namespace
}  // namespace edgemem::test
