#include <gtest/gtest.h>

#include "test_support.h"

namespace edgemem::test {
namespace {

std::span<const uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST(Sniffer, TellsEveryFormatApart) {
  EXPECT_EQ(sniff_trace(bytes("boot\n[MEM][1] ALLOC size=1 offset=0\n")).format, Format::log);
  std::string bin;
  for (uint32_t i = 0; i < 64; ++i) {
    bin += '\xA2'; be32(bin, 16 + i); be32(bin, 0x20000000 + i * 64);
    bin += '\xF1'; be32(bin, 0x20000000 + i * 64);
  }
  EXPECT_EQ(sniff_trace(bytes(bin)).format, Format::seedbin);
  EXPECT_EQ(sniff_trace(bytes(read_file(corpus("itm/sigrok_stm32f105_itm_stream1.bin")))).format, Format::itm);
  EXPECT_EQ(sniff_trace(bytes(read_file(corpus("itm/sigrok_stm32f105_swo_tpiu.bin")))).format, Format::tpiu);
}

}  // namespace
}  // namespace edgemem::test
