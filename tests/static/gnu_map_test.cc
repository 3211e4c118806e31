// GNU ld maps written by real toolchains (tests/data/corpus/map): regions and
// output sections as extracted independently, region use as
// `ld --print-memory-usage` printed it for our own build.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "static/linker_map.h"
#include "test_support.h"

namespace edgemem {
namespace {

using test::corpus;
using test::read_file;

TEST(GnuMap, EveryCorpusMapMatchesItsExpectedSectionsAndRegions) {
  auto expected = nlohmann::json::parse(read_file(corpus("map/map_expected_sections.json")));
  size_t maps = 0;
  for (const auto& [name, e] : expected["maps"].items()) {
    SCOPED_TRACE(name);
    std::string error;
    auto map = parse_gnu_map(read_file(corpus("map/" + name)), error);
    ASSERT_TRUE(map) << error;
    ASSERT_EQ(map->regions.size(), e["regions"].size());
    for (size_t i = 0; i < map->regions.size(); ++i) {
      EXPECT_EQ(map->regions[i].name, e["regions"][i]["name"].get<std::string>());
      EXPECT_EQ(map->regions[i].origin, e["regions"][i]["origin"].get<uint64_t>());
      EXPECT_EQ(map->regions[i].length, e["regions"][i]["length"].get<uint64_t>());
    }
    using Row = std::tuple<std::string, uint64_t, uint64_t>;
    std::set<Row> want, ours, optional;
    for (const auto& s : e["output_sections_nonzero"])
      want.insert({s["name"].get<std::string>(), s["vma"].get<uint64_t>(), s["size"].get<uint64_t>()});
    for (const auto& s : map->sections) {
      if (s.size == 0) continue;
      (s.kind == SectionKind::debug ? optional : ours).insert({s.name, s.address, s.size});
    }
    for (const Row& r : want) EXPECT_TRUE(ours.count(r) || optional.count(r)) << std::get<0>(r);
    for (const Row& r : ours) EXPECT_TRUE(want.count(r)) << "unexpected " << std::get<0>(r);
    ++maps;
  }
  EXPECT_EQ(maps, 6u);  // the esp-idf maps are not vendored: no licence (tests/data/SOURCES.md)
}

TEST(GnuMap, RegionUseEqualsLdPrintMemoryUsage) {
  auto sizes = nlohmann::json::parse(read_file(corpus("map/map_expected_sections.json")))["elf_size_berkeley"];
  for (const char* name : {"own_cm4_O2.map", "own_cm4_O0.map"}) {
    SCOPED_TRACE(name);
    std::string error;
    auto map = parse_gnu_map(read_file(corpus(std::string("map/") + name)), error);
    ASSERT_TRUE(map) << error;
    ASSERT_EQ(map->regions.size(), 2u);
    EXPECT_EQ(map->regions[0].used, sizes[name]["flash_used_bytes"].get<uint64_t>());
    EXPECT_EQ(map->regions[1].used, sizes[name]["ram_used_bytes"].get<uint64_t>());
  }
  // The nRF52840 build's flash image is the committed .bin: 73,492 B.
  std::string error;
  auto nrf = parse_gnu_map(read_file(corpus("map/logitacker_nrf52840_pca10059.map")), error);
  ASSERT_TRUE(nrf);
  EXPECT_EQ(nrf->regions[0].name, "FLASH");
  EXPECT_EQ(nrf->regions[0].used, sizes["logitacker_nrf52840_pca10059.map"]["flash_bin_bytes"].get<uint64_t>());
}

TEST(GnuMap, StaticArenaIsNamedByItsInputSection) {
  std::string error;
  auto map = parse_gnu_map(read_file(corpus("map/own_cm4_O2.map")), error);
  ASSERT_TRUE(map);
  const MapSymbol* arena = nullptr;
  for (const auto& s : map->symbols)
    if (s.name == "tensor_arena") arena = &s;
  ASSERT_TRUE(arena);
  EXPECT_EQ(arena->address, 0x20000020u);
  EXPECT_EQ(arena->size, 16384u);
  EXPECT_EQ(arena->section, ".bss");
  EXPECT_EQ(arena->object, "own_app.o");
  // Contributions never exceed their output section.
  for (const auto& c : map->contributions) {
    for (const auto& s : map->sections) {
      // Non-allocated sections are merged (attributes, deduplicated
      // .comment strings) and can be smaller than their inputs.
      if (s.name == c.section && s.kind != SectionKind::debug) {
        EXPECT_LE(c.size, s.size);
      }
    }
  }
}

TEST(GnuMap, NotAMapIsRejectedWithAReason) {
  std::string error;
  EXPECT_FALSE(parse_gnu_map("hello\nworld\n", error));
  EXPECT_NE(error.find("line 2"), std::string::npos);
  EXPECT_NE(error.find("Memory Configuration"), std::string::npos);
  // An empty file has no line to name.
  EXPECT_FALSE(parse_gnu_map("", error));
  EXPECT_EQ(error, "empty: expected a GNU ld map (link with -Wl,-Map=FILE)");
}

// A section the script placed at its own address past the rest of its
// region (tests/data/map_placed/README.md). ld counts the region to its end
// when the script gives it > RAM (131,072 B) and leaves it out when not
// (20,496 B), and the two maps are the same: `used` counts it as the first
// (WCH's scripts place their stack so), and both numbers are kept. Counted
// to it, fit said a model that fits did not.
TEST(GnuMap, ASectionPlacedAtItsOwnAddressIsNamedWithBothCounts) {
  const std::string dir = std::string(EDGEMEM_TEST_DATA_DIR) + "/map_placed/";
  std::string error;
  auto mbox = parse_gnu_map(read_file(dir + "mbox.map"), error);
  ASSERT_TRUE(mbox) << error;
  ASSERT_EQ(mbox->regions.size(), 2u);
  EXPECT_EQ(mbox->regions[0].used, 52u);
  EXPECT_EQ(mbox->regions[1].used, 131072u);
  EXPECT_EQ(mbox->regions[1].used_without_placed(), 20496u);
  ASSERT_EQ(mbox->regions[1].placed.size(), 1u);
  EXPECT_EQ(mbox->regions[1].placed[0].name, ".boot_flags");
  EXPECT_EQ(mbox->regions[1].placed[0].address, 0x2001ffe0u);
  EXPECT_EQ(mbox->regions[1].placed[0].size, 32u);
  EXPECT_EQ(mbox->regions[1].grow_limit(), 0x2001ffe0u);
  // Sections in flash after the placed one (the .data image) still count.
  auto multi = parse_gnu_map(read_file(dir + "multi.map"), error);
  ASSERT_TRUE(multi) << error;
  const std::vector<uint64_t> ld = {8268, 34000, 3000, 2048, 256};
  ASSERT_EQ(multi->regions.size(), ld.size());
  for (size_t i = 0; i < ld.size(); ++i)
    EXPECT_EQ(multi->regions[i].used_without_placed(), ld[i]) << multi->regions[i].name;
  EXPECT_EQ(multi->regions[0].used, 0x3f020u);  // to .fixed's end
  ASSERT_EQ(multi->regions[0].placed.size(), 1u);
  EXPECT_EQ(multi->regions[0].placed[0].name, ".fixed");
  EXPECT_EQ(multi->regions[0].placed_bytes(), 32u);
}

// newlib-nano's printf.o as ld maps it (arm-none-eabi-gcc 12.2, a
// helper's build): two pairs of aliases. Only the last of each pair got
// the span to the next symbol; the first read "≤ 0 B" where nm -S says
// 52 B (printf) and 44 B (_printf_r).
TEST(GnuMap, AliasesAtOneAddressEachGetTheSpanToTheNextSymbol) {
  const std::string text = read_file(std::string(EDGEMEM_TEST_DATA_DIR) + "/map_aliases/printf_aliases.map");
  std::string error;
  auto map = parse_gnu_map(text, error);
  ASSERT_TRUE(map) << error;
  std::map<std::string, uint64_t> size;
  for (const MapSymbol& s : map->symbols) size[s.name] = s.size;
  EXPECT_EQ(size["_printf_r"], 0x2cu);
  EXPECT_EQ(size["_iprintf_r"], 0x2cu);
  EXPECT_EQ(size["printf"], 0x34u);
  EXPECT_EQ(size["iprintf"], 0x34u);
}

}  // namespace
}  // namespace edgemem
