// Linker map parsing throughput on an in-memory synthetic GNU ld map (no
// disk in the loop). bench/map_bench.sh runs `edgemem map` end to end
// against grep on maps of tens of MB.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "map_writer.h"
#include "static/linker_map.h"

namespace {

std::string make_map(uint64_t objects) {
  char* data = nullptr;
  size_t size = 0;
  FILE* f = open_memstream(&data, &size);
  edgemem::bench::write_gnu_map(f, objects);
  std::fclose(f);
  std::string out(data, size);
  std::free(data);
  return out;
}

void BM_ParseGnuMap(benchmark::State& state) {
  static const std::string text = make_map(10000);  // about 8 MB
  for (auto _ : state) {
    std::string error;
    auto map = edgemem::parse_linker_map(text, error);
    benchmark::DoNotOptimize(map);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseGnuMap)->Unit(benchmark::kMillisecond);

}  // namespace
