// Maps from public projects that edgemem once read wrong with exit 0
// (tests/data/realworld, listed in SOURCES.md). The truth is outside
// edgemem: what each file states, or binutils on the ELF it was linked with.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "static/elf_image.h"
#include "static/linker_map.h"
#include "test_support.h"

namespace edgemem {
namespace {

const MapSection* section(const LinkerMap& m, const std::string& name) {
  for (const auto& s : m.sections)
    if (s.name == name) return &s;
  return nullptr;
}

// Zephyr on ESP32: iterable sections have no leading dot, and ld wraps
// their numbers onto the next line ("log_const_sections\n  0x3ffb02b8 0x30").
TEST(RealworldGnuMap, ZephyrSectionsWithoutADotAreReadWithTheirWrappedNumbers) {
  LinkerMap m = test::linker_map(test::realworld("map/microdoom_zephyr_esp32.map"));
  const MapSection* log_const = section(m, "log_const_sections");
  ASSERT_NE(log_const, nullptr);
  EXPECT_EQ(log_const->address, 0x3ffb02b8u);
  EXPECT_EQ(log_const->size, 0x30u);
  ASSERT_TRUE(log_const->load_address);
  EXPECT_EQ(*log_const->load_address, 0x116au);
  const MapSection* threads = section(m, "_static_thread_data_area");
  ASSERT_NE(threads, nullptr);
  EXPECT_EQ(threads->address, 0x3f400e90u);
  EXPECT_EQ(threads->size, 0u);
  // The wrapped "ADDRESS SIZE" line is no symbol named "0x0" of a gigabyte.
  for (const auto& s : m.symbols) EXPECT_FALSE(s.name.starts_with("0x")) << s.name << " " << s.size;
}

// Each output section holds its input sections and *fill*, and nothing
// twice: the file's own section sizes are the truth. ld 2.41 and later list
// a merged input section (.rodata.*.str1.1) at its size before merging, at
// the address of the next one, and give the first the whole merged block
// (ESP-IDF, pico-sdk, WCH, Zephyr maps below once summed up to twice their
// section); older ld lists what each kept (the nRF map's .text).
TEST(RealworldGnuMap, InputSectionsAndFillAddUpToTheirOutputSection) {
  // Bytes the script writes itself (LONG(), BYTE()), and two output sections
  // of one name (ESP-IDF bootloaders' .iram.text), which contributions do not tell apart.
  const std::set<std::string> written_by_script = {".mcuboot_header", ".metadata", ".copy.table", ".zero.table", ".last_section",
                                                   ".gnu.sgstubs", ".iram.text", ".sram2_init", ".canary"};
  int maps = 0, merged_blocks = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(EDGEMEM_TEST_DATA_DIR)) {
    if (entry.path().extension() != ".map") continue;
    std::string error;
    auto m = parse_gnu_map(test::read_file(entry.path().string()), error);
    if (!m) continue;  // another linker's
    ++maps;
    std::map<std::string, uint64_t> held, size;
    for (const auto& c : m->contributions) {
      held[c.section] += c.size;
      merged_blocks += c.object == "(strings merged by ld)";
    }
    for (const auto& s : m->sections) {
      if (s.kind == SectionKind::debug) continue;
      held[s.name] += s.fill;
      size[s.name] += s.size;
    }
    for (const auto& [name, bytes] : size) {
      const bool canary_stack = entry.path().filename() == "bss_long.map" && name == ".stack";  // LONG() and fill
      if (bytes && !written_by_script.contains(name) && !canary_stack) {
        EXPECT_EQ(held[name], bytes) << entry.path().filename() << " " << name;
      }
    }
  }
  EXPECT_GE(maps, 25);
  EXPECT_GE(merged_blocks, 13);
}

TEST(RealworldGnuMap, EveryAllocatedSectionOfTheElfIsInTheMapAndNothingElseIs) {
  LinkerMap m = test::linker_map(test::realworld("map/microdoom_zephyr_esp32.map"));
  auto elf = nlohmann::json::parse(test::read_file(test::realworld("map/microdoom_zephyr_esp32.elf_sections.json")));
  for (const auto& e : elf["sections"]) {
    std::string name = e["name"];
    bool alloc = e["flags"].get<std::string>().find('A') != std::string::npos;
    const MapSection* s = section(m, name);
    SCOPED_TRACE(name);
    if (alloc && e["size"].get<uint64_t>() > 0) {
      ASSERT_NE(s, nullptr);
      EXPECT_EQ(s->address, e["address"].get<uint64_t>());
      EXPECT_EQ(s->size, e["size"].get<uint64_t>());
      EXPECT_NE(s->kind, SectionKind::debug);
    } else if (!alloc && s && s->size > 0) {
      EXPECT_EQ(s->kind, SectionKind::debug);  // never counted into a region
    }
  }
}

// .xtensa.info (not allocated, address 0) once landed in the 32-byte
// mcuboot_hdr region at 0: "56 B of 32 B, OVERFLOWED by 24 B".
// ld's own veneers sit in input sections named `.text.__stub` from the
// object "linker stubs" (the pico-sdk's RAM veneers: 256 B in .data). Read
// as a function's own section, they were a symbol "__stub", which nm does
// not have (it names each `fn_veneer`) and a budget could limit.
TEST(RealworldGnuMap, LinkerStubsAreNoSymbol) {
  LinkerMap m = test::linker_map(test::realworld("gnu_map/diminddl_picoharmonics_rp2040_picosdk.map"));
  for (const MapSymbol& s : m.symbols) EXPECT_NE(s.name, "__stub") << s.section;
  EXPECT_TRUE(std::any_of(m.contributions.begin(), m.contributions.end(),
                          [](const MapContribution& c) { return c.object == "linker stubs" && c.size == 0x100; }));
}

TEST(RealworldGnuMap, UnallocatedSectionsAtAddressZeroFillNoRegion) {
  LinkerMap m = test::linker_map(test::realworld("map/microdoom_zephyr_esp32.map"));
  const MapRegion* header = test::map_region(m, "mcuboot_hdr");
  ASSERT_NE(header, nullptr);
  EXPECT_EQ(header->used, 32u);  // .mcuboot_header, 32 B in the ELF
  EXPECT_EQ(overflow_bytes(*header), 0u);
  for (const auto& r : m.regions) EXPECT_EQ(overflow_bytes(r), 0u) << r.name;
}

// Kinds came from STM32 names only: every section of the ESP32 image that
// loads from flash was "data" (code 0 B). With the ELF the flags decide,
// and the totals are what binutils' `size` prints for that ELF.
TEST(RealworldGnuMap, SectionKindsFollowRegionsAndWithTheElfItsFlags) {
  LinkerMap m = test::linker_map(test::realworld("map/microdoom_zephyr_esp32.map"));
  EXPECT_EQ(section(m, "text")->kind, SectionKind::code);  // runs from IRAM, loaded from flash
  EXPECT_EQ(section(m, "rodata")->kind, SectionKind::rodata);
  EXPECT_EQ(section(m, ".dram0.data")->kind, SectionKind::data);
  EXPECT_EQ(section(m, "k_heap_area")->kind, SectionKind::data);  // k_heap structs, not a NOLOAD heap

  std::string error;
  auto elf = read_elf_image(test::realworld("map/microdoom_zephyr_esp32.elf"), error);
  ASSERT_TRUE(elf) << error;
  auto size = nlohmann::json::parse(test::read_file(test::realworld("map/microdoom_zephyr_esp32.elf_sections.json")))["size_berkeley"];
  EXPECT_EQ(elf->text, size["text"].get<uint64_t>());
  classify_by_elf(m, *elf);
  EXPECT_EQ(m.totals.code + m.totals.ro_data, size["text"].get<uint64_t>());
  EXPECT_EQ(m.totals.rw_data, size["data"].get<uint64_t>());
  EXPECT_EQ(m.totals.zi_data, size["bss"].get<uint64_t>());
  EXPECT_EQ(section(m, "log_const_sections")->kind, SectionKind::rodata);  // flags "A": read-only in RAM
}

// TF-M's secure image: upper-case names without "text" were "other", so the
// map said code 0 B; .TFM_BSS was data.
TEST(RealworldGnuMap, TfmSectionsAreCodeAndBssAndWithTheElfMatchSize) {
  LinkerMap m = test::linker_map(test::realworld("map/mldemo_tfm_s_nrf5340.map"));
  EXPECT_EQ(section(m, ".ER_TFM_CODE")->kind, SectionKind::code);
  EXPECT_EQ(section(m, ".TFM_UNPRIV_CODE")->kind, SectionKind::code);
  EXPECT_EQ(section(m, ".TFM_BSS")->kind, SectionKind::bss);
  EXPECT_EQ(section(m, ".TFM_DATA")->kind, SectionKind::data);
  std::string error;
  auto elf = read_elf_image(test::realworld("map/mldemo_tfm_s_nrf5340.elf"), error);
  ASSERT_TRUE(elf) << error;
  classify_by_elf(m, *elf);
  EXPECT_EQ(m.totals.code + m.totals.ro_data, 31148u);  // arm-none-eabi-size: 31148 364 18668
  EXPECT_EQ(m.totals.rw_data, 364u);                     // with .copy.table and .zero.table (WA)
  EXPECT_EQ(m.totals.zi_data, 18668u);
}

// Zephyr's rom_start is writable and executable (WAX): `size` counts it as
// text, edgemem counted it as data (text 151894, data 3917).
TEST(RealworldElf, WritableCodeIsTextAsBinutilsSizeCountsIt) {
  std::string error;
  auto elf = read_elf_image(test::realworld("elf/phyphox_satellite_zephyr_arm.elf"), error);
  ASSERT_TRUE(elf) << error;
  EXPECT_EQ(elf->text, 152150u);  // arm-none-eabi-size (binutils 2.40)
  EXPECT_EQ(elf->data, 3661u);
  EXPECT_EQ(elf->bss, 26449u);
  LinkerMap m = to_linker_map(*elf);
  EXPECT_EQ(m.totals.code + m.totals.ro_data, elf->text);
  EXPECT_EQ(m.totals.rw_data, elf->data);
}

// newlib's .stabstr is a string table `size -A` lists (it is no symbol
// table's): left out, the sections summed 118-279 B below its Total.
TEST(RealworldElf, AStabStringTableIsASectionAsSizeListsIt) {
  std::string error;
  auto elf = read_elf_image(test::realworld("elf/openwch_ch32v307_dac_riscv.elf"), error);
  ASSERT_TRUE(elf) << error;
  uint64_t total = 0;
  bool stabstr = false;
  for (const ElfSection& s : elf->sections) {
    total += s.size;
    stabstr |= s.name == ".stabstr" && s.size == 279;
  }
  EXPECT_TRUE(stabstr);
  EXPECT_EQ(total, 90982u);  // Debian's size -A (binutils 2.40): Total
}

// An embedded Linux binary loads its dynamic symbol, string and relocation
// tables with it: `size` counts them as text, edgemem left them out
// (/bin/ls: text 125,218 against 137,659). This test program itself is
// such a binary, and binutils `size` is the truth.
TEST(RealworldElf, ADynamicExecutablesLoadedTablesAreTextAsBinutilsSizeCountsThem) {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(n, 0);
  self[n] = 0;
  std::string error;
  auto elf = read_elf_image(self, error);
  ASSERT_TRUE(elf) << error;
  if (std::system("command -v size >/dev/null 2>&1") != 0) GTEST_SKIP() << "binutils size is not installed";
  FILE* p = popen(("size " + std::string(self)).c_str(), "r");
  ASSERT_TRUE(p);
  char header[256];
  unsigned long long text = 0, data = 0, bss = 0;
  const bool read = fgets(header, sizeof header, p) && fscanf(p, "%llu %llu %llu", &text, &data, &bss) == 3;
  pclose(p);
  ASSERT_TRUE(read) << "binutils size gave no numbers";
  EXPECT_EQ(elf->text, text);
  EXPECT_EQ(elf->data, data);
  EXPECT_EQ(elf->bss, bss);
  bool dynsym = false;
  for (const auto& s : elf->sections) dynsym |= s.name == ".dynsym" && s.alloc;
  EXPECT_TRUE(dynsym);
}

// Without an ELF: GNU maps of the vendored corpus sum to `size` of their ELF
// (tests/data/SOURCES.md). (ESP-IDF's .flash_rodata_dummy placeholder was
// checked on esp-idf-size-test's map, which has no licence to vendor.)
TEST(RealworldGnuMap, MapOnlyTotalsMatchBinutilsSize) {
  auto sizes = nlohmann::json::parse(test::read_file(test::corpus("map/map_expected_sections.json")))["elf_size_berkeley"];
  {
    std::string error;  // nRF52840 SDK: text and data as size says (its .heap and .stack are not counted there)
    auto nrf = parse_linker_map(test::read_file(test::corpus("map/logitacker_nrf52840_pca10059.map")), error);
    ASSERT_TRUE(nrf) << error;
    EXPECT_EQ(nrf->totals.code + nrf->totals.ro_data, sizes["logitacker_nrf52840_pca10059.map"]["text"].get<uint64_t>());
    EXPECT_EQ(nrf->totals.rw_data, sizes["logitacker_nrf52840_pca10059.map"]["data"].get<uint64_t>());
    // Zero-initialised: size's bss and the 8 KiB .heap; .stack_dummy lies
    // over the heap's bytes (both COPY at 0x200015a0) and was counted twice
    // (21,192 B). The RAM region's use, as ld counts it, ends there too.
    const uint64_t bss = sizes["logitacker_nrf52840_pca10059.map"]["bss"].get<uint64_t>();
    EXPECT_EQ(nrf->totals.zi_data, bss + 8192);
    EXPECT_EQ(nrf->totals.rw_data + nrf->totals.zi_data, test::map_region(*nrf, "RAM")->used);
  }
  for (const char* name : {"kennykang_nucleo_l432kc_ai_sine_release.map", "own_cm4_O2.map", "own_cm4_O0.map"}) {
    SCOPED_TRACE(name);
    std::string error;
    auto m = parse_linker_map(test::read_file(test::corpus(std::string("map/") + name)), error);
    ASSERT_TRUE(m) << error;
    EXPECT_EQ(m->totals.code + m->totals.ro_data, sizes[name]["text"].get<uint64_t>());
    EXPECT_EQ(m->totals.rw_data, sizes[name]["data"].get<uint64_t>());
    EXPECT_EQ(m->totals.zi_data, sizes[name]["bss"].get<uint64_t>());
  }
}

// armlink 5.06u1 still prints the older "Base Addr" layout: one address
// column, "(Base: ...)" execution regions. Nothing was read: totals were 0.
TEST(RealworldArmlinkMap, BaseAddrLayoutTotalsEqualTheFilesOwnGrandTotals) {
  LinkerMap m = test::linker_map(test::realworld("map_armlink/ivyend_stm32f103_ac5_5.06u1.map"));
  EXPECT_EQ(m.toolchain, "armlink");
  EXPECT_EQ(m.totals.code, 22852u);  // "22852  664  3048  88  1904  305872  Grand Totals"
  EXPECT_EQ(m.totals.ro_data, 3048u);
  EXPECT_EQ(m.totals.rw_data, 88u);
  EXPECT_EQ(m.totals.zi_data, 1904u);
  EXPECT_EQ(m.stated["Total ROM Size"], 25988u);
  uint64_t flash = 0;
  for (const auto& r : m.regions)
    if (r.kind == RegionKind::flash) flash += r.used;
  EXPECT_EQ(flash, 25988u);
  const MapRegion* ram = test::map_region(m, "RW_IRAM1");
  ASSERT_NE(ram, nullptr);
  EXPECT_EQ(ram->origin, 0x20000000u);
  EXPECT_EQ(ram->kind, RegionKind::ram);
  EXPECT_TRUE(m.self_check.empty());
  bool lcd = false;
  for (const auto& c : m.contributions) lcd |= c.object == "lcd.o" && c.section == "ER_IROM1:code";
  EXPECT_TRUE(lcd);
}

// How armlink counts PAD, as 28 real maps of Arm Compiler 5.05..5.06u7 show
// (none of them redistributable, so the pattern is rebuilt here): padding
// after code before RO data is Code; between RW data and ZI data, what
// rounds the RW data up to 4 bytes is RW and the rest ZI; past the last
// entry, up to the region's Size, it is the last entry's.
TEST(ArmlinkPad, PaddingCountsWhereArmlinksOwnTotalsPutIt) {
  const std::string map =
      "Memory Map of the image\n\n"
      "  Load Region LR_IROM1 (Base: 0x08000000, Size: 0x00000140, Max: 0x00080000, ABSOLUTE)\n\n"
      "    Execution Region ER_IROM1 (Exec base: 0x08000000, Load base: 0x08000000, Size: 0x00000120, Max: 0x00080000, ABSOLUTE)\n\n"
      "    Exec Addr    Load Addr    Size         Type   Attr      Idx    E Section Name        Object\n\n"
      "    0x08000000   0x08000000   0x0000010c   Code   RO            1    .text               main.o\n"
      "    0x0800010c   0x0800010c   0x00000004   PAD\n"
      "    0x08000110   0x08000110   0x00000010   Data   RO            2    .constdata          main.o\n\n"
      "    Execution Region RW_IRAM1 (Exec base: 0x20000000, Load base: 0x08000120, Size: 0x000000b0, Max: 0x00010000, ABSOLUTE)\n\n"
      "    Exec Addr    Load Addr    Size         Type   Attr      Idx    E Section Name        Object\n\n"
      "    0x20000000   0x08000120   0x0000009a   Data   RW            3    .data               main.o\n"
      "    0x2000009a   0x080001ba   0x00000006   PAD\n"
      "    0x200000a0        -       0x00000010   Zero   RW            4    .bss                main.o\n\n"
      "    Execution Region RW_IRAM2 (Exec base: 0x20010000, Load base: 0x080001bc, Size: 0x0000001c, Max: 0x00010000, ABSOLUTE)\n\n"
      "    Exec Addr    Load Addr    Size         Type   Attr      Idx    E Section Name        Object\n\n"
      "    0x20010000   0x080001bc   0x00000019   Data   RW            5    .data               lcd.o\n\n"
      "Image component sizes\n\n"
      "       272          0         16        184         20          0   Grand Totals\n\n"
      "    Total ROM Size (Code + RO Data + RW Data)        320 (   0.31kB)\n";
  std::string error;
  auto m = parse_linker_map(map, error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(m->totals.code, 0x10cu + 4);      // the PAD before the constants is Code
  EXPECT_EQ(m->totals.ro_data, 0x10u);
  EXPECT_EQ(m->totals.rw_data, 0x9au + 2 + 0x1cu);  // rounded to 4 B; RW_IRAM2's 3 unlisted bytes
  EXPECT_EQ(m->totals.zi_data, 0x10u + 4);
  EXPECT_TRUE(m->self_check.empty());
}

// Arm Compiler 6 aligns an RW region's compressed initialisers after the
// code (a 1052 build's map: ER_m_text ends at 0x60012fb4, RW_m_data loads at
// 0x60012fb8). The load region's COMPRESSED size holds those 4 bytes, its
// "Total ROM Size" (Code + RO + compressed RW) does not: no self-check
// failure, and the flash used is still what the load region holds.
TEST(ArmlinkPad, AlignmentBetweenExecutionRegionsIsInTheLoadRegionNotInTotalRomSize) {
  const std::string map =
      "Memory Map of the image\n\n"
      "  Load Region LR_m_text (Base: 0x60002000, Size: 0x00000150, Max: 0x01000000, ABSOLUTE, COMPRESSED[0x00000138])\n\n"
      "    Execution Region ER_m_text (Exec base: 0x60002000, Load base: 0x60002000, Size: 0x00000114, Max: 0x01000000, ABSOLUTE)\n\n"
      "    Exec Addr    Load Addr    Size         Type   Attr      Idx    E Section Name        Object\n\n"
      "    0x60002000   0x60002000   0x00000114   Code   RO            1    .text               main.o\n\n"
      "    Execution Region RW_m_data (Exec base: 0x20000000, Load base: 0x60002118, Size: 0x0000003c, Max: 0x00020000, ABSOLUTE, COMPRESSED[0x00000020])\n\n"
      "    Exec Addr    Load Addr    Size         Type   Attr      Idx    E Section Name        Object\n\n"
      "    0x20000000   COMPRESSED   0x0000003c   Data   RW            2    .data               main.o\n\n"
      "    Execution Region ARM_LIB_STACK (Exec base: 0x2001fc00, Load base: 0x60002138, Size: 0x00000400, Max: 0x00000400, ABSOLUTE)\n\n"
      "    Exec Addr    Load Addr    Size         Type   Attr      Idx    E Section Name        Object\n\n"
      "    0x2001fc00        -       0x00000400   Zero   RW            3    STACK               startup.o\n\n"
      "Image component sizes\n\n"
      "       276          0          0         60       1024          0   Grand Totals\n"
      "       276          0          0         32       1024          0   ELF Image Totals (compressed)\n\n"
      "    Total ROM Size (Code + RO Data + RW Data)        308 (   0.30kB)\n";
  std::string error;
  auto m = parse_linker_map(map, error);
  ASSERT_TRUE(m) << error;
  EXPECT_TRUE(m->self_check.empty()) << m->self_check[0].what << " " << m->self_check[0].computed_bytes;
  EXPECT_EQ(m->load_gaps, 4u);
  EXPECT_EQ(test::map_region(*m, "LR_m_text")->used, 0x138u);
  // Another 4 B in the load region that its totals do not explain is still a failure.
  std::string wrong = map;
  wrong.replace(wrong.find("COMPRESSED[0x00000138]"), 22, "COMPRESSED[0x0000013c]");
  m = parse_linker_map(wrong, error);
  ASSERT_TRUE(m) << error;
  ASSERT_EQ(m->self_check.size(), 1u);
  EXPECT_EQ(m->self_check[0].what, "Total ROM Size");
}

// A map whose own totals edgemem cannot reproduce says so: here the same
// real file with its Grand Totals line edited to claim 4 bytes more code.
TEST(RealworldArmlinkMap, StatedTotalsThatDisagreeAreReportedBySelfCheck) {
  std::string text = test::read_file(test::realworld("map_armlink/ivyend_stm32f103_ac5_5.06u1.map"));
  const std::string grand = "     22852        664       3048         88       1904     305872   Grand Totals";
  size_t at = text.find(grand);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, grand.size(), "     22856        664       3048         88       1904     305872   Grand Totals");
  std::string error;
  auto m = parse_linker_map(text, error);
  ASSERT_TRUE(m) << error;
  ASSERT_EQ(m->self_check.size(), 1u);
  EXPECT_EQ(m->self_check[0].what, "Code");
  EXPECT_EQ(m->self_check[0].stated_bytes, 22856u);
  EXPECT_EQ(m->self_check[0].computed_bytes, 22852u);
}

// An EW430 map written by XLINK was reported as a GNU ld map missing its
// "Memory Configuration" (line 1322); it is now named for what it is.
TEST(RealworldIarMap, AnXlinkMapIsRefusedByName) {
  std::string error;
  EXPECT_FALSE(parse_linker_map(test::read_file(test::realworld("map_iar/bobouc_msp430f5529_xlink6.4.map")), error));
  EXPECT_NE(error.find("XLINK"), std::string::npos) << error;
  EXPECT_TRUE(error.starts_with("line 3: ")) << error;  // "#      IAR Universal Linker V6.4.6.89"
}

// An lld map (the head of one ld.lld 14 wrote for a Cortex-M4 build) was
// reported as a GNU ld map missing its "Memory Configuration" at its last
// line; it is named, with the command that reads the same image.
TEST(LldMap, IsRefusedByNameWithTheElfCommand) {
  std::string error;
  EXPECT_FALSE(parse_linker_map("     VMA      LMA     Size Align Out     In      Symbol\n"
                                "       0        0        0     1 _estack = ORIGIN ( RAM ) + LENGTH ( RAM )\n"
                                " 8000000  8000000       40     4 .isr_vector\n"
                                " 8000000  8000000       40     4         startup.o:(.isr_vector)\n",
                                error));
  EXPECT_TRUE(error.starts_with("line 1: an LLVM lld map")) << error;
  EXPECT_NE(error.find("edgemem map --elf FW.elf"), std::string::npos) << error;
}

// TI's armcl writes "MEMORY CONFIGURATION" in capitals under its banner:
// once "line 56: expected the \"Memory Configuration\" part of a GNU ld
// map" (the banner and header of a TI ARM Linker 20.2.7 map for an RM48).
TEST(TiMap, IsRefusedByNameWithTheElfCommand) {
  std::string error;
  EXPECT_FALSE(parse_linker_map("******************************************************************************\n"
                                "                  TI ARM Linker Unix v20.2.7                   \n"
                                "******************************************************************************\n"
                                ">> Linked Sat Jul 12 13:58:16 2025\n\n"
                                "OUTPUT FILE NAME:   <build/output.elf>\n"
                                "ENTRY POINT SYMBOL: \"_c_int00\"  address: 00006234\n\n\n"
                                "MEMORY CONFIGURATION\n\n"
                                "         name            origin    length      used     unused   attr    fill\n",
                                error));
  EXPECT_TRUE(error.starts_with("line 2: a TI linker map (\"TI ARM Linker\")")) << error;
  EXPECT_NE(error.find("edgemem map --elf FW.elf"), std::string::npos) << error;
}

// ld accepts LENGTH = 0 and fails the link when something lands there; a
// region used past its length is an overflow whatever its length.
// armlink closes its map with the image totals and ILINK with "Errors:":
// a map cut before them is refused, as a GNU map without OUTPUT( is.
TEST(ArmlinkAndIarMaps, AMapCutShortIsRefused) {
  for (const char* name : {"armlink/bairu_mcutemplate_ac6_6.22.map", "iar/armink_sfud_stm32l475_ewarm8.20.1.map"}) {
    SCOPED_TRACE(name);
    const std::string whole = test::read_file(test::realworld(name));
    std::string error;
    ASSERT_TRUE(parse_linker_map(whole, error)) << error;
    error.clear();
    EXPECT_FALSE(parse_linker_map(whole.substr(0, whole.size() * 9 / 10), error));
    EXPECT_NE(error.find("cut short"), std::string::npos) << error;
  }
}

// ld closes its memory map with OUTPUT(FILE FORMAT), even for a link that
// overflowed (checked with arm-none-eabi-ld 2.40): a map without it was cut
// short, and its regions would read as less used than they are.
TEST(GnuMapRegions, AMapCutShortIsRefusedNotUnderCounted) {
  const std::string whole = test::read_file(test::corpus("map/own_cm4_O2.map"));
  std::string error;
  ASSERT_TRUE(parse_gnu_map(whole, error)) << error;
  for (size_t cut : {3000ul, whole.size() / 2, whole.rfind("OUTPUT(")}) {
    SCOPED_TRACE(cut);
    error.clear();
    EXPECT_FALSE(parse_gnu_map(whole.substr(0, cut), error));
    EXPECT_NE(error.find("the map ends before ld's OUTPUT(...) line"), std::string::npos) << error;
  }
  // Cut before its Memory Configuration, after the archive members and
  // discarded sections ld lists first: also cut, not "not a map".
  const size_t memory = whole.find("Memory Configuration");
  ASSERT_NE(memory, std::string::npos);
  for (size_t cut : {whole.find("Discarded input sections") + 30, memory}) {
    SCOPED_TRACE(cut);
    error.clear();
    EXPECT_FALSE(parse_gnu_map(whole.substr(0, cut), error));
    EXPECT_NE(error.find("the map ends before ld's \"Memory Configuration\" part: it is cut short"), std::string::npos)
        << error;
  }
}

// Two maps joined in one file (`cat a.map b.map`) read as one listed every
// region, section and object twice, exit 0: refused at the second map's
// first part.
TEST(GnuMapRegions, TwoMapsJoinedInOneFileAreRefused) {
  const std::string whole = test::read_file(test::corpus("map/own_cm4_O2.map"));
  std::string error;
  EXPECT_FALSE(parse_gnu_map(whole + whole, error));
  const size_t line = std::count(whole.begin(), whole.begin() + whole.find("Memory Configuration"), '\n') + 1 +
                      std::count(whole.begin(), whole.end(), '\n');
  EXPECT_EQ(error, "line " + std::to_string(line) +
                       ": a second \"Memory Configuration\": two maps joined in one file; give each map on its own "
                       "(`edgemem diff A.map B.map` compares two)");
  // Only its memory map joined on: the same.
  EXPECT_FALSE(parse_gnu_map(whole + whole.substr(whole.find("Linker script and memory map")), error));
  EXPECT_NE(error.find("a second \"Linker script and memory map\": two maps joined in one file"), std::string::npos)
      << error;
}

// Made by hand after a review: merged strings in a small map (the first
// input holds the block, the second was merged away, a COMMON input with a
// size before relaxing, which once aborted the parser), and a region without
// attributes that reaches past the attributed one it overlaps: the bytes
// past it are its own (they once were in no region).
TEST(GnuMapRegions, MergedInputsCommonAndAPartlyOverlappingRegion) {
  const std::string map =
      "Memory Configuration\n\nName             Origin             Length             Attributes\n"
      "FLASH            0x0000000008000000 0x0000000000010000 xr\n"
      "RAM              0x0000000020000000 0x0000000000001000 xrw\n"
      "SRAM2            0x0000000020000800 0x0000000000001000\n"
      "*default*        0x0000000000000000 0xffffffffffffffff\n\n"
      "Linker script and memory map\n\n"
      ".rodata         0x0000000008000100       0x40\n"
      " .rodata.str1.1\n                0x0000000008000100       0x30 a.o\n"
      "                                         0x10 (size before relaxing)\n"
      " .rodata.str1.1\n                0x0000000008000130       0x20 b.o\n"
      " .rodata        0x0000000008000130       0x10 b.o\n\n"
      ".bss            0x0000000020000020       0x40\n"
      " COMMON         0x0000000020000020       0x40 b.o\n"
      "                                         0x10 (size before relaxing)\n"
      ".sram2          0x0000000020001000      0x200\n"
      " .sram2         0x0000000020001000      0x200 b.o\n"
      "OUTPUT(fw.elf elf32-littlearm)\n";
  std::string error;
  auto m = parse_gnu_map(map, error);
  ASSERT_TRUE(m) << error;
  std::map<std::pair<std::string, std::string>, uint64_t> held;
  for (const auto& c : m->contributions) held[{c.section, c.object}] += c.size;
  EXPECT_EQ((held[{".rodata", "(strings merged by ld)"}]), 0x30u);
  EXPECT_EQ((held[{".rodata", "b.o"}]), 0x10u);
  EXPECT_EQ((held[{".rodata", "a.o"}]), 0u);
  EXPECT_EQ((held[{".bss", "b.o"}]), 0x40u);
  EXPECT_EQ(test::map_region(*m, "SRAM2")->used, 0x1200u - 0x800u);  // its extent, to the end of .sram2
}

TEST(GnuMapRegions, AZeroLengthRegionHoldingBytesOverflows) {
  const std::string map =
      "Memory Configuration\n\n"
      "Name             Origin             Length             Attributes\n"
      "FLASH            0x0000000008000000 0x0000000000000000 xr\n"
      "RAM              0x0000000020000000 0x0000000000000100 xrw\n"
      "SPARE            0x0000000020000000 0x0000000000000000 rw\n"
      "*default*        0x0000000000000000 0xffffffffffffffff\n\n"
      "Linker script and memory map\n\n"
      ".text           0x0000000008000000       0x40\n"
      " .text          0x0000000008000000       0x40 main.o\n"
      ".bss            0x0000000020000000      0x180\n"
      " .bss           0x0000000020000000      0x180 main.o\n"
      "OUTPUT(main.elf elf32-littlearm)\n";
  std::string error;
  auto m = parse_gnu_map(map, error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(m->regions[0].used, 0x40u);
  EXPECT_EQ(overflow_bytes(m->regions[0]), 0x40u);
  EXPECT_EQ(overflow_bytes(m->regions[1]), 0x80u);
  EXPECT_EQ(m->regions[2].used, 0u);  // .bss is RAM's, not the empty region's that starts there too
}

// ESP-IDF's .rtc_reserved is NOLOAD in its sections.ld (RTC memory kept
// across sleep): counted as image bytes, ESP32-C3 hello_world's image read
// 150,538 B against esp-idf-size's image_size 150,514 B, 24 B more (a
// helper's find on esp-idf-size-test's map, which has no licence to vendor;
// its lines are rebuilt here).
TEST(GnuMapSections, EspIdfsRtcReservedHoldsNoBytesOfTheImage) {
  const std::string map =
      "Memory Configuration\n\n"
      "Name             Origin             Length             Attributes\n"
      "rtc_reserved_seg 0x50001fe8         0x00000018         rw\n"
      "rtc_slow_seg     0x50000000         0x00001fe8         rw\n"
      "*default*        0x00000000         0xffffffff\n\n"
      "Linker script and memory map\n\n"
      ".rtc.data       0x50000000       0x10\n"
      " .rtc.data      0x50000000       0x10 main.o\n"
      ".rtc_reserved   0x50001fe8       0x18\n"
      " *(.rtc_timer_data_in_rtc_mem .rtc_timer_data_in_rtc_mem.*)\n"
      " .rtc_timer_data_in_rtc_mem\n"
      "                0x50001fe8       0x18 esp_hw_support.a(rtc_time.c.obj)\n"
      "OUTPUT(app.elf elf32-littleriscv)\n";
  std::string error;
  auto m = parse_gnu_map(map, error);
  ASSERT_TRUE(m) << error;
  const MapSection* reserved = section(*m, ".rtc_reserved");
  ASSERT_NE(reserved, nullptr);
  EXPECT_EQ(reserved->kind, SectionKind::bss);
  EXPECT_EQ(section(*m, ".rtc.data")->kind, SectionKind::data);
}

// `check --map --elf` and `fit` take the ELF's word on what the map cannot
// tell only when both are of one link. Every map and ELF pair of one link
// in the repository (public projects, GNU ld, armlink and IAR) agrees; each
// map beside another pair's ELF differs. Comparing section sizes alone let
// 350 of the 1,995 cross pairings pass, among them maps whose ELF had an
// output section the map does not list.
TEST(RealworldMapElf, PairsOfOneLinkAgreeAndOthersDiffer) {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"gnu_map/2827700630_ads8688_stm32f103_cubeide.map", "elf/2827700630_ads8688_stm32f103_cubeide.elf"},
      {"gnu_map/2827700630_dac8568_stm32f103_cubeide.map", "elf/2827700630_dac8568_stm32f103_cubeide.elf"},
      {"gnu_map/2827700630_laserrangefinder_ch573_riscv.map", "elf/2827700630_laserrangefinder_ch573_riscv.elf"},
      {"gnu_map/2827700630_tftch573f_wch_riscv.map", "elf/2827700630_tftch573f_wch_riscv.elf"},
      {"gnu_map/armink_flashdb_esp8266_rtossdk.map", "elf/armink_flashdb_esp8266_rtossdk.elf"},
      {"armlink/armink_sfud_stm32l475_ac5_5.06u6.map", "elf/armink_sfud_stm32l475_ac5_5.06u6.axf"},
      {"iar/armink_sfud_stm32l475_ewarm8.20.1.map", "elf/armink_sfud_stm32l475_ewarm8.20.1.out"},
      {"armlink/armsoftware_cmsis5_rtx5blinky_ac5_5.06u4.map", "elf/armsoftware_cmsis5_rtx5blinky_ac5_5.06u4.axf"},
      {"armlink/bairu_mcutemplate_ac6_6.22.map", "elf/bairu_mcutemplate_ac6_6.22.axf"},
      {"armlink/colorcard_alarmclock_stm32f103_ac5_5.06u5.map", "elf/colorcard_alarmclock_stm32f103_ac5_5.06u5.axf"},
      {"armlink/colorcard_xtuuav_drone_ac5_5.06u6.map", "elf/colorcard_xtuuav_drone_ac5_5.06u6.axf"},
      {"gnu_map/diminddl_picoharmonics_rp2040_picosdk.map", "elf/diminddl_picoharmonics_rp2040_picosdk.elf"},
      {"armlink/ivyend_stm32template_ac5_5.06u1.map", "elf/ivyend_stm32template_ac5_5.06u1.axf"},
      {"iar/jagaldol_runningalarm_stm32_ewarm9.30.1.map", "elf/jagaldol_runningalarm_stm32_ewarm9.30.1.out"},
      {"iar/liteos_efm32slstk3400a_ewarm8.11.1.map", "elf/liteos_efm32slstk3400a_ewarm8.11.1.out"},
      {"armlink/liteos_stm32f429_ac5_5.05u1.map", "elf/liteos_stm32f429_ac5_5.05u1.axf"},
      {"gnu_map/liteoslab_gd32vf103_riscv.map", "elf/liteoslab_gd32vf103_riscv.elf"},
      {"gnu_map/openwch_ch32v307_dac_riscv.map", "elf/openwch_ch32v307_dac_riscv.elf"},
      {"gnu_map/openwch_ch583_wristband_riscv.map", "elf/openwch_ch583_wristband_riscv.elf"},
      {"gnu_map/siddkishan_picowi_join_usb_rndis_rp2040.map", "elf/siddkishan_picowi_join_usb_rndis_rp2040.elf"},
      {"gnu_map/siddkishan_picowi_web_cam_rp2040.map", "elf/siddkishan_picowi_web_cam_rp2040.elf"},
      {"iar/wathui99_fptlab_stm8l152_ewstm8_3.11.1.map", "elf/wathui99_fptlab_stm8l152_ewstm8_3.11.1.out"},
      {"gnu_map/dorsel89_phyphoxsatellite_nrf52840_zephyr.map", "elf/phyphox_satellite_zephyr_arm.elf"},
      {"map/microdoom_zephyr_esp32.map", "map/microdoom_zephyr_esp32.elf"},
      {"map/mldemo_tfm_s_nrf5340.map", "map/mldemo_tfm_s_nrf5340.elf"},
  };
  std::vector<LinkerMap> maps;
  std::vector<ElfImage> elfs;
  for (const auto& [map, elf] : pairs) {
    maps.push_back(test::linker_map(test::realworld(map)));
    std::string error;
    auto image = read_elf_image(test::realworld(elf), error);
    ASSERT_TRUE(image) << error;
    elfs.push_back(std::move(*image));
  }
  for (size_t i = 0; i < pairs.size(); ++i) {
    EXPECT_EQ(compare_with_map(elfs[i], maps[i]), std::vector<std::string>{}) << pairs[i].first;
    for (size_t j = 0; j < pairs.size(); ++j)
      if (j != i) {
        EXPECT_FALSE(compare_with_map(elfs[j], maps[i]).empty()) << pairs[i].first << " with " << pairs[j].second;
      }
  }
}

}  // namespace
}  // namespace edgemem

