// libFuzzer entry: bytes -> decoder (chosen at build time) -> Analyzer ->
// JSON and text presenters, so a crash anywhere downstream of bad bytes is
// found. It is also a differential check: the input decoded whole and split
// at a fuzzer-chosen point must give the same events and the same counts,
// or the decoder changed state on half a record; that aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "edgemem/analyzer.h"
#include "edgemem/report.h"

using namespace edgemem;

namespace {

std::optional<Format> target_format(std::span<const uint8_t> data) {
#if defined(EDGEMEM_FUZZ_FORMAT_textlog)
  (void)data;
  return Format::log;
#elif defined(EDGEMEM_FUZZ_FORMAT_seedbin)
  (void)data;
  return Format::seedbin;
#elif defined(EDGEMEM_FUZZ_FORMAT_itm)
  (void)data;
  return Format::itm;
#elif defined(EDGEMEM_FUZZ_FORMAT_tpiu)
  (void)data;
  return Format::tpiu;
#elif defined(EDGEMEM_FUZZ_FORMAT_emt)
  (void)data;
  return Format::emt;
#else
  return sniff_trace(data).format;  // refused inputs are not decoded
#endif
}

struct Recorder : EventSink {
  std::vector<Event> events;
  void on_event(const Event& e) override { events.push_back(e); }
};

struct Decoded {
  std::vector<Event> events;
  DecodeStats stats;
};

Decoded decode(Format format, const std::vector<std::span<const uint8_t>>& reads) {
  TraceContext context;
  Recorder sink;
  auto decoder = make_decoder(format, context, sink);
  for (auto r : reads) decoder->feed(r);
  decoder->finish();
  return {std::move(sink.events), decoder->stats()};
}

bool same_counts(const DecodeStats& a, const DecodeStats& b) {
  return a.bytes == b.bytes && a.events == b.events && a.skipped_lines == b.skipped_lines &&
         a.malformed_lines == b.malformed_lines && a.corrupt_bytes == b.corrupt_bytes &&
         a.truncated_bytes == b.truncated_bytes && a.overflows == b.overflows && a.syncs == b.syncs &&
         a.impossible_events == b.impossible_events && a.packets == b.packets;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  std::optional<Format> format = target_format(bytes);
  if (!format) return 0;

  size_t split = size ? data[0] % (size + 1) : 0;
  Decoded whole = decode(*format, {bytes});
  Decoded halves = decode(*format, {bytes.subspan(0, split), bytes.subspan(split)});
  if (whole.events != halves.events || !same_counts(whole.stats, halves.stats)) {
    std::fprintf(stderr, "edgemem fuzz: %zu bytes as %s split at %zu decode differently: %zu vs %zu events\n", size,
                 std::string(to_string(*format)).c_str(), split, whole.events.size(), halves.events.size());
    std::abort();
  }

  TraceContext context;
  AnalyzerOptions options;
  options.default_pool_size = 1 << 16;
  Analyzer analyzer(context, options);
  auto decoder = make_decoder(*format, context, analyzer);
  decoder->feed(bytes.subspan(0, split));
  decoder->feed(bytes.subspan(split));
  decoder->finish();
  AnalysisResult result = analyzer.finish();
  InputSummary input{"fuzz", std::string(decoder->format_name()), decoder->stats(), context.time_base};
  (void)json_report(input, result);
  (void)text_report(input, result);
  return 0;
}
