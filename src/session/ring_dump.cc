#include "session/ring_dump.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace edgemem {
namespace {

uint32_t u32_at(std::string_view bytes, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(bytes[at + static_cast<size_t>(i)]);
  return v;
}

}  // namespace

bool is_ring_dump(std::span<const uint8_t> head) {
  return head.size() >= kRingDumpMagic.size() && std::memcmp(head.data(), kRingDumpMagic.data(), kRingDumpMagic.size()) == 0;
}

std::optional<RingDump> unwrap_ring_dump(std::string_view dump, std::string& error) {
  // magic, size, head, tail, dropped (5 x u32), then the storage pointer:
  // 4 bytes on a 32-bit target, 4 of padding and 8 on a 64-bit one.
  constexpr size_t kFields = 20;
  if (dump.size() < kFields) {
    error = fmt::format("offset {}: an em_ring dump ends inside its header ({} of its 24 bytes)", dump.size(), dump.size());
    return std::nullopt;
  }
  RingDump r;
  r.size = u32_at(dump, 4);
  r.head = u32_at(dump, 8);
  r.tail = u32_at(dump, 12);
  r.dropped = u32_at(dump, 16);
  if (r.size == 0 || (r.size & (r.size - 1)) != 0) {
    error = fmt::format("offset 4: an em_ring's size is a power of two (em_ring_init makes it one), this one reads {}",
                        r.size);
    return std::nullopt;
  }
  if (dump.size() == 24 + uint64_t{r.size}) r.header_bytes = 24;
  else if (dump.size() == 32 + uint64_t{r.size}) r.header_bytes = 32;
  else {
    error = fmt::format("offset {}: an em_ring dump is its 24-byte header (32 on a 64-bit target) and then its {} bytes "
                        "of storage, {} or {} bytes in all; this one has {} (dump the struct, then `size` bytes from "
                        "its `data`: docs/device.md)",
                        dump.size(), r.size, 24 + uint64_t{r.size}, 32 + uint64_t{r.size}, dump.size());
    return std::nullopt;
  }
  const uint32_t unread = r.head - r.tail;  // positions wrap as uint32_t, as the device's do
  if (unread > r.size) {
    error = fmt::format("offset 8: the head ({}) is {} bytes past the tail ({}), more than the ring's {}: not a "
                        "consistent em_ring (a dump taken while it was written, or another struct)",
                        r.head, unread, r.tail, r.size);
    return std::nullopt;
  }
  const std::string_view storage = dump.substr(r.header_bytes);
  const uint32_t start = r.tail & (r.size - 1);
  const uint32_t first = std::min(unread, r.size - start);
  r.unread.reserve(unread);
  r.unread.append(storage.substr(start, first));
  r.unread.append(storage.substr(0, unread - first));
  return r;
}

}  // namespace edgemem
