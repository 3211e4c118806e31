// Writes an emt version 2 recording from outside the recorded process, for
// the eBPF path of `edgemem record`: the layout the preload library writes
// (docs/formats/emt.md, "Version 2"), read by the same decoder. The preload's
// writer lives inside the process (thread-local chunks in a shared mapping,
// allocation-free); this one is a plain class for one writer thread that is
// handed the records already in the recording's order.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "edgemem/emt_v2.h"

namespace edgemem {

class EmtV2FileWriter {
 public:
  EmtV2FileWriter() = default;
  ~EmtV2FileWriter();
  EmtV2FileWriter(const EmtV2FileWriter&) = delete;
  EmtV2FileWriter& operator=(const EmtV2FileWriter&) = delete;

  // Replaces `path`; false with a one-line reason when it cannot be created.
  bool open(const std::string& path, std::string& error);

  // Process records: when recording began, and an object mapped at
  // [start, end) with its load bias (written in a chunk of their own).
  void wall(uint64_t realtime_ns, uint64_t monotonic_ns);
  // `build_id` (raw bytes, may be empty) follows the path after a NUL.
  void module(uint64_t bias, uint64_t start, uint64_t end, const std::string& path, const std::string& build_id);
  // The recording began with an attach (record --pid): ATTACHED, once.
  void attached();
  // After an attach, a free of a block made before it: UNSEEN FREE, of size
  // 0, which says its size is not known (a uprobe sees only the address).
  void unseen_free();

  // Thread records. `thread_name` is used the first time a tid is seen;
  // `stack` holds return addresses, innermost first; `pool` is malloc's
  // (emt2::kPoolMalloc) or anonymous mmap's (emt2::kPoolMmap).
  void alloc(uint32_t tid, const std::string& thread_name, uint64_t address, uint64_t size, uint64_t align,
             std::span<const uint64_t> stack, uint8_t pool = emt2::kPoolMalloc);
  void alloc_failed(uint32_t tid, const std::string& thread_name, uint64_t size, uint64_t align,
                    std::span<const uint64_t> stack, uint8_t pool = emt2::kPoolMalloc);
  void free(uint32_t tid, const std::string& thread_name, uint64_t address, uint8_t pool = emt2::kPoolMalloc);
  // The block at old_address now covers [address, address + size) (a RESIZE record: a mapping trimmed).
  void resize(uint32_t tid, const std::string& thread_name, uint64_t old_address, uint64_t address, uint64_t size,
              uint8_t pool);
  void inference(uint32_t tid, const std::string& thread_name, bool begin, uint64_t index);

  // Events lost before they reached the writer: their sequence numbers are
  // skipped, which the reader counts as lost records.
  void lost(uint64_t events) { seq_ += events; }

  // Writes every chunk and cuts the file to them; false with a reason when
  // a write failed (disk full).
  bool close(std::string& error);

 private:
  struct Chunk {
    uint32_t slot = 0;
    uint32_t index = 0;
    std::vector<uint8_t> bytes;
    uint32_t used = 0;
    uint64_t last_seq = 0;
    uint64_t last_address = 0;
    std::map<std::pair<uint32_t, uint64_t>, uint32_t> nodes;  // (parent, return address) -> id
  };

  Chunk& thread(uint32_t tid, const std::string& name);
  void start_chunk(Chunk& c);
  void flush(Chunk& c);
  void room(Chunk& c, size_t bytes);
  void put(Chunk& c, const std::vector<uint8_t>& record);
  void sequenced(Chunk& c, uint8_t tag, std::vector<uint64_t> fields, int address_at = -1, const std::string* text = nullptr);
  uint32_t stack_node(Chunk& c, std::span<const uint64_t> stack);

  int fd_ = -1;
  bool failed_ = false;
  uint64_t seq_ = 0;
  uint32_t next_slot_ = 0;
  uint32_t next_index_ = 0;
  Chunk process_;
  std::map<uint32_t, Chunk> threads_;
};

}  // namespace edgemem
