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

// magic, size, head, tail, dropped (5 x u32), then the storage pointer:
// 4 bytes on a 32-bit target, 4 of padding and 8 on a 64-bit one.
constexpr size_t kFields = 20;

std::string ring_dump_shape_problem(std::string_view head, uint64_t length) {
  if (head.size() < kFields)
    return fmt::format("offset {}: an em_ring dump ends inside its header ({} of its 24 bytes)", length, length);
  const uint32_t size = u32_at(head, 4);
  if (size == 0 || (size & (size - 1)) != 0)
    return fmt::format("offset 4: an em_ring's size is a power of two (em_ring_init makes it one), this one reads {}",
                       size);
  if (length != 24 + uint64_t{size} && length != 32 + uint64_t{size})
    return fmt::format("offset {}: an em_ring dump is its 24-byte header (32 on a 64-bit target) and then its {} bytes "
                       "of storage, {} or {} bytes in all; this one has {} (dump the struct, then `size` bytes from "
                       "its `data`: docs/device.md)",
                       std::min<uint64_t>(length, 24 + uint64_t{size}), size, 24 + uint64_t{size},
                       32 + uint64_t{size}, length);
  return {};
}

std::optional<RingDump> unwrap_ring_dump(std::string_view dump, std::string& error) {
  error = ring_dump_shape_problem(dump, dump.size());
  if (!error.empty()) return std::nullopt;
  RingDump r;
  r.size = u32_at(dump, 4);
  r.head = u32_at(dump, 8);
  r.tail = u32_at(dump, 12);
  r.dropped = u32_at(dump, 16);
  r.header_bytes = dump.size() == 24 + uint64_t{r.size} ? 24 : 32;
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
