// The part of an emt version 2 or 3 stream after its HEADER
// (docs/formats/emt.md): 64 KiB chunks each written by one thread of the
// recorded process (the chunked layout), or the same chunks' used bytes in
// a zstd stream (version 3's packed layout, what `edgemem record` leaves).
// Records are merged back into the process's global order by their
// sequence numbers; call-stack nodes become sites, symbolised offline with
// the module map the recording carries.
//
// A chunk is collected whole before it is parsed, so the same bytes give
// the same events however they are split into reads, and memory stays
// bounded by one chunk, the zstd window, one zstd frame's output (1 MiB,
// held until its checksum is checked) and the records waiting for an
// earlier one.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <optional>
#include <queue>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "edgemem/decoder.h"
#include "edgemem/emt_v2.h"
#include "recorded_stacks.h"

namespace edgemem {

class EmtV2Reader {
 public:
  // Records that wait for an earlier sequence number (a thread's chunk read
  // before another's: a hundred busy threads keep millions waiting) are
  // bounded by the bytes they take packed, about 15 a record; past this,
  // the earliest is applied, and records of the numbers it passed are
  // applied late when they come (DecodeStats::out_of_order_records) or, if
  // they never do, counted as lost.
  static constexpr size_t kMaxPendingBytes = size_t{256} << 20;
  static constexpr size_t kKeptQueues = 1024;
  static constexpr size_t kMaxNodes = 1 << 22;
  // The largest zstd window a packed recording may ask for (8 MiB); the
  // compactor's level needs 2 MiB.
  static constexpr int kMaxWindowLog = 23;
  static constexpr size_t kMaxThreadNames = 4096;

  enum class Layout { chunked, packed };

  // Chunked: the first chunk is at `chunks_at` (the end of the header page).
  EmtV2Reader(TraceContext& context, EventSink& sink, DecodeStats& stats, uint64_t version, uint64_t chunks_at,
              bool name_frames);
  ~EmtV2Reader();
  void push(std::span<const uint8_t> bytes, uint64_t offset);
  void finish();

 private:
  struct Record {
    uint64_t seq = 0;
    uint8_t tag = 0;
    uint32_t slot = 0;
    uint64_t v[5] = {};
    std::string text;
  };
  // The first waiting record of a thread: threads' records wait in their
  // own queues (each already in order), merged by their first records.
  // A thread's records waiting in arrival order, packed as varints.
  class Pending {
   public:
    bool empty() const { return read_ == bytes_.size(); }
    size_t bytes() const { return bytes_.size() - read_; }
    uint64_t front_seq() const;
    void push(const Record& r);
    Record pop();

   private:
    std::vector<uint8_t> bytes_;
    size_t read_ = 0;
  };
  struct Head {
    uint64_t seq;
    uint32_t slot;
    bool operator>(const Head& o) const { return seq != o.seq ? seq > o.seq : slot > o.slot; }
  };
  struct Node {
    uint64_t parent, address;
  };
  struct Module {
    uint64_t end;
    uint32_t id;  // in stacks_
  };
  struct RecentAlloc {
    uint64_t address, size;
  };
  struct ZstdStream;

  void push_layout_byte(uint8_t byte, uint64_t offset);
  void push_chunked(std::span<const uint8_t> bytes, uint64_t offset);
  void push_packed(std::span<const uint8_t> bytes, uint64_t offset);
  void push_unpacked(std::span<const uint8_t> bytes);
  void parse_chunk();
  void parse_packed_chunk(bool cut_off);
  // The records of one chunk, `records_at`: input offset of its first
  // record byte, for errors. `cut_off`: the input ended inside the chunk.
  void parse_records(std::span<const uint8_t> records, uint32_t slot, uint64_t seq, uint64_t records_at,
                     bool cut_off);
  // False at a record that cannot be complete or valid.
  bool parse_record(std::span<const uint8_t> bytes, size_t& at, uint32_t slot, uint64_t& seq);
  bool parse_small(std::span<const uint8_t> bytes, size_t& at, uint32_t slot, uint64_t& seq);
  void give_up(uint64_t offset, std::string what);
  // Verified frames: the frame being read is damaged; its records are
  // dropped and the next frame is looked for.
  void lose_frame(std::string_view why);
  bool seek_frame(std::span<const uint8_t> bytes, uint64_t offset, size_t& at);
  void keep_raw(std::span<const uint8_t> taken);
  void queue(Record&& r);
  void drain(bool all);
  void apply(const Record& r);
  SiteId site(uint32_t slot, uint64_t node);
  // A thread's stack node as a node of the process-wide tree; nullopt when
  // that tree is full (damaged input).
  std::optional<uint32_t> stack(uint32_t slot, uint64_t node);
  // The module mapped at `address` now, as an id in stacks_.
  uint32_t module_at(uint64_t address) const;
  PoolId pool(uint64_t id);

