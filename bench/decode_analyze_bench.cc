// Decode + full analysis throughput on in-memory traces (no disk in the
// loop). bench/compare.sh runs the same work end to end against baselines.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <vector>

#include "analysis/gap_index.h"
#include "edgemem/analyzer.h"
#include "trace_writer.h"

namespace {

std::string make_trace(uint64_t events, bool binary) {
  char* data = nullptr;
  size_t size = 0;
  FILE* f = open_memstream(&data, &size);
  edgemem::bench::write_bench(f, events, binary);
  std::fclose(f);
  std::string out(data, size);
  std::free(data);
  return out;
}

void run(benchmark::State& state, edgemem::Format format, const std::string& trace, uint64_t events) {
  for (auto _ : state) {
    edgemem::TraceContext context;
    edgemem::Analyzer analyzer(context);
    auto decoder = edgemem::make_decoder(format, context, analyzer);
    const auto* p = reinterpret_cast<const uint8_t*>(trace.data());
    for (size_t i = 0; i < trace.size(); i += 1 << 20)
      decoder->feed({p + i, std::min<size_t>(1 << 20, trace.size() - i)});
    decoder->finish();
    benchmark::DoNotOptimize(analyzer.finish());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * trace.size()));
}

void BM_SeedBinDecodeAnalyze(benchmark::State& state) {
  static const std::string trace = make_trace(2'000'000, true);
  run(state, edgemem::Format::seedbin, trace, 2'000'000);
}
BENCHMARK(BM_SeedBinDecodeAnalyze)->Unit(benchmark::kMillisecond);

void BM_TextLogDecodeAnalyze(benchmark::State& state) {
  static const std::string trace = make_trace(2'000'000, false);
  run(state, edgemem::Format::log, trace, 2'000'000);
}
BENCHMARK(BM_TextLogDecodeAnalyze)->Unit(benchmark::kMillisecond);

// The analyses alone: the seed binary trace decoded once into events, then
// replayed into a fresh analyzer, so a profile shows what src/analysis owns.
// The replay reads 96 MB of recorded events from memory: it is not a
// faster decoder's ceiling.
struct Recorded final : edgemem::EventSink {
  std::vector<edgemem::Event> events;
  void on_event(const edgemem::Event& e) override { events.push_back(e); }
};

void BM_SeedBinAnalyzeOnly(benchmark::State& state) {
  static const std::string trace = make_trace(2'000'000, true);
  edgemem::TraceContext decoded;
  Recorded recorded;
  auto decoder = edgemem::make_decoder(edgemem::Format::seedbin, decoded, recorded);
  decoder->feed({reinterpret_cast<const uint8_t*>(trace.data()), trace.size()});
  decoder->finish();
  for (auto _ : state) {
    edgemem::TraceContext context = decoded;
    edgemem::Analyzer analyzer(context);
    for (const edgemem::Event& e : recorded.events) analyzer.on_event(e);
    benchmark::DoNotOptimize(analyzer.finish());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * recorded.events.size()));
}
BENCHMARK(BM_SeedBinAnalyzeOnly)->Unit(benchmark::kMillisecond);

// The exact fragmentation pass alone, on the seed trace's pattern: 256
// reused 1 KiB slots, a block of random size at a slot's start, so every
// live block leaves a gap behind it and frees merge runs of free slots.
void BM_GapIndexSlots(benchmark::State& state) {
  constexpr uint64_t kSlots = 256, kSlot = 1024;
  uint64_t ops = 0;
  for (auto _ : state) {
    edgemem::GapIndex gaps;
    gaps.extend(0, kSlots * kSlot);
    std::vector<uint64_t> size(kSlots, 0);
    uint64_t rng = 0x2545F4914F6CDD1Dull;
    for (int i = 0; i < 1'000'000; ++i) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      uint64_t slot = (rng >> 33) % kSlots;
      if (size[slot]) {
        gaps.release(slot * kSlot, size[slot]);
        size[slot] = 0;
      } else {
        size[slot] = 16 + (rng >> 45) % (kSlot - 16);
        gaps.occupy(slot * kSlot, size[slot]);
      }
      benchmark::DoNotOptimize(gaps.largest_free());
    }
    ops += 1'000'000;
  }
  state.SetItemsProcessed(static_cast<int64_t>(ops));
}
BENCHMARK(BM_GapIndexSlots)->Unit(benchmark::kMillisecond);

