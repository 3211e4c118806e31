// GNU ld maps written by real toolchains (tests/data/corpus/map): regions and
// output sections as extracted independently, region use as
// `ld --print-memory-usage` printed it for our own build.
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "report/budget.h"
#include "static/elf_image.h"
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

// A static arena placed by a section attribute of its own lists no symbol:
// `fit` counted the 90,000 B arena on top of the statics it is among
// (176,996 B of 147,456, DOES NOT FIT, where it fits). It is named after its
// section, at most the section's size, so fit asks for the ELF. Literal
// pools named after a function (ESP32) and unwind tables are no arena.
TEST(GnuMap, AnArenaInASectionOfItsOwnIsNamedAfterItAsABound) {
  const std::string text =
      "Memory Configuration\n\n"
      "Name             Origin             Length             Attributes\n"
      "FLASH            0x08000000         0x00100000         xr\n"
      "CCM              0x10000000         0x00018000         rw\n"
      "*default*        0x00000000         0xffffffff\n\n"
      "Linker script and memory map\n\n"
      ".text           0x08000000      0x100\n"
      " .literal._ZN6tflite14MicroAllocator27RequestScratchBufferInArenaEijPi\n"
      "                0x08000000       0x10 tflm.o\n"
      " .text          0x08000010       0xf0 app.o\n\n"
      ".ARM.exidx      0x08000100        0x8\n"
      " .ARM.exidx.text.tensor_arena_reset\n"
      "                0x08000100        0x8 app.o\n\n"
      ".ccm            0x10000000    0x15f90\n"
      " *(.tensor_arena*)\n"
      " .tensor_arena  0x10000000    0x15f90 app.o\n"
      "OUTPUT(fw.elf elf32-littlearm)\n";
  std::string error;
  auto map = parse_gnu_map(text, error);
  ASSERT_TRUE(map) << error;
  ASSERT_EQ(map->symbols.size(), 1u);
  const MapSymbol& arena = map->symbols[0];
  EXPECT_EQ(arena.name, "tensor_arena");
  EXPECT_EQ(arena.address, 0x10000000u);
  EXPECT_EQ(arena.size, 90000u);
  EXPECT_TRUE(arena.size_is_upper_bound);
  EXPECT_EQ(largest_symbol_with_role(*map, "tensor arena"), &arena);
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


const MapRegion& region(const LinkerMap& map, std::string_view name) {
  for (const MapRegion& r : map.regions)
    if (r.name == name) return r;
  throw std::runtime_error("no region " + std::string(name));
}

const MapSection& section(const LinkerMap& map, std::string_view name) {
  for (const MapSection& s : map.sections)
    if (s.name == name) return s;
  throw std::runtime_error("no section " + std::string(name));
}

LinkerMap binutils_map(const std::string& name, bool with_elf) {
  const std::string dir = std::string(EDGEMEM_TEST_DATA_DIR) + "/map_binutils/";
  std::string error;
  auto map = parse_gnu_map(read_file(dir + name + ".map"), error);
  if (!map) throw std::runtime_error(error);
  if (with_elf) {
    auto elf = read_elf_image(dir + name + ".elf", error);
    if (!elf) throw std::runtime_error(error);
    classify_by_elf(*map, *elf);
  }
  return *map;
}

// A rebuild can keep every section's size while its code and data move:
// relink_fg links f.o before g.o, relink_gf the other way round (nm -S:
// f_step 0x08000000 and 0x08000014). Its ELF beside the other's map once
// passed as the same link, and settled that map's load images and sizes.
TEST(GnuMapElf, SymbolsElsewhereAreAnotherLink) {
  const std::string dir = std::string(EDGEMEM_TEST_DATA_DIR) + "/map_binutils/";
  std::string error;
  auto map = parse_gnu_map(read_file(dir + "relink_fg.map"), error);
  ASSERT_TRUE(map) << error;
  auto same = read_elf_image(dir + "relink_fg.elf", error);
  auto other = read_elf_image(dir + "relink_gf.elf", error);
  ASSERT_TRUE(same && other) << error;
  EXPECT_EQ(compare_with_map(*same, *map), std::vector<std::string>{});
  const auto differ = compare_with_map(*other, *map);
  EXPECT_EQ(differ, (std::vector<std::string>{"f_step: map at 0x08000000, ELF at 0x08000014",
                                              "g_step: map at 0x08000014, ELF at 0x08000000",
                                              "f_count: map at 0x20000000, ELF at 0x20000004",
                                              "g_count: map at 0x20000004, ELF at 0x20000000"}));
}

// A section one of them lacks: ld lists every output section it writes,
// and the ELF holds each one with contents.
TEST(GnuMapElf, ASectionMissingFromEitherIsAnotherLink) {
  const std::string dir = std::string(EDGEMEM_TEST_DATA_DIR) + "/map_binutils/";
  std::string error;
  auto map = parse_gnu_map(read_file(dir + "review_e1.map"), error);
  auto elf = read_elf_image(dir + "review_k3.elf", error);
  ASSERT_TRUE(map && elf) << error;
  EXPECT_EQ(compare_with_map(*elf, *map),
            (std::vector<std::string>{".stack_guard_table: not in the map, ELF 8 B", ".fast: map 64 B, not in the ELF"}));
}

// Of one link, though their numbers differ (a reviewer's): nm gives a
// thread-local symbol its offset in the thread's block (tvar 0x0), the map
// its address; --unique=.mysec makes two output sections of one name (16 B
// and 36 B), compared by their total.
TEST(GnuMapElf, ThreadLocalSymbolsAndSectionsOfOneNameAgree) {
  const std::string dir = std::string(EDGEMEM_TEST_DATA_DIR) + "/map_binutils/";
  for (const char* name : {"tls", "unique"}) {
    std::string error;
    auto map = parse_gnu_map(read_file(dir + name + ".map"), error);
    auto elf = read_elf_image(dir + name + ".elf", error);
    ASSERT_TRUE(map && elf) << error;
    EXPECT_EQ(compare_with_map(*elf, *map), std::vector<std::string>{}) << name;
  }
}

// ld prints the same map for a section with contents and a NOLOAD one with a
// load address in flash, and counts only the first (tests/data/map_binutils,
// truth from ld --print-memory-usage). The STM32H7 LwIP examples' 268 KiB
// of NOLOAD DMA buffers read FLASH 275,020 B, OVERFLOWED by 143,948 B, where
// ld printed 76 B; a guess from the map alone once read a copy table's
// 48,000 B of real contents as NOLOAD (FLASH 84 B for ld's 48,084 B). The
// map alone gives both readings, unsure; the ELF's section type settles it.
TEST(GnuMap, ALoadImageTheMapCannotConfirmIsUnsureAndTheElfSettlesIt) {
  struct Case {
    std::string name, section;
    uint64_t with, without, ld;
  };
  // overlay_common's .sram2_init holds only LONG() data, which a NOLOAD
  // section may hold too (noload_long's .canary: ld counts none of it). A
  // name that reads zero-initialised does not settle it either: bss_long's
  // `.stack` writes a LONG() canary and ld loads all 2,052 B of it (read
  // as 24 B, "no region overflowed", once LONG() no longer proved an image);
  // nor does an input section named neither as data nor as zero-initialised
  // (startup_stack's `.section .stack,"aw"`: ld loads its 2,048 B zeros and
  // fails the link, overflowed by 1,048 B; no ELF: ld wrote none), nor one
  // named as uninitialised (noinit_data: an initialised variable in
  // `.no_init`, overflowed by 1,052 B).
  for (const Case& c : {Case{"lwip_noload", ".lwip_sec", 275'020, 76, 76},
                        Case{"overlay_common", ".sram2_init .dma_buffers", 1'244, 468, 476},
                        Case{"copy_table", ".fastram", 48'084, 84, 48'084},
                        Case{"noload_long", ".canary", 2'068, 20, 20},
                        Case{"bss_long", ".stack", 2'076, 24, 2'076},
                        Case{"startup_stack", ".stack", 2'072, 24, 2'072},
                        Case{"noinit_data", ".stack", 2'076, 24, 2'076}}) {
    SCOPED_TRACE(c.name);
    const LinkerMap map = binutils_map(c.name, false);
    const MapRegion& flash = region(map, "FLASH");
    EXPECT_EQ(flash.used, c.with);
    EXPECT_EQ(flash.used - flash.unsure_bytes, c.without);
    EXPECT_EQ(fmt::format("{}", fmt::join(flash.unsure_images, " ")), c.section);
    for (const std::string& name : flash.unsure_images) EXPECT_EQ(section(map, name).load_image, LoadImage::unsure);
    if (c.name == "startup_stack" || c.name == "noinit_data") continue;
    const LinkerMap settled = binutils_map(c.name, true);
    EXPECT_EQ(region(settled, "FLASH").used, c.ld);
    EXPECT_EQ(region(settled, "FLASH").unsure_bytes, 0u);
    EXPECT_FALSE(overflow_bytes(region(settled, "FLASH")));
  }
  // Overflowed only if the LwIP buffers have a load image: said so.
  const LinkerMap lwip = binutils_map("lwip_noload", false);
  const MapRegion& lwip_flash = region(lwip, "FLASH");
  EXPECT_EQ(overflow_bytes(lwip_flash), 143'948u);
  EXPECT_TRUE(overflow_unsure(lwip_flash));
}

// The next section placed from the region's pointer at or past a load
// image's end tells it is there: ld moves the pointer past a section with
// contents only. overlay_common's .data and its overlays are followed at
// their ends. WCH's .dalign, an assignment that only aligns
// .data in RAM (all fill, no input: NOBITS in its ELF), has none: FLASH
// ends where .data's image ends (0x42bc), not 376 B later.
TEST(GnuMap, TheNextLoadAddressTellsWhetherASectionHasALoadImage) {
  const LinkerMap overlay = binutils_map("overlay_common", false);
  for (const char* name : {".ov1", ".ov2", ".data"}) EXPECT_EQ(section(overlay, name).load_image, LoadImage::yes) << name;
  std::string error;
  auto wch = parse_gnu_map(read_file(std::string(EDGEMEM_TEST_DATA_DIR) +
                                     "/realworld/gnu_map/2827700630_tftch573f_wch_riscv.map"),
                           error);
  ASSERT_TRUE(wch) << error;
  EXPECT_EQ(section(*wch, ".dalign").load_image, LoadImage::no);
  EXPECT_EQ(section(*wch, ".dalign").kind, SectionKind::bss);
  EXPECT_EQ(section(*wch, ".highcode").load_image, LoadImage::yes);
  EXPECT_EQ(region(*wch, "FLASH").used, 0x42bcu);
  EXPECT_EQ(region(*wch, "FLASH").unsure_bytes, 0u);
  // Zephyr's _net_buf_pool_area (initialised pools, RAM AT> FLASH) is the
  // last section loaded from flash; .last_section, run in flash right
  // after its image, tells.
  auto zephyr = parse_gnu_map(read_file(std::string(EDGEMEM_TEST_DATA_DIR) +
                                        "/realworld/gnu_map/dorsel89_phyphoxsatellite_nrf52840_zephyr.map"),
                              error);
  ASSERT_TRUE(zephyr) << error;
  EXPECT_EQ(section(*zephyr, "_net_buf_pool_area").load_image, LoadImage::yes);
  EXPECT_EQ(region(*zephyr, "FLASH").unsure_bytes, 0u);
}

// ld does not move a region's pointer past an AT(address) section, so the
// next section placed from the pointer lies inside its image whether it has
// contents or not. Read as "none", that lost .data's 604 B image after
// `.data : AT(_etext)` (FLASH 4 B where objcopy's image is 608 B; a 600 B
// budget passed), and .fast's 20 B after `.fast : AT(LOADADDR(.data) +
// SIZEOF(.data))` (404 B for objcopy's 424 B, said as sure). Read as "one"
// when the input looks like data, a NOLOAD section of `.data.dma_buf` input
// read a sure overflow. Inside leaves it unsure; the ELF settles it.
TEST(GnuMap, ASectionInsideALoadImageProvesNothing) {
  struct Case {
    std::string name, section;
    LoadImage map_says;
    uint64_t image;
  };
  for (const Case& c : {Case{"at_etext", ".data", LoadImage::unsure, 608}, Case{"at_address", ".fast", LoadImage::unsure, 424}}) {
    SCOPED_TRACE(c.name);
    const LinkerMap map = binutils_map(c.name, false);
    EXPECT_EQ(section(map, c.section).load_image, c.map_says);
    const MapRegion& flash = region(map, "FLASH");
    EXPECT_LE(flash.used - flash.unsure_bytes, c.image);
    EXPECT_GE(flash.used, c.image);
    if (c.name == "startup_stack" || c.name == "noinit_data") continue;
    const LinkerMap settled = binutils_map(c.name, true);
    EXPECT_EQ(region(settled, "FLASH").used, c.image);
    EXPECT_EQ(region(settled, "FLASH").unsure_bytes, 0u);
  }
  const LinkerMap at_etext = binutils_map("at_etext", false);
  EXPECT_EQ(section(at_etext, ".mybuf").load_image, LoadImage::unsure);
  const nlohmann::json budget = {{"regions", {{"FLASH", {{"max_bytes", 600}}}}}};
  std::string error;
  EXPECT_TRUE(evaluate_budget(budget, BudgetInputs{&at_etext}, error).empty());
  EXPECT_NE(error.find("FLASH uses 4,804 B if .data, .mybuf have a load image there, 4 B if not"), std::string::npos)
      << error;
}

// A section of assignments only has no load image, but an input line of
// size 0 gives it contents: ld writes the fill as bytes (`.data : {
// *(.data*) . = . + 0x40; }` with every object's empty .data), and reading
// it as NOBITS put FLASH 64 B below objcopy's image, said as sure.
TEST(GnuMap, AnEmptyInputSectionStillGivesContents) {
  const std::string map =
      "Memory Configuration\n\nName Origin Length Attributes\nFLASH 0x08000000 0x00000400 xr\n"
      "RAM 0x20000000 0x00001000 xrw\n*default* 0x00000000 0xffffffff\n\nLinker script and memory map\n\n"
      ".text 0x08000000 0x2c\n *(.text*)\n .text 0x08000000 0x2c c.o\n\n"
      ".data 0x20000000 0x40 load address 0x0800002c\n *(.data*)\n .data 0x20000000 0x0 c.o\n"
      " 0x20000040 . = (. + 0x40)\n *fill* 0x20000000 0x40\n\n"
      ".dalign 0x20000040 0x40 load address 0x0800002c\n 0x20000080 . = (. + 0x40)\n *fill* 0x20000040 0x40\n\n"
      "OUTPUT(fw.elf elf32-littlearm)\n";
  std::string error;
  auto parsed = parse_gnu_map(map, error);
  ASSERT_TRUE(parsed) << error;
  EXPECT_EQ(section(*parsed, ".data").load_image, LoadImage::unsure);
  EXPECT_EQ(section(*parsed, ".dalign").load_image, LoadImage::no);  // no input line at all
  EXPECT_EQ(region(*parsed, "FLASH").used, 0x2cu + 0x40u);
  EXPECT_EQ(region(*parsed, "FLASH").unsure_bytes, 0x40u);
}

// Two more ways a map once read FLASH below the image, sure (a review): a
// section named like zero-initialised data holding .data input (64 B for
// 72 B), and an input section named without a dot, printed alone on its
// line with its numbers on the next, lost, so its section read as
// assignments only (64 B for 128 B).
TEST(GnuMap, NeitherANameNorAnUndottedInputHidesALoadImage) {
  for (const auto& [name, image] : {std::pair<std::string, uint64_t>{"review_k3", 72}, {"review_e1", 128}}) {
    SCOPED_TRACE(name);
    const LinkerMap map = binutils_map(name, false);
    const MapRegion& flash = region(map, "FLASH");
    EXPECT_GE(flash.used, image);
    EXPECT_LE(flash.used - flash.unsure_bytes, image);
    EXPECT_EQ(region(binutils_map(name, true), "FLASH").used, image);
  }
}

// ld prints a demangled C++ name as it is, blanks and all. Taken for no
// symbol, `big_unsigned(unsigned int, char const*)` (166 B by nm -S) gave
// its bytes to `tiny(int)` (4 B), "≤ 170 B", and `vtable for Filter` was
// missing; with --elf too, as the ELF only sizes symbols the map lists.
TEST(GnuMap, DemangledNamesWithBlanksAreSymbols) {
  LinkerMap map = binutils_map("cpp_nosections", false);
  auto symbol = [&](std::string_view name) -> const MapSymbol* {
    for (const MapSymbol& s : map.symbols)
      if (s.name == name) return &s;
    return nullptr;
  };
  ASSERT_TRUE(symbol("tiny(int)"));
  EXPECT_EQ(symbol("tiny(int)")->size, 4u);
  ASSERT_TRUE(symbol("big_unsigned(unsigned int, char const*)"));
  EXPECT_EQ(symbol("big_unsigned(unsigned int, char const*)")->address, 0x0800004eu);
  ASSERT_TRUE(symbol("vtable for Filter"));
  EXPECT_EQ(symbol("vtable for Filter")->address, 0x080003c8u);
  map = binutils_map("cpp_nosections", true);
  EXPECT_EQ(symbol("big_unsigned(unsigned int, char const*)")->size, 166u);
  EXPECT_FALSE(symbol("big_unsigned(unsigned int, char const*)")->size_is_upper_bound);
  EXPECT_EQ(symbol("vtable for Filter")->size, 12u);
}

// COMMON symbols (-fcommon) are exact, and ld's "Allocating common
// symbols" table gives their sizes: the span to the next one holds its
// alignment too. c_int and c_odd read 8 B each, exact, where nm -S and the
// table say 4 B and 5 B.
TEST(GnuMap, CommonSymbolsTakeTheSizesOfLdsCommonTable) {
  const LinkerMap map = binutils_map("overlay_common", false);
  std::map<std::string, uint64_t> size;
  for (const MapSymbol& s : map.symbols)
    if (s.section == ".bss") {
      size[s.name] = s.size;
      EXPECT_FALSE(s.size_is_upper_bound) << s.name;
    }
  EXPECT_EQ(size, (std::map<std::string, uint64_t>{{"c_int", 4}, {"c_dbl", 8}, {"c_odd", 5}, {"c_small", 3}}));
}


// MEMORY regions without attributes (`RAM : ORIGIN = ...`) all read as
// flash, and `fit` refused the map for naming no RAM. A region where data
// or zero-initialised sections run is RAM.
TEST(GnuMap, ARegionWithoutAttributesIsRamWhenDataRunsInIt) {
  std::string error;
  auto map = parse_gnu_map(read_file(std::string(EDGEMEM_TEST_DATA_DIR) + "/map_binutils/noattr.map"), error);
  ASSERT_TRUE(map) << error;
  EXPECT_EQ(region(*map, "FLASH").kind, RegionKind::flash);
  EXPECT_EQ(region(*map, "RAM").kind, RegionKind::ram);
  EXPECT_EQ(region(*map, "CCM").kind, RegionKind::ram);
  EXPECT_EQ(region(*map, "FLASH").used, 1'488u);
  EXPECT_EQ(region(*map, "RAM").used, 7'728u);
  EXPECT_EQ(region(*map, "CCM").used, 264u);
  // Its CubeIDE-style script keeps room for `_Min_Stack_Size = 0x400` in
  // ._user_heap_stack: the stack a budget is held against (the map once
  // reserved none, and `check` refused a stack budget).
  EXPECT_EQ(reserved_stack(*map), std::make_pair(std::string("_Min_Stack_Size"), uint64_t{0x400}));
}

}  // namespace
}  // namespace edgemem
