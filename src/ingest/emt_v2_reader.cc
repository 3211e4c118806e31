#include "emt_v2_reader.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "edgemem/emt_v2.h"
#include "ingest/zstd_step.h"

namespace edgemem {
namespace {

namespace e2 = emt2;

constexpr uint64_t kMaxRecordText = 4096;  // a name or path record
constexpr size_t kMaxDepth = RecordedStacks::kMaxDepth;

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
    case e2::kStopped: s = {1, false, false}; return true;
    case e2::kResize: s = {5, false, true}; return true;
    case e2::kAttached:
    case e2::kUnseenFree: s = {1, false, false}; return true;
    case e2::kModule: s = {4, true, true}; return true;
    case e2::kModuleGone: s = {2, false, true}; return true;
    case e2::kThread: s = {2, true, true}; return true;
    case e2::kWall: s = {3, false, true}; return true;
    case e2::kInferBegin:
    case e2::kInferEnd: s = {2, false, true}; return true;
    default: return false;  // the compact tags are parsed apart (parse_small)
  }
}

}  // namespace

struct EmtV2Reader::ZstdStream {
  ZSTD_DStream* stream = [] {
    ZSTD_DStream* s = ZSTD_createDStream();
    if (s) ZSTD_decompressBegin(s);  // see zstd_step.h
    return s;
  }();
  std::vector<uint8_t> out = std::vector<uint8_t>(ZSTD_DStreamOutSize());
  ~ZstdStream() { ZSTD_freeDStream(stream); }
};

EmtV2Reader::EmtV2Reader(TraceContext& context, EventSink& sink, DecodeStats& stats, uint64_t version,
                         uint64_t chunks_at, bool name_frames)
    : context_(context),
      sink_(sink),
      stats_(stats),
      version_(version),
      layout_known_(version < e2::kVersion3),  // version 2 is always chunked
      chunks_at_(chunks_at),
      chunk_offset_(chunks_at),
      recent_(e2::kRecent),
      stacks_(std::make_shared<RecordedStacks>(kMaxNodes, name_frames)) {
  context_.time_base = TimeBase::sequence;
}

EmtV2Reader::~EmtV2Reader() = default;

void EmtV2Reader::push(std::span<const uint8_t> bytes, uint64_t offset) {
  if (bytes.empty()) return;
  input_end_ = offset + bytes.size();
  if (!layout_known_) {
    push_layout_byte(bytes[0], offset);
    bytes = bytes.subspan(1);
    ++offset;
  }
  if (layout_ == Layout::packed) push_packed(bytes, offset);
  else push_chunked(bytes, offset);
}

void EmtV2Reader::push_layout_byte(uint8_t byte, uint64_t offset) {
  layout_known_ = true;
  if (byte == e2::kLayoutPacked || byte == e2::kLayoutPackedFrames) {
    layout_ = Layout::packed;
    verified_frames_ = byte == e2::kLayoutPackedFrames;
    zstd_ = std::make_unique<ZstdStream>();
    ZSTD_DCtx_setParameter(zstd_->stream, ZSTD_d_windowLogMax, kMaxWindowLog);
    frame_at_ = decoded_at_ = offset + 1;
  } else if (byte != e2::kLayoutChunked) {
    layout_ = Layout::packed;
    give_up(offset, fmt::format("expected the layout byte of an emt v3 recording (00 chunked, 01 or 02 packed), found "
                                "0x{:02X}",
                                byte));
  }
}

void EmtV2Reader::push_chunked(std::span<const uint8_t> bytes, uint64_t offset) {
  while (!bytes.empty() && offset < chunks_at_) {
    // The rest of the header page is zero padding.
    if (bytes[0] != 0) {
      if (!stats_.first_problem) stats_.note_problem(offset, 0, "expected zero padding up to the first emt v2 chunk");
      ++stats_.corrupt_bytes;
    }
    bytes = bytes.subspan(1);
    ++offset;
  }
  while (!bytes.empty()) {
    size_t take = std::min(bytes.size(), e2::kChunkBytes - chunk_.size());
    chunk_.insert(chunk_.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(take));
    bytes = bytes.subspan(take);
    if (chunk_.size() == e2::kChunkBytes) parse_chunk();
  }
}

void EmtV2Reader::give_up(uint64_t offset, std::string what) {
  stats_.note_problem(offset, 0, std::move(what));
  failed_ = true;
  frame_open_ = false;
  chunk_.clear();
  packed_field_ = 0;
}

