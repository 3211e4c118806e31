#include "analysis/tflm_capture.h"

#include <algorithm>
#include <charconv>
#include <map>

#include <fmt/format.h>

#include "edgemem/decoder.h"

namespace edgemem {
namespace {

constexpr std::string_view kHeadPool = "tflm", kTailPool = "tflm.persistent", kTensorPool = "tflm.tensors";

// "CONV_2D.Init:3" -> ("CONV_2D.Init", 3); a site without a number -> (site, 0).
std::pair<std::string, uint32_t> split_site(std::string_view site) {
  const size_t colon = site.rfind(':');
  uint32_t index = 0;
  if (colon != std::string_view::npos) {
    auto [end, ec] = std::from_chars(site.data() + colon + 1, site.data() + site.size(), index);
    if (ec == std::errc() && end == site.data() + site.size()) return {std::string(site.substr(0, colon)), index};
  }
  return {std::string(site), 0};
}

class CaptureSink final : public EventSink {
 public:
  explicit CaptureSink(const TraceContext& context) : context_(context) {}

  void on_event(const Event& e) override {
    if (e.kind == EventKind::inference_begin && !allocated_) {
      allocated_ = true;
      for (const auto& [offset, size] : head_live_) capture.head_bytes = std::max(capture.head_bytes, offset + size);
      capture.tail_bytes = tail_top_;
      return;
    }
    if (e.pool >= context_.pools.size()) return;
    const std::string& pool = context_.pools.at(e.pool).name;
    if (pool == kHeadPool) {
      seen_head = true;
      capture.arena_bytes = context_.pools.at(e.pool).size;
      if (e.kind == EventKind::alloc) head_live_[e.address] = e.size;
      if (e.kind == EventKind::free) head_live_.erase(e.address);
      if (e.kind == EventKind::realloc) {
        head_live_.erase(e.old_address);
        head_live_[e.address] = e.size;
      }
    } else if (pool == kTailPool && e.kind == EventKind::alloc) {
      seen_tail = true;
      auto [what, index] = split_site(context_.sites.name(e.site));
      CapturedTailBlock block{std::move(what), index, e.address, e.size, 0};
      const uint64_t top = e.address + e.size;
      block.charged = top > tail_top_ ? top - tail_top_ : 0;
      tail_top_ = std::max(tail_top_, top);
      (allocated_ ? capture.tail_later : capture.tail).push_back(std::move(block));
    } else if (pool == kTensorPool && e.kind == EventKind::alloc) {
      seen_tensors = true;
      auto [what, index] = split_site(context_.sites.name(e.site));
      if (what == "tensor") capture.tensors.push_back({static_cast<int32_t>(index), e.address, e.size});
    }
  }

  TflmCapture capture;
  bool seen_head = false, seen_tail = false, seen_tensors = false;
  bool allocated() const { return allocated_; }

 private:
  const TraceContext& context_;
  std::map<uint64_t, uint64_t> head_live_;  // offset -> size
  uint64_t tail_top_ = 0;
  bool allocated_ = false;
};

}  // namespace

std::optional<TflmCapture> read_tflm_capture(std::span<const uint8_t> bytes, const std::string& path,
                                             std::string& error) {
  TraceContext context;
  CaptureSink sink(context);
  auto decoder = make_decoder(Format::emt, context, sink);
  decoder->feed(bytes);
  decoder->finish();
  const char* fix = "record one with tools/tflm_oracle/capture.sh, or name the pools as docs/device.md says";
  if (decoder->stats().events == 0) {
    error = fmt::format("{}: offset 0: no emt events: --model compares a TFLite Micro arena capture in emt; {}", path,
                        fix);
    return std::nullopt;
  }
  if (!sink.seen_head || !sink.seen_tail || !sink.seen_tensors) {
    error = fmt::format("{}: not a TFLite Micro arena capture: expected pools \"{}\", \"{}\" and \"{}\" with "
                        "allocations; {}",
                        path, kHeadPool, kTailPool, kTensorPool, fix);
    return std::nullopt;
  }
  if (!sink.allocated()) {
    error = fmt::format("{}: no inference marker: AllocateTensors() did not finish in this capture, so there is no "
                        "plan to compare; capture with an arena large enough to run the model",
                        path);
    return std::nullopt;
  }
  std::sort(sink.capture.tensors.begin(), sink.capture.tensors.end(),
            [](const CapturedTensor& a, const CapturedTensor& b) { return a.tensor < b.tensor; });
  return std::move(sink.capture);
}

}  // namespace edgemem
