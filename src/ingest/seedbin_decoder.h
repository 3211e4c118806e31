// Decoder for seed 000's binary record log (0xA1 alloc, 0xF1 free, fields
// big-endian) and edgemem's extra record types (docs/formats/seedbin.md).
// Bytes that start no known record are counted as corrupt and skipped one at
// a time, which resynchronises on the next record header.
#pragma once

#include <array>
#include <optional>
#include <utility>

#include "edgemem/decoder.h"

namespace edgemem {

class SeedBinDecoder final : public Decoder {
 public:
  SeedBinDecoder(TraceContext& context, EventSink& sink);
  void feed(std::span<const uint8_t> bytes) override;
  void finish() override;
  void cut() override { finish(); }
  std::string_view format_name() const override { return "seedbin"; }

  // ITM supplies timestamps; otherwise events are numbered in order.
  void set_external_time(uint64_t time) {
    external_clock_ = true;
    time_ = time;
    context_.time_base = TimeBase::cycles;
  }
  // Data was lost upstream (ITM overflow): a half-built record is garbage.
  void drop_partial();
  // Length of the record starting with `header`, 0 if it is no record header.
  static size_t record_length(uint8_t header);

 private:
  void emit(const uint8_t* record);
  // The interned "0x%08x" name of a 0xA3 record's call site.
  SiteId call_site(uint32_t address);

  TraceContext& context_;
  EventSink& sink_;
  std::optional<PoolId> heap_;
  std::array<uint8_t, 16> partial_{};
  size_t have_ = 0;
  size_t need_ = 0;
  uint64_t time_ = 0;
  bool external_clock_ = false;
  // Call sites by return address, direct-mapped, so a 0xA3 record does not
  // format its name and hash it into the site table every time (string
  // work per event, where the rest of a record is a few loads). An entry is
  // used only while the table still gives its id that name.
  std::array<std::pair<uint32_t, SiteId>, 512> call_sites_{};
};

}  // namespace edgemem