void EmtV2Reader::push_packed(std::span<const uint8_t> bytes, uint64_t offset) {
  if (failed_) {
    stats_.corrupt_bytes += bytes.size();
    return;
  }
  // Each call decodes at most one block, and judges nothing after it
  // (zstd_step.h): a damaged block then loses no good block, whatever the
  // read size. Calls go on until one moves nothing.
  ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
  for (bool more = true; more;) {
    if (seeking_ && !seek_frame(bytes, offset, in.pos)) return;
    if (!frame_open_ && in.pos < in.size) {
      frame_open_ = true;
      frame_at_ = offset + in.pos;
    }
    ZSTD_inBuffer part{bytes.data(), in.pos + zstd_step_input(zstd_->stream, zstd_hint_, zstd_flushing_, in.size - in.pos),
                       in.pos};
    ZSTD_outBuffer out{zstd_->out.data(), zstd_->out.size(), 0};
    const size_t before = in.pos;
    const size_t hint = ZSTD_decompressStream(zstd_->stream, &out, &part);
    if (ZSTD_isError(hint) && verified_frames_) {
      in.pos = std::max(before, part.pos);
      keep_raw(bytes.subspan(before, in.pos - before));
      lose_frame(ZSTD_getErrorName(hint));
      if (failed_) break;
      continue;
    }
    if (ZSTD_isError(hint)) {
      give_up(offset + before, fmt::format("the zstd stream of a packed emt v3 recording is damaged ({}) in the frame "
                                           "that starts at byte {}; the records before the damage are analysed, "
                                           "a compressed stream cannot be read past it",
                                           ZSTD_getErrorName(hint), frame_at_));
      stats_.corrupt_bytes += in.size - before;
      return;
    }
    in.pos = part.pos;
    if (verified_frames_) keep_raw(bytes.subspan(before, in.pos - before));
    const bool progress = in.pos != before || out.pos > 0, flushed = zstd_flushing_;
    zstd_flushing_ = out.pos == out.size;
    more = progress || flushed;
    // A call that moved nothing answers for the next frame, not this one.
    if (progress) zstd_hint_ = hint;
    packed_at_ = offset + in.pos;
    if (out.pos > 0) decoded_at_ = packed_at_;
    if (!verified_frames_) {
      if (progress && hint == 0) frame_open_ = false;
      push_unpacked({zstd_->out.data(), out.pos});
    } else {
      frame_out_.insert(frame_out_.end(), zstd_->out.begin(), zstd_->out.begin() + static_cast<std::ptrdiff_t>(out.pos));
      if (frame_out_.size() > e2::kFrameBytes || frame_raw_.size() > 2 * e2::kFrameBytes) {
        lose_frame(frame_out_.size() > e2::kFrameBytes
                       ? fmt::format("more than the layout's {} bytes unpacked", e2::kFrameBytes)
                       : fmt::format("more than {} compressed bytes", 2 * e2::kFrameBytes));
        if (failed_) break;
        continue;
      }
      if (progress && hint == 0) {
        // zstd has checked the frame's checksum (one the frame was written
        // with: a flipped flag would leave it unchecked): its records are applied.
        // RFC 8878 3.1.1.1.1: the frame header descriptor's bit 2.
        if (frame_raw_.size() < 5 || !(frame_raw_[4] & 0x04)) {
          lose_frame("it carries no checksum");
          if (failed_) break;
          continue;
        }
        frame_open_ = false;
        frame_raw_.clear();
        push_unpacked(frame_out_);
        frame_out_.clear();
      }
    }
    if (failed_) break;
  }
  if (failed_) stats_.corrupt_bytes += in.size - in.pos;
}

void EmtV2Reader::keep_raw(std::span<const uint8_t> taken) { frame_raw_.insert(frame_raw_.end(), taken.begin(), taken.end()); }

