// libFuzzer entry for the reader of bpftrace's output (the eBPF recorder):
// any bytes, read whole and then in pieces cut where the input says, must
// give the same records and counters, and never crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "record/ebpf_output_parser.h"

namespace {

struct Parsed {
  std::vector<edgemem::UprobeRecord> records;
  uint64_t lost = 0, other = 0;
  bool ready = false;
};

Parsed parse(std::string_view text, size_t piece) {
  edgemem::BpftraceOutputParser parser;
  Parsed p;
  for (size_t at = 0; at < text.size(); at += piece) parser.feed(text.substr(at, piece), p.records);
  parser.finish(p.records);
  p.lost = parser.lost_events();
  p.other = parser.other_lines();
  p.ready = parser.ready();
  return p;
}

bool same(const edgemem::UprobeRecord& a, const edgemem::UprobeRecord& b) {
  return a.kind == b.kind && a.tid == b.tid && a.cpu == b.cpu && a.time == b.time && a.address == b.address &&
         a.size == b.size && a.align == b.align && a.mapping == b.mapping && a.old == b.old && a.result == b.result &&
         a.keeps_old == b.keeps_old && a.reserved == b.reserved && a.stack == b.stack;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Parsed whole = parse(text, size ? size : 1);
  Parsed split = parse(text, size ? 1 + data[0] % 7 : 1);
  if (whole.records.size() != split.records.size() || whole.lost != split.lost || whole.other != split.other ||
      whole.ready != split.ready)
    std::abort();
  for (size_t i = 0; i < whole.records.size(); ++i)
    if (!same(whole.records[i], split.records[i])) std::abort();
  return 0;
}
