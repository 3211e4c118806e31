// The data behind the map, stack and diff pages, where it carries numbers the
// text reports do not print: the map's region > section > object > symbol
// tree, each stack root's frames along its worst path, a diff's rows as text
// prints them. (The browser side is tests/report/html_static_test.sh.)
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include <nlohmann/json.hpp>

#include "report/diff_report.h"
#include "report/map_report.h"
#include "report/stack_report.h"
#include "static/linker_map.h"
#include "static/stack_usage.h"
#include "test_support.h"

namespace edgemem {
namespace {

using nlohmann::json;

LinkerMap read_map(const std::string& path) {
  std::string error;
  auto map = parse_linker_map(test::read_file(path), error);
  if (!map) throw std::runtime_error(path + ": " + error);
  return *map;
}

json map_data(const LinkerMap& map) {
  MapReport r;
  r.path = "fw.map";
  r.map = &map;
  return map_page_data(r);
}

const json* child(const json& node, const std::string& name) {
  if (!node.contains("c")) return nullptr;
  for (const json& c : node["c"])
    if (c["n"] == name) return &c;
  return nullptr;
}

// Flash holds the code and the load image of .data, so the treemap's FLASH
// is what `ld --print-memory-usage` counts; the arena sits in RAM > .bss.
TEST(MapPage, RegionsOfTheTreeHoldWhatLdCountsAndTheArenaIsInBss) {
  LinkerMap map = read_map(test::corpus("map/own_cm4_O2.map"));
  json d = map_data(map);
  const json* flash = child(d["tree"], "FLASH");
  const json* ram = child(d["tree"], "RAM");
  ASSERT_TRUE(flash && ram);
  EXPECT_EQ((*flash)["b"], 3292u);  // 64 .isr_vector + 3,220 .text + 8 .data load image
  EXPECT_TRUE(child(*flash, ".data (load image)"));
  EXPECT_EQ((*ram)["b"], 20512u);
  auto truth = json::parse(test::read_file(test::corpus("map/own_ground_truth.json")))["symbols"]["O2"]["tensor_arena"];
  const json* bss = child(*ram, ".bss");
  ASSERT_TRUE(bss);
  const json* arena = nullptr;
  for (const json& object : (*bss)["c"])
    if (const json* s = child(object, "tensor_arena")) arena = s;
  ASSERT_TRUE(arena);
  EXPECT_EQ((*arena)["b"], truth["size"]);
  EXPECT_EQ((*arena)["r"], "tensor arena");
  EXPECT_EQ(d["highlights"]["tensor arena"]["name"], "tensor_arena");
  EXPECT_EQ(d["regions"][1]["used_percent"], "31.3 %");  // as the text report prints it
  // No symbol names the stack here: the .stack section is the one `check` budgets against.
  EXPECT_EQ(d["highlights"]["stack"]["name"], ".stack");
  EXPECT_EQ(d["highlights"]["stack"]["bytes"], 4096u);
  const json* stack = child(*ram, ".stack");
  ASSERT_TRUE(stack);
  EXPECT_EQ((*stack)["r"], "stack");
}

// The arena `fit` and `check` take as declared is the largest arena-named
// symbol, also when a smaller one ("arena_used") comes first; a function
// named like an arena or a heap is code, however large.
TEST(MapPage, DeclaredArenaIsTheLargestArenaSymbolAndNoFunctionIsOne) {
  LinkerMap map;
  map.sections.push_back({".text", 0x08000000, 0x10000, std::nullopt, SectionKind::code, 0});
  map.sections.push_back({".bss", 0x20000000, 0x3000, std::nullopt, SectionKind::bss, 0});
  map.symbols.push_back({"MicroAllocator_arena_setup", ".text", "micro_allocator.o", 0x08000000, 0x4000});
  map.symbols.push_back({"sys_heap_aligned_alloc", ".text", "heap.o", 0x08004000, 208});
  map.symbols.push_back({"arena_used", ".bss", "main.o", 0x20000000, 4});
  map.symbols.push_back({"g_tensor_arena", ".bss", "main.o", 0x20000010, 0x2000});
  map.symbols.push_back({"scratch_arena", ".bss", "ops.o", 0x20002010, 0x100});
  ASSERT_TRUE(largest_symbol_with_role(map, "tensor arena"));
  EXPECT_EQ(largest_symbol_with_role(map, "tensor arena")->name, "g_tensor_arena");
  EXPECT_EQ(largest_symbol_with_role(map, "heap"), nullptr);
  EXPECT_EQ(map_data(map)["highlights"]["tensor arena"]["bytes"], 0x2000u);
}

// Aliases (newlib's printf and iprintf) are one block of bytes: each sized,
// the treemap counted printf.o's 96 B twice (a reviewer's build: .text
// 192 B for 88 B).
TEST(MapPage, AliasesAreOneBlockInTheTree) {
  const std::string text = test::read_file(std::string(EDGEMEM_TEST_DATA_DIR) + "/map_aliases/printf_aliases.map");
  std::string error;
  auto map = parse_gnu_map(text, error);
  ASSERT_TRUE(map) << error;
  json d = map_data(*map);
  const json* flash = child(d["tree"], "FLASH");
  ASSERT_TRUE(flash);
  const json* text_section = child(*flash, ".text");
  ASSERT_TRUE(text_section);
  EXPECT_EQ((*text_section)["b"], 0x160u);
  const json* printf_o = child(*text_section, "libc_nano.a(lib_a-printf.o)");
  ASSERT_TRUE(printf_o);
  EXPECT_EQ((*printf_o)["b"], 0x60u);
  EXPECT_TRUE(child(*printf_o, "printf = iprintf"));
  // And one row of the text's largest symbols (they were a row each).
  MapReport r;
  r.path = "std.map";
  r.map = &*map;
  const std::string listed = map_text(r);
  EXPECT_NE(listed.find("printf = iprintf  (.text)"), std::string::npos) << listed;
  EXPECT_EQ(listed.find("  iprintf  (.text)"), std::string::npos) << listed;
}

// Every node's bytes are the sum of its children's (the treemap's areas say
// what its labels say), and a large map folds to a bounded number of nodes
// without losing a byte.
TEST(MapPage, LargeMapTreeIsBoundedAndEveryNodeSumsItsChildren) {
  const std::string path = std::string(EDGEMEM_TEST_DATA_DIR) + "/realworld/gnu_map/dorsel89_phyphoxsatellite_nrf52840_zephyr.map";
  LinkerMap map = read_map(path);
  json d = map_data(map);
  size_t nodes = 0, folded = 0;
  std::function<void(const json&)> walk = [&](const json& n) {
    ++nodes;
    if (n.contains("folded")) folded += n["folded"].get<size_t>();
    if (!n.contains("c")) return;
    uint64_t sum = 0;
    for (const json& c : n["c"]) {
      sum += c["b"].get<uint64_t>();
      walk(c);
    }
    EXPECT_EQ(sum, n["b"].get<uint64_t>()) << n["n"];
  };
  walk(d["tree"]);
  EXPECT_GT(map.symbols.size(), 2000u);
  EXPECT_GT(folded, 0u);
  EXPECT_LT(nodes, map.symbols.size());
  for (const MapRegion& reg : map.regions)
    if (const json* node = child(d["tree"], reg.name)) {
      EXPECT_GE((*node)["b"].get<uint64_t>(), reg.used) << reg.name;
    }
}

// Along each root's worst path: every function's own frame as its .su file
// states it, and a running total that ends at the root's worst case.
TEST(StackPage, WorstPathCarriesEachFrameFromTheSuFilesAndItsRunningTotal) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(test::corpus("su")))
    if (e.path().filename().string().starts_with("own_O2_")) files.push_back(e.path().string());
  std::string error;
  auto report = analyze_stack(files, false, error);
  ASSERT_TRUE(report) << error;
  json d = stack_page_data(*report, 10);
  auto truth = json::parse(test::read_file(test::corpus("map/own_ground_truth.json")));
  const json* reset = nullptr;
  for (const json& root : d["roots"])
    if (root["function"] == "Reset_Handler") reset = &root;
  ASSERT_TRUE(reset);
  const json& path = (*reset)["path"];
  ASSERT_EQ(path.size(), truth["worst_case_stack_by_hand"]["O2"]["deepest_static_path"].size());
  uint64_t total = 0;
  for (const json& f : path) {
    SCOPED_TRACE(f["function"].get<std::string>());
    uint64_t frame = truth["stack_usage_su"]["O2"][f["function"].get<std::string>()][0];
    total += frame;
    EXPECT_EQ(f["frame_bytes"], frame);
    EXPECT_EQ(f["cumulative_bytes"], total);
  }
  EXPECT_EQ(total, truth["worst_case_stack_by_hand"]["O2"]["bytes"].get<uint64_t>());
  EXPECT_EQ(d["verdicts"][0]["tag"], "[main stack worst case]");
  EXPECT_EQ(d["verdicts"][1]["tag"], "[UNBOUNDED]");  // normalize_dynamic's VLA, memcpy without .su
  EXPECT_EQ(d["heaviest"].size(), 10u);
}

