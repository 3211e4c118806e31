// emt version 2: the layout `edgemem record`'s preload library writes and
// the emt decoder reads (docs/formats/emt.md, "Version 2"). Shared by both
// sides so the numbers are stated once. Header-only and free of the C++
// library, because the preload library runs inside malloc.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgemem::emt2 {

// The file starts with one page holding SYNC and HEADER (version 2), zero
// padded; fixed-size chunks follow, each owned by one thread, so a writer
// claims space with one atomic add and the kernel keeps what it wrote in a
// shared file mapping even when the process is killed.
inline constexpr uint64_t kVersion = 2;
inline constexpr size_t kHeaderBytes = 4096;
inline constexpr size_t kChunkBytes = 64 * 1024;

// Chunk header: magic, thread slot, chunk index, bytes of records after the
// header (stored after each complete record), the writer's sequence number
// before the chunk's first record (records carry deltas from it).
inline constexpr uint8_t kChunkMagic[4] = {'C', 'H', 'K', '2'};
inline constexpr size_t kMagicAt = 0, kSlotAt = 4, kIndexAt = 8, kUsedAt = 12, kBaseSeqAt = 16;
inline constexpr size_t kChunkHeaderBytes = 24;
inline constexpr size_t kChunkPayloadBytes = kChunkBytes - kChunkHeaderBytes;

// Pools of a recording.
inline constexpr uint8_t kPoolMalloc = 0;  // malloc, new and friends
inline constexpr uint8_t kPoolMmap = 1;    // anonymous mmap

// Records inside a chunk: a tag byte, then ULEB128 fields (text = length +
// bytes). `dseq` is the record's global sequence number minus the previous
// one of the same chunk (the chunk's base for the first). `address` of
// ALLOC and FREE is zigzag(address - the chunk's previous ALLOC/FREE
// address, 0 for the first).
enum Tag : uint8_t {
  kAlloc = 0x30,      // dseq, pool, address, size, alignment, stack node
  kFree = 0x31,       // dseq, pool, address
  kAllocFail = 0x32,  // dseq, pool, size, alignment, stack node
  kNode = 0x33,       // node id, parent id (0 = root), return address
  kModule = 0x34,     // dseq, load bias, start, end, path
  kModuleGone = 0x35, // dseq, start
  kThread = 0x36,     // dseq, thread id (kernel tid), name
  kWall = 0x37,       // dseq, CLOCK_REALTIME ns, CLOCK_MONOTONIC ns
  kInferBegin = 0x38, // dseq, inference index
  kInferEnd = 0x39,   // dseq, inference index
};

inline size_t put_varint(uint8_t* out, uint64_t value) {
  size_t n = 0;
  while (value >= 0x80) {
    out[n++] = static_cast<uint8_t>(value | 0x80);
    value >>= 7;
  }
  out[n++] = static_cast<uint8_t>(value);
  return n;
}

inline void put_u32(uint8_t* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}

inline void put_u64(uint8_t* out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}

}  // namespace edgemem::emt2
