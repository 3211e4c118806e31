#include "ingest/device_restart.h"

namespace edgemem {

void device_restarted(TraceContext& context, DecodeStats& stats, EventSink& sink, uint64_t time) {
  ++stats.device_restarts;
  ++context.device_restarts;
  context.restart_time = time;
  // The analyses see no reset of a placement pool (TFLM's tensor offsets).
  context.restart_resets = 0;
  for (size_t i = 0; i < context.pools.size(); ++i)
    context.restart_resets += !context.pools.at(static_cast<PoolId>(i)).placement;
  for (size_t i = 0; i < context.pools.size(); ++i) {
    Event e;
    e.kind = EventKind::arena_reset;
    e.pool = static_cast<PoolId>(i);
    e.time = time;
    sink.on_event(e);
  }
}

}  // namespace edgemem
