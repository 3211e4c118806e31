#include "emt_v2_reader.h"

#include <algorithm>

#include <fmt/format.h>

#include "edgemem/emt_v2.h"

namespace edgemem {
namespace {

namespace e2 = emt2;

constexpr uint64_t kMaxText = 4096;
constexpr size_t kMaxDepth = 256;  // the recorder walks 64 frames; more means a damaged tree

uint32_t u32_at(const std::vector<uint8_t>& b, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{b[at + i]} << (8 * i);
  return v;
}

uint64_t u64_at(const std::vector<uint8_t>& b, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{b[at + i]} << (8 * i);
  return v;
}

bool read_varint(std::span<const uint8_t> b, size_t& at, uint64_t& out) {
  out = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (at >= b.size()) return false;
    uint8_t byte = b[at++];
    out |= uint64_t{byte & 0x7fu} << shift;
    if (!(byte & 0x80)) return true;
  }
  return false;
}

// Numeric fields after the tag (the text, if any, comes last).
struct Shape {
  int numbers;
  bool text;
  bool sequenced;
};

bool shape_of(uint8_t tag, Shape& s) {
  switch (tag) {
    case e2::kAlloc: s = {6, false, true}; return true;
    case e2::kFree: s = {3, false, true}; return true;
    case e2::kAllocFail: s = {5, false, true}; return true;
    case e2::kNode: s = {3, false, false}; return true;
    case e2::kModule: s = {4, true, true}; return true;
    case e2::kModuleGone: s = {2, false, true}; return true;
    case e2::kThread: s = {2, true, true}; return true;
    case e2::kWall: s = {3, false, true}; return true;
    case e2::kInferBegin:
    case e2::kInferEnd: s = {2, false, true}; return true;
    default: return false;
  }
}

}  // namespace

EmtV2Reader::EmtV2Reader(TraceContext& context, EventSink& sink, DecodeStats& stats, uint64_t chunks_at)
    : context_(context), sink_(sink), stats_(stats), chunks_at_(chunks_at), chunk_offset_(chunks_at) {
  context_.time_base = TimeBase::sequence;
}

void EmtV2Reader::push(uint8_t byte, uint64_t offset) {
  if (offset < chunks_at_) {
    // The rest of the header page is zero padding.
    if (byte != 0) {
      if (!stats_.first_problem) stats_.note_problem(offset, 0, "expected zero padding up to the first emt v2 chunk");
      ++stats_.corrupt_bytes;
    }
    return;
  }
  chunk_.push_back(byte);
  if (chunk_.size() == e2::kChunkBytes) parse_chunk();
}

void EmtV2Reader::parse_chunk() {
  std::vector<uint8_t> bytes;
  bytes.swap(chunk_);
  uint64_t at_offset = chunk_offset_;
  chunk_offset_ += e2::kChunkBytes;
  bool whole = bytes.size() == e2::kChunkBytes;
  if (bytes.size() < e2::kChunkHeaderBytes) {
    if (std::any_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b != 0; })) stats_.truncated_bytes += bytes.size();
    return;
  }
  // A chunk no thread claimed, or one claimed by a thread killed before its
  // header was complete (the magic is written last): zeros, not damage.
  if (std::all_of(bytes.begin(), bytes.begin() + 4, [](uint8_t b) { return b == 0; })) return;
  uint32_t index = u32_at(bytes, e2::kIndexAt), used = u32_at(bytes, e2::kUsedAt);
  bool magic = std::equal(std::begin(e2::kChunkMagic), std::end(e2::kChunkMagic), bytes.begin());
  if (!magic || index != (at_offset - chunks_at_) / e2::kChunkBytes || used > e2::kChunkPayloadBytes) {
    stats_.note_problem(at_offset, 0,
                        magic ? fmt::format("an emt v2 chunk with index {} and {} bytes used, expected index {} and at "
                                            "most {} bytes",
                                            index, used, (at_offset - chunks_at_) / e2::kChunkBytes,
                                            e2::kChunkPayloadBytes)
                              : std::string("expected an emt v2 chunk (43 48 4B 32)"));
    stats_.corrupt_bytes += bytes.size();
    return;
  }
  size_t end = e2::kChunkHeaderBytes + used;
  if (end > bytes.size()) {  // the input ends inside this chunk
    stats_.truncated_bytes += end - bytes.size();
    end = bytes.size();
  }
  uint32_t slot = u32_at(bytes, e2::kSlotAt);
  uint64_t seq = u64_at(bytes, e2::kBaseSeqAt);
  last_address_ = 0;
  std::span<const uint8_t> records(bytes.data(), end);
  size_t at = e2::kChunkHeaderBytes;
  while (at < end) {
    size_t start = at;
    if (!parse_record(records, at, slot, seq)) {
      if (end == bytes.size() && !whole) {
        stats_.truncated_bytes += end - start;  // the last record was cut off by the end of the input
      } else {
        stats_.note_problem(at_offset + start, 0,
                            fmt::format("expected an emt v2 record, found tag 0x{:02X} (or a record that does not fit "
                                        "its chunk)", records[start]));
        stats_.corrupt_bytes += end - start;
      }
      break;
    }
  }
  drain(false);
}