void EmtV2Reader::lose_frame(std::string_view why) {
  stats_.note_problem(frame_at_, 0,
                      fmt::format("the zstd frame of a packed emt v3 recording that starts at byte {} is damaged ({}); "
                                  "its records are not read (none of them is trusted), the recording is read on "
                                  "from the next frame",
                                  frame_at_, why));
  damaged_from_ = frame_at_;
  seeking_ = true;
  magic_window_ = 0;
  frame_open_ = false;
  frame_out_.clear();
  // Frames hold whole chunks: the next one starts a chunk.
  chunk_.clear();
  packed_field_ = 0;
  packed_shift_ = 0;
  zstd_hint_ = 1;
  zstd_flushing_ = false;
  ZSTD_DCtx_reset(zstd_->stream, ZSTD_reset_session_only);
  // The next frame may begin inside what zstd took for this one (a damaged
  // block header that claimed more bytes): it is looked for there first,
  // so the same bytes give the same events however they are split. One
  // level only: a frame lost while those bytes are read again is not read
  // a third time (fake frames nested in each other held a copy per level,
  // a reviewer's 9 KB file took 1 GB).
  std::vector<uint8_t> raw;
  raw.swap(frame_raw_);
  if (raw.size() > 1 && !rescanning_) {
    rescanning_ = true;
    push_packed(std::span<const uint8_t>(raw).subspan(1), damaged_from_ + 1);
    rescanning_ = false;
  }
}

// Looks for the next zstd frame's magic number (28 B5 2F FD) from bytes[at];
// found, hands it to zstd and leaves `at` after it.
bool EmtV2Reader::seek_frame(std::span<const uint8_t> bytes, uint64_t offset, size_t& at) {
  constexpr uint32_t kMagic = 0xFD2FB528;  // ZSTD_MAGICNUMBER, as its four bytes read little-endian
  while (at < bytes.size()) {
    magic_window_ = (magic_window_ >> 8) | (uint32_t{bytes[at++]} << 24);
    if (magic_window_ != kMagic) continue;
    seeking_ = false;
    frame_open_ = true;
    frame_at_ = offset + at - 4;
    stats_.corrupt_bytes += frame_at_ - damaged_from_;
    static constexpr uint8_t kMagicBytes[4] = {0x28, 0xB5, 0x2F, 0xFD};
    keep_raw(kMagicBytes);
    ZSTD_inBuffer magic{kMagicBytes, 4, 0};
    ZSTD_outBuffer none{zstd_->out.data(), zstd_->out.size(), 0};
    const size_t hint = ZSTD_decompressStream(zstd_->stream, &none, &magic);
    zstd_hint_ = ZSTD_isError(hint) ? 1 : hint;
    return true;
  }
  return false;
}

// The unpacked stream is a row of chunks, each three varints (slot, base
// sequence, bytes of records) then its records.
void EmtV2Reader::push_unpacked(std::span<const uint8_t> bytes) {
  while (!bytes.empty() && !failed_) {
    if (packed_field_ < 3) {
      uint8_t byte = bytes[0];
      bytes = bytes.subspan(1);
      ++unpacked_;
      uint64_t& field = packed_header_[static_cast<size_t>(packed_field_)];
      if (packed_shift_ == 0) field = 0;
      if (packed_shift_ >= 64) {
        give_up(packed_at_, fmt::format("a packed emt v3 chunk header at unpacked byte {} holds a number longer than "
                                        "64 bits", unpacked_ - 1));
        return;
      }
      field |= uint64_t{byte & 0x7fu} << packed_shift_;
      packed_shift_ += 7;
      if (byte & 0x80) continue;
      packed_shift_ = 0;
      if (++packed_field_ < 3) continue;
      if (packed_header_[0] == 0 || packed_header_[0] > UINT32_MAX || packed_header_[2] > e2::kChunkPayloadBytes) {
        give_up(packed_at_, fmt::format("a packed emt v3 chunk at unpacked byte {} claims thread slot {} and {} bytes "
                                        "of records, expected a slot from 1 and at most {} bytes",
                                        unpacked_, packed_header_[0], packed_header_[2], e2::kChunkPayloadBytes));
        return;
      }
      packed_chunk_at_ = unpacked_;
      chunk_.clear();
      if (packed_header_[2] == 0) parse_packed_chunk(false);
      continue;
    }
    size_t take = std::min<size_t>(bytes.size(), packed_header_[2] - chunk_.size());
    chunk_.insert(chunk_.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(take));
    bytes = bytes.subspan(take);
    unpacked_ += take;
    if (chunk_.size() == packed_header_[2]) parse_packed_chunk(false);
  }
}

