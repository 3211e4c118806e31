#include "record/ebpf_emt_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "edgemem/emt_v2.h"

namespace edgemem {

namespace e2 = emt2;

namespace {

void varint(std::vector<uint8_t>& out, uint64_t value) {
  uint8_t buf[10];
  size_t n = e2::put_varint(buf, value);
  out.insert(out.end(), buf, buf + n);
}

}  // namespace

EmtV2FileWriter::~EmtV2FileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

bool EmtV2FileWriter::open(const std::string& path, std::string& error) {
  unlink(path.c_str());
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    error = fmt::format("cannot create {}: {}", path, strerror(errno));
    return false;
  }
  std::vector<uint8_t> page(e2::kHeaderBytes, 0);
  const uint8_t sync[] = {0x7E, 'e', 'm', 't', '!', 0x00, 0x01};
  std::memcpy(page.data(), sync, sizeof sync);
  size_t n = sizeof sync;
  n += e2::put_varint(page.data() + n, e2::kVersion);
  n += e2::put_varint(page.data() + n, 0);  // Event time is the sequence number, as the preload's
  if (pwrite(fd_, page.data(), page.size(), 0) != static_cast<ssize_t>(page.size())) {
    error = fmt::format("cannot write {}: {}", path, strerror(errno));
    return false;
  }
  process_.slot = ++next_slot_;
  start_chunk(process_);
  return true;
}

// A chunk's place in the file is taken when it is started, as the preload's
// threads claim theirs: chunks then lie in the order of their first records,
// which keeps the reader's merge window small.
void EmtV2FileWriter::start_chunk(Chunk& c) {
  c.index = next_index_++;
  c.bytes.assign(e2::kChunkBytes, 0);
  c.used = 0;
  c.last_address = 0;
  std::memcpy(c.bytes.data() + e2::kMagicAt, e2::kChunkMagic, sizeof e2::kChunkMagic);
  e2::put_u32(c.bytes.data() + e2::kSlotAt, c.slot);
  e2::put_u32(c.bytes.data() + e2::kIndexAt, c.index);
  e2::put_u64(c.bytes.data() + e2::kBaseSeqAt, c.last_seq);
}

void EmtV2FileWriter::flush(Chunk& c) {
  if (c.bytes.empty()) return;
  e2::put_u32(c.bytes.data() + e2::kUsedAt, c.used);
  auto offset = static_cast<off_t>(e2::kHeaderBytes + uint64_t{c.index} * e2::kChunkBytes);
  if (pwrite(fd_, c.bytes.data(), c.bytes.size(), offset) != static_cast<ssize_t>(c.bytes.size())) failed_ = true;
}

void EmtV2FileWriter::room(Chunk& c, size_t bytes) {
  if (c.used + bytes <= e2::kChunkPayloadBytes) return;
  flush(c);
  start_chunk(c);
}

void EmtV2FileWriter::put(Chunk& c, const std::vector<uint8_t>& record) {
  room(c, record.size());
  std::memcpy(c.bytes.data() + e2::kChunkHeaderBytes + c.used, record.data(), record.size());
  c.used += static_cast<uint32_t>(record.size());
}

void EmtV2FileWriter::sequenced(Chunk& c, uint8_t tag, std::vector<uint64_t> fields, int address_at,
                                const std::string* text) {
  // Room first: a new chunk restarts the sequence and address deltas.
  room(c, 1 + 10 * (fields.size() + 2) + (text ? text->size() : 0));
  if (address_at >= 0) {
    auto delta = static_cast<int64_t>(fields[address_at] - c.last_address);
    c.last_address = fields[address_at];
    fields[address_at] = (static_cast<uint64_t>(delta) << 1) ^ static_cast<uint64_t>(delta >> 63);
  }
  std::vector<uint8_t> r{tag};
  ++seq_;
  varint(r, seq_ - c.last_seq);
  c.last_seq = seq_;
  for (uint64_t f : fields) varint(r, f);
  if (text) {
    varint(r, text->size());
    r.insert(r.end(), text->begin(), text->end());
  }
  put(c, r);
}

