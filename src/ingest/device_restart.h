// A device that booted again inside one capture (emt: a HEADER after
// records; [MEM] text: a BOOT line after records).
#pragma once

#include <cstdint>

#include "edgemem/decoder.h"

namespace edgemem {

// Counts the restart, then resets every pool at `time`: the device's RAM
// was set up anew, so no block of the boot before is live. The count comes
// first, so the analyses see a new boot at the first reset. The resets are
// not records of the input: DecodeStats::events does not count them.
void device_restarted(TraceContext& context, DecodeStats& stats, EventSink& sink, uint64_t time);

}  // namespace edgemem
