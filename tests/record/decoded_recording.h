// A recording decoded whole, for the record tests' assertions on its events.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "edgemem/decoder.h"
#include "test_support.h"

namespace edgemem::test {

struct Decoded {
  TraceContext context;
  std::vector<Event> events;
  DecodeStats stats;
};

inline std::unique_ptr<Decoded> decode_file(const std::filesystem::path& path) {
  auto d = std::make_unique<Decoded>();
  Recorder sink;
  auto decoder = make_decoder(Format::emt, d->context, sink);
  std::string bytes = read_file(path.string());
  decoder->feed({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  decoder->finish();
  d->events = std::move(sink.events);
  d->stats = decoder->stats();
  return d;
}

}  // namespace edgemem::test
