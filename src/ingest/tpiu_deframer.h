// CoreSight TPIU formatter: 16-byte frames that interleave several trace
// sources (ITM, ETM) by 7-bit ID. Frame alignment comes from the full sync
// pattern FF FF FF 7F when the stream has one, else from the first byte;
// half-word syncs (FF 7F) between or within frames are dropped.
#pragma once

#include <array>
#include <deque>
#include <functional>
#include <optional>

#include "edgemem/decoder.h"
#include "itm_port_router.h"

namespace edgemem {

class TpiuDeframer {
 public:
  using Output = std::function<void(uint8_t id, uint8_t byte)>;
  explicit TpiuDeframer(Output output) : output_(std::move(output)) {}
  void push(uint8_t byte);
  uint64_t frames() const { return frames_; }
  uint64_t syncs() const { return syncs_; }
  uint64_t dropped() const { return dropped_; }  // bytes of frames cut by a sync
  uint64_t halfsyncs() const { return halfsyncs_; }
  size_t pending() const { return fill_; }

 private:
  void frame();
  Output output_;
  std::array<uint8_t, 16> buf_{};
  size_t fill_ = 0;
  uint32_t last4_ = 0;
  uint8_t id_ = 0;
  uint64_t frames_ = 0, syncs_ = 0, dropped_ = 0, halfsyncs_ = 0;
};

// A TPIU capture whose ITM source (default ID 1) is decoded as ITM.
class TpiuDecoder final : public Decoder {
 public:
  TpiuDecoder(TraceContext& context, EventSink& sink, unsigned stream);
  void feed(std::span<const uint8_t> bytes) override;
  void finish() override;
  DecodeStats progress() const override;
  std::string_view format_name() const override { return "tpiu"; }
  std::optional<double> clock_hz() const override { return itm_.clock_hz(); }

 private:
  ItmDecoder itm_;
  TpiuDeframer deframer_;
  unsigned stream_;
  std::array<uint64_t, 128> id_bytes_{};
  uint64_t frame_at_ = 0;                  // file offset of the frame being deframed
  std::optional<uint64_t> problem_frame_;  // the frame that held the ITM stream's first problem
  // Where recent frames' bytes begin in the ITM stream (offset there, file
  // offset): the ITM decoder may tell a problem some packets after its
  // bytes came (it holds up to ItmDecoder's 4,096 packets until port 1's
  // record set is known: at most ~21,000 stream bytes, far fewer frames than kept).
  std::deque<std::pair<uint64_t, uint64_t>> frame_starts_;
  uint64_t itm_fed_ = 0;
  void place_problem();
  // A source ID the architecture reserves (0x70-0x7A, 0x7C, 0x7E, 0x7F): no
  // trace source sends it, so its frame is damage, such as noise after the
  // capture's end scattered over IDs (one tail in five made up an event).
  uint64_t reserved_bytes_ = 0;
  std::optional<uint64_t> reserved_frame_, reserved_id_;
  DecodeStats framed(DecodeStats itm) const;
};

}  // namespace edgemem
