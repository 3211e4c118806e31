#include "impossible_event_filter.h"

#include <fmt/format.h>

namespace edgemem {

std::string ImpossibleEventFilter::why_impossible(const Event& e) const {
  bool block = e.kind == EventKind::alloc || e.kind == EventKind::realloc;
  if (!block && e.kind != EventKind::alloc_failed) return {};
  if (address_bits_ <= 32 && e.size > kAbsurdSize32)
    return fmt::format("a request of {} B (over 1 GiB on a 32-bit device)", e.size);
  if (e.size > kAbsurdSize) return fmt::format("a request of {} B (over 1 TiB)", e.size);
  // A failed request may be larger than its pool; that is why it failed.
  if (!block) return {};
  uint64_t end_of_space = address_bits_ >= 64 ? ~uint64_t{0} : (uint64_t{1} << address_bits_);
  if (e.address > end_of_space || e.size > end_of_space - e.address)
    return fmt::format("a block of {} B at 0x{:x} runs past the {}-bit address space", e.size, e.address,
                       address_bits_);
  if (e.pool >= pools_.size()) return {};
  const PoolInfo& pool = pools_.at(e.pool);
  if (!pool.declared || pool.size == 0) return {};
  if (e.size > pool.size)
    return fmt::format("a block of {} B in pool '{}' of {} B", e.size, pool.name, pool.size);
  // A block that starts inside its pool and runs past the end is an overflow
  // for the analyses to report; one that starts outside was never the pool's.
  if (pool.kind == PoolKind::arena && e.address >= pool.size)
    return fmt::format("offset {} in arena '{}' of {} B", e.address, pool.name, pool.size);
  // A heap declared without a base (0) gives no address range to check.
  if (pool.kind == PoolKind::heap && pool.base != 0 &&
      (e.address < pool.base || e.address - pool.base >= pool.size))
    return fmt::format("address 0x{:x} outside heap '{}' (0x{:x}, {} B)", e.address, pool.name, pool.base, pool.size);
  return {};
}

void ImpossibleEventFilter::on_event(const Event& event) {
  std::string why = why_impossible(event);
  if (why.empty()) return next_.on_event(event);
  if (rejected_++ == 0) first_reason_ = fmt::format("{} at time {}: {}", to_string(event.kind), event.time, why);
}

FilteredDecoder::FilteredDecoder(TraceContext& context, EventSink& sink, unsigned address_bits,
                                 const std::function<std::unique_ptr<Decoder>(EventSink&)>& make_inner)
    : context_(context), filter_(context.pools, sink, address_bits), inner_(make_inner(filter_)) {}

void FilteredDecoder::finish() {
  inner_->finish();
  stats_ = inner_->stats();
  stats_.impossible_events = filter_.rejected();
  stats_.events -= filter_.rejected();
  stats_.first_impossible = filter_.first_reason();
  stats_.sites_dropped = context_.sites.dropped();
  stats_.pools_dropped = context_.pools.dropped();
}

}  // namespace edgemem
