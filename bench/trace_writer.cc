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

// First-fit heap over [base, base+size) as newlib's or FreeRTOS heap_4 would place blocks.
struct FirstFitHeap {
  uint64_t base, size;
  std::vector<std::pair<uint64_t, uint64_t>> used;  // sorted (addr, size)
  bool alloc(uint64_t n, uint64_t& addr) {
    n = (n + 7) & ~uint64_t{7};
    uint64_t cursor = base;
    for (size_t i = 0; i <= used.size(); ++i) {
      uint64_t limit = i < used.size() ? used[i].first : base + size;
      if (limit - cursor >= n) {
        addr = cursor;
        used.insert(used.begin() + static_cast<long>(i), {cursor, n});
        return true;
      }
      if (i < used.size()) cursor = used[i].first + used[i].second;
    }
    return false;
  }
  void release(uint64_t addr) {
    for (size_t i = 0; i < used.size(); ++i)
      if (used[i].first == addr) {
        used.erase(used.begin() + static_cast<long>(i));
        return;
      }
  }
};

}  // namespace

void write_demo(FILE* out) {
  // An 80 MHz Cortex-M4 keyword spotter: TFLM-style arena for tensors plus a
  // malloc heap for the audio front end.
  uint64_t t = 1000;
  auto tick = [&](uint64_t cycles) { return t += cycles; };
  fmt::print(out, "boot: kws demo v1.2 (TFLM arena 80 KiB, heap 12 KiB)\n");
  fmt::print(out, "[MEM][{}] POOL name=arena kind=arena size=81920\n", tick(10));
  fmt::print(out, "[MEM][{}] POOL name=heap kind=heap base=0x20018000 size=12288\n", tick(10));
  uint64_t top = 0;
  auto arena_alloc = [&](uint64_t size, const char* site) {
    uint64_t off = top;
    top += (size + 15) & ~uint64_t{15};
    fmt::print(out, "[MEM][{}] ALLOC size={} align=16 offset={} site={} pool=arena\n", tick(120), size, off, site);
    return off;
  };
  auto arena_free = [&](uint64_t off, uint64_t size) {
    fmt::print(out, "[MEM][{}] FREE offset={} pool=arena\n", tick(90), off);
    if (off + ((size + 15) & ~uint64_t{15}) == top) top = off;
  };
  // Persistent: interpreter state, tensor metadata, LSTM weights cache.
  arena_alloc(18432, "micro_allocator.cc:310");
  arena_alloc(12288, "micro_allocator.cc:412");
  arena_alloc(9872, "lstm_eval.cc:61");
  FirstFitHeap heap{0x20018000, 12288, {}};
  Lcg rng;
  std::vector<std::pair<uint64_t, uint64_t>> mfcc;  // live heap buffers (addr, size)
  const int inferences = 45;
  for (int i = 1; i <= inferences; ++i) {
    fmt::print(out, "[MEM][{}] INFER begin {}\n", tick(1000), i);
    // Audio front end: MFCC buffers sized by the utterance (40..160 frames x 32 bins x 1 B).
    uint64_t frames = 40 + rng.next() % 121;
    uint64_t n = frames * 20;
    uint64_t addr;
    if (heap.alloc(n, addr)) {
      fmt::print(out, "[MEM][{}] ALLOC size={} align=8 addr=0x{:08x} site=mfcc.c:57 pool=heap\n", tick(300), n, addr);
      mfcc.emplace_back(addr, n);
    } else {
      fmt::print(out, "[MEM][{}] ALLOC_FAIL size={} align=8 site=mfcc.c:57 pool=heap\n", tick(300), n);
    }
    // Keep the last three utterances for smoothing; drop an older one.
    if (mfcc.size() > 3) {
      size_t victim = rng.next() % (mfcc.size() - 1);
      fmt::print(out, "[MEM][{}] FREE addr=0x{:08x} pool=heap\n", tick(200), mfcc[victim].first);
      heap.release(mfcc[victim].first);
      mfcc.erase(mfcc.begin() + static_cast<long>(victim));
    }
    // LSTM op: a 161-float state cache per time step that is never returned.
    arena_alloc(644, "lstm.cc:88");
    uint64_t conv = arena_alloc(4096, "conv.cc:140");
    uint64_t dw = arena_alloc(2304, "depthwise_conv.cc:96");
    arena_free(dw, 2304);
    arena_free(conv, 4096);
    fmt::print(out, "I (main) inference {} score=0.{:02d}\n", i, 40 + rng.next() % 59);
    fmt::print(out, "[MEM][{}] GUARD ok pool=arena\n", tick(50));
    fmt::print(out, "[MEM][{}] INFER end {}\n", tick(640000), i);
    tick(79360000);  // one keyword window per second
  }
}

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

}  // namespace edgemem::bench
