// libFuzzer entry: bytes -> decoder (chosen at build time) -> Analyzer ->
// JSON and text presenters. The input is fed in two uneven chunks so record
// reassembly across chunk boundaries is exercised as well.
#include <cstddef>
#include <cstdint>

#include "edgemem/analyzer.h"
#include "edgemem/report.h"

using namespace edgemem;

namespace {
Format target_format(std::span<const uint8_t> data) {
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
  return sniff_format(data);
#endif
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  TraceContext context;
  AnalyzerOptions options;
  options.default_pool_size = 1 << 16;
  Analyzer analyzer(context, options);
  auto decoder = make_decoder(target_format(bytes), context, analyzer);
  size_t split = size ? data[0] % (size + 1) : 0;
  decoder->feed(bytes.subspan(0, split));
  decoder->feed(bytes.subspan(split));
  decoder->finish();
  AnalysisResult result = analyzer.finish();
  InputSummary input{"fuzz", std::string(decoder->format_name()), decoder->stats(), context.time_base};
  (void)json_report(input, result);
  (void)text_report(input, result);
  return 0;
}
