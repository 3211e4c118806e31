// Decoder for emt, edgemem's compact binary event stream written by the
// device library (docs/formats/emt.md). Records are a tag byte and ULEB128
// fields; a SYNC record ("~emt!" or, when every record ends with a check
// byte, "~emt#"; then the absolute time) starts the stream, recurs
// periodically and follows any loss, so after damage the decoder skips to
// the next SYNC and goes on.
//
// A byte-at-a-time push machine, as the ITM packet parser: a record's fields
// are collected as they arrive and the decoder's state (time, pools,
// strings) changes only when the record is complete, so the same bytes give
// the same events however the input is split into reads.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "edgemem/decoder.h"
#include "emt_v2_reader.h"

namespace edgemem {

class EmtDecoder final : public Decoder {
 public:
  // A device names a few hundred source files; a damaged stream could name
  // millions. STRING records past this many are counted, not kept.
  static constexpr size_t kMaxStrings = 4096;

  // `name_frames` false: a recording's stacks are not symbolised (their
  // frames are addresses), for judging a format by its first bytes.
  EmtDecoder(TraceContext& context, EventSink& sink, bool name_frames = true);
  void feed(std::span<const uint8_t> bytes) override;
  void finish() override;
  void cut() override;
  std::string_view format_name() const override { return "emt"; }
  // Bytes were lost upstream (ITM overflow): a half-read record is garbage
  // and the next byte may start anywhere, so skip to the next SYNC.
  void drop_partial();

  std::optional<double> clock_hz() const override {
    return tick_hz_ ? std::optional<double>(static_cast<double>(tick_hz_)) : std::nullopt;
  }

  // Field encodings of a record, in order (public for the record table).
  enum class Field : uint8_t { varint, byte, u32, text, sync_magic };

 private:
  // check: the record's fields are read, its check byte is next.
  // chunked: a version 2 header was read; the rest goes to the v2 reader.
  enum class State : uint8_t { hunting, tag, field, check, chunked };

  void push(uint8_t byte, uint64_t offset);
  void hunt(uint8_t byte, uint64_t offset);
  void start_record(uint8_t tag, uint64_t offset);
  void field_byte(uint8_t byte);
  void field_done(uint64_t value);
  void next_field();
  void complete();
  // The record cannot be emt: count its first byte as corrupt and look for
  // the next SYNC in the bytes after it.
  void reject(std::string what);
  void restarted();
  SiteId site(uint64_t value);
  PoolId pool(uint64_t device_id);
  void emit(Event& e, uint64_t dt);

  TraceContext& context_;
  EventSink& sink_;
  bool name_frames_;
  State state_ = State::hunting;
  uint64_t input_offset_ = 0;  // offset of the next byte fed

  // Hunting for SYNC.
  size_t sync_match_ = 0;  // bytes of "~emt!" (or "~emt#") matched so far
  uint64_t skipped_ = 0;   // bytes given up since hunting began

  // The record being collected.
  uint8_t tag_ = 0;
  std::span<const Field> fields_;
  size_t field_ = 0;
  uint64_t value_ = 0;      // varint / u32 / text length being assembled
  unsigned position_ = 0;   // bit shift (varint) or byte index (u32, magic)
  uint64_t text_left_ = 0;  // text bytes still to come once the length is known
  bool text_length_known_ = false;
  std::array<uint64_t, 8> values_{};
  size_t values_used_ = 0;
  std::string text_;
  std::vector<uint8_t> record_;  // its bytes, replayed into the hunt if it is rejected
  uint64_t record_offset_ = 0;

  // Whether records end with a check byte: set by each SYNC's marker.
  bool checked_ = false;
  bool seen_checked_ = false;  // a SYNC with check bytes was read since the last HEADER without
  bool header_due_ = false;    // a SYNC without them followed one: only a HEADER may come next

  // Stream state, changed only by complete records.
  uint64_t time_ = 0;
  uint32_t last_sync_low_ = 0;
  uint64_t epoch_ = 0;
  uint64_t before_sync_ = 0;  // the time before the latest SYNC
  uint64_t tick_hz_ = 0;
  std::unordered_map<uint64_t, PoolId> pools_;       // device pool id -> PoolTable id
  std::unordered_map<uint64_t, std::string> files_;  // string id -> text
  uint64_t sync_offset_ = 0;  // where the last SYNC began: a v2 header page starts there
  std::unique_ptr<EmtV2Reader> v2_;
};

}  // namespace edgemem
