#include "impossible_event_filter.h"

#include <fmt/format.h>

namespace edgemem {

const PoolInfo* ImpossibleEventFilter::declared_pool(PoolId id) const {
  const PoolInfo* pool = id < pools_.size() ? &pools_.at(id) : nullptr;
  return pool && pool->declared ? pool : nullptr;
}

// Where the block really is: arena offsets count from the arena's base.
ImpossibleEventFilter::Problem ImpossibleEventFilter::placement(const Event& e) const {
  const PoolInfo* pool = declared_pool(e.pool);
  uint64_t base = pool && pool->kind == PoolKind::arena ? pool->base : 0;
  uint64_t end_of_space = bits() >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits());
  if (e.address > end_of_space - base || e.size > end_of_space - base - e.address) return Problem::past_address_space;
  // A bump allocator that does not check its bounds really does hand out
  // blocks larger than its arena, or past its end after one overflow
  // (tests/firmware: 4096 B in a 3392 B arena), so for arenas that is the
  // overflow analysis' finding, not corruption. malloc never returns an
  // address outside its heap. A heap declared without a base gives no
  // range to check.
  if (pool && pool->kind == PoolKind::heap && pool->base_known && pool->size != 0 &&
      (e.address < pool->base || e.address - pool->base >= pool->size || e.size > pool->size))
    return Problem::outside_heap;
  return Problem::none;
}

std::string ImpossibleEventFilter::why(Problem problem, const Event& e) const {
  switch (problem) {
    case Problem::none:
      break;
    case Problem::over_1gib_on_32_bit:
      return fmt::format("a request of {} B (over 1 GiB on a 32-bit device)", e.size);
    case Problem::over_1tib:
      return fmt::format("a request of {} B (over 1 TiB)", e.size);
    case Problem::past_address_space: {
      const PoolInfo* pool = declared_pool(e.pool);
      uint64_t base = pool && pool->kind == PoolKind::arena ? pool->base : 0;
      return fmt::format("a block of {} B at 0x{:x} runs past the {}-bit address space", e.size, base + e.address,
                         bits());
    }
    case Problem::outside_heap: {
      const PoolInfo& pool = *declared_pool(e.pool);
      return fmt::format("a block of {} B at 0x{:x}, outside heap '{}' (0x{:x}, {} B)", e.size, e.address, pool.name,
                         pool.base, pool.size);
    }
  }
  return {};
}

void ImpossibleEventFilter::reject(const Event& event) {
  if (rejected_++ == 0)
    first_reason_ = fmt::format("{} at time {}: {}", to_string(event.kind), event.time, why(problem(event), event));
  // The old block of an impossible realloc was still released by it.
  if (event.kind == EventKind::realloc) {
    Event freed = event;
    freed.kind = EventKind::free;
    freed.address = event.old_address;
    freed.size = 0;
    next_.on_event(freed);
  }
}

FilteredDecoder::FilteredDecoder(TraceContext& context, EventSink& sink, unsigned address_bits,
                                 const std::function<std::unique_ptr<Decoder>(EventSink&)>& make_inner)
    : context_(context), filter_(context, sink, address_bits), inner_(make_inner(filter_)) {}

void FilteredDecoder::finish() {
  inner_->finish();
  stats_ = merged(inner_->stats());
}

DecodeStats FilteredDecoder::progress() const { return merged(inner_->progress()); }

DecodeStats FilteredDecoder::merged(DecodeStats s) const {
  s.impossible_events = filter_.rejected();
  s.events -= filter_.rejected();
  s.first_impossible = filter_.first_reason();
  s.sites_dropped += context_.sites.dropped();  // the reader may have dropped stack nodes of its own
  s.pools_dropped = context_.pools.dropped();
  return s;
}

}  // namespace edgemem
