// The one record that flows from every decoder to every analysis.
#pragma once

#include <cstdint>
#include <string_view>

namespace edgemem {

using SiteId = uint32_t;  // index into SiteTable; 0 = unknown call site
using PoolId = uint16_t;  // index into PoolTable

inline constexpr SiteId kUnknownSite = 0;

enum class EventKind : uint8_t {
  alloc,
  free,
  realloc,          // old_address resized to (address, size)
  alloc_failed,     // size = request that could not be served
  inference_begin,  // size = inference index if the source numbers them
  inference_end,
  arena_reset,      // every live block of `pool` is released at once
  guard_check,      // size = 0: sentinel intact, otherwise corrupted
  mark,             // site = interned marker text
  counter,          // site = counter name, size = value
  // A device in summary mode (emt SUMMARY record) says what a pool holds
  // instead of sending its blocks: size = bytes used now, address = the
  // highest usage since the pool's previous summary, old_address = the
  // largest free block (kUnknownLargestFree: the allocator cannot tell),
  // align = requests refused since the previous summary. No site, no block.
  pool_summary,
};

inline constexpr uint64_t kUnknownLargestFree = UINT64_MAX;

std::string_view to_string(EventKind kind);

struct Event {
  uint64_t time = 0;         // source clock (cycles) or sequence number, see TimeBase
  uint64_t address = 0;      // absolute address, or offset inside an arena pool
  uint64_t size = 0;
  uint64_t old_address = 0;  // realloc only
  SiteId site = kUnknownSite;
  uint32_t align = 0;        // 0 = not reported
  uint32_t thread = 0;
  PoolId pool = 0;
  EventKind kind = EventKind::mark;

  bool operator==(const Event&) const = default;
};

// Where Event::time comes from, so presenters know whether it is a clock.
enum class TimeBase : uint8_t { sequence, cycles };

}  // namespace edgemem