  TraceContext& context_;
  EventSink& sink_;
  DecodeStats& stats_;
  uint64_t version_;
  bool layout_known_;
  Layout layout_ = Layout::chunked;
  bool failed_ = false;  // packed: the stream is damaged; the rest is not read
  uint64_t chunks_at_;
  std::vector<uint8_t> chunk_;
  uint64_t chunk_offset_ = 0;

  // Packed layout: the zstd stream and the chunk being unpacked from it.
  std::unique_ptr<ZstdStream> zstd_;
  bool frame_open_ = false;           // inside a zstd frame (not at its end)
  uint64_t frame_at_ = 0;             // input offset where it began
  size_t zstd_hint_ = 1;              // input the stream asked for last: the rest of its current block
  bool zstd_flushing_ = false;        // its last call filled the output buffer
  uint64_t input_end_ = 0;            // offset after the last byte pushed
  uint64_t packed_at_ = 0;            // offset after the compressed bytes zstd has taken
  uint64_t decoded_at_ = 0;           // offset after the compressed bytes of the last output zstd gave
  uint64_t unpacked_ = 0;             // decompressed bytes so far
  std::array<uint64_t, 3> packed_header_{};  // slot, base sequence, bytes of records
  int packed_field_ = 0;              // fields of packed_header_ complete
  unsigned packed_shift_ = 0;         // of the varint being assembled
  uint64_t packed_chunk_at_ = 0;      // decompressed offset of the chunk's first record byte
  uint64_t chunk_end_ = 0;            // decompressed offset after the last whole chunk
  // Layout 02: each frame's output is held until zstd has checked its checksum.
  bool verified_frames_ = false;
  std::vector<uint8_t> frame_out_;
  std::vector<uint8_t> frame_raw_;    // the frame's compressed bytes zstd has taken (header first)
  bool rescanning_ = false;           // reading a lost frame's bytes again for the next frame
  bool seeking_ = false;              // after a damaged frame, until the next frame's magic
  uint32_t magic_window_ = 0;         // the last four bytes looked at while seeking
  uint64_t damaged_from_ = 0;         // input offset where the damaged frame began

  // Per chunk: what its address deltas and compact records refer to.
  uint64_t last_address_ = 0;  // the chunk's previous ALLOC/FREE address
  uint32_t small_allocs_ = 0;
  std::vector<RecentAlloc> recent_;           // kRecent entries, by number % kRecent
  std::array<uint64_t, emt2::kSizeSlots> freed_{};  // per size slot

  std::unordered_map<uint32_t, Pending> waiting_;  // per slot, in arrival order
  std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heads_;  // one per non-empty queue
  size_t waiting_bytes_ = 0;
  uint64_t passed_ = 0;  // numbers passed over at the bound whose records have not come yet
  uint64_t next_seq_ = 1;
  std::unordered_map<uint64_t, Node> nodes_;     // slot << 32 | node id
  std::unordered_map<uint64_t, SiteId> sites_;   // slot << 32 | node id
  std::unordered_map<uint64_t, uint32_t> canonical_;  // slot << 32 | node id -> node in stacks_
  // One site per distinct stack, named when asked for (by the SiteTable,
  // which shares this tree and may outlive the reader). Not capped at
  // SiteTable::kMaxSites: the tree has at most one node per thread node
  // read (and kMaxDepth per damaged one), itself capped at kMaxNodes.
  std::shared_ptr<RecordedStacks> stacks_;
  std::unordered_map<uint32_t, SiteId> stack_sites_;  // node in stacks_ -> site
  std::unordered_map<uint32_t, uint64_t> tids_;  // slot -> kernel thread id
  static constexpr size_t kMaxPools = 256;
  std::unordered_map<uint64_t, PoolId> pools_;   // record pool id -> interned
  std::array<std::optional<PoolId>, 2> known_pools_;  // malloc and mmap, asked for on every event
  std::optional<std::pair<uint64_t, SiteId>> last_site_;  // the last node asked for
  std::map<uint64_t, Module> modules_;           // start address -> module
};

}  // namespace edgemem
