// One emt version 2/3 chunk as the preload library writes it: the header
// fields, then the records; shared by the v2 and v3 reader tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>

#include "edgemem/emt_v2.h"

namespace edgemem::test {

inline std::string chunk(uint32_t slot, uint32_t index, uint64_t base_seq, const std::string& records) {
  namespace e2 = emt2;
  std::string c(e2::kChunkBytes, '\0');
  uint8_t* p = reinterpret_cast<uint8_t*>(c.data());
  std::copy(std::begin(e2::kChunkMagic), std::end(e2::kChunkMagic), p);
  e2::put_u32(p + e2::kSlotAt, slot);
  e2::put_u32(p + e2::kIndexAt, index);
  e2::put_u32(p + e2::kUsedAt, static_cast<uint32_t>(records.size()));
  e2::put_u64(p + e2::kBaseSeqAt, base_seq);
  c.replace(e2::kChunkHeaderBytes, records.size(), records);
  return c;
}

}  // namespace edgemem::test
