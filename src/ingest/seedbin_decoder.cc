#include "seedbin_decoder.h"

#include <fmt/format.h>

namespace edgemem {
namespace {

uint32_t be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}
uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }

}  // namespace

SeedBinDecoder::SeedBinDecoder(TraceContext& context, EventSink& sink)
    : context_(context), sink_(sink) {}

size_t SeedBinDecoder::record_length(uint8_t header) {
  switch (header) {
    case 0xA1: return 7;   // size u16, address u32
    case 0xF1: return 5;   // address u32
    case 0xA2: return 9;   // size u32, address u32
    case 0xA3: return 13;  // size u32, address u32, call site u32
    case 0xC1: return 13;  // old u32, new u32, size u32
    case 0xE1: return 5;   // failed request size u32
    case 0xB1: return 5;   // inference begin, index u32
    case 0xB2: return 5;   // inference end, index u32
    case 0xD1: return 2;   // guard check, 0 = intact
    default: return 0;
  }
}

SiteId SeedBinDecoder::call_site(uint32_t address) {
  char text[10] = {'0', 'x'};
  for (int i = 0; i < 8; ++i) text[2 + i] = "0123456789abcdef"[(address >> (28 - 4 * i)) & 0xf];
  std::string_view name(text, sizeof text);
  auto& [cached_address, cached] = call_sites_[(address * 0x9E3779B1u) >> 23];
  if (cached != kUnknownSite && cached_address == address && context_.sites.name(cached) == name) return cached;
  SiteId id = context_.sites.intern(name);
  // The overflow site stands for many names: never cached, so the table
  // counts every dropped one.
  if (context_.sites.name(id) == name) {
    cached_address = address;
    cached = id;
  }
  return id;
}

void SeedBinDecoder::emit(const uint8_t* r) {
  Event e;
  // Named on the first record, not before: the ITM decoder holds a seed
  // decoder for port 1 whether or not any seed record comes, and an emt
  // stream on that port must not gain a "heap" pool it never declared.
  if (!heap_) heap_ = context_.pools.intern("heap", PoolKind::heap);
  e.pool = *heap_;
  e.time = external_clock_ ? time_ : stats_.events;
  switch (r[0]) {
    case 0xA1: e.kind = EventKind::alloc; e.size = be16(r + 1); e.address = be32(r + 3); break;
    case 0xF1: e.kind = EventKind::free; e.address = be32(r + 1); break;
    case 0xA2: e.kind = EventKind::alloc; e.size = be32(r + 1); e.address = be32(r + 5); break;
    case 0xA3:
      e.kind = EventKind::alloc;
      e.size = be32(r + 1);
      e.address = be32(r + 5);
      e.site = call_site(be32(r + 9));
      break;
    case 0xC1:
      e.kind = EventKind::realloc;
      e.old_address = be32(r + 1);
      e.address = be32(r + 5);
      e.size = be32(r + 9);
      break;
    case 0xE1: e.kind = EventKind::alloc_failed; e.size = be32(r + 1); break;
    case 0xB1: e.kind = EventKind::inference_begin; e.size = be32(r + 1); break;
    case 0xB2: e.kind = EventKind::inference_end; e.size = be32(r + 1); break;
    case 0xD1: e.kind = EventKind::guard_check; e.size = r[1] != 0; break;
  }
  sink_.on_event(e);
  ++stats_.events;
}

void SeedBinDecoder::feed(std::span<const uint8_t> bytes) {
  const uint8_t* p = bytes.data();
  const uint8_t* end = p + bytes.size();
  uint64_t offset = stats_.bytes;
  stats_.bytes += bytes.size();
  // Finish a record split across chunks first.
  while (have_ > 0 && p < end) {
    partial_[have_++] = *p++;
    if (have_ == need_) {
      emit(partial_.data());
      have_ = 0;
    }
  }
  while (p < end) {
    size_t len = record_length(*p);
    if (len == 0) {
      stats_.note_problem(offset + static_cast<uint64_t>(p - bytes.data()), 0,
                          fmt::format("expected a record header (0xA1 alloc, 0xF1 free, ...), found 0x{:02X}", *p));
      ++stats_.corrupt_bytes;
      ++p;
      continue;
    }
    if (static_cast<size_t>(end - p) >= len) {
      emit(p);
      p += len;
    } else {
      need_ = len;
      have_ = static_cast<size_t>(end - p);
      std::copy(p, end, partial_.begin());
      p = end;
    }
  }
}

void SeedBinDecoder::drop_partial() {
  stats_.corrupt_bytes += have_;
  have_ = 0;
}

void SeedBinDecoder::finish() {
  stats_.truncated_bytes += have_;
  have_ = 0;
}

}  // namespace edgemem
