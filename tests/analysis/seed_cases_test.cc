// Each case of the seed articles, rebuilt as a trace, with the numbers the
// article states (or that follow exactly from its construction).
#include <gtest/gtest.h>

#include <cmath>
#include <fmt/format.h>

#include "test_support.h"

namespace edgemem::test {
namespace {

const AllocFailure* first_failure(const AnalysisResult& r) {
  return r.fragmentation.failures.empty() ? nullptr : &r.fragmentation.failures.front();
}

// Seed 001 §4.1: a custom LSTM op allocates a 161-float state cache every
// inference and never returns it.
TEST(SeedCases, LstmLeaks644BytesPerInferenceAtItsSite) {
  MemLog log;
  log("ALLOC size=40588 align=16 offset=0 site=micro_allocator.cc:310");
  uint64_t top = 40588;
  for (int i = 1; i <= 400; ++i) {
    log("INFER begin {}", i);
    log("ALLOC size=644 align=4 offset={} site=lstm.cc:88", top);
    top += 644;
    log("ALLOC size=2048 align=16 offset={} site=conv.cc:140", top);
    log("FREE offset={}", top);
    log("INFER end {}", i);
  }
  AnalyzerOptions options;
  options.default_pool_size = 512 * 1024;
  auto run = analyse(Format::log, log.text, options);
  const AnalysisResult& r = run->result;
  EXPECT_EQ(r.inferences, 400u);
  ASSERT_EQ(r.leaks.size(), 1u);
  EXPECT_EQ(r.leaks[0].site, "lstm.cc:88");
  EXPECT_EQ(r.leaks[0].bytes, 257600u);
  EXPECT_EQ(r.leaks[0].count, 400u);
  EXPECT_DOUBLE_EQ(*r.leaks[0].bytes_per_inference, 644.0);
  EXPECT_EQ(r.leaks[0].type_hint, "float32[161]");
  ASSERT_EQ(r.persistent.size(), 1u);  // weights and interpreter state are live, not leaked
  EXPECT_EQ(r.persistent[0].site, "micro_allocator.cc:310");
  EXPECT_EQ(r.persistent[0].bytes, 40588u);
  EXPECT_NEAR(r.leak_rate_bytes_per_inference, 644.0, 1e-6);
  EXPECT_EQ(r.watermarks[0].shape, Shape::linear);
  // Last inference peaks at 40588 + 400*644 + 2048 = 300236 B of 524288.
  ASSERT_TRUE(r.exhaustion_forecast);
  EXPECT_EQ(r.exhaustion_forecast->remaining_bytes, 524288u - 300236u);
  EXPECT_EQ(r.exhaustion_forecast->inferences, (524288u - 300236u) / 644u);
  EXPECT_EQ(r.peak_bytes, 300236u);
}

// Seed 001 §4.1 log: "Arena used" 41232, 41876, 42520, 43164 at inference
// 100, 200, 300, 400 - the water mark climbs in steps of 644 B.
TEST(SeedCases, LstmStairStepsOf644BytesEveryHundredInferences) {
  MemLog log;
  log("ALLOC size=40588 align=16 offset=0 site=micro_allocator.cc:310");
  uint64_t top = 40588;
  std::vector<double> usage;
  for (int i = 1; i <= 400; ++i) {
    log("INFER begin {}", i);
    if (i % 100 == 0) {
      log("ALLOC size=644 offset={} site=lstm.cc:88", top);
      top += 644;
    }
    log("INFER end {}", i);
    usage.push_back(static_cast<double>(top));
  }
  AnalyzerOptions options;
  options.default_pool_size = 80 * 1024;
  auto run = analyse(Format::log, log.text, options);
  const AnalysisResult& r = run->result;
  EXPECT_EQ(usage[99], 41232);
  EXPECT_EQ(usage[199], 41876);
  EXPECT_EQ(usage[299], 42520);
  EXPECT_EQ(r.peak_bytes, 43164u);
  ASSERT_EQ(r.watermarks.size(), 1u);
  const PoolWatermark& w = r.watermarks[0];
  EXPECT_EQ(w.shape, Shape::stair);
  EXPECT_EQ(w.stairs.steps, 4u);
  EXPECT_DOUBLE_EQ(w.stairs.step_bytes, 644.0);
  EXPECT_DOUBLE_EQ(w.stairs.period_inferences, 100.0);
  // Least squares over (n, usage[n-1]) computed the plain way.
  double n = 400, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < 400; ++i) {
    double x = i + 1;
    sx += x, sy += usage[i], sxx += x * x, sxy += x * usage[i];
  }
  double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  EXPECT_NEAR(w.slope, slope, 1e-9);
  ASSERT_EQ(r.leaks.size(), 1u);
  EXPECT_EQ(r.leaks[0].bytes, 2576u);
  EXPECT_EQ(r.leaks[0].count, 4u);
  EXPECT_DOUBLE_EQ(*r.leaks[0].bytes_per_inference, 6.44);
  ASSERT_TRUE(r.exhaustion_forecast);
  EXPECT_EQ(r.exhaustion_forecast->remaining_bytes, 81920u - 43164u);
  // The slope says how usage rose over the run (6.06 B per inference); the
  // forecast runs at the leak's own rate now, 644 B every 100th inference.
  EXPECT_DOUBLE_EQ(r.exhaustion_forecast->bytes_per_inference, 6.44);
  EXPECT_EQ(r.exhaustion_forecast->inferences, static_cast<uint64_t>(std::floor((81920 - 43164) / 6.44)));
}

// Seed 001 §4.1 "common mistake": A then B allocated, A freed first - the
// counts balance but B keeps A's space stranded below it.
TEST(SeedCases, OutOfLifoFreeStrandsArenaSpaceWhileCountsBalance) {
  MemLog log;
  uint64_t b_live = 0;
  bool have_b = false;
  for (int i = 1; i <= 10; ++i) {
    log("INFER begin {}", i);
    if (have_b) log("FREE offset={}", b_live);
    log("ALLOC size=1024 offset=0 site=op_a.cc:10");
    log("ALLOC size=512 offset=1024 site=op_b.cc:20");
    log("FREE offset=0");
    b_live = 1024;
    have_b = true;
    log("INFER end {}", i);
  }
  AnalyzerOptions options;
  options.default_pool_size = 4096;
  auto run = analyse(Format::log, log.text, options);
  const AnalysisResult& r = run->result;
  EXPECT_EQ(r.lifo.violations, 10u);
  EXPECT_EQ(r.lifo.max_stranded_bytes, 1024u);
  EXPECT_EQ(r.lifo.final_stranded_bytes, 1024u);
  ASSERT_FALSE(r.lifo.sites.empty());
  EXPECT_EQ(r.lifo.sites[0].site, "op_a.cc:10");
  EXPECT_EQ(r.lifo.sites[0].bytes, 10240u);
  // The arena water mark stays at 1536 although only 512 B are live.
  EXPECT_EQ(r.pools[0].final_bytes, 1536u);
  EXPECT_TRUE(r.leaks.empty());  // one B at a time is live: not growing
  for (const auto& s : r.sites) {
    if (s.site == "op_a.cc:10") {
      EXPECT_EQ(s.allocs, s.frees);
    }
  }
}

// Seed 001 §4.2: variable MFCC shapes fragment the heap - 33 %, 56 %, 73 %,
// then a 4 KB request fails while 11 KB are free.
TEST(SeedCases, MfccFragmentationFailsA4KRequestWith11KFree) {
  MemLog log;
  log("POOL name=heap kind=heap base=0x20000000 size=16384");
  auto alloc = [&](uint64_t off, uint64_t size) {
    log("ALLOC size={} addr=0x{:x} pool=heap site=mfcc.c:57", size, 0x20000000 + off);
    return log.t;
  };
  auto free_all = [&](std::vector<uint64_t> offs) {
    for (auto o : offs) log("FREE addr=0x{:x} pool=heap", 0x20000000 + o);
  };
  uint64_t t33 = 0, t56 = 0, t73 = 0;
  for (int i = 1; i <= 150; ++i) {
    log("INFER begin {}", i);
    if (i == 50) {  // free 12 KB, largest 8 KB
      alloc(6144, 2048);
      t33 = alloc(0, 2048);
    } else if (i == 51) {
      free_all({0, 6144});
    } else if (i == 100) {  // free 11.5 KB, largest 5 KB
      alloc(10752, 512);
      alloc(6144, 2048);
      t56 = alloc(0, 2048);
    } else if (i == 101) {
      free_all({0, 6144, 10752});
    } else if (i == 150) {  // free 11 KB in pieces of at most 3 KB
      for (uint64_t off : {15360, 12288, 8192, 4096}) alloc(off, 1024);
      t73 = alloc(0, 1024);
      log("ALLOC_FAIL size=4096 pool=heap site=mfcc.c:57");
    }
    log("INFER end {}", i);
  }
  auto run = analyse(Format::log, log.text);
  const AnalysisResult& r = run->result;
  const auto& curve = r.fragmentation.pools.at(0).curve;
  auto rate_at = [&](uint64_t t) {
    for (auto [time, rate] : curve)
      if (time == t) return rate;
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(rate_at(t33), 1.0 - 8192.0 / 12288.0);
  EXPECT_DOUBLE_EQ(rate_at(t56), 1.0 - 5120.0 / 11776.0);
  EXPECT_DOUBLE_EQ(rate_at(t73), 1.0 - 3072.0 / 11264.0);
  EXPECT_DOUBLE_EQ(*r.fragmentation.max_rate, 1.0 - 3072.0 / 11264.0);
  EXPECT_DOUBLE_EQ(*r.fragmentation.final_rate, 1.0 - 3072.0 / 11264.0);
  EXPECT_EQ(r.fragmentation.band, Band::danger);
  EXPECT_EQ(r.fragmentation.alloc_failures, 1u);
  const AllocFailure* f = first_failure(r);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->size, 4096u);
  EXPECT_EQ(f->total_free, 11264u);
  EXPECT_EQ(f->largest_free, 3072u);
  EXPECT_TRUE(f->fragmentation);
  EXPECT_EQ(f->inference, 150u);
  EXPECT_DOUBLE_EQ(*r.fragmentation.failures_per_1000_inferences, 1000.0 / 150.0);
  EXPECT_DOUBLE_EQ(*r.fragmentation.min_largest_to_request, 0.75);
}

// Seed 001 §4.3: INT8 DepthwiseConv needs a 32-bit accumulator; at the 8th
// inference it asks for 4096 B with 3072 B left in the 96 KB arena.
TEST(SeedCases, DepthwiseConvOverflowsTheArenaBy1024Bytes) {
  MemLog log;
  log("POOL name=arena kind=arena size=98304");
  log("ALLOC size=95232 align=16 offset=0 site=micro_allocator.cc:310 pool=arena");
  for (int i = 1; i <= 10; ++i) {
    log("INFER begin {}", i);
    uint64_t size = i == 8 ? 4096 : 2048;
    log("ALLOC size={} align=16 offset=95232 site=depthwise_conv.cc:211 pool=arena", size);
    log("FREE offset=95232 pool=arena");
    log("GUARD {} pool=arena", i == 8 ? "corrupt" : "ok");
    log("INFER end {}", i);
  }
  auto run = analyse(Format::log, log.text);
  const AnalysisResult& r = run->result;
  ASSERT_EQ(r.overflow_count, 1u);
  const Overflow& o = r.overflows[0];
  EXPECT_EQ(o.site, "depthwise_conv.cc:211");
  EXPECT_EQ(o.offset, 95232u);
  EXPECT_EQ(o.size, 4096u);
  EXPECT_EQ(o.arena_size, 98304u);
  EXPECT_EQ(o.available, 3072u);
  EXPECT_EQ(o.over_by, 1024u);
  EXPECT_EQ(r.guard_failure_count, 1u);
  EXPECT_EQ(r.guard_checks, 10u);
  EXPECT_EQ(r.guard_failures[0].inference, 8u);
  EXPECT_EQ(r.pools[0].peak_bytes, 99328u);
  EXPECT_DOUBLE_EQ(*r.pools[0].peak_margin_pct, 100.0 * (98304.0 - 99328.0) / 98304.0);
}

// Seed 000: ONNX Runtime on STM32H7 - every Ort::Session is created anew and
// never released (256 KB), and of two temporary tensors only one is freed.
TEST(SeedCases, OnnxSessionAndTemporaryTensorLeakInSeedBinaryLog) {
  std::string bin;
  for (uint32_t i = 1; i <= 5; ++i) {
    bin += '\xB1';
    be32(bin, i);
    bin += '\xA2'; be32(bin, 262144); be32(bin, 0x24000000 + (i - 1) * 0x40000);  // session
    bin += '\xA2'; be32(bin, 94208); be32(bin, 0x30000000);                        // 92 KB preprocessing
    bin += '\xA2'; be32(bin, 55296); be32(bin, 0x30020000 + (i - 1) * 0xE000);     // 54 KB layer output
    bin += '\xF1'; be32(bin, 0x30000000);                                          // only the 92 KB one
    bin += '\xB2';
    be32(bin, i);
  }
  auto run = analyse(Format::seedbin, bin);
  const AnalysisResult& r = run->result;
  EXPECT_EQ(run->stats.corrupt_bytes, 0u);
  EXPECT_EQ(r.inferences, 5u);
  ASSERT_EQ(r.leaks.size(), 2u);
  EXPECT_EQ(r.leaks[0].site, "? (262144 B blocks)");
  EXPECT_EQ(r.leaks[0].bytes, 5u * 262144u);
  EXPECT_DOUBLE_EQ(*r.leaks[0].bytes_per_inference, 262144.0);
  EXPECT_EQ(r.leaks[1].site, "? (55296 B blocks)");
  EXPECT_EQ(r.leaks[1].bytes, 5u * 55296u);
  EXPECT_EQ(r.leaks[1].count, 5u);
  EXPECT_DOUBLE_EQ(r.leak_rate_bytes_per_inference, 262144.0 + 55296.0);
}

// Seed 000 in its own record format: A1 (16-bit size) and F1 only, no
// inference markers - "A1 ... 92 / A1 ... 54 / F1 frees only the first".
TEST(SeedCases, PlainSeedRecordsWithoutMarkersListEveryLiveBlockAsLeak) {
  std::string bin;
  for (uint32_t i = 0; i < 3; ++i) {
    bin += '\xA1'; bin += '\x5C'; bin += '\x00'; be32(bin, 0x20001000);
    bin += '\xA1'; bin += '\x36'; bin += '\x00'; be32(bin, 0x20008000 + i * 0x3600);
    bin += '\xF1'; be32(bin, 0x20001000);
  }
  auto run = analyse(Format::seedbin, bin);
  const AnalysisResult& r = run->result;
  ASSERT_EQ(r.leaks.size(), 1u);
  EXPECT_EQ(r.leaks[0].bytes, 3u * 0x3600u);
  EXPECT_EQ(r.leaks[0].count, 3u);
  EXPECT_FALSE(r.leaks[0].bytes_per_inference);
  EXPECT_TRUE(r.persistent.empty());
}

// Seed 000: ONNX aligns to 64 B where ARMv7-M needs 8 B.
TEST(SeedCases, SixtyFourByteAlignmentPaddingIsCountedAgainstEightByte) {
  MemLog log;
  log("ALLOC size=100 align=64 addr=0x1000 site=ort_alloc.cc:12");
  log("ALLOC size=200 align=64 addr=0x1080 site=ort_alloc.cc:12");
  log("ALLOC size=2 align=4 addr=0x1200 site=ort_alloc.cc:20");  // stays at 4: 2 B, not the 6 B of 8
  auto run = analyse(Format::log, log.text);
  EXPECT_EQ(run->result.sizes.padding_bytes, 28u + 56u + 2u);
  EXPECT_EQ(run->result.sizes.padding_bytes_at_8, 4u + 0u + 2u);
  EXPECT_EQ(run->result.sizes.max_align, 64u);
}

// Seed 002: a custom audio front end mallocs 200 B in Init per inference and
// never frees it; heap_free sinks from 48 KB towards 12 KB.
TEST(SeedCases, AudioFrontendLeaks200BytesPerInferenceOnTheHeap) {
  MemLog log;
  log("POOL name=heap kind=heap base=0x20000000 size=49152");
  for (int i = 1; i <= 184; ++i) {
    log.t = static_cast<uint64_t>(i) * 1000000000ull;  // one inference every 10 s at 100 MHz
    log("INFER begin {}", i);
    log("ALLOC size=200 addr=0x{:x} pool=heap site=audio_frontend.cc:57", 0x20000000 + (i - 1) * 200);
    log("ALLOC size=1024 addr=0x2000b000 pool=heap site=kws_model.cc:30");
    log("FREE addr=0x2000b000 pool=heap");
    log("INFER end {}", i);
  }
  AnalyzerOptions options;
  options.clock_hz = 100e6;
  auto run = analyse(Format::log, log.text, options);
  const AnalysisResult& r = run->result;
  ASSERT_EQ(r.leaks.size(), 1u);
  EXPECT_EQ(r.leaks[0].site, "audio_frontend.cc:57");
  EXPECT_EQ(r.leaks[0].bytes, 36800u);
  EXPECT_DOUBLE_EQ(*r.leaks[0].bytes_per_inference, 200.0);
  EXPECT_EQ(r.pools[0].final_bytes, 36800u);  // 48 KB - 36.8 KB = 12 KB free
  ASSERT_TRUE(r.exhaustion_forecast);
  // Last inference peaks at 36800 + 1024: (49152 - 37824) / 200 = 56 more.
  EXPECT_EQ(r.exhaustion_forecast->inferences, 56u);
  ASSERT_TRUE(r.exhaustion_forecast->seconds);
  EXPECT_NEAR(*r.exhaustion_forecast->seconds, 560.0, 1e-6);
}

// Seed 004: memleak shows 1048576 bytes in 1024 allocations from
// PreprocessInput: a temporary colour-converted tensor never freed.
TEST(SeedCases, PreprocessInputLeaksOneMebibyteIn1024Allocations) {
  MemLog log;
  for (int i = 1; i <= 1024; ++i) {
    log("INFER begin {}", i);
    log("ALLOC size=1024 addr=0x{:x} site=TensorRTInference::PreprocessInput", 0x7f0000000000 + i * 0x1000);
    log("ALLOC size=4096 addr=0x7e0000000000 site=InferencePipeline::RunNextFrame");
    log("FREE addr=0x7e0000000000");
    log("INFER end {}", i);
  }
  auto run = analyse(Format::log, log.text);
  const AnalysisResult& r = run->result;
  ASSERT_EQ(r.leaks.size(), 1u);
  EXPECT_EQ(r.leaks[0].site, "TensorRTInference::PreprocessInput");
  EXPECT_EQ(r.leaks[0].bytes, 1048576u);
  EXPECT_EQ(r.leaks[0].count, 1024u);
  EXPECT_EQ(r.leaks[0].type_hint, "float32[256]");
}

}  // namespace
}  // namespace edgemem::test
