// Generated soak traces for the alert tests: a [MEM] text log where the heap
// holds 0 to 4 audio buffers of 800-3,200 B across inference ends (so usage
// at the end markers swings by kilobytes with no leak at all), a scratch
// buffer comes and goes inside every inference, and optionally a 644 B block
// (seed 001's LSTM state cache) is kept from inference `leak_from` on. A
// cache that warms up keeps a 256 B entry from each of the first `warm_up`
// inferences, below the leak's offsets (the heap's usage is its top).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include <fmt/format.h>

namespace edgemem::test {

inline std::string soak_log(uint64_t inferences, std::optional<uint64_t> leak_from, uint32_t seed = 1,
                            uint64_t warm_up = 0) {
  std::mt19937 random(seed);
  std::string log;
  uint64_t t = 0, leak_offset = 1 << 20;
  std::array<uint64_t, 4> held{};  // size of the buffer in each slot, 0 = free
  auto line = [&](const std::string& s) { log += fmt::format("[MEM][{}] {} pool=heap\n", t += 100, s); };
  line("ALLOC size=24576 align=8 offset=0 site=model.cc:10");  // the model, before the first inference
  for (uint64_t i = 1; i <= inferences; ++i) {
    line(fmt::format("INFER begin {}", i));
    line("ALLOC size=2048 align=8 offset=32768 site=conv.cc:140");
    size_t slot = random() % held.size();
    uint64_t offset = 65536 + slot * 4096;
    if (held[slot]) {
      line(fmt::format("FREE offset={}", offset));
      held[slot] = 0;
    } else if (random() % 2) {
      held[slot] = 800 + random() % 2401;
      line(fmt::format("ALLOC size={} align=8 offset={} site=frontend.cc:57", held[slot], offset));
    }
    if (i <= warm_up) line(fmt::format("ALLOC size=256 align=8 offset={} site=cache.cc:31", (512 << 10) + i * 256));
    if (leak_from && i >= *leak_from) {
      line(fmt::format("ALLOC size=644 align=4 offset={} site=lstm.cc:88", leak_offset));
      leak_offset += 644;
    }
    line("FREE offset=32768");
    line(fmt::format("INFER end {}", i));
  }
  return log;
}

}  // namespace edgemem::test