void EmtV2Reader::parse_packed_chunk(bool cut_off) {
  std::vector<uint8_t> records;
  records.swap(chunk_);
  packed_field_ = 0;
  // Errors name the compressed input read so far (zstd decodes a block of
  // up to 128 KiB at once) and, in the message, the exact unpacked offset.
  parse_records(records, static_cast<uint32_t>(packed_header_[0]), packed_header_[1], packed_at_, cut_off);
  // Unpacked bytes: said apart from the file's bytes (truncated_bytes), which
  // they once joined (a cut file read "65209 bytes ignored" of 26,356).
  if (cut_off) stats_.cut_chunk_missing += packed_header_[2] - records.size();
  chunk_.swap(records);
  chunk_.clear();
  chunk_end_ = unpacked_;
}

void EmtV2Reader::parse_chunk() {
  std::vector<uint8_t> bytes;
  bytes.swap(chunk_);
  uint64_t at_offset = chunk_offset_;
  chunk_offset_ += e2::kChunkBytes;
  if (bytes.size() < e2::kChunkHeaderBytes) {
    if (std::any_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b != 0; })) {
      stats_.truncated_bytes += bytes.size();
      stats_.recording_cut = true;
      stats_.cut_at = at_offset;
      stats_.cut_bytes_present = bytes.size();
    }
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
  // The recorder grows its file by whole chunks: one that ends inside a
  // claimed chunk was cut, even past the chunk's records (the chunks after
  // it are missing; their records once read as lost before they were written).
  if (bytes.size() < e2::kChunkBytes) {
    stats_.recording_cut = true;
    stats_.cut_at = at_offset;
    stats_.cut_bytes_present = bytes.size();
  }
  size_t end = e2::kChunkHeaderBytes + used;
  bool cut_off = false;
  if (end > bytes.size()) {  // the input ends inside this chunk's records
    stats_.truncated_bytes += end - bytes.size();
    stats_.cut_chunk_missing = end - bytes.size();
    end = bytes.size();
    cut_off = true;
  }
  parse_records(std::span<const uint8_t>(bytes).subspan(e2::kChunkHeaderBytes, end - e2::kChunkHeaderBytes),
                u32_at(bytes, e2::kSlotAt), u64_at(bytes, e2::kBaseSeqAt), at_offset + e2::kChunkHeaderBytes, cut_off);
  chunk_.swap(bytes);
  chunk_.clear();
}

void EmtV2Reader::parse_records(std::span<const uint8_t> records, uint32_t slot, uint64_t seq, uint64_t records_at,
                                bool cut_off) {
  last_address_ = 0;
  small_allocs_ = 0;
  freed_.fill(0);
  size_t at = 0;
  while (at < records.size()) {
    size_t start = at;
    if (!parse_record(records, at, slot, seq)) {
      if (cut_off) {
        // The last record was cut off by the end of the input (in a packed
        // file, unpacked bytes: counted with the chunk's missing ones).
        (layout_ == Layout::packed ? stats_.cut_chunk_missing : stats_.truncated_bytes) += records.size() - start;
      } else {
        bool packed = layout_ == Layout::packed;
        stats_.note_problem(packed ? records_at : records_at + start, 0,
                            fmt::format("expected an emt v{} record{}, found tag 0x{:02X} (or a record that does not "
                                        "fit its chunk, or names a block its chunk does not hold)",
                                        version_,
                                        packed ? fmt::format(" at unpacked byte {}", packed_chunk_at_ + start) : "",
                                        records[start]));
        stats_.corrupt_bytes += records.size() - start;
      }
      break;
    }
  }
  drain(false);
}

