// libFuzzer entry for a debugger's dump of the device's RAM ring: bytes ->
// unwrap_ring_dump -> (the unread bytes) TraceSession -> JSON. What it
// hands on is never more than the ring holds; that aborts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "edgemem/report.h"
#include "edgemem/trace_session.h"
#include "session/ring_dump.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string error;
  auto ring = edgemem::unwrap_ring_dump({reinterpret_cast<const char*>(data), size}, error);
  if (!ring) {
    if (error.empty()) std::abort();  // a refusal always says why
    return 0;
  }
  if (ring->unread.size() > ring->size || ring->unread.size() != uint32_t(ring->head - ring->tail)) std::abort();
  edgemem::TraceSession session("fuzz", {});
  session.feed({reinterpret_cast<const uint8_t*>(ring->unread.data()), ring->unread.size()});
  edgemem::TraceOutcome out = session.finish();
  if (out.run) (void)edgemem::json_report(out.run->input, out.run->result);
  return 0;
}
