#include "emt_decoder.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "device_restart.h"
#include "edgemem/emt_v2.h"

namespace edgemem {
namespace {

using F = EmtDecoder::Field;

// "~emt!" opens records without check bytes, "~emt#" records that end
// with one (the last byte of kSync is either).
constexpr uint8_t kSync[] = {0x7E, 'e', 'm', 't', '!'};
constexpr uint8_t kCheckedMark = '#';
constexpr uint64_t kMaxText = 4096;  // longer than any name the device writes
constexpr uint64_t kVersionWide = 4;  // version 1's records, from a device build with 64-bit pointers

bool sync_byte_matches(uint8_t byte, size_t at) {
  return byte == kSync[at] || (at == sizeof kSync - 1 && byte == kCheckedMark);
}

enum Tag : uint8_t {
  kHeader = 0x01, kPool = 0x02, kString = 0x03, kDrop = 0x04,
  kAlloc = 0x10, kFree = 0x11, kRealloc = 0x12, kAllocFail = 0x13,
  kInferBegin = 0x14, kInferEnd = 0x15, kReset = 0x16, kGuard = 0x17,
  kMark = 0x18, kCounter = 0x19, kSummary = 0x1A, kAlloc32 = 0x20, kFree32 = 0x21, kSyncTag = 0x7E,
};

// The record table of docs/formats/emt.md. Text fields are kept apart from
// the numeric values, which are numbered in the order they appear.
constexpr F kSyncFields[] = {F::sync_magic, F::varint};
constexpr F kHeaderFields[] = {F::varint, F::varint};
constexpr F kPoolFields[] = {F::varint, F::byte, F::varint, F::varint, F::varint, F::text, F::varint};
constexpr F kStringFields[] = {F::varint, F::text};
constexpr F kDropFields[] = {F::varint};
constexpr F kAllocFields[] = {F::varint, F::varint, F::varint, F::varint, F::varint, F::varint};
constexpr F kFreeFields[] = {F::varint, F::varint, F::varint, F::varint};
constexpr F kReallocFields[] = {F::varint, F::varint, F::varint, F::varint, F::varint, F::varint};
constexpr F kAllocFailFields[] = {F::varint, F::varint, F::varint, F::varint, F::varint};
constexpr F kInferFields[] = {F::varint, F::varint};
constexpr F kResetFields[] = {F::varint, F::varint};
constexpr F kGuardFields[] = {F::varint, F::varint, F::byte};
constexpr F kMarkFields[] = {F::varint, F::text};
constexpr F kCounterFields[] = {F::varint, F::text, F::varint};
constexpr F kSummaryFields[] = {F::varint, F::varint, F::varint, F::varint, F::varint, F::varint};
constexpr F kAlloc32Fields[] = {F::varint, F::byte, F::byte, F::u32, F::u32, F::u32};
constexpr F kFree32Fields[] = {F::varint, F::byte, F::u32, F::u32};

std::span<const F> fields_of(uint8_t tag) {
  switch (tag) {
    case kSyncTag: return kSyncFields;
    case kHeader: return kHeaderFields;
    case kPool: return kPoolFields;
    case kString: return kStringFields;
    case kDrop: return kDropFields;
    case kAlloc: return kAllocFields;
    case kFree: return kFreeFields;
    case kRealloc: return kReallocFields;
    case kAllocFail: return kAllocFailFields;
    case kInferBegin:
    case kInferEnd: return kInferFields;
    case kReset: return kResetFields;
    case kGuard: return kGuardFields;
    case kMark: return kMarkFields;
    case kCounter: return kCounterFields;
    case kSummary: return kSummaryFields;
    case kAlloc32: return kAlloc32Fields;
    case kFree32: return kFree32Fields;
    default: return {};
  }
}

}  // namespace

EmtDecoder::EmtDecoder(TraceContext& context, EventSink& sink, bool name_frames)
    : context_(context), sink_(sink), name_frames_(name_frames) {}

void EmtDecoder::feed(std::span<const uint8_t> bytes) {
  stats_.bytes += bytes.size();
  size_t i = 0;
  for (; i < bytes.size() && state_ != State::chunked; ++i) push(bytes[i], input_offset_++);
  // A recording's chunks go to the v2 reader in bulk.
  if (i < bytes.size()) {
    v2_->push(bytes.subspan(i), input_offset_);
    input_offset_ += bytes.size() - i;
  }
}

void EmtDecoder::push(uint8_t byte, uint64_t offset) {
  switch (state_) {
    case State::hunting: hunt(byte, offset); return;
    case State::tag: start_record(byte, offset); return;
    case State::field:
      record_.push_back(byte);
      field_byte(byte);
      return;
    case State::check: {
      uint8_t expected = 0;
      for (uint8_t b : record_) expected ^= b;
      record_.push_back(byte);
      if (byte == expected) return complete();
      ++stats_.failed_checks;
      return reject(fmt::format("an emt record (tag 0x{:02X}) whose check byte is 0x{:02X}, not 0x{:02X}: damaged in "
                                "transit", tag_, byte, expected));
    }
    case State::chunked: v2_->push({&byte, 1}, offset); return;
  }
}

void EmtDecoder::hunt(uint8_t byte, uint64_t offset) {
  if (sync_byte_matches(byte, sync_match_)) {
    if (++sync_match_ < sizeof kSync) return;
    // A whole SYNC marker: what was skipped before it was not emt.
    stats_.corrupt_bytes += skipped_;
    skipped_ = 0;
    sync_match_ = 0;
    start_record(kSyncTag, offset + 1 - sizeof kSync);
    record_.assign(kSync, kSync + sizeof kSync);
    record_.back() = byte;
    checked_ = byte == kCheckedMark;
    field_ = 1;  // the marker is the first field: the time follows
    next_field();
    return;
  }
  uint64_t from = offset - sync_match_;
  if (!stats_.first_problem) stats_.note_problem(from, 0, "expected an emt SYNC record (7E 65 6D 74 21 or 23)");
  skipped_ += sync_match_;
  sync_match_ = 0;
  if (byte == kSync[0]) sync_match_ = 1;
  else ++skipped_;
}

void EmtDecoder::start_record(uint8_t tag, uint64_t offset) {
  fields_ = fields_of(tag);
  tag_ = tag;
  record_offset_ = offset;
  record_.assign(1, tag);
  field_ = 0;
  values_used_ = 0;
  text_.clear();
  state_ = State::field;
  if (fields_.empty()) {
    reject(fmt::format("expected an emt record tag, found 0x{:02X}", tag));
    return;
  }
  // After a SYNC without check bytes in a stream whose SYNCs had them, only
  // a device started again with another build (a HEADER) makes sense: one
  // flipped bit turns "#" into "!", and the SYNC's check byte would be read
  // as a tag.
  if (std::exchange(header_due_, false) && tag != kHeader) {
    reject("an emt SYNC without check bytes, in a stream whose SYNCs have them, and no HEADER after it: its marker "
           "is damaged");
    return;
  }
  next_field();
}

void EmtDecoder::next_field() {
  value_ = 0;
  position_ = 0;
  text_left_ = 0;
  text_length_known_ = false;
}

void EmtDecoder::field_byte(uint8_t byte) {
  switch (fields_[field_]) {
    case F::byte:
      field_done(byte);
      return;
    case F::u32:  // little-endian
      value_ |= uint64_t{byte} << (8 * position_);
      if (++position_ == 4) field_done(value_);
      return;
    case F::sync_magic:  // only reached through the tag byte 7E in a synced stream
      if (!sync_byte_matches(byte, 1 + position_)) return reject({});
      if (++position_ == sizeof kSync - 1) {
        checked_ = byte == kCheckedMark;
        field_done(0);
      }
      return;
    case F::text:
      if (text_length_known_) {
        text_.push_back(static_cast<char>(byte));
        if (--text_left_ == 0) field_done(0);
        return;
      }
      [[fallthrough]];  // the length is a varint
    case F::varint: {
      if (position_ >= 64) return reject("an emt varint longer than 64 bits");
      value_ |= uint64_t{byte & 0x7fu} << position_;
      position_ += 7;
      if (byte & 0x80) return;
      if (fields_[field_] == F::varint) return field_done(value_);
      if (value_ > kMaxText)
        return reject(fmt::format("an emt text of {} bytes, longer than any record the device writes", value_));
      if (value_ == 0) return field_done(0);
      text_length_known_ = true;
      text_left_ = value_;
      return;
    }
  }
}

void EmtDecoder::field_done(uint64_t value) {
  F kind = fields_[field_];
  if (kind != F::text && kind != F::sync_magic) values_[values_used_++] = value;
  if (++field_ < fields_.size()) return next_field();
  if (checked_) state_ = State::check;
  else complete();
}

void EmtDecoder::reject(std::string what) {
  if (!what.empty()) stats_.note_problem(record_offset_, 0, std::move(what));
  std::vector<uint8_t> rest(record_.begin() + 1, record_.end());
  uint64_t rest_offset = record_offset_ + 1;
  record_.clear();
  state_ = State::hunting;
  sync_match_ = 0;
  skipped_ = 1;  // the byte that started no valid record
  for (size_t i = 0; i < rest.size(); ++i) push(rest[i], rest_offset + i);
}

SiteId EmtDecoder::site(uint64_t value) {
  if (value == 0) return kUnknownSite;
  if (value & 1) return context_.sites.intern(fmt::format("0x{:08x}", value >> 1));
  uint64_t packed = value >> 1, file = packed >> 20, line = packed & 0xFFFFF;
  auto it = files_.find(file);
  std::string_view name = it == files_.end() ? std::string_view("?") : std::string_view(it->second);
  return context_.sites.intern(fmt::format("{}:{}", name, line));
}

PoolId EmtDecoder::pool(uint64_t device_id) {
  if (auto it = pools_.find(device_id); it != pools_.end()) return it->second;
  PoolId id = context_.pools.intern(fmt::format("pool{}", device_id), PoolKind::heap);
  if (!context_.pools.at(id).declared) context_.pools.mark_kind_guessed(id);
  // The map is bounded like the table it points into.
  if (pools_.size() < PoolTable::kMaxPools) pools_.emplace(device_id, id);
  return id;
}

void EmtDecoder::emit(Event& e, uint64_t dt) {
  time_ += dt;
  e.time = time_;
  sink_.on_event(e);
  ++stats_.events;
  if (!checked_) ++stats_.unchecked_events;
}

// The device library writes its HEADER once per boot: after events, the
// device started again. Its RAM was set up anew, so every block of the
// previous boot is gone (a RESET of each pool), and its clock began again
// at the SYNC just read: time goes on from where the previous boot left it.
void EmtDecoder::restarted() {
  epoch_ = before_sync_;
  time_ = epoch_ + last_sync_low_;
  device_restarted(context_, stats_, sink_, time_);
}

void EmtDecoder::complete() {
  const auto& v = values_;
  state_ = State::tag;
  if (checked_) ++stats_.checked_records;
  Event e;
  switch (tag_) {
    case kSyncTag: {
      uint64_t now = v[0];
      before_sync_ = time_;
      // The device clock is 32 bits: the SYNC's time is taken in the wrap
      // nearest the time the records' deltas reached. Against the previous
      // SYNC's alone, 256 records spanning over 2^31 ticks (5.4 s at 400 MHz)
      // sent time back by 2^32.
      const uint64_t reached = time_ - epoch_;
      uint64_t full = (reached & ~uint64_t{0xFFFFFFFF}) + static_cast<uint32_t>(now);
      if (full + 0x80000000u < reached) full += 0x100000000ull;
      else if (full > reached + 0x80000000u && full >= 0x100000000ull) full -= 0x100000000ull;
      epoch_ += full - static_cast<uint32_t>(now);
      last_sync_low_ = static_cast<uint32_t>(now);
      time_ = epoch_ + static_cast<uint32_t>(now);
      sync_offset_ = record_offset_;
      ++stats_.syncs;
      header_due_ = !checked_ && seen_checked_;
      seen_checked_ = seen_checked_ || checked_;
      context_.time_base = TimeBase::cycles;
      break;
    }
    case kHeader:
      if (v[0] < 1 || v[0] > kVersionWide)
        return reject(fmt::format("emt version {} is newer than this edgemem reads (1 to 4)", v[0]));
      if (v[0] >= emt2::kVersion && v[0] <= emt2::kVersion3 && checked_)
        return reject(fmt::format("an emt version {} header after a SYNC with check bytes: a recording's never has them",
                                  v[0]));
      tick_hz_ = v[1];
      if (!checked_) seen_checked_ = false;  // a device started again without check bytes
      // Versions 1 and 4 are the device library's (target/), 4 from a build
      // whose pointers are 64 bits wide.
      if (v[0] == 1 || v[0] == kVersionWide) {
        context_.address_bits = v[0] == 1 ? 32 : 64;
        if (stats_.events > 0) restarted();
        break;
      }
      v2_ = std::make_unique<EmtV2Reader>(context_, sink_, stats_, v[0], sync_offset_ + emt2::kHeaderBytes, name_frames_);
      record_.clear();
      state_ = State::chunked;
      return;
    case kPool: {
      PoolInfo info;
      info.kind = v[1] == 1 ? PoolKind::arena : PoolKind::heap;
      info.base = v[2];
      info.base_known = v[2] != 0;
      info.size = v[3];  // v[4], the alignment, is informational
      info.name = text_;
      if (uint64_t shares = v[5]) {  // device id + 1 of the pool sharing these bytes
        auto it = pools_.find(shares - 1);
        if (it != pools_.end()) info.shares = it->second;
      }
      PoolId id = context_.pools.declare(info);
      if (pools_.size() < PoolTable::kMaxPools || pools_.contains(v[0])) pools_[v[0]] = id;
      break;
    }
    case kString:
      if (files_.size() < kMaxStrings || files_.contains(v[0])) files_[v[0]] = text_;
      else ++stats_.strings_dropped;
      break;
    case kDrop:
      stats_.dropped_records += v[0];  // counted at once: `watch` shows drops as they arrive
      break;
    case kAlloc:
      e.kind = EventKind::alloc;
      e.pool = pool(v[1]);
      e.address = v[2];
      e.size = v[3];
      e.align = static_cast<uint32_t>(v[4]);
      e.site = site(v[5]);
      emit(e, v[0]);
      break;
    case kAlloc32:
      e.kind = EventKind::alloc;
      e.pool = pool(v[1]);
      e.align = static_cast<uint32_t>(v[2]);  // 255 = 255 or more
      e.address = v[3];
      e.size = v[4];
      e.site = site(v[5]);
      emit(e, v[0]);
      break;
    case kFree:
    case kFree32:
      e.kind = EventKind::free;
      e.pool = pool(v[1]);
      e.address = v[2];
      e.site = site(v[3]);
      emit(e, v[0]);
      break;
    case kRealloc:
      e.kind = EventKind::realloc;
      e.pool = pool(v[1]);
      e.old_address = v[2];
      e.address = v[3];
      e.size = v[4];
      e.site = site(v[5]);
      emit(e, v[0]);
      break;
    case kAllocFail:
      e.kind = EventKind::alloc_failed;
      e.pool = pool(v[1]);
      e.size = v[2];
      e.align = static_cast<uint32_t>(v[3]);
      e.site = site(v[4]);
      emit(e, v[0]);
      break;
    case kInferBegin:
    case kInferEnd:
      e.kind = tag_ == kInferBegin ? EventKind::inference_begin : EventKind::inference_end;
      e.size = v[1];
      emit(e, v[0]);
      break;
    case kReset:
      e.kind = EventKind::arena_reset;
      e.pool = pool(v[1]);
      emit(e, v[0]);
      break;
    case kGuard:
      e.kind = EventKind::guard_check;
      e.pool = pool(v[1]);
      e.size = v[2] != 0;
      emit(e, v[0]);
      break;
    case kMark:
    case kCounter:
      e.kind = tag_ == kMark ? EventKind::mark : EventKind::counter;
      e.site = context_.sites.intern(text_);
      if (tag_ == kCounter) e.size = v[1];
      emit(e, v[0]);
      break;
    case kSummary:
      // dt, pool, used, peak above used, largest free + 1 (0 = unknown), failures.
      if (v[3] > UINT64_MAX - v[2]) return reject("an emt SUMMARY whose peak does not fit 64 bits");
      e.kind = EventKind::pool_summary;
      e.pool = pool(v[1]);
      e.size = v[2];
      e.address = v[2] + v[3];
      e.old_address = v[4] == 0 ? kUnknownLargestFree : v[4] - 1;
      e.align = static_cast<uint32_t>(std::min<uint64_t>(v[5], UINT32_MAX));
      emit(e, v[0]);
      break;
  }
  record_.clear();
}

void EmtDecoder::drop_partial() {
  if (state_ == State::chunked) return;  // v2 recordings are files, not ITM streams
  if (state_ == State::field || state_ == State::check) stats_.corrupt_bytes += record_.size();
  record_.clear();
  if (state_ != State::hunting) {
    state_ = State::hunting;
    skipped_ = 0;
    sync_match_ = 0;
  }
}

void EmtDecoder::cut() {
  if (state_ == State::chunked) return;  // a recording: a file read whole, never restarted
  // Between records of a stream with check bytes, what comes next is read
  // as records: a stream resumed where it stopped (a TCP server that
  // buffers) loses nothing, and bytes from elsewhere fail their check. Else
  // the next SYNC is waited for.
  if (state_ == State::tag && checked_) return;
  stats_.truncated_bytes += record_.size() + sync_match_;
  stats_.corrupt_bytes += state_ == State::hunting ? skipped_ : 0;
  record_.clear();
  skipped_ = 0;
  sync_match_ = 0;
  state_ = State::hunting;
}

void EmtDecoder::finish() {
  if (state_ == State::chunked) {
    v2_->finish();
    return;
  }
  if (state_ == State::hunting) {
    stats_.corrupt_bytes += skipped_;
    stats_.truncated_bytes += sync_match_;  // a SYNC may have been arriving
  } else if (state_ == State::field || state_ == State::check) {
    stats_.truncated_bytes += record_.size();
  }
  skipped_ = 0;
  sync_match_ = 0;
  record_.clear();
  state_ = State::hunting;
}

}  // namespace edgemem
