#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "trace_writer.h"

namespace edgemem::bench {
namespace {

struct Lcg {  // fixed generator so every run writes identical files
  uint64_t s = 0x2545F4914F6CDD1Dull;
  uint32_t next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(s >> 33);
  }
};

}  // namespace

void write_bench(FILE* out, uint64_t events, bool binary) {
  // A device that runs for days: per inference ~11 events over 256 reused
  // 1 KiB slots of a 256 KiB heap (about 130 blocks live at any time), and a
  // slow leak of 644 B every 1000th inference - the live set stays the size
  // an MCU heap can hold, as in a real capture.
  Lcg rng;
  const uint64_t base = 0x20000000, slots = 256, slot_size = 1024;
  std::vector<uint64_t> live_slot(slots, 0);
  uint64_t leak_next = base + slots * slot_size;
  uint64_t written = 0, inference = 0, cycle = 0;
  auto be32 = [&](uint32_t v) {
    uint8_t b[4] = {uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)};
    fwrite(b, 1, 4, out);
  };
  auto rec = [&](uint8_t header) { fputc(header, out); };
  while (written < events) {
    ++inference;
    cycle += 1000;
    if (binary) { rec(0xB1); be32(static_cast<uint32_t>(inference)); }
    else fmt::print(out, "[MEM][{}] INFER begin {}\n", cycle, inference);
    ++written;
    for (int k = 0; k < 9 && written < events; ++k) {
      uint64_t slot = rng.next() % slots;
      uint64_t addr = base + slot * slot_size;
      if (live_slot[slot]) {
        if (binary) { rec(0xF1); be32(static_cast<uint32_t>(addr)); }
        else fmt::print(out, "[MEM][{}] FREE addr=0x{:x}\n", cycle += 37, addr);
        live_slot[slot] = 0;
      } else {
        uint64_t size = 16 + rng.next() % (slot_size - 16);
        if (binary) { rec(0xA2); be32(static_cast<uint32_t>(size)); be32(static_cast<uint32_t>(addr)); }
        else fmt::print(out, "[MEM][{}] ALLOC size={} align=8 addr=0x{:x} site=op{}.cc:{}\n", cycle += 53, size, addr, slot % 8, 100 + slot);
        live_slot[slot] = size;
      }
      ++written;
    }
    if (inference % 1000 == 0 && written < events) {
      if (binary) { rec(0xA2); be32(644); be32(static_cast<uint32_t>(leak_next)); }
      else fmt::print(out, "[MEM][{}] ALLOC size=644 align=8 addr=0x{:x} site=lstm.cc:88\n", cycle += 41, leak_next);
      leak_next += 648;
      ++written;
    }
    if (written < events) {
      if (binary) { rec(0xB2); be32(static_cast<uint32_t>(inference)); }
      else fmt::print(out, "[MEM][{}] INFER end {}\n", cycle += 500, inference);
      ++written;
    }
  }
}

void write_report_trace(FILE* out, uint64_t events) {
  Lcg rng;
  const uint64_t heap = 0x20000000, heap_size = 64ull << 20, slots = 64, slot_size = 4096;
  const char* stacks[] = {"main.c:40;run_inference;conv_eval;conv.cc:210", "main.c:40;run_inference;softmax.cc:77",
                          "main.c:40;preprocess;fft.c:31"};
  std::vector<bool> live(slots, false);
  uint64_t leak_next = heap + slots * slot_size, written = 0, inference = 0, cycle = 0;
  auto room = [&] { return written++ < events; };  // every line counts, the last inference may be cut short
  if (room()) fmt::print(out, "[MEM][0] POOL name=arena kind=arena size=16384\n");
  if (room()) fmt::print(out, "[MEM][0] POOL name=heap kind=heap base=0x{:x} size={}\n", heap, heap_size);
  while (written < events) {
    ++inference;
    if (room()) fmt::print(out, "[MEM][{}] INFER begin {}\n", cycle += 1000, inference);
    // The same plan every inference, as TFLite Micro's: eight tensors end to end.
    for (uint64_t k = 0, offset = 0; k < 8; offset += 1024 + 128 * k++)
      if (room())
        fmt::print(out, "[MEM][{}] ALLOC size={} align=16 offset={} site=micro_allocator.cc:{} pool=arena\n",
                   cycle += 20, 1024 + 128 * k, offset, 300 + k);
    for (int k = 0; k < 12; ++k) {
      uint64_t slot = rng.next() % slots, addr = heap + slot * slot_size;
      if (!room()) break;
      if (live[slot]) fmt::print(out, "[MEM][{}] FREE addr=0x{:x}\n", cycle += 37, addr);
      else
        fmt::print(out, "[MEM][{}] ALLOC size={} align=8 addr=0x{:x} site={}\n", cycle += 53,
                   64 + rng.next() % (slot_size - 64), addr, stacks[slot % std::size(stacks)]);
      live[slot] = !live[slot];
    }
    if (inference % 10 == 0 && room()) {
      fmt::print(out, "[MEM][{}] ALLOC size=644 align=4 addr=0x{:x} site=main.c:40;run_inference;lstm_eval;model.c:58\n",
                 cycle += 41, leak_next);
      leak_next += 648;
    }
    if (room()) fmt::print(out, "[MEM][{}] RESET pool=arena\n", cycle += 200);
    if (room()) fmt::print(out, "[MEM][{}] INFER end {}\n", cycle += 500, inference);
  }
}

}  // namespace edgemem::bench
