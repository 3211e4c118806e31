// Inference markers from one thread, leaks on another: a worker thread's
// blocks are judged over its own run, not by the marking thread's clock.
#include <gtest/gtest.h>

#include "test_support.h"

namespace edgemem::test {
namespace {

struct Threads {
  TraceContext context;
  Analyzer analyzer{context};
  PoolId heap = context.pools.intern("malloc", PoolKind::heap);
  uint64_t time = 0, next_address = 0x10000;

  uint64_t alloc(uint32_t thread, const char* site, uint64_t size) {
    Event e;
    e.kind = EventKind::alloc;
    e.time = ++time;
    e.thread = thread;
    e.pool = heap;
    e.site = context.sites.intern(site);
    e.address = next_address += 0x1000;
    e.size = size;
    analyzer.on_event(e);
    return e.address;
  }
  void free(uint32_t thread, uint64_t address) {
    Event e;
    e.kind = EventKind::free;
    e.time = ++time;
    e.thread = thread;
    e.pool = heap;
    e.address = address;
    analyzer.on_event(e);
  }
  void marker(uint32_t thread, EventKind kind, uint64_t number) {
    Event e;
    e.kind = kind;
    e.time = ++time;
    e.thread = thread;
    e.size = number;
    analyzer.on_event(e);
  }
};

const PersistentBlock* persistent_at(const AnalysisResult& r, const std::string& site) {
  for (const auto& p : r.persistent)
    if (p.site == site) return &p;
  return nullptr;
}

// `inference_loop --threads 2 --leak` as it ran when the worker thread got
// through its whole loop before the main thread marked its first inference.
TEST(ThreadClock, AWorkerThreadsLeakMadeBeforeTheMarkingThreadsFirstInferenceIsALeak) {
  Threads t;
  const uint32_t main = 100, worker = 101;
  t.alloc(worker, "worker;setup", 4096);  // its own set-up buffer: kept, not growing
  std::vector<uint64_t> ring;
  for (int i = 0; i < 30; ++i) {
    t.free(worker, t.alloc(worker, "worker;run_inference", 1024));
    t.alloc(worker, "worker;describe_output", 128);
    ring.push_back(t.alloc(worker, "worker;ring", 64));  // the last three kept
    if (ring.size() > 3) {
      t.free(worker, ring.front());
      ring.erase(ring.begin());
    }
  }
  for (uint64_t i = 1; i <= 30; ++i) {
    t.marker(main, EventKind::inference_begin, i);
    t.free(main, t.alloc(main, "main;run_inference", 1024));
    t.marker(main, EventKind::inference_end, i);
  }
  AnalysisResult r = t.analyzer.finish();
  ASSERT_EQ(r.leaks.size(), 1u);
  EXPECT_EQ(r.leaks[0].site, "worker;describe_output");
  EXPECT_EQ(r.leaks[0].bytes, 30u * 128);
  EXPECT_EQ(r.leaks[0].count, 30u);
  EXPECT_TRUE(r.leaks[0].off_inference_thread);
  EXPECT_FALSE(r.leaks[0].bytes_per_inference) << "the marking thread's inferences are not the worker's";
  const PersistentBlock* setup = persistent_at(r, "worker;setup");
  ASSERT_TRUE(setup);
  EXPECT_EQ(setup->reason, LiveReason::not_growing);
  ASSERT_TRUE(persistent_at(r, "worker;ring"));
  EXPECT_EQ(persistent_at(r, "worker;ring")->count, 3u);
}

// As `inference_loop --threads 2 --leak` ran once under ASan: the worker's
// first event came at once, then it waited while the main thread ran its
// first inferences, and its 40 leaks came in the last half of the run. On
// its own clock they span its life; on the run's clock, under half.
TEST(ThreadClock, AWorkerThatIdlesBeforeItsLoopIsJudgedOnItsOwnEvents) {
  Threads t;
  const uint32_t main = 100, worker = 101;
  t.free(worker, t.alloc(worker, "worker;thread_state", 64));
  auto main_inference = [&](uint64_t i) {
    t.marker(main, EventKind::inference_begin, i);
    for (int k = 0; k < 4; ++k) t.free(main, t.alloc(main, "main;run_inference", 1024));
    t.marker(main, EventKind::inference_end, i);
  };
  for (uint64_t i = 1; i <= 80; ++i) main_inference(i);
  std::vector<uint64_t> ring;
  for (uint64_t i = 81; i <= 120; ++i) {
    main_inference(i);
    t.free(worker, t.alloc(worker, "worker;run_inference", 1024));
    t.alloc(worker, "worker;describe_output", 128);
    ring.push_back(t.alloc(worker, "worker;ring", 64));
    if (ring.size() > 3) {
      t.free(worker, ring.front());
      ring.erase(ring.begin());
    }
  }
  AnalysisResult r = t.analyzer.finish();
  ASSERT_EQ(r.leaks.size(), 1u);
  EXPECT_EQ(r.leaks[0].site, "worker;describe_output");
  EXPECT_EQ(r.leaks[0].count, 40u);
  EXPECT_TRUE(r.leaks[0].off_inference_thread);
  ASSERT_TRUE(persistent_at(r, "worker;ring"));
  EXPECT_EQ(persistent_at(r, "worker;ring")->reason, LiveReason::not_growing);
}

// A thread's clock keeps a bounded number of checkpoints: over 100,000 of
// its events, set-up buffers, a late ring and a steady leak are still told
// apart after its idle start.
TEST(ThreadClock, ALongWorkersClockStaysTrueWhenItsCheckpointsThin) {
  Threads t;
  const uint32_t main = 100, worker = 101;
  t.alloc(worker, "worker;setup", 4096);
  for (uint64_t i = 1; i <= 30000; ++i) {
    t.marker(main, EventKind::inference_begin, i);
    t.free(main, t.alloc(main, "main;run_inference", 1024));
    t.marker(main, EventKind::inference_end, i);
  }
  std::vector<uint64_t> ring;
  for (int i = 0; i < 50000; ++i) {
    t.free(worker, t.alloc(worker, "worker;run_inference", 1024));
    if (i % 500 == 0) t.alloc(worker, "worker;describe_output", 128);
    if (i >= 45000) {
      ring.push_back(t.alloc(worker, "worker;ring", 64));
      if (ring.size() > 8) {
        t.free(worker, ring.front());
        ring.erase(ring.begin());
      }
    }
  }
  AnalysisResult r = t.analyzer.finish();
  ASSERT_EQ(r.leaks.size(), 1u);
  EXPECT_EQ(r.leaks[0].site, "worker;describe_output");
  EXPECT_EQ(r.leaks[0].count, 100u);
  ASSERT_TRUE(persistent_at(r, "worker;setup"));
  EXPECT_EQ(persistent_at(r, "worker;setup")->reason, LiveReason::not_growing);
  ASSERT_TRUE(persistent_at(r, "worker;ring"));
  EXPECT_EQ(persistent_at(r, "worker;ring")->count, 8u);
}

// A thread per request: past the analysis's cap, threads share one clock,
// and the threads before it keep theirs.
TEST(ThreadClock, AThreadPerRequestKeepsTheClocksOfTheFirstThreads) {
  Threads t;
  const uint32_t main = 100, worker = 101;
  t.free(worker, t.alloc(worker, "worker;thread_state", 64));
  for (uint64_t i = 1; i <= 40; ++i) {
    t.marker(main, EventKind::inference_begin, i);
    t.free(main, t.alloc(main, "main;run_inference", 1024));
    t.marker(main, EventKind::inference_end, i);
  }
  for (uint32_t request = 0; request < 6000; ++request) {
    const uint32_t thread = 1000 + request;
    t.free(thread, t.alloc(thread, "request;parse", 256));
    if (request % 150 == 0) t.alloc(worker, "worker;describe_output", 128);
  }
  AnalysisResult r = t.analyzer.finish();
  ASSERT_EQ(r.leaks.size(), 1u);
  EXPECT_EQ(r.leaks[0].site, "worker;describe_output");
  EXPECT_EQ(r.leaks[0].count, 40u);
}

// A thread per request, each leaving one block: on its own clock a thread's
// one block says nothing about growth; over the run, the blocks of all
// request threads keep coming, and that is a leak.
TEST(ThreadClock, AThreadPerRequestThatLeavesOneBlockEachLeaks) {
  Threads t;
  const uint32_t main = 100;
  for (uint64_t i = 1; i <= 100; ++i) {
    t.marker(main, EventKind::inference_begin, i);
    t.free(main, t.alloc(main, "main;run_inference", 1024));
    const uint32_t request = 1000 + static_cast<uint32_t>(i);
    t.free(request, t.alloc(request, "handler;parse", 256));
    t.alloc(request, "handler;session", 32);
    t.marker(main, EventKind::inference_end, i);
  }
  AnalysisResult r = t.analyzer.finish();
  ASSERT_EQ(r.leaks.size(), 1u);
  EXPECT_EQ(r.leaks[0].site, "handler;session");
  EXPECT_EQ(r.leaks[0].count, 100u);
  EXPECT_TRUE(r.leaks[0].off_inference_thread);
}

// The marking thread keeps its own rules: what it made before its first
// inference is persistent, what it adds every inference leaks per inference.
TEST(ThreadClock, TheMarkingThreadIsStillJudgedByItsInferences) {
  Threads t;
  const uint32_t main = 100, worker = 101;
  for (int i = 0; i < 5; ++i) t.alloc(main, "main;load_model", 2048);
  for (uint64_t i = 1; i <= 20; ++i) {
    t.marker(main, EventKind::inference_begin, i);
    t.alloc(main, "main;describe_output", 128);
    t.free(worker, t.alloc(worker, "worker;scratch", 512));
    t.marker(main, EventKind::inference_end, i);
  }
  AnalysisResult r = t.analyzer.finish();
  ASSERT_EQ(r.leaks.size(), 1u);
  EXPECT_EQ(r.leaks[0].site, "main;describe_output");
  EXPECT_FALSE(r.leaks[0].off_inference_thread);
  ASSERT_TRUE(r.leaks[0].bytes_per_inference);
  EXPECT_NEAR(*r.leaks[0].bytes_per_inference, 128.0, 0.5);
  const PersistentBlock* model = persistent_at(r, "main;load_model");
  ASSERT_TRUE(model);
  EXPECT_EQ(model->reason, LiveReason::before_first_inference);
  EXPECT_EQ(model->bytes, 5u * 2048);
}

// One history buffer grown by realloc every inference: its live count
// stays 1, its bytes climb. A vector that doubles a few times is not that.
TEST(ThreadClock, ABufferGrownByReallocEveryInferenceLeaks) {
  Threads t;
  const uint32_t main = 100;
  uint64_t history = 0, scratch = 0;
  for (uint64_t i = 1; i <= 64; ++i) {
    t.marker(main, EventKind::inference_begin, i);
    if (history) t.free(main, history);
    history = t.alloc(main, "main;append_history", 16 * i);
    if (i == 1 || i == 2 || i == 4 || i == 8) {  // doubling, then stable
      if (scratch) t.free(main, scratch);
      scratch = t.alloc(main, "main;vector_grow", 64 * i);
    }
    t.marker(main, EventKind::inference_end, i);
  }
  AnalysisResult r = t.analyzer.finish();
  ASSERT_EQ(r.leaks.size(), 1u);
  EXPECT_EQ(r.leaks[0].site, "main;append_history");
  EXPECT_EQ(r.leaks[0].bytes, 64u * 16);
  EXPECT_EQ(r.leaks[0].count, 1u);
  ASSERT_TRUE(r.leaks[0].bytes_per_inference);
  EXPECT_NEAR(*r.leaks[0].bytes_per_inference, 16.0, 0.5);
}

}  // namespace
}  // namespace edgemem::test
