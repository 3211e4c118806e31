// Decoder for emt, edgemem's compact binary event stream written by the
// device library (docs/formats/emt.md). Records are a tag byte and ULEB128
// fields; a SYNC record ("~emt!" + absolute time) starts the stream, recurs
// periodically and follows any loss, so after damage the decoder skips to
// the next SYNC and goes on.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "edgemem/decoder.h"

namespace edgemem {

class EmtDecoder final : public Decoder {
 public:
  EmtDecoder(TraceContext& context, EventSink& sink);
  void feed(std::span<const uint8_t> bytes) override;
  void finish() override;
  std::string_view format_name() const override { return "emt"; }

  std::optional<double> clock_hz() const override {
    return tick_hz_ ? std::optional<double>(static_cast<double>(tick_hz_)) : std::nullopt;
  }

 private:
  enum class Parse { ok, need_more, bad };
  Parse record(const uint8_t* p, size_t n, size_t& used);
  SiteId site(uint64_t value);
  bool hunt();  // drop bytes up to the next SYNC; false if none is buffered

  TraceContext& context_;
  EventSink& sink_;
  std::vector<uint8_t> buffer_;
  size_t start_ = 0;          // parse position in buffer_
  uint64_t consumed_ = 0;     // input offset of buffer_[0]
  bool synced_ = false;
  uint64_t time_ = 0;
  uint32_t last_sync_low_ = 0;
  uint64_t epoch_ = 0;
  uint64_t tick_hz_ = 0;
  uint64_t device_drops_ = 0;
  std::unordered_map<uint64_t, PoolId> pools_;      // device pool id -> PoolTable id
  std::unordered_map<uint64_t, std::string> files_; // string id -> text
};

}  // namespace edgemem