// A fragmented heap served from its top (glibc's top chunk, newlib's
// wilderness): 20,000 small holes no request fits, and the largest gap
// shrinking on every allocation. It once rescanned every chunk per
// allocation (0.85 M lines/s end to end against ~5 M on other traces).
void BM_GapIndexFragmentedTop(benchmark::State& state) {
  uint64_t ops = 0;
  for (auto _ : state) {
    edgemem::GapIndex gaps;
    gaps.extend(0, uint64_t{1} << 30);
    for (uint64_t i = 0; i < 20000; ++i) gaps.occupy(i * 64, 48);
    uint64_t top = 20000 * 64;
    std::vector<uint64_t> live;
    for (int i = 0; i < 1'000'000; ++i) {
      gaps.occupy(top, 64);
      live.push_back(top);
      top += 64;
      if (live.size() > 1000) gaps.release(live[live.size() - 1001], 64);
      benchmark::DoNotOptimize(gaps.largest_free());
    }
    ops += 1'000'000;
  }
  state.SetItemsProcessed(static_cast<int64_t>(ops));
}
BENCHMARK(BM_GapIndexFragmentedTop)->Unit(benchmark::kMillisecond);

// A TFLite-Micro-style arena: the same temporaries at the same offsets in
// every inference, persistent blocks below them. Guards the arena top
// tracking, which once went quadratic on exactly this pattern.
void BM_ArenaTemporariesDecodeAnalyze(benchmark::State& state) {
  static const std::string trace = [] {
    std::string t = "[MEM][0] POOL name=arena kind=arena size=65536\n";
    t += "[MEM][1] ALLOC size=4096 offset=0 site=micro_allocator.cc:310 pool=arena\n";
    uint64_t c = 2;
    for (int i = 0; i < 100000; ++i) {
      t += "[MEM][" + std::to_string(c++) + "] INFER begin\n";
      uint64_t off = 4096;
      for (int k = 0; k < 8; ++k, off += 512)
        t += "[MEM][" + std::to_string(c++) + "] ALLOC size=500 align=16 offset=" + std::to_string(off) +
             " site=op" + std::to_string(k) + ".cc:10 pool=arena\n";
      t += "[MEM][" + std::to_string(c++) + "] RESET pool=arena\n";
      t += "[MEM][" + std::to_string(c++) + "] ALLOC size=4096 offset=0 site=micro_allocator.cc:310 pool=arena\n";
      t += "[MEM][" + std::to_string(c++) + "] INFER end\n";
    }
    return t;
  }();
  run(state, edgemem::Format::log, trace, 100000 * 12);
}
BENCHMARK(BM_ArenaTemporariesDecodeAnalyze)->Unit(benchmark::kMillisecond);

// Decode only: the same traces into a sink that only touches each event, so
// the decoders' own rate shows apart from the analyses' (issue #13: the text
// decoder must run well above the 10 M lines/s end-to-end goal).
class TouchSink final : public edgemem::EventSink {
 public:
  void on_event(const edgemem::Event& e) override { sum_ += e.time ^ e.address ^ e.size ^ e.site ^ e.pool; }
  uint64_t sum() const { return sum_; }

 private:
  uint64_t sum_ = 0;
};

void run_decode_only(benchmark::State& state, edgemem::Format format, const std::string& trace, uint64_t events) {
  for (auto _ : state) {
    edgemem::TraceContext context;
    TouchSink sink;
    auto decoder = edgemem::make_decoder(format, context, sink);
    const auto* p = reinterpret_cast<const uint8_t*>(trace.data());
    for (size_t i = 0; i < trace.size(); i += 1 << 20)
      decoder->feed({p + i, std::min<size_t>(1 << 20, trace.size() - i)});
    decoder->finish();
    if (decoder->stats().events != events) state.SkipWithError("decoded a different number of events");
    benchmark::DoNotOptimize(sink.sum());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * trace.size()));
}

void BM_SeedBinDecodeOnly(benchmark::State& state) {
  static const std::string trace = make_trace(2'000'000, true);
  run_decode_only(state, edgemem::Format::seedbin, trace, 2'000'000);
}
BENCHMARK(BM_SeedBinDecodeOnly)->Unit(benchmark::kMillisecond);

void BM_TextLogDecodeOnly(benchmark::State& state) {
  static const std::string trace = make_trace(2'000'000, false);
  run_decode_only(state, edgemem::Format::log, trace, 2'000'000);
}
BENCHMARK(BM_TextLogDecodeOnly)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