bool EmtV2Reader::parse_record(std::span<const uint8_t> b, size_t& at, uint32_t slot, uint64_t& seq) {
  Shape shape{};
  if (!shape_of(b[at], shape)) return false;
  Record r;
  r.tag = b[at++];
  r.slot = slot;
  int first = 0;
  if (shape.sequenced) {
    uint64_t dseq = 0;
    if (!read_varint(b, at, dseq) || dseq == 0 || seq + dseq < seq) return false;
    seq += dseq;
    r.seq = seq;
    first = 1;
  }
  for (int i = first; i < shape.numbers; ++i)
    if (!read_varint(b, at, r.v[i - first])) return false;
  if (shape.text) {
    uint64_t length = 0;
    if (!read_varint(b, at, length) || length > kMaxText || length > b.size() - at) return false;
    r.text.assign(reinterpret_cast<const char*>(b.data() + at), length);
    at += length;
  }
  if (r.tag == e2::kAlloc || r.tag == e2::kFree) {
    // ALLOC and FREE addresses are zigzag deltas within the chunk.
    uint64_t z = r.v[1];
    last_address_ += (z >> 1) ^ (0 - (z & 1));
    r.v[1] = last_address_;
  }
  if (r.tag == e2::kNode) {
    // Nodes come before their first use in the same thread's chunks, so they
    // are known as soon as read; ids are per thread (slot).
    uint64_t key = uint64_t{slot} << 32 | (r.v[0] & 0xFFFFFFFF);
    if (nodes_.size() < kMaxNodes || nodes_.contains(key)) nodes_[key] = {r.v[1], r.v[2]};
    else ++stats_.sites_dropped;
    return true;
  }
  queue(std::move(r));
  return true;
}

void EmtV2Reader::queue(Record r) {
  if (r.seq < next_seq_) {
    // Its place was given up (too many waiting, or a duplicate): late, not lost.
    apply(r);
    return;
  }
  pending_.push(std::move(r));
}

void EmtV2Reader::drain(bool all) {
  while (!pending_.empty()) {
    const Record& top = pending_.top();
    if (top.seq != next_seq_ && !all && pending_.size() <= kMaxPending) return;
    // A sequence number taken and never written: the record is lost (the
    // process died between the two, or its thread could not grow the file).
    if (top.seq > next_seq_) stats_.dropped_records += top.seq - next_seq_;
    next_seq_ = top.seq + 1;
    apply(top);
    pending_.pop();
  }
}

PoolId EmtV2Reader::pool(uint64_t id) {
  return context_.pools.intern(id == e2::kPoolMmap ? "mmap" : id == e2::kPoolMalloc ? "malloc" : fmt::format("pool{}", id),
                               PoolKind::heap);
}

