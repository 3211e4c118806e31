// emt versions 2 and 3: the layouts `edgemem record`'s preload library and
// its parent write and the emt decoder reads (docs/formats/emt.md, "Version
// 2" and "Version 3"). Shared by every writer (the preload library, the
// compactor, an eBPF recorder) and the reader so the numbers are stated
// once. Header-only and free of the C++ library, because the preload
// library runs inside malloc.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgemem::emt2 {

// The file starts with one page holding SYNC and HEADER (version 2), zero
// padded; fixed-size chunks follow, each owned by one thread, so a writer
// claims space with one atomic add and the kernel keeps what it wrote in a
// shared file mapping even when the process is killed.
inline constexpr uint64_t kVersion = 2;
// Version 3: the same chunks with the compact records below; the byte after
// HEADER names the layout: chunked (zero padding, then 64 KiB chunks: what
// the recorded process writes) or packed (a zstd stream of the chunks' used
// bytes: what `edgemem record` leaves once the process has ended).
inline constexpr uint64_t kVersion3 = 3;
inline constexpr uint8_t kLayoutChunked = 0;
inline constexpr uint8_t kLayoutPacked = 1;
// Packed in zstd frames of whole chunks, each at most kFrameBytes unpacked
// with its own checksum: a reader applies a frame's records only once the
// checksum holds, so damage loses that frame and never reads as records.
inline constexpr uint8_t kLayoutPackedFrames = 2;
inline constexpr size_t kFrameBytes = 1 << 20;
inline constexpr size_t kHeaderBytes = 4096;
inline constexpr size_t kChunkBytes = 64 * 1024;

// Chunk header: magic, thread slot, chunk index, bytes of records after the
// header (stored after each complete record), the writer's sequence number
// before the chunk's first record (records carry deltas from it).
inline constexpr uint8_t kChunkMagic[4] = {'C', 'H', 'K', '2'};
inline constexpr size_t kMagicAt = 0, kSlotAt = 4, kIndexAt = 8, kUsedAt = 12, kBaseSeqAt = 16;
inline constexpr size_t kChunkHeaderBytes = 24;
inline constexpr size_t kChunkPayloadBytes = kChunkBytes - kChunkHeaderBytes;
inline constexpr size_t kStoppedBytes = 10;  // a STOPPED record: tag + 9-byte count; every chunk keeps room for one

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
  kModule = 0x34,     // dseq, load bias, start, end, path [NUL, GNU build ID]
  kModuleGone = 0x35, // dseq, start
  kThread = 0x36,     // dseq, thread id (kernel tid), name
  kWall = 0x37,       // dseq, CLOCK_REALTIME ns, CLOCK_MONOTONIC ns
  kInferBegin = 0x38, // dseq, inference index
  kInferEnd = 0x39,   // dseq, inference index
  // The recording stopped: the file could not be opened again or grow. One
  // field, the calls not recorded since, always 9 bytes long (a ULEB128 with
  // padding continuation bits) so the process can update it in place.
  kStopped = 0x3A,
  // A block resized where it lies: the one at `old address` now covers
  // [address, address + size), which overlaps it (the rest of a mapping a
  // munmap or mprotect cut part of, or the whole put back after the call
  // failed). It keeps its stack; no stack node of its own.
  kResize = 0x3B,  // dseq, pool, old address, address, size
  // The recording began with an attach (`record --pid`): the process had
  // blocks before it that the recording never saw. One field, flags (0).
  // Written once, by the first thread to record, after its THREAD record.
  kAttached = 0x3C,
  // After an attach: a free (or realloc) of a malloc block made before the
  // attach, which is not in the recording. One field: the block's usable
  // size (malloc_usable_size). No sequence number: it is counted, not placed.
  kUnseenFree = 0x3D,
  // Version 3 only. Compact malloc-pool records: flag bits in the tag say
  // which fields are present. kSeqGiven absent: dseq is 1. ALLOC with
  // kAddressGiven absent: the block is the one last freed with a size of the
  // same size slot. FREE with kAddressGiven absent: a distance d names the
  // chunk's (d+1)-th most recent compact ALLOC (see kRecent below).
  kSmallAlloc = 0x40,  // [dseq], size, [address], stack node
  kSmallFree = 0x44,   // [dseq], distance | address
};

inline constexpr uint8_t kSeqGiven = 1, kAddressGiven = 2;
inline constexpr bool is_small_alloc(uint8_t tag) { return (tag & ~3u) == kSmallAlloc; }
inline constexpr bool is_small_free(uint8_t tag) { return (tag & ~3u) == kSmallFree; }

// The state compact records are encoded against, kept the same way by
// writer and reader and started afresh in every chunk (a chunk is read on
// its own): the last kRecent compact ALLOCs by their number in the chunk,
// and per size slot the last block such a FREE released.
inline constexpr uint32_t kRecent = 1024;
inline constexpr uint32_t kSizeSlots = 64;
inline constexpr uint32_t size_slot(uint64_t size) {
  return static_cast<uint32_t>((size * 0x9E3779B97F4A7C15ull) >> 58);
}

inline uint64_t zigzag(uint64_t delta) {
  return (delta << 1) ^ static_cast<uint64_t>(static_cast<int64_t>(delta) >> 63);
}
inline uint64_t unzigzag(uint64_t z) { return (z >> 1) ^ (0 - (z & 1)); }

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
