#include "tpiu_deframer.h"

#include <algorithm>

#include <fmt/format.h>

namespace edgemem {

void TpiuDeframer::push(uint8_t byte) {
  last4_ = (last4_ << 8) | byte;
  buf_[fill_++] = byte;
  if (last4_ == 0xffffff7fu) {
    ++syncs_;
    dropped_ += fill_ >= 4 ? fill_ - 4 : 0;
    fill_ = 0;
    return;
  }
  // A half-word sync, FF 7F on a half-word boundary, pads the stream between
  // or within frames and is discarded (no frame has ID 0x7F there). Read as
  // data, it scattered a capture over reserved IDs and made up events.
  if ((fill_ & 1) == 0 && byte == 0x7f && buf_[fill_ - 2] == 0xff) {
    fill_ -= 2;
    ++halfsyncs_;
    return;
  }
  if (fill_ == 16) {
    frame();
    fill_ = 0;
  }
}

void TpiuDeframer::frame() {
  ++frames_;
  const uint8_t aux = buf_[15];
  for (unsigned k = 0; k < 8; ++k) {
    uint8_t b = buf_[2 * k];
    bool has_odd = k < 7;
    if (b & 1) {
      // ID change; the aux bit says whether the next byte still belongs to the old ID.
      uint8_t new_id = b >> 1;
      bool delayed = (aux >> k) & 1;
      if (has_odd && delayed) output_(id_, buf_[2 * k + 1]);
      id_ = new_id;
      if (has_odd && !delayed) output_(id_, buf_[2 * k + 1]);
    } else {
      output_(id_, static_cast<uint8_t>(b | ((aux >> k) & 1)));
      if (has_odd) output_(id_, buf_[2 * k + 1]);
    }
  }
}

namespace {
bool reserved_source(uint8_t id) { return (id >= 0x70 && id <= 0x7A) || id == 0x7C || id >= 0x7E; }
}  // namespace

TpiuDecoder::TpiuDecoder(TraceContext& context, EventSink& sink, unsigned stream)
    : itm_(context, sink),
      deframer_([this](uint8_t id, uint8_t byte) {
        ++id_bytes_[id & 0x7f];
        if (reserved_source(id)) {
          ++reserved_bytes_;
          if (!reserved_frame_) {
            reserved_frame_ = frame_at_;
            reserved_id_ = id;
          }
        }
        if (id != stream_) return;
        if (frame_starts_.empty() || frame_starts_.back().second != frame_at_) {
          frame_starts_.emplace_back(itm_fed_, frame_at_);
          if (frame_starts_.size() > 65536) frame_starts_.pop_front();
        }
        itm_.feed({&byte, 1});
        ++itm_fed_;
        place_problem();
      }),
      stream_(stream) {}

void TpiuDecoder::feed(std::span<const uint8_t> bytes) {
  for (size_t i = 0; i < bytes.size(); ++i) {
    // A frame's bytes come out when its 16th byte is pushed.
    const uint64_t at = stats_.bytes + i;
    frame_at_ = at >= 15 ? at - 15 : 0;
    deframer_.push(bytes[i]);
  }
  stats_.bytes += bytes.size();
}

void TpiuDecoder::place_problem() {
  if (problem_frame_ || !itm_.stats().first_problem) return;
  const uint64_t at = itm_.stats().first_problem->offset;
  auto after = std::upper_bound(frame_starts_.begin(), frame_starts_.end(), at,
                                [](uint64_t offset, const auto& start) { return offset < start.first; });
  problem_frame_ = after == frame_starts_.begin() ? frame_at_ : std::prev(after)->second;
}

void TpiuDecoder::finish() {
  itm_.finish();
  place_problem();
  const uint64_t bytes = stats_.bytes;
  stats_ = framed(itm_.stats());
  stats_.truncated_bytes += deframer_.pending();
  if (itm_.stats().bytes == 0 && bytes > 0)
    stats_.note_problem(0, 0, fmt::format("no bytes for TPIU stream {} (use --tpiu-stream)", stream_));
}

DecodeStats TpiuDecoder::progress() const { return framed(itm_.progress()); }

// The ITM stream's counts, measured in the file's bytes, with the frames'.
DecodeStats TpiuDecoder::framed(DecodeStats s) const {
  s.bytes = stats_.bytes;
  // The ITM decoder counts offsets in the stream it was given: say where in the file that was.
  if (s.first_problem && problem_frame_) {
    s.first_problem->what += fmt::format(" (ITM stream byte {}, in the TPIU frame at offset {})", s.first_problem->offset,
                                         *problem_frame_);
    s.first_problem->offset = *problem_frame_;
  }
  s.corrupt_bytes += deframer_.dropped() + reserved_bytes_;
  if (reserved_frame_ && (!s.first_problem || *reserved_frame_ < s.first_problem->offset))
    s.first_problem = DecodeProblem{*reserved_frame_, 0,
                                    fmt::format("TPIU frame with source ID {:#04x}, which the architecture reserves: "
                                                "the capture is damaged here (its bytes are skipped)",
                                                *reserved_id_)};
  s.packets["tpiu_frames"] = deframer_.frames();
  s.packets["tpiu_syncs"] = deframer_.syncs();
  for (unsigned id = 1; id < 0x70; ++id)
    if (id_bytes_[id]) s.packets[fmt::format("tpiu_stream_{}_bytes", id)] = id_bytes_[id];
  return s;
}

}  // namespace edgemem
