// The chunked part of an emt version 2 stream (docs/formats/emt.md): after
// the header page, 64 KiB chunks each written by one thread of the recorded
// process. Records are merged back into the process's global order by
// their sequence numbers; call-stack nodes become sites, symbolised offline
// with the module map the recording carries.
//
// A chunk is collected whole before it is parsed, so the same bytes give
// the same events however they are split into reads, and memory stays
// bounded by one chunk plus the records waiting for an earlier one.
#pragma once

#include <cstdint>
#include <map>
#include <queue>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "edgemem/decoder.h"
#include "static/process_symbolizer.h"

namespace edgemem {

class EmtV2Reader {
 public:
  // Records that wait for an earlier sequence number (a thread's chunk read
  // before another's) are bounded; past this many, the earliest is emitted
  // and the missing number counted as lost.
  static constexpr size_t kMaxPending = 1 << 20;
  static constexpr size_t kMaxNodes = 1 << 22;
  static constexpr size_t kMaxThreadNames = 4096;

  // `chunks_at`: input offset of the first chunk (the end of the header page).
  EmtV2Reader(TraceContext& context, EventSink& sink, DecodeStats& stats, uint64_t chunks_at);
  void push(uint8_t byte, uint64_t offset);
  void finish();

 private:
  struct Record {
    uint64_t seq = 0;
    uint8_t tag = 0;
    uint32_t slot = 0;
    uint64_t v[5] = {};
    std::string text;
  };
  struct Later {
    bool operator()(const Record& a, const Record& b) const { return a.seq > b.seq; }
  };
  struct Node {
    uint64_t parent, address;
  };
  struct Module {
    uint64_t end, bias;
    std::string path;
  };

  void parse_chunk();
  // False at a record that cannot be complete or valid.
  bool parse_record(std::span<const uint8_t> bytes, size_t& at, uint32_t slot, uint64_t& seq);
  void queue(Record r);
  void drain(bool all);
  void apply(const Record& r);
  SiteId site(uint32_t slot, uint64_t node);
  std::string stack_text(uint32_t slot, uint64_t node);
  PoolId pool(uint64_t id);
  // The frames one return address stands for, with the module map as it is now.
  const std::vector<std::string>& frames_at(uint64_t address);

  TraceContext& context_;
  EventSink& sink_;
  DecodeStats& stats_;
  uint64_t chunks_at_;
  std::vector<uint8_t> chunk_;
  uint64_t chunk_offset_ = 0;
  uint64_t last_address_ = 0;  // the chunk's previous ALLOC/FREE address

  std::priority_queue<Record, std::vector<Record>, Later> pending_;
  uint64_t next_seq_ = 1;
  std::unordered_map<uint64_t, Node> nodes_;     // slot << 32 | node id
  std::unordered_map<uint64_t, SiteId> sites_;   // slot << 32 | node id
  std::unordered_map<uint32_t, uint64_t> tids_;  // slot -> kernel thread id
  std::map<uint64_t, Module> modules_;           // start address -> module
  std::unordered_map<uint64_t, std::vector<std::string>> frames_;  // return address -> frames
  ProcessSymbolizer symbolizer_;
};

}  // namespace edgemem
