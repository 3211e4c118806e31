// edgemem fit: weights and arena against the firmware's map and the chip.
#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "plan/fit.h"
#include "test_support.h"

namespace edgemem::plan {
namespace {

using edgemem::test::corpus;
using edgemem::test::read_file;

ArenaBudget budget_of(uint64_t recommended) {
  ArenaBudget b;
  b.recommended_bytes = recommended;
  return b;
}

LinkerMap small_map() {
  LinkerMap m;
  m.regions = {{"FLASH", 0x08000000, 256 * 1024, "rx", 40000, RegionKind::flash},
               {"RAM", 0x20000000, 64 * 1024, "xrw", 30000, RegionKind::ram}};
  m.sections = {{".rodata", 0x08001000, 30000, std::nullopt, SectionKind::rodata, 0},
                {".bss", 0x20000000, 28000, std::nullopt, SectionKind::bss, 0}};
  m.symbols = {{"g_model", ".rodata", "model.o", 0x08001000, 27856},
               {"tensor_arena", ".bss", "main.o", 0x20000100, 20000}};
  return m;
}

TEST(Fit, LinkedWeightsAreNotCountedTwiceAndTheDeclaredArenaIsReplaced) {
  FitResult r = fit(budget_of(16004), 27848, small_map(), std::nullopt);
  EXPECT_EQ(r.model_symbol, "g_model");  // 27,856 B: the model padded to 16 B
  EXPECT_EQ(r.flash_need, 40000u);
  EXPECT_EQ(r.arena_symbol, "tensor_arena");
  EXPECT_EQ(r.declared_arena, 20000u);
  EXPECT_EQ(r.ram_need, 30000u - 20000u + 16004u);
  EXPECT_EQ(r.ram_capacity, 64u * 1024);
  EXPECT_EQ(r.arena_block_free, 64u * 1024 - 10000u);
  EXPECT_TRUE(r.fits());
}

// TFLite Micro's own string literals and vtables are read-only data named
// after its arena classes (a Zephyr magic_wand map, whose arena is a member
// of a static struct): one of 178 B was once "the declared arena", 15,278 B
// too small, and the model did not fit. No writable symbol is named like an
// arena there; the caller can name the one that holds it.
TEST(Fit, ReadOnlyDataNamedLikeAnArenaIsNotTheArena) {
  LinkerMap m = small_map();
  m.symbols.pop_back();  // no tensor_arena
  m.symbols.push_back({"_ZN6tflite26SingleArenaBufferAllocator12ResizeBufferEPhjj.str1.4", ".rodata", "tflm.o",
                       0x08008000, 178});
  m.symbols.push_back({"_ZTVN6tflite26SingleArenaBufferAllocatorE", ".rodata", "tflm.o", 0x08008100, 64});
  // In a position-independent build vtables are writable data (review: still taken for the arena).
  m.symbols.push_back({"rel.ro._ZTIN6tflite26SingleArenaBufferAllocatorE", ".data", "tflm.o", 0x20000180, 24});
  m.symbols.push_back({"_ZL4self", ".bss", "gesture.o", 0x20000200, 20500});
  FitResult r = fit(budget_of(16004), 27848, m, std::nullopt);
  EXPECT_EQ(r.arena_symbol, "");
  EXPECT_EQ(r.ram_need, 30000u + 16004u);  // on top of the statics: nothing says it is among them
  const MapSymbol* self = &m.symbols.back();
  r = fit(budget_of(16004), 27848, m, std::nullopt, self);
  EXPECT_EQ(r.arena_symbol, "_ZL4self");
  EXPECT_EQ(r.declared_arena, 20500u);
  EXPECT_EQ(r.ram_need, 30000u - 20500u + 16004u);
  EXPECT_TRUE(r.fits());
}

// An allocator's arena beside TFLite Micro's: heap_arena (8,000 B) was the
// largest arena-named symbol, so it was "the declared arena", 6,864 B of it
// reclaimable, and the 1,000 B tensor_arena, 136 B short of its need, read
// FITS. A heap's arena is a heap; a symbol that names a tensor is the tensor
// arena before a larger one named only an arena.
TEST(Fit, TheTensorArenaIsTheOneNamedSoNotAnAllocatorsArena) {
  LinkerMap m = small_map();
  m.symbols.back().size = 1000;  // tensor_arena
  for (const char* other : {"heap_arena", "malloc_arena", "mem_arena"}) {
    LinkerMap with = m;
    with.symbols.push_back({other, ".bss", "os.o", 0x20004000, 8000});
    FitResult r = fit(budget_of(1136), 27848, with, std::nullopt);
    EXPECT_EQ(r.arena_symbol, "tensor_arena") << other;
    EXPECT_EQ(r.declared_arena, 1000u) << other;
    EXPECT_LT(r.declared_arena, r.declared_need) << other;  // 136 B short: AllocateTensors() fails
    EXPECT_EQ(r.ram_need, 30000u - 1000u + r.declared_need) << other;
  }
  LinkerMap heap = m;
  heap.symbols.push_back({"heap_arena", ".bss", "os.o", 0x20004000, 8000});
  EXPECT_EQ(symbol_role(heap.symbols.back(), SectionKind::bss), "heap");
  // Without a tensor-named one, the largest arena-named symbol still is (micro_speech's g_arena).
  LinkerMap plain = small_map();
  plain.symbols.back().name = "g_arena";
  EXPECT_EQ(fit(budget_of(16004), 27848, plain, std::nullopt).arena_symbol, "g_arena");
  // Review: a 4 B counter named after the arena is no arena (it was the declared one, "9,856 B too small").
  plain.symbols.push_back({"tensor_arena_used", ".bss", "main.o", 0x20000080, 4});
  EXPECT_EQ(fit(budget_of(16004), 27848, plain, std::nullopt).arena_symbol, "g_arena");
  // A small array is the arena all the same: declared too small, not missing.
  LinkerMap tiny = small_map();
  tiny.symbols.back().size = 32;
  FitResult r = fit(budget_of(16004), 27848, tiny, std::nullopt);
  EXPECT_EQ(r.arena_symbol, "tensor_arena");
  EXPECT_LT(r.declared_arena, r.declared_need);
}

TEST(Fit, UnlinkedWeightsAreAddedAndShortfallsAreNamed) {
  LinkerMap m = small_map();
  m.symbols.erase(m.symbols.begin());
  Mcu tiny{"tiny", "Cortex-M0+", "", 32 * 1024, 64 * 1024, 16 * 1024};
  FitResult r = fit(budget_of(20000), 300000, m, tiny);
  EXPECT_EQ(r.flash_need, 340000u);
  EXPECT_FALSE(r.fits_flash);
  EXPECT_EQ(r.ram_need, 30000u);  // 10,000 B of statics + the arena
  EXPECT_TRUE(r.fits_ram);
  EXPECT_FALSE(r.fits_block);  // 20,000 B do not fit a 16 KiB block
  EXPECT_FALSE(r.fits());
}

TEST(Fit, RealMapAndModel) {
  std::string text = read_file(corpus("map/own_cm4_O2.map")), error;
  auto map = parse_linker_map(text, error);
  ASSERT_TRUE(map) << error;
  std::string bytes = read_file(corpus("tflite/tflm_keyword_scrambled.tflite"));
  auto model = read_tflite({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, error);
  ASSERT_TRUE(model) << error;
  ArenaBudget b = arena_budget(*model, Target::cortex_m);
  FitResult r = fit(b, bytes.size(), *map, std::nullopt);
  EXPECT_EQ(r.flash_need, 3292u + bytes.size());  // ld's FLASH use + the weights
  EXPECT_EQ(r.declared_arena, 16384u);
  // ld's RAM use, arena swapped: the map places tensor_arena 16-byte
  // aligned, so the array needs no allowance for an unaligned start.
  EXPECT_EQ(r.declared_need, b.recommended_bytes - b.alignment_bytes);
  EXPECT_EQ(r.arena_placed, r.declared_need);
  EXPECT_EQ(r.ram_need, 20512u - 16384u + r.declared_need);
  EXPECT_TRUE(r.fits());
}

// An array of exactly what an aligned declared arena needs fits: the RAM
// total and the one-block test count what the array needs, not the
// recommendation for an unaligned one (in review, a linked image that filled
// its RAM exactly read "SHORT by 16 B").
TEST(Fit, AnAlignedDeclaredArenaOfExactlyItsNeedFits) {
  LinkerMap m = small_map();
  const MapSymbol* arena = largest_symbol_with_role(m, "tensor arena");
  ASSERT_TRUE(arena && arena->address % 16 == 0);
  ArenaBudget b = budget_of(20000);
  b.alignment_bytes = 16;
  const uint64_t need = declared_arena_need(b, *arena);
  EXPECT_EQ(need, b.recommended_bytes - b.alignment_bytes);
  uint64_t statics = 0;
  for (const MapRegion& reg : m.regions)
    if (reg.kind == RegionKind::ram) statics += reg.used;
  statics -= arena->size;
  Mcu exact{"exact", "", "", statics + need, 1 << 20, statics + need};
  FitResult r = fit(b, 1000, m, exact);
  EXPECT_EQ(r.ram_need, statics + need);
  EXPECT_TRUE(r.fits_ram);
  EXPECT_TRUE(r.fits_block);
  exact.ram = exact.largest_ram_block = statics + need - 1;
  EXPECT_FALSE(fit(b, 1000, m, exact).fits_ram);
}

// A .bss buffer of the model's size holds no weights: the model still needs
// its flash (in review, `uint8_t audio_buffer[18800]` hid an 18,800 B model).
TEST(Fit, ABssBufferOfTheModelsSizeIsNotTheWeights) {
  LinkerMap m = small_map();
  m.symbols.erase(m.symbols.begin());
  ASSERT_TRUE(std::any_of(m.sections.begin(), m.sections.end(), [](const MapSection& s) { return s.name == ".bss"; }));
  m.symbols.push_back({"audio_buffer", ".bss", "app.o", 0x20004000, 300000});
  FitResult r = fit(budget_of(20000), 300000, m, std::nullopt);
  EXPECT_TRUE(r.model_symbol.empty());
  EXPECT_EQ(r.flash_need, 40000u + 300000u);
  m.symbols.back().section = ".rodata";
  m.symbols.back().name = "font_table";
  r = fit(budget_of(20000), 300000, m, std::nullopt);
  EXPECT_EQ(r.model_symbol, "font_table");  // a constant of that size is taken, and said to be by size alone
  EXPECT_FALSE(r.model_symbol_named_as_weights);
}

// Against a chip, the arena's block holds the statics the linker put beside
// it: its largest contiguous block is not all the arena's. The own_cm4_O2
// map (64 KiB RAM region, 4,128 B of statics beside its declared arena) on
// a 20 KiB STM32F103C8 leaves 16,352 B; the memfault map's statics fill its
// 80 KiB coredump region and leave its 64 KiB "ram" region 64,876 B, short
// of VWW's 101,108 B on an STM32F407VG whose largest block is 128 KiB.
TEST(Fit, TheArenasBlockHoldsTheStaticsBesideIt) {
  auto chip = [](const std::string& name) {
    for (const Mcu& m : builtin_mcus())
      if (m.name == name) return m;
    ADD_FAILURE() << name;
    return Mcu{};
  };
  std::string error;
  auto own = parse_linker_map(read_file(corpus("map/own_cm4_O2.map")), error);
  ASSERT_TRUE(own) << error;
  FitResult r = fit(budget_of(16000), 1000, *own, chip("STM32F103C8"));
  EXPECT_EQ(r.arena_block_free, 20480u - 4128u);
  EXPECT_TRUE(r.fits_block);
  r = fit(budget_of(16400), 1000, *own, chip("STM32F103C8"));
  EXPECT_FALSE(r.fits_block);

  auto memfault = parse_linker_map(read_file(corpus("map/memfault_renode_example_stm32f4.map")), error);
  ASSERT_TRUE(memfault) << error;
  r = fit(budget_of(101108), 1000, *memfault, chip("STM32F407VG"));
  EXPECT_EQ(r.arena_block_free, 65536u - 660u);
  EXPECT_FALSE(r.fits_block);
  EXPECT_FALSE(r.fits());
}

// TFLite Micro aligns the arena's start up to 16 B; the recommendation
// allows 16 B for an array that is not aligned. The own_cm4_O2 map puts
// tensor_arena (16,384 B) at 0x20000020: a recommendation of 16,400 B
// needs no more than it has, as plan --declared says for an aligned array.
TEST(Fit, AnAlignedDeclaredArenaNeedsNoAlignmentAllowance) {
  ArenaBudget b = budget_of(16400);
  b.alignment_bytes = 16;
  std::string error;
  auto own = parse_linker_map(read_file(corpus("map/own_cm4_O2.map")), error);
  ASSERT_TRUE(own) << error;
  FitResult r = fit(b, 1000, *own, std::nullopt);
  EXPECT_EQ(r.declared_need, 16384u);
  EXPECT_EQ(r.arena_need, 16400u);  // the RAM total still counts the allowance
  EXPECT_EQ(declared_arena_need(b, MapSymbol{"tensor_arena", ".bss", "main.o", 0x20000024, 16384}), 16400u);
}

// The weights are one array in one flash region. The MSPM0 map's flash is
// 128 KiB plus two 256 B boot-configuration regions, which the total
// counts; memfault's is a 128 KiB bootloader region beside the 896 KiB the
// app links into. A model that fits the totals but no one region read FITS.
TEST(Fit, TheWeightsNeedOneFlashRegionWithRoomForThem) {
  std::string error;
  auto mspm0 = parse_linker_map(read_file(corpus("map_armlink/bairu_nuedc2024h_mspm0g3507_ac6_6.22.map")), error);
  ASSERT_TRUE(mspm0) << error;
  FitResult r = fit(budget_of(1000), 95384, *mspm0, std::nullopt);
  EXPECT_EQ(r.flash_capacity, 131072u + 256 + 256);
  ASSERT_TRUE(r.weights_block_free);
  EXPECT_EQ(*r.weights_block_free, 131072u - 35688u);  // LR_IROM1 less what the image keeps there
  EXPECT_TRUE(r.fits());
  r = fit(budget_of(1000), 95385, *mspm0, std::nullopt);
  EXPECT_TRUE(r.fits_flash);  // 131,073 B of 131,584 B in total
  EXPECT_FALSE(r.fits_weights_block);
  EXPECT_FALSE(r.fits());

  auto memfault = parse_linker_map(read_file(corpus("map/memfault_fwup_example_stm32f4.map")), error);
  ASSERT_TRUE(memfault) << error;
  r = fit(budget_of(1000), 950000, *memfault, std::nullopt);
  EXPECT_TRUE(r.fits_flash);
  EXPECT_EQ(*r.weights_block_free, 917504u - 7144u);  // approm
  EXPECT_FALSE(r.fits());

  r = fit(budget_of(1000), 27848, small_map(), std::nullopt);  // linked in: placed by the linker already
  EXPECT_FALSE(r.weights_block_free);
  EXPECT_TRUE(r.fits_weights_block);
}

// A map that cannot stand for the chip: no flash region (an ESP32
// bootloader runs from RAM; its capacity read 0 B and the verdict DOES NOT
// FIT), or ESP-IDF's flash-cache windows (read as 17 MB of flash).
TEST(Fit, AMapWithoutTheChipsCapacityIsSaidToBeOne) {
  LinkerMap ram_only;
  ram_only.regions = {{"iram_loader_seg", 0x40078000, 0x8000, "RWX", 14351, RegionKind::ram},
                      {"dram_seg", 0x3fff0000, 0x10000, "RW", 7212, RegionKind::ram}};
  ASSERT_TRUE(map_capacity_unknown(ram_only));
  EXPECT_NE(map_capacity_unknown(ram_only)->find("no flash region"), std::string::npos);
  EXPECT_FALSE(map_capacity_unknown(small_map()));

  // ESP32-C3 hello_world as esp-idf-size states it (espressif/esp-idf-size
  // test_memmap): flash code 73,158, IRAM text 46,312 (+280 fill),
  // rodata 26,624 after a 131,072 B placeholder that aligns the window,
  // data 4,388 copied out of the image; image_size 150,514.
  LinkerMap esp;
  esp.regions = {{"iram0_0_seg", 0x40380000, 321296, "RX", 46592, RegionKind::flash},
                 {"iram0_2_seg", 0x42000020, 8388576, "RX", 73158, RegionKind::flash},
                 {"dram0_0_seg", 0x3fc80000, 321296, "RW", 54624, RegionKind::ram},
                 {"drom0_0_seg", 0x3c000020, 8388576, "R", 157696, RegionKind::flash}};
  esp.sections = {{".iram0.text", 0x40380000, 46312, std::nullopt, SectionKind::code, 0},
                  {".iram0.text_end", 0x4038b4e8, 280, std::nullopt, SectionKind::code, 280},
                  {".dram0.dummy", 0x3fc80000, 46592, std::nullopt, SectionKind::other, 46592},
                  {".dram0.data", 0x3fc8b600, 4388, std::nullopt, SectionKind::data, 72},
                  {".flash.text", 0x42000020, 73158, std::nullopt, SectionKind::code, 16},
                  {".flash_rodata_dummy", 0x3c000020, 131072, std::nullopt, SectionKind::other, 131072},
                  {".flash.appdesc", 0x3c020020, 256, std::nullopt, SectionKind::rodata, 0},
                  {".flash.rodata", 0x3c020120, 26368, std::nullopt, SectionKind::rodata, 232}};
  ASSERT_TRUE(map_capacity_unknown(esp));
  EXPECT_NE(map_capacity_unknown(esp)->find("ESP-IDF"), std::string::npos);
  Mcu s3{"ESP32-S3", "", "", 512 * 1024, 1024 * 1024, 320 * 1024};
  FitResult r = fit(budget_of(1000), 2704, esp, s3);
  EXPECT_EQ(r.flash[0].bytes, 150514u - 32u);  // esp-idf-size's image less the RTC data this map leaves out
  EXPECT_EQ(*r.weights_block_free, 1024u * 1024 - r.flash[0].bytes);

  // Zephyr's ESP32 map has the windows too, and the flash the image is
  // loaded from (ROM, with MCUboot's header): that is the flash. The windows
  // counted it twice (58,656 B); binutils' size says text + data 29,380 B.
  std::string error;
  auto zephyr = parse_linker_map(read_file(test::realworld("map/microdoom_zephyr_esp32.map")), error);
  ASSERT_TRUE(zephyr) << error;
  EXPECT_FALSE(map_capacity_unknown(*zephyr));
  r = fit(budget_of(1000), 2704, *zephyr, std::nullopt);
  EXPECT_EQ(r.flash[0].bytes, 32u + 28 + 29324);  // mcuboot_hdr, metadata, ROM
  EXPECT_EQ(r.flash_capacity, 4u * 1024 * 1024);
}

// An ESP32's external RAM window (extern_ram_seg) is no RAM of the chip:
// the arena's block is its internal DRAM, less the statics there
// (c0ldf1recsgo/hello-world-esp32-tflite, SPIRAM off in its sdkconfig). The
// image as the committed hello_world.bin's segments hold it: 416,020 B.
TEST(Fit, AnEsp32sExternalRamWindowIsNotTheChipsRam) {
  std::string error;
  auto map = parse_linker_map(read_file(test::realworld("map/c0ld_hello_world_esp32.map")), error);
  ASSERT_TRUE(map) << error;
  EXPECT_EQ(test::map_region(*map, "extern_ram_seg")->kind, RegionKind::other);
  Mcu esp32{"ESP32", "", "", 4u * 1024 * 1024, 520u * 1024, 160u * 1024};
  FitResult r = fit(budget_of(1152), 2640, *map, esp32);
  EXPECT_EQ(r.model_symbol, "g_sine_model_data");
  EXPECT_NEAR(static_cast<double>(r.flash[0].bytes), 416020.0, 16.0);
  // The statics beside the arena in DRAM (dram0_0_seg's use less the 2 KiB arena array).
  const uint64_t dram_statics = test::map_region(*map, "dram0_0_seg")->used - r.declared_arena;
  EXPECT_EQ(r.arena_block_free, 160u * 1024 - dram_statics);

  // ESP-IDF 5's ESP32-S3 layout (an app's map, numbers as linked): the
  // external RAM window starts where the rodata window does, and its
  // placeholder .ext_ram.dummy reaches over the rodata. The image's drom
  // segment is .flash.appdesc + .flash.rodata, 80,536 B, as the app's .bin
  // holds it; the placeholders are none of it.
  LinkerMap s3;
  s3.regions = {{"drom0_0_seg", 0x3c000020, 0x1ffffe0, "r", 0, RegionKind::flash},
                {"iram0_2_seg", 0x42000020, 0x7fffe0, "xr", 0, RegionKind::flash},
                {"dram0_0_seg", 0x3fc88000, 0x53700, "rw", 0, RegionKind::ram},
                {"extern_ram_seg", 0x3c000020, 0x1ffffe0, "xrw", 0, RegionKind::ram}};
  std::string text = "Memory Configuration\n\nName Origin Length Attributes\n";
  for (const MapRegion& reg : s3.regions)
    text += fmt::format("{} 0x{:x} 0x{:x} {}\n", reg.name, reg.origin, reg.length, reg.attributes);
  text += "\nLinker script and memory map\n\n"
          ".flash_rodata_dummy\n                0x3c000020    0x30000\n *fill*         0x3c000020    0x30000 \n"
          ".flash.appdesc  0x3c030020      0x100\n .rodata_desc   0x3c030020      0x100 app_desc.o\n"
          ".flash.rodata   0x3c030120    0x13998\n .rodata        0x3c030120    0x13998 main.o\n"
          ".flash.text     0x42000020    0x29f94\n .text          0x42000020    0x29f94 main.o\n"
          ".ext_ram.dummy  0x3c000020    0x4ffe0\n *fill*         0x3c000020    0x4ffe0 \n"
          "OUTPUT(app.elf elf32-xtensa-le)\n";
  auto parsed = parse_linker_map(text, error);
  ASSERT_TRUE(parsed) << error;
  EXPECT_EQ(test::map_region(*parsed, "drom0_0_seg")->used, 0x30000u + 0x100 + 0x13998);  // as ld counts it
  r = fit(budget_of(1000), 2704, *parsed, esp32);
  EXPECT_EQ(r.flash[0].bytes, 80536u + 0x29f94);
  EXPECT_EQ(r.ram[0].bytes, 0u);  // no statics in external RAM's placeholder
}

// Zephyr names devicetree memory regions without attributes over the RAM
// (SRAM1 = RAM on the nRF5340's network core), and IDT_LIST holds tables
// its build drops: neither is the chip's memory. The image is the committed
// zephyr.bin, 184,348 B (MpDev89/NORAB106_BT_HeartRate, hci_rpmsg); SRAM1
// once counted as 64 KiB more flash, holding 48,728 B.
TEST(Fit, ZephyrsAliasRegionsAndIdtListAreNotMemoryOfTheChip) {
  std::string error;
  auto map = parse_linker_map(read_file(test::realworld("map/mpdev_hci_rpmsg_nrf5340_net.map")), error);
  ASSERT_TRUE(map) << error;
  EXPECT_EQ(test::map_region(*map, "SRAM1")->kind, RegionKind::other);
  EXPECT_EQ(test::map_region(*map, "SRAM1")->used, 0u);
  EXPECT_EQ(test::map_region(*map, "IDT_LIST")->kind, RegionKind::other);
  FitResult r = fit(budget_of(1000), 2704, *map, std::nullopt);
  EXPECT_EQ(r.flash[0].bytes, 184348u);
  EXPECT_EQ(r.flash_capacity, 256u * 1024);
  EXPECT_EQ(r.ram_capacity, 64u * 1024);
}

TEST(McuTable, HasTheCommonChipsAndRejectsBadTables) {
  auto mcus = builtin_mcus();
  for (const char* name : {"STM32L476RG", "STM32H743ZI", "nRF52840", "ESP32-S3", "RP2040"}) {
    bool found = false;
    for (const auto& m : mcus)
      if (m.name == name) {
        found = true;
        EXPECT_GT(m.ram, 0u);
        EXPECT_GT(m.flash, 0u);
        EXPECT_LE(m.largest_ram_block, m.ram);
      }
    EXPECT_TRUE(found) << name;
  }
  std::string error;
  EXPECT_FALSE(parse_mcu_table("{\"mcus\": [{\"name\": \"x\"}]}", error));
  EXPECT_NE(error.find("mcus[0]"), std::string::npos);
  EXPECT_FALSE(parse_mcu_table("not json", error));
}

}  // namespace
}  // namespace edgemem::plan
