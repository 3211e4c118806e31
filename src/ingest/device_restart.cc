#include "ingest/device_restart.h"

namespace edgemem {

void device_restarted(TraceContext& context, DecodeStats& stats, EventSink& sink, uint64_t time) {
  ++stats.device_restarts;
  ++context.device_restarts;
  context.restart_time = time;
  context.restart_resets = context.pools.size();
  for (size_t i = 0; i < context.pools.size(); ++i) {
    Event e;
    e.kind = EventKind::arena_reset;
    e.pool = static_cast<PoolId>(i);
    e.time = time;
    sink.on_event(e);
  }
}

}  // namespace edgemem
