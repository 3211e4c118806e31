// Long synthetic benchmark traces in the seed binary and text formats.
// Deterministic: the same arguments give the same bytes.
#pragma once

#include <cstdint>
#include <cstdio>

namespace edgemem::bench {

// `events` records; binary = seed binary records, else "[MEM]" lines.
void write_bench(FILE* out, uint64_t events, bool binary);

// `events` "[MEM]" lines of an inference loop for the HTML report's
// benchmark: an arena whose temporaries sit at the same offsets every
// inference and are reset, heap temporaries at random slots from three
// call stacks, and 644 B leaked every 10th inference from
// main.c:40;run_inference;lstm_eval;model.c:58.
void write_report_trace(FILE* out, uint64_t events);

}  // namespace edgemem::bench
