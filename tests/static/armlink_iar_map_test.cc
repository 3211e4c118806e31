// armlink and IAR maps written by real toolchains (tests/data/corpus/
// map_armlink, map_iar): the totals edgemem sums from the entries must equal
// the totals each file prints (listed in tests/data/SOURCES.md).
#include <gtest/gtest.h>

#include "static/linker_map.h"
#include "test_support.h"

namespace edgemem {
namespace {

using edgemem::test::corpus;
using edgemem::test::read_file;
using edgemem::test::region_used;

struct Armlink {
  const char* file;
  uint64_t code, ro, rw, zi, total_ro, total_rw, total_rom;
};

TEST(ArmlinkMap, TotalsEqualGrandTotalsOfEveryCorpusMap) {
  const Armlink cases[] = {
      {"badshun_minirtos_ac5_5.06u7.map", 3372, 276, 48, 3816, 3648, 3864, 3696},
      {"openbrightweb_stm32f103_ac5_5.06u5.map", 27882, 9918, 164, 2932, 37800, 3096, 37964},
      {"bairu_nuedc2024h_mspm0g3507_ac6_6.22.map", 29492, 6092, 104, 17560, 35584, 17664, 35688},
      {"stm32deployai_cmsisnn_mnist_f407_ac5_5.06u6.map", 2422, 2242, 3360, 88248, 4664, 91608, 6212},
  };
  for (const Armlink& c : cases) {
    SCOPED_TRACE(c.file);
    LinkerMap m = test::linker_map(corpus(std::string("map_armlink/") + c.file));
    EXPECT_EQ(m.toolchain, "armlink");
    EXPECT_EQ(m.totals.code, c.code);
    EXPECT_EQ(m.totals.ro_data, c.ro);
    EXPECT_EQ(m.totals.rw_data, c.rw);
    EXPECT_EQ(m.totals.zi_data, c.zi);
    EXPECT_EQ(m.stated["Total RO Size"], c.total_ro);
    EXPECT_EQ(m.stated["Code"], c.code);
    // Flash is what the load regions hold, compressed RW included.
    EXPECT_EQ(region_used(m, RegionKind::flash), c.total_rom);
    EXPECT_EQ(region_used(m, RegionKind::ram), c.total_rw);
    EXPECT_FALSE(m.symbols.empty());
    EXPECT_FALSE(m.contributions.empty());
  }
}

TEST(ArmlinkMap, CompressedRwAndEmptyLoadRegions) {
  LinkerMap m = test::linker_map(corpus("map_armlink/stm32deployai_cmsisnn_mnist_f407_ac5_5.06u6.map"));
  ASSERT_NE(test::map_region(m, "LR_IROM1"), nullptr);
  EXPECT_EQ(test::map_region(m, "LR_IROM1")->used, 0x1844u);  // COMPRESSED[0x00001844], not Size 0x1f58
  EXPECT_EQ(test::map_region(m, "LR_IROM1")->length, 0x100000u);
  EXPECT_EQ(m.stated["RW Data (compressed)"], 1548u);
  // The CNN's activation buffers are the big ZI symbols of ai.o / main.o.
  uint64_t largest = 0;
  for (const auto& s : m.symbols) largest = std::max(largest, s.size);
  EXPECT_GT(largest, 10000u);
  // The CNN's weights are named like weights (conv2_wt), wherever they live.
  for (const auto& s : m.symbols)
    if (s.name == "conv2_wt" || s.name == "ip1_wt") {
      EXPECT_EQ(symbol_role(s, section_kind(m, s.section)), "model weights");
    }

  LinkerMap ti = test::linker_map(corpus("map_armlink/bairu_nuedc2024h_mspm0g3507_ac6_6.22.map"));
  ASSERT_NE(test::map_region(ti, "LR_BCR"), nullptr);
  EXPECT_EQ(test::map_region(ti, "LR_BCR")->used, 0u);
  EXPECT_EQ(test::map_region(ti, "LR_BSL")->used, 0u);
  EXPECT_EQ(test::map_region(ti, "RW_IRAM2")->origin, 0x20200000u);
  EXPECT_EQ(test::map_region(ti, "RW_IRAM2")->length, 0x8000u);
}

struct Iar {
  const char* file;
  uint64_t code, ro, rw;
};

// The main stack is the startup file's STACK area, as each map's own symbol
// table lists it (__initial_sp at its end), not an RTOS task's stack array:
// badshun's map exports no Stack_Mem, and its 512 B task1_stack was taken
// for the main stack (a helper found it; the area is 1,024 B).
TEST(ArmlinkMap, TheMainStackIsTheStartupFilesStackArea) {
  struct Case {
    const char* file;
    uint64_t bytes;
  };
  for (const Case& c : {Case{"badshun_minirtos_ac5_5.06u7.map", 1024}, Case{"openbrightweb_stm32f103_ac5_5.06u5.map", 1024},
                        Case{"bairu_nuedc2024h_mspm0g3507_ac6_6.22.map", 16384},
                        Case{"stm32deployai_cmsisnn_mnist_f407_ac5_5.06u6.map", 1024}}) {
    LinkerMap m = test::linker_map(corpus(std::string("map_armlink/") + c.file));
    auto stack = reserved_stack(m);
    ASSERT_TRUE(stack) << c.file;
    EXPECT_EQ(stack->second, c.bytes) << c.file << ": " << stack->first;
    EXPECT_TRUE(stack->first == "STACK" || stack->first == "Stack_Mem") << c.file << ": " << stack->first;
  }
}

// A 0-byte entry at a function's address (indicate_semi.o's empty .text
// beside _sys_exit's code, "Thumb Code 8" in the symbol table) took the
// symbol, which then read as data of no section. The entry with bytes holds it.
TEST(ArmlinkMap, AnEmptyEntryAtAFunctionsAddressDoesNotTakeIt) {
  LinkerMap m = test::linker_map(corpus("map_armlink/openbrightweb_stm32f103_ac5_5.06u5.map"));
  int found = 0;
  for (const MapSymbol& s : m.symbols) {
    if (s.name != "_sys_exit" && s.name != "BusFault_Handler") continue;
    ++found;
    EXPECT_EQ(s.section, "ER_IROM1:code") << s.name;
  }
  EXPECT_EQ(found, 2);
}

TEST(IarMap, TotalsEqualTheBytesOfMemoryLines) {
  const Iar cases[] = {
      {"iarvscdebug_gettingstarted_stm32f429_ewarm9.20.map", 3292, 228, 8272},
      {"iarvscdebug_gettingstarted_generic_ewarm8.50.map", 1572, 20, 8756},
      {"tylerpedley_stm32f4_template_ewarm7.60.map", 1156, 0, 8192},
  };
  for (const Iar& c : cases) {
    SCOPED_TRACE(c.file);
    LinkerMap m = test::linker_map(corpus(std::string("map_iar/") + c.file));
    EXPECT_EQ(m.toolchain, "IAR ILINK");
    EXPECT_EQ(m.totals.code, c.code);
    EXPECT_EQ(m.totals.ro_data, c.ro);
    EXPECT_EQ(m.totals.rw_data + m.totals.zi_data, c.rw);
    EXPECT_EQ(m.stated["readonly code"], c.code);  // "3'292" and "1 156" both read
    EXPECT_EQ(region_used(m, RegionKind::flash), c.code + c.ro);
    EXPECT_EQ(region_used(m, RegionKind::ram), c.rw);
    EXPECT_FALSE(m.symbols.empty());
  }
}

TEST(IarMap, PlacementRangesAndArchiveMembers) {
  LinkerMap m = test::linker_map(corpus("map_iar/iarvscdebug_gettingstarted_stm32f429_ewarm9.20.map"));
  const MapRegion* ram = test::map_region(m, "P4");
  ASSERT_NE(ram, nullptr);
  EXPECT_EQ(ram->origin, 0x20000000u);
  EXPECT_EQ(ram->length, 192u * 1024);  // three ranges joined by '|'
  EXPECT_EQ(test::map_region(m, "P1")->length, 2u * 1024 * 1024);
  bool member = false;
  for (const auto& c : m.contributions) member |= c.object == "dl7M_tln.a(xscanfsmall_nomb.o)";
  EXPECT_TRUE(member);
  // CSTACK lives in CCM RAM in the 7.60 template.
  LinkerMap ccm = test::linker_map(corpus("map_iar/tylerpedley_stm32f4_template_ewarm7.60.map"));
  EXPECT_EQ(test::map_region(ccm, "P3")->origin, 0x10000000u);
  EXPECT_EQ(test::map_region(ccm, "P3")->used, 8192u);
}

TEST(LinkerMap, RejectsTextThatIsNoMap) {
  std::string error;
  EXPECT_FALSE(parse_linker_map("hello\nworld\n", error));
  EXPECT_NE(error.find("line"), std::string::npos);
  EXPECT_FALSE(parse_linker_map("IAR ELF Linker V9\nnothing else\n", error));
  EXPECT_NE(error.find("PLACEMENT SUMMARY"), std::string::npos);
}

}  // namespace
}  // namespace edgemem