void EmtV2Reader::apply(const Record& r) {
  Event e;
  e.time = r.seq;
  auto tid = tids_.find(r.slot);
  e.thread = tid == tids_.end() ? 0 : static_cast<uint32_t>(tid->second);
  switch (r.tag) {
    case e2::kAlloc:
      e.kind = EventKind::alloc;
      e.pool = pool(r.v[0]);
      e.address = r.v[1];
      e.size = r.v[2];
      e.align = static_cast<uint32_t>(std::min<uint64_t>(r.v[3], UINT32_MAX));
      e.site = site(r.slot, r.v[4]);
      break;
    case e2::kFree:
      e.kind = EventKind::free;
      e.pool = pool(r.v[0]);
      e.address = r.v[1];
      break;
    case e2::kAllocFail:
      e.kind = EventKind::alloc_failed;
      e.pool = pool(r.v[0]);
      e.size = r.v[1];
      e.align = static_cast<uint32_t>(std::min<uint64_t>(r.v[2], UINT32_MAX));
      e.site = site(r.slot, r.v[3]);
      break;
    case e2::kInferBegin:
    case e2::kInferEnd:
      e.kind = r.tag == e2::kInferBegin ? EventKind::inference_begin : EventKind::inference_end;
      e.size = r.v[0];
      break;
    case e2::kModule:
      if (r.v[1] < r.v[2]) modules_[r.v[1]] = {r.v[2], r.v[0], r.text};
      frames_.clear();  // addresses may now name another module
      return;
    case e2::kModuleGone:
      modules_.erase(r.v[0]);
      frames_.clear();
      return;
    case e2::kThread:
      tids_[r.slot] = r.v[0];
      if (context_.thread_names.size() < kMaxThreadNames || context_.thread_names.contains(static_cast<uint32_t>(r.v[0])))
        context_.thread_names[static_cast<uint32_t>(r.v[0])] = r.text;
      return;
    default:  // kWall: when the recording began, for the reader; not an event
      return;
  }
  sink_.on_event(e);
  ++stats_.events;
}

SiteId EmtV2Reader::site(uint32_t slot, uint64_t node) {
  if (node == 0) return kUnknownSite;
  uint64_t key = uint64_t{slot} << 32 | (node & 0xFFFFFFFF);
  if (auto it = sites_.find(key); it != sites_.end()) return it->second;
  SiteId id = context_.sites.intern(stack_text(slot, node));
  if (sites_.size() < kMaxNodes) sites_.emplace(key, id);
  return id;
}

std::string EmtV2Reader::stack_text(uint32_t slot, uint64_t node) {
  std::vector<uint64_t> inner_first;
  for (uint64_t n = node; n != 0 && inner_first.size() < kMaxDepth;) {
    auto it = nodes_.find(uint64_t{slot} << 32 | (n & 0xFFFFFFFF));
    if (it == nodes_.end()) {
      inner_first.push_back(0);  // a node the recording does not define
      break;
    }
    inner_first.push_back(it->second.address);
    n = it->second.parent;
  }
  std::string text;
  for (auto it = inner_first.rbegin(); it != inner_first.rend(); ++it) {
    for (const std::string& f : frames_at(*it)) {
      if (!text.empty()) text += ';';
      text += f;
    }
  }
  return text;
}

const std::vector<std::string>& EmtV2Reader::frames_at(uint64_t address) {
  if (auto it = frames_.find(address); it != frames_.end()) return it->second;
  std::vector<std::string> frames;
  if (address == 0) {
    frames.push_back("?");
  } else if (auto m = modules_.upper_bound(address); m != modules_.begin() && address < std::prev(m)->second.end) {
    const Module& mod = std::prev(m)->second;
    frames = symbolizer_.frames(mod.path, mod.bias, address);
  } else {
    frames = symbolizer_.frames({}, 0, address);
  }
  if (frames_.size() >= kMaxNodes) frames_.clear();
  return frames_.emplace(address, std::move(frames)).first->second;
}

void EmtV2Reader::finish() {
  if (!chunk_.empty()) parse_chunk();
  drain(true);
}

}  // namespace edgemem