bool EmtV2Reader::parse_small(std::span<const uint8_t> b, size_t& at, uint32_t slot, uint64_t& seq) {
  uint8_t tag = b[at++];
  uint64_t dseq = 1;
  if ((tag & e2::kSeqGiven) && (!read_varint(b, at, dseq) || dseq == 0)) return false;
  if (seq + dseq < seq) return false;
  Record r;
  r.seq = seq + dseq;
  r.slot = slot;
  if (e2::is_small_alloc(tag)) {
    uint64_t size = 0, address = 0, node = 0;
    if (!read_varint(b, at, size)) return false;
    uint64_t& freed = freed_[e2::size_slot(size)];
    if (tag & e2::kAddressGiven) {
      if (!read_varint(b, at, address)) return false;
      address = last_address_ + e2::unzigzag(address);
    } else if (freed == 0) {
      return false;  // no block of this size slot was freed in the chunk
    } else {
      address = freed;
    }
    if (!read_varint(b, at, node)) return false;
    recent_[small_allocs_++ % e2::kRecent] = {address, size};
    r.tag = e2::kAlloc;
    r.v[1] = address;
    r.v[2] = size;
    r.v[4] = node;
  } else {
    uint64_t value = 0;
    if (!read_varint(b, at, value)) return false;
    if (tag & e2::kAddressGiven) {
      r.v[1] = last_address_ + e2::unzigzag(value);
    } else {
      if (value >= small_allocs_ || value >= e2::kRecent) return false;
      const RecentAlloc& a = recent_[(small_allocs_ - 1 - value) % e2::kRecent];
      freed_[e2::size_slot(a.size)] = a.address;
      r.v[1] = a.address;
    }
    r.tag = e2::kFree;
  }
  last_address_ = r.v[1];
  seq = r.seq;
  queue(std::move(r));
  return true;
}

