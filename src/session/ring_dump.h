// target/'s RAM ring (em_ring) as a debugger dumps it after a crash or a
// halt: the struct, then its storage. The storage alone is no stream: the
// bytes from the tail to the head, wrapping, are what the host has not
// read; the rest is stale (drained already, or the lap before). The
// layout is docs/device.md's ("Reading the ring with a debugger").
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace edgemem {

// The struct's first bytes: EM_RING_MAGIC, 0x474E5245, little-endian.
inline constexpr std::string_view kRingDumpMagic = "ERNG";

struct RingDump {
  std::string unread;  // from tail to head, in the order written
  uint32_t size = 0, head = 0, tail = 0, dropped = 0;
  unsigned header_bytes = 0;  // 24 (a 32-bit target's struct) or 32 (a 64-bit one's)
};

bool is_ring_dump(std::span<const uint8_t> head);
// Why a dump whose first bytes are `head` (at least its first 20) cannot be
// `length` bytes long: a size that is no power of two, or a file other
// than the header and `size` bytes. Empty when it can: checked before a
// file is read whole.
std::string ring_dump_shape_problem(std::string_view head, uint64_t length);
// The unread bytes of a whole dump; nullopt with `error` ("offset N: what")
// when it is not the struct followed by its `size` bytes.
std::optional<RingDump> unwrap_ring_dump(std::string_view dump, std::string& error);

}  // namespace edgemem
