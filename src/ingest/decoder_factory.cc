#include "emt_decoder.h"
#include "impossible_event_filter.h"
#include "itm_port_router.h"
#include "seedbin_decoder.h"
#include "textlog_decoder.h"
#include "tpiu_deframer.h"

namespace edgemem {
namespace {

std::unique_ptr<Decoder> make_raw_decoder(Format format, TraceContext& context, EventSink& sink,
                                          const DecoderOptions& options) {
  switch (format) {
    case Format::log: return std::make_unique<TextLogDecoder>(context, sink);
    case Format::seedbin: return std::make_unique<SeedBinDecoder>(context, sink);
    case Format::itm: return std::make_unique<ItmDecoder>(context, sink);
    case Format::tpiu: return std::make_unique<TpiuDecoder>(context, sink, options.tpiu_stream);
    case Format::emt: return std::make_unique<EmtDecoder>(context, sink);
    case Format::automatic: break;
  }
  return nullptr;
}

// Seed records, ITM and TPIU come from 32-bit Cortex-M targets; emt and the
// text log also come from 64-bit hosts.
unsigned address_bits(Format format) {
  return format == Format::seedbin || format == Format::itm || format == Format::tpiu ? 32 : 64;
}

}  // namespace

std::unique_ptr<Decoder> make_decoder(Format format, TraceContext& context, EventSink& sink,
                                      const DecoderOptions& options) {
  if (format == Format::automatic) return nullptr;
  return std::make_unique<FilteredDecoder>(context, sink, address_bits(format), [&](EventSink& filtered) {
    return make_raw_decoder(format, context, filtered, options);
  });
}

}  // namespace edgemem
