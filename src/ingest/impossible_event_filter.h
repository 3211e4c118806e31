// The one place between every decoder and the analyses where decoded events
// are checked against what could have happened. A record that decodes
// cleanly but describes an impossible block (outside its declared heap, past
// the end of the address space, more memory than the device can address)
// comes from damaged or misread bytes: it is counted as corrupt and never
// reaches an analysis, where it would become a multi-gigabyte "peak" or
// "leak". A block merely too big for its arena is not impossible: that is
// an overflow, and reporting it is the overflow analysis' job.
#pragma once

#include <functional>
#include <memory>

#include "edgemem/decoder.h"

namespace edgemem {

class ImpossibleEventFilter final : public EventSink {
 public:
  // No allocator on a host hands out a terabyte at once; on a 32-bit
  // Cortex-M (ITM, seed records) the largest RAM region of the memory map,
  // external RAM at 0x6000_0000, is 1 GiB.
  static constexpr uint64_t kAbsurdSize = uint64_t{1} << 40;
  static constexpr uint64_t kAbsurdSize32 = uint64_t{1} << 30;

  ImpossibleEventFilter(const PoolTable& pools, EventSink& next, unsigned address_bits)
      : pools_(pools), next_(next), address_bits_(address_bits) {}
  void on_event(const Event& event) override;
  uint64_t rejected() const { return rejected_; }
  // What was wrong with the first rejected event, for the report.
  const std::string& first_reason() const { return first_reason_; }

 private:
  // Empty if the event is possible.
  std::string why_impossible(const Event& e) const;

  const PoolTable& pools_;
  EventSink& next_;
  unsigned address_bits_;
  uint64_t rejected_ = 0;
  std::string first_reason_;
};

// A decoder whose events pass through ImpossibleEventFilter, and whose stats
// also carry the filter's count and the interned tables' overflow counts.
class FilteredDecoder final : public Decoder {
 public:
  // `make_inner` builds the real decoder around the sink it is given.
  FilteredDecoder(TraceContext& context, EventSink& sink, unsigned address_bits,
                  const std::function<std::unique_ptr<Decoder>(EventSink&)>& make_inner);
  void feed(std::span<const uint8_t> bytes) override { inner_->feed(bytes); }
  void finish() override;
  std::string_view format_name() const override { return inner_->format_name(); }
  std::optional<double> clock_hz() const override { return inner_->clock_hz(); }

 private:
  TraceContext& context_;
  ImpossibleEventFilter filter_;
  std::unique_ptr<Decoder> inner_;
};

}  // namespace edgemem