bool EmtV2Reader::parse_record(std::span<const uint8_t> b, size_t& at, uint32_t slot, uint64_t& seq) {
  if (version_ >= e2::kVersion3 && (e2::is_small_alloc(b[at]) || e2::is_small_free(b[at])))
    return parse_small(b, at, slot, seq);
  Shape shape{};
  if (!shape_of(b[at], shape)) return false;
  Record r;
  r.tag = b[at++];
  r.slot = slot;
  int first = 0;
  uint64_t next = seq;
  if (shape.sequenced) {
    uint64_t dseq = 0;
    if (!read_varint(b, at, dseq) || dseq == 0 || seq + dseq < seq) return false;
    next = seq + dseq;
    r.seq = next;
    first = 1;
  }
  for (int i = first; i < shape.numbers; ++i)
    if (!read_varint(b, at, r.v[i - first])) return false;
  if (shape.text) {
    uint64_t length = 0;
    if (!read_varint(b, at, length) || length > kMaxRecordText || length > b.size() - at) return false;
    r.text.assign(reinterpret_cast<const char*>(b.data() + at), length);
    at += length;
  }
  seq = next;
  if (r.tag == e2::kAlloc || r.tag == e2::kFree) {
    // ALLOC and FREE addresses are zigzag deltas within the chunk.
    last_address_ += e2::unzigzag(r.v[1]);
    r.v[1] = last_address_;
  }
  if (r.tag == e2::kStopped) {
    // The process could not go on recording: what follows in its run is
    // missing, counted by the process itself (docs/formats/emt.md).
    stats_.recording_stopped = true;
    stats_.calls_not_recorded += r.v[0];
    return true;
  }
  if (r.tag == e2::kAttached) {
    stats_.attached = true;
    return true;
  }
  if (r.tag == e2::kUnseenFree) {
    ++stats_.frees_before_attach;
    stats_.bytes_freed_before_attach += r.v[0];
    return true;
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

namespace {

void put_varint(std::vector<uint8_t>& out, uint64_t v) {
  uint8_t buf[10];
  out.insert(out.end(), buf, buf + e2::put_varint(buf, v));
}

}  // namespace

uint64_t EmtV2Reader::Pending::front_seq() const {
  size_t at = read_;
  uint64_t seq = 0;
  read_varint(bytes_, at, seq);
  return seq;
}

void EmtV2Reader::Pending::push(const Record& r) {
  put_varint(bytes_, r.seq);
  bytes_.push_back(r.tag);
  put_varint(bytes_, r.slot);
  for (uint64_t v : r.v) put_varint(bytes_, v);
  put_varint(bytes_, r.text.size());
  bytes_.insert(bytes_.end(), r.text.begin(), r.text.end());
}

EmtV2Reader::Record EmtV2Reader::Pending::pop() {
  Record r;
  uint64_t slot = 0, text = 0;
  read_varint(bytes_, read_, r.seq);
  r.tag = bytes_[read_++];
  read_varint(bytes_, read_, slot);
  r.slot = static_cast<uint32_t>(slot);
  for (uint64_t& v : r.v) read_varint(bytes_, read_, v);
  read_varint(bytes_, read_, text);
  r.text.assign(bytes_.begin() + static_cast<std::ptrdiff_t>(read_),
                bytes_.begin() + static_cast<std::ptrdiff_t>(read_ + text));
  read_ += text;
  // What was read is given back once it is most of the buffer; an emptied
  // queue keeps no more than 1 MiB for its thread's next records.
  if (read_ == bytes_.size()) {
    if (bytes_.capacity() > (size_t{1} << 20)) std::vector<uint8_t>().swap(bytes_);
    else bytes_.clear();
    read_ = 0;
  } else if (read_ > (size_t{1} << 16) && read_ > bytes_.size() / 2) {
    bytes_.erase(bytes_.begin(), bytes_.begin() + static_cast<std::ptrdiff_t>(read_));
    read_ = 0;
  }
  return r;
}

void EmtV2Reader::queue(Record&& r) {
  if (r.seq < next_seq_) {
    // Its place was passed over at the bound: late, not lost (else a duplicate).
    if (passed_) {
      --passed_;
      ++stats_.out_of_order_records;
    }
    apply(r);
    return;
  }
  if (r.seq == next_seq_) {
    // The next in the global order (always so in a one-thread recording):
    // no need to wait.
    ++next_seq_;
    apply(r);
    return;
  }
  Pending& q = waiting_[r.slot];
  if (q.empty()) heads_.push({r.seq, r.slot});
  const size_t before = q.bytes();
  q.push(r);
  waiting_bytes_ += q.bytes() - before;
}

void EmtV2Reader::drain(bool all) {
  while (!heads_.empty()) {
    Head head = heads_.top();
    if (head.seq != next_seq_ && !all && waiting_bytes_ <= kMaxPendingBytes) return;
    heads_.pop();
    Pending& q = waiting_.at(head.slot);
    // A sequence number taken and never written: the record is lost (the
    // process died between the two, or its thread could not grow the file).
    // Passed over at the bound, it may still come.
    if (head.seq > next_seq_) (all ? stats_.dropped_records : passed_) += head.seq - next_seq_;
    next_seq_ = std::max(next_seq_, head.seq + 1);
    const size_t before = q.bytes();
    const Record r = q.pop();
    waiting_bytes_ -= before - q.bytes();
    apply(r);
    if (!q.empty()) heads_.push({q.front_seq(), head.slot});
    // An emptied queue is kept for its thread's next records (two threads
    // take turns emptying theirs all the time); damaged input can name
    // millions of slots, so not past kKeptQueues.
    else if (waiting_.size() > kKeptQueues) waiting_.erase(head.slot);
  }
}

PoolId EmtV2Reader::pool(uint64_t id) {
  // Interned once per id: hashing the name for every event cost more than
  // parsing the record.
  if (id < known_pools_.size() && known_pools_[id]) return *known_pools_[id];
  if (auto it = pools_.find(id); it != pools_.end()) return it->second;
  if (pools_.size() >= kMaxPools) return context_.pools.intern(fmt::format("pool{}", id), PoolKind::heap);
  std::string name = id == e2::kPoolMmap ? "mmap" : id == e2::kPoolMalloc ? "malloc" : fmt::format("pool{}", id);
  PoolId interned = pools_[id] = context_.pools.intern(name, PoolKind::heap);
  if (id == e2::kPoolMmap) context_.pools.at(interned).mappings = true;
  if (id < known_pools_.size()) known_pools_[id] = interned;
  return interned;
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
    case e2::kResize:
      // A block resized where it lies: a realloc that keeps its call site.
      e.kind = EventKind::realloc;
      e.pool = pool(r.v[0]);
      e.old_address = r.v[1];
      e.address = r.v[2];
      e.size = r.v[3];
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
      if (r.v[1] < r.v[2]) modules_[r.v[1]] = {r.v[2], stacks_->add_module(r.text, r.v[0])};
      return;
    case e2::kModuleGone:
      modules_.erase(r.v[0]);
      return;
    case e2::kThread:
      // Written again, in the same thread's chunks, after a rename: the
      // last one names the thread (docs/formats/emt.md, "Thread names").
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
  // A loop allocates from one place many times in a row.
  if (last_site_ && last_site_->first == key) return last_site_->second;
  if (auto it = sites_.find(key); it != sites_.end()) {
    last_site_ = *it;
    return it->second;
  }
  SiteId id = kUnknownSite;
  if (std::optional<uint32_t> s = stack(slot, node)) {
    auto [it, fresh] = stack_sites_.try_emplace(*s);
    if (fresh) it->second = context_.sites.intern_unnamed(stacks_, *s);
    id = it->second;
  } else {
    ++stats_.sites_dropped;
    id = context_.sites.intern(SiteTable::kOverflowName);
  }
  if (sites_.size() < kMaxNodes) sites_.emplace(key, id);
  last_site_ = {key, id};
  return id;
}

std::optional<uint32_t> EmtV2Reader::stack(uint32_t slot, uint64_t node) {
  // The thread's nodes not yet in the process tree, innermost first, up to
  // the first one that is (or the top).
  struct Link {
    uint64_t key, address;
    bool defined;
  };
  std::vector<Link> links;
  uint32_t at = RecordedStacks::kTop;
  for (uint64_t n = node; n != 0 && links.size() < kMaxDepth;) {
    uint64_t key = uint64_t{slot} << 32 | (n & 0xFFFFFFFF);
    if (auto c = canonical_.find(key); c != canonical_.end()) {
      at = c->second;
      break;
    }
    auto it = nodes_.find(key);
    if (it == nodes_.end()) {
      links.push_back({key, 0, false});  // a node the recording does not define: "?"
      break;
    }
    links.push_back({key, it->second.address, true});
    n = it->second.parent;
  }
  for (auto l = links.rbegin(); l != links.rend(); ++l) {
    uint32_t module = l->address ? module_at(l->address) : RecordedStacks::kNoModule;
    std::optional<uint32_t> next = stacks_->child(at, l->address, module);
    if (stacks_->changed_modules().size() != stats_.modules_changed.size())
      stats_.modules_changed = stacks_->changed_modules();
    if (!next) return std::nullopt;
    at = *next;
    // A frame on the stack is in a module still mapped, so the node means
    // the same for every later stack under it.
    if (l->defined && canonical_.size() < kMaxNodes) canonical_.emplace(l->key, at);
  }
  return at;
}

uint32_t EmtV2Reader::module_at(uint64_t address) const {
  auto m = modules_.upper_bound(address);
  if (m == modules_.begin() || address >= std::prev(m)->second.end) return RecordedStacks::kNoModule;
  return std::prev(m)->second.id;
}

void EmtV2Reader::finish() {
  if (layout_ == Layout::packed) {
    if (seeking_) stats_.corrupt_bytes += input_end_ - damaged_from_;
    // A frame cut short cannot be checked: what it unpacked is read as a
    // cut file's last records always were.
    if (verified_frames_ && frame_open_ && !failed_) push_unpacked(frame_out_);
    if (!failed_ && frame_open_) {
      // A packed recording cut short: its last zstd frame is incomplete, so
      // the file was cut (a whole file ends at a frame's checksum). What the
      // frame unpacked so far is read up to the last whole record.
      if (unpacked_ == 0)
        stats_.note_problem(input_end_, 0, fmt::format("a packed emt v3 recording cut off inside its first zstd block "
                                                       "(zstd gives a block only whole, up to 128 KiB unpacked), so "
                                                       "none of its records can be read; copy the file again whole"));
      stats_.recording_cut = true;
      stats_.cut_in_packed_frame = true;
      stats_.cut_at = frame_at_;
      stats_.cut_bytes_present = input_end_ - frame_at_;
      // The records of the cut chunk are read up to its cut record (that
      // record, and the rest the chunk declared, are cut_chunk_missing, in
      // unpacked bytes); a cut chunk header is unpacked bytes lost too.
      if (packed_field_ == 3) parse_packed_chunk(true);
      else stats_.cut_chunk_missing += unpacked_ - chunk_end_;
      // In the file's own bytes: those at its end zstd could not decode (a
      // block is given only whole). What the frame's rest and any later
      // frames held is not in the file, and nothing says how much it was.
      stats_.truncated_bytes += input_end_ - std::max(decoded_at_, frame_at_);
    } else if (!failed_ && (packed_field_ > 0 || packed_shift_ > 0)) {
      stats_.note_problem(input_end_, 0, fmt::format("a packed emt v3 recording ends inside a chunk (unpacked byte "
                                                     "{}) although its zstd stream is complete", unpacked_));
      stats_.corrupt_bytes += chunk_.size();
    }
  } else if (!chunk_.empty()) {
    parse_chunk();
  }
  drain(true);
  stats_.dropped_records += passed_;  // passed over, and never came
  passed_ = 0;
}

}  // namespace edgemem
