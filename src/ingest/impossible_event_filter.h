// The one place between every decoder and the analyses where decoded events
// are checked against what could have happened. A record that decodes
// cleanly but describes an impossible block (outside its declared heap, past
// the end of the address space, more memory than the device can address)
// comes from damaged or misread bytes: it is counted as corrupt and never
// reaches an analysis, where it would become a multi-gigabyte "peak" or
// "leak". A block merely too big for its arena is not impossible: that is
// an overflow, and reporting it is the overflow analysis' job.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>

#include "edgemem/decoder.h"

namespace edgemem {

class ImpossibleEventFilter final : public EventSink {
 public:
  // No allocator on a host hands out a terabyte at once (a recording's
  // mappings may reserve that much: PoolInfo::mappings); on a 32-bit
  // Cortex-M (ITM, seed records) the largest RAM region of the memory map,
  // external RAM at 0x6000_0000, is 1 GiB.
  static constexpr uint64_t kAbsurdSize = uint64_t{1} << 40;
  static constexpr uint64_t kAbsurdSize32 = uint64_t{1} << 30;

  ImpossibleEventFilter(const TraceContext& context, EventSink& next, unsigned address_bits)
      : context_(context), pools_(context.pools), next_(next), address_bits_(address_bits) {}
  // Inline, and no string unless an event is rejected: every event of every
  // decoder passes here.
  void on_event(const Event& event) override {
    if (problem(event) == Problem::none) [[likely]]
      return next_.on_event(event);
    reject(event);
  }
  uint64_t rejected() const { return rejected_; }
  // What was wrong with the first rejected event, for the report.
  const std::string& first_reason() const { return first_reason_; }

 private:
  enum class Problem : uint8_t { none, over_1gib_on_32_bit, over_1tib, past_address_space, outside_heap };
  Problem problem(const Event& e) const {
    // A failed request of any size is a finding (malloc((size_t)-1) is a real
    // bug), never corruption; only blocks said to exist are checked.
    if (e.kind != EventKind::alloc && e.kind != EventKind::realloc) return Problem::none;
    // NULL from a heap's allocator: a failed request, the analyses' to judge.
    if (e.address == 0 && e.pool < pools_.size() && pools_.at(e.pool).kind == PoolKind::heap &&
        !pools_.at(e.pool).kind_guessed) [[unlikely]]
      return Problem::none;
    if (bits() <= 32 && e.size > kAbsurdSize32) return Problem::over_1gib_on_32_bit;
    if (e.size > kAbsurdSize && !(e.pool < pools_.size() && pools_.at(e.pool).mappings)) return Problem::over_1tib;
    return placement(e);
  }
  unsigned bits() const { return std::min(address_bits_, context_.address_bits); }
  // Whether the block lies where its pool and the address space allow.
  Problem placement(const Event& e) const;
  // The declared pool an event names, or null.
  const PoolInfo* declared_pool(PoolId id) const;
  std::string why(Problem problem, const Event& e) const;
  void reject(const Event& e);

  const TraceContext& context_;
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
  void cut() override { inner_->cut(); }
  DecodeStats progress() const override;
  std::string_view format_name() const override { return inner_->format_name(); }
  std::optional<double> clock_hz() const override { return inner_->clock_hz(); }

 private:
  TraceContext& context_;
  ImpossibleEventFilter filter_;
  std::unique_ptr<Decoder> inner_;
  // The inner decoder's counts with the filter's and the tables' added.
  DecodeStats merged(DecodeStats inner) const;
};

}  // namespace edgemem
