// A Cortex-M image's vector table: the initial stack pointer, then the
// address of the reset handler and of every exception handler, Thumb bit
// set. It names the handlers whatever they are called (libopencm3's
// sys_tick_handler), which a call graph cannot.
#pragma once

#include <cstdint>
#include <optional>
#include <set>

namespace edgemem {

struct ElfImage;

struct VectorTable {
  uint64_t reset = 0;            // the reset handler's address
  std::set<uint64_t> handlers;   // every other handler's (Thumb bit cleared), the reset handler's not
};

// nullopt when the image's vector_words are no vector table: no stack
// pointer first, or no function's address with the Thumb bit after it.
std::optional<VectorTable> read_vector_table(const ElfImage& elf);

}  // namespace edgemem
