// IAR ILINK maps from public projects that edgemem read wrong with exit 0
// (tests/data/realworld/iar, listed in SOURCES-collected.md). The truth is
// outside edgemem: the map's own "bytes of readonly/readwrite ... memory"
// lines and GNU size on the ELF linked with it.
#include <gtest/gtest.h>

#include <map>

#include "static/linker_map.h"
#include "test_support.h"

namespace edgemem {
namespace {

using edgemem::test::region_used;

// EWSTM8 3.11 (atomthreads on an STM8L152): the read-only placement is
// listed as one group "P3-P5" and its selectors are named
// ".near_func.textrw_init"; the vector table is "block INTVEC" placed with
// "place at start of [0x008000-0x00ffff]" and the stack with "place at end
// of [0x000000-0x0007ff]". edgemem read flash as 0, every "place at" as an
// overflowing region at 0, and P3-P5 as an empty region of length 0.
TEST(RealworldIarMap, Ewstm8PlacementsAreFlashOrRamByWhatTheyHold) {
  LinkerMap m = test::linker_map(test::realworld("iar/wathui99_fptlab_stm8l152_ewstm8_3.11.1.map"));
  // The map: 7 591 + 510 bytes of readonly memory, 1 815 of readwrite; GNU
  // size on the .out linked with it: text 8101, bss 1815.
  EXPECT_EQ(region_used(m, RegionKind::flash), 7591u + 510u);
  EXPECT_EQ(region_used(m, RegionKind::ram), 1815u);
  for (const auto& r : m.regions) EXPECT_EQ(overflow_bytes(r), 0u) << r.name;

  const MapRegion* ro = test::map_region(m, "P3-P5");
  ASSERT_NE(ro, nullptr);
  EXPECT_EQ(ro->kind, RegionKind::flash);
  EXPECT_EQ(ro->origin, 0x8000u);
  EXPECT_EQ(ro->length, 0x8000u);  // P3, P4 and P5 share one range
  // Its sections, and the vector table "A2" placed at the start of its range
  // (0x80 B): the range's free bytes are what neither takes.
  EXPECT_EQ(ro->used, 0x1f25u + 0x80u);
  EXPECT_EQ(test::map_region(m, "P4"), nullptr);  // filled as one, not three empty regions

  const MapRegion* vectors = test::map_region(m, "A2");
  ASSERT_NE(vectors, nullptr);
  EXPECT_EQ(vectors->kind, RegionKind::flash);  // a block, but of read-only contents
  EXPECT_EQ(vectors->origin, 0x8000u);
  EXPECT_TRUE(vectors->position_only);
  EXPECT_EQ(vectors->within, "P3-P5");

  const MapRegion* stack = test::map_region(m, "A1");
  ASSERT_NE(stack, nullptr);
  EXPECT_EQ(stack->kind, RegionKind::ram);
  EXPECT_EQ(stack->origin, 0x700u);  // "place at end of [0x000000-0x0007ff]"
  EXPECT_EQ(stack->used, 0x100u);

  const MapRegion* data = test::map_region(m, "P2");
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->kind, RegionKind::ram);
  EXPECT_EQ(data->length, 0x800u);
  // "P2", part 1 of 2 and part 2 of 2, and the registers "A0" and the stack
  // "A1" placed inside its range: 1,815 B, GNU size's bss.
  EXPECT_EQ(data->used, 0x5fu + 0x5a8u + 0x10u + 0x100u);
}

// EWARM 9.20: the vector table "A0" is placed at 0x800'0000, the start of
// the range "P1" fills. P1 read 64 B freer than ILINK's own unused ranges
// (0x800'0dc0-0x81f'ffff, 0x1f'f240 B): a min_free budget passed that
// should break.
TEST(RealworldIarMap, APlaceAtInsideAPlaceInRangeTakesItsBytes) {
  LinkerMap m = test::linker_map(test::corpus("map_iar/iarvscdebug_gettingstarted_stm32f429_ewarm9.20.map"));
  const MapRegion* p1 = test::map_region(m, "P1");
  ASSERT_NE(p1, nullptr);
  EXPECT_EQ(p1->length - p1->used, 0x1ff240u);
  EXPECT_EQ(test::map_region(m, "A0")->within, "P1");
  // The map: 3'292 + 228 bytes of readonly memory, counted once.
  EXPECT_EQ(region_used(m, RegionKind::flash), 3292u + 228u);
}

// P1 holds code and constants interleaved: the sections edgemem sums per
// kind overlap, and by their spans getchar, __read and __iar_data_init3
// (Code in the map's ENTRY LIST) read as read-only data, and _Scin, exit
// and __low_level_init as of no section. A symbol is of the entry that
// holds it.
TEST(RealworldIarMap, ASymbolIsOfTheSectionEntryThatHoldsIt) {
  LinkerMap m = test::linker_map(test::corpus("map_iar/iarvscdebug_gettingstarted_stm32f429_ewarm9.20.map"));
  std::map<std::string, std::string> section;
  for (const MapSymbol& s : m.symbols) section[s.name] = s.section;
  for (const char* code : {"getchar", "__read", "__iar_data_init3", "_Scin", "exit", "__low_level_init"})
    EXPECT_EQ(section[code], "P1:code") << code;
}

// EWARM 8.11 (LiteOS on a FRDM-KW41Z): "block RW" and "block ZI" are two
// placements P3 and P4 over one RAM range, filled as the group "P3-P4".
// edgemem showed P3 and P4 empty and a third region P3-P4 of length 0,
// "OVERFLOWED by 7,888 B".
TEST(RealworldIarMap, AGroupOfPlacementsIsOneRegionOverTheirRange) {
  LinkerMap m = test::linker_map(test::realworld("iar/liteos_frdmkw41z_ewarm8.11.1.map"));
  for (const auto& r : m.regions) EXPECT_EQ(overflow_bytes(r), 0u) << r.name;
  const MapRegion* ram = test::map_region(m, "P3-P4");
  ASSERT_NE(ram, nullptr);
  EXPECT_EQ(ram->kind, RegionKind::ram);
  EXPECT_EQ(ram->origin, 0x1fff8000u);
  EXPECT_EQ(ram->length, 0x20017c00u - 0x1fff8000u);  // [from 0x1fff8000 to 0x20017bff], once
  EXPECT_EQ(ram->used, 7888u);
  EXPECT_EQ(test::map_region(m, "P3"), nullptr);
  // The map: 21'671 + 3'311 bytes of readonly memory.
  EXPECT_EQ(region_used(m, RegionKind::flash), 21671u + 3311u);
}

}  // namespace
}  // namespace edgemem
