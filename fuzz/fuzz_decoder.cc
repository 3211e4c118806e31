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
#include "edgemem/emt_v2.h"
#include "edgemem/report.h"

#if defined(EDGEMEM_FUZZ_FORMAT_emt2)
#include <zstd.h>
#endif

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
#elif defined(EDGEMEM_FUZZ_FORMAT_emt) || defined(EDGEMEM_FUZZ_FORMAT_emt2)
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

#if defined(EDGEMEM_FUZZ_FORMAT_emt2)
// The fuzzer's bytes as the records of two threads' chunks of an emt v2 or
// v3 recording (a valid header and chunk headers around them), so it
// explores the record parsers and the merge by sequence number rather than
// the page layout: the first half is a whole chunk of thread 1, the second
// the start of a chunk of thread 2. The last input byte picks the form:
// v2 chunked, v3 chunked, v3 packed (the same chunks zstd-compressed), or
// the bytes themselves as a packed file's zstd stream.
std::vector<uint8_t> v2_recording(const uint8_t* data, size_t size) {
  namespace e2 = emt2;
  unsigned form = size ? data[size - 1] % 4 : 0;
  std::vector<uint8_t> out = {0x7E, 'e', 'm', 't', '!', 0x00, 0x01, form == 0 ? uint8_t{2} : uint8_t{3}, 0x00};
  if (form >= 2) out.push_back(e2::kLayoutPacked);
  if (form == 3) {
    out.insert(out.end(), data, data + size);
    return out;
  }
  if (form == 1) out.push_back(e2::kLayoutChunked);
  size_t half = std::min(size / 2, e2::kChunkPayloadBytes), rest = std::min(size - half, e2::kChunkPayloadBytes);
  std::vector<uint8_t> unpacked;
  if (form < 2) out.resize(e2::kHeaderBytes, 0);
  auto add_chunk = [&](uint32_t slot, uint32_t index, const uint8_t* records, size_t n, bool whole) {
    if (form == 2) {
      uint8_t fields[30];
      size_t f = e2::put_varint(fields, slot);
      f += e2::put_varint(fields + f, 0);
      f += e2::put_varint(fields + f, n);
      unpacked.insert(unpacked.end(), fields, fields + f);
      unpacked.insert(unpacked.end(), records, records + n);
      return;
    }
    size_t at = out.size();
    out.resize(at + (whole ? e2::kChunkBytes : e2::kChunkHeaderBytes + n), 0);
    std::copy(std::begin(e2::kChunkMagic), std::end(e2::kChunkMagic), out.begin() + at);
    e2::put_u32(&out[at + e2::kSlotAt], slot);
    e2::put_u32(&out[at + e2::kIndexAt], index);
    e2::put_u32(&out[at + e2::kUsedAt], static_cast<uint32_t>(n));
    std::copy(records, records + n, out.begin() + at + e2::kChunkHeaderBytes);
  };
  add_chunk(1, 0, data, half, true);
  add_chunk(2, 1, data + half, rest, false);
  if (form == 2) {
    std::vector<uint8_t> packed(ZSTD_compressBound(unpacked.size()));
    size_t n = ZSTD_compress(packed.data(), packed.size(), unpacked.data(), unpacked.size(), 1);
    if (!ZSTD_isError(n)) out.insert(out.end(), packed.begin(), packed.begin() + static_cast<std::ptrdiff_t>(n));
  }
  return out;
}
#endif

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
#if defined(EDGEMEM_FUZZ_FORMAT_emt2)
  std::vector<uint8_t> recording = v2_recording(data, size);
  std::span<const uint8_t> bytes(recording);
  // Two input bytes choose the split, so it can fall anywhere in the recording.
  size_t choice = size ? (size_t{data[0]} << 8 | (size > 1 ? data[1] : 0)) * 3 : 0;
  size = recording.size();
#else
  std::span<const uint8_t> bytes(data, size);
  size_t choice = size ? data[0] : 0;
#endif
  std::optional<Format> format = target_format(bytes);
  if (!format) return 0;

  size_t split = choice % (size + 1);
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
