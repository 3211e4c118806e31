#include "emt_decoder.h"
#include "itm_port_router.h"
#include "seedbin_decoder.h"
#include "textlog_decoder.h"
#include "tpiu_deframer.h"

namespace edgemem {

std::unique_ptr<Decoder> make_decoder(Format format, TraceContext& context, EventSink& sink,
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

}  // namespace edgemem
