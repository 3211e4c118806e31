// Long synthetic benchmark traces in the seed binary and text formats.
// Deterministic: the same arguments give the same bytes.
#pragma once

#include <cstdint>
#include <cstdio>

namespace edgemem::bench {

// `events` records; binary = seed binary records, else "[MEM]" lines.
void write_bench(FILE* out, uint64_t events, bool binary);

}  // namespace edgemem::bench
