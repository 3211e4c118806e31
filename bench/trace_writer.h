// Synthetic traces: the bundled demo (a TFLite-Micro-like firmware with the
// defects of seed 001/002) and long benchmark traces in the seed binary and
// text formats. Deterministic: the same arguments give the same bytes.
#pragma once

#include <cstdint>
#include <cstdio>

namespace edgemem::bench {

void write_demo(FILE* out);
// `events` records; binary = seed binary records, else "[MEM]" lines.
void write_bench(FILE* out, uint64_t events, bool binary);

}  // namespace edgemem::bench