// Rows as the text prints them, `top` of the changed ones, counted all.
TEST(DiffPage, RowsCarryTheTextsNumbersAndTopLimitsOnlyWhatIsShown) {
  DiffReport r{"a.map", "b.map", "images", {}, {}, {}};
  DiffGroup g{"symbols", "symbols", {}};
  g.rows.push_back({"tensor_arena", "", DiffUnit::bytes, 16384, 20480, false, false});
  g.rows.push_back({"g_model", "", DiffUnit::bytes, 0, 2048, true, false});
  g.rows.push_back({"main", "", DiffUnit::bytes, 72, 64, false, false});
  g.rows.push_back({"memcpy", "", DiffUnit::bytes, 308, 308, false, false});
  r.groups.push_back(g);
  json d = diff_page_data(r, 2);
  const json& group = d["groups"][0];
  EXPECT_EQ(group["changed"], 3u);
  ASSERT_EQ(group["rows"].size(), 2u);
  EXPECT_EQ(group["rows"][0]["before"], "16,384 B");
  EXPECT_EQ(group["rows"][0]["after"], "20,480 B");
  EXPECT_EQ(group["rows"][0]["change"], "+4,096 B");
  EXPECT_EQ(group["rows"][0]["ratio"], "+25.0 %");
  EXPECT_EQ(group["rows"][1]["added"], true);
  EXPECT_EQ(group["rows"][1]["ratio"], "");  // no ratio from nothing
  EXPECT_EQ(d["verdicts"][0]["tag"], "[CHANGED]");
}

}  // namespace
}  // namespace edgemem
