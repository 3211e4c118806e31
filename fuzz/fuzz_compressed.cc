// libFuzzer entry for whole-file compression: bytes -> TraceSession (gzip,
// xz or zstd undone, the format sniffed, decoded, analysed) -> JSON. A
// differential check too: the input fed whole and split at a fuzzer-chosen
// point must give the same report, where the damage is named included, or
// the decompressor kept state wrongly across reads; that aborts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "edgemem/report.h"
#include "edgemem/trace_session.h"

namespace {

std::string report(std::span<const uint8_t> first, std::span<const uint8_t> second) {
  edgemem::TraceSession session("fuzz", {});
  session.feed(first);
  session.feed(second);
  edgemem::TraceOutcome out = session.finish();
  std::string said;
  for (const std::string& note : out.notes) said += note + "\n";
  if (!out.run) return said;
  (void)edgemem::text_report(out.run->input, out.run->result);
  return said + edgemem::json_report(out.run->input, out.run->result);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t split = data[0] % (size - 1);
  std::span<const uint8_t> in(data + 1, size - 1);
  if (report(in, {}) != report(in.first(split), in.subspan(split))) std::abort();
  return 0;
}
