// Format detection: each candidate decoder runs over the first bytes and the
// one that explains them best wins. Decoders are the judges, so detection and
// decoding can never disagree about what a valid record is.
#include <algorithm>

#include "edgemem/decoder.h"
#include "itm_port_router.h"
#include "seedbin_decoder.h"
#include "tpiu_deframer.h"

namespace edgemem {
namespace {

struct NullSink : EventSink {
  void on_event(const Event&) override {}
};

double printable_share(std::span<const uint8_t> head) {
  size_t printable = 0;
  for (uint8_t b : head)
    if ((b >= 0x20 && b < 0x7f) || b == '\n' || b == '\r' || b == '\t' || b >= 0x80) ++printable;
  return static_cast<double>(printable) / static_cast<double>(head.size());
}

// Share of bytes an ITM decoder spends on packets edgemem expects: ports
// 0-2, DWT hardware packets, timestamps and syncs.
double itm_score(const DecodeStats& s, const ItmDecoder* itm, uint64_t bytes) {
  if (bytes == 0) return 0;
  uint64_t odd = s.corrupt_bytes;
  if (itm)
    for (unsigned port = 3; port < 32; ++port) odd += itm->port_packets(port) * 2;
  return 1.0 - std::min(1.0, static_cast<double>(odd) / static_cast<double>(bytes));
}

}  // namespace

Format sniff_format(std::span<const uint8_t> head) {
  if (head.empty()) return Format::log;
  static constexpr uint8_t emt_sync[] = {0x7E, 'e', 'm', 't', '!'};
  if (head.size() >= sizeof emt_sync && std::equal(emt_sync, emt_sync + sizeof emt_sync, head.begin()))
    return Format::emt;
  bool utf8_text = printable_share(head) > 0.95;
  constexpr std::string_view tag = "[MEM]";
  bool has_tag = std::search(head.begin(), head.end(), tag.begin(), tag.end()) != head.end();
  if (has_tag || utf8_text) return Format::log;

  NullSink sink;
  TraceContext ctx;
  SeedBinDecoder seedbin(ctx, sink);
  seedbin.feed(head);
  seedbin.finish();
  double seedbin_score = 1.0 - static_cast<double>(seedbin.stats().corrupt_bytes) / head.size();

  TraceContext ctx2;
  ItmDecoder itm(ctx2, sink);
  itm.feed(head);
  itm.finish();
  double itm_s = itm_score(itm.stats(), &itm, head.size());

  TraceContext ctx3;
  TpiuDecoder tpiu(ctx3, sink, 1);
  tpiu.feed(head);
  tpiu.finish();
  // Deframed bytes for stream 1 must parse cleanly as ITM; a raw stream read
  // as frames scatters its bytes over many random IDs instead.
  const auto& tp = tpiu.stats();
  uint64_t ids = 0, stream1 = 0;
  for (const auto& [name, count] : tp.packets)
    if (name.starts_with("tpiu_stream_")) {
      ++ids;
      if (name == "tpiu_stream_1_bytes") stream1 = count;
    }
  double tpiu_s = 0;
  if (stream1 > 0 && ids <= 3) tpiu_s = itm_score(tp, nullptr, stream1) * (tp.packets.at("tpiu_syncs") ? 1.0 : 0.99);

  if (tpiu_s >= itm_s && tpiu_s >= seedbin_score && tpiu_s > 0.5) return Format::tpiu;
  if (seedbin_score >= itm_s) return Format::seedbin;
  return Format::itm;
}

}  // namespace edgemem
