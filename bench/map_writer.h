// A synthetic GNU ld map of any size, shaped like a real one: memory
// configuration, output sections with input sections from objects and
// archive members, wrapped long names, *fill*, symbols, discarded sections.
#pragma once

#include <cstdint>
#include <cstdio>

namespace edgemem::bench {

// `objects` objects, each contributing code, rodata, data and bss.
void write_gnu_map(std::FILE* out, uint64_t objects);

}  // namespace edgemem::bench