EmtV2FileWriter::Chunk& EmtV2FileWriter::thread(uint32_t tid, const std::string& name) {
  auto [it, fresh] = threads_.try_emplace(tid);
  Chunk& c = it->second;
  if (fresh) {
    c.slot = ++next_slot_;
    c.last_seq = seq_;
    start_chunk(c);
    std::string shown = name.substr(0, 15);
    sequenced(c, e2::kThread, {tid}, -1, &shown);
  }
  return c;
}

uint32_t EmtV2FileWriter::stack_node(Chunk& c, std::span<const uint64_t> stack) {
  uint32_t node = 0;
  for (size_t i = stack.size(); i-- > 0;) {
    auto [it, fresh] = c.nodes.try_emplace({node, stack[i]}, static_cast<uint32_t>(c.nodes.size() + 1));
    if (fresh) {
      std::vector<uint8_t> r{e2::kNode};
      varint(r, it->second);
      varint(r, node);
      varint(r, stack[i]);
      put(c, r);
    }
    node = it->second;
  }
  return node;
}

void EmtV2FileWriter::wall(uint64_t realtime_ns, uint64_t monotonic_ns) {
  sequenced(process_, e2::kWall, {realtime_ns, monotonic_ns});
}

void EmtV2FileWriter::module(uint64_t bias, uint64_t start, uint64_t end, const std::string& path,
                             const std::string& build_id) {
  const std::string text = build_id.empty() ? path : path + '\0' + build_id;
  sequenced(process_, e2::kModule, {bias, start, end}, -1, &text);
}

void EmtV2FileWriter::attached() { put(process_, {e2::kAttached, 0}); }

void EmtV2FileWriter::unseen_free() { put(process_, {e2::kUnseenFree, 0}); }

void EmtV2FileWriter::alloc(uint32_t tid, const std::string& thread_name, uint64_t address, uint64_t size,
                            uint64_t align, std::span<const uint64_t> stack, uint8_t pool) {
  Chunk& c = thread(tid, thread_name);
  uint32_t node = stack_node(c, stack);
  sequenced(c, e2::kAlloc, {pool, address, size, align, node}, 1);
}

void EmtV2FileWriter::alloc_failed(uint32_t tid, const std::string& thread_name, uint64_t size, uint64_t align,
                                   std::span<const uint64_t> stack, uint8_t pool) {
  Chunk& c = thread(tid, thread_name);
  uint32_t node = stack_node(c, stack);
  sequenced(c, e2::kAllocFail, {pool, size, align, node});
}

void EmtV2FileWriter::free(uint32_t tid, const std::string& thread_name, uint64_t address, uint8_t pool) {
  sequenced(thread(tid, thread_name), e2::kFree, {pool, address}, 1);
}

void EmtV2FileWriter::resize(uint32_t tid, const std::string& thread_name, uint64_t old_address, uint64_t address,
                             uint64_t size, uint8_t pool) {
  sequenced(thread(tid, thread_name), e2::kResize, {pool, old_address, address, size});
}

void EmtV2FileWriter::inference(uint32_t tid, const std::string& thread_name, bool begin, uint64_t index) {
  sequenced(thread(tid, thread_name), begin ? e2::kInferBegin : e2::kInferEnd, {index});
}

bool EmtV2FileWriter::close(std::string& error) {
  if (fd_ < 0) return true;
  flush(process_);
  for (auto& [tid, c] : threads_) flush(c);
  if (ftruncate(fd_, static_cast<off_t>(e2::kHeaderBytes + uint64_t{next_index_} * e2::kChunkBytes)) != 0) failed_ = true;
  ::close(fd_);
  fd_ = -1;
  if (failed_) error = fmt::format("the recording could not be written completely ({})", strerror(errno));
  return !failed_;
}

}  // namespace edgemem
